"""The Whoosh side of the node index: schema, analyzer, writers and the query (SPEC §5).

Imported only when an index is opened (Whoosh costs ~40 ms to import), never by `remelink.lint`
or the CLI's start-up.

Fork: whoosh3 3.54.0 (import name `whoosh`): clean under `-W error`, no dependencies, the 2.7
on-disk format, maintained; whoosh-reloaded 2.7.5 is the drop-in fallback (see
/work/shared/reference/dependencies.md §1.6).

Two indexed fields.
- `text`: `name`, `description`, `memory_tags` and the body analyzed together, each token
  carrying its section's weight (name 3, description 2, tags 2, body 1), so a term's weight in a
  node is the weighted sum of its occurrences: BM25F in its original form (Robertson, Zaragoza &
  Taylor 2004), saturated once per term rather than once per field. On the 10,000-node benchmark
  vault a 10-term query over four separate Whoosh fields (40 term matchers) took 8x longer
  than over one combined field, and the index was 27 % larger.
- `name` again on its own, queried with NAME_BOOST on top: saturation caps what a name match can
  add inside `text`, and on the hidden-link benchmark (bench/search_recall.py) the separate
  name clause lifted recall@10 from 0.49 to 0.70 (SilverBullet) and 0.61 to 0.79 (Foam).
`path` and `bucket` are IDs; `description`, `memory_tags` and the fingerprint are only stored.
No positions are indexed: queries are OR-of-terms.
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from whoosh import index as windex
from whoosh import scoring
from whoosh.analysis.acore import Token
from whoosh.analysis.tokenizers import Tokenizer
from whoosh.codec import base as _codec_base
from whoosh.fields import ID, STORED, TEXT, Schema
from whoosh.query.compound import Or
from whoosh.query.terms import Term
from whoosh.util import IDCHARS

from remelink.index.analysis import iter_terms
from remelink.index.nodes import NodeDoc

SEP = "\x1f"  # separates the weighted sections of the `text` value; never in analyzed text
WEIGHTS = (3.0, 2.0, 2.0, 1.0)  # name, description, memory_tags, body
# Per incremental writer: Whoosh's estimate of the postings held in memory before sorted runs
# spill to disk (it bounds the writer's memory; spilling pickles every posting twice). Full
# builds do not use Whoosh's posting pool (remelink.index.segment); a refresh big enough to
# reach this rebuilds instead (store.BULK_SHARE).
LIMITMB = 256
K1, B = 1.2, 0.75
NAME_BOOST = 5.0  # a match in the name field, on top of its weight inside `text`


class NodeAnalyzer(Tokenizer):
    """The index analyzer: `remelink.index.analysis` terms, weighted by section.

    Index values are `name SEP description SEP tags SEP body`; query values are plain text
    (any SEP in them is just a separator).
    """

    def __init__(self, weights: tuple[float, ...] = WEIGHTS) -> None:
        self.weights = weights

    def __call__(self, value: str, positions: bool = False, chars: bool = False,
                 keeporiginal: bool = False, removestops: bool = True, start_pos: int = 0,
                 start_char: int = 0, tokenize: bool = True, mode: str = "",
                 **kwargs: Any) -> Iterator[Token]:
        token = Token(positions, chars, removestops=removestops, mode=mode, **kwargs)
        query = mode == "query"
        parts = [value] if query else value.split(SEP)
        weights = self.weights
        pos = start_pos
        for i, part in enumerate(parts):
            weight = weights[i] if i < len(weights) else 1.0
            for term in iter_terms(part, query=query):
                token.text = term
                token.boost = weight
                token.stopped = False
                if keeporiginal:
                    token.original = term  # type: ignore[attr-defined]
                if positions:
                    token.pos = pos
                    pos += 1
                if chars:
                    token.startchar = token.endchar = start_char
                yield token


def schema() -> Schema:
    return Schema(
        path=ID(stored=True, unique=True),
        bucket=ID(stored=True),
        name=TEXT(analyzer=NodeAnalyzer((1.0,)), phrase=False, stored=True),
        description=STORED(),
        memory_tags=STORED(),
        fingerprint=STORED(),
        text=TEXT(analyzer=NodeAnalyzer(), phrase=False),
    )


SCHEMA_NAMES = frozenset(schema().names())


def fields_of(doc: NodeDoc) -> dict[str, Any]:
    text = SEP.join((doc.name.replace(SEP, " "), doc.description.replace(SEP, " "),
                     " ".join(doc.memory_tags).replace(SEP, " "), doc.body.replace(SEP, " ")))
    return {"path": doc.path, "bucket": doc.bucket, "name": doc.name,
            "description": doc.description, "memory_tags": list(doc.memory_tags),
            "fingerprint": doc.fingerprint, "text": text}


def create(root: Path, rel: str) -> Any:
    """A new index in the folder `root/rel` (created), through the vault boundary."""
    from remelink.index.storage import SafeStorage

    return SafeStorage(root, rel).create().create_index(schema())  # type: ignore[no-untyped-call]


def open_index(root: Path, rel: str) -> Any:
    """Open and sanity-check the index in `root/rel`; any failure means 'rebuild it'."""
    from remelink.index.storage import SafeStorage

    ix = SafeStorage(root, rel).open_index()  # type: ignore[no-untyped-call]
    names = set(ix.schema.names())
    if names != SCHEMA_NAMES:
        raise ValueError(f"unexpected fields {sorted(names ^ SCHEMA_NAMES)}")
    return ix


# Terms in at most this many nodes get their live document frequency counted exactly when the
# index holds deleted documents (cheap: a short posting list); longer lists keep Whoosh's count,
# which includes deleted documents until their segment is merged (a small relative error).
EXACT_DF_LIMIT = 256
_SEGMENT_POSTINGS: dict[tuple[str, str, str], tuple[int, ...]] = {}
_SEGMENT_POSTINGS_LIMIT = 500_000


def _private_segment_id(cls: type, size: int = 16) -> str:
    return "".join(secrets.choice(IDCHARS) for _ in range(size))


# A segment's id keys the per-segment tables below across commits and across the indexes of one
# process. Whoosh draws it from the global `random`, which anything in the process may seed
# (Hypothesis seeds it to 0 for every example): two vaults indexed after the same seed had the
# same segment ids, and one's cached field lengths and postings scored the other's documents.
# Drawn from the system's source instead, every segment is its own.
_codec_base.Segment._random_id = classmethod(_private_segment_id)  # type: ignore[method-assign,assignment]


def _segment_id(leaf: Any) -> str:
    segment = leaf.segment() if callable(getattr(leaf, "segment", None)) else None
    if segment is None:
        return f"reader-{id(leaf)}"
    return f"{segment.index_name()}-{segment.segment_id()}"


class LiveStats:
    """Collection statistics without the deleted documents that updates leave behind.

    Whoosh counts a replaced node's old version in document frequencies, document counts and
    field lengths until its segment is merged, so the same vault would rank differently
    depending on its update history (a node updated three times would quadruple the document
    frequency of its rarest terms). These statistics follow the live documents.
    """

    def __init__(self, reader: Any) -> None:
        self.reader = reader
        self.n = max(int(reader.doc_count()), 1)
        self.deleted: list[int] = []
        # (leaf reader, its segment id, its deleted local doc numbers) for leaves with deletions
        self._leaves: list[tuple[Any, str, frozenset[int]]] = []
        if reader.has_deletions():
            for leaf, base in reader.leaf_readers():
                gone = frozenset(getattr(leaf, "deleted_docs_set", ()) or ())
                self.deleted += [base + d for d in gone]
                if gone:
                    self._leaves.append((leaf, _segment_id(leaf), gone))
        self._df: dict[tuple[str, str], int] = {}
        self._avg: dict[str, float] = {}

    def df(self, fieldname: str, term: str) -> int:
        key = (fieldname, term)
        value = self._df.get(key)
        if value is None:
            value = int(self.reader.doc_frequency(fieldname, term))
            if value and self._leaves and value <= EXACT_DF_LIMIT:
                value -= sum(self._deleted_postings(leaf, segid, gone, fieldname, term)
                             for leaf, segid, gone in self._leaves)
            self._df[key] = value
        return value

    @staticmethod
    def _deleted_postings(leaf: Any, segid: str, gone: frozenset[int], fieldname: str,
                          term: str) -> int:
        """How many of the term's postings in this segment belong to deleted documents.

        A segment's postings never change once written (only its deletion set grows), so its
        posting ids are cached by segment id across commits: after each one-node update only
        the new, one-document segment is read."""
        key = (segid, fieldname, term)
        ids = _SEGMENT_POSTINGS.get(key)
        if ids is None:
            if not leaf.doc_frequency(fieldname, term):
                ids = ()
            else:
                try:  # the raw postings (SegmentReader.postings filters the deletions out)
                    raw = leaf._text_to_bytes(fieldname, term)
                    fmt = leaf.schema[fieldname].format
                    ids = tuple(leaf._terms.matcher(fieldname, raw, fmt).all_ids())
                except AttributeError:  # another Whoosh layout: count the slow way, uncached
                    live = sum(1 for _ in leaf.postings(fieldname, term).all_ids())
                    return int(leaf.doc_frequency(fieldname, term)) - live
            if len(_SEGMENT_POSTINGS) >= _SEGMENT_POSTINGS_LIMIT:
                _SEGMENT_POSTINGS.clear()
            _SEGMENT_POSTINGS[key] = ids
        return sum(1 for i in ids if i in gone)

    def avg_length(self, fieldname: str) -> float:
        """Average live field length. Whoosh keeps exact totals but per-document lengths only
        as one-byte approximations, so with deletions this is approximate (0.9 % off in a
        six-node test vault; summing every live length instead cost 25 ms per field per
        searcher on 10,000 nodes, i.e. on every update)."""
        value = self._avg.get(fieldname)
        if value is None:
            total = self.reader.field_length(fieldname)
            for docnum in self.deleted:
                total -= self.reader.doc_field_length(docnum, fieldname) or 0
            value = max(total, 1) / self.n
            self._avg[fieldname] = value
        return value


# Per-document field lengths of a segment, decoded once: a segment never changes after it is
# written, so the table is good for every later searcher. Scoring asked Whoosh's column reader
# for each posting (a seek, a read and a struct unpack); in `dream run` on a 10,000-node vault
# that was about a tenth of the run.
_SEGMENT_LENGTHS: dict[tuple[str, str], tuple[int | None, ...]] = {}
_SEGMENT_LENGTHS_LIMIT = 64


def _length_table(reader: Any, fieldname: str) -> Any:
    """`docnum -> length` for one segment's field, as Whoosh's `doc_field_length` gives it
    (1 when the field has no length column), or None when the reader is not a plain
    segment."""
    from whoosh.codec.whoosh3 import LENGTHS_COLUMN, _lenfield
    from whoosh.util.numeric import byte_to_length

    perdoc = getattr(reader, "_perdoc", None)
    segment = reader.segment() if callable(getattr(reader, "segment", None)) else None
    if segment is None or perdoc is None or not hasattr(perdoc, "_cached_reader"):
        return None
    key = (_segment_id(reader), fieldname)
    table = _SEGMENT_LENGTHS.get(key)
    if table is None:
        column = perdoc._cached_reader(_lenfield(fieldname), LENGTHS_COLUMN)  # type: ignore[no-untyped-call]
        if column is None:
            return lambda _docnum: 1
        table = tuple(byte_to_length(b) if b else None for b in column.load())
        if len(_SEGMENT_LENGTHS) >= _SEGMENT_LENGTHS_LIMIT:
            _SEGMENT_LENGTHS.clear()
        _SEGMENT_LENGTHS[key] = table
    return table.__getitem__


class _LiveScorer(scoring.BM25FScorer):
    def __init__(self, searcher: Any, fieldname: str, text: str, b: float, k1: float,
                 stats: LiveStats, qf: int = 1) -> None:
        self.idf = searcher.get_parent().idf(fieldname, text)
        self.avgfl = stats.avg_length(fieldname)
        self.B = b
        self.K1 = k1
        self.qf = qf
        self.setup(searcher, fieldname, text)
        if searcher.schema[fieldname].scorable:
            table = _length_table(searcher.reader(), fieldname)
            if table is not None:
                self.dfl = table


class LiveBM25F(scoring.BM25F):
    """Whoosh's BM25F (same IDF formula, B and K1) over `LiveStats`."""

    def __init__(self, stats: LiveStats) -> None:
        super().__init__(B=B, K1=K1)
        self.stats = stats

    def idf(self, searcher: Any, fieldname: str, text: str) -> float:
        return math.log(self.stats.n / (self.stats.df(fieldname, text) + 1)) + 1

    def scorer(self, searcher: Any, fieldname: str, text: str, qf: int = 1) -> Any:
        return _LiveScorer(searcher, fieldname, text, self.B, self.K1, self.stats, qf=qf)


