"""Every command's `--json` prints the one envelope `{ok, command, duration_ms, counts, data,
errors}` (SPEC §9.4): on success (its shape compared with a golden file per command,
tests/golden/envelopes/), and when the command fails before it starts (no vault, a bad config, a
bad flag): `ok: false` with the error, the exit code unchanged. `ok` is true exactly when the
exit code is 0.

The golden files hold shapes, not values: every leaf is its JSON type, lists hold the merged
shape of their items, and maps keyed by paths or actions have one `<key>` entry. To accept a
change on purpose: `REMELINK_UPDATE_GOLDEN=1 .venv/bin/pytest tests/test_envelopes.py`, then read
`git diff tests/golden/envelopes/`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES
from dream_support import GOLDEN, UPDATE, cli

from remelink import lint
from remelink.envelope import KEYS

TODAY = "2026-06-22"
DEMO_UNITS = FIXTURES / "demo-units.yaml"


def shape(value: Any) -> Any:
    """The JSON shape of `value` (see the module docstring)."""
    if isinstance(value, dict):
        if value and all(_keyed_by_data(k) for k in value):
            return {"<key>": _merge([shape(v) for v in value.values()])}
        return {k: shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_merge([shape(v) for v in value])] if value else []
    if value is None:
        return "null"
    return {bool: "bool", int: "int", float: "float", str: "str"}[type(value)]


def _keyed_by_data(key: str) -> bool:
    """Keys that are data (a path, an action such as CREATE), not field names."""
    return "/" in key or "." in key or key.isupper()


def _merge(shapes: list[Any]) -> Any:
    dicts = [s for s in shapes if isinstance(s, dict)]
    lists = [s for s in shapes if isinstance(s, list)]
    scalars = sorted({t for s in shapes if isinstance(s, str) for t in s.split("|")})
    merged: list[Any] = []
    if dicts:
        keys: dict[str, list[Any]] = {}
        for d in dicts:
            for k, v in d.items():
                keys.setdefault(k, []).append(v)
        merged.append({k: _merge(v) for k, v in keys.items()})
    if lists:
        inner = [s[0] for s in lists if s]
        merged.append([_merge(inner)] if inner else [])
    if scalars:
        merged.append("|".join(scalars))
    return merged[0] if len(merged) == 1 else {"<one of>": merged}


def golden_shape(name: str, actual: Any) -> None:
    path = GOLDEN / "envelopes" / f"{name}.json"
    text = json.dumps(actual, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"{path} missing: run with REMELINK_UPDATE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8"), (
        f"the --json envelope of {name} changed shape (REMELINK_UPDATE_GOLDEN=1 to accept, "
        "then review the diff)")


def envelope_of(stdout: str, exit_code: int, command: str) -> dict[str, Any]:
    doc = json.loads(stdout)  # exactly one document on stdout
    assert list(doc) == list(KEYS)
    assert doc["command"] == command
    assert doc["ok"] is (exit_code == 0)
    assert isinstance(doc["duration_ms"], int) and doc["duration_ms"] >= 0
    assert all(isinstance(e, str) and "\n" not in e for e in doc["errors"])
    assert bool(doc["errors"]) or doc["ok"]  # a failure always says why
    return doc


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A demo copy after its dream run: the commands after `dream run` see its digest and
    checkpoint whichever worker runs them, in whatever order (pytest-xdist's worksteal gives
    the cases below to any worker; `status` on a vault never dreamed has no inputs)."""
    vault = tmp_path_factory.mktemp("envelopes") / "demo"
    shutil.copytree(FIXTURES / "demo-vault", vault)
    result = cli("dream", "run", "--today", TODAY, "--vault", str(vault), "--json")
    assert result.exit_code == 0, result.output
    return vault


# (name in the golden file, arguments, expected exit code): `dream run` on a fresh demo copy, the
# others on one dreamed copy.
SUCCESS = [
    ("dream run", ["dream", "run", "--today", TODAY], 0),
    ("status", ["status"], 0),
    ("node-search", ["node-search", "idempotency key"], 0),
    # --no-links: the hits' links depend on whether this worker ran dream run first (the
    # shape of link expansion is tested in tests/test_search.py)
    ("search", ["search", "how do I rotate the signing keys", "--no-links"], 0),
    ("index rebuild", ["index", "rebuild"], 0),
    ("integrate", ["integrate", str(DEMO_UNITS), "--dry-run"], 0),
]


@pytest.mark.parametrize(("command", "args", "code"), SUCCESS, ids=[c for c, _, _ in SUCCESS])
def test_envelope_of_each_command(demo: Path, tmp_path: Path, command: str, args: list[str],
                                  code: int) -> None:
    vault = demo
    if command == "dream run":
        vault = tmp_path / "demo"  # its own fresh copy: the envelope of the first run
        shutil.copytree(FIXTURES / "demo-vault", vault)
    result = cli(*args, "--vault", str(vault), "--json")
    assert result.exit_code == code, result.output
    doc = envelope_of(result.stdout, result.exit_code, command)
    assert doc["errors"] == []
    golden_shape(command.replace(" ", "-"), shape(doc))


def test_envelope_of_init(tmp_path: Path) -> None:
    result = cli("init", str(tmp_path / "new"), "--json")
    doc = envelope_of(result.stdout, result.exit_code, "init")
    assert doc["data"]["created"][0] == "daily/" and doc["counts"]["created"] == 8
    golden_shape("init", shape(doc))
    again = envelope_of(cli("init", str(tmp_path / "new"), "--json").stdout, 0, "init")
    assert again["data"]["created"] == [] and again["counts"] == {"created": 0}


