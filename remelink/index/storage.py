"""Whoosh's file storage through the vault boundary (`vault/own.py`).

Whoosh's own FileStorage opens paths as given: it writes, truncates and deletes through a
symlinked index folder or a symlinked file inside it, blocks on a FIFO named like a segment,
creates its lock where a dangling link points, and empties whatever folder its temp folder
(`MAIN.tmp`) links to. SafeStorage keeps every operation inside the real folder
`.remelink/index/` (or a build's fresh folder beside it):

- the folder is reached from the vault root one real folder at a time (never a symlink), and
  every file is opened relative to it;
- a file is read only when it is a regular file (opened without following a link and without
  blocking); a new file is created exclusively (O_EXCL | O_NOFOLLOW), so no existing file or
  link is ever truncated or written through;
- the lock file is opened the same way; deleting or renaming removes or moves the entry itself.

Anything else is an OSError, which the node index treats as damage: it moves the folder aside
and rebuilds it (index/store.py).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path
from typing import Any, BinaryIO, cast

from whoosh.filedb.filestore import FileStorage
from whoosh.filedb.structfile import StructFile
from whoosh.util import random_name

from remelink.vault import own
from remelink.vault.boundary import kind_of

_RDWR_NEW = os.O_RDWR | os.O_CREAT | os.O_EXCL


class SafeStorage(FileStorage):
    """A FileStorage for the folder `root/rel`, through the vault boundary."""

    supports_mmap = True
    supports_multiproc_writing = False

    def __init__(self, root: Path, rel: str, readonly: bool = False) -> None:
        super().__init__(str(Path(root) / rel), readonly=readonly)  # type: ignore[no-untyped-call]
        self.root = Path(root)
        self.rel = rel

    def __repr__(self) -> str:
        return f"SafeStorage({self.rel!r})"

    def _at(self, create: bool = False) -> contextlib.AbstractContextManager[int]:
        return own.folder(self.root, self.rel, create=create)

    def create(self) -> SafeStorage:
        with self._at(create=True):
            return self

    def destroy(self) -> None:
        self.clean(ignore=True)
        parent, name = own.split(self.rel)
        with own.folder(self.root, parent) as dfd, contextlib.suppress(FileNotFoundError):
            os.rmdir(name, dir_fd=dfd)

    def create_file(self, name: str, excl: bool = False, mode: str = "wb",
                    **kwargs: Any) -> StructFile:
        if self.readonly:
            raise OSError(errno.EROFS, "read-only index storage", name)
        with self._at() as dfd:
            fd = os.open(name, _RDWR_NEW | getattr(os, "O_NOFOLLOW", 0) |
                         getattr(os, "O_CLOEXEC", 0), 0o644, dir_fd=dfd)
        return StructFile(cast(BinaryIO, os.fdopen(fd, mode)), name=name, **kwargs)

    def open_file(self, name: str, **kwargs: Any) -> StructFile:
        with self._at() as dfd:
            fd = own.open_regular(dfd, name, rel=f"{self.rel}/{name}")
        try:
            os.set_blocking(fd, True)
            fileobj = os.fdopen(fd, "rb")
        except BaseException:
            os.close(fd)
            raise
        return StructFile(fileobj, name=name, **kwargs)

    def clean(self, ignore: bool = False) -> None:
        for name in self.list():
            try:
                self.delete_file(name)
            except OSError:
                if not ignore:
                    raise

    def list(self) -> list[str]:
        try:
            with self._at() as dfd:
                return os.listdir(dfd)
        except OSError:
            return []

    def _lstat(self, name: str) -> os.stat_result:
        with self._at() as dfd:
            return os.lstat(name, dir_fd=dfd)

    def file_exists(self, name: str) -> bool:
        try:
            self._lstat(name)
        except OSError:
            return False
        return True

    def file_modified(self, name: str) -> float:
        return self._lstat(name).st_mtime

    def file_length(self, name: str) -> int:
        st = self._lstat(name)
        if not stat.S_ISREG(st.st_mode):
            raise own.Unsafe(f"{self.rel}/{name}", kind_of(st.st_mode) or "not a file")
        return st.st_size

    def delete_file(self, name: str) -> None:
        if self.readonly:
            raise OSError(errno.EROFS, "read-only index storage", name)
        with self._at() as dfd:
            st = os.lstat(name, dir_fd=dfd)
            if stat.S_ISDIR(st.st_mode):
                SafeStorage(self.root, f"{self.rel}/{name}").destroy()
            else:
                os.unlink(name, dir_fd=dfd)  # a link itself, never what it points at

    def rename_file(self, oldname: str, newname: str, safe: bool = False) -> None:
        if self.readonly:
            raise OSError(errno.EROFS, "read-only index storage", oldname)
        with self._at() as dfd:
            if safe:
                try:
                    os.lstat(newname, dir_fd=dfd)
                except FileNotFoundError:
                    pass
                else:
                    raise NameError(f"File {newname!r} exists")
            os.replace(oldname, newname, src_dir_fd=dfd, dst_dir_fd=dfd)

    def lock(self, name: str) -> SafeLock:
        return SafeLock(self, name)

    def temp_storage(self, name: str | None = None) -> SafeStorage:
        """A sub-folder for a writer's temporary files. One left by a writer that died is
        emptied first (a stale `MAIN.tmp`); anything but a real folder there is damage."""
        name = name or f"{random_name()}.tmp"
        sub = SafeStorage(self.root, f"{self.rel}/{name}")
        with self._at() as dfd:
            try:
                st = os.lstat(name, dir_fd=dfd)
            except FileNotFoundError:
                st = None
        if st is not None:
            if not stat.S_ISDIR(st.st_mode):
                raise own.Unsafe(sub.rel, kind_of(st.st_mode) or "not a folder")
            sub.clean()
        return sub.create()


class SafeLock:
    """Whoosh's lock (an flock on a file of the index folder), opened without following a link
    or blocking, and only on a regular file."""

    def __init__(self, storage: SafeStorage, name: str) -> None:
        self.storage = storage
        self.name = name
        self.fd: int | None = None
        self.locked = False

    def acquire(self, blocking: bool = False) -> bool:
        import fcntl

        with self.storage._at() as dfd:
            fd = own.open_regular(dfd, self.name, os.O_WRONLY | os.O_CREAT,
                                  rel=f"{self.storage.rel}/{self.name}")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
        except OSError as exc:
            os.close(fd)
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            return False
        self.fd = fd
        self.locked = True
        return True

    def release(self) -> None:
        import fcntl

        if self.fd is None:
            raise RuntimeError("lock was not acquired")
        with contextlib.suppress(OSError):
            fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)
        self.fd = None
        self.locked = False

    def __del__(self) -> None:
        if getattr(self, "fd", None) is not None:
            with contextlib.suppress(Exception):
                self.release()

    def __enter__(self) -> SafeLock:
        self.acquire(blocking=True)
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
