"""The file graph: outlinks and backlinks of every note (SPEC §3.3).

An edge whose target does not exist is kept as a dangling edge keyed by its literal target; it
becomes a real edge (keyed by the file's path) when the file appears (`file_added`), and a
real edge becomes dangling again when its file goes away (`file_removed`). `update` re-reads one
note's outgoing edges after it changed on disk.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from remelink.errors import NoteError
from remelink.vault import links as wl
from remelink.vault.notes import read_note
from remelink.vault.resolve import MARKDOWN_EXTS, Resolver, VaultFiles


@dataclass(frozen=True, slots=True)
class Edge:
    source: str
    target: str  # the resolved path, or the literal target when dangling
    anchor: str | None
    resolved: bool
    line: int
    col: int
    literal: str = ""  # the link's target as written (what a dangling edge waits for)


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

    def _edge(self, source: str, link: wl.Link) -> Edge:
        res = self.resolver.resolve(link.target, source)
        resolved = res.status == "ok" and res.path is not None
        target = res.path if resolved and res.path else link.target
        return Edge(source, target, link.anchor, resolved, link.line, link.col, link.target)

    def update(self, rel: str) -> None:
        """(Re)derive the outgoing edges of `rel` from disk."""
        self.remove(rel)
        files = self.resolver.files
        try:
            note = read_note(files.root, files.on_disk(rel))
        except NoteError as exc:
            self.unreadable[rel] = str(exc)
            return
        edges = [self._edge(rel, link)
                 for link in wl.dedupe(wl.parse_links(note.body, note.body_line))]
        for edge in edges:
            self.backlinks.setdefault(edge.target, set()).add(rel)
        self.outlinks[rel] = edges

    def remove(self, rel: str) -> None:
        """Forget the outgoing edges of `rel` (its incoming edges stay: they are other notes')."""
        self.unreadable.pop(rel, None)
        for edge in self.outlinks.pop(rel, []):
            self._unlink(edge)

    def _unlink(self, edge: Edge) -> None:
        sources = self.backlinks.get(edge.target)
        if sources is not None and not any(
                e.target == edge.target for e in self.outlinks.get(edge.source, []) if e != edge):
            sources.discard(edge.source)
            if not sources:
                del self.backlinks[edge.target]

    def file_added(self, rel: str) -> None:
        """A file appeared: dangling edges that now resolve become real (and a new note's own
        edges are read)."""
        self.resolver.files.add(rel)
        if rel.endswith(MARKDOWN_EXTS):
            self.update(rel)
        self._reresolve()

    def file_removed(self, rel: str) -> None:
        """A file went away: its outgoing edges go, and edges pointing at it dangle again."""
        self.resolver.files.discard(rel)
        self.remove(rel)
        self._reresolve()

    def _reresolve(self) -> None:
        """Resolve every edge again against the current file list (the resolver caches per
        target), then rebuild the backlinks from the outlinks."""
        for source, edges in self.outlinks.items():
            fresh = []
            for edge in edges:
                res = self.resolver.resolve(edge.literal, source)
                resolved = res.status == "ok" and res.path is not None
                target = res.path if resolved and res.path else edge.literal
                if (target, resolved) != (edge.target, edge.resolved):
                    edge = replace(edge, target=target, resolved=resolved)
                fresh.append(edge)
            self.outlinks[source] = fresh
        self.backlinks = {}
        for source, edges in self.outlinks.items():
            for edge in edges:
                self.backlinks.setdefault(edge.target, set()).add(source)

    def out(self, rel: str) -> list[Edge]:
        return list(self.outlinks.get(rel, []))

    def back(self, rel: str) -> list[str]:
        return sorted(self.backlinks.get(rel, set()))

    def dangling(self) -> Iterable[Edge]:
        for edges in self.outlinks.values():
            for edge in edges:
                if not edge.resolved:
                    yield edge