def searcher(ix: Any) -> tuple[Any, LiveStats]:
    """A searcher on the latest commit, and the live statistics it scores with."""
    from whoosh.searching import Searcher

    reader = ix.reader()
    stats = LiveStats(reader)
    return Searcher(reader, fromindex=ix, weighting=LiveBM25F(stats)), stats


LockError = windex.LockError


def _read_errors() -> tuple[type[BaseException], ...]:
    import pickle
    import struct
    import zlib

    from whoosh.filedb.filestore import StorageError
    from whoosh.filedb.filetables import FileFormatError
    from whoosh.reading import CorruptIndexError

    return (CorruptIndexError, FileFormatError, StorageError, windex.IndexError, OSError,
            EOFError, ValueError, IndexError, KeyError, struct.error, zlib.error,
            pickle.UnpicklingError)


# What reading a damaged index raises (whoosh3 names most of it; garbage bytes can surface as
# any of the low-level errors). A search that hits one rebuilds the index once and retries.
READ_ERRORS = _read_errors()


def writer(ix: Any, *, wait: float, bulk: bool = True) -> Any:
    """A writer that waits up to `wait` seconds for Whoosh's own lock (never AsyncWriter).

    `compound=False` keeps each segment's files separate: a compound segment is read through
    an in-memory copy of its terms and postings (whoosh3 wraps the mmap in a BytesIO), which
    cost 60 ms and 90 MB per cold search on the 10,000-node benchmark vault.
    `bulk` (the default) writes the commit's postings a term at a time (remelink.index.commit:
    the same segment files as Whoosh's own path, at a fraction of the CPU); `bulk=False` is
    Whoosh's own writer, for the tests that compare the two.
    """
    w = ix.writer(timeout=wait, delay=0.05, limitmb=LIMITMB, compound=False)
    if bulk:
        from remelink.index import commit

        commit.install(w)
    return w


