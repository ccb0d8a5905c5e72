"""`remelink search`: passage-level BM25 over every note of the vault, with link expansion
(SPEC §5.1).

The passage index is derived data under `.remelink/index/passages/`, kept by the node index's
machinery (`remelink.index.store.IndexStore`: the manifest, incremental refresh of only the
notes whose bytes changed, the lock, crash-safe rebuilds into a fresh folder, the vault
boundary reader); `PassageStore` only says which files it covers and what their documents are.
Scoring is node_search's BM25F over live statistics; the query side weighs a question's
content words (`remelink.search.query`). A note gives at most one hit (its best passage), so
five hits are five notes.
"""

from __future__ import annotations

import functools
import math
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar, cast

from remelink.config import Settings
from remelink.errors import UsageError
from remelink.index.build import Built
from remelink.index.core import COMMON_SHARE, MAX_QUERY_CHARS, MIN_QUERY_TERMS, bm25_idf
from remelink.index.nodes import FileStat
from remelink.index.store import (
    DEFAULT_WAIT,
    PASSAGES_DIR,
    PASSAGES_LOCK,
    IndexStore,
    Readout,
    RefreshStats,
    brief,
)
from remelink.search import reading
from remelink.search.query import query_terms

_F = TypeVar("_F", bound=Callable[..., Any])

DEFAULT_LIMIT = 5
MAX_LIMIT = 50
FOLDERS = ("daily", "resource", "digest")
MAX_QUERY_TERMS = 32
POSTINGS_BUDGET = 6000
FETCH = 8  # passages fetched per wanted hit before collapsing to one per note
FORMAT = "remelink-passage-index/2 analyzer/1 weights/2,1,2,1 window/700 weblinks"


class PassageStore(IndexStore):
    DIR = PASSAGES_DIR
    LOCK = PASSAGES_LOCK
    FORMAT = FORMAT
    WHAT = "passage index"
    UNITS = "note(s)"
    KEEP = ()

    def scan(self) -> dict[str, FileStat]:
        return reading.scan(self.vault, self.settings)

    def read(self, rel: str, stat: FileStat, known: str | None = None) -> Readout:
        return reading.read(rel, stat, self.settings, known=known)

    def open_index(self) -> Any:
        from remelink.search import engine

        return engine.open_index(self.vault, self.DIR)

    def stored_fingerprints(self, reader: Any) -> Iterator[tuple[str, str]]:
        for docnum in range(reader.doc_count_all()):
            if reader.is_deleted(docnum):
                continue
            fields = reader.stored_fields(docnum)
            if fields.get("kind") == "note":
                yield str(fields.get("path", "")), str(fields.get("fingerprint", ""))

    def write(self, writer: Any, result: Readout) -> None:
        writer.delete_by_term("path", result.path)
        for doc in cast(Any, result.doc).docs:
            writer.add_document(**doc)

    def build(self, folder: str, files: list[tuple[str, FileStat]]) -> Built:
        from remelink.search import engine

        return engine.build(self.vault, folder, files, self.read, wait=self.wait)


@dataclass(frozen=True)
class Hit:
    """One passage found: where it is and how well it matched (the text is read by
    `remelink.search.expand`, from the file)."""

    path: str
    start: int
    end: int
    score: float
    heading: str
    folder: str
    day: str | None


@dataclass(frozen=True)
class NoteInfo:
    path: str
    name: str
    description: str
    folder: str
    links: tuple[tuple[str, str | None], ...]  # (target as written, anchor)


def _synchronized(method: _F) -> _F:
    @functools.wraps(method)
    def locked(self: PassageIndex, *args: Any, **kwargs: Any) -> Any:
        with self._mutex:
            return method(self, *args, **kwargs)

    return cast(_F, locked)


@dataclass(frozen=True)
class Filters:
    since: str | None = None
    until: str | None = None
    folder: str | None = None


def check_date(value: str | None, what: str) -> str | None:
    if value is None or not str(value).strip():
        return None
    text = str(value).strip()
    try:
        return date.fromisoformat(text).isoformat()
    except ValueError:
        raise UsageError(f"{what} must be a date YYYY-MM-DD, got {text!r}") from None


