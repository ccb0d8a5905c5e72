"""A note's content sketch: how much of its text a renamed-and-edited note still shares with the
note it was (SPEC §9.3, renamed inputs).

The text is cut into word 3-shingles (Latin words and digit runs lowercased, each CJK character
a word), each shingle hashed to 32 bits; the sketch keeps the 64 smallest hashes (bottom-k
MinHash). Two sketches estimate the Jaccard similarity of the two shingle sets: of the 64
smallest hashes of their union, the share found in both. A note of fewer than 64 shingles keeps
them all, so short notes, where one edit weighs most, are compared exactly.

Stored per input in the checkpoint (base64, at most 344 characters), computed from the bytes
the run reads anyway. `SAME_NOTE` is the similarity from which a new note is the gone note it
most resembles, edited: measured on real notes nobody here wrote (bench/bench_renames.py,
docs/benchmarks.md "Renamed notes"): different notes never shared more than 0.19 (til-simonw,
either half; LoCoMo sessions and the realistic vaults 0.08), small edits (a word, a number,
three typos, a line or a fifth more text, frontmatter) kept 0.59 and more. It sits nearer the
edits than the different notes because taking a different note for a renamed one is the worse
mistake (citations moved to a note that never said it); a missed rename is only a deletion and
a new note.
"""

from __future__ import annotations

import base64
import hashlib
import re

K = 64
SAME_NOTE = 0.5
_TOKEN_RE = re.compile(r"[0-9a-z]+|[\u3400-\u9fff\u3040-\u30ff\uac00-\ud7af\uf900-\ufaff]",
                       re.IGNORECASE)
_MAX_BYTES = K * 4


def hashes(text: str) -> list[int]:
    """The K smallest shingle hashes of `text`, ascending (fewer for a short text)."""
    tokens = [t.lower() for t in _TOKEN_RE.findall(text)]
    if len(tokens) < 3:
        shingles = {" ".join(tokens)} if tokens else set()
    else:
        shingles = {f"{a} {b} {c}" for a, b, c in zip(tokens, tokens[1:], tokens[2:],
                                                      strict=False)}
    values = {int.from_bytes(hashlib.blake2b(s.encode("utf-8"), digest_size=4).digest(), "big")
              for s in shingles}
    return sorted(values)[:K]


def sketch(data: bytes) -> str:
    """The sketch of a note's bytes, as stored in the checkpoint."""
    raw = b"".join(v.to_bytes(4, "big") for v in hashes(data.decode("utf-8", "replace")))
    return base64.b64encode(raw).decode("ascii")


def parse(value: object) -> list[int] | None:
    """The hashes of a stored sketch, or None when it is not one (the checkpoint is untrusted
    input: anything else is ignored)."""
    if not isinstance(value, str) or not value or len(value) > 2 * _MAX_BYTES:
        return None
    try:
        raw = base64.b64decode(value.encode("ascii"), validate=True)
    except (ValueError, UnicodeEncodeError):
        return None
    if not raw or len(raw) % 4 or len(raw) > _MAX_BYTES:
        return None
    return [int.from_bytes(raw[i:i + 4], "big") for i in range(0, len(raw), 4)]


def similarity(a: list[int], b: list[int]) -> float:
    """Estimated Jaccard similarity of the shingle sets behind two sketches (0.0 to 1.0)."""
    if not a or not b:
        return 0.0
    sa, sb = set(a), set(b)
    union = sorted(sa | sb)[:K]
    return sum(1 for v in union if v in sa and v in sb) / len(union)