@dataclass(frozen=True, slots=True)
class StoredDoc:
    path: str
    bucket: str
    name: str
    description: str
    memory_tags: tuple[str, ...]
    fingerprint: str


def stored(fields: dict[str, Any]) -> StoredDoc:
    tags = fields.get("memory_tags") or ()
    return StoredDoc(path=str(fields.get("path", "")), bucket=str(fields.get("bucket", "")),
                     name=str(fields.get("name", "")),
                     description=str(fields.get("description", "")),
                     memory_tags=tuple(str(t) for t in tags),
                     fingerprint=str(fields.get("fingerprint", "")))


def all_stored(reader: Any) -> list[StoredDoc]:
    """The stored fields of every live (not deleted) document."""
    return [stored(reader.stored_fields(n)) for n in range(reader.doc_count_all())
            if not reader.is_deleted(n)]


def term_queries(term: str, boost: float, *, in_name: bool = True) -> list[Any]:
    """The clauses of one query term: the weighted text, and the name on its own (skipped
    when no name holds the term: one matcher less per segment)."""
    clauses = [Term("text", term, boost=boost)]
    if in_name:
        clauses.append(Term("name", term, boost=boost * NAME_BOOST))
    return clauses


def or_query(subqueries: list[Any]) -> Any:
    q = Or(subqueries)
    # Whoosh picks a binary tree of union matchers for segments over 5,000 documents and an
    # array accumulator below. On the 10,000-node benchmark vault the array one was as fast for
    # 10-term queries and 8x faster for 150-word ones (220 vs 1,770 ms CPU before term
    # selection), so it is used at every size.
    q.matcher_type = Or.ARRAY_MATCHER
    return q


def bucket_filter(bucket: str) -> Any:
    return Term("bucket", bucket)
