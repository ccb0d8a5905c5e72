"""Scratch copies of a vault, for dry runs: the real pipeline runs on the copy, so each unit
sees what the units before it would have written, and the vault itself is never touched.

What is copied goes through the boundaries: a notes folder is copied only when it is a real
folder (its symlinks are copied as links, never followed); the configuration and the checkpoint
are read through `vault/own.py`; the node index is copied only when it holds nothing but the
regular files remelink writes (a tampered index is left out, and the run on the copy builds
its own)."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from remelink.config import Settings
from remelink.errors import RemelinkError
from remelink.vault import own
from remelink.vault.paths import MARKER_DIR

INDEX_DIR = f"{MARKER_DIR}/index"  # as remelink.index.store, without importing the index
_COPIED_STATE = ("config.yaml", "state.json")
_MAX_STATE_BYTES = 256 << 20


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        # Across file systems: a copy, but only of a regular file. Copying a FIFO would block,
        # a device (/dev/zero) would never end; a FIFO is recreated empty, so the dry run
        # reports it as the real run does, and sockets and devices are left out.
        mode = os.lstat(src).st_mode
        if stat.S_ISREG(mode):
            shutil.copy2(src, dst)
        elif stat.S_ISFIFO(mode):
            os.mkfifo(dst)


def _is_real_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _copy_index(vault: Path, scratch: Path) -> None:
    """The node index's regular files, each opened without following a link or blocking."""
    if own.tampered(vault, INDEX_DIR) is not None:
        return
    try:
        with own.folder(vault, INDEX_DIR) as src:
            (scratch / INDEX_DIR).mkdir()
            for name in os.listdir(src):
                if not stat.S_ISREG(os.lstat(name, dir_fd=src).st_mode):
                    continue  # a temp folder of a writer: not part of the index
                fd = own.open_regular(src, name)
                with os.fdopen(fd, "rb") as fin, open(scratch / INDEX_DIR / name, "xb") as fout:
                    shutil.copyfileobj(fin, fout)
    except (OSError, RemelinkError):
        shutil.rmtree(scratch / INDEX_DIR, ignore_errors=True)  # the copy builds its own


@contextlib.contextmanager
def scratch_copy(vault: Path, settings: Settings) -> Iterator[Path]:
    """A throw-away copy of the vault's notes, configuration, checkpoint and node index. Notes
    are hard-linked when possible (every write is an atomic rename, which replaces the copy's
    directory entry and never the shared inode); the checkpoint and the index are copied."""
    with tempfile.TemporaryDirectory(prefix="remelink-dry-run-") as tmp:
        scratch = Path(tmp) / "vault"
        scratch.mkdir()
        folders = settings.folders
        for top in (folders.daily, folders.resource, folders.digest):
            if _is_real_dir(vault / top):
                shutil.copytree(vault / top, scratch / top, symlinks=True,
                                copy_function=_link_or_copy)
        (scratch / MARKER_DIR).mkdir()
        for name in _COPIED_STATE:
            try:
                data = own.read(vault, f"{MARKER_DIR}/{name}", limit=_MAX_STATE_BYTES)
            except (OSError, RemelinkError):
                continue  # missing, or refused already by the run that asked for the copy
            (scratch / MARKER_DIR / name).write_bytes(data)
        _copy_index(vault, scratch)
        yield scratch
