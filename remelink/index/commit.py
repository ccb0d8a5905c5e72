"""Incremental commits of the node and passage indexes, written in bulk (SPEC §5).

`dream run` commits the node index once per integrated unit (`store.IndexStore.update`), and
Whoosh's merge policy folds the small segments into each new one. Whoosh's SegmentWriter sends
every posting of the new documents and of the merged segments through a pool of tuples (one
method call and a size estimate per posting), sorts the pool at commit, and hands the postings
one by one to the codec (about 8 µs of Python per posting); a merged segment is read back
through one matcher per term, posting by posting. In a 100-note `dream run` that was a quarter
of the run's CPU.

`install(writer)` replaces those three steps on one writer, with the same result:
- the pool keeps one flat list per term (`runs.Postings`), in document order, as the new
  documents and the merged segments arrive (document numbers only grow within a writer);
- a merged segment's postings are read a block at a time (the codec's own block decoding);
- at commit each field's terms are sorted once and encoded by `blocks.encode_terms`, whose
  blocks and term infos are the codec's byte for byte.
What happens (which segments merge, document numbers, deletions, stored fields, lengths) is
Whoosh's: only the postings' path changes, so the segment files are the ones Whoosh's writer
makes, byte for byte (tests/test_index_commit.py), and every score and rank stays as it was.
A writer on another codec, or a schema with spelling, vectors or columns, keeps Whoosh's path.
"""

from __future__ import annotations

from collections.abc import Iterator
from types import MethodType
from typing import Any

from remelink.index import blocks
from remelink.index.runs import Postings


class TermPool:
    """What SegmentWriter's PostingPool is to the writer (`add`, `iter_postings`, `cleanup`,
    `fieldnames`), as one flat `[docnum, weight, value, ...]` list per field and term."""

    def __init__(self) -> None:
        self.fields: dict[str, dict[bytes, Postings]] = {}
        # A posting that arrived out of document order (never, in SegmentWriter): the lists
        # are then sorted at commit.
        self.unordered = False

    @property
    def fieldnames(self) -> set[str]:
        return set(self.fields)

    def add(self, item: tuple[str, bytes, int, float, bytes | None]) -> None:
        fieldname, btext, docnum, weight, value = item
        terms = self.fields.get(fieldname)
        if terms is None:
            terms = self.fields[fieldname] = {}
        post = terms.get(btext)
        if post is None:
            terms[btext] = [docnum, weight, value or b""]
        else:
            if docnum <= post[-3]:
                self.unordered = True
            post += (docnum, weight, value or b"")

    def sorted_terms(self, fieldname: str) -> list[tuple[bytes, Postings]]:
        """One field's terms in byte order, each posting list in document order."""
        items = sorted(self.fields[fieldname].items())
        if self.unordered:
            for i, (btext, post) in enumerate(items):
                triples = sorted(zip(post[0::3], post[1::3], post[2::3], strict=True))
                items[i] = (btext, [x for triple in triples for x in triple])
        return items

    def iter_postings(self) -> Iterator[tuple[str, bytes, int, float, bytes]]:
        """Every posting as Whoosh's pool gives it: sorted (field, term, docnum, ...)."""
        for fieldname in sorted(self.fields):
            for btext, post in self.sorted_terms(fieldname):
                for i in range(0, len(post), 3):
                    yield fieldname, btext, post[i], post[i + 1], post[i + 2]

    def cleanup(self) -> None:
        self.fields = {}


def supported(writer: Any) -> bool:
    """True when this module may write the writer's postings: the W3 codec `blocks` encodes,
    and fields without spelling words, vectors or columns (none of the indexes here has
    them)."""
    if not blocks.supported(writer):
        return False
    return all(not (field.separate_spelling() or field.vector or field.column_type)
               for _, field in writer.schema.items())


def install(writer: Any) -> Any:
    """The writer, its postings written in bulk when `supported` (else unchanged)."""
    if supported(writer):
        writer.pool = TermPool()
        writer._flush_segment = MethodType(_flush_segment, writer)
        writer.add_postings_to_pool = MethodType(_add_postings_to_pool, writer)
    return writer


def _flush_segment(writer: Any) -> None:
    """SegmentWriter._flush_segment, the postings encoded a term at a time."""
    from whoosh.codec.whoosh3 import LENGTHS_COLUMN

    writer.perdocwriter.close()
    pdr = writer.per_document_reader() if writer.codec.length_stats else None
    try:
        pool: TermPool = writer.pool
        fw = writer.fieldwriter
        schema = writer.schema
        count = writer.docnum
        for fieldname in sorted(pool.fields):
            if not pool.fields[fieldname]:
                continue
            field = schema[fieldname]
            codes = bytearray(count)
            if pdr is not None:
                column = pdr._cached_reader(f"_{fieldname}_len", LENGTHS_COLUMN)  # _lenfield
                if column is not None:
                    codes = bytearray(column.load())
            fw.start_field(fieldname, field)
            terms = blocks.encode_terms(pool.sorted_terms(fieldname), codes, field.format,
                                        freq_values=False)
            blocks.write_terms(fw, ([part] for part in terms))
            fw.finish_field()
        pool.cleanup()
        fw.close()
    finally:
        if pdr is not None:
            pdr.close()


def _add_postings_to_pool(writer: Any, reader: Any, startdoc: int,
                          docmap: dict[int, int] | None) -> None:
    """SegmentWriter.add_postings_to_pool for a merged segment: its live postings renumbered
    (`docmap`, or shifted by `startdoc`) into the pool, a block at a time."""
    from whoosh.codec.whoosh3 import W3LeafMatcher

    pool: TermPool = writer.pool
    schema = writer.schema
    terms_reader = getattr(reader, "_terms", None)
    codec = getattr(reader, "_codec", None)
    if terms_reader is None or codec is None or not hasattr(terms_reader, "items"):
        for item in writer._process_posts(reader.iter_postings(), startdoc, docmap):
            pool.add(item)
        return
    deleted = reader.deleted_docs_set if reader.has_deletions() else None
    postfile = terms_reader._postfile
    for (fieldname, btext), terminfo in terms_reader.items():
        if fieldname not in schema:
            continue
        fmt = schema[fieldname].format
        if fmt is None:
            continue
        m: Any = codec.postings_reader(postfile, terminfo, fmt, term=(fieldname, btext))
        fixed = fmt.fixed_value_size()
        if isinstance(m, W3LeafMatcher) and fixed is not None and fixed >= 0:
            posts = _block_postings(m)
        else:  # inlined postings, or values of varying size: posting by posting, as Whoosh
            posts = []
            while m.is_active():
                posts.append((m.id(), m.weight(), m.value()))
                m.next()
        for docnum, weight, value in posts:
            if deleted and docnum in deleted:
                continue
            new = docmap[docnum] if docmap is not None else startdoc + docnum
            pool.add((fieldname, btext, new, weight, value))


def _block_postings(m: Any) -> list[tuple[int, float, Any]]:
    """A W3 matcher's postings, deletions included, decoded a block at a time."""
    posts: list[tuple[int, float, Any]] = []
    while m.is_active():
        m._read_ids()
        m._read_weights()
        m._read_values()
        posts += zip(m._ids, m._weights, m._values, strict=True)
        m._next_block()
    return posts
