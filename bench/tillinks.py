"""til-simonw as a link vault: its 577 notes with the links they make to each other.

The notes link each other by URL (`[the pagination helper](https://til.simonwillison.net/aws/
helper-for-boto-aws-pagination)`), not by wikilink. A link counts when its URL names a note of
index.tsv (`<topic>/<slug>` -> `<topic>/<slug>.md`); it is replaced by its text in the body, as
bench/search_recall.py replaces a wikilink by its display text, so the answer does not leak.
Every note is in the digest; the queries are the notes of one side (bench/splits.py: the
held-out side is reported, 22 notes with 26 links to other notes).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import splits

from bench.search_recall import Note, _first_sentence

NAME = "til-simonw"
_LINK = re.compile(r"\[(?P<text>[^\]\n]*)\]\(https?://til\.simonwillison\.net/"
                   r"(?P<path>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+?)(?:\.md)?/?(?:[#?][^)\s]*)?\)")
_HEADING = re.compile(r"\A\s*#\s+[^\n]*\n")


def load(root: Path = splits.TIL) -> list[Note]:
    """Every note (rel = its path in index.tsv), targets = the notes it links to."""
    index = splits.til_notes(root=root)
    paths = {n.path for n in index}
    out = []
    for til in index:
        text = (root / "notes" / til.path).read_text(encoding="utf-8")
        targets = {f"{m.group('path')}.md" for m in _LINK.finditer(text)} & paths
        targets.discard(til.path)
        body = _LINK.sub(lambda m: m.group("text"), text)
        body = _HEADING.sub("", body, count=1)  # the title is the node's name
        description = " ".join(_first_sentence(body).split())
        out.append(Note(til.path, til.title, description, body, frozenset(targets)))
    return out


def queries(notes: list[Note], side: splits.Side = splits.HELD_OUT) -> set[str]:
    """The notes asked about: those of `side` (the others stay in the digest, unasked)."""
    return {n.rel for n in notes if splits.til_side(n.rel) == side}
