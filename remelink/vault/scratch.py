"""Scratch copies of a vault, for dry runs: the real pipeline runs on the copy, so each unit
sees what the units before it would have written, and the vault itself is never touched."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from remelink.config import Settings
from remelink.vault.paths import MARKER_DIR

INDEX_DIR = f"{MARKER_DIR}/index"  # as remelink.index.store, without importing the index


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
            if (vault / top).is_dir():
                shutil.copytree(vault / top, scratch / top, symlinks=True,
                                copy_function=_link_or_copy)
        (scratch / MARKER_DIR).mkdir()
        for name in ("config.yaml", "state.json"):
            if (vault / MARKER_DIR / name).is_file():
                shutil.copy2(vault / MARKER_DIR / name, scratch / MARKER_DIR / name)
        if (vault / INDEX_DIR).is_dir():
            shutil.copytree(vault / INDEX_DIR, scratch / INDEX_DIR, symlinks=True)
        yield scratch
