"""The values a full build passes between its parts (SPEC §5): a posting list under
construction, one encoded term, and a run of documents ready to be written.

`segment.SegmentBuilder` produces them, `blocks` encodes and writes them, and a build's second
process (`worker`) sends them over a pipe; they live here, below all three.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

# A posting list under construction: [docnum, weight, value] repeated, one flat list per term
# (the cheapest structure to append to: no tuple per posting). For the fields analysed in bulk
# the weight is an int (the section weights are whole numbers; small ints are shared objects,
# floats would cost 24 bytes each) and the value is the frequency; for the others they are
# the codec's float weight and value bytes.
Postings = list[Any]

# One term of one run: (term bytes, its blocks, where in them the last block's length is,
# total weight, document frequency, min and max length code (0: none), max weight, first and
# last document number).
TermPart = tuple[bytes, bytes, int, float, int, int, int, float, int, int]


@dataclass
class Run:
    """One run of documents, ready to be written: what `blocks.write_runs` needs."""

    count: int
    # per document: (field name, stored value or None, length), in add_document's order
    docs: list[list[tuple[str, Any, int]]]
    # per field: the encoded terms, sorted by term bytes (see blocks.encode_terms); a list
    # for a run sent from another process, a one-pass iterator for a run written here
    fields: dict[str, Iterable[TermPart]]
