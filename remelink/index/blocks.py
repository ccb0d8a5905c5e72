"""Whoosh's W3 postings and term table, written in bulk (full builds; SPEC §5).

`encode_terms` does, for one field's sorted postings, what W3PostingsWriter and W3TermInfo do
posting by posting: blocks of at most 128 postings, each a pickled (delta-coded ids, minified
weights, minified values) tuple, zlib'd from 80 bytes, behind a pickled info tuple and its
length (negative for a term's last block). `write_runs` writes runs of documents into the
files of one `SegmentWriter` segment: the per-document records through the codec's own
per-document writer, then per field the terms of all runs merged in term order, each term's
blocks run after run (a term in two runs gets one extra, shorter block where they meet: the
reader takes blocks of any size), into the postings file and the term table (what
W3FieldWriter and OrderedHashWriter.add do, inlined).

With one run the files are Whoosh's byte for byte (tests/test_index_segment.py compares them
with `add_document` + `commit`); with several, every posting and term statistic is (same
test file, decoded). `supported(writer)` says whether the writer's codec is the one this was
written against; if not, full builds use Whoosh's own writer.
"""

from __future__ import annotations

import heapq
import itertools
import struct
import zlib
from array import array
from collections.abc import Iterable, Iterator, Sequence
from hashlib import md5
from operator import sub
from pickle import dumps
from typing import Any

from whoosh.codec import whoosh3
from whoosh.filedb import filetables
from whoosh.system import pack_int, pack_long, pack_uint, pack_ushort

from remelink.index.runs import Postings, Run, TermPart

_MAGIC = whoosh3.WHOOSH3_HEADER_MAGIC
# whoosh3 skips zlib under 80 bytes; a fork without this constant (whoosh-reloaded 2.7.5)
# compresses every block, which this encoder does not do: `supported` is then False.
_MIN_COMPRESS: int = getattr(whoosh3, "COMPRESSION_MIN_SIZE", 0)
_BLOCK = 128
_TERMINFO = struct.Struct("!BfIBBfII")  # W3TermInfo._struct: flags, weight, df, lengths, ...
_HASH_LENGTHS = struct.Struct("!ii")  # filetables._lengths: key and value length of a record
_INT = struct.Struct("!i")


def supported(writer: Any) -> bool:
    """True when the writer's codec is the W3 codec with the settings encoded here."""
    codec = writer.codec
    fw = writer.fieldwriter
    tindex = getattr(fw, "_tindex", None)
    return (_MIN_COMPRESS > 0 and type(codec) is whoosh3.W3Codec
            and type(fw) is whoosh3.W3FieldWriter
            and codec._blocklimit == _BLOCK and codec._compression == 3
            and codec._inlinelimit == 1 and hasattr(fw, "_postfile")
            and hasattr(fw, "_fieldid") and type(tindex) is filetables.OrderedHashWriter
            and tindex.hashtype == 0 and _TERMINFO.size == whoosh3.W3TermInfo._struct.size)


def encode_terms(items: list[tuple[bytes, Postings]], length_bytes: bytearray, fmt: Any,
                 *, freq_values: bool, docbase: int = 0) -> Iterator[TermPart]:
    """Every term's blocks, in the order of `items`; each posting list is emptied once encoded
    (a build's postings take more memory than its encoded blocks). `length_bytes[docnum]` is
    a document's field-length code: the codec decodes it per posting and re-encodes a block's
    minimum and maximum; the code is monotonic and round-trips, so the codes' minimum and
    maximum are what it writes."""
    fixedsize = fmt.fixed_value_size()
    if freq_values and fixedsize != 4:
        raise ValueError("frequency values need the 4-byte Frequency format")
    variable = fixedsize is None or fixedsize < 0
    for btext, post in items:
        if len(post) == 3:  # one posting (most terms of a Zipfian vocabulary)
            local, weight, value = post
            docnum = local + docbase
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
            code = length_bytes[local]
            top = float(weight) if weight > 0 else 0  # the codec's maximum starts at int 0
            info = dumps((1, docnum, top, comp, code, code), 2)
            yield (btext, pack_int(-(len(info) + len(data))) + info + data, 0, w32, 1, code,
                   code, top, docnum, docnum)
        else:
            yield _encode_blocks(btext, post, length_bytes, variable, fixedsize, freq_values,
                                 docbase)
        post.clear()


