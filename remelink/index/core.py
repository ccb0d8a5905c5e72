"""NodeIndex: digest-only node recall over a Whoosh index (SPEC §5); the on-disk side
(opening, freshness, locking, rebuilds) is `remelink.index.store`.

Queries are plain text, never query syntax: the query is analyzed with the index analyzer and
becomes an OR of term queries scored by BM25F. Term selection keeps long queries (a unit
summary, a whole note) from being the slow case: terms in more than COMMON_SHARE of the nodes
are dropped when rarer ones exist; the rest are ranked by (1 + ln qtf) x IDF; the first
MIN_QUERY_TERMS are always kept, later ones only while their postings fit POSTINGS_BUDGET, up
to MAX_QUERY_TERMS. A query's cost in Whoosh is proportional to the postings it scores, so the
budget bounds it; common terms are the expensive ones and move the ranking least. Measured
(bench/search_recall.py --ablation, bench/bench_search.py): on the hidden-link vaults recall@10
rises from 0.50 to 0.70 (SilverBullet) going from 16 to 96 terms and the budget changes nothing
there; on the 10,000-node vault the budget halves query CPU at no loss of known-item recall.
"""

from __future__ import annotations

import functools
import math
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar, cast

from remelink.config import Settings
from remelink.errors import UsageError
from remelink.index import analysis
from remelink.index.nodes import is_node_path
from remelink.index.store import (
    DEFAULT_WAIT,
    FORMAT_FILE,
    INDEX_DIR,
    LOCK_FILE,
    IndexStore,
    RefreshStats,
    brief,
)
from remelink.vault.paths import BUCKETS, nfc

if TYPE_CHECKING:  # Whoosh is imported only when an index is opened
    from remelink.index.engine import LiveStats

__all__ = ["DEFAULT_WAIT", "FORMAT_FILE", "INDEX_DIR", "LOCK_FILE", "Hit", "NodeIndex",
           "RefreshStats", "node_search"]

_F = TypeVar("_F", bound=Callable[..., Any])
MAX_LIMIT = 100
MAX_QUERY_CHARS = 100_000  # analysis is linear; past this a query is not a query
MAX_QUERY_TERMS = 96
COMMON_SHARE = 0.5
POSTINGS_BUDGET = 2500
MIN_QUERY_TERMS = 3
# Whoosh's block-quality skipping: with the array union matcher it only adds work (the same
# hits, 35 % more CPU per query on the 10,000-node vault), so it is off.
OPTIMIZE = False


@dataclass(frozen=True)
class Hit:
    path: str  # workspace-relative, e.g. digest/wiki/idempotency-keys.md
    score: float
    name: str
    description: str
    bucket: str  # procedure | personal | wiki
    memory_tags: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "score": round(self.score, 4), "name": self.name,
                "description": self.description, "bucket": self.bucket,
                "memory_tags": list(self.memory_tags)}



def _synchronized(method: _F) -> _F:
    """Run the method holding the index's own lock (see NodeIndex)."""

    @functools.wraps(method)
    def locked(self: NodeIndex, *args: Any, **kwargs: Any) -> Any:
        with self._mutex:
            return method(self, *args, **kwargs)

    return cast(_F, locked)


