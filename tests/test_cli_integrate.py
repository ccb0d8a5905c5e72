"""`remelink integrate UNITS` end to end (SPEC §13): the Typer command with `--model
scripted:FILE` on a copy of the fixture vault, with the real node index under .remelink/index/.
Text and `--json` output (golden, durations normalised), `--dry-run`, units from stdin and YAML,
bad input (exit 2, one line) and a failed unit (exit 1)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import tree_bytes
from integrate_support import SCRIPTS, copy_vault, golden_check
from typer.testing import CliRunner

from remelink.cli import app

runner = CliRunner()


def unit_of(script: str) -> dict[str, Any]:
    data = yaml.safe_load((SCRIPTS / f"{script}.yaml").read_text(encoding="utf-8"))
    return dict(data["unit"])


def invoke(vault: Path, *args: str, stdin: str | None = None) -> Any:
    return runner.invoke(app, ["integrate", *args, "--vault", str(vault)], input=stdin)


def units_file(tmp_path: Path, units: list[dict[str, Any]], fmt: str = "yaml") -> Path:
    path = tmp_path / f"units.{fmt}"
    text = (yaml.safe_dump(units, allow_unicode=True, sort_keys=False) if fmt == "yaml"
            else json.dumps(units, ensure_ascii=False, indent=2))
    path.write_text(text, encoding="utf-8")
    return path


def vault_only(vault: Path) -> dict[str, bytes]:
    """The vault's notes and state: the derived index and the lock file aside."""
    return {k: v for k, v in tree_bytes(vault).items() if k != ".remelink/lock"}


def test_text_output_and_the_node_lands(tmp_path: Path) -> None:
    vault = copy_vault(tmp_path)
    units = units_file(tmp_path, [unit_of("create")])
    result = invoke(vault, str(units), "--model", f"scripted:{SCRIPTS / 'create.yaml'}")
    assert result.exit_code == 0, result.output
    assert result.stdout == ("CREATE      digest/procedure/queue-long-exports.md  new runbook for "
                             "queued exports\n")
    assert result.stderr.startswith("  Queue long exports: 4 step(s), 0+0 tokens, ")
    golden_check((vault / "digest/procedure/queue-long-exports.md").read_bytes(), "create.md")
    # The real index was told about the commit: node-search finds the new node at once.
    from remelink.config import load_settings
    from remelink.index import NodeIndex

    with NodeIndex(vault, load_settings(vault, env={})) as index:
        hits = index.search("queued export jobs gateway timeout", limit=3, refresh=False)
    assert hits[0].path == "digest/procedure/queue-long-exports.md"


def test_json_envelope_matches_the_golden_file(tmp_path: Path) -> None:
    vault = copy_vault(tmp_path)
    units = units_file(tmp_path, [unit_of("create_zh")], fmt="json")
    result = invoke(vault, str(units), "--json", "--model",
                    f"scripted:{SCRIPTS / 'create_zh.yaml'}")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["duration_ms"] >= 0 and data["data"][0]["duration_ms"] >= 0
    data["duration_ms"] = 0
    for item in data["data"]:
        item["duration_ms"] = 0
    text = json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    golden_check(text.encode("utf-8"), "cli_integrate.json")
    assert set(data) == {"ok", "command", "duration_ms", "counts", "data", "errors"}


def test_dry_run_prints_the_diff_and_writes_nothing(tmp_path: Path) -> None:
    vault = copy_vault(tmp_path)
    before = vault_only(vault)
    units = units_file(tmp_path, [unit_of("correct")])
    result = invoke(vault, str(units), "--dry-run", "--model",
                    f"scripted:{SCRIPTS / 'correct.yaml'}")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == ("CORRECT     digest/procedure/rotate-api-keys.md  rotation period is "
                        "24 h, not 30 days")
    assert lines[1:3] == ["--- a/digest/procedure/rotate-api-keys.md",
                          "+++ b/digest/procedure/rotate-api-keys.md"]
    assert ("+> Corrected on 2026-06-25: the rotation period is 24 h; the earlier text said "
            "\"The rotation period is 30 days.\", per [[daily/2026-06-21/soc2-review.md]].") \
        in lines
    assert vault_only(vault) == before


def test_a_dry_run_of_several_units_shows_what_a_real_run_would_do(tmp_path: Path) -> None:
    """Each unit of a dry run sees what the units before it would have written: the second
    unit about long exports updates the node the first one would create."""
    export = {"name": "Long PDF exports run as background jobs", "bucket": "wiki",
              "summary": "Long PDF exports run as background jobs: the API enqueues an export "
                         "job and returns at once, because the gateway cuts requests at 30 "
                         "seconds.",
              "paths": ["daily/2026-06-20/pdf-export-timeout.md"]}
    again = dict(export, paths=["resource/2026-06-20/export-queue-design.md"])
    units = units_file(tmp_path, [export, again])

    vault = copy_vault(tmp_path)
    before = vault_only(vault)
    dry = invoke(vault, str(units), "--dry-run", "--json")
    assert dry.exit_code == 0, dry.output
    assert vault_only(vault) == before
    assert not (vault / ".remelink" / "lock").exists()  # not even the lock file is written
    planned = [(u["action"], u["target"]) for u in json.loads(dry.stdout)["data"]]
    assert planned[0][0] == "CREATE" and planned[1] == ("CORROBORATE", planned[0][1])

    real = invoke(vault, str(units), "--json")
    assert real.exit_code == 0, real.output
    assert [(u["action"], u["target"]) for u in json.loads(real.stdout)["data"]] == planned


