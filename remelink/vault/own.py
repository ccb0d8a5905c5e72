"""The files remelink writes and keeps (SPEC §1, "the vault is the boundary").

Everything remelink writes into the vault (digest nodes, the topics file) and everything it
keeps under `.remelink/` (config, checkpoint and journal, audit trail, locks, crash logs, the
node index and its manifest, what `init` writes) goes through this module, under one rule:

- the folders on the way are opened one component at a time from the vault root with
  `O_DIRECTORY | O_NOFOLLOW`: each must be a real folder, never a symlink (wherever it points),
  and the file is then opened relative to that folder's descriptor, so a folder swapped for a
  link after the check cannot redirect the operation;
- a file is opened with `O_NOFOLLOW | O_NONBLOCK` and used only when `fstat` says it is a
  regular file: a FIFO, socket or device is never read (so never blocks) and never written;
- reads are capped: at most `limit + 1` bytes are ever read;
- a new file is created with `O_CREAT | O_EXCL | O_NOFOLLOW` under a random name and renamed
  into place: nothing is ever opened for writing by a predictable name that may already exist
  (appends and locks open their own fixed name with `O_NOFOLLOW` and check what they got).

A refusal is one line naming the entry: a StateError (exit 2) under `.remelink/` (the vault's
own state was tampered with: nothing is run on it), a SandboxError elsewhere. The low-level
`open_*` functions raise OSError instead, for callers (Whoosh's storage) that expect one.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from remelink.errors import RemelinkError, SandboxError, StateError, filesystem_error
from remelink.vault.boundary import kind_of

MARKER_DIR = ".remelink"
TMP_PREFIX = ".remelink-tmp-"
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NONBLOCK | _NOFOLLOW | _CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | _NOFOLLOW | _CLOEXEC
_NEW_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
_APPEND_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | _NOFOLLOW | _CLOEXEC


class Unsafe(OSError):
    """An entry on the way is not what it must be (a symlink, a FIFO, a file for a folder).
    `rel` names it; `what` says what it is."""

    def __init__(self, rel: str, what: str) -> None:
        super().__init__(errno.ELOOP if what == "a symlink" else errno.EINVAL,
                         f"{rel} is {what}", rel)
        self.rel = rel
        self.what = what


def split(rel: str) -> tuple[str, str]:
    """(`folder`, `name`) of a workspace-relative path (`folder` is "" at the root)."""
    folder, _, name = rel.rpartition("/")
    return folder, name


def _parts(rel: str) -> list[str]:
    parts = [p for p in rel.split("/") if p]
    if any(p in (".", "..") for p in parts):
        raise SandboxError(f"{rel} is not a plain path inside the vault")
    return parts


def _what(dir_fd: int, name: str) -> str:
    try:
        mode = os.lstat(name, dir_fd=dir_fd).st_mode
    except OSError:
        return "not a folder"
    return kind_of(mode) or "a file, not a folder"


def open_folder(root: Path | str, rel: str, *, create: bool = False) -> int:
    """A descriptor of the folder `root/rel`, reached without following any symlink; missing
    folders are created (one level at a time) when `create`. Raises Unsafe for a component
    that is a symlink or not a folder, FileNotFoundError for a missing one."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | _CLOEXEC)
    done: list[str] = []
    try:
        for part in _parts(rel):
            try:
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o777, dir_fd=fd)
                try:
                    nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except OSError as exc:
                    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                        raise Unsafe("/".join([*done, part]), _what(fd, part)) from None
                    raise
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise Unsafe("/".join([*done, part]), _what(fd, part)) from None
                raise
            os.close(fd)
            fd = nxt
            done.append(part)
        return fd
    except BaseException:
        os.close(fd)
        raise


@contextlib.contextmanager
def folder(root: Path | str, rel: str, *, create: bool = False) -> Iterator[int]:
    fd = open_folder(root, rel, create=create)
    try:
        yield fd
    finally:
        os.close(fd)


