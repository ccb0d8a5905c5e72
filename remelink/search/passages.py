"""Notes cut into passages, the unit `remelink search` finds (SPEC §5.1). No Whoosh here.

A passage is a heading's section, or, when the section is long, a window of its paragraphs
(blank-line separated blocks; a block longer than a window is cut between lines). Every
passage keeps its 1-based, inclusive line range in the file, so a hit can be quoted, read
(`read path start end`) or linked (`[[path#L7-L12]]`).

- Headings are ATX headings outside fenced code. A section runs from its heading to the next
  heading; its passages carry the heading path (`Runbook > Rollback`) as context.
- A heading with nothing under it before the next heading is not a passage of its own: it
  is context for the sections below it.
- The `## Sources` section of a digest node is evidence metadata (link expansion shows what
  it cites), not a passage: its link names would make every node match the people and days
  it cites.
- Wikilinks are indexed as what a reader sees (their alias or the target's name).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from remelink.index.nodes import searchable_body

# A window's target size in characters: about a screenful, a few paragraphs or a few turns
# of a chat log. A section up to MAX_SECTION stays one passage.
WINDOW = 700
MAX_SECTION = 1000
# An ATX heading's opening run; its closing `#`s are stripped in Python (`atx`): a lazy
# `(.*?)` before `(?:[ \t]+#+)?[ \t]*$` rescanned the line's tail at every character,
# quadratic on a heading line of spaces (64 KB: 34 s per refresh of the passage index).
_ATX_OPEN = re.compile(r" {0,3}(#{1,6})(?=[ \t]|$)")
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
SOURCES_RE = re.compile(r"^sources$", re.I)


def atx(line: str) -> tuple[int, str] | None:
    """(level, title) of an ATX heading line (CommonMark: up to three spaces, one to six `#`,
    then a space or the end; an optional closing run of `#` after a space), else None."""
    m = _ATX_OPEN.match(line)
    if m is None:
        return None
    text = line[m.end():].rstrip(" \t")
    bare = text.rstrip("#")
    if len(bare) < len(text) and (not bare or bare[-1] in " \t"):
        text = bare
    return len(m.group(1)), text.strip(" \t")


@dataclass(frozen=True, slots=True)
class Passage:
    start: int  # 1-based file line of its first line (the heading, for a whole section)
    end: int  # 1-based file line of its last non-blank line, inclusive
    heading: str  # the heading path, e.g. "Runbook > Rollback" ("" before any heading)
    text: str  # the passage's lines, as in the file


@dataclass(frozen=True, slots=True)
class _Section:
    heading: str
    level: int  # 0: the text before the first heading
    title: str
    lines: list[tuple[int, str]]  # (file line, text), heading line included


def sections(body: str, first_line: int = 1) -> list[_Section]:
    """The body's sections in order: the text before the first heading, then one per
    heading (with the heading path of its parents)."""
    out: list[_Section] = []
    stack: list[tuple[int, str]] = []
    current: list[tuple[int, str]] = []
    level, title, path = 0, "", ""
    fence: str | None = None
    for i, line in enumerate(body.splitlines()):
        number = first_line + i
        if fence is not None:
            if line.strip().startswith(fence):
                fence = None
            current.append((number, line))
            continue
        m = _FENCE_RE.match(line)
        if m:
            fence = m.group(1)[0] * 3
            current.append((number, line))
            continue
        h = atx(line)
        if h:
            out.append(_Section(path, level, title, current))
            level, title = h
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, title))
            path = " > ".join(t for _, t in stack if t)
            current = [(number, line)]
            continue
        current.append((number, line))
    out.append(_Section(path, level, title, current))
    return out


def _blocks(lines: list[tuple[int, str]]) -> list[list[tuple[int, str]]]:
    """Paragraphs: runs of non-blank lines (a fenced block stays whole, blank lines and all)."""
    out: list[list[tuple[int, str]]] = []
    block: list[tuple[int, str]] = []
    fence: str | None = None
    for number, line in lines:
        if fence is None and _FENCE_RE.match(line):
            fence = _FENCE_RE.match(line).group(1)[0] * 3  # type: ignore[union-attr]
        elif fence is not None and line.strip().startswith(fence):
            fence = None
            block.append((number, line))
            continue
        if fence is None and not line.strip():
            if block:
                out.append(block)
                block = []
            continue
        block.append((number, line))
    if block:
        out.append(block)
    return out


def _size(lines: list[tuple[int, str]]) -> int:
    return sum(len(t) + 1 for _, t in lines)


def _windows(lines: list[tuple[int, str]], window: int) -> list[list[tuple[int, str]]]:
    """Paragraphs packed in order into windows of about `window` characters; a paragraph
    longer than that is cut between lines. (Sizes are kept as running sums: recounting the
    window at each line was quadratic in a paragraph of many short lines.)"""
    out: list[list[tuple[int, str]]] = []
    current: list[tuple[int, str]] = []
    size = 0  # _size(current)
    for block in _blocks(lines):
        block_size = _size(block)
        pieces = [(block, block_size)]
        if block_size > window:
            pieces = []
            piece: list[tuple[int, str]] = []
            piece_size = 0
            for item in block:
                n = len(item[1]) + 1
                if piece and piece_size + n > window:
                    pieces.append((piece, piece_size))
                    piece = []
                    piece_size = 0
                piece.append(item)
                piece_size += n
            if piece:
                pieces.append((piece, piece_size))
        for piece, piece_size in pieces:
            if current and size + piece_size > window:
                out.append(current)
                current = []
                size = 0
            current = current + piece if current else list(piece)
            size += piece_size
            if size >= window:
                out.append(current)
                current = []
                size = 0
    if current:
        out.append(current)
    return out


def split(body: str, first_line: int = 1, *, digest: bool = False, window: int = WINDOW,
          max_section: int = MAX_SECTION) -> list[Passage]:
    """The passages of a note body whose first line is file line `first_line`."""
    out: list[Passage] = []
    all_lines = body.splitlines()
    in_sources = False  # inside a digest node's `## Sources` (to the next level-1 or -2 heading)
    for section in sections(body, first_line):
        if digest and 1 <= section.level <= 2:
            in_sources = section.level == 2 and bool(SOURCES_RE.match(section.title))
        if in_sources:
            continue
        content = [(n, t) for n, t in section.lines]
        body_lines = content[1:] if section.level else content
        if not any(t.strip() for _, t in body_lines):
            continue  # a heading with nothing under it: context for what follows
        if _size(content) <= max_section:
            chunks = [content]
        else:
            chunks = _windows(body_lines, window)
            if section.level and chunks:  # the heading line belongs to the first window
                chunks[0] = [content[0], *chunks[0]]
        for chunk in chunks:
            while chunk and not chunk[-1][1].strip():
                chunk = chunk[:-1]
            while chunk and not chunk[0][1].strip():
                chunk = chunk[1:]
            if not chunk:
                continue
            start, end = chunk[0][0], chunk[-1][0]
            text = "\n".join(all_lines[start - first_line:end - first_line + 1])
            out.append(Passage(start, end, section.heading, text))
    return out


def index_text(passage: Passage) -> str:
    """What is indexed of a passage's own lines (links as their display text)."""
    return searchable_body(passage.text)
