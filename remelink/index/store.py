"""The node index on disk: opening, freshness, writes, rebuilds and locking (SPEC §5).

The index under `.remelink/index/` is derived data: safe to delete, rebuilt when missing, of an
older format, or unreadable, with a one-line notice in the returned `RefreshStats` (nothing
here prints). Freshness is incremental: a refresh walks the digest folder, trusts unchanged
stat results (the manifest), hashes only files whose mtime or size moved, and re-indexes only
added, changed or removed nodes, in one commit.

Locking. Every change happens under `.remelink/index.lock` (an flock, released by the kernel if
the holder dies) and through `ix.writer(timeout=..., delay=...)`; after `wait` seconds either
one raises VaultBusy ("index busy"). Readers never lock. A full rebuild writes a fresh index
beside the live one and swaps the directories, so a rebuild that dies half-way leaves the
previous index in service; an incremental commit is atomic in Whoosh (the new TOC is renamed
into place last), so a process killed mid-commit leaves an index that still opens (tested by
SIGKILL in tests/test_index_recovery.py).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from remelink.config import Settings
from remelink.errors import RemelinkError, VaultBusy
from remelink.index import build
from remelink.index.manifest import Entry, Manifest
from remelink.index.nodes import FileStat, ReadResult, read_node, scan_digest, stat_one
from remelink.vault import own
from remelink.vault.paths import MARKER_DIR

INDEX_DIR = f"{MARKER_DIR}/index"
LOCK_FILE = f"{MARKER_DIR}/index.lock"
# The passage index of `remelink search` (remelink.search) lives in its own folder inside the
# node index's; a node index rebuild carries it over (IndexStore.KEEP).
PASSAGES_DIR = f"{INDEX_DIR}/passages"
PASSAGES_LOCK = f"{MARKER_DIR}/passages.lock"
KEPT_WAIT = 2.0  # seconds a rebuild waits for a kept index's lock before leaving it behind
FORMAT_FILE = "remelink-format.json"
# Bump when the schema, the analyzer or the section weights change: old indexes are rebuilt.
FORMAT = "remelink-node-index/1 analyzer/1 weights/3,2,2,1 name weblinks"
DEFAULT_WAIT = 10.0  # seconds a writer waits for the index lock before VaultBusy
# Processes of a full build (0: two when this process may use two cores; see index/build.py).
BUILD_PROCS = 0
# A refresh that touches more than this share of the nodes rebuilds instead (faster in bulk).
BULK_SHARE = 0.5
BULK_MIN = 2000


@dataclass(frozen=True)
class RefreshStats:
    added: int = 0
    changed: int = 0
    removed: int = 0
    unchanged: int = 0
    skipped: int = 0  # files that could not be indexed (binary, too large); see notices
    rebuilt: bool = False
    seconds: float = 0.0
    notices: tuple[str, ...] = ()
    # A tampered index folder, moved aside and rebuilt: one line for the person, a warning.
    warnings: tuple[str, ...] = ()

    @property
    def touched(self) -> int:
        return self.added + self.changed + self.removed


class Readout(Protocol):
    """One file read for indexing (a node's `ReadResult`, or another index's equivalent):
    `doc` is None when the file cannot be indexed."""

    @property
    def path(self) -> str: ...
    @property
    def fingerprint(self) -> str: ...
    @property
    def doc(self) -> object | None: ...
    @property
    def notice(self) -> str | None: ...
    @property
    def unchanged(self) -> bool: ...


@dataclass
class Diff:
    upserts: list[tuple[Readout, FileStat]] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    restat: dict[str, Entry] = field(default_factory=dict)
    unchanged: int = 0
    skipped: int = 0
    added: int = 0
    notices: list[str] = field(default_factory=list)

    def stats(self, started: float) -> RefreshStats:
        return RefreshStats(
            added=self.added, changed=len(self.upserts) - self.added, removed=len(self.removed),
            unchanged=self.unchanged,
            skipped=self.skipped + sum(1 for r, _ in self.upserts if r.doc is None),
            seconds=time.perf_counter() - started, notices=tuple(self.notices))


class IndexStore:
    """The live index of one vault and the searcher over it (`searcher` is None until
    `ensure_open()`); `idf_cache` is emptied whenever the searcher changes."""

    # The node index. Another index over the vault's notes (the passage index of `remelink
    # search`) subclasses this and replaces the hooks below (DIR, LOCK, FORMAT, WHAT, scan,
    # read, open_index, stored_fingerprints, write, build): both share the freshness,
    # manifest, locking, rebuild and boundary machinery.
    DIR = INDEX_DIR
    LOCK = LOCK_FILE
    FORMAT = FORMAT
    WHAT = "node index"
    UNITS = "digest node(s)"  # what `doc_count` counts, for notices
    # Folders inside DIR that belong to other indexes (with their locks): a rebuild carries
    # them into the new folder when their lock is free within KEPT_WAIT seconds.
    KEEP: tuple[tuple[str, str], ...] = (("passages", PASSAGES_LOCK),)

    def __init__(self, vault: Path, settings: Settings, wait: float) -> None:
        self.vault = vault
        self.settings = settings
        self.digest = settings.folders.digest
        self.directory = vault / self.DIR
        self.wait = wait
        self.ix: Any = None
        self.searcher: Any = None
        self.stats: Any = None  # engine.LiveStats of `searcher`
        self.idf_cache: dict[str, float] = {}
        self._index_id: str | None = None
        self._manifest: Manifest | None = None
        self._lock_depth = 0
        # Every warning of a rebuild (a tampered folder moved aside), also those of rebuilds
        # that operations returning no stats ran (`update`): an owner may drain it.
        self.warned: list[str] = []

    # -- the hooks an index over other files replaces ----------------------------------------
    def scan(self) -> dict[str, FileStat]:
        """Every file this index covers: workspace-relative path -> FileStat."""
        return scan_digest(self.vault, self.digest)

    def read(self, rel: str, stat: FileStat, known: str | None = None) -> Readout:
        """One file read for indexing (never raises for bad content)."""
        return read_node(rel, stat, self.digest, self.settings.max_note_bytes, known=known)

    def open_index(self) -> Any:
        from remelink.index import engine

        return engine.open_index(self.vault, self.DIR)

    def stored_fingerprints(self, reader: Any) -> Iterator[tuple[str, str]]:
        """(path, fingerprint) of every live document, to rebuild a lost manifest."""
        from remelink.index import engine

        for doc in engine.all_stored(reader):
            yield doc.path, doc.fingerprint

    def write(self, writer: Any, result: Readout) -> None:
        """Replace the documents of `result.path` in an open writer."""
        from remelink.index import engine

        assert isinstance(result, ReadResult) and result.doc is not None
        writer.update_document(**engine.fields_of(result.doc))

    def build(self, folder: str, files: list[tuple[str, FileStat]]) -> build.Built:
        """A complete index of `files` in the new, empty workspace folder `folder`."""
        return build.build(self.vault, folder, files, self.digest,
                           self.settings.max_note_bytes, wait=self.wait,
                           procs=BUILD_PROCS or build.default_procs())

    def close(self) -> None:
        if self.searcher is not None:
            with contextlib.suppress(Exception):
                self.searcher.close()
        self.ix = self.searcher = self.stats = self._manifest = self._index_id = None
        self.idf_cache = {}

    # -- the operations NodeIndex exposes ----------------------------------------------------
    # The folder can vanish under an open index: a node index rebuild that could not get the
    # passage index's lock within KEPT_WAIT leaves that index behind (it is derived), or a
    # person deletes `.remelink/index`. An operation that finds a file gone closes the index
    # and runs once more, which rebuilds it (never an "unexpected error" in a search, or in
    # an MCP server's `remember` while its start-up refresh runs).
    # A folder swapped in by another process's rebuild can be caught empty (Whoosh's
    # EmptyIndexError: no table of contents yet): the same, an index gone from under us.
    def refresh(self) -> RefreshStats:
        try:
            return self._refresh()
        except _gone():
            self.close()
            return self._refresh()

    def update(self, rels: list[str]) -> list[str]:
        """Re-index or drop these nodes in one commit; returns notices for unreadable files."""
        try:
            return self._update(rels)
        except _gone():
            self.close()
            return self._update(rels)

    def _refresh(self) -> RefreshStats:
        started = time.perf_counter()
        rebuilt = self.ensure_open()
        if rebuilt is not None:
            return rebuilt
        self.sync()
        diff = self.diff()
        if not diff.upserts and not diff.removed:
            if diff.restat:
                self._save_restat(diff.restat)
            return diff.stats(started)
        with self.locked():
            if self.sync():  # another process changed the index while we waited: look again
                diff = self.diff()
            total = len(self._entries())
            if len(diff.upserts) + len(diff.removed) > max(BULK_MIN, BULK_SHARE * total):
                return self.rebuild_locked(None, started)
            self._apply(diff)
        return diff.stats(started)

    def rebuild(self, reason: str | None = None) -> RefreshStats:
        started = time.perf_counter()
        with self.locked():
            return self.rebuild_locked(reason, started)

    def _update(self, rels: list[str]) -> list[str]:
        if self.ensure_open() is not None:
            return []  # a full rebuild just read every node
        with self.locked():
            self.sync()
            diff = Diff()
            entries = self._entries()
            for rel in rels:
                stat = stat_one(self.vault, rel)
                if stat is None:
                    if rel in entries:
                        diff.removed.append(rel)
                    continue
                result = self.read(rel, stat)
                if result.notice:
                    diff.notices.append(result.notice)
                diff.upserts.append((result, stat))
            if diff.upserts or diff.removed:
                self._apply(diff)
        return diff.notices

    # -- opening, syncing ---------------------------------------------------------------------
    def ensure_open(self) -> RefreshStats | None:
        """Open the index; if it is missing, of another format or unreadable, rebuild it and
        return the rebuild's stats (None when it simply opened)."""
        if self.ix is not None:
            return None
        started = time.perf_counter()
        problem = self.open()
        if problem is None:
            return None
        with self.locked():
            if self.open() is None:  # another process rebuilt it while we waited
                return None
            return self.rebuild_locked(problem, started)

    def open(self) -> str | None:
        """Try to open the live index; None on success, else why it must be rebuilt."""
        from remelink.index import engine

        what = self.WHAT
        if not os.path.lexists(self.directory):
            return f"{what} missing"
        why = own.tampered(self.vault, self.DIR, allow_subfolders=self._allowed())
        if why is not None:
            return f"{what} tampered with: {why}"
        fmt = self._read_format()
        if fmt is None:
            return f"{what} has no readable format marker"
        if fmt.get("format") != self.FORMAT:
            return f"{what} format changed ({fmt.get('format')!r} -> {self.FORMAT!r})"
        try:
            ix = self.open_index()
            searcher, stats = engine.searcher(ix)
            searcher.reader().doc_count()
        except Exception as exc:  # any failure to open derived data means: rebuild it
            return f"{what} unreadable ({brief(exc)})"
        self.ix, self.searcher, self.stats = ix, searcher, stats
        self._index_id = str(fmt.get("index_id"))
        self._manifest = None
        self.idf_cache = {}
        return None

    def _reopen_searcher(self) -> None:
        """A new searcher on the latest generation. Not `Searcher.refresh()`: in whoosh3 3.54
        it reuses segment readers by segment id, so deletions committed since (every
        `update_document`) stay invisible and merged-away segments are read again."""
        from remelink.index import engine

        old = self.searcher
        self.searcher, self.stats = engine.searcher(self.ix)
        self.idf_cache = {}
        with contextlib.suppress(Exception):
            old.close()

    def _read_format(self) -> dict[str, Any] | None:
        try:
            data = json.loads(own.read(self.vault, f"{self.DIR}/{FORMAT_FILE}",
                                       limit=1 << 16).decode("utf-8"))
        except (OSError, ValueError, RemelinkError, RecursionError):
            return None
        return data if isinstance(data, dict) else None

    def sync(self) -> bool:
        """Follow changes other processes made; True if the index changed under us."""
        fmt = self._read_format()
        if fmt is None or str(fmt.get("index_id")) != self._index_id:
            self.close()
            if self.ensure_open() is None:
                self._load_manifest()
            return True
        changed = False
        generation = self.ix.latest_generation()
        if generation != self.searcher.reader().generation():
            self._reopen_searcher()
            changed = True
        if self._manifest is None or self._manifest.generation != generation:
            self._load_manifest()
        return changed

    def _load_manifest(self) -> None:
        generation = self.ix.latest_generation()
        manifest = Manifest.load(self.vault, self.DIR)
        if manifest is None or manifest.generation != generation or \
                manifest.index_id != self._index_id:
            # Lost or stale (e.g. a process died between commit and manifest write): rebuild
            # it from the fingerprints stored in the index; stat values unknown, so the next
            # check hashes each file once.
            manifest = Manifest(index_id=str(self._index_id), generation=generation)
            for path, fp in self.stored_fingerprints(self.searcher.reader()):
                manifest.entries[path] = Entry(-1, -1, fp, True)
        self._manifest = manifest

    def _entries(self) -> dict[str, Entry]:
        if self._manifest is None:
            self._load_manifest()
        assert self._manifest is not None
        return self._manifest.entries

    # -- diffs and writes ---------------------------------------------------------------------
    def diff(self) -> Diff:
        """What changed in the digest folder since the index last saw it (reads and hashes
        only files whose stat moved; parses only files whose hash moved)."""
        entries = self._entries()
        assert self._manifest is not None
        manifest = self._manifest
        files = self.scan()
        diff = Diff()
        for rel, stat in files.items():
            entry = entries.get(rel)
            if manifest.is_clean(rel, stat.mtime_ns, stat.size):
                diff.unchanged += 1
                diff.skipped += 0 if entry is None or entry.indexed else 1
                continue
            result = self.read(rel, stat, known=entry.fingerprint if entry else None)
            if result.unchanged and entry is not None:
                diff.restat[rel] = Entry(stat.mtime_ns, stat.size, entry.fingerprint,
                                         entry.indexed)
                diff.unchanged += 1
                continue
            if result.notice:
                diff.notices.append(result.notice)
            if entry is None:
                diff.added += 1
            diff.upserts.append((result, stat))
        diff.removed = [rel for rel in entries if rel not in files]
        return diff

    def _apply(self, diff: Diff) -> None:
        """Write the diff in one commit, then the manifest. Caller holds the lock."""
        from remelink.index import engine

        assert self._manifest is not None
        try:
            writer = engine.writer(self.ix, wait=self.wait)
        except engine.LockError:
            raise self._busy() from None
        try:
            for result, _ in diff.upserts:
                if result.doc is None:
                    writer.delete_by_term("path", result.path)
                else:
                    self.write(writer, result)
            for rel in diff.removed:
                writer.delete_by_term("path", rel)
            writer.commit()
        except BaseException:
            with contextlib.suppress(Exception):
                writer.cancel()
            raise
        entries = self._manifest.entries
        for result, stat in diff.upserts:
            entries[result.path] = Entry(stat.mtime_ns, stat.size, result.fingerprint,
                                         result.doc is not None)
        for rel in diff.removed:
            entries.pop(rel, None)
        entries.update(diff.restat)
        self._reopen_searcher()
        self._manifest.generation = self.ix.latest_generation()
        self._save_manifest()

    def _save_restat(self, restat: dict[str, Entry]) -> None:
        """Record new stat values for files whose content did not change. Best effort: if
        another process holds the lock, skip (the next refresh hashes them again)."""
        from remelink.vault.fsio import file_lock

        assert self._manifest is not None
        self._manifest.entries.update(restat)
        try:
            with file_lock(self.vault / self.LOCK, wait=0.0, what="index"):
                if self.ix.latest_generation() == self._manifest.generation:
                    self._save_manifest()
        except (VaultBusy, OSError):
            pass

    def _save_manifest(self) -> None:
        assert self._manifest is not None
        try:
            self._manifest.save(self.vault, self.DIR)
        except OSError as exc:
            raise RemelinkError(f"cannot write the {self.WHAT} manifest: {exc.strerror or exc}",
                                path=self.DIR, hint="check permissions and free space") from None

    def rebuild_locked(self, reason: str | None, started: float) -> RefreshStats:
        """Build a complete index in a new folder and swap it in. Caller holds the lock. The
        folder it replaces is removed, or, when it holds anything remelink does not write
        there (a symlink, a FIFO...), moved aside as it is, with a warning."""
        import uuid

        from remelink.index import engine

        name = own.split(self.DIR)[1]
        what = self.WHAT
        self.close()
        _sweep(self.vault, name)
        files = sorted(self.scan().items())
        index_id = uuid.uuid4().hex
        tmp = f"{MARKER_DIR}/{name}.new-{os.getpid()}-{index_id[:8]}"
        warnings: list[str] = []
        try:
            built = self.build(tmp, files)
            ix = built.ix
            if ix.doc_count() != built.documents:  # never trust a silent loss
                raise RemelinkError(
                    f"the rebuilt {what} holds {ix.doc_count()} of {built.documents} "
                    "document(s)", path=self.DIR, hint="run `remelink index rebuild` again")
            stats = {rel: stat for rel, stat in files}
            manifest = Manifest(index_id=index_id, generation=ix.latest_generation())
            for f in built.files:
                stat = stats[f.path]
                manifest.entries[f.path] = Entry(stat.mtime_ns, stat.size, f.fingerprint,
                                                 f.indexed)
            manifest.save(self.vault, tmp)
            own.create(self.vault, f"{tmp}/{FORMAT_FILE}",
                       json.dumps({"format": self.FORMAT, "index_id": index_id}))
            warnings += self._swap_in(tmp, index_id)
        except own.Unsafe as exc:
            _remove_tree(self.vault, tmp)
            raise own.refusal(exc) from None
        except OSError as exc:
            _remove_tree(self.vault, tmp)
            raise RemelinkError(f"cannot write the {what}: {exc.strerror or exc}",
                                path=self.DIR, hint="check permissions and free space") from None
        except engine.LockError:
            _remove_tree(self.vault, tmp)
            raise self._busy() from None
        except BaseException:
            _remove_tree(self.vault, tmp)
            raise
        self.warned.extend(warnings)
        problem = self.open()
        if problem is not None:
            raise RemelinkError(f"the rebuilt {what} does not open: {problem}",
                                path=self.DIR, hint="delete the folder and try again")
        notices = []
        if reason and not warnings:
            notices.append(f"{reason}; rebuilt it from {built.doc_count} {self.UNITS}")
        notices.extend(built.notices)
        notices.extend(f.notice for f in built.files if f.notice)
        return RefreshStats(added=built.doc_count, skipped=len(built.files) - built.doc_count,
                            rebuilt=True, seconds=time.perf_counter() - started,
                            notices=tuple(notices), warnings=tuple(warnings))

    def _allowed(self) -> tuple[str, ...]:
        """The subfolders this index's folder may hold: Whoosh's temp folders, and the
        folders of the indexes it keeps (KEEP)."""
        return (".tmp", *(sub for sub, _ in self.KEEP))

    def _swap_in(self, tmp: str, index_id: str) -> list[str]:
        """Put the built folder `tmp` (in .remelink/) in the place of this index's folder. What
        was there is renamed first (the entry itself, never followed): deleted when it is an
        index remelink wrote, else kept aside as `<name>.tampered-*` and named in the returned
        warning. The folders of kept indexes (KEEP) move into the new folder first."""
        warnings: list[str] = []
        parent, name = own.split(self.DIR)
        tmp_name = own.split(tmp)[1]
        why = own.tampered(self.vault, self.DIR, allow_subfolders=self._allowed())
        with own.folder(self.vault, MARKER_DIR) as mdfd, \
                own.folder(self.vault, parent, create=True) as dfd:
            old = None
            if why is not None:
                # Aside into .remelink/ itself: a folder moved aside inside another index's
                # folder would make that index look tampered with in turn.
                aside = own.move_aside(self.vault, self.DIR, into=MARKER_DIR)
                warnings.append(f"{self.DIR} was tampered with ({why}); moved it aside to "
                                f"{aside} (never followed) and rebuilt the {self.WHAT}")
            elif os.path.lexists(self.directory):
                with self._kept_locked() as held:
                    for sub in held:
                        os.rename(f"{name}/{sub}", f"{tmp_name}/{sub}", src_dir_fd=dfd,
                                  dst_dir_fd=mdfd)
                    old = f"{name}.old-{os.getpid()}-{index_id[:8]}"
                    os.rename(name, old, src_dir_fd=dfd, dst_dir_fd=mdfd)
                    os.rename(tmp_name, name, src_dir_fd=mdfd, dst_dir_fd=dfd)
            if old is None:
                os.rename(tmp_name, name, src_dir_fd=mdfd, dst_dir_fd=dfd)
        if old is not None:
            _remove_tree(self.vault, f"{MARKER_DIR}/{old}")
        return warnings

    @contextlib.contextmanager
    def _kept_locked(self) -> Iterator[list[str]]:
        """Hold the locks of the kept indexes (KEEP) present in the live folder whose lock can
        be had within KEPT_WAIT seconds; yields their folder names. One whose writer is busy
        (a long rebuild of its own) is left behind: it is derived, and rebuilds itself when it
        finds itself missing; this rebuild never fails or waits long for it."""
        from remelink.vault.fsio import file_lock

        held: list[str] = []
        with contextlib.ExitStack() as stack:
            for sub, lock in self.KEEP:
                here = self.directory / sub
                if not here.is_dir() or here.is_symlink():
                    continue
                try:
                    stack.enter_context(file_lock(self.vault / lock,
                                                  wait=min(self.wait, KEPT_WAIT), what="index"))
                except (VaultBusy, OSError):
                    continue
                held.append(sub)
            yield held

    # -- locking ------------------------------------------------------------------------------
    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the index lock (re-entrant within this object: flock locks taken through two
        descriptors of one process would block each other)."""
        from remelink.vault.fsio import file_lock

        if self._lock_depth:
            self._lock_depth += 1
            try:
                yield
            finally:
                self._lock_depth -= 1
            return
        try:
            with file_lock(self.vault / self.LOCK, wait=self.wait, what="index"):
                self._lock_depth = 1
                try:
                    yield
                finally:
                    self._lock_depth = 0
        except VaultBusy:
            raise self._busy() from None

    def _busy(self) -> VaultBusy:
        return VaultBusy(f"index busy: another process is updating {self.DIR} "
                         f"(waited {self.wait:g} s)", hint="try again when it has finished")


def brief(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:160]}" if text else type(exc).__name__


def _remove_tree(vault: Path, rel: str) -> None:
    """Delete the folder `rel` that remelink made (a link there is removed, never followed;
    shutil.rmtree never follows the links inside)."""
    import shutil
    import stat as st

    path = vault / rel
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return
    if st.S_ISDIR(mode):
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            os.unlink(path)


def _sweep(vault: Path, name: str = "index") -> None:
    """Remove folders left by rebuilds that died (only called under the index lock)."""
    try:
        with own.folder(vault, MARKER_DIR) as dfd:
            names = os.listdir(dfd)
    except (OSError, RemelinkError):
        return
    for entry in names:
        if entry.startswith((f"{name}.new-", f"{name}.old-")):
            _remove_tree(vault, f"{MARKER_DIR}/{entry}")


def _gone() -> tuple[type[BaseException], ...]:
    """The errors of an index folder gone (or emptied) under an open index."""
    from whoosh.index import EmptyIndexError

    return (FileNotFoundError, EmptyIndexError)