def _encode_blocks(btext: bytes, post: Postings, length_bytes: bytearray, variable: bool,
                   fixedsize: int | None, freq_values: bool, docbase: int) -> TermPart:
    local = post[0::3]
    ids = [i + docbase for i in local] if docbase else local
    raw_weights = post[1::3]
    values = post[2::3]
    n = len(ids)
    parts: list[bytes] = []
    size_at = 0
    written = 0
    total_weight = 0.0
    top_weight: float = 0
    min_code = 0
    max_code = 0
    for lo in range(0, n, _BLOCK):
        hi = min(lo + _BLOCK, n)
        count = hi - lo
        bids = ids[lo:hi]
        bw = raw_weights[lo:hi]
        f32 = array("f", bw)
        block_max = float(max(bw))
        if not block_max > 0:
            block_max = 0  # the codec's running maximum starts at the integer 0
        codes = bytes(map(length_bytes.__getitem__, local[lo:hi]))
        if 0 in codes:
            codes = codes.replace(b"\0", b"")
        bmin = min(codes) if codes else 0
        bmax = max(codes) if codes else 0
        deltas = (bids[0], *map(sub, bids[1:], bids))
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
        info = dumps((count, bids[-1], block_max, comp, bmin, bmax), 2)
        size = len(info) + len(data)
        size_at = written
        parts += (pack_int(-size if hi == n else size), info, data)
        written += 4 + size
        # W3TermInfo.add_block
        total_weight += sum(f32)
        if bmin and (not min_code or bmin < min_code):
            min_code = bmin
        max_code = max(max_code, bmax)
        top_weight = max(top_weight, block_max)
    return (btext, b"".join(parts), size_at, total_weight, n, min_code, max_code, top_weight,
            ids[0], ids[-1])


def write_runs(writer: Any, runs: Sequence[Run]) -> int:
    """Write the runs, in order, as the one segment of `writer` (a SegmentWriter on an empty
    index); returns the number of documents. The caller commits the writer."""
    if writer.docnum != 0 or writer.segments:
        raise ValueError("write_runs needs a writer on an empty index")
    if not supported(writer):
        raise ValueError("not the W3 codec this encoder writes")
    schema = writer.schema
    perdoc = writer.perdocwriter
    docnum = 0
    for run in runs:
        for record in run.docs:
            perdoc.start_doc(docnum)
            for name, stored, length in record:
                perdoc.add_field(name, schema[name], stored, length)
            perdoc.finish_doc()
            docnum += 1
    fw = writer.fieldwriter
    for name in sorted({name for run in runs for name in run.fields}):
        terms = _merged([run.fields[name] for run in runs if name in run.fields])
        first = next(terms, None)
        if first is None:  # Whoosh starts no field without postings (field ids would move)
            continue
        fw.start_field(name, schema[name])
        write_terms(fw, itertools.chain((first,), terms))
        fw.finish_field()
    writer.docnum = docnum
    writer._added = docnum > 0
    return docnum


def _merged(streams: list[Iterable[TermPart]]) -> Iterator[list[TermPart]]:
    """The parts of each term, in term order, run order within a term."""
    if len(streams) == 1:
        for part in streams[0]:
            yield [part]
        return
    tagged = [_tagged(i, stream) for i, stream in enumerate(streams)]
    current: list[TermPart] = []
    for btext, _, part in heapq.merge(*tagged):
        if current and current[0][0] != btext:
            yield current
            current = []
        current.append(part)
    if current:
        yield current


def _tagged(i: int, stream: Iterable[TermPart]) -> Iterator[tuple[bytes, int, TermPart]]:
    for part in stream:
        yield part[0], i, part


def write_terms(fw: Any, terms: Iterator[list[TermPart]]) -> None:
    """Each term's blocks into the postings file and its info into the term table."""
    postfile = fw._postfile
    tindex = fw._tindex
    prefix = pack_ushort(fw._fieldid)
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
    for parts in terms:
        btext = parts[0][0]
        start = offset
        buf.append(_MAGIC)
        offset += 4
        if len(parts) == 1:
            _, blob, _, weight, df, min_code, max_code, top, minid, maxid = parts[0]
            buf.append(blob)
            offset += len(blob)
        else:
            weight = 0.0
            df = min_code = max_code = 0
            top = 0
            for i, (_, blob, size_at, p_weight, p_df, p_min, p_max, p_top, _, _) in \
                    enumerate(parts):
                if i < len(parts) - 1:  # not the term's last block any more
                    size = _INT.unpack_from(blob, size_at)[0]
                    blob = blob[:size_at] + pack_int(-size) + blob[size_at + 4:]
                buf.append(blob)
                offset += len(blob)
                weight += p_weight
                df += p_df
                if p_min and (not min_code or p_min < min_code):
                    min_code = p_min
                max_code = max(max_code, p_max)
                top = max(top, p_top)
            minid, maxid = parts[0][8], parts[-1][9]
        terminfo = terminfo_pack(0, weight, df, min_code, max_code, top, minid, maxid)
        key = prefix + btext
        if key <= last:
            raise ValueError(f"keys must increase: {last!r}..{key!r}")
        last = key
        value = terminfo + pack_long(start) + pack_int(offset - start)
        positions.append(tpos)
        h = int.from_bytes(md5(key, usedforsecurity=False).digest()[-4:], "big")
        buckets[h & 255].append((h, tpos))
        tbuf += (lengths_pack(len(key), len(value)), key, value)
        tpos += 8 + len(key) + len(value)
        if len(buf) > 4096:
            postfile.write(b"".join(buf))
            buf.clear()
            tfile.write(b"".join(tbuf))
            tbuf.clear()
    postfile.write(b"".join(buf))
    tfile.write(b"".join(tbuf))
    tindex.lastkey = last
