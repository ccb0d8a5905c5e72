"""Full builds: the postings of a run of documents gathered in memory (SPEC §5).

Whoosh's own writer sends every posting through a pool of tuples, sorts them all at commit,
then hands them one by one to the codec, which looks up the document's field length, appends
to a block and pickles the block: about 8 µs of pure Python per posting, three quarters of a
full build. A full build knows all its documents up front, so `SegmentBuilder` keeps each
term's postings in a flat list as documents are analysed, and `remelink.index.blocks` encodes
the codec's blocks and term infos at the end, one call per term instead of one per posting.

A builder holds one run of documents (numbered from 0); `encode(docbase)` turns it into a
`Run`: the per-document records (stored fields, field lengths) and, per field, the encoded
postings of each term, with document numbers shifted by `docbase`. Runs built in different
processes are written into one segment by `blocks.write_runs`, in order.

The fields analysed by `NodeAnalyzer` are analysed here in bulk (per-section term counts,
`analysis.index_counts`); every other field goes through the field's own `index()`. Either way
the postings are what `SegmentWriter.add_document` would have produced (tested byte for byte
in tests/test_index_segment.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from whoosh import formats
from whoosh.util.numeric import length_to_byte

from remelink.index import analysis, blocks
from remelink.index.engine import SEP, NodeAnalyzer
from remelink.index.runs import Postings, Run, TermPart


class SegmentBuilder:
    """Gathers the postings, stored fields and field lengths of documents numbered 0..n-1."""

    def __init__(self, schema: Any) -> None:
        self.schema = schema
        self.count = 0
        self.docs: list[list[tuple[str, Any, int]]] = []
        self.postings: dict[str, dict[Any, Postings]] = {}
        # Per field, per document: the one-byte code of the field's length (0: none), which
        # is what the codec reads back for each posting.
        self.lengths: dict[str, bytearray] = {}
        self._fast: dict[str, tuple[int, ...] | None] = {}
        for name, field in schema.items():
            if field.separate_spelling() or field.vector or field.column_type:
                raise ValueError(f"field {name!r}: spelling, vectors and columns are not "
                                 "supported")
            analyzer = getattr(field, "analyzer", None)
            fast = None
            # Per-section counts times weights equal Whoosh's token-by-token sums only when
            # the weights are whole numbers (exact in floating point).
            if (field.indexed and isinstance(analyzer, NodeAnalyzer)
                    and type(field.format) is formats.Frequency
                    and field.format.field_boost == 1.0
                    and all(float(w).is_integer() and 0 < w < 1 << 16
                            for w in analyzer.weights)):
                fast = tuple(int(w) for w in analyzer.weights)
            self._fast[name] = fast
            if field.indexed:
                self.postings[name] = {}
                self.lengths[name] = bytearray()

    def add(self, fields: dict[str, Any]) -> None:
        """What `SegmentWriter.add_document(**fields)` does, minus the posting pool; the
        per-document writes are recorded and replayed by `blocks.write_runs`."""
        docnum = self.count
        schema = self.schema
        names = sorted(fields)
        for name in names:
            if name.startswith("_") or name not in schema:
                raise ValueError(f"unsupported field {name!r}")
        record = []
        for name in names:
            value = fields[name]
            if value is None:
                continue
            field = schema[name]
            length = self._index(name, field, value, docnum) if field.indexed else 0
            record.append((name, value if field.stored else None, length))
        for lengths in self.lengths.values():
            if len(lengths) == docnum:  # the field was absent from this document
                lengths.append(0)
        self.docs.append(record)
        self.count += 1

    def _index(self, name: str, field: Any, value: Any, docnum: int) -> int:
        """Add one field value's postings; returns the length Whoosh records for it."""
        posts = self.postings[name]
        get = posts.get
        weights = self._fast[name]
        length = 0
        if weights is not None:
            freqs, base, extra = _weighted_counts(value, weights)
            length = sum(freqs.values())
            for term, freq in freqs.items():
                post = get(term)
                if post is None:
                    posts[term] = [docnum, freq * base, freq]
                else:
                    post += (docnum, freq * base, freq)
            for term, more in extra.items():  # this document's posting is the list's last
                posts[term][-2] += more
        else:
            for tbytes, freq, weight, vbytes in field.index(value):
                length += freq
                post = get(tbytes)
                if post is None:
                    posts[tbytes] = [docnum, weight, vbytes or b""]
                else:
                    post += (docnum, weight, vbytes or b"")
        if not field.scorable:
            length = 0
        self.lengths[name].append(length_to_byte(length) if length else 0)
        return length

    def sorted_postings(self, name: str) -> list[tuple[bytes, Postings]]:
        """One field's postings by term bytes; the builder lets go of them."""
        posts = self.postings[name]
        items = sorted((t.encode("utf-8") if isinstance(t, str) else t, p)
                       for t, p in posts.items())
        posts.clear()
        return items

    def encode(self, docbase: int = 0, *, lazy: bool = False) -> Run:
        """The run, its document numbers shifted by `docbase`, postings encoded (`lazy`: as
        the run is written, one term at a time, which bounds memory; otherwise now)."""
        fields: dict[str, Iterable[TermPart]] = {}
        for name in sorted(self.postings):
            field = self.schema[name]
            terms = blocks.encode_terms(
                self.sorted_postings(name), self.lengths[name], field.format,
                freq_values=self._fast[name] is not None, docbase=docbase)
            fields[name] = terms if lazy else list(terms)
        return Run(self.count, self.docs, fields)


def _weighted_counts(value: str, weights: tuple[int, ...]
                     ) -> tuple[dict[str, int], int, dict[str, int]]:
    """The terms of a NodeAnalyzer value as (frequency per term, base weight, extra weight
    per term): a term's weight is `frequency * base + extra.get(term, 0)`, which is what
    NodeAnalyzer plus Whoosh's Frequency format add up token by token (exactly: the weights
    are whole numbers). The base is the weight of the section with the most terms (the body),
    so only terms of the short sections carry an extra."""
    parts = value.split(SEP)
    counts = [analysis.index_counts(part) for part in parts]
    weight = [weights[i] if i < len(weights) else 1 for i in range(len(parts))]
    big = max(range(len(parts)), key=lambda i: len(counts[i]))
    base = weight[big]
    freqs = counts[big]
    extra: dict[str, int] = {}
    for i, section in enumerate(counts):
        if i == big or not section:
            continue
        delta = weight[i] - base
        get = freqs.get
        for term, c in section.items():
            freqs[term] = get(term, 0) + c
            if delta:
                extra[term] = extra.get(term, 0) + c * delta
    return freqs, base, extra
