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
from bisect import bisect_right
from dataclasses import dataclass

LINK_RE = re.compile(r"(!?)\[\[([^\[\]|#\n]*)(?:#([^\[\]|\n]*))?(?:\|([^\[\]\n]*))?\]\]")
# LINK_RE without its leading `(!?)`: a pattern that starts with a literal lets the regex engine
# jump from `[[` to `[[` (4x faster over a vault); the `!` of an embed is checked by hand.
_BRACKETS_RE = re.compile(r"\[\[([^\[\]|#\n]*)(?:#([^\[\]|\n]*))?(?:\|([^\[\]\n]*))?\]\]")
# A markdown link or image, `[words](url)` / `![alt](url)` (group 1: its words); the URL may
# hold one level of brackets (Wikipedia's `Foo_(bar)`), never a space. Linear: no part holds
# the bracket that closes it.
WEB_LINK_RE = re.compile(r"!?\[([^\[\]\n]{0,300})\]\((?:[^()\s]|\([^()\s]*\)){1,2000}\)")
LINE_ANCHOR_RE = re.compile(r"^L\d+(?:-L\d+)?(?:,L\d+(?:-L\d+)?)*$")

_FENCE_RE = re.compile(r"(`{3,}|~{3,})(.*)$")
_ATX_RE = re.compile(r"(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_THEMATIC_RE = re.compile(r"(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$")
_SETEXT_RE = re.compile(r"(?:=+|-+)[ \t]*$")
_LIST_RE = re.compile(r"([-+*]|\d{1,9}[.)])([ \t]+|$)")
_BLOCK_ID_RE = re.compile(r"(?:^|\s)\^([A-Za-z0-9-]+)[ \t]*$")
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


_QUOTE = -1  # a block quote on the container stack; list items are stored as their width
# Every character that can open a block or a container in `_Scanner.run` (indentation, quote,
# list markers, fences, ATX headings, HTML comments, setext underlines, thematic breaks). A line
# starting with anything else, outside any container or fence, is paragraph text: keep this set
# in step with the block starts that `run` recognises.
_BLOCK_START = " \t>-+*0123456789`~#<=_"
_NO_LEAF, _FENCE, _COMMENT = 0, 1, 2
_CONTAINER_CHARS = frozenset(">-+*0123456789")
_LEAF_CHARS = frozenset("`~#<=-*_")


def _skip_ws(line: str, pos: int, col: int) -> tuple[int, int, int]:
    """Skip spaces and tabs from `pos` (at virtual column `col`, tab stops of 4):
    (columns skipped, new pos, new column)."""
    start = col
    n = len(line)
    while pos < n:
        ch = line[pos]
        if ch == " ":
            col += 1
        elif ch == "\t":
            col += 4 - col % 4
        else:
            break
        pos += 1
    return col - start, pos, col


def _consume(line: str, pos: int, col: int, width: int) -> tuple[int, int]:
    """Consume `width` columns of indentation (a tab that straddles the limit is taken whole)."""
    goal = col + width
    while col < goal and pos < len(line):
        ch = line[pos]
        if ch == " ":
            col += 1
        elif ch == "\t":
            col += 4 - col % 4
        else:
            break
        pos += 1
    return pos, col


class _Scanner:
    """One pass over a body producing paragraphs (for inline scanning) and headings.

    A CommonMark block pass reduced to what decides where links can be: block quotes and list
    items as containers (a fence or comment block ends with its container), fenced code,
    indented code, HTML comment blocks, ATX and setext headings, thematic breaks and paragraphs
    with lazy continuation lines. Other HTML blocks stay prose (SPEC §3.1 excludes comments only).
    """

    __slots__ = ("block_ids", "headings", "paragraphs", "want_outline")

    def __init__(self, want_outline: bool) -> None:
        self.paragraphs: list[list[tuple[int, int, str]]] = []
        self.headings: list[Heading] = []
        self.block_ids: set[str] = set()
        self.want_outline = want_outline

    def run(self, body: str, first_line: int) -> None:
        stack: list[int] = []  # open containers, outermost first
        leaf = _NO_LEAF
        fence_char, fence_len = "", 0
        para: list[tuple[int, int, str]] = []
        paragraphs = self.paragraphs
        want_outline = self.want_outline
        lineno = first_line - 1
        block_start = _BLOCK_START
        crlf = "\r" in body
        for raw in body.split("\n"):
            lineno += 1
            line = raw[:-1] if crlf and raw.endswith("\r") else raw
            if not leaf:
                # Fast paths for the common lines outside any fence or comment (what the full
                # pass below concludes for them): outside any container, a line opening with
                # none of the block-start characters is paragraph text; a blank line that no
                # block quote has to close (list items continue over it) ends the paragraph.
                if not stack and line and line[0] not in block_start:
                    para.append((lineno, 0, line))
                    continue
                if not line.strip(" \t") and _QUOTE not in stack:
                    if para:
                        self._flush(para)
                        para = []
                    continue
            end = len(line)
            pos = col = 0
            # 1. Which open containers does this line continue?
            matched = depth = len(stack)
            if depth:
                matched = 0
                while matched < depth:
                    width = stack[matched]
                    if pos < end and line[pos] not in " \t":
                        ind, p, c = 0, pos, col  # no indentation: skip the call
                    else:
                        ind, p, c = _skip_ws(line, pos, col)
                    if width == _QUOTE:
                        if ind > 3 or p == end or line[p] != ">":
                            break
                        pos, col = p + 1, c + 1
                        if pos < end and line[pos] in " \t":
                            col = col + 1 if line[pos] == " " else col + 4 - col % 4
                            pos += 1
                    elif p == end:
                        pass  # a blank line continues a list item
                    elif ind >= width:
                        pos, col = _consume(line, pos, col, width)
                    else:
                        break
                    matched += 1
            all_matched = matched == depth
            # 2. Inside a fence or a comment block only the end matters.
            if leaf:
                if all_matched:
                    if leaf == _FENCE:
                        ind, p, _ = _skip_ws(line, pos, col)
                        if ind < 4 and line.startswith(fence_char * fence_len, p) and \
                                not line[p:].rstrip(" \t").strip(fence_char):
                            leaf = _NO_LEAF
                    elif "-->" in line[pos:]:
                        leaf = _NO_LEAF
                    continue
                leaf = _NO_LEAF  # its container ended, and the block with it
            if pos < end and line[pos] not in " \t":
                ind, p, c = 0, pos, col
            else:
                ind, p, c = _skip_ws(line, pos, col)
            # 3. New containers opened on this line.
            new: list[int] | None = None
            if ind < 4 and p < end and line[p] in _CONTAINER_CHARS:
                new, p, c = self._open_containers(line, p, c, ind, bool(para) and all_matched)
                if new and p < end and line[p] in " \t":
                    ind, p, c = _skip_ws(line, p, c)
                elif new:
                    ind = 0
            # 4. Lazy continuation, or close what the line did not continue.
            if not all_matched:
                if para and not new and p < end and (ind > 3 or not _starts_leaf(line, p)):
                    para.append((lineno, p, line[p:]))
                    continue
                del stack[matched:]
                if para:
                    self._flush(para)
                    para = []
            if new:
                stack.extend(new)
                if para:
                    self._flush(para)
                    para = []
            # 5. The leaf block.
            if p == end:  # blank
                if para:
                    self._flush(para)
                    para = []
                continue
            if ind > 3:
                if para:  # indented code cannot interrupt a paragraph
                    para.append((lineno, p, line[p:]))
                continue
            first = line[p]
            if first in _LEAF_CHARS:
                text = line[p:]
                if first in "`~":
                    fm = _FENCE_RE.match(text)
                    if fm and not (first == "`" and "`" in fm.group(2)):
                        if para:
                            self._flush(para)
                            para = []
                        leaf = _FENCE
                        fence_char, fence_len = first, len(fm.group(1))
                        continue
                elif first == "#":
                    hm = _ATX_RE.match(text)
                    if hm:
                        if para:
                            self._flush(para)
                            para = []
                        title = (hm.group(2) or "").strip(" \t")
                        if want_outline:
                            self.headings.append(Heading(len(hm.group(1)), title, lineno))
                        if title:
                            paragraphs.append([(lineno, p + text.find(title), title)])
                        continue
                elif first == "<" and text.startswith("<!--"):
                    if para:
                        self._flush(para)
                        para = []
                    if text.find("-->", 2) == -1:
                        leaf = _COMMENT
                    continue
                if para and first in "=-" and all_matched and not new and _SETEXT_RE.match(text):
                    if want_outline:
                        title = " ".join(seg[2].strip(" \t") for seg in para)
                        self.headings.append(Heading(1 if first == "=" else 2, title, para[0][0]))
                    self._flush(para)
                    para = []
                    continue
                if first in "-*_" and _THEMATIC_RE.match(text):
                    if para:
                        self._flush(para)
                        para = []
                    continue
            para.append((lineno, p, line[p:]))
        if para:
            self._flush(para)

    @staticmethod
    def _open_containers(line: str, p: int, c: int, ind: int,
                         in_paragraph: bool) -> tuple[list[int], int, int]:
        """Block quote markers and list item markers at `line[p:]` (indentation `ind` < 4):
        the containers they open and where their content starts."""
        new: list[int] = []
        end = len(line)
        npos, ncol = p, c
        while True:
            if ind > 3 or p == end:
                break
            ch = line[p]
            if ch == ">":
                new.append(_QUOTE)
                npos, ncol = p + 1, c + 1
                if npos < end and line[npos] in " \t":
                    ncol = ncol + 1 if line[npos] == " " else ncol + 4 - ncol % 4
                    npos += 1
            else:
                if ch not in "-+*0123456789":
                    break
                lm = _LIST_RE.match(line, p)
                if lm is None or (ch in "-*" and _THEMATIC_RE.match(line, p)):
                    break
                marker = lm.group(1)
                after_ind, after_p, after_c = _skip_ws(line, lm.end(1), c + len(marker))
                empty = after_p == end
                if in_paragraph and not new and (
                        empty or (marker[-1] in ".)" and int(marker[:-1]) != 1)):
                    break  # cannot interrupt a paragraph: continuation text
                if empty:
                    new.append(ind + len(marker) + 1)
                    npos, ncol = after_p, after_c
                    break
                if after_ind > 4:  # the content is indented code: the width is marker + 1
                    new.append(ind + len(marker) + 1)
                    npos, ncol = _consume(line, lm.end(1), c + len(marker), 1)
                else:
                    new.append(ind + len(marker) + after_ind)
                    npos, ncol = after_p, after_c
            if npos < end and line[npos] not in " \t":
                ind, p, c = 0, npos, ncol
            else:
                ind, p, c = _skip_ws(line, npos, ncol)
        return new, npos, ncol

    def _flush(self, para: list[tuple[int, int, str]]) -> None:
        self.paragraphs.append(para)
        if self.want_outline:
            last = para[-1][2]
            if "^" in last:
                m = _BLOCK_ID_RE.search(last)
                if m:
                    self.block_ids.add(m.group(1))


def _starts_leaf(line: str, pos: int) -> bool:
    """Does `line` (from `pos`, indentation < 4) open a block that ends a paragraph?"""
    if pos >= len(line):
        return False
    first = line[pos]
    if first in "`~":
        fm = _FENCE_RE.match(line, pos)
        return fm is not None and not (first == "`" and "`" in fm.group(2))
    if first == "#":
        return bool(_ATX_RE.match(line, pos))
    if first == "<":
        return line.startswith("<!--", pos)
    return first in "-*_" and bool(_THEMATIC_RE.match(line, pos))


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
        elif ch == "<" and text.startswith("<!--", i) and not _is_escaped(text, i):
            # `<!-->` and `<!--->` are complete (empty) comments in CommonMark 0.31.
            e = text.find("-->", i + 2)
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
    single = len(para) == 1
    text = para[0][2] if single else "\n".join(seg[2] for seg in para)
    if "[[" not in text:
        return
    raw = None
    if "`" in text or "<!--" in text:
        raw, text = text, _mask_code_and_comments(text)
    check_escape = "\\" in text
    starts: list[int] | None = None
    lineno, col0 = para[0][0], para[0][1]
    for m in _BRACKETS_RE.finditer(text):
        if raw is not None and raw[m.start():m.end()] != text[m.start():m.end()]:
            continue  # a code span or comment opens inside: it binds tighter (CommonMark)
        target, anchor, alias = m.groups()
        pos = m.start()
        bang = pos > 0 and text[pos - 1] == "!"
        if bang:
            pos -= 1
        embed = bang
        if check_escape:
            bracket = pos + 1 if bang else pos
            if _is_escaped(text, bracket):
                continue
            if embed and _is_escaped(text, pos):
                embed = False
                pos = bracket  # `\![[x]]`: a plain link; its column is that of the brackets
        # `_clean`, inlined: this loop runs for every link of the vault.
        target = target.strip()
        if target.endswith("\\"):
            target = target[:-1].rstrip()
        if anchor is not None:
            anchor = anchor.strip()
            if anchor.endswith("\\"):
                anchor = anchor[:-1].rstrip()
        if not target and not anchor:
            continue
        if single:
            out.append(Link(target, anchor, alias.strip() if alias is not None else None, embed,
                            lineno, col0 + pos + 1))
            continue
        if starts is None:
            starts = []
            acc = 0
            for seg in para:
                starts.append(acc)
                acc += len(seg[2]) + 1
        k = bisect_right(starts, pos) - 1
        out.append(Link(target, anchor, alias.strip() if alias is not None else None, embed,
                        para[k][0], para[k][1] + (pos - starts[k]) + 1))


def parse_links(body: str, first_line: int = 1) -> list[Link]:
    """Every wikilink occurrence in `body` (whose first line is file line `first_line`), in
    order."""
    if "[[" not in body:
        return []
    scanner = _Scanner(want_outline=False)
    scanner.run(body, first_line)
    return _collect_links(scanner.paragraphs)


# A markdown link to a markdown file of the vault, by a path relative to the note or to the vault
# (Obsidian writes links so with its wikilink setting off): `[Ledger design](Ledger%20Event%20
# Design.md)`, `[sync](<../2026-02-03/sync.md>)`, `[x](x.md#Decisions "title")`. Never a URL:
# a scheme or a `//` host is no path (`https://til.example/x.md`), nor an image (`![...]`).
_NOTE_LINK_RE = re.compile(
    r"(?<![!\\])\[[^\[\]]{0,300}\]\(\s*(?:<([^<>\n]+?)>|([^()\s<>]+?))(?:\s+\"[^\"\n]*\")?\s*\)")
_SCHEME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:|^//")


def parse_note_links(body: str, first_line: int = 1) -> list[tuple[str, int]]:
    """Every markdown link of `body` (whose first line is file line `first_line`) to a markdown
    file by path, outside code and comments: (its path, percent-decoded and without its
    `#anchor`, and its file line), in order. Where it points is the caller's to resolve."""
    if "](" not in body:
        return []
    from urllib.parse import unquote

    scanner = _Scanner(want_outline=False)
    scanner.run(body, first_line)
    out: list[tuple[str, int]] = []
    for para in scanner.paragraphs:
        text = paragraph_text(para)
        if "](" not in text:
            continue
        masked = mask_code(text)
        for m in _NOTE_LINK_RE.finditer(masked):
            raw = (m.group(1) or m.group(2) or "").split("#", 1)[0].strip()
            target = unquote(raw)
            if not target or _SCHEME_RE.match(target) or \
                    not target.lower().endswith((".md", ".markdown")):
                continue
            out.append((target, para[text.count("\n", 0, m.start())][0]))
    return out


def _collect_links(paragraphs: list[list[tuple[int, int, str]]]) -> list[Link]:
    out: list[Link] = []
    for para in paragraphs:
        # Most paragraphs hold no link; a link never spans lines, so test each line.
        if len(para) == 1:
            if "[[" not in para[0][2]:
                continue
        elif not any("[[" in seg[2] for seg in para):
            continue
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
    return Scan(_collect_links(scanner.paragraphs), Outline(scanner.headings,
                _block_ids(scanner, body)), scanner.paragraphs)


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


# Characters a link anchor cannot carry (`# | ^ : % [ ] \\`) and inline formatting marks
# (`* _ ` ~ =`: `## **Bold** heading` is linked as `#Bold heading` as often as with the stars).
_HEADING_FOLD_RE = re.compile(r"[#|^:%\[\]\\\s*_`~=]+")


def heading_key(text: str) -> str:
    """How a heading is compared with a link anchor: case-insensitive (Obsidian), whitespace
    folded, and the characters a link cannot carry (`# | ^ : % [ ] \\`) as well as inline
    formatting marks (`* _ ` ~ =`) treated as spaces, on both sides: a heading written with
    formatting is found by an anchor written with or without it (no false alarms)."""
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