def open_regular(dir_fd: int, name: str, flags: int = _READ_FLAGS, *, rel: str | None = None,
                 mode: int = 0o644) -> int:
    """`name` in the folder `dir_fd`, opened without following a symlink and without blocking;
    Unsafe unless it is a regular file."""
    try:
        fd = os.open(name, flags | _NOFOLLOW | os.O_NONBLOCK | _CLOEXEC, mode, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Unsafe(rel or name, "a symlink") from None
        if exc.errno == errno.EISDIR:
            raise Unsafe(rel or name, "a folder") from None
        if exc.errno == errno.ENXIO:  # a FIFO opened for writing with no reader, a device
            raise Unsafe(rel or name, _what(dir_fd, name)) from None
        raise
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise Unsafe(rel or name, kind_of(st.st_mode) or "not a regular file")
    return fd


def open_new(dir_fd: int, name: str, mode: int = 0o644) -> int:
    """A new file `name` in the folder `dir_fd` (O_EXCL: never an existing file or link)."""
    return os.open(name, _NEW_FLAGS, mode, dir_fd=dir_fd)


def read_fd(fd: int, limit: int) -> bytes | None:
    """At most `limit` bytes of an open regular file (None when it holds more: not kept)."""
    chunks: list[bytes] = []
    total = 0
    while chunk := os.read(fd, min(1 << 20, limit + 1 - total)):
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            return None
    return b"".join(chunks)


# -- the errors callers see ----------------------------------------------------------------------
def refusal(exc: Unsafe, shown: str | None = None) -> RemelinkError:
    """The one line for an Unsafe entry: a StateError (exit 2) under `.remelink/`."""
    rel = exc.rel
    mine = rel == MARKER_DIR or rel.startswith(MARKER_DIR + "/")
    if exc.what == "a symlink":
        if rel == MARKER_DIR:
            message = (f"{MARKER_DIR} is a symlink; remelink keeps its state inside the vault and "
                       "never writes through a symlink")
            hint = f"replace the link by a real {MARKER_DIR} folder"
        elif mine:
            message = (f"{rel} is a symlink; remelink never reads or writes its own files "
                       "through a symlink")
            hint = "replace the link by the real folder or file"
        else:
            message = f"{rel} is a symlink; remelink never writes through a symlink"
            hint = "replace the link by the real folder or file"
    elif exc.what.startswith("a file, not") or exc.what == "not a folder":
        message, hint = f"{rel} is {exc.what}", "move it away; remelink needs a folder there"
    else:
        message = f"{rel} is {exc.what}, not a regular file; not opened"
        hint = "move it out of the vault (remelink recreates its own files)"
    path = shown if shown and shown != rel else None
    if mine:
        return StateError(message, path=path, hint=hint)
    return SandboxError(message, path=path, hint=hint)


def _fs(exc: OSError, rel: str, verb: str) -> RemelinkError | None:
    if isinstance(exc, Unsafe):
        return refusal(exc, rel)
    return filesystem_error(exc, path=rel, verb=verb)


def check_marker(root: Path) -> None:
    """Refuse (StateError, exit 2) a vault whose `.remelink` is a symlink (it would carry the
    checkpoint, the index, the locks and the logs out of the vault) or a special file. Nothing
    is created. (A plain file of that name makes no vault: `require_vault` says so.)"""
    try:
        st = os.lstat(root / MARKER_DIR)
    except OSError:
        return
    if not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):  # a plain file: no vault
        raise refusal(Unsafe(MARKER_DIR, kind_of(st.st_mode) or "not a folder"))


def check_folder(root: Path, rel: str) -> None:
    """Refuse (one line) a folder `rel` that exists but is reached through a symlink or is not
    a folder; a missing one is fine (it is created when written to)."""
    try:
        with folder(root, rel):
            pass
    except FileNotFoundError:
        return
    except Unsafe as exc:
        raise refusal(exc) from None


# -- reading --------------------------------------------------------------------------------------
def read(root: Path, rel: str, *, limit: int) -> bytes:
    """The bytes of a file remelink owns (`rel` workspace-relative). FileNotFoundError when it
    is missing; a refusal (StateError under `.remelink/`) when an entry on the way is a symlink
    or the file is not a regular file, or it holds more than `limit` bytes."""
    parent, name = split(rel)
    try:
        with folder(root, parent) as dfd:
            fd = open_regular(dfd, name, rel=rel)
            try:
                data = read_fd(fd, limit)
            finally:
                os.close(fd)
    except Unsafe as exc:
        raise refusal(exc, rel) from None
    if data is None:
        error = StateError if rel.startswith(MARKER_DIR + "/") else SandboxError
        raise error(f"holds more than {limit} bytes; not read", path=rel,
                    hint="move it away (remelink recreates its own files)")
    return data


# -- writing --------------------------------------------------------------------------------------
_UMASK: int | None = None


def umask() -> int:
    global _UMASK
    if _UMASK is None:
        current = os.umask(0)
        os.umask(current)
        _UMASK = current
    return _UMASK


