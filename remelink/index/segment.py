"""Full builds: one Whoosh segment written from postings gathered in memory (SPEC §5).

Whoosh's own writer sends every posting through a pool of tuples, sorts them all at commit,
then hands them one by one to the codec, which looks up the document's field length, appends
to a block and pickles the block: about 8 µs of pure Python per posting, three quarters of a
full build (bench/bench_search.py, build profile). A full build knows all its documents up
front, so `SegmentBuilder` keeps each term's postings in a list as documents are analysed
and writes the terms in order at the end, encoding the W3 codec's blocks and term infos
itself, with one call per term instead of one per posting.

What it writes is Whoosh's format, byte for byte: `tests/test_index_segment.py` builds the
same documents with Whoosh's `add_document` and with this builder and compares every file of
the two segments. It writes into the files of a regular `SegmentWriter`, which keeps the
lock, the stored fields, the field-length columns, the term table and the TOC commit. If the
codec is not the one this encoder was written against (another Whoosh version), the terms go
through the codec's own per-posting calls instead: slower, never wrong.
"""

from __future__ import annotations

import struct
import zlib
from array import array
from hashlib import md5
from operator import sub
from pickle import dumps
from typing import Any

from whoosh import formats
from whoosh.codec import whoosh3
from whoosh.filedb import filetables
from whoosh.system import pack_int, pack_long, pack_uint, pack_ushort
from whoosh.util.numeric import byte_to_length, length_to_byte

from remelink.index import analysis
from remelink.index.engine import SEP, NodeAnalyzer

_MAGIC = whoosh3.WHOOSH3_HEADER_MAGIC
_MIN_COMPRESS = whoosh3.COMPRESSION_MIN_SIZE
_TERMINFO = struct.Struct("!BfIBBfII")  # W3TermInfo._struct: flags, weight, df, lengths, ...
_HASH_LENGTHS = struct.Struct("!ii")  # filetables._lengths: key and value length of a record

# A posting list under construction: [docnum, weight, value] repeated, one flat list per term
# (the cheapest structure to append to: no tuple per posting). The value is the frequency for
# the fields analysed here (the codec stores it as a 4-byte integer), the codec's value bytes
# for the others.
Postings = list[Any]


def _fast_codec(writer: Any) -> bool:
    """True when the writer's codec is the W3 codec with the settings the encoder assumes."""
    codec = writer.codec
    fw = writer.fieldwriter
    tindex = getattr(fw, "_tindex", None)
    return (type(codec) is whoosh3.W3Codec and type(fw) is whoosh3.W3FieldWriter
            and codec._blocklimit == 128 and codec._compression == 3
            and codec._inlinelimit == 1 and hasattr(fw, "_postfile")
            and type(tindex) is filetables.OrderedHashWriter and tindex.hashtype == 0
            and _TERMINFO.size == whoosh3.W3TermInfo._struct.size)


class SegmentBuilder:
    """Adds documents to a fresh `SegmentWriter` (numbered 0..n-1) and writes their postings
    when `finish()` is called; the caller then commits (or cancels) the writer."""

    def __init__(self, writer: Any) -> None:
        if writer.docnum != 0 or writer.segments:
            raise ValueError("SegmentBuilder needs a writer on an empty index")
        self.writer = writer
        self.schema = writer.schema
        self.perdoc = writer.perdocwriter
        self.count = 0
        self.postings: dict[str, dict[Any, Postings]] = {}
        # Per field, per document: the one-byte code of the field's length (0: none), which
        # is what the codec reads back for each posting.
        self.lengths: dict[str, bytearray] = {}
        self._fast: dict[str, tuple[float, ...] | None] = {}
        for name, field in self.schema.items():
            if field.separate_spelling() or field.vector or getattr(field, "spelling", False):
                raise ValueError(f"field {name!r}: spelling and vectors are not supported")
            analyzer = getattr(field, "analyzer", None)
            # Per-section counts times weights equal Whoosh's token-by-token sums only when
            # the weights are whole numbers (exact in floating point).
            fast = None
            if (field.indexed and isinstance(analyzer, NodeAnalyzer)
                    and type(field.format) is formats.Frequency
                    and field.format.field_boost == 1.0
                    and all(float(w).is_integer() and 0 < w < 1 << 16
                            for w in analyzer.weights)):
                fast = analyzer.weights
            self._fast[name] = fast
            if field.indexed:
                self.postings[name] = {}
                self.lengths[name] = bytearray()

    def add(self, fields: dict[str, Any]) -> None:
        """What `SegmentWriter.add_document(**fields)` does, minus the posting pool."""
        docnum = self.count
        perdoc = self.perdoc
        schema = self.schema
        names = sorted(fields)
        for name in names:
            if name.startswith("_") or name not in schema:
                raise ValueError(f"unsupported field {name!r}")
        perdoc.start_doc(docnum)
        try:
            for name in names:
                value = fields[name]
                if value is None:
                    continue
                field = schema[name]
                length = 0
                if field.indexed:
                    length = self._index(name, field, value, docnum)
                perdoc.add_field(name, field, value if field.stored else None, length)
                column = field.column_type
                if column:
                    perdoc.add_column_value(name, column, field.to_column_value(value))
        except BaseException:
            perdoc.cancel_doc()
            raise
        perdoc.finish_doc()
        for lengths in self.lengths.values():
            if len(lengths) == docnum:  # the field was absent from this document
                lengths.append(0)
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
                post = posts[term]
                post[-2] += more
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

    def finish(self) -> int:
        """Write every field's terms and postings into the writer's segment files; returns
        the number of documents. The writer's commit() then writes the rest."""
        writer = self.writer
        fw = writer.fieldwriter
        fast = _fast_codec(writer)
        for name in sorted(self.postings):
            posts = self.postings[name]
            if not posts:
                continue
            field = self.schema[name]
            fw.start_field(name, field)
            items = sorted((t.encode("utf-8") if isinstance(t, str) else t, p)
                           for t, p in posts.items())
            posts.clear()
            write = _write_terms if fast else _write_terms_api
            write(fw, field.format, items, self.lengths[name], self._fast[name] is not None)
            fw.finish_field()
        writer.docnum = self.count
        writer._added = self.count > 0
        return self.count


