"""Notes as the passage index sees them (SPEC §5.1): which files, and the documents of one.

Reading never crashes on bad content (as for the node index, `remelink.index.nodes`): invalid
frontmatter is indexed without it, with a notice; a file that is not UTF-8 is indexed with
replacement characters; binary and oversized files are skipped with a notice. Every read goes
through the node index's reader (`nodes.load_note`, which reads through the vault boundary), on
a path the walk found inside the vault. No Whoosh here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from remelink.config import Settings
from remelink.errors import NoteError
from remelink.index.nodes import FileStat, load_note, scan_digest
from remelink.search.passages import index_text, split
from remelink.vault.notes import Note
from remelink.vault.paths import nfc

NOTE_SUFFIXES = (".md", ".markdown")
RESOURCE_SUFFIXES = (*NOTE_SUFFIXES, ".txt")  # SPEC §1: other resource types are not read
_DAY_RE = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:\.(?:md|markdown))?$")
# The first `# ` heading line; its closing `#`s are stripped in Python (a lazy `(.+?)` before
# `[ \t#]*$` rescanned the line's tail at every character: quadratic, as in index/nodes.py).
_H1_RE = re.compile(r"^#[ \t]+(.+)$", re.M)


@dataclass(frozen=True, slots=True)
class NoteRead:
    """A note read for the passage index: `doc` is None when it cannot be indexed."""

    path: str
    fingerprint: str
    doc: Any  # engine.NoteDocs | None (Whoosh-free module: typed loosely)
    notice: str | None = None
    unchanged: bool = False


def folder_of(rel: str, settings: Settings) -> str | None:
    """`daily`, `resource` or `digest` for a path in one of the configured folders."""
    top = rel.split("/", 1)[0]
    f = settings.folders
    return {f.daily: "daily", f.resource: "resource", f.digest: "digest"}.get(top)


def day_of(rel: str) -> str | None:
    """The date in a note's path (SPEC §8): `daily/<d>.md`, `daily/<d>/...`,
    `resource/<d>/...`; None for other notes."""
    parts = rel.split("/")
    if len(parts) < 2:
        return None
    m = _DAY_RE.match(parts[1])
    if m is None or (len(parts) == 2 and not parts[1].endswith((".md", ".markdown"))):
        return None
    return m.group(1)


def scan(root: Path, settings: Settings) -> dict[str, FileStat]:
    """Every note of the vault: daily/ and digest/ markdown, resource/ markdown and text."""
    f = settings.folders
    out: dict[str, FileStat] = {}
    for folder, suffixes in ((f.daily, NOTE_SUFFIXES), (f.resource, RESOURCE_SUFFIXES),
                             (f.digest, NOTE_SUFFIXES)):
        out.update(scan_digest(root, folder, suffixes))
    return out


def title_of(meta: dict[str, Any], body: str, rel: str) -> str:
    name = meta.get("name")
    if isinstance(name, (str, int, float)) and str(name).strip():
        return " ".join(str(name).split())
    heading = _H1_RE.search(body)
    if heading:
        raw = heading.group(1)
        return raw.rstrip(" \t#").strip() or raw.strip()
    stem = rel.rsplit("/", 1)[-1]
    return stem.rsplit(".", 1)[0] if "." in stem else stem


def _text(value: Any) -> str:
    if value is None or isinstance(value, (dict, list, tuple)):
        return ""
    return " ".join(str(value).split())


def _tags(value: Any) -> list[str]:
    items = value if isinstance(value, (list, tuple)) else [value] if value else []
    return [t for t in (_text(v) for v in items) if t]


def link_keys(target: str) -> list[str]:
    """The `links_to` terms of a link target: its path as written (normalised), and its name
    (for vaults whose links name notes, `links.resolution: obsidian`)."""
    t = nfc(target.strip()).removeprefix("./")
    if not t:
        return []
    name = t.rsplit("/", 1)[-1]
    for ext in NOTE_SUFFIXES:
        if name.endswith(ext):
            name = name[: -len(ext)]
    return [t, f"name:{name.casefold()}"]


def note_keys(rel: str) -> list[str]:
    """The `links_to` terms that point at note `rel` (its backlinks are the notes holding
    one of them)."""
    keys = link_keys(rel)
    stem = rel
    for ext in NOTE_SUFFIXES:
        if rel.endswith(ext):
            stem = rel[: -len(ext)]
    return [*keys, stem] if stem != rel else keys


def parse(note: Note, settings: Settings) -> tuple[dict[str, Any], list[str]]:
    """The frontmatter of a note ({} when unreadable) and notices."""
    from remelink.vault import frontmatter  # PyYAML: only when a note is actually read

    try:
        return frontmatter.load(note), []
    except NoteError as exc:
        return {}, [f"{exc}; indexed without its frontmatter"]


def documents(note: Note, meta: dict[str, Any], settings: Settings, fp: str) -> Any:
    """The passage and note documents of a decoded note."""
    from remelink.search.engine import LIST_SEP, NoteDocs, passage_text
    from remelink.vault import links as wl

    rel = note.path
    folder = folder_of(rel, settings) or ""
    day = day_of(rel)
    title = title_of(meta, note.body, rel)
    description = _text(meta.get("description"))
    tags = _tags(meta.get("memory_tags"))
    context = " ".join([description, *tags]).strip()
    common: dict[str, Any] = {"path": rel, "folder": folder}
    if day:
        common["day"] = day
    docs: list[dict[str, Any]] = []
    for p in split(note.body, note.body_line, digest=folder == "digest"):
        docs.append({**common, "kind": "passage", "start": p.start, "end": p.end,
                     "heading": p.heading,
                     "text": passage_text(title, context, p.heading, index_text(p))})
    edges = wl.dedupe(wl.parse_links(note.body, note.body_line))
    targets: list[tuple[str, str | None]] = [(e.target, e.anchor) for e in edges
                                              if e.target.strip()]
    keys: dict[str, None] = {}
    for target, _ in targets:
        for key in link_keys(target):
            keys[key] = None
    note_doc: dict[str, Any] = {"path": rel, "kind": "note", "name": title,
                                "description": description, "links": [list(t) for t in targets],
                                "fingerprint": fp, "key": LIST_SEP.join(note_keys(rel))}
    if keys:
        note_doc["links_to"] = LIST_SEP.join(keys)
    docs.append(note_doc)
    return NoteDocs(rel, tuple(docs))


def read(rel: str, stat: FileStat, settings: Settings, *, known: str | None = None) -> NoteRead:
    """Read one note for the passage index. Never raises for bad content."""
    loaded = load_note(rel, stat, settings.max_note_bytes, "searched", known=known)
    note = loaded.note
    if note is None:
        return NoteRead(rel, loaded.fingerprint, None, loaded.notice, loaded.unchanged)
    fp = loaded.fingerprint
    notices = [loaded.notice] if loaded.notice else []
    meta, more = parse(note, settings)
    notices += more
    return NoteRead(rel, fp, documents(note, meta, settings, fp), "; ".join(notices) or None)
