"""Atomic writes, appends and the vault lock.

Every write of vault markdown, state.json or the audit trail is atomic (`vault/own.py`): a
temp file in the same directory, fsync, rename over the target (`replace_if` for a node: only
if it still holds what was read), fsync of the directory. A reader (or a process killed
half-way) sees the old bytes or the new bytes, never a mix.

Writes with a `root` go through the vault boundary for writes (`vault/own.py`): no symlink
between the vault root and the file, exclusive temp files, never a special file. Reading notes
through the boundary is `boundary.read_file`. A file system that refuses a write (permission,
disk full, read-only) is a one-line FileSystemError naming the file. The locks live in
`.remelink/` and are opened the same way.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import math
import os
import time
from collections.abc import Iterator
from pathlib import Path

from remelink.errors import StateError, VaultBusy, filesystem_error
from remelink.vault import own

TMP_PREFIX = own.TMP_PREFIX
MAX_WAIT = 7 * 86400.0  # --wait nan never timed out (a NaN deadline is never reached)


def _rel(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        from remelink.errors import SandboxError

        raise SandboxError(f"{path} is not inside the vault {root}") from None


def replace_if(path: Path, data: bytes | str, expected: bytes | None, *, root: Path,
               rel: str | None = None) -> bool:
    """Compare-and-swap a node (`own.replace_if`): replace `path` only if it still holds
    `expected` (None: only if it does not exist); False, and nothing written, otherwise."""
    return own.replace_if(root, _rel(path, root), data, expected, shown=rel)


def append(path: Path, data: bytes, *, root: Path, rel: str | None = None,
           sync: bool = True) -> None:
    """Append `data` with one write (whole lines survive a kill), never through a symlink;
    fsync unless `sync` is False (`own.append`)."""
    own.append(root, _rel(path, root), data, sync=sync, shown=rel)


def sweep_temp_files(directory: Path, *, older_than: float = 60.0) -> int:
    """Remove temp files left by killed writers (only ours, only stale ones; a link is removed,
    never followed)."""
    removed = 0
    now = time.time()
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return 0
    for entry in entries:
        if entry.name.startswith(TMP_PREFIX) and entry.name.endswith(".tmp"):
            try:
                if now - entry.stat(follow_symlinks=False).st_mtime >= older_than:
                    os.unlink(entry.path)
                    removed += 1
            except FileNotFoundError:
                continue
    return removed


def _lock_name(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


def _open_lock(path: Path, flags: int, *, create: bool) -> int:
    """The lock file `path` (in `.remelink/`), reached through real folders only and opened
    without following a link or blocking: a regular file with no other hard link (the holder's
    pid is written into it). Anything else is a StateError (exit 2); a missing file (when not
    `create`) is FileNotFoundError."""
    name = _lock_name(path)
    try:
        with own.folder(path.parent.parent, path.parent.name, create=create) as dfd:
            fd = own.open_regular(dfd, path.name, flags, rel=name)
    except own.Unsafe as exc:
        raise own.refusal(exc) from None
    links = os.fstat(fd).st_nlink
    if links > 1:
        os.close(fd)
        raise StateError(f"{name} has {links} hard links; writing the lock would change the "
                         "other copies", hint="delete it (it is recreated)")
    return fd


@contextlib.contextmanager
def file_lock(path: Path, *, wait: float = 0.0, what: str = "vault",
              poll: float = 0.1) -> Iterator[None]:
    """Hold an exclusive `flock` on `path` for the duration of the block.

    The kernel releases the lock when the holder dies, so a lock left by a killed process never
    blocks the next run. After `wait` seconds without the lock, raise VaultBusy (exit 3).
    """
    try:
        fd = _open_lock(path, os.O_RDWR | os.O_CREAT, create=True)
    except OSError as exc:
        error = filesystem_error(exc, path=_lock_name(path), verb="write")
        if error is None:
            raise
        raise error from None
    try:
        _acquire(fd, fcntl.LOCK_EX, path, wait=wait, what=what, poll=poll)
        with contextlib.suppress(OSError):  # the pid is for messages only (a full disk)
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
        fd = _open_lock(path, os.O_RDONLY, create=False)
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


def lock_is_held(path: Path) -> bool:
    """True while some process holds the exclusive lock on `path` (a run is going on)."""
    try:
        fd = _open_lock(path, os.O_RDONLY, create=False)
    except (OSError, StateError):
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except OSError:
        return True
    finally:
        os.close(fd)  # releases the shared lock just taken


def _acquire(fd: int, operation: int, path: Path, *, wait: float, what: str,
             poll: float) -> None:
    """`flock(fd, operation)`, retried until `wait` seconds have passed; then VaultBusy."""
    if not (isinstance(wait, (int, float)) and math.isfinite(wait) and 0 <= wait <= MAX_WAIT):
        from remelink.errors import UsageError

        raise UsageError(f"--wait must be a number of seconds from 0 to {MAX_WAIT:g}, got "
                         f"{wait!r}")
    deadline = time.monotonic() + wait
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
