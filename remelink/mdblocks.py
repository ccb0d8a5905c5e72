"""Markdown blocks and code spans, as a reader of a note sees them (a CommonMark subset).

A note is a sequence of blocks: headings, paragraphs, list items (nested items and the code
under an item are blocks of their own that name their parent), fenced and indented code,
tables, quotes, HTML and rules. Every block keeps the note's own markdown: a paragraph is its
lines joined by a space (a soft line break renders as one), a code block is its lines as
written, dedented only by the indentation of its container. A code span (`` `x` ``) is an
atomic token of the text around it: nothing here splits, rewrites or strips one, and
`code_spans` finds them as CommonMark does (a run of N backticks closes only at the next run of
exactly N).

Used by the local engine to read notes and by the no-invented-commands guard (codeguard.py) to
find the code a node holds. Pure functions over strings, no third-party import.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

_FENCE_RE = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
_HEADING_RE = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT_RE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_RULE_RE = re.compile(r"^ {0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$")
_ITEM_RE = re.compile(r"^( {0,3})([-*+]|\d{1,9}[.)])([ \t]+|$)(.*)$")
_QUOTE_RE = re.compile(r"^ {0,3}> ?(.*)$")
_TABLE_SEP_RE = re.compile(r"^ {0,3}\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")
_HTML_RE = re.compile(r"^ {0,3}<(?:!--|/?[A-Za-z][\w-]*(?:\s|/?>|$))")


@dataclass(frozen=True)
class Block:
    """One block of a note.

    kind: heading | para | item | code | table | quote | html | rule.
    text: heading text; a paragraph or an item's first paragraph on one line (code spans and
    links as written); a code block's or table's or quote's lines as written (a fence with
    its delimiter lines).
    level: heading level; for an item, its nesting depth (0 = top level).
    ordered / number: a numbered item and its number.
    info: a fence's info string (`bash`).
    line: 0-based line of the body where the block starts.
    parent: index of the item this block sits under, or -1.
    heading: index of the heading whose section holds the block, or -1.
    """

    kind: str
    text: str
    level: int = 0
    ordered: bool = False
    number: int = 0
    info: str = ""
    line: int = 0
    parent: int = -1
    heading: int = -1

    @property
    def code(self) -> str:
        """A code block's content without its fence lines."""
        if self.kind != "code":
            return ""
        lines = self.text.split("\n")
        if lines and _FENCE_RE.match(lines[0]):
            close = _FENCE_RE.match(lines[-1]) if len(lines) > 1 else None
            body = lines[1:-1] if close and not close.group(3).strip() else lines[1:]
            return "\n".join(body)
        return self.text


def _indent(line: str) -> int:
    """Columns of leading whitespace (a tab goes to the next multiple of four)."""
    col = 0
    for ch in line:
        if ch == " ":
            col += 1
        elif ch == "\t":
            col += 4 - col % 4
        else:
            break
    return col


def _dedent(line: str, width: int) -> str:
    """`line` without `width` columns of leading whitespace (or all it has); a tab that spans
    the cut leaves its remaining columns as spaces. The rest of the line is kept byte for
    byte."""
    col = 0
    for i, ch in enumerate(line):
        if col >= width or ch not in " \t":
            return " " * (col - width if col > width else 0) + line[i:]
        col += 1 if ch == " " else 4 - col % 4
    return ""


def _starts_block(line: str, in_para: bool) -> bool:
    """A line that ends a paragraph before it (CommonMark's interruptions)."""
    if not line.strip():
        return True
    if _FENCE_RE.match(line) or _HEADING_RE.match(line) or _QUOTE_RE.match(line):
        return True
    if _RULE_RE.match(line):
        return True
    m = _ITEM_RE.match(line)
    if m and m.group(4).strip():
        marker = m.group(2)
        # An ordered list interrupts a paragraph only when it starts at 1.
        return not (in_para and marker[0].isdigit() and int(marker[:-1]) != 1)
    return bool(_HTML_RE.match(line))


