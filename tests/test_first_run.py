"""No forgotten set-up: the first `dream run` in a vault without `.remelink/` creates what
`remelink init` creates (the folders, config.yaml, the .gitignore of derived files) and says so
in one line; a dry run still writes nothing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from dream_support import cli

from remelink.scaffold import CONFIG_TEMPLATE, GITIGNORE

NOTE = ("# Deploy review\n\nDecision: run database migrations before deploying the new code, so "
        "that the old code keeps working on the new schema.\n")


def fresh(tmp_path: Path) -> Path:
    vault = tmp_path / "notes"
    (vault / "daily" / "2026-06-21").mkdir(parents=True)
    (vault / "daily" / "2026-06-21" / "deploy-review.md").write_text(NOTE, encoding="utf-8")
    return vault


def test_the_first_run_sets_the_vault_up_and_says_so(tmp_path: Path) -> None:
    vault = fresh(tmp_path)
    result = cli("dream", "run", "--vault", str(vault), "--quiet")
    assert result.exit_code == 0, result.output
    first = result.stdout.splitlines()[0]
    assert first == ("set up the vault as `remelink init` does (first run): created resource/, "
                     "digest/procedure/, digest/personal/, digest/wiki/, .remelink/, "
                     ".remelink/config.yaml, .remelink/.gitignore")
    assert (vault / ".remelink" / "config.yaml").read_text(encoding="utf-8") == CONFIG_TEMPLATE
    assert (vault / ".remelink" / ".gitignore").read_text(encoding="utf-8") == GITIGNORE
    again = cli("dream", "run", "--vault", str(vault), "--quiet")
    assert "set up the vault" not in again.stdout


def test_the_set_up_is_in_the_json_envelope(tmp_path: Path) -> None:
    vault = fresh(tmp_path)
    result = cli("dream", "run", "--vault", str(vault), "--json")
    data = json.loads(result.stdout)["data"]
    assert ".remelink/.gitignore" in data["setup"]


def test_a_dry_run_sets_nothing_up(tmp_path: Path) -> None:
    vault = fresh(tmp_path)
    result = cli("dream", "run", "--vault", str(vault), "--dry-run", "--quiet")
    assert result.exit_code == 0, result.output
    assert not (vault / ".remelink").exists() and "set up" not in result.stdout


def test_an_obsidian_vault_gets_its_resolution(tmp_path: Path) -> None:
    vault = fresh(tmp_path)
    (vault / ".obsidian").mkdir()
    result = cli("dream", "run", "--vault", str(vault), "--quiet")
    assert "links.resolution: obsidian (the vault holds .obsidian/)" in result.stdout
    assert "resolution: obsidian  # detected" in \
        (vault / ".remelink" / "config.yaml").read_text(encoding="utf-8")


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
def test_git_add_after_a_first_run_commits_nothing_derived(tmp_path: Path) -> None:
    """The issue's case: `dream run` without `init`, then `git add -A`: the index, the locks
    and the journal stay out."""
    vault = fresh(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "REMELINK_"))}
    subprocess.run(["git", "init", "-q"], cwd=vault, check=True, env=env)
    assert cli("dream", "run", "--vault", str(vault), "--quiet").exit_code == 0
    subprocess.run(["git", "add", "-A"], cwd=vault, check=True, env=env)
    staged = subprocess.run(["git", "diff", "--cached", "--name-only"], cwd=vault, check=True,
                            env=env, capture_output=True, text=True).stdout.split()
    remelink = sorted(p for p in staged if p.startswith(".remelink/"))
    assert [p for p in remelink if not p.startswith(".remelink/runs/")] == [
        ".remelink/.gitignore", ".remelink/config.yaml", ".remelink/state.json"]
    assert (vault / ".remelink" / "index").is_dir()  # there, and ignored