def write(root: Path, rel: str, data: bytes | str, *, sync: bool = True,
          mode: int | None = None, shown: str | None = None) -> None:
    """Replace `rel` with `data` atomically: a new temp file (O_EXCL, random name) in the same
    real folder, fsync, rename over the target, fsync of the folder (`sync=False` skips both
    fsyncs, for derived data). Missing folders are created. A target that is a symlink or not a
    regular file is refused; a refusal of the file system is a FileSystemError naming `shown`
    (default `rel`)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    try:
        _write(root, rel, data, mode, sync)
    except OSError as exc:
        error = _fs(exc, shown or rel, "write")
        if error is None:
            raise
        raise error from None


def _write(root: Path, rel: str, data: bytes, mode: int | None, sync: bool) -> None:
    parent, name = split(rel)
    with folder(root, parent, create=True) as dfd:
        try:
            st = os.lstat(name, dir_fd=dfd)
        except FileNotFoundError:
            st = None
        if st is not None and not stat.S_ISREG(st.st_mode):
            raise Unsafe(rel, kind_of(st.st_mode) or "not a regular file")
        if mode is None:
            mode = st.st_mode & 0o777 if st is not None else 0o666 & ~umask()
        tmp = f"{TMP_PREFIX}{os.urandom(8).hex()}.tmp"
        fd = open_new(dfd, tmp, 0o600)
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
                os.fchmod(fd, mode)
                if sync:
                    os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dfd)
            raise
        if sync:
            with contextlib.suppress(OSError):
                os.fsync(dfd)


def replace_if(root: Path, rel: str, data: bytes | str, expected: bytes | None, *,
               shown: str | None = None) -> bool:
    """Compare-and-swap: replace `rel` with `data` only if it still holds exactly `expected`
    (None: only if it does not exist). The new bytes are written and fsynced to a temp file
    first, so the compare happens immediately before the atomic rename (a person's save that
    lands while a model works on the node is seen, not overwritten); a create links the temp
    file into place, which fails if the name appeared meanwhile. False when the file changed:
    nothing was written. POSIX has no compare-and-rename, so a save in the microseconds
    between the compare and the rename is the one race left."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    try:
        return _replace_if(root, rel, data, expected)
    except OSError as exc:
        error = _fs(exc, shown or rel, "write")
        if error is None:
            raise
        raise error from None


def _current(dfd: int, name: str, rel: str, limit: int) -> bytes | None:
    try:
        fd = open_regular(dfd, name, rel=rel)
    except FileNotFoundError:
        return None
    try:
        return read_fd(fd, limit)
    finally:
        os.close(fd)


_NO_HARD_LINKS = frozenset(getattr(errno, n) for n in ("EPERM", "ENOTSUP", "EOPNOTSUPP", "EMLINK",
                                                      "ENOSYS") if hasattr(errno, n))


def _exists(dfd: int, name: str) -> bool:
    try:
        os.lstat(name, dir_fd=dfd)
    except FileNotFoundError:
        return False
    return True


def _replace_if(root: Path, rel: str, data: bytes, expected: bytes | None, *,
                taken_ok: bool = False) -> bool:
    parent, name = split(rel)
    with folder(root, parent, create=True) as dfd:
        try:
            st = os.lstat(name, dir_fd=dfd)
        except FileNotFoundError:
            st = None
        if st is not None and expected is None and taken_ok:
            return False  # the name is taken (by whatever it is): never replaced
        if st is not None and not stat.S_ISREG(st.st_mode):
            raise Unsafe(rel, kind_of(st.st_mode) or "not a regular file")
        mode = st.st_mode & 0o777 if st is not None else 0o666 & ~umask()
        tmp = f"{TMP_PREFIX}{os.urandom(8).hex()}.tmp"
        fd = open_new(dfd, tmp, 0o600)
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
                os.fchmod(fd, mode)
                os.fsync(fd)
            finally:
                os.close(fd)
            limit = max(len(expected) if expected is not None else 0, 1)
            if expected is None:
                try:
                    os.link(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd, follow_symlinks=False)
                except FileExistsError:
                    return False
                except OSError as exc:
                    if exc.errno not in _NO_HARD_LINKS:
                        raise
                    # A file system without hard links: check, then rename (a narrower race).
                    if _exists(dfd, name):
                        return False
                    os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
            else:
                if _current(dfd, name, rel, limit) != expected:
                    return False
                os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dfd)
        with contextlib.suppress(OSError):
            os.fsync(dfd)
        return True