class NodeIndex:
    """The node index of one vault. Open it once and keep it: searches reuse the open
    searcher, and `update()` after each committed node keeps it current without a scan.

    Thread-safe: one lock per index serialises every call. A Whoosh searcher cannot be shared
    by running searches (its segment files are read by seek + read on shared file objects) and
    an update replaces it, so the alternative is a searcher per thread; but searches are pure
    Python, so under the GIL threads would not run them in parallel anyway, and the lock costs
    a single thread nothing measurable (bench/bench_search.py, "lock")."""

    def __init__(self, vault: Path, settings: Settings, *, wait: float | None = None) -> None:
        self.vault = Path(vault)
        self.settings = settings
        self.wait = DEFAULT_WAIT if wait is None else wait
        # Notices that update() and search() cannot return: unreadable files, rebuilds.
        self.notices: list[str] = []
        self.warnings: list[str] = []  # a tampered index moved aside during a search or update
        self._store = IndexStore(self.vault, settings, self.wait)
        self._mutex = threading.RLock()

    def __enter__(self) -> NodeIndex:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    @_synchronized
    def close(self) -> None:
        self._store.close()

    @_synchronized
    def refresh(self) -> RefreshStats:
        """Bring the index up to date with the digest folder (incrementally)."""
        return self._store.refresh()

    @_synchronized
    def rebuild(self) -> RefreshStats:
        """Index every digest node from scratch (into a fresh directory, then swapped in)."""
        return self._store.rebuild()

    @_synchronized
    def update(self, paths: Iterable[str]) -> None:
        """Re-index these nodes now, or drop them if they are gone. Paths outside the digest
        folder are ignored. Notices for unreadable files are appended to `self.notices`."""
        rels: dict[str, None] = {}
        for raw in paths:
            rel = nfc(str(raw).strip().removeprefix("./"))
            if is_node_path(rel, self._store.digest):
                rels[rel] = None
        if rels:
            self.notices.extend(self._store.update(list(rels)))

    @_synchronized
    def search(self, query: str, *, limit: int = 20, bucket: str | None = None,
               refresh: bool = True) -> list[Hit]:
        """The best `limit` nodes for plain-text `query`, best first ([] for a blank query)."""
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
            raise UsageError(f"limit must be an integer from 1 to {MAX_LIMIT}, got {limit!r}")
        if bucket is not None and bucket not in BUCKETS:
            raise UsageError(f"bucket must be one of {', '.join(BUCKETS)}, got {bucket!r}")
        if not isinstance(query, str) or not query.strip():
            return []
        if refresh:
            self.refresh()
        else:
            self._store.ensure_open()
        from remelink.index import engine

        try:
            return self._search(query, limit, bucket)
        except engine.READ_ERRORS as exc:  # the index is derived: a damaged one is rebuilt
            stats = self._store.rebuild(f"node index unreadable during search ({brief(exc)})")
            self.notices.extend(stats.notices)
            self.warnings.extend(stats.warnings)
            return self._search(query, limit, bucket)

    def analyze(self, text: str) -> list[str]:
        """The query-form terms of `text`, exactly as a search would analyze it."""
        return analysis.terms(text, query=True)

    @_synchronized
    def doc_frequency(self, term: str) -> int:
        """How many nodes contain the analyzed `term`."""
        return self._stats().df("text", analysis.normalize(term))

    @_synchronized
    def idf(self, term: str) -> float:
        """BM25 IDF of an analyzed term (as returned by `analyze`); unseen terms get the
        maximum. Cached until the index changes."""
        value = self._store.idf_cache.get(term)
        if value is None:
            stats = self._stats()
            value = bm25_idf(stats.n, stats.df("text", analysis.normalize(term)))
            self._store.idf_cache[term] = value
        return value

    @_synchronized
    def doc_count(self) -> int:
        return int(self._reader().doc_count())

    @_synchronized
    def select_terms(self, query: str) -> list[tuple[str, int]]:
        """(term, query frequency) of the query's most informative terms, best first (see
        the module docstring for the rules)."""
        counts = Counter(analysis.iter_terms(query[:MAX_QUERY_CHARS], query=True))
        stats = self._stats()
        n = stats.n
        found = []
        for term, qtf in counts.items():
            df = stats.df("text", term)
            if df:
                found.append((df, term, qtf))
        rare = [f for f in found if f[0] <= COMMON_SHARE * n]
        pool = rare or found
        pool.sort(key=lambda f: (-(1.0 + math.log(f[2])) * bm25_idf(n, f[0]), f[1]))
        chosen: list[tuple[str, int]] = []
        spent = 0
        for df, term, qtf in pool:
            if spent + df > POSTINGS_BUDGET and len(chosen) >= MIN_QUERY_TERMS:
                continue
            chosen.append((term, qtf))
            spent += df
            if len(chosen) >= MAX_QUERY_TERMS:
                break
        return chosen

    def _reader(self) -> Any:
        self._store.ensure_open()
        return self._store.searcher.reader()

    def _stats(self) -> LiveStats:
        self._store.ensure_open()
        stats: LiveStats = self._store.stats
        return stats

    def _search(self, query: str, limit: int, bucket: str | None) -> list[Hit]:
        from remelink.index import engine

        chosen = self.select_terms(query)
        if not chosen:
            return []
        stats = self._stats()
        q = engine.or_query([
            clause for t, qtf in chosen for clause in engine.term_queries(
                t, 1.0 + math.log(qtf), in_name=stats.df("name", t) > 0)])
        flt = engine.bucket_filter(bucket) if bucket else None
        results = self._store.searcher.search(q, limit=limit, filter=flt, optimize=OPTIMIZE)
        hits: list[Hit] = []
        seen: set[str] = set()
        for hit in results:
            doc = engine.stored(hit.fields())
            if doc.path in seen:
                continue
            seen.add(doc.path)
            hits.append(Hit(path=doc.path, score=float(hit.score), name=doc.name,
                            description=doc.description, bucket=doc.bucket,
                            memory_tags=doc.memory_tags))
        return hits


def bm25_idf(n_docs: int, df: int) -> float:
    """Robertson-Sparck Jones IDF with the +1 that keeps it positive."""
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


def node_search(vault: Path, settings: Settings, query: str, *, limit: int = 20,
                bucket: str | None = None) -> list[Hit]:
    """Open the index, bring it up to date, search, close."""
    with NodeIndex(vault, settings) as index:
        return index.search(query, limit=limit, bucket=bucket)
