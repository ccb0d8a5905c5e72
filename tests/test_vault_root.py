"""A vault is a vault (SPEC §1): every command but `init` refuses, with exit 2 and a hint to run
`remelink init`, a directory holding neither `.remelink/` nor a configured folder, and creates
nothing there; the root is `--vault`, else the nearest ancestor holding `.remelink/`, else the
working directory."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES
from dream_support import cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from remelink import lint
from remelink.config import Settings
from remelink.errors import UsageError
from remelink.vault.root import is_vault, open_vault

REMELINK = str(Path(sys.executable).with_name("remelink"))
COMMANDS = [
    ["dream", "run"],
    ["status"],
    ["node-search", "retry"],
    ["index", "rebuild"],
    ["integrate", str(FIXTURES / "demo-units.yaml")],
    ["lint-links"],
]


def tree(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: a[0])
def test_a_folder_that_is_not_a_vault_is_refused_and_left_alone(tmp_path: Path,
                                                                 args: list[str]) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "todo.md").write_text("[[nowhere]]\n")
    before = tree(tmp_path)
    result = cli(*args, "--vault", str(folder))
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr == (
        f"remelink: error: {folder} is not a remelink vault: it has neither .remelink/ nor "
        f"daily/, resource/, digest/ or .obsidian/ (run `remelink init {folder}` to make it "
        "one, or pass --vault PATH)\n")
    assert tree(tmp_path) == before


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: a[0])
def test_a_typo_in_the_vault_path_is_refused(tmp_path: Path, args: list[str]) -> None:
    result = cli(*args, "--vault", str(tmp_path / "nots"))
    assert result.exit_code == 2
    assert f"vault {tmp_path / 'nots'} does not exist" in result.stderr
    assert "remelink init" in result.stderr
    assert tree(tmp_path) == []


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: a[0])
def test_a_file_is_not_a_directory(tmp_path: Path, args: list[str]) -> None:
    (tmp_path / "vault.md").write_text("x\n")
    result = cli(*args, "--vault", str(tmp_path / "vault.md"))
    assert result.exit_code == 2
    assert result.stderr == (f"remelink: error: vault {tmp_path / 'vault.md'} is not a "
                             "directory (--vault takes the vault's folder, not a file in it)\n")


def test_cron_with_a_typo_fails_loudly_and_creates_no_state(tmp_path: Path) -> None:
    """The case of the issue: `dream run --vault /path/with/a/typo` printed `0 notes scanned`,
    exited 0 and created .remelink/state.json there."""
    typo = tmp_path / "typo"
    typo.mkdir()
    proc = subprocess.run([REMELINK, "dream", "run", "--vault", str(typo), "--quiet"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "is not a remelink vault" in proc.stderr
    assert not (typo / ".remelink").exists()


def test_the_working_directory_is_refused_when_no_vault_is_above(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = cli("status")
    assert result.exit_code == 2
    assert f"{tmp_path} (the working directory) is not a remelink vault" in result.stderr
    assert "run `remelink init .`" in result.stderr


def test_the_nearest_marked_ancestor_is_the_vault(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    assert cli("init", str(tmp_path / "v")).exit_code == 0
    (tmp_path / "v" / "daily" / "2026-06-01").mkdir()
    monkeypatch.chdir(tmp_path / "v" / "daily" / "2026-06-01")
    result = cli("status")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("no checkpoint yet")


@pytest.mark.parametrize("folder", ["daily", "resource", "digest", ".remelink"])
def test_one_folder_makes_a_vault(tmp_path: Path, folder: str) -> None:
    (tmp_path / folder).mkdir()
    result = cli("lint-links", "--vault", str(tmp_path))
    assert result.exit_code == 0, result.output


def test_configured_folders_count(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "journal").mkdir()
    assert cli("status", "--vault", str(tmp_path)).exit_code == 2
    monkeypatch.setenv("REMELINK_FOLDERS__DAILY", "journal")
    assert cli("status", "--vault", str(tmp_path)).exit_code == 0


def test_init_is_the_exception(tmp_path: Path) -> None:
    assert cli("init", str(tmp_path / "new")).exit_code == 0
    assert cli("status", "--vault", str(tmp_path / "new")).exit_code == 0


def test_the_console_script_refuses_too(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert lint.main(["--vault", str(tmp_path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "is not a remelink vault" in err and err.count("\n") == 1


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture],
          deadline=None)
@given(st.sets(st.sampled_from(["daily", "resource", "digest", ".remelink", "notes",
                                "attachments", "Daily"]), max_size=4),
       st.booleans())
def test_is_vault_is_exactly_a_marker_or_a_configured_folder(
        tmp_path_factory: pytest.TempPathFactory, present: set[str], as_files: bool) -> None:
    root = tmp_path_factory.mktemp("root")
    for name in present:
        if as_files:
            (root / name).write_text("")  # a file of that name is not the folder
        else:
            (root / name).mkdir()
    wanted = {"daily", "resource", "digest", ".remelink"}
    expect = not as_files and bool(present & wanted)
    assert is_vault(root, Settings()) is expect
    if expect:
        assert open_vault(root)[0] == root.resolve()
    else:
        with pytest.raises(UsageError):
            open_vault(root)
    assert sorted(p.name for p in root.iterdir()) == sorted(present)  # nothing created