def test_units_from_stdin(tmp_path: Path) -> None:
    vault = copy_vault(tmp_path)
    text = json.dumps({"units": [unit_of("refine")]})
    result = invoke(vault, "-", "--model", f"scripted:{SCRIPTS / 'refine.yaml'}", stdin=text)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("REFINE      digest/wiki/idempotency-keys.md  ")
    golden_check((vault / "digest/wiki/idempotency-keys.md").read_bytes(), "refine.md")


def test_two_units_in_one_run_share_one_script(tmp_path: Path) -> None:
    """A script may cover several units; their conversations follow each other."""
    vault = copy_vault(tmp_path)
    steps = (yaml.safe_load((SCRIPTS / "corroborate.yaml").read_text())["steps"] +
             yaml.safe_load((SCRIPTS / "cross_bucket.yaml").read_text())["steps"])
    script = tmp_path / "two.yaml"
    script.write_text(yaml.safe_dump(steps, allow_unicode=True), encoding="utf-8")
    units = units_file(tmp_path, [unit_of("corroborate"), unit_of("cross_bucket")])
    result = invoke(vault, str(units), "--json", "--model", f"scripted:{script}")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [(d["action"], d["target"]) for d in data["data"]] == [
        ("CORROBORATE", "digest/wiki/idempotency-keys.md"),
        ("REFINE", "digest/wiki/progress-feedback.md")]
    assert data["counts"] == {"units": 2, "failed": 0, "actions": {"CORROBORATE": 1, "REFINE": 1},
                              "tokens_in": 0, "tokens_out": 0}


@pytest.mark.parametrize(("content", "message"), [
    ("- name: [unclosed\n", "cannot parse units"),
    ("- name: No paths\n  bucket: wiki\n  summary: s\n", "unit #1: unit 'No paths' has no paths"),
    ("42\n", "units must be a list of {name, bucket, summary, paths}"),
    ("- name: Outside\n  bucket: wiki\n  summary: s\n  paths: [../etc/passwd]\n",
     "unit #1: unit 'Outside': path '../etc/passwd': path climbs out"),
])
def test_bad_units_file_exits_2_with_one_line(tmp_path: Path, content: str, message: str) -> None:
    vault = copy_vault(tmp_path)
    path = tmp_path / "units.yaml"
    path.write_text(content)
    result = invoke(vault, str(path), "--model", f"scripted:{SCRIPTS / 'create.yaml'}")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("remelink: error: ")
    assert message in result.stderr


def test_missing_units_file_and_missing_script_exit_2(tmp_path: Path) -> None:
    vault = copy_vault(tmp_path)
    result = invoke(vault, str(tmp_path / "nope.yaml"))
    assert result.exit_code == 2 and "cannot read units file" in result.stderr
    units = units_file(tmp_path, [unit_of("create")])
    result = invoke(vault, str(units), "--model", f"scripted:{tmp_path / 'nope.yaml'}")
    assert result.exit_code == 2 and "cannot read script" in result.stderr


def test_failed_unit_exits_1_and_changes_nothing(tmp_path: Path) -> None:
    vault = copy_vault(tmp_path)
    before = vault_only(vault)
    unit = unit_of("create")
    steps = yaml.safe_load((SCRIPTS / "create.yaml").read_text())["steps"]
    steps[2]["tool_calls"][0]["arguments"]["content"] = (
        "Use this when an export outlasts the gateway timeout.\n\n## Sources\n\n"
        "- [[daily/2026-06-20/pdf-export-timeout.md]]\n"
        "- [[resource/2026-06-20/export-queue-design.md]]\n")
    receipt = steps[3]["text"]
    steps += [{"expect": "bare-source-link", "text": receipt}] * 3
    script = tmp_path / "never-repairs.yaml"
    script.write_text(yaml.safe_dump({"steps": steps}, allow_unicode=True), encoding="utf-8")
    units = units_file(tmp_path, [unit])
    result = invoke(vault, str(units), "--model", f"scripted:{script}")
    assert result.exit_code == 1
    assert result.stdout.startswith("FAILED      Queue long exports: answer not accepted after 3 "
                                    "repair turn(s): body line 5: bare-source-link")
    assert result.stdout.count("\n") == 1
    assert vault_only(vault) == before


def test_unused_script_steps_fail_the_run(tmp_path: Path) -> None:
    vault = copy_vault(tmp_path)
    steps = yaml.safe_load((SCRIPTS / "create.yaml").read_text())["steps"]
    steps.append({"text": "an extra turn nobody asked for"})
    script = tmp_path / "extra.yaml"
    script.write_text(yaml.safe_dump(steps, allow_unicode=True), encoding="utf-8")
    units = units_file(tmp_path, [unit_of("create")])
    result = invoke(vault, str(units), "--model", f"scripted:{script}")
    assert result.exit_code == 1
    assert "the scripted model has 1 unused step(s)" in result.stderr


def test_the_same_units_again_change_nothing(tmp_path: Path) -> None:
    """The demo units integrated twice with the local engine: the second time each unit finds
    the node it created (the runbook keeps the unit's claim next to its steps) and adds
    nothing, instead of creating a second node."""
    repo = Path(__file__).resolve().parents[1]
    vault = copy_vault(tmp_path, repo / "fixtures" / "demo-vault")
    units = str(repo / "fixtures" / "demo-units.yaml")
    first = invoke(vault, units, "--json")
    assert first.exit_code == 0, first.output
    created = [(u["action"], u["target"]) for u in json.loads(first.stdout)["data"]]
    assert [a for a, _ in created] == ["CREATE", "CREATE"]
    after_first = vault_only(vault)

    second = invoke(vault, units, "--json")
    assert second.exit_code == 0, second.output
    again = json.loads(second.stdout)["data"]
    assert [(u["action"], u["target"]) for u in again] == \
        [("CORROBORATE", target) for _, target in created]
    assert all("nothing to add" in u["note"] for u in again)
    assert vault_only(vault) == after_first
