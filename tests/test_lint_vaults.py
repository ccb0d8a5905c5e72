"""lint-links on the fixture vaults of fixtures/lint-vaults/, compared exactly with golden files.

- clean/: English and Chinese notes, anchors of every kind, embeds, a table, code and comments
  holding link-like text, orphan-node as an error: no problem at all.
- broken/: every problem code of SPEC §4.1 at least once (and `unreadable`).
- obsidian/: obsidian resolution: names without folders or `.md`, and an ambiguous name.

The golden files are `<vault>.expected.txt` and `<vault>.expected.json` next to the vaults. To
regenerate them on purpose, run `UPDATE_GOLDEN=1 .venv/bin/pytest tests/test_lint_vaults.py`
and review the diff.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from remelink import lint
from remelink.cli import app
from remelink.config import PROBLEM_CODES

VAULTS = Path(__file__).resolve().parent.parent / "fixtures" / "lint-vaults"
SUMMARY = re.compile(r"^lint-links: (no problems|\d+ error\(s\), \d+ warning\(s\)) in "
                     r"\d+ file\(s\), \d+ link\(s\) checked \(\d+\.\d\d s\)\n$")


def run_main(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = lint.main(args)
    out, err = capsys.readouterr()
    return code, out, err


def golden(name: str, suffix: str, actual: str) -> str:
    path = VAULTS / f"{name}.expected.{suffix}"
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.write_text(actual, encoding="utf-8")
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize(("name", "exit_code"), [("clean", 0), ("broken", 1), ("obsidian", 1)])
@pytest.mark.parametrize("fmt", ["txt", "json"])
def test_golden_output(name: str, exit_code: int, fmt: str,
                       capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--vault", str(VAULTS / name)] + (["--format", "json"] if fmt == "json" else [])
    code, out, err = run_main(args, capsys)
    assert out == golden(name, fmt, out)
    assert code == exit_code
    assert SUMMARY.match(err), err


@pytest.mark.parametrize("name", ["clean", "broken", "obsidian"])
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_cli_and_console_script_print_the_same(name: str, fmt: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--vault", str(VAULTS / name), "--format", fmt]
    code, out, err = run_main(args, capsys)
    result = CliRunner().invoke(app, ["lint-links", *args])
    assert (result.exit_code, result.stdout) == (code, out)
    assert SUMMARY.match(result.stderr) and SUMMARY.match(err)
    # Same summary apart from the timing.
    assert result.stderr.rsplit("(", 1)[0] == err.rsplit("(", 1)[0]


def test_broken_vaults_hold_every_problem_code(capsys: pytest.CaptureFixture[str]) -> None:
    codes: set[str] = set()
    for name in ("broken", "obsidian"):
        _, out, _ = run_main(["--vault", str(VAULTS / name), "--format", "json"], capsys)
        codes |= {problem["code"] for problem in json.loads(out)}
    assert codes == set(PROBLEM_CODES)


def test_json_has_the_text_fields(capsys: pytest.CaptureFixture[str]) -> None:
    _, text, _ = run_main(["--vault", str(VAULTS / "broken")], capsys)
    _, raw, _ = run_main(["--vault", str(VAULTS / "broken"), "--format", "json"], capsys)
    rendered = [f"{p['path']}:{p['line']}:{p['col']}: {p['level']} {p['code']} {p['message']}"
                for p in json.loads(raw)]
    assert rendered == text.splitlines()
    assert all(list(p) == ["path", "line", "col", "level", "code", "message"]
               for p in json.loads(raw))


def test_the_fixture_vaults_are_left_untouched(capsys: pytest.CaptureFixture[str]) -> None:
    before = {p: p.read_bytes() for p in VAULTS.rglob("*") if p.is_file()}
    for name in ("clean", "broken", "obsidian"):
        run_main(["--vault", str(VAULTS / name)], capsys)
    after = {p: p.read_bytes() for p in VAULTS.rglob("*") if p.is_file()}
    assert before == after
