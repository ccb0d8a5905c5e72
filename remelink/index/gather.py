"""Reading one run of digest nodes into a `SegmentBuilder` (SPEC §5, full builds).

Both processes of a full build do this for their share of the nodes (`build` here, `worker`
in the second process), so it lives below both.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from remelink.index.nodes import FileStat, read_node


@dataclass(frozen=True, slots=True)
class Indexed:
    """What the manifest and the notices need to know about one file of a build."""

    path: str
    fingerprint: str
    indexed: bool
    notice: str | None


def read_run(schema: Any, run: Sequence[tuple[str, FileStat]], digest: str,
             max_bytes: int) -> tuple[Any, list[Indexed]]:
    """Read, parse and analyse every file of `run` into a SegmentBuilder."""
    from remelink.index import engine  # Whoosh: only when a build happens
    from remelink.index.segment import SegmentBuilder

    builder = SegmentBuilder(schema)
    out: list[Indexed] = []
    for rel, stat in run:
        result = read_node(rel, stat, digest, max_bytes)
        if result.doc is not None:
            builder.add(engine.fields_of(result.doc))
        out.append(Indexed(rel, result.fingerprint, result.doc is not None, result.notice))
    return builder, out