def test_envelope_of_lint_links_from_both_entry_points(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    vault = tmp_path / "broken"
    shutil.copytree(FIXTURES / "lint-vaults" / "broken", vault)
    result = cli("lint-links", "--vault", str(vault), "--json")
    assert result.exit_code == 1
    doc = envelope_of(result.stdout, 1, "lint-links")
    assert doc["counts"]["errors"] == len(doc["errors"]) > 0
    assert all(set(p) == {"path", "line", "col", "level", "code", "message"} for p in doc["data"])
    golden_shape("lint-links", shape(doc))

    assert lint.main(["--vault", str(vault), "--json"]) == 1
    out = capsys.readouterr().out
    script = envelope_of(out, 1, "lint-links")
    assert {**script, "duration_ms": 0} == {**doc, "duration_ms": 0}
    # --format json stays the bare list, for tools that want no envelope.
    assert lint.main(["--vault", str(vault), "--format", "json"]) == 1
    assert json.loads(capsys.readouterr().out) == doc["data"]


def test_clean_lint_is_ok(demo: Path) -> None:
    result = cli("lint-links", "--vault", str(demo), "--json")
    doc = envelope_of(result.stdout, result.exit_code, "lint-links")
    assert doc["ok"] and doc["data"] == [] and doc["counts"]["files"] > 0


# -- failures before the command starts -------------------------------------------------------

COMMANDS = {  # command -> arguments that are complete but for the vault
    "dream run": ["dream", "run"],
    "status": ["status"],
    "node-search": ["node-search", "anything"],
    "search": ["search", "anything"],
    "index rebuild": ["index", "rebuild"],
    "integrate": ["integrate", str(DEMO_UNITS)],
    "lint-links": ["lint-links"],
}


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("case", ["no vault", "not a directory", "bad config", "bad flag",
                                  "bad environment"])
def test_a_failure_before_the_start_is_still_one_envelope(
        tmp_path: Path, command: str, case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    args = list(COMMANDS[command])
    vault = tmp_path / "v"
    vault.mkdir()
    expected = {"no vault": "is not a remelink vault", "not a directory": "is not a directory",
                "bad config": "line 3, column 12: cannot parse the YAML: mapping values",
                "bad flag": "No such option: --no-such-flag",
                "bad environment": "links.resolution must be path | obsidian"}[case]
    if case == "not a directory":
        vault = tmp_path / "file.md"
        vault.write_text("x\n")
    elif case != "no vault":
        (vault / ".remelink").mkdir()
        if case == "bad config":
            config = "folders:\n  daily: x\n   resource: y\n"
            (vault / ".remelink" / "config.yaml").write_text(config)
    if case == "bad flag":
        args.append("--no-such-flag")
    if case == "bad environment":
        monkeypatch.setenv("REMELINK_LINKS__RESOLUTION", "fuzzy")
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    result = cli(*args, "--vault", str(vault), "--json")
    assert result.exit_code == 2, result.output
    doc = envelope_of(result.stdout, 2, command)
    assert (doc["counts"], doc["data"]) == ({}, None)
    assert len(doc["errors"]) == 1 and expected in doc["errors"][0], doc["errors"]
    golden_shape("failure", shape(doc))
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before  # nothing made
    if command == "lint-links" and case != "bad flag":  # the console script says the same
        assert lint.main([*args[1:], "--vault", str(vault), "--json"]) == 2


def test_console_script_bad_flag_with_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert lint.main(["--json", "--format", "xml"]) == 2
    out, err = capsys.readouterr()
    doc = envelope_of(out, 2, "lint-links")
    assert "invalid choice: 'xml'" in doc["errors"][0] and "invalid choice" in err
    assert lint.main(["--json", "--format", "json", "--vault", "."]) == 2  # alternatives
    doc = envelope_of(capsys.readouterr().out, 2, "lint-links")
    assert "--json and --format are alternatives" in doc["errors"][0]


def test_an_unexpected_error_is_an_envelope_too(demo: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import remelink.dream.run as dream_run

    def boom(*args: object, **kwargs: object) -> object:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(dream_run, "status", boom)
    monkeypatch.setenv("TMPDIR", str(demo.parent))  # the crash log goes somewhere harmless
    monkeypatch.chdir(demo.parent)
    result = cli("status", "--vault", str(demo), "--json")
    assert result.exit_code == 1
    doc = envelope_of(result.stdout, 1, "status")
    assert "unexpected error: RuntimeError: disk on fire" in doc["errors"][0]


def test_without_json_stdout_has_no_envelope(tmp_path: Path) -> None:
    result = cli("status", "--vault", str(tmp_path))
    assert result.exit_code == 2 and result.stdout == ""


def test_every_command_with_a_result_takes_json() -> None:
    """The commands of the CLI, each with --json in its --help (nothing left out)."""
    import typer.main

    from remelink.cli import app

    group = typer.main.get_command(app)
    names: list[list[str]] = []
    for name, command in group.commands.items():  # type: ignore[attr-defined]
        subs = getattr(command, "commands", None)
        names += [[name, sub] for sub in subs] if subs else [[name]]
    # `mcp` speaks JSON-RPC on stdout for its whole life: it has no envelope.
    names = [n for n in names if n != ["mcp"]]
    assert sorted(" ".join(n) for n in names) == sorted(["init", *COMMANDS])
    for words in names:
        assert "--json" in cli(*words, "--help").stdout, words

