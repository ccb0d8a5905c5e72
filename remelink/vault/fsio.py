"""Atomic writes and the vault lock.

Every write of vault markdown, state.json or the audit trail goes through `atomic_write`:
a temp file in the same directory, fsync, rename over the target, fsync of the directory. A
reader (or a process killed half-way) sees the old bytes or the new bytes, never a mix.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path

from remelink.errors import VaultBusy

TMP_PREFIX = ".remelink-tmp-"


def atomic_write(path: Path, data: bytes | str, *, mode: int | None = None) -> None:
    """Replace `path` with `data` atomically (creating parent folders as needed)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        try:
            mode = path.stat().st_mode & 0o777
        except FileNotFoundError:
            mode = 0o666 & ~_umask()
    fd, tmp = _mkstemp(path)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)


def _mkstemp(path: Path) -> tuple[int, str]:
    import tempfile

    return tempfile.mkstemp(prefix=TMP_PREFIX, suffix=".tmp", dir=path.parent)


_UMASK: int | None = None


def _umask() -> int:
    global _UMASK
    if _UMASK is None:
        current = os.umask(0)
        os.umask(current)
        _UMASK = current
    return _UMASK


def fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def sweep_temp_files(directory: Path, *, older_than: float = 60.0) -> int:
    """Remove temp files left by killed writers (only ours, only stale ones)."""
    removed = 0
    now = time.time()
    if not directory.is_dir():
        return 0
    for entry in directory.iterdir():
        if entry.name.startswith(TMP_PREFIX) and entry.name.endswith(".tmp"):
            try:
                if now - entry.stat().st_mtime >= older_than:
                    entry.unlink()
                    removed += 1
            except FileNotFoundError:
                continue
    return removed


@contextlib.contextmanager
def file_lock(path: Path, *, wait: float = 0.0, what: str = "vault",
              poll: float = 0.1) -> Iterator[None]:
    """Hold an exclusive `flock` on `path` for the duration of the block.

    The kernel releases the lock when the holder dies, so a lock left by a killed process never
    blocks the next run. After `wait` seconds without the lock, raise VaultBusy (exit 3).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        _acquire(fd, fcntl.LOCK_EX, path, wait=wait, what=what, poll=poll)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


@contextlib.contextmanager
def shared_lock(path: Path, *, wait: float = 0.0, what: str = "vault",
                poll: float = 0.1) -> Iterator[None]:
    """A dry run's lock: shared, so it waits for a writing run (and a writing run waits for
    it), but it never creates or writes the lock file. No lock file means no run ever wrote."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        fd = -1
    if fd < 0:
        yield
        return
    try:
        _acquire(fd, fcntl.LOCK_SH, path, wait=wait, what=what, poll=poll)
        yield
    finally:
        os.close(fd)  # closing the only descriptor releases the lock


def _acquire(fd: int, operation: int, path: Path, *, wait: float, what: str,
             poll: float) -> None:
    """`flock(fd, operation)`, retried until `wait` seconds have passed; then VaultBusy."""
    deadline = time.monotonic() + max(wait, 0.0)
    while True:
        try:
            fcntl.flock(fd, operation | fcntl.LOCK_NB)
            return
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                raise
            if time.monotonic() >= deadline:
                raise VaultBusy(
                    f"{what} busy: another remelink process{_read_holder(fd)} holds {path.name}",
                    hint=f"wait for it to finish, or pass --wait SECONDS (waited {wait:g} s)",
                ) from None
            time.sleep(poll)


def _read_holder(fd: int) -> str:
    try:
        pid = os.pread(fd, 32, 0).decode().strip()
    except OSError:
        return ""
    return f" (pid {pid})" if pid.isdigit() else ""
