"""What a search hit shows: the passage, and its links (SPEC §5.1, "link expansion").

- The passage is quoted from the file as it is now (read through the vault boundary), cut at
  PASSAGE_CHARS with a note saying so.
- Every hit: up to LINKS per direction of the notes it links to and the notes linking to it,
  each with its name and description (cut at DESCRIPTION_CHARS), and the totals.
- A digest hit: the raw notes its `## Sources` section cites (up to SOURCES), each with the
  sentence that cites it and, when the link has a line anchor (`#L9-L12`) or a heading anchor,
  the cited passage itself (cut at CITED_CHARS).
Every bound holds whatever the vault holds, so a call's size is bounded (docs/search.md).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from remelink.config import Settings
from remelink.errors import NoteError, RemelinkError
from remelink.search.core import Hit, NoteInfo, PassageIndex
from remelink.search.passages import SOURCES_RE, sections
from remelink.search.reading import folder_of
from remelink.vault import links as wl
from remelink.vault.boundary import hidden_inside, vault_real
from remelink.vault.notes import Note, read_note
from remelink.vault.paths import normalize_relpath

PASSAGE_CHARS = 1500
DESCRIPTION_CHARS = 200
CITED_CHARS = 500
SAYS_CHARS = 300
LINKS = 5
SOURCES = 5


def cut(text: str, limit: int) -> tuple[str, bool]:
    """`text` cut to at most `limit` characters at a line or word end, and whether it was."""
    if len(text) <= limit:
        return text, False
    head = text[:limit]
    for sep in ("\n", " "):
        at = head.rfind(sep)
        if at > limit // 2:
            head = head[:at]
            break
    return head.rstrip() + " …", True


@dataclass(frozen=True)
class Neighbour:
    path: str
    name: str
    description: str
    anchor: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "name": self.name,
                               "description": self.description}
        if self.anchor:
            out["anchor"] = self.anchor
        return out


@dataclass(frozen=True)
class Cited:
    """A raw note a digest node's Sources cite."""

    path: str
    anchor: str | None
    says: str  # the Sources sentence that cites it
    passage: str | None  # the cited lines or section, when the link has an anchor
    lines: tuple[int, int] | None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "says": self.says}
        if self.anchor:
            out["anchor"] = self.anchor
        if self.passage is not None:
            out["passage"] = self.passage
        if self.lines:
            out["lines"] = list(self.lines)
        return out


@dataclass
class Expanded:
    hit: Hit
    name: str
    description: str
    passage: str
    cut: bool
    outlinks: list[Neighbour] = field(default_factory=list)
    inlinks: list[Neighbour] = field(default_factory=list)
    outlinks_total: int = 0
    inlinks_total: int = 0
    sources: list[Cited] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        h = self.hit
        out: dict[str, Any] = {
            "path": h.path, "lines": [h.start, h.end], "score": round(h.score, 4),
            "name": self.name, "heading": h.heading, "passage": self.passage}
        if self.description:
            out["description"] = self.description
        if self.cut:
            out["passage_cut"] = True
        if self.outlinks or self.inlinks or self.sources:
            out["links"] = {"out": [n.to_json() for n in self.outlinks],
                            "out_total": self.outlinks_total,
                            "in": [n.to_json() for n in self.inlinks],
                            "in_total": self.inlinks_total}
            if self.sources:
                out["links"]["sources"] = [c.to_json() for c in self.sources]
        return out


def _neighbour(info: NoteInfo, anchor: str | None = None) -> Neighbour:
    return Neighbour(info.path, cut(info.name, DESCRIPTION_CHARS)[0],
                     cut(info.description, DESCRIPTION_CHARS)[0], anchor)


def note_path(rel: str, settings: Settings) -> str | None:
    """`rel` when it names a note search may quote: a plain workspace path (no `..`, nothing
    absolute) in daily/, resource/ or digest/, through no hidden folder. Paths come from the
    index (derived data, which a tampered `.remelink/` may forge) and from links a note
    writes (`[[daily/../.env#L1-L9]]` in a crafted node's Sources would otherwise quote the
    vault's `.env` or `.remelink/` files, which `read` refuses)."""
    try:
        clean = normalize_relpath(rel)
    except RemelinkError:
        return None
    if any(p.startswith(".") for p in clean.split("/")):
        return None
    return clean if folder_of(clean, settings) is not None else None


