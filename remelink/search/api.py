"""The `search` operation: refresh, search, expand (SPEC §5.1)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from remelink.config import Settings
from remelink.search.core import DEFAULT_LIMIT, PassageIndex
from remelink.search.expand import Expanded, expand


@dataclass
class SearchResult:
    query: str
    hits: list[Expanded]
    notices: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # a tampered index moved aside

    def to_json(self) -> dict[str, Any]:
        return {"query": self.query, "hits": [h.to_json() for h in self.hits]}


def search(vault: Path, settings: Settings, query: str, *, limit: int = DEFAULT_LIMIT,
           since: str | None = None, until: str | None = None, folder: str | None = None,
           links: bool = True, index: PassageIndex | None = None) -> SearchResult:
    """The best passage of each of the `limit` best notes, with link expansion. `index`: an
    open index to reuse (a long-lived process); otherwise one is opened and closed."""
    own = index is None
    idx = PassageIndex(vault, settings) if index is None else index
    try:
        before = len(idx.notices)
        hits = idx.search(query, limit=limit, since=since, until=until, folder=folder)
        expanded = [expand(idx, h, links=links) for h in hits]
        notices = idx.notices[before:]
        del idx.notices[before:]
        return SearchResult(query, expanded, notices, idx.take_warnings())
    finally:
        if own:
            idx.close()
