"""Wikilinks: the grammar of SPEC §3.1, with code and comments excluded.

`!?[[target(#anchor)?(|alias)?]]` on one line. Not links: fenced and indented code blocks,
inline code spans, HTML comments, `\\[[` escapes, and `[[` never closed on its line.

The scanner is a small CommonMark block pass (fences, indented code, HTML comment blocks, list
and quote containers, paragraphs) followed by an inline pass per paragraph that masks code spans
and comments before matching links. It is written for speed: notes without `[[` cost one
substring test, and paragraphs without backticks, comments or backslashes go straight to one
regex. A differential test checks it against markdown-it-py with a wikilink rule.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

LINK_RE = re.compile(r"(!?)\[\[([^\[\]|#\n]*)(?:#([^\[\]|\n]*))?(?:\|([^\[\]\n]*))?\]\]")
LINE_ANCHOR_RE = re.compile(r"^L\d+(?:-L\d+)?(?:,L\d+(?:-L\d+)?)*$")

_FENCE_RE = re.compile(r"(`{3,}|~{3,})(.*)$")
_ATX_RE = re.compile(r"(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_THEMATIC_RE = re.compile(r"(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$")
_SETEXT_RE = re.compile(r"(?:=+|-+)[ \t]*$")
_LIST_RE = re.compile(r"([-+*]|\d{1,9}[.)])([ \t]+|$)")
_QUOTE_RE = re.compile(r" {0,3}>[ \t]?")
_BLOCK_ID_RE = re.compile(r"(?:^|\s)\^([A-Za-z0-9-]+)[ \t]*$")
_CODE_RUN_RE = re.compile(r"`+")
_NEXT_SPECIAL_RE = re.compile(r"[`<]")


@dataclass(frozen=True, slots=True)
class Link:
    """One wikilink occurrence. `line`/`col` are 1-based positions in the file."""

    target: str
    anchor: str | None
    alias: str | None
    embed: bool
    line: int
    col: int

    @property
    def raw(self) -> str:
        text = self.target + (f"#{self.anchor}" if self.anchor is not None else "")
        text += f"|{self.alias}" if self.alias is not None else ""
        return ("!" if self.embed else "") + f"[[{text}]]"


@dataclass(frozen=True, slots=True)
class Heading:
    level: int
    text: str
    line: int


@dataclass(slots=True)
class Outline:
    """What anchors can point at in a note: its headings, block ids and line count."""

    headings: list[Heading]
    block_ids: set[str]


def _indent_width(line: str) -> tuple[int, int]:
    """(columns of leading whitespace with tab stops of 4, characters consumed)."""
    col = 0
    i = 0
    for ch in line:
        if ch == " ":
            col += 1
        elif ch == "\t":
            col += 4 - col % 4
        else:
            break
        i += 1
    return col, i


class _Scanner:
    """One pass over a body producing paragraphs (for inline scanning) and headings."""

    __slots__ = ("block_ids", "headings", "paragraphs", "want_outline")

    def __init__(self, want_outline: bool) -> None:
        self.paragraphs: list[list[tuple[int, int, str]]] = []
        self.headings: list[Heading] = []
        self.block_ids: set[str] = set()
        self.want_outline = want_outline

    def run(self, body: str, first_line: int) -> None:
        fence: tuple[str, int, int] | None = None  # (char, length, indent)
        in_comment = False
        para: list[tuple[int, int, str]] = []
        prev = "blank"  # blank | para | other | code
        lists: list[int] = []  # content columns of open list items
        want_outline = self.want_outline
        lineno = first_line - 1
        for raw in body.split("\n"):
            lineno += 1
            line = raw[:-1] if raw.endswith("\r") else raw
            offset = 0
            # Block quote markers are container prefixes; strip them.
            if line[:4].lstrip(" ").startswith(">"):
                m = _QUOTE_RE.match(line)
                while m:
                    offset += m.end()
                    m = _QUOTE_RE.match(line, offset)
            rest = line[offset:] if offset else line
            if fence is not None:
                stripped = rest.lstrip(" \t")
                if stripped.startswith(fence[0] * fence[1]):
                    fm = _FENCE_RE.match(stripped)
                    if fm and fm.group(1)[0] == fence[0] and not fm.group(2).strip():
                        fence = None
                        prev = "other"
                continue
            if in_comment:
                if "-->" in rest:
                    in_comment = False
                    prev = "other"
                continue
            if not rest.strip():
                if para:
                    self._flush(para)
                    para = []
                prev = "blank"
                continue
            indent, consumed = _indent_width(rest)
            # Leave list items whose content column this line does not reach (unless lazy).
            while lists and indent < lists[-1] and prev != "para":
                lists.pop()
            base = lists[-1] if lists and indent >= lists[-1] else 0
            if indent - base >= 4:
                if prev == "para":
                    para.append((lineno, offset + consumed, rest[consumed:]))
                else:
                    prev = "code"
                continue
            col = offset + consumed
            text = rest[consumed:]
            # Container: list item markers (possibly several, "- 1. item").
            while True:
                lm = _LIST_RE.match(text)
                if not lm or _THEMATIC_RE.match(text):
                    break
                marker_end = lm.end(1)
                spaces = lm.group(2)
                after = text[lm.end():]
                if prev == "para" and (not after.strip() or (lm.group(1)[0].isdigit()
                                                              and lm.group(1)[:-1] != "1")):
                    break  # cannot interrupt a paragraph: it is continuation text
                if para:
                    self._flush(para)
                    para = []
                pad = len(spaces.expandtabs(4)) if spaces else 1
                if pad > 4 or not after.strip():
                    pad = 1
                content_col = indent + marker_end + pad
                lists.append(content_col)
                col += lm.end()
                text = after
                indent = content_col
                prev = "blank"
                if not text.strip():
                    break
            if not text.strip():
                continue
            first = text[0]
            if first in "`~":
                fm = _FENCE_RE.match(text)
                if fm and not (first == "`" and "`" in fm.group(2)):
                    if para:
                        self._flush(para)
                        para = []
                    fence = (first, len(fm.group(1)), indent)
                    continue
            elif first == "#":
                hm = _ATX_RE.match(text)
                if hm:
                    if para:
                        self._flush(para)
                        para = []
                    title = (hm.group(2) or "").strip()
                    if want_outline:
                        self.headings.append(Heading(len(hm.group(1)), title, lineno))
                    if title:
                        self.paragraphs.append([(lineno, col + text.find(title), title)])
                    prev = "other"
                    continue
            elif first == "<" and text.startswith("<!--"):
                if para:
                    self._flush(para)
                    para = []
                end = text.find("-->", 4)
                if end == -1:
                    in_comment = True
                prev = "other"
                continue
            if first in "-=" and prev == "para" and _SETEXT_RE.match(text):
                if want_outline and para:
                    title = " ".join(seg[2].strip() for seg in para)
                    self.headings.append(Heading(1 if first == "=" else 2, title, para[0][0]))
                self._flush(para)
                para = []
                prev = "other"
                continue
            if first in "-*_" and _THEMATIC_RE.match(text):
                if para:
                    self._flush(para)
                    para = []
                prev = "other"
                continue
            para.append((lineno, col, text))
            prev = "para"
        if para:
            self._flush(para)

    def _flush(self, para: list[tuple[int, int, str]]) -> None:
        self.paragraphs.append(para)
        if self.want_outline:
            last = para[-1][2]
            if "^" in last:
                m = _BLOCK_ID_RE.search(last)
                if m:
                    self.block_ids.add(m.group(1))


def _mask_code_and_comments(text: str) -> str:
    """Replace inline code spans and HTML comments by spaces (same length, newlines kept).

    One left-to-right pass, so whichever construct opens first wins, as in CommonMark: a
    backtick run opens a code span only if a run of the same length closes it; `<!--` opens a
    comment only if `-->` follows in the same paragraph.
    """
    chars = list(text)
    n = len(text)
    i = 0
    while i < n:
        ch = text[i]
        if ch == "`" and not _is_escaped(text, i):
            j = i
            while j < n and text[j] == "`":
                j += 1
            size = j - i
            k = j
            close = -1
            while True:
                k = text.find("`" * size, k)
                if k == -1:
                    break
                e = k + size
                if (k == 0 or text[k - 1] != "`") and (e >= n or text[e] != "`"):
                    close = e
                    break
                while k < n and text[k] == "`":
                    k += 1
            if close == -1:
                i = j
                continue
            for p in range(i, close):
                if chars[p] != "\n":
                    chars[p] = " "
            i = close
        elif ch == "<" and text.startswith("<!--", i):
            e = text.find("-->", i + 4)
            if e == -1:
                i += 4
                continue
            for p in range(i, e + 3):
                if chars[p] != "\n":
                    chars[p] = " "
            i = e + 3
        else:
            nxt = _NEXT_SPECIAL_RE.search(text, i + 1)
            i = nxt.start() if nxt else n
    return "".join(chars)


def _is_escaped(text: str, pos: int) -> bool:
    n = 0
    pos -= 1
    while pos >= 0 and text[pos] == "\\":
        n += 1
        pos -= 1
    return n % 2 == 1


def _clean(part: str | None) -> str | None:
    if part is None:
        return None
    part = part.strip()
    # Obsidian tables escape the alias pipe as `\|`; the backslash is not part of the name.
    if part.endswith("\\"):
        part = part[:-1].rstrip()
    return part


def _links_in_paragraph(para: list[tuple[int, int, str]], out: list[Link]) -> None:
    if len(para) == 1:
        text = para[0][2]
    else:
        text = "\n".join(seg[2] for seg in para)
    if "[[" not in text:
        return
    if "`" in text or "<!--" in text:
        text = _mask_code_and_comments(text)
    check_escape = "\\" in text
    starts: list[int] | None = None
    for m in LINK_RE.finditer(text):
        pos = m.start()
        bracket = pos + 1 if m.group(1) else pos
        if check_escape and _is_escaped(text, bracket):
            continue
        embed = bool(m.group(1)) and not (check_escape and _is_escaped(text, pos))
        target = _clean(m.group(2)) or ""
        anchor = _clean(m.group(3))
        if not target and not anchor:
            continue
        if len(para) == 1:
            lineno, col0 = para[0][0], para[0][1]
            col = col0 + pos + 1
        else:
            if starts is None:
                starts = []
                acc = 0
                for seg in para:
                    starts.append(acc)
                    acc += len(seg[2]) + 1
            k = _bisect_right(starts, pos) - 1
            lineno, col0 = para[k][0], para[k][1]
            col = col0 + (pos - starts[k]) + 1
        alias = m.group(4)
        out.append(Link(target=target, anchor=anchor, alias=alias.strip() if alias is not None else None,
                        embed=embed, line=lineno, col=col))


def _bisect_right(seq: list[int], x: int) -> int:
    lo, hi = 0, len(seq)
    while lo < hi:
        mid = (lo + hi) // 2
        if x < seq[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


def parse_links(body: str, first_line: int = 1) -> list[Link]:
    """Every wikilink occurrence in `body` (whose first line is file line `first_line`), in order."""
    if "[[" not in body:
        return []
    scanner = _Scanner(want_outline=False)
    scanner.run(body, first_line)
    out: list[Link] = []
    for para in scanner.paragraphs:
        _links_in_paragraph(para, out)
    return out


def dedupe(links: list[Link]) -> list[Link]:
    """Edges of one note: de-duplicated on (target, anchor), first occurrence kept (SPEC §3.1)."""
    seen: set[tuple[str, str | None]] = set()
    out = []
    for link in links:
        key = (link.target, link.anchor)
        if key not in seen:
            seen.add(key)
            out.append(link)
    return out


def outline(body: str, first_line: int = 1) -> Outline:
    """Headings and block ids of a note body (code blocks excluded)."""
    scanner = _Scanner(want_outline=True)
    scanner.run(body, first_line)
    return Outline(headings=scanner.headings, block_ids=_block_ids(scanner, body))


@dataclass(slots=True)
class Scan:
    """Everything one pass over a body yields: links, headings, block ids and the paragraphs
    (each a list of `(line, col, text)` segments, list and quote markers removed)."""

    links: list[Link]
    outline: Outline
    paragraphs: list[list[tuple[int, int, str]]]


def scan(body: str, first_line: int = 1) -> Scan:
    """Links, outline and paragraphs in one pass (for digest nodes, which need all three)."""
    scanner = _Scanner(want_outline=True)
    scanner.run(body, first_line)
    out: list[Link] = []
    for para in scanner.paragraphs:
        _links_in_paragraph(para, out)
    return Scan(out, Outline(scanner.headings, _block_ids(scanner, body)), scanner.paragraphs)


def _block_ids(scanner: _Scanner, body: str) -> set[str]:
    ids = set(scanner.block_ids)
    # A block id may also sit at the end of any line of a block (Obsidian lists and tables).
    if "^" in body:
        for para in scanner.paragraphs:
            for _, _, seg in para:
                if "^" in seg:
                    m = _BLOCK_ID_RE.search(seg)
                    if m:
                        ids.add(m.group(1))
    return ids


def paragraph_text(para: list[tuple[int, int, str]]) -> str:
    return para[0][2] if len(para) == 1 else "\n".join(seg[2] for seg in para)


def mask_code(text: str) -> str:
    """`text` with inline code spans and HTML comments blanked out (positions kept)."""
    if "`" in text or "<!--" in text:
        return _mask_code_and_comments(text)
    return text


_HEADING_FOLD_RE = re.compile(r"[#|^:%\[\]\\\s]+")


def heading_key(text: str) -> str:
    """How Obsidian compares a heading with a link anchor: case-insensitive, whitespace folded,
    and the characters a link cannot carry (`# | ^ : % [ ] \\`) treated as spaces."""
    import unicodedata

    text = unicodedata.normalize("NFC", text)
    # Links inside a heading are written as their display text in the anchor.
    text = LINK_RE.sub(lambda m: m.group(4) or m.group(2), text)
    return _HEADING_FOLD_RE.sub(" ", text).strip().casefold()


def parse_line_anchor(anchor: str) -> list[tuple[int, int]] | None:
    """`L9`, `L9-L12`, `L9-L10,L15-L20` as inclusive ranges, or None if not a line anchor."""
    if not LINE_ANCHOR_RE.match(anchor):
        return None
    ranges = []
    for part in anchor.split(","):
        a, _, b = part.partition("-")
        start = int(a[1:])
        end = int(b[1:]) if b else start
        ranges.append((start, end))
    return ranges
