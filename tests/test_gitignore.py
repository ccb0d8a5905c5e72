"""The `.remelink/.gitignore` that `remelink init` writes lists every derived or transient file
remelink writes there: after `git add -A` in a vault where each of them exists, none is staged,
while the checkpoint, the audit trail and the config are."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from dream_support import cli

from remelink.scaffold import GITIGNORE, GITIGNORE_LINES, init

REMELINK = str(Path(sys.executable).with_name("remelink"))
pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                          check=True).stdout


def test_every_transient_file_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = tmp_path / "vault"
    init(vault)
    (vault / "daily/2026-06-21").mkdir(parents=True)
    (vault / "daily/2026-06-21/deploy.md").write_text(
        "# Deploy review\n\nDecision: run database migrations before deploying the new code, so "
        "that the old code keeps working on the new schema.\n", encoding="utf-8")
    git(vault, "init", "-q")
    env = {k: v for k, v in os.environ.items() if not k.startswith("REMELINK_")}
    env["REMELINK_LOCAL__EMBEDDER"] = "none"
    # The README's cron line: the run's output appended to .remelink/cron.log. It writes the
    # vault lock, the index and its lock, the checkpoint and the audit trail.
    subprocess.run(f"'{REMELINK}' dream run --quiet --today 2026-06-22 >> .remelink/cron.log "
                   "2>&1", shell=True, cwd=vault, env=env, check=True)
    assert cli("node-search", "migrations", "--vault", str(vault)).exit_code == 0
    # A checkpoint journal, as a run leaves it between two saves (a run killed mid-way).
    from remelink.dream.state import State

    State.load(vault).log(meta=True)
    # A crash log, written by the CLI for an unexpected error.
    import remelink.dream.run as dream_run

    def boom(*args: object, **kwargs: object) -> object:
        raise RuntimeError("unexpected")

    monkeypatch.setattr(dream_run, "status", boom)
    monkeypatch.chdir(vault)
    assert cli("status").exit_code == 1
    # What an interrupted write or index rebuild leaves (names as remelink makes them).
    from remelink.vault.own import TMP_PREFIX

    (vault / ".remelink" / f"{TMP_PREFIX}0123456789abcdef.tmp").write_bytes(b"{")
    # A tampered index, moved aside (a link is moved as it is, never followed).
    (vault / ".remelink" / "index.tampered-20260101T000000-abcdef").mkdir()
    (vault / ".remelink" / "index.tampered-20260101T000000-abcdef" / "seg.toc").write_text("x")
    os.symlink("/etc", vault / ".remelink" / "index.tampered-20260101T000001-abcdef")
    (vault / ".remelink" / "index.new-123-abcdef01").mkdir()
    (vault / ".remelink" / "index.new-123-abcdef01" / "seg.toc").write_text("x")
    (vault / ".remelink" / "index.old-123-abcdef01").mkdir()
    (vault / ".remelink" / "index.old-123-abcdef01" / "seg.toc").write_text("x")

    made = {p.relative_to(vault).as_posix() for p in (vault / ".remelink").rglob("*")
            if p.is_file() or p.is_symlink()}
    transient = {"lock", "index.lock", "state.journal", "cron.log"}
    for name in transient:
        assert f".remelink/{name}" in made, name
    assert any(m.startswith(".remelink/index/") for m in made)
    assert any(m.startswith(".remelink/crash-") and m.endswith(".log") for m in made)
    assert any(m.startswith(".remelink/.remelink-tmp-") and m.endswith(".tmp") for m in made)

    git(vault, "add", "-A")
    staged = set(git(vault, "diff", "--cached", "--name-only").splitlines())
    kept = {m for m in made if m in staged}
    assert kept == {".remelink/.gitignore", ".remelink/config.yaml", ".remelink/state.json",
                    *(m for m in made if m.startswith(".remelink/runs/"))}, kept
    status = git(vault, "status", "--porcelain")
    assert all(line.startswith("A ") for line in status.splitlines()), status


def test_init_adds_missing_lines_to_an_older_gitignore(tmp_path: Path) -> None:
    init(tmp_path)
    old = "index/\nlock\n*.tmp\ncrash-*.log\nmy-own-file\n"
    (tmp_path / ".remelink/.gitignore").write_text(old)
    result = cli("init", str(tmp_path))
    assert result.exit_code == 0
    text = (tmp_path / ".remelink/.gitignore").read_text()
    assert text.startswith(old)  # the user's lines stay
    assert set(GITIGNORE_LINES) <= set(text.splitlines())
    assert result.stdout == ("updated .remelink/.gitignore: added index.new-*/, index.old-*/, "
                             "index.tampered-*, "
                             "index.lock, passages.lock, passages.new-*/, passages.old-*/, "
                             "passages.tampered-*, "
                             "state.journal, cron.log\n")
    assert cli("init", str(tmp_path)).stdout.endswith("nothing to create\n")


def test_the_written_gitignore_is_the_list(tmp_path: Path) -> None:
    init(tmp_path)
    assert (tmp_path / ".remelink/.gitignore").read_text() == GITIGNORE