def _read(index: PassageIndex, rel: str) -> Note | None:
    clean = note_path(rel, index.settings)
    if clean is None or hidden_inside(vault_real(index.vault),
                                      os.path.realpath(index.vault / clean)):
        return None
    try:
        return read_note(index.vault, clean, max_bytes=index.settings.max_note_bytes)
    except NoteError:
        return None


def expand(index: PassageIndex, hit: Hit, *, links: bool = True) -> Expanded:
    info = index.note(hit.path)
    note = _read(index, hit.path)
    lines = note.text.splitlines() if note is not None else []
    text, was_cut = cut("\n".join(lines[hit.start - 1:hit.end]), PASSAGE_CHARS)
    out = Expanded(hit, info.name if info else "", cut(info.description if info else "",
                                                       DESCRIPTION_CHARS)[0], text, was_cut)
    if not links or info is None:
        return out
    if hit.folder == "digest" and note is not None:
        out.sources = sources(index, note)
    cited_paths = {c.path for c in out.sources}  # shown with their sentence, not twice
    seen: set[str] = set()
    for target, anchor in info.links:
        other = index.resolve(target)
        if other is None or other.path in (hit.path, *cited_paths) or other.path in seen:
            continue
        seen.add(other.path)
        if len(out.outlinks) < LINKS:
            out.outlinks.append(_neighbour(other, anchor))
    out.outlinks_total = len(seen)
    back, out.inlinks_total = index.backlinks(hit.path, LINKS)
    out.inlinks = [_neighbour(b) for b in back]
    return out


def sources(index: PassageIndex, note: Note) -> list[Cited]:
    """The daily/resource notes a digest node's `## Sources` cite, with the citing sentence
    and, for a line or heading anchor, the cited passage."""
    folders = (index.settings.folders.daily, index.settings.folders.resource)
    out: list[Cited] = []
    in_sources = False
    for section in sections(note.body, note.body_line):
        if 1 <= section.level <= 2:
            in_sources = section.level == 2 and bool(SOURCES_RE.match(section.title))
        if not in_sources:
            continue
        text = "\n".join(t for _, t in section.lines)
        by_line = {n: t for n, t in section.lines}
        for link in wl.dedupe(wl.parse_links(text, section.lines[0][0])):
            target = index.resolve(link.target)
            path = target.path if target else link.target.strip()
            if path.split("/", 1)[0] not in folders or note_path(path, index.settings) is None:
                continue
            says = wl.LINK_RE.sub(lambda m: m.group(4) or m.group(2).strip(),
                                  by_line.get(link.line, "")).strip(" -*>\t")
            passage, span = cited(index, path, link.anchor)
            out.append(Cited(path, link.anchor, cut(says, SAYS_CHARS)[0], passage, span))
            if len(out) >= SOURCES:
                return out
    return out


def cited(index: PassageIndex, rel: str, anchor: str | None
          ) -> tuple[str | None, tuple[int, int] | None]:
    """The text a link's anchor points at in `rel` (lines or a heading's section)."""
    if not anchor:
        return None, None
    note = _read(index, rel)
    if note is None:
        return None, None
    lines = note.text.splitlines()
    ranges = wl.parse_line_anchor(anchor.strip())
    if ranges:
        parts = ["\n".join(lines[max(a, 1) - 1:b]) for a, b in ranges]
        text = "\n…\n".join(p for p in parts if p)
        if not text:
            return None, None
        return cut(text, CITED_CHARS)[0], (ranges[0][0], ranges[-1][1])
    key = wl.heading_key(anchor)
    for section in sections(note.body, note.body_line):
        if section.level and wl.heading_key(section.title) == key:
            body = "\n".join(t for _, t in section.lines).strip()
            return cut(body, CITED_CHARS)[0], (section.lines[0][0], section.lines[-1][0])
    return None, None