def check_filters(since: str | None, until: str | None, folder: str | None) -> Filters:
    s, u = check_date(since, "since"), check_date(until, "until")
    if s and u and s > u:
        raise UsageError(f"since ({s}) is after until ({u})")
    if folder is not None and folder not in FOLDERS:
        raise UsageError(f"in must be one of {', '.join(FOLDERS)}, got {folder!r}")
    return Filters(s, u, folder)


class PassageIndex:
    """The passage index of one vault. Open it once and keep it (the MCP server does): each
    search first brings the index up to date with the notes (one walk, then only the files
    whose stat moved are read). Thread-safe: one lock per index serialises every call."""

    def __init__(self, vault: Path, settings: Settings, *, wait: float | None = None,
                 recheck: float = 0.0) -> None:
        self.vault = Path(vault)
        self.settings = settings
        self.wait = DEFAULT_WAIT if wait is None else wait
        # A search checks the notes for changes when the last check is at least this old
        # (seconds; 0: every search). A long-lived process (the MCP server) sets about a
        # second: the check walks every note, which on a large vault costs more than the
        # search, and what it writes itself it indexes at once (`update`).
        self.recheck = recheck
        self.notices: list[str] = []
        self._store = PassageStore(self.vault, settings, self.wait)
        self._mutex = threading.RLock()
        self._checked = -math.inf

    def __enter__(self) -> PassageIndex:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    @_synchronized
    def close(self) -> None:
        self._store.close()

    @_synchronized
    def take_warnings(self) -> list[str]:
        """The warnings of the rebuilds since the last call (a tampered folder moved aside
        and rebuilt: one line each, for a person), and forget them."""
        out = list(self._store.warned)
        self._store.warned.clear()
        return out

    @_synchronized
    def refresh(self) -> RefreshStats:
        stats = self._store.refresh()
        self._checked = time.monotonic()
        return stats

    @_synchronized
    def update(self, paths: list[str]) -> None:
        """Re-index these notes now (or drop them if they are gone), without a walk."""
        if paths:
            self.notices.extend(self._store.update(list(dict.fromkeys(paths))))

    @_synchronized
    def rebuild(self) -> RefreshStats:
        return self._store.rebuild()

    @_synchronized
    def search(self, query: str, *, limit: int = DEFAULT_LIMIT, since: str | None = None,
               until: str | None = None, folder: str | None = None,
               refresh: bool = True) -> list[Hit]:
        """The best passage of each of the `limit` best notes for plain-text `query`."""
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
            raise UsageError(f"limit must be an integer from 1 to {MAX_LIMIT}, got {limit!r}")
        filters = check_filters(since, until, folder)
        if not isinstance(query, str) or not query.strip():
            return []
        if refresh and time.monotonic() - self._checked >= self.recheck:
            self.notices.extend(self.refresh().notices)
        else:
            self._store.ensure_open()
        from remelink.index import engine

        try:
            return self._search(query, limit, filters)
        except engine.READ_ERRORS as exc:  # derived data: a damaged index is rebuilt
            stats = self._store.rebuild(f"passage index unreadable during search ({brief(exc)})")
            self.notices.extend(stats.notices)
            return self._search(query, limit, filters)

    def select_terms(self, query: str) -> list[tuple[str, float]]:
        """(term, query weight) of the query's most informative terms, best first."""
        stats = self._store.stats
        n = stats.n
        found = []
        for qt in query_terms(query[:MAX_QUERY_CHARS]):
            df = stats.df("text", qt.term)
            if df:
                found.append((df, qt))
        content = [f for f in found if not f[1].function]
        pool = content or found
        rare = [f for f in pool if f[0] <= COMMON_SHARE * n]
        pool = rare or pool
        weighted = [(df, qt.term, (1.0 + math.log(qt.count)) * qt.factor)
                    for df, qt in pool]
        weighted.sort(key=lambda f: (-f[2] * bm25_idf(n, f[0]), f[1]))
        chosen: list[tuple[str, float]] = []
        spent = 0
        for df, term, weight in weighted:
            if spent + df > POSTINGS_BUDGET and len(chosen) >= MIN_QUERY_TERMS:
                continue
            chosen.append((term, weight))
            spent += df
            if len(chosen) >= MAX_QUERY_TERMS:
                break
        return chosen

    def _filter(self, filters: Filters) -> Any:
        from whoosh.query.compound import And
        from whoosh.query.ranges import TermRange
        from whoosh.query.terms import Term

        parts: list[Any] = []
        if filters.folder:
            parts.append(Term("folder", filters.folder))
        if filters.since or filters.until:
            parts.append(TermRange("day", filters.since, filters.until))
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else And(parts)

    def _search(self, query: str, limit: int, filters: Filters) -> list[Hit]:
        from whoosh.query.terms import Term

        from remelink.index import engine

        chosen = self.select_terms(query)
        if not chosen:
            return []
        q = engine.or_query([Term("text", t, boost=w) for t, w in chosen])
        flt = self._filter(filters)
        searcher = self._store.searcher
        fetch = limit * FETCH
        while True:
            results = searcher.search(q, limit=fetch, filter=flt, optimize=False)
            hits: list[Hit] = []
            seen: set[str] = set()
            for r in results:
                f = r.fields()
                path = str(f.get("path", ""))
                if path in seen:
                    continue
                seen.add(path)
                hits.append(Hit(path=path, start=int(f.get("start") or 1),
                                end=int(f.get("end") or 1), score=float(r.score),
                                heading=str(f.get("heading") or ""),
                                folder=str(f.get("folder") or ""), day=f.get("day")))
                if len(hits) == limit:
                    return hits
            if len(results) < fetch or fetch >= limit * 64:
                return hits
            fetch *= 4

    # -- the notes behind the hits, for link expansion -------------------------------------
    @_synchronized
    def note(self, rel: str) -> NoteInfo | None:
        """The indexed note at exactly `rel`, or None."""
        from whoosh.query.terms import Term

        self._store.ensure_open()
        found = self._notes(Term("path", rel), 1)  # its passages and its note document
        return found[0] if found else None

    @_synchronized
    def resolve(self, target: str) -> NoteInfo | None:
        """The note a link target points at (SPEC §3.2: a literal path in `path` mode; also
        a path without `.md` or a unique name in `obsidian` mode), or None."""
        from whoosh.query.terms import Term

        self._store.ensure_open()
        keys = reading.link_keys(target)
        if not keys:
            return None
        exact = self._notes(Term("path", keys[0]), 1)
        if exact or self.settings.resolution != "obsidian":
            return exact[0] if exact else None
        for key in keys:
            found = self._notes(Term("key", key), 2)  # only note documents have keys
            if len(found) == 1:
                return found[0]
            if len(found) > 1:
                return None  # ambiguous: never a silent pick
        return None

    @_synchronized
    def backlinks(self, rel: str, limit: int) -> tuple[list[NoteInfo], int]:
        """Up to `limit` notes linking to `rel` (digest nodes first), and how many there are."""
        from whoosh.query.compound import Or
        from whoosh.query.terms import Term

        self._store.ensure_open()
        keys = [rel] if self.settings.resolution != "obsidian" else reading.note_keys(rel)
        q = Or([Term("links_to", k) for k in keys])
        found = [n for n in self._notes(q, None) if n.path != rel]
        found.sort(key=lambda n: (n.folder != "digest", n.path))
        return found[:limit], len(found)

    def _notes(self, q: Any, limit: int | None) -> list[NoteInfo]:
        searcher = self._store.searcher
        out = []
        for docnum in searcher.docs_for_query(q):
            f = searcher.stored_fields(docnum)
            if f.get("kind") != "note":
                continue
            links = tuple((str(t), None if a is None else str(a))
                          for t, a in (f.get("links") or ()))
            path = str(f.get("path", ""))
            out.append(NoteInfo(path, str(f.get("name") or ""), str(f.get("description") or ""),
                                reading.folder_of(path, self.settings) or "", links))
            if limit is not None and len(out) >= limit:
                break
        return out
