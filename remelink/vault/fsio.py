"""Atomic writes, appends and the vault lock.

Every write of vault markdown, state.json or the audit trail goes through `atomic_write`:
a temp file in the same directory, fsync, rename over the target, fsync of the directory. A
reader (or a process killed half-way) sees the old bytes or the new bytes, never a mix.

Writes with a `root` refuse any symlink between the vault root and the file (the rule is
`boundary.check_write_path`; reading through the boundary is `boundary.read_file`). A file
system that refuses a write (permission, disk full, read-only) is a one-line
FileSystemError naming the file.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path

from remelink.errors import SandboxError, VaultBusy, filesystem_error
from remelink.vault.boundary import check_write_path, special_error

TMP_PREFIX = ".remelink-tmp-"
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _mkdirs(root: Path | None, folder: Path) -> None:
    if root is None:
        folder.mkdir(parents=True, exist_ok=True)
        return
    # One level at a time, so that a symlink cannot be followed on the way (checked above).
    try:
        parts = folder.relative_to(root).parts
    except ValueError:
        parts = ()
    here = root
    for part in parts:
        here = here / part
        with contextlib.suppress(FileExistsError):
            os.mkdir(here)


def _name(path: Path, root: Path | None, rel: str | None) -> str:
    if rel is not None:
        return rel
    if root is not None:
        with contextlib.suppress(ValueError):
            return path.relative_to(root).as_posix()
    return str(path)


def atomic_write(path: Path, data: bytes | str, *, mode: int | None = None,
                 root: Path | None = None, rel: str | None = None) -> None:
    """Replace `path` with `data` atomically (creating parent folders as needed).

    With `root` (the vault), a symlink between the root and the file is refused first. A
    refusal of the file system (permission, disk full, read-only) is a FileSystemError naming
    the file (`rel`, else the path relative to `root`); the old bytes are left in place."""
    if root is not None:
        check_write_path(root, path, rel)
    try:
        _atomic_write(path, data, mode, root)
    except OSError as exc:
        error = filesystem_error(exc, path=_name(path, root, rel), verb="write")
        if error is None:
            raise
        raise error from None


def append(path: Path, data: bytes, *, root: Path | None = None, rel: str | None = None,
           sync: bool = True) -> None:
    """Append `data` with one write (whole lines survive a kill), never through a symlink;
    fsync unless `sync` is False. File-system refusals as in `atomic_write`."""
    if root is not None:
        check_write_path(root, path, rel, append=True)
    try:
        _append(path, data, sync, root)
    except OSError as exc:
        error = filesystem_error(exc, path=_name(path, root, rel), verb="write")
        if error is None:
            raise
        raise error from None


def _append(path: Path, data: bytes, sync: bool, root: Path | None) -> None:
    _mkdirs(root, path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _CLOEXEC | _NOFOLLOW, 0o644)
    try:
        os.write(fd, data)
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)


def _atomic_write(path: Path, data: bytes | str, mode: int | None, root: Path | None) -> None:
    if isinstance(data, str):
        data = data.encode("utf-8")
    _mkdirs(root, path.parent)
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


def _lock_name(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


def _check_lock_folder(path: Path) -> None:
    """The lock lives in `.remelink/`: a `.remelink` that is a symlink would carry the lock,
    the checkpoint and the audit trail out of the vault. The lock file itself is written (the
    holder's pid): it must be a regular file with no other hard link."""
    if path.parent.is_symlink():
        raise SandboxError(f"{path.parent.name} is a symlink; remelink keeps its state inside "
                           "the vault and never writes through a symlink",
                           hint=f"replace the link by a real {path.parent.name} folder")
    try:
        st = os.lstat(path)
    except OSError:
        return
    if not stat.S_ISREG(st.st_mode):
        raise special_error(_lock_name(path), st.st_mode)
    if st.st_nlink > 1:
        raise SandboxError(f"{_lock_name(path)} has {st.st_nlink} hard links; writing the lock "
                           "would change the other copies", hint="delete it (it is recreated)")


@contextlib.contextmanager
def file_lock(path: Path, *, wait: float = 0.0, what: str = "vault",
              poll: float = 0.1) -> Iterator[None]:
    """Hold an exclusive `flock` on `path` for the duration of the block.

    The kernel releases the lock when the holder dies, so a lock left by a killed process never
    blocks the next run. After `wait` seconds without the lock, raise VaultBusy (exit 3).
    """
    _check_lock_folder(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | _CLOEXEC | _NOFOLLOW | os.O_NONBLOCK, 0o644)
    except OSError as exc:
        error = filesystem_error(exc, path=_lock_name(path), verb="write")
        if error is None:
            raise
        raise error from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped since the check
            raise special_error(_lock_name(path), os.fstat(fd).st_mode)
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
    _check_lock_folder(path)
    try:
        fd = os.open(path, os.O_RDONLY | _CLOEXEC | _NOFOLLOW | os.O_NONBLOCK)
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
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return False
        fd = os.open(path, os.O_RDONLY | _CLOEXEC | _NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except OSError:
        return True
    finally:
        os.close(fd)  # releases the shared lock just taken


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
