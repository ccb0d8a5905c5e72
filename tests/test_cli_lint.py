"""`remelink lint-links` (Typer) and `remelink-lint-links` (lint.main) behave the same
(SPEC §4.1)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import VaultFactory
from typer.testing import CliRunner

from remelink import lint
from remelink.cli import app


@pytest.fixture
def vault(make_vault: VaultFactory) -> Path:
    return make_vault({
        "daily/a.md": "[[daily/b.md]] [[daily/missing.md]] [[b]]\n",
        "daily/b.md": "# B\n",
        "daily/c.md": "[[daily/b.md#Gone]]\n",
    })


def both(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run the console script and the Typer command; assert they agree; return one result."""
    code = lint.main(args)
    out, err = capsys.readouterr()
    result = CliRunner().invoke(app, ["lint-links", *args])
    assert result.exit_code == code, result.stderr
    assert result.stdout == out
    assert result.stderr.rsplit("(", 1)[0] == err.rsplit("(", 1)[0]  # the summary, bar timing
    return code, out, err


def test_whole_vault(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = both(["--vault", str(vault)], capsys)
    assert code == 1
    assert out.splitlines() == [
        "daily/a.md:1:16: error broken-link [[daily/missing.md]]: target does not exist",
        "daily/a.md:1:37: error broken-link [[b]]: target does not exist (did you mean "
        "daily/b.md?)",
        "daily/c.md:1:1: error missing-anchor [[daily/b.md#Gone]]: heading 'Gone' not found in "
        "daily/b.md",
    ]
    assert err.startswith("lint-links: 3 error(s), 0 warning(s) in 3 file(s), 4 link(s) checked (")


def test_resolution_flag_overrides_the_config(vault: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    a_md = str(vault / "daily/a.md")
    code, out, _ = both(["--vault", str(vault), "--resolution", "obsidian", a_md], capsys)
    assert (code, out) == (1, "daily/a.md:1:16: error broken-link [[daily/missing.md]]: "
                              "target does not exist\n")


def test_paths_and_all(vault: Path, capsys: pytest.CaptureFixture[str],
                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(vault)
    (vault / "daily/b.md").unlink()
    # A path that names nothing is an error naming it (issue 20: a typo passed the hook)...
    assert lint.main(["daily/b.md"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("remelink-lint-links: daily/b.md: no such file")
    result = CliRunner().invoke(app, ["lint-links", "daily/b.md"])
    assert result.exit_code == 2 and "daily/b.md: no such file" in result.stderr
    # ... but with --all it is the old name of a deleted note, whose incoming links it checks.
    code, out, _ = both(["--all", "daily/b.md"], capsys)
    assert code == 1
    assert [line.split(": ")[0] for line in out.splitlines()] == [
        "daily/a.md:1:1", "daily/c.md:1:1"]


def test_json(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = both(["--format", "json", str(vault / "daily/c.md")], capsys)
    assert code == 1
    assert out == ('[\n  {\n    "path": "daily/c.md",\n    "line": 1,\n    "col": 1,\n'
                   '    "level": "error",\n    "code": "missing-anchor",\n'
                   '    "message": "[[daily/b.md#Gone]]: heading \'Gone\' not found in '
                   'daily/b.md"\n'
                   '  }\n]\n')


def test_clean_vault_exit_0(make_vault: VaultFactory, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_vault({"daily/a.md": "[[daily/b.md]]\n", "daily/b.md": "b\n"})
    code, out, err = both(["--vault", str(root)], capsys)
    assert (code, out) == (0, "")
    assert err.startswith("lint-links: no problems in 2 file(s), 1 link(s) checked (")


def test_excluded_notes_are_not_checked_but_stay_targets(
        make_vault: VaultFactory, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_vault({
        ".remelink/config.yaml": "lint:\n  exclude: [templates/]\n",
        "templates/day.md": "# Day\n\n[[daily/{{date}}.md]]\n",
        "daily/a.md": "[[templates/day.md#Day]] [[daily/gone.md]]\n",
    })
    code, out, err = both(["--vault", str(root)], capsys)
    assert code == 1
    assert out == "daily/a.md:1:26: error broken-link [[daily/gone.md]]: target does not " \
                  "exist\n"
    assert "in 1 file(s) (1 excluded by lint.exclude)" in err
    # Named explicitly (as pre-commit passes it), an excluded note is still not checked.
    code, out, err = both(["--vault", str(root), str(root / "templates/day.md")], capsys)
    assert (code, out) == (0, "") and "1 excluded" in err


def test_invalid_config_is_one_line_and_exit_2(make_vault: VaultFactory,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    root = make_vault({".remelink/config.yaml": "links:\n  resolution: fuzzy\n", "daily/a.md": ""})
    assert lint.main(["--vault", str(root)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == ("remelink-lint-links: .remelink/config.yaml: links.resolution must be path | "
                   "obsidian, got 'fuzzy'\n")
    result = CliRunner().invoke(app, ["lint-links", "--vault", str(root)])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == ("remelink: error: .remelink/config.yaml: links.resolution must be "
                             "path | obsidian, got 'fuzzy'\n")


@pytest.mark.parametrize("args", [["--format", "xml"], ["--resolution", "fuzzy"]])
def test_bad_flags_exit_2(vault: Path, args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert lint.main(["--vault", str(vault), *args]) == 2
    assert capsys.readouterr().out == ""
    result = CliRunner().invoke(app, ["lint-links", "--vault", str(vault), *args])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1


def test_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert lint.main(["--help"]) == 0
    assert "--all" in capsys.readouterr().out
    result = CliRunner().invoke(app, ["lint-links", "--help"])
    assert result.exit_code == 0 and "--all" in result.stdout and "--resolution" in result.stdout
