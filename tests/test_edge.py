"""The console entry point (`remelink.edge.main`): a plain `node-search` runs without Typer, and
for every argument list, plain or not, it prints and exits exactly as the Typer app does."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from remelink.edge import SearchArgs, parse_search_args

FAST = "import sys; from remelink.edge import main; main(sys.argv[1:])"
TYPER = "import sys; from remelink.cli import main; main(sys.argv[1:])"


def node(name: str, description: str, body: str = "") -> str:
    return f"---\nname: {name}\ndescription: {description}\nmemory_tags: [Acme]\n---\n{body}\n"


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("edge")
    files = {
        "digest/wiki/idempotency-keys.md": node("Idempotency keys", "Safe retries.",
                                                "Every request carries a key."),
        "digest/procedure/deploy-checklist.md": node("Deploy checklist", "Steps to deploy.",
                                                     "Run the migrations first."),
        "digest/wiki/数据脱敏规则.md": node("数据脱敏规则", "导出前做脱敏。", "手机号保留后四位。"),
    }
    (root / ".remelink").mkdir()
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    run(TYPER, ["index", "rebuild", "--vault", str(root)], root)  # no "index built" notices
    return root


def run(code: str, args: list[str], cwd: Path) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REMELINK_")}
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=60, check=False)
    out = re.sub(r'"duration_ms": \d+', '"duration_ms": 0', proc.stdout)
    return proc.returncode, out, proc.stderr


CASES = [
    ["node-search", "deploy migrations"],
    ["node-search", "deploy", "--json"],
    ["node-search", "--json", "--limit", "1", "key"],
    ["node-search", "--limit=2", "key", "--bucket", "wiki"],
    ["node-search", "脱敏", "--bucket=wiki", "--json"],
    ["node-search", "--", "--not-an-option"],
    ["node-search", "nothing-matches-this"],
    ["node-search", ""],
    ["node-search", "x", "--bucket", "nope", "--json"],
    ["node-search", "x", "--bucket", "nope"],
    ["node-search", "x", "--limit", "0"],
    ["node-search", "x", "--limit", "101", "--json"],
    ["node-search", "x", "--limit", "many"],
    ["node-search", "x", "--limit"],
    ["node-search", "x", "--json", "--json"],
    ["node-search", "x", "y"],
    ["node-search"],
    ["node-search", "--help"],
    ["node-search", "x", "--unknown"],
    ["node-search", "x", "--vault", "no/such/folder"],
    ["node-search", "x", "--vault", "no/such/folder", "--json"],
    ["node-search", "x", "--debug"],
    ["status", "--json"],
]


@pytest.mark.parametrize("args", CASES, ids=lambda a: " ".join(a) or "-")
def test_entry_point_answers_as_the_typer_app(vault: Path, args: list[str]) -> None:
    with_vault = args if any(a.startswith("--vault") for a in args) or args == ["node-search"] \
        else [*args, "--vault", str(vault)]
    fast = run(FAST, with_vault, vault)
    assert fast == run(TYPER, with_vault, vault)


def test_plain_node_search_imports_no_typer(vault: Path) -> None:
    code = ("import sys; from remelink.edge import main\n"
            "try:\n    main(sys.argv[1:])\n"
            "finally:\n    print(sorted(m for m in ('typer', 'click', 'pydantic', 'rich') "
            "if m in sys.modules), file=sys.stderr)")
    rc, out, err = run(code, ["node-search", "deploy", "--json", "--vault", str(vault)], vault)
    assert rc == 0 and json.loads(out)["ok"] is True
    assert err.strip().splitlines()[-1] == "[]"


_WORDS = st.sampled_from(["q", "retry budget", "--json", "--debug", "--limit", "--limit=3",
                          "3", "0", "--bucket", "wiki", "--bucket=x", "--vault", "v", "--",
                          "-x", "--help", "-", ""])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_WORDS, max_size=6))
def test_parse_is_plain_or_declines(words: list[str]) -> None:
    """Whatever it accepts is one query with each option at most once and a limit in range;
    an argument list with a help flag, an unknown option or two queries is declined."""
    parsed = parse_search_args(words)
    before_dashes = words[: words.index("--")] if "--" in words else words
    if "--help" in before_dashes or "-x" in before_dashes:
        assert parsed is None
    if parsed is not None:
        assert isinstance(parsed, SearchArgs) and 1 <= parsed.limit <= 100
        assert before_dashes.count("--json") <= 1 and before_dashes.count("--debug") <= 1
        assert parsed.json_out == ("--json" in before_dashes)


def test_crash_log_goes_to_the_vault_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """An unexpected error writes its traceback into the `--vault` vault's .remelink/, also
    when the command runs from another folder."""
    from remelink.command import run_command
    from remelink.errors import EXIT_PROBLEMS

    vault, elsewhere = tmp_path / "vault", tmp_path / "elsewhere"
    (vault / ".remelink").mkdir(parents=True)
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)

    def boom() -> int:
        raise RuntimeError("unexpected")

    code = run_command("status", boom, json_out=False, debug=False, vault=vault)
    assert code == EXIT_PROBLEMS
    logs = list((vault / ".remelink").glob("crash-*.log"))
    assert len(logs) == 1 and "RuntimeError: unexpected" in logs[0].read_text(encoding="utf-8")
    assert str(logs[0]) in capsys.readouterr().err
    assert not list(elsewhere.rglob("crash-*.log"))
