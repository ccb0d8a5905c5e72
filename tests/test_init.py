"""`remelink init [DIR]`: the vault folders and a commented config (SPEC §13)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import tree_bytes
from typer.testing import CliRunner

from remelink import lint
from remelink.cli import app
from remelink.config import load_settings
from remelink.scaffold import GITIGNORE, init

LAYOUT = ["daily/", "resource/", "digest/procedure/", "digest/personal/", "digest/wiki/",
          ".remelink/", ".remelink/config.yaml", ".remelink/.gitignore"]


def test_init_creates_the_layout(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["init", str(tmp_path / "笔记库")])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [f"created {rel}" for rel in LAYOUT]
    root = tmp_path / "笔记库"
    for rel in LAYOUT:
        assert (root / rel).exists()
    config = (root / ".remelink/config.yaml").read_text(encoding="utf-8")
    assert config.startswith("# remelink configuration.")
    assert "resolution: path" in config
    assert (root / ".remelink/.gitignore").read_text() == GITIGNORE


def test_init_twice_changes_nothing(tmp_path: Path) -> None:
    init(tmp_path)
    (tmp_path / ".remelink/config.yaml").write_text("model: local\n")
    before = tree_bytes(tmp_path)
    result = CliRunner().invoke(app, ["init", str(tmp_path)])
    assert result.exit_code == 0
    assert result.stdout == f"{tmp_path.resolve()} is already a remelink vault; nothing to create\n"
    assert tree_bytes(tmp_path) == before


def test_init_in_the_working_directory_keeps_existing_notes(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "daily").mkdir()
    (tmp_path / "daily/old.md").write_text("[[daily/old.md]]\n")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["init"])
    assert result.exit_code == 0
    assert "created daily/" not in result.stdout.splitlines()
    assert (tmp_path / "daily/old.md").read_text() == "[[daily/old.md]]\n"


def test_init_on_a_file_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    result = CliRunner().invoke(app, ["init", str(tmp_path / "file")])
    assert result.exit_code == 2
    assert result.stderr.startswith("remelink: error: ") and result.stderr.count("\n") == 1
    assert result.stdout == ""


def test_init_with_other_folder_names(tmp_path: Path) -> None:
    result = init(tmp_path, daily="journal", resource="inbox", digest="kb")
    assert "journal/" in result.created and "kb/wiki/" in result.created
    config = (tmp_path / ".remelink/config.yaml").read_text()
    assert "  daily: journal\n  resource: inbox\n  digest: kb\n" in config


def test_the_created_config_is_valid(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    init(tmp_path)
    settings = load_settings(tmp_path)
    assert settings.resolution == "path" and settings.level("orphan-node") == "off"
    assert lint.main(["--vault", str(tmp_path)]) == 0
