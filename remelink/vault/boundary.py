"""The vault boundary for files (SPEC §1, "the vault is the boundary").

Every file remelink reads goes through `read_file` (or `read_listed`, for what a directory walk
listed, or `read_prefix`, for the node index): a path whose real location is outside the vault
is never opened; a FIFO, socket, device or folder is never opened (its type is checked before
the open, and the open is non-blocking and does not follow a last symlink, so a file swapped
meanwhile can neither block nor redirect it); the size is checked on the real file before
reading, and at most `limit + 1` bytes are ever read. `check_write_path` is the rule for
writes: no symlink between the vault root and the file.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from remelink.errors import SandboxError, UnsafeFileError

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


# -- the rule for writes --------------------------------------------------------------------
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
