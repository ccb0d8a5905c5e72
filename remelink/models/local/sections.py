"""Note structure for the local engine's extraction: the note's title, its sections (by
heading, fenced code left out) and the blocks of a section (numbered items, bullets,
paragraphs)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from remelink.models.local import fenced
from remelink.vault.notes import Note


@dataclass
class Section:
    heading: str
    level: int
    lines: list[str] = field(default_factory=list)


def title_of(note: Note, meta: dict[str, object]) -> str:
    for line in note.body.splitlines():
        m = re.match(r"#\s+(.+?)\s*#*\s*$", line)
        if m:
            return m.group(1).strip()
    for key in ("name", "title"):
        value = meta.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return note.path.rsplit("/", 1)[-1].rsplit(".", 1)[0]


def sections(body: str, first_line: int = 1, path: str = "") -> list[Section]:
    """The body's sections by heading; a fenced block is one folded line (fenced.py) of the
    section it is in (a `#` inside it is no heading)."""
    sections = [Section("", 0)]
    for line, block in fenced.split_body(body.replace("\r\n", "\n").split("\n"), first_line,
                                         path):
        if block:
            sections[-1].lines.append(line)
            continue
        m = re.match(r"(#{1,6})\s+(.+?)\s*#*\s*$", line)
        if m:
            sections.append(Section(m.group(2).strip(), len(m.group(1))))
            continue
        sections[-1].lines.append(line)
    return sections


def blocks(lines: Sequence[str]) -> list[tuple[str, str]]:
    """(kind, text) blocks: `num` numbered item, `item` bullet, `para` paragraph."""
    out: list[tuple[str, str]] = []
    current_kind, current = "", []  # type: ignore[var-annotated]
    for line in [*lines, ""]:
        if fenced.has_block(line):
            # A block belongs to the line it follows ("Bump the image:"), whole.
            if current:
                current.append(line.strip())
                out.append((current_kind, " ".join(s.strip() for s in current)))
                current = []
            elif out:
                out[-1] = (out[-1][0], f"{out[-1][1]} {line.strip()}")
            else:
                out.append(("para", line.strip()))
            continue
        num = re.match(r"\s*\d+[.)]\s+(.*)", line)
        item = re.match(r"\s*[-*+]\s+(.*)", line)
        if not line.strip() or num or item:
            if current:
                out += _flush(current_kind, current)
                current = []
            if num:
                current_kind, current = "num", [num.group(1)]
            elif item:
                current_kind, current = "item", [item.group(1)]
            continue
        if current and current_kind in ("num", "item") and line.startswith((" ", "\t")):
            current.append(line)
            continue
        if current and current_kind != "para":
            out += _flush(current_kind, current)
            current = []
        current_kind = "para"
        current.append(line)
    return [(k, t) for k, t in out if t.strip()]


# The end of a sentence at the end of a line (a closing bracket or quote may follow it).
_LINE_END_RE = re.compile(r"[.!?。！？][)）\]\"”'’]?$")


def _flush(kind: str, lines: list[str]) -> list[tuple[str, str]]:
    """One block of `lines`; a paragraph whose every line ends a sentence is a line per
    statement, as people write a 1:1's or a standup's notes ("He'd rather ... Slack threads get
    lost." / "He wants to own the runbook. Yes, go."): each line its own block, so one line's
    topic is not run into the next. (Prose wrapped at a width ends few of its lines on a
    sentence's end.)"""
    if kind == "para" and len(lines) >= 2 and all(_LINE_END_RE.search(line.rstrip())
                                                  for line in lines):
        return [("para", line.strip()) for line in lines]
    return [(kind, " ".join(s.strip() for s in lines))]
