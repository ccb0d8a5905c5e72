"""The Whoosh side of the passage index (SPEC §5.1): schema, documents, full builds.

Imported only when the index is opened. The analysis, the BM25F scoring over live statistics,
the writers and the in-memory segment builder are the node index's (`remelink.index.engine`,
`segment`, `blocks`); only the schema differs.

Two kinds of document per note, both keyed by the note's `path` (so one `delete_by_term`
drops a note's every document):
- `passage`: one per passage. `text` holds the note's title (weight 2), its description and
  tags (digest nodes; weight 1), the passage's heading path (weight 2) and its lines (weight
  1); the line range and heading are stored, the text is not (hits are quoted from the file).
- `note`: one per note, not searched by text: its name, description and outgoing link targets
  (stored); `key` (indexed): what a link may write to reach it (its path, its path without
  `.md`, `name:<its name>`), and `links_to` (indexed): the same forms of the targets it links
  to, so that resolving a link and finding a note's backlinks are term lookups.
`folder` (daily | resource | digest) and `day` (YYYY-MM-DD from the path, §8) are filters of
passages (a note document carries neither: fewer postings to write).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from whoosh.analysis.acore import Token
from whoosh.analysis.tokenizers import Tokenizer
from whoosh.fields import ID, STORED, TEXT, Schema

from remelink.index import engine as node_engine
from remelink.index.build import Built
from remelink.index.engine import SEP, NodeAnalyzer
from remelink.index.gather import Indexed
from remelink.index.nodes import FileStat

WEIGHTS = (2.0, 1.0, 2.0, 1.0)  # title, description + tags, heading path, passage lines
LIST_SEP = "\n"  # separates the values of a `links_to` field (never inside a path)


class ListAnalyzer(Tokenizer):
    """Each `LIST_SEP`-separated value is one exact term (paths with spaces stay whole)."""

    def __call__(self, value: str, positions: bool = False, chars: bool = False,
                 keeporiginal: bool = False, removestops: bool = True, start_pos: int = 0,
                 start_char: int = 0, tokenize: bool = True, mode: str = "",
                 **kwargs: Any) -> Iterator[Token]:
        token = Token(positions, chars, removestops=removestops, mode=mode, **kwargs)
        for i, part in enumerate(value.split(LIST_SEP) if tokenize else [value]):
            if not part:
                continue
            token.text = part
            token.boost = 1.0
            token.stopped = False
            if keeporiginal:
                token.original = part  # type: ignore[attr-defined]
            if positions:
                token.pos = start_pos + i
            if chars:
                token.startchar = token.endchar = start_char
            yield token


def _list_field() -> TEXT:
    field = TEXT(analyzer=ListAnalyzer(), phrase=False)
    field.scorable = False  # looked up, never scored: no length column
    return field


def schema() -> Schema:
    return Schema(
        path=ID(stored=True),
        kind=STORED(),
        folder=ID(stored=True),
        day=ID(stored=True),
        start=STORED(),
        end=STORED(),
        heading=STORED(),
        name=STORED(),
        description=STORED(),
        links=STORED(),
        fingerprint=STORED(),
        key=_list_field(),
        links_to=_list_field(),
        text=TEXT(analyzer=NodeAnalyzer(WEIGHTS), phrase=False),
    )


SCHEMA_NAMES = frozenset(schema().names())


@dataclass(frozen=True, slots=True)
class NoteDocs:
    """Every document of one note, as field dictionaries."""

    path: str
    docs: tuple[dict[str, Any], ...]


def passage_text(title: str, description: str, heading: str, lines: str) -> str:
    return SEP.join(part.replace(SEP, " ") for part in (title, description, heading, lines))


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


def build(root: Path, folder: str, files: Sequence[tuple[str, FileStat]], read: Any,
          *, wait: float) -> Built:
    """A complete index of `files` (read by `read(rel, stat)`) in the new folder
    `root/folder`, in one process, through the node index's in-memory segment builder (one
    segment)."""
    from remelink.index import blocks
    from remelink.index.build import _gc_paused
    from remelink.index.segment import SegmentBuilder

    ix = create(root, folder)
    writer = node_engine.writer(ix, wait=wait)
    results: list[Indexed] = []
    documents = 0
    try:
        with _gc_paused():
            fast = blocks.supported(writer)
            builder = SegmentBuilder(writer.schema) if fast else None
            for rel, stat in files:
                result = read(rel, stat)
                if result.doc is not None:
                    for doc in result.doc.docs:
                        if builder is not None:
                            builder.add(doc)
                        else:
                            writer.add_document(**doc)
                        documents += 1
                results.append(Indexed(rel, result.fingerprint, result.doc is not None,
                                       result.notice))
            if builder is not None:
                blocks.write_runs(writer, [builder.encode(lazy=True)])
            writer.commit(merge=False)
    except BaseException:
        with contextlib.suppress(Exception):
            writer.cancel()
        raise
    return Built(ix=ix, files=results, notices=[], document_count=documents)
