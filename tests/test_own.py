"""vault/own.py on its own: the rule for the files remelink writes and keeps (issue 20).
Every folder on the way is a real folder, a file is used only when regular, reads are capped,
new files are exclusive; a refusal under .remelink/ is a StateError (exit 2)."""

from __future__ import annotations

import errno
import os
import time
from pathlib import Path

import pytest

from remelink.errors import SandboxError, StateError
from remelink.vault import own


@pytest.fixture
def root(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    (vault / ".remelink").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    return vault


def test_write_read_append_remove(root: Path) -> None:
    own.write(root, ".remelink/runs/a.jsonl", b"one\n")
    own.append(root, ".remelink/runs/a.jsonl", b"two\n")
    assert own.read(root, ".remelink/runs/a.jsonl", limit=100) == b"one\ntwo\n"
    assert own.remove(root, ".remelink/runs/a.jsonl") and \
        not own.remove(root, ".remelink/runs/a.jsonl")
    with pytest.raises(FileNotFoundError):
        own.read(root, ".remelink/runs/a.jsonl", limit=100)
    assert not [p for p in (root / ".remelink" / "runs").iterdir()]  # no temp file left


@pytest.mark.parametrize("where", [".remelink", ".remelink/runs", ".remelink/runs/a.jsonl"])
def test_a_symlink_anywhere_on_the_way_is_refused(root: Path, where: str) -> None:
    outside = root.parent / "outside"
    if where == ".remelink":
        os.rmdir(root / ".remelink")
    elif where == ".remelink/runs/a.jsonl":
        (root / ".remelink" / "runs").mkdir()
    os.symlink(outside if not where.endswith(".jsonl") else outside / "f", root / where)
    for call in (lambda: own.write(root, ".remelink/runs/a.jsonl", b"x"),
                 lambda: own.append(root, ".remelink/runs/a.jsonl", b"x"),
                 lambda: own.read(root, ".remelink/runs/a.jsonl", limit=10)):
        with pytest.raises(StateError, match=f"{where} is a symlink"):
            call()
    # A new file is created exclusively: a link in its place is an existing name.
    with pytest.raises(StateError if not where.endswith(".jsonl") else FileExistsError):
        own.create(root, ".remelink/runs/a.jsonl", b"x")
    assert not os.listdir(outside)


def test_outside_remelink_a_refusal_is_a_sandbox_error(root: Path) -> None:
    os.symlink(root.parent / "outside", root / "digest")
    with pytest.raises(SandboxError, match="digest is a symlink"):
        own.write(root, "digest/wiki/x.md", b"x")
    assert not os.listdir(root.parent / "outside")


def test_a_fifo_is_never_read_and_a_folder_never_opened(root: Path) -> None:
    os.mkfifo(root / ".remelink" / "state.json")
    started = time.monotonic()
    with pytest.raises(StateError, match="FIFO"):
        own.read(root, ".remelink/state.json", limit=10)
    with pytest.raises(StateError, match="FIFO"):
        own.append(root, ".remelink/state.json", b"x")
    (root / ".remelink" / "lockdir").mkdir()
    with pytest.raises(StateError, match="folder"):
        own.append(root, ".remelink/lockdir", b"x")
    assert time.monotonic() - started < 5


def test_reads_are_capped(root: Path) -> None:
    (root / ".remelink" / "big").write_bytes(b"x" * 101)
    with pytest.raises(StateError, match="more than 100 bytes"):
        own.read(root, ".remelink/big", limit=100)


def test_create_is_exclusive(root: Path) -> None:
    os.symlink(root.parent / "outside" / "f", root / ".remelink" / "crash.log")
    with pytest.raises(FileExistsError):
        own.create(root, ".remelink/crash.log", b"x")
    assert not os.listdir(root.parent / "outside")


def test_write_never_writes_through_a_planted_temp_name(root: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Temp names are random; even a planted link under the one name the process will pick
    is never written through (O_EXCL)."""
    monkeypatch.setattr(os, "urandom", lambda n: b"\0" * n)
    os.symlink(root.parent / "outside" / "f",
               root / ".remelink" / f"{own.TMP_PREFIX}{'00' * 8}.tmp")
    with pytest.raises(FileExistsError):
        own.write(root, ".remelink/state.json", b"{}")
    assert not os.listdir(root.parent / "outside")


def test_replace_if_without_hard_links(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file system without hard links (a create is then a check and a rename)."""
    def no_links(*args: object, **kwargs: object) -> None:
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    assert own.replace_if(root, "digest/a.md", b"new", None)
    assert not own.replace_if(root, "digest/a.md", b"newer", None)
    assert (root / "digest" / "a.md").read_bytes() == b"new"
    assert sorted(os.listdir(root / "digest")) == ["a.md"]