class _Parser:
    def __init__(self) -> None:
        self.blocks: list[Block] = []

    def add(self, block: Block) -> int:
        self.blocks.append(block)
        return len(self.blocks) - 1

    def run(self, lines: list[str], base: int, depth: int, parent: int, heading: int) -> int:
        """Parse `lines` (already dedented to their container), `base` the body line of the
        first; returns the section heading in force at the end."""
        i = 0
        n = len(lines)
        while i < n:
            line = lines[i]
            if not line.strip():
                i += 1
                continue
            fence = _FENCE_RE.match(line)
            if fence:
                i = self._fence(lines, i, fence, base, parent, heading, depth)
                continue
            m = _HEADING_RE.match(line)
            if m:
                text = (m.group(2) or "").strip()
                heading = self.add(Block("heading", text, len(m.group(1)), line=base + i,
                                         parent=parent, heading=heading))
                i += 1
                continue
            if _RULE_RE.match(line) and not _ITEM_RE.match(line.replace("* ", "*", 1)):
                self.add(Block("rule", line.strip(), line=base + i, parent=parent,
                               heading=heading))
                i += 1
                continue
            if _indent(line) >= 4:
                i = self._indented(lines, i, base, parent, heading, depth)
                continue
            if _QUOTE_RE.match(line):
                start = i
                while i < n and lines[i].strip() and (_QUOTE_RE.match(lines[i]) or
                                                       not _starts_block(lines[i], True)):
                    i += 1
                self.add(Block("quote", "\n".join(x.rstrip("\n") for x in lines[start:i]),
                               line=base + start, parent=parent, heading=heading, level=depth))
                continue
            item = _ITEM_RE.match(line)
            if item and _RULE_RE.match(line) is None:
                i = self._item(lines, i, item, base, depth, parent, heading)
                continue
            if "|" in line and i + 1 < n and _TABLE_SEP_RE.match(lines[i + 1]) and \
                    "-" in lines[i + 1]:
                start = i
                i += 2
                while i < n and lines[i].strip() and "|" in lines[i]:
                    i += 1
                self.add(Block("table", "\n".join(x.rstrip() for x in lines[start:i]),
                               line=base + start, parent=parent, heading=heading, level=depth))
                continue
            if _HTML_RE.match(line):
                start = i
                if line.lstrip().startswith("<!--"):
                    while i < n and "-->" not in lines[i]:
                        i += 1
                    i += 1
                else:
                    while i < n and lines[i].strip():
                        i += 1
                self.add(Block("html", "\n".join(lines[start:i]).strip(), line=base + start,
                               parent=parent, heading=heading, level=depth))
                continue
            # A paragraph: up to a blank line or a line that starts another block.
            start = i
            i += 1
            while i < n and not _starts_block(lines[i], True):
                if _SETEXT_RE.match(lines[i]) and not _indent(lines[i]) >= 4:
                    break
                i += 1
            if i < n and _SETEXT_RE.match(lines[i]) and lines[i].strip()[0] in "=-":
                text = " ".join(x.strip() for x in lines[start:i])
                level = 1 if lines[i].strip()[0] == "=" else 2
                heading = self.add(Block("heading", text, level, line=base + start,
                                         parent=parent, heading=heading))
                i += 1
                continue
            text = " ".join(x.strip() for x in lines[start:i])
            self.add(Block("para", text, level=depth, line=base + start, parent=parent,
                           heading=heading))
        return heading

    def _fence(self, lines: list[str], i: int, m: re.Match[str], base: int, parent: int,
               heading: int, depth: int) -> int:
        pad, mark, info = len(m.group(1)), m.group(2), m.group(3)
        if mark[0] == "`" and "`" in info:
            # Not a fence (an info string may not hold a backtick): a paragraph line.
            self.add(Block("para", lines[i].strip(), level=depth, line=base + i, parent=parent,
                           heading=heading))
            return i + 1
        body = [lines[i][pad:]]
        j = i + 1
        while j < len(lines):
            close = _FENCE_RE.match(lines[j])
            if close and close.group(2)[0] == mark[0] and len(close.group(2)) >= len(mark) \
                    and not close.group(3).strip():
                body.append(lines[j].strip())
                j += 1
                break
            raw = lines[j]
            body.append(_dedent(raw, pad))
            j += 1
        self.add(Block("code", "\n".join(body), level=depth, info=info.strip(),
                       line=base + i, parent=parent, heading=heading))
        return j

    def _indented(self, lines: list[str], i: int, base: int, parent: int, heading: int,
                  depth: int) -> int:
        start = i
        end = i
        while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) >= 4):
            if lines[i].strip():
                end = i + 1
            i += 1
        text = "\n".join(_dedent(x, 4) for x in lines[start:end])
        self.add(Block("code", text, level=depth, line=base + start, parent=parent,
                       heading=heading))
        return end

    def _item(self, lines: list[str], i: int, m: re.Match[str], base: int, depth: int,
              parent: int, heading: int) -> int:
        marker = m.group(2)
        spacing = m.group(3)
        # Content starts after the marker and 1-4 spaces (5+ spaces: one space, then code).
        width = len(m.group(1)) + len(marker) + (len(spacing) if 0 < len(spacing) <= 4 else 1)
        first = m.group(4) if len(spacing) <= 4 else " " * (len(spacing) - 1) + m.group(4)
        content = [first]
        j = i + 1
        lazy = bool(first.strip()) and not _FENCE_RE.match(first)  # paragraph text open
        fence = _FENCE_RE.match(first)
        while j < len(lines):
            raw = lines[j]
            if not raw.strip():
                lazy = False
                content.append("")
                j += 1
                continue
            if _indent(raw) >= width:
                line = _dedent(raw, width)
                content.append(line)
                opened = _FENCE_RE.match(line)
                if fence is not None:
                    if opened and opened.group(2)[0] == fence.group(2)[0] and \
                            len(opened.group(2)) >= len(fence.group(2)) and \
                            not opened.group(3).strip():
                        fence = None
                elif opened:
                    fence = opened
                lazy = fence is None and not opened and _indent(line) < 4
                j += 1
                continue
            # Less indented: a sibling item or any other block ends the item; only the text
            # of an open paragraph may continue lazily.
            if not lazy or _starts_block(raw, False):
                break
            content.append(raw.strip())
            j += 1
        while content and not content[-1].strip():
            content.pop()
        ordered = marker[0].isdigit()
        number = int(marker[:-1]) if ordered else 0
        # The item's text is its first paragraph; what follows it are its children.
        k = 0
        if content and content[0].strip() and _indent(content[0]) < 4 and \
                not _starts_block(content[0], False):
            k = 1
            while k < len(content) and not _starts_block(content[k], True):
                k += 1
        text = " ".join(x.strip() for x in content[:k])
        index = self.add(Block("item", text, depth, ordered, number, line=base + i,
                               parent=parent, heading=heading))
        self.run(content[k:], base + i + k, depth + 1, index, heading)
        return j


