"""Reading and writing files at the vault boundary, atomic writes, and the vault lock.

Every write of vault markdown, state.json or the audit trail goes through `atomic_write`:
a temp file in the same directory, fsync, rename over the target, fsync of the directory. A
reader (or a process killed half-way) sees the old bytes or the new bytes, never a mix.

The vault is the boundary (SPEC §1), and every file remelink reads goes through `read_file`
(or `read_listed`, for what a directory walk listed): a path whose real location is outside
the vault is never opened; a FIFO, socket, device or folder is never opened (its type is
checked before the open, and the open is non-blocking and does not follow a last symlink, so
a file swapped meanwhile cannot block or redirect it); the size is checked on the real file
before reading, and at most `limit + 1` bytes are ever read. Writes with a `root` refuse any
symlink between the vault root and the file. A file system that refuses a write (permission,
disk full, read-only) is a one-line FileSystemError naming the file.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from remelink.errors import SandboxError, UnsafeFileError, VaultBusy, filesystem_error

TMP_PREFIX = ".remelink-tmp-"
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | _CLOEXEC | _NOFOLLOW
# Where the kernel says an open descriptor's file is (Linux): checked after every open, so a
# folder swapped for a symlink between the checks and the open cannot lead a read outside.
_PROC_FD = "/proc/self/fd"
_HAS_PROC = os.path.isdir(_PROC_FD)


# -- reading -----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class FileBytes:
    """A regular file's content (None when it is over the limit: then it was not read)."""

    data: bytes | None
    size: int
    mtime_ns: int


def vault_real(root: Path | str) -> str:
    """The vault root's real path, as `read_file` compares locations against it."""
    return os.path.realpath(root)


def is_inside(root_real: str, real: str) -> bool:
    return real == root_real or real.startswith(root_real.rstrip(os.sep) + os.sep)


def kind_of(mode: int) -> str | None:
    """What a file that is not a regular file is, for a one-line report (None: regular)."""
    if stat.S_ISREG(mode):
        return None
    for test, what in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISLNK, "a symlink")):
        if test(mode):
            return what
    return "not a regular file"


def outside_error(rel: str | None) -> UnsafeFileError:
    return UnsafeFileError("its real location is outside the vault (a symlink leads out); not "
                           "read", path=rel,
                           hint="move the file into the vault, or remove the link")


def special_error(rel: str | None, mode: int) -> UnsafeFileError:
    return UnsafeFileError(f"is {kind_of(mode)}, not a regular file; not opened", path=rel,
                           hint="notes are regular files; move it out of the vault")


def read_file(path: Path | str, *, root_real: str, limit: int,
              rel: str | None = None) -> FileBytes:
    """Read a regular file inside the vault whose real path is `root_real`.

    Raises UnsafeFileError (a NoteError) for a path whose real location is outside the vault
    and for anything but a regular file, before opening it; OSError for the file system's own
    failures (FileNotFoundError for a missing file). Over `limit` bytes the file is not read
    (`data` is None). `rel` names the file in messages."""
    real = os.path.realpath(path)
    if not is_inside(root_real, real):
        raise outside_error(rel)
    st = os.stat(real)
    if not stat.S_ISREG(st.st_mode):
        raise special_error(rel, st.st_mode)
    if st.st_size > limit:
        return FileBytes(None, st.st_size, st.st_mtime_ns)
    fd = os.open(real, _READ_FLAGS)
    try:
        return _read_fd(fd, st, root_real, limit, rel)
    finally:
        os.close(fd)


def read_listed(path: Path | str, *, root_real: str, limit: int,
                rel: str | None = None) -> FileBytes:
    """`read_file` for a path that a directory walk listed as a regular file, with no symlink
    on the way (the hot path of lint and the index): one non-blocking open that does not follow
    a symlink, and fstat, instead of resolving the path first. A symlink (ELOOP) falls back to
    `read_file`."""
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return read_file(path, root_real=root_real, limit=limit, rel=rel)
        raise
    try:
        # The walk found the path without a symlink on the way: no location check per file
        # (it costs a system call on every note of a 10,000-note lint run).
        return _read_fd(fd, None, None, limit, rel)
    finally:
        os.close(fd)


def read_prefix(path: Path | str, limit: int) -> bytes:
    """At most `limit` bytes of a regular file, for callers that report any OSError as "cannot
    read" (the node index): a FIFO, socket or device is not read (the open does not block, and
    the type is checked before the first read), and the refusal is an OSError (EINVAL) whose
    `strerror` says what the file is. The caller checks the location (the index's walk only
    lists files whose real location is inside the vault)."""
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
        fd = os.open(os.path.realpath(path), _READ_FLAGS)  # a link the walk found inside
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, f"{kind_of(mode)}, not a regular file; not opened",
                          str(path))
        chunks: list[bytes] = []
        total = 0
        while total < limit and (chunk := os.read(fd, min(1 << 20, limit - total))):
            chunks.append(chunk)
            total += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _read_fd(fd: int, before: os.stat_result | None, root_real: str | None, limit: int,
             rel: str | None) -> FileBytes:
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        raise special_error(rel, st.st_mode)
    if before is not None and (st.st_dev, st.st_ino) != (before.st_dev, before.st_ino):
        raise UnsafeFileError("was replaced while being opened; not read", path=rel,
                              hint="rerun when nothing else is changing the vault")
    if _HAS_PROC and root_real is not None:
        try:
            where = os.readlink(f"{_PROC_FD}/{fd}")
        except OSError:
            where = None
        if where is not None and where.startswith("/") and not is_inside(root_real, where):
            raise outside_error(rel)
    if st.st_size > limit:
        return FileBytes(None, st.st_size, st.st_mtime_ns)
    data = os.read(fd, st.st_size + 1)
    if len(data) > st.st_size:  # it grew since fstat: read on, never past the limit
        chunks = [data]
        total = len(data)
        while total <= limit and (chunk := os.read(fd, min(1 << 20, limit + 1 - total))):
            chunks.append(chunk)
            total += len(chunk)
        data = b"".join(chunks)
        if len(data) > limit:
            return FileBytes(None, len(data), st.st_mtime_ns)
    return FileBytes(data, len(data), st.st_mtime_ns)


# -- writing -----------------------------------------------------------------------------------
def check_write_path(root: Path, path: Path, rel: str | None = None, *,
                     append: bool = False) -> None:
    """Refuse a write to `path` when a component between `root` and it (the file included) is
    a symlink, or the file exists and is not a regular file: remelink never writes through a
    link, so a link cannot carry a write out of the vault (SPEC §1, §6). An atomic write
    replaces the name, so a hard link keeps its bytes; an `append` would not, and refuses a
    file with other hard links."""
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        raise SandboxError(f"{path} is not inside the vault {root}") from None
    shown_rel = rel or "/".join(parts)
    probe = root
    for i, part in enumerate(parts):
        probe = probe / part
        try:
            st = os.lstat(probe)
        except FileNotFoundError:
            return
        except OSError:
            return  # the write itself reports it
        if stat.S_ISLNK(st.st_mode):
            link = "/".join(parts[:i + 1])
            raise SandboxError(f"{link} is a symlink; remelink never writes through a symlink",
                               path=shown_rel if link != shown_rel else None,
                               hint="replace the link by the real folder or file")
        if i == len(parts) - 1:
            if not stat.S_ISREG(st.st_mode):
                raise special_error(shown_rel, st.st_mode)
            if append and st.st_nlink > 1:
                raise SandboxError(f"{shown_rel} has {st.st_nlink} hard links; appending "
                                   "would change the other copies too",
                                   hint="replace it by a copy of its own (cp, then mv)")


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
