"""Links between raw notes as evidence for integration (SPEC §8: "a note that links another note
says that the nodes drawn from them are related").

The raw notes (`daily/`, `resource/`) are scanned once per integration context for their
wikilinks, resolved the way the vault resolves links (`links.resolution`, SPEC §3.2), and for
their markdown links to a note by path (`[design](Ledger%20Event%20Design.md)`: Obsidian with
its wikilink setting off), relative to the note, else as a wikilink target: a link that is
broken, ambiguous or outside the vault says nothing. A unit then carries, in
`linked_notes`, the raw notes its own notes link to and the raw notes that link to them, each
with the context of the link (its line, under its heading). Both directions, because the note
that links may be integrated before or after the note it links. The context scopes the
evidence: a meeting note that links an incident on one line of ten says that the incident is
related to what that line is about, not to every decision of the meeting.

Derived from the vault on every run (never stored): a note edited since, or a note that
arrived later, changes the evidence of the next run.
"""

from __future__ import annotations

import posixpath
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from remelink.config import Settings
from remelink.errors import NoteError
from remelink.units import LinkedNote, Unit
from remelink.vault import links as wl
from remelink.vault.notes import read_note
from remelink.vault.paths import nfc
from remelink.vault.resolve import MARKDOWN_EXTS, Resolution, Resolver, VaultFiles

MAX_LINKED = 12  # notes carried per unit, those whose linking line is most about the unit first
# A note linked by (or linking) more notes than this is an index: its links relate everything
# to everything. Documentation pages link a dozen or two others in their prose (on the
# SilverBullet docs, a limit of 12 dropped most of their links), an index page hundreds.
HUB_LINKS = 60
CONTEXT_CHARS = 300
_HEADING_RE = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_MARKER_RE = re.compile(r"^(?:>\s*)*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?")
_LINK_RE = re.compile(r"!?\[\[([^\]|#]*)(?:#[^\]|]*)?(?:\|([^\]]*))?\]\]")


def link_context(lines: Sequence[str], index: int) -> str:
    """The text around a link on line `index` (0-based): its line, and the heading it is under;
    links shown as their display text."""
    line = lines[index].strip() if 0 <= index < len(lines) else ""
    line = _MARKER_RE.sub("", line)
    heading = ""
    for prior in reversed(lines[:index]):
        m = _HEADING_RE.match(prior)
        if m:
            heading = m.group(1)
            break
    text = f"{heading}: {line}" if heading and heading != line else line
    text = _LINK_RE.sub(lambda m: m.group(2) or m.group(1).rsplit("/", 1)[-1], text)
    text = wl.WEB_LINK_RE.sub(r"\1", text) if "](" in text else text
    return text[:CONTEXT_CHARS]


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z][a-z0-9_.-]{2,}|[\u4e00-\u9fff]{2}", text.lower())}


def most_relevant(notes: Sequence[LinkedNote], about: str) -> list[LinkedNote]:
    """`notes` with those whose linking line shares the most words with `about` (the unit's
    text) first; ties keep their order."""
    words = _words(about)
    return sorted(notes, key=lambda n: -len(words & _words(n.context)))


@dataclass
class NoteLinks:
    """Resolved links between raw notes, both ways, with the context of each link."""

    out: dict[str, dict[str, str]] = field(default_factory=dict)   # source -> target -> context
    back: dict[str, dict[str, str]] = field(default_factory=dict)  # target -> source -> context

    @classmethod
    def scan(cls, files: VaultFiles, settings: Settings) -> NoteLinks:
        raw = (settings.folders.daily + "/", settings.folders.resource + "/")
        resolver = Resolver(files, settings.resolution)
        graph = cls()
        for rel in sorted(files.markdown()):
            if not rel.startswith(raw):
                continue
            try:
                note = read_note(files.root, files.on_disk(rel))
            except NoteError:
                continue  # reported by the steps that read it
            lines = note.body.split("\n")
            wikilinks = [(resolver.resolve(link.target, rel), link.line)
                         for link in wl.parse_links(note.body, note.body_line)]
            mdlinks = [(_resolve_path(target, rel, resolver), line)
                       for target, line in wl.parse_note_links(note.body, note.body_line)]
            for res, line in [*wikilinks, *mdlinks]:
                target = res.path
                if res.status != "ok" or not target or target == rel or \
                        not target.startswith(raw) or not target.endswith(MARKDOWN_EXTS):
                    continue
                context = link_context(lines, line - note.body_line)
                known = graph.out.setdefault(rel, {}).get(target)
                joined = context if not known or context in known else f"{known} / {context}"
                graph.out[rel][target] = joined[:CONTEXT_CHARS * 2]
                graph.back.setdefault(target, {})[rel] = graph.out[rel][target]
        return graph

    def linked(self, paths: Sequence[str], about: str = "") -> tuple[LinkedNote, ...]:
        """The raw notes that `paths` link to ("out") or are linked from ("in"); none of
        `paths` themselves, no links of an index (HUB_LINKS). At most MAX_LINKED: with `about`
        (the unit's text), those whose linking line shares the most words with it first; else
        outlinks first, each in path order."""
        own = set(paths)
        found: dict[str, LinkedNote] = {}
        for table, direction in ((self.out, "out"), (self.back, "in")):
            for path in paths:
                edges = table.get(path, {})
                if len(edges) > HUB_LINKS:
                    continue
                for other in sorted(edges):
                    if other not in own and other not in found and not self._hub(other):
                        found[other] = LinkedNote(other, direction, edges[other])
        notes = list(found.values())
        if about and len(notes) > MAX_LINKED:
            notes = most_relevant(notes, about)
        return tuple(notes[:MAX_LINKED])

    def _hub(self, path: str) -> bool:
        return len(self.out.get(path, {})) > HUB_LINKS or \
            len(self.back.get(path, {})) > HUB_LINKS


def _resolve_path(target: str, source: str, resolver: Resolver) -> Resolution:
    """Where a markdown link's path points: relative to the linking note (`../2026-02-03/
    sync.md`, `Ledger%20Event%20Design.md` beside it), else as a wikilink target (from the vault
    root; by name in `obsidian` mode). A path that leaves the vault points nowhere."""
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(source), nfc(target)))
    if not joined.startswith(("../", "/")) and joined != "..":
        beside = resolver.resolve(joined, source)
        if beside.status == "ok":
            return beside
    return resolver.resolve(target, source)


class LazyNoteLinks:
    """NoteLinks built on first use (one scan per integration context), thread-safe."""

    def __init__(self, files: VaultFiles, settings: Settings) -> None:
        self._files, self._settings = files, settings
        self._graph: NoteLinks | None = None
        self._lock = threading.Lock()

    def graph(self) -> NoteLinks:
        with self._lock:
            if self._graph is None:
                self._graph = NoteLinks.scan(self._files, self._settings)
            return self._graph

    def annotate(self, unit: Unit) -> Unit:
        """The unit with the notes its notes link (added to any it already names)."""
        have = {n.path for n in unit.linked_notes}
        about = " ".join([unit.name, unit.summary, *unit.points])
        found = [n for n in self.graph().linked(unit.paths, about) if n.path not in have]
        return replace(unit, linked_notes=(*unit.linked_notes, *found)) if found else unit
