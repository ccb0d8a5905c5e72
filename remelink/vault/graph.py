"""The file graph: outlinks and backlinks of every note (SPEC §3.3).

An edge whose target does not exist is kept as a dangling edge keyed by its literal target; it
becomes a real edge (keyed by the file's path) when the file appears and the graph is rebuilt or
`update` is called for the source.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from remelink.errors import NoteError
from remelink.vault import links as wl
from remelink.vault.notes import read_note
from remelink.vault.resolve import Resolver, VaultFiles


@dataclass(frozen=True, slots=True)
class Edge:
    source: str
    target: str  # the resolved path, or the literal target when dangling
    anchor: str | None
    resolved: bool
    line: int
    col: int


@dataclass
class FileGraph:
    resolver: Resolver
    outlinks: dict[str, list[Edge]] = field(default_factory=dict)
    backlinks: dict[str, set[str]] = field(default_factory=dict)
    unreadable: dict[str, str] = field(default_factory=dict)

    @classmethod
    def build(cls, root: Path, mode: str = "path", files: VaultFiles | None = None) -> FileGraph:
        files = files or VaultFiles.scan(root)
        graph = cls(Resolver(files, mode))
        for rel in files.markdown():
            graph.update(rel)
        return graph

    def update(self, rel: str) -> None:
        """(Re)derive the outgoing edges of `rel` from disk."""
        self.remove(rel)
        files = self.resolver.files
        try:
            note = read_note(files.root, rel)
        except NoteError as exc:
            self.unreadable[rel] = str(exc)
            return
        edges: list[Edge] = []
        for link in wl.dedupe(wl.parse_links(note.body, note.body_line)):
            res = self.resolver.resolve(link.target, rel)
            resolved = res.status == "ok" and res.path is not None
            target = res.path if resolved and res.path else link.target
            edges.append(Edge(rel, target, link.anchor, resolved, link.line, link.col))
            self.backlinks.setdefault(target, set()).add(rel)
        self.outlinks[rel] = edges

    def remove(self, rel: str) -> None:
        self.unreadable.pop(rel, None)
        for edge in self.outlinks.pop(rel, []):
            sources = self.backlinks.get(edge.target)
            if sources is not None:
                sources.discard(rel)
                if not sources:
                    del self.backlinks[edge.target]

    def out(self, rel: str) -> list[Edge]:
        return list(self.outlinks.get(rel, []))

    def back(self, rel: str) -> list[str]:
        return sorted(self.backlinks.get(rel, set()))

    def dangling(self) -> Iterable[Edge]:
        for edges in self.outlinks.values():
            for edge in edges:
                if not edge.resolved:
                    yield edge