def _weighted_counts(value: str, weights: tuple[float, ...]
                     ) -> tuple[dict[str, int], float, dict[str, float]]:
    """The terms of a NodeAnalyzer value as (frequency per term, base weight, extra weight
    per term): a term's weight is `frequency * base + extra.get(term, 0)`, which is what
    NodeAnalyzer plus Whoosh's Frequency format add up token by token (exactly: the weights
    are whole numbers). The base is the weight of the section with the most terms (the body),
    so only terms of the short sections carry an extra."""
    parts = value.split(SEP)
    counts = [analysis.index_counts(part) for part in parts]
    weight = [weights[i] if i < len(weights) else 1.0 for i in range(len(parts))]
    big = max(range(len(parts)), key=lambda i: len(counts[i]))
    base = weight[big]
    freqs = counts[big]
    extra: dict[str, float] = {}
    for i, section in enumerate(counts):
        if i == big or not section:
            continue
        delta = weight[i] - base
        get = freqs.get
        for term, c in section.items():
            freqs[term] = get(term, 0) + c
            if delta:
                extra[term] = extra.get(term, 0.0) + c * delta
    return freqs, base, extra


def _write_terms(fw: Any, fmt: Any, items: list[tuple[bytes, Postings]],
                 length_bytes: bytearray, freq_values: bool) -> None:
    """Encode terms and postings exactly as W3FieldWriter / W3PostingsWriter / W3TermInfo /
    OrderedHashWriter would, one term at a time.

    Field lengths are handled as their one-byte codes (`length_bytes[docnum]`, 0 for none):
    the codec decodes a document's byte and re-encodes a block's minimum and maximum, and the
    code is monotonic and round-trips, so the bytes' minimum and maximum are what it writes."""
    postfile = fw._postfile
    tindex = fw._tindex
    prefix = pack_ushort(fw._fieldid)
    fixedsize = fmt.fixed_value_size()
    if freq_values and fixedsize != 4:
        raise ValueError("frequency values need the 4-byte Frequency format")
    variable = fixedsize is None or fixedsize < 0
    magic = _MAGIC
    terminfo_pack = _TERMINFO.pack
    lengths_pack = _HASH_LENGTHS.pack
    offset = postfile.tell()
    buf: list[bytes] = []
    # The term table (OrderedHashWriter.add, inlined): records appended to the .trm file,
    # each key's hash and position remembered for the hash tables written at close.
    tfile = tindex.dbfile
    tpos = tfile.tell()
    tbuf: list[bytes] = []
    buckets = tindex.buckets
    positions = tindex.index
    last = tindex.lastkey
    for btext, post in items:
        start = offset
        if len(post) == 3:  # one posting (most terms of a Zipfian vocabulary)
            docnum, weight, value = post
            if freq_values:
                value = pack_uint(value)
            w32 = array("f", (weight,))[0]
            if variable:
                mini_v: Any = (value,) if value else ()
            else:
                mini_v = None if fixedsize == 0 else value
            data = dumps(((docnum,), None if w32 == 1.0 else w32, mini_v), 2)
            comp = 0
            if len(data) >= _MIN_COMPRESS:
                comp = 3
                data = zlib.compress(data, 3)
            lb = length_bytes[docnum]
            top = weight if weight > 0 else 0
            info = dumps((1, docnum, top, comp, lb, lb), 2)
            size = len(info) + len(data)
            buf += (magic, pack_int(-size), info, data)
            offset += 8 + size
            terminfo = terminfo_pack(0, w32, 1, lb, lb, top, docnum, docnum)
        else:
            terminfo, written = _write_blocks(buf, post, length_bytes, variable, fixedsize,
                                              freq_values)
            offset += written
        key = prefix + btext
        if key <= last:
            raise ValueError(f"keys must increase: {last!r}..{key!r}")
        last = key
        value_bytes = terminfo + pack_long(start) + pack_int(offset - start)
        positions.append(tpos)
        h = int.from_bytes(md5(key, usedforsecurity=False).digest()[-4:], "big")
        buckets[h & 255].append((h, tpos))
        tbuf += (lengths_pack(len(key), len(value_bytes)), key, value_bytes)
        tpos += 8 + len(key) + len(value_bytes)
        if len(buf) > 4096:
            postfile.write(b"".join(buf))
            buf.clear()
            tfile.write(b"".join(tbuf))
            tbuf.clear()
    postfile.write(b"".join(buf))
    tfile.write(b"".join(tbuf))
    tindex.lastkey = last