def parse(body: str) -> list[Block]:
    """The blocks of a note body (frontmatter already removed), in order."""
    lines = body.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    parser = _Parser()
    parser.run(lines, 0, 0, -1, -1)
    return parser.blocks


# -- code spans --------------------------------------------------------------------------------
_TICKS_RE = re.compile(r"`+")


def code_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, content) of each inline code span of `text`: from a run of N backticks to
    the next run of exactly N; a backslash-escaped opening backtick opens nothing. The content
    is as CommonMark gives it: line breaks as spaces, one space stripped from both ends when
    both ends have one and it is not all spaces."""
    out: list[tuple[int, int, str]] = []
    pos = 0
    while True:
        m = _TICKS_RE.search(text, pos)
        if m is None:
            return out
        start = m.start()
        backslashes = len(text[:start]) - len(text[:start].rstrip("\\"))
        if backslashes % 2 == 1:
            # `\`` is a literal backtick; the rest of the run may still open a span.
            pos = start + 1
            if m.end() - start == 1:
                continue
            m = _TICKS_RE.match(text, start + 1)
            if m is None:
                continue
            start = m.start()
        run = m.end() - m.start()
        close = _TICKS_RE.search(text, m.end())
        while close is not None and close.end() - close.start() != run:
            close = _TICKS_RE.search(text, close.end())
        if close is None:
            pos = m.end()
            continue
        content = text[m.end():close.start()].replace("\n", " ")
        if len(content) > 2 and content[0] == " " and content[-1] == " " and content.strip():
            content = content[1:-1]
        out.append((start, close.end(), content))
        pos = close.end()


def mask_code(text: str) -> str:
    """`text` with every code span blanked (same length): for rules that read prose only."""
    out = list(text)
    for start, end, _ in code_spans(text):
        out[start:end] = " " * (end - start)
    return "".join(out)


def unquote(text: str) -> str:
    """A quote block's content without its `>` markers."""
    return "\n".join(_QUOTE_RE.sub(r"\1", x) if _QUOTE_RE.match(x) else x
                     for x in text.split("\n"))


def iter_code(body: str) -> Iterator[tuple[str, str]]:
    """The code a markdown body holds, as (kind, text): `span` for each inline code span of a
    paragraph, item, heading, table or quote, `line` for each non-blank line of a code block
    (fence delimiters left out)."""
    for block in parse(body):
        if block.kind == "code":
            for line in block.code.split("\n"):
                if line.strip():
                    yield "line", line
        elif block.kind == "quote":
            yield from iter_code(unquote(block.text))
        elif block.kind in ("para", "item", "heading", "table"):
            for _, _, content in code_spans(block.text):
                if content.strip():
                    yield "span", content
