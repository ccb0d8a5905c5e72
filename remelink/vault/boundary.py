"""The vault boundary for files (SPEC §1, "the vault is the boundary").

Every file remelink reads goes through `read_file` (or `read_listed`, for what a directory walk
listed, or `read_prefix`, for the node index): a path whose real location is outside the vault
is never opened; a FIFO, socket, device or folder is never opened (its type is checked before
the open, and the open is non-blocking and does not follow a last symlink, so a file swapped
meanwhile can neither block nor redirect it); the size is checked on the real file before
reading, and at most `limit + 1` bytes are ever read. Writes, and everything remelink keeps
under `.remelink/`, go through `vault/own.py`.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from remelink.errors import UnsafeFileError

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


def hidden_inside(root_real: str, real: str) -> bool:
    """True when the real location `real` lies in the vault under a hidden entry (`.remelink/`,
    `.git/`, `.env`): a note symlinked there is remelink's state or a secret, never a note
    (search and the MCP server's `read` refuse it, as they refuse the path itself)."""
    if not is_inside(root_real, real) or real == root_real:
        return False
    rel = real[len(root_real.rstrip(os.sep)) + 1:]
    return any(part.startswith(".") for part in rel.split(os.sep))


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


# -- files given on the command line --------------------------------------------------------------
MAX_INPUT_BYTES = 32 << 20  # a units file or a script: far more than any real one


def read_given(path: Path | str, *, limit: int = MAX_INPUT_BYTES, what: str = "file",
               shown: str | None = None) -> bytes:
    """A file a person named on the command line (a units file, a script): it may lie anywhere,
    but it must be a regular file (a FIFO or a device such as /dev/zero is refused before any
    read, and the open never blocks) of at most `limit` bytes. Raises UnsafeFileError for
    anything else, OSError for the file system's own failures."""
    name = shown or str(path)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | _CLOEXEC)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafeFileError(f"is {kind_of(st.st_mode)}, not a regular file; not read",
                                  path=name, hint=f"give the {what} as a regular file")
        if st.st_size > limit:
            raise UnsafeFileError(f"is {st.st_size} bytes, over the {limit >> 20} MiB limit for a "
                                  f"{what}; not read", path=name)
        chunks: list[bytes] = []
        total = 0
        while chunk := os.read(fd, min(1 << 20, limit + 1 - total)):
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise UnsafeFileError(f"grew past the {limit >> 20} MiB limit for a {what} "
                                      "while being read; not read", path=name)
        return b"".join(chunks)
    finally:
        os.close(fd)