def publish(root: Path, rel: str, data: bytes | str) -> bool:
    """Create `rel` holding `data`, atomically and durably, never replacing anything: the
    bytes are written and fsynced to a new temp file (O_EXCL, random name) in the same real
    folder, which is then hard-linked to `rel` (fails if any entry of that name exists, a
    symlink included: nothing is followed or overwritten) and the folder fsynced. A reader,
    or a run killed half-way, sees no file or the whole file, never a part. False when the
    name is taken (nothing written). Missing folders are created; a symlink or a file on the
    way is a refusal (one line)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    try:
        return _replace_if(root, rel, data, None, taken_ok=True)
    except OSError as exc:
        error = _fs(exc, rel, "write")
        if error is None:
            raise
        raise error from None


def append(root: Path, rel: str, data: bytes, *, sync: bool = True,
           shown: str | None = None) -> None:
    """Append `data` with one write (whole lines survive a kill), fsync unless `sync` is False.
    The file is created if missing; a symlink, a special file or a file with other hard links
    (appending would change the other copies) is refused."""
    try:
        _append(root, rel, data, sync)
    except OSError as exc:
        error = _fs(exc, shown or rel, "write")
        if error is None:
            raise
        raise error from None


def _append(root: Path, rel: str, data: bytes, sync: bool) -> None:
    parent, name = split(rel)
    with folder(root, parent, create=True) as dfd:
        fd = open_regular(dfd, name, _APPEND_FLAGS, rel=rel)
        try:
            links = os.fstat(fd).st_nlink
            if links > 1:
                raise SandboxError(f"{rel} has {links} hard links; appending would change the "
                                   "other copies too",
                                   hint="replace it by a copy of its own (cp, then mv)")
            os.write(fd, data)
            if sync:
                os.fsync(fd)
        finally:
            os.close(fd)


def create(root: Path, rel: str, data: bytes | str, *, mode: int = 0o644) -> None:
    """Create `rel` as a new file holding `data` (FileExistsError if the name is taken)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    parent, name = split(rel)
    try:
        with folder(root, parent, create=True) as dfd:
            fd = open_new(dfd, name, mode)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
    except Unsafe as exc:
        raise refusal(exc, rel) from None


def remove(root: Path, rel: str) -> bool:
    """Unlink `rel` (a link is removed, never followed); False when it was not there."""
    parent, name = split(rel)
    try:
        with folder(root, parent) as dfd:
            os.unlink(name, dir_fd=dfd)
            with contextlib.suppress(OSError):
                os.fsync(dfd)
    except FileNotFoundError:
        return False
    except Unsafe as exc:
        raise refusal(exc, rel) from None
    return True


# -- derived folders (the node index) -------------------------------------------------------------
def tampered(root: Path, rel: str, *, allow_subfolders: tuple[str, ...] = ()) -> str | None:
    """Why the folder `rel` is not what remelink writes there (None when it is, or is missing):
    a symlink, not a folder, or holding anything but regular files (and, one level down,
    real folders whose names end with one of `allow_subfolders`, holding regular files)."""
    try:
        with folder(root, rel) as dfd:
            return _foreign(dfd, rel, allow_subfolders, 0)
    except FileNotFoundError:
        return None
    except Unsafe as exc:
        return f"{exc.rel} is {exc.what}"


def _foreign(dfd: int, rel: str, allow: tuple[str, ...], depth: int) -> str | None:
    for name in os.listdir(dfd):
        st = os.lstat(name, dir_fd=dfd)
        if stat.S_ISREG(st.st_mode):
            continue
        here = f"{rel}/{name}"
        if stat.S_ISDIR(st.st_mode) and depth == 0 and allow and name.endswith(allow):
            sub = os.open(name, _DIR_FLAGS, dir_fd=dfd)
            try:
                why = _foreign(sub, here, (), 1)
            finally:
                os.close(sub)
            if why is not None:
                return why
            continue
        return f"{here} is {kind_of(st.st_mode) or 'not a regular file'}"
    return None


def move_aside(root: Path, rel: str, label: str = "tampered", *, into: str | None = None) -> str:
    """Rename the entry `rel` itself (never following it) to `<name>.<label>-<stamp>` beside
    it, or in the folder `into` (a real folder on the same file system); returns the new
    workspace-relative name."""
    import time

    parent, name = split(rel)
    new = f"{name}.{label}-{time.strftime('%Y%m%dT%H%M%S')}-{os.urandom(3).hex()}"
    there = parent if into is None else into
    with folder(root, parent) as dfd, folder(root, there) as tfd:
        os.rename(name, new, src_dir_fd=dfd, dst_dir_fd=tfd)
    return f"{there}/{new}" if there else new