def _write_blocks(buf: list[bytes], post: Postings, length_bytes: bytearray, variable: bool,
                  fixedsize: int | None, freq_values: bool) -> tuple[bytes, int]:
    """Append the blocks of one term's postings to `buf`; returns its term info (without
    the extent) and the number of bytes appended."""
    ids = post[0::3]
    raw_weights = post[1::3]
    values = post[2::3]
    n = len(ids)
    written = len(_MAGIC)
    buf.append(_MAGIC)
    total_weight = 0.0
    top_weight: float = 0
    min_byte = 0
    max_byte = 0
    for lo in range(0, n, 128):
        hi = min(lo + 128, n)
        bids = ids[lo:hi]
        bw = raw_weights[lo:hi]
        f32 = array("f", bw)
        block_max = max(bw)
        if not block_max > 0:
            block_max = 0  # the codec's running maximum starts at the integer 0
        codes = bytes(map(length_bytes.__getitem__, bids))
        if 0 in codes:
            codes = codes.replace(b"\0", b"")
        bmin = min(codes) if codes else 0
        bmax = max(codes) if codes else 0
        deltas = (bids[0], *map(sub, bids[1:], bids))
        count = hi - lo
        if f32.count(1.0) == count:
            mini_w: Any = None
        elif f32.count(f32[0]) == count:
            mini_w = f32[0]
        else:
            mini_w = tuple(f32)
        if freq_values:
            mini_v: Any = struct.pack(f"!{count}I", *values[lo:hi])
        elif variable:
            mini_v = tuple(v for v in values[lo:hi] if v)
        elif fixedsize == 0:
            mini_v = None
        else:
            mini_v = b"".join(values[lo:hi])
        data = dumps((deltas, mini_w, mini_v), 2)
        comp = 0
        if len(data) >= _MIN_COMPRESS:
            comp = 3
            data = zlib.compress(data, 3)
        info = dumps((hi - lo, bids[-1], block_max, comp, bmin, bmax), 2)
        size = len(info) + len(data)
        buf += (pack_int(-size if hi == n else size), info, data)
        written += 4 + size
        # W3TermInfo.add_block
        total_weight += sum(f32)
        if bmin and (not min_byte or bmin < min_byte):
            min_byte = bmin
        max_byte = max(max_byte, bmax)
        top_weight = max(top_weight, block_max)
    terminfo = _TERMINFO.pack(0, total_weight, n, min_byte, max_byte, top_weight, ids[0],
                              ids[-1])
    return terminfo, written


def _write_terms_api(fw: Any, fmt: Any, items: list[tuple[bytes, Postings]],
                     length_bytes: bytearray, freq_values: bool) -> None:
    """The same terms through the codec's public per-posting calls (any codec)."""
    for btext, post in items:
        fw.start_term(btext)
        for i in range(0, len(post), 3):
            code = length_bytes[post[i]]
            value = pack_uint(post[i + 2]) if freq_values else post[i + 2]
            fw.add(post[i], post[i + 1], value, byte_to_length(code) if code else 0)
        fw.finish_term()
