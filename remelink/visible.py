"""What a reader sees of a node body: every character's rendering context (SPEC §7.2).

The guards count a line as kept only when it is still there *as it was shown*: visible prose
stays visible prose. A model could otherwise "keep" a fact by wrapping it in markup that hides
it, and pass every check. `render(body)` gives each character of `body` one context:

- PROSE: shown as text (paragraphs, headings, lists, tables, inline code, `<details>`);
- QUOTE: shown inside a block quote (a `> Corrected on ...` line is not the sentence it quotes);
- CODE: inside a fenced code block (its fence lines included);
- MATH: inside `$$ ... $$` (a block or inline);
- COMMENT: inside `<!-- ... -->` or Obsidian's `%% ... %%` (never shown);
- STRUCK: inside `~~ ... ~~` (shown crossed out: withdrawn, not kept);
- HIDDEN: inside an HTML element that is not shown (`hidden`, `display: none`,
  `visibility: hidden`, `font-size: 0`, `opacity: 0`), from its tag to its matching close;
- SPACE (0): whitespace, which matches any context.

A construct left open (`<!--`, `%%`, a hidden element without its close) hides the rest of the
body, as a renderer does; a `~~` or `$$` left open is literal text. One left-to-right pass,
linear in the body. Hidden and shown are judged as Obsidian and CommonMark renderers do, with
the conservative reading where they differ (a hidden `<div>` hides the markdown inside it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SPACE, PROSE, QUOTE, CODE, MATH, COMMENT, STRUCK, HIDDEN = range(8)
SHOWN = (PROSE, QUOTE, CODE)  # what a reader can read (and copy) as it is
NAMES = {PROSE: "visible text", QUOTE: "a quote", CODE: "a code block", MATH: "a math block",
         COMMENT: "a comment", STRUCK: "a strikethrough", HIDDEN: "a hidden element"}

_FENCE_RE = re.compile(r"[ \t]{0,3}(?:(?:[-+*]|\d{1,9}[.)])[ \t]+|>[ \t]?)*(`{3,}|~{3,})")
_QUOTE_RE = re.compile(r"[ \t]{0,3}(?:(?:[-+*]|\d{1,9}[.)])[ \t]+)*>")
_MATH_LINE_RE = re.compile(r"[ \t]*(?:>[ \t]?)*\$\$[ \t]*$")
_SPECIAL_RE = re.compile(r"[`<%~$\\]")
# A tag's attributes stop at the next `<` too: a run of `<a <a <a` is one scan, not one to
# the end of the body per `<`.
_OPEN_TAG_RE = re.compile(r"<([A-Za-z][A-Za-z0-9-]*)([^<>]*)>")
_HIDING_RE = re.compile(
    r"(?:^|\s)hidden(?:\s|=|$)|display\s*:\s*none|visibility\s*:\s*hidden|"
    r"font-size\s*:\s*0(?![.\d]*[1-9])|opacity\s*:\s*0(?![.\d]*[1-9])", re.I)
_VOID = frozenset({"br", "hr", "img", "input", "meta", "link", "area", "base", "col", "embed",
                   "source", "track", "wbr"})


@dataclass(frozen=True)
class Rendered:
    """`body` and the context of each of its characters (a bytes of the same length)."""

    body: str
    contexts: bytes

    def masked(self, keep: tuple[int, ...] = SHOWN) -> str:
        """The body with every character outside `keep` contexts blanked (newlines kept), so
        that line numbers and columns stay where they were."""
        if all(c in keep or c == SPACE for c in set(self.contexts)):
            return self.body
        out = [ch if (ctx in keep or ctx == SPACE or ch == "\n") else " "
               for ch, ctx in zip(self.body, self.contexts, strict=True)]
        return "".join(out)


def render(body: str) -> Rendered:
    ctx = bytearray(PROSE for _ in range(len(body)))
    _blocks(body, ctx)
    _inline(body, ctx)
    for i, ch in enumerate(body):
        if ch.isspace():
            ctx[i] = SPACE
    return Rendered(body, bytes(ctx))


def _blocks(body: str, ctx: bytearray) -> None:
    """Fenced code and `$$` blocks (line by line), and the quoted part of quote lines."""
    pos = 0
    fence: str | None = None  # the open fence's marker run
    math = False
    for line in body.splitlines(keepends=True):
        end = pos + len(line)
        m = _FENCE_RE.match(line)
        if fence is not None:
            ctx[pos:end] = bytes([CODE]) * (end - pos)
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and \
                    not line[m.end():].strip():
                fence = None
        elif math:
            ctx[pos:end] = bytes([MATH]) * (end - pos)
            if _MATH_LINE_RE.match(line):
                math = False
        elif m and not (m.group(1)[0] == "`" and "`" in line[m.end():]):
            fence = m.group(1)
            ctx[pos:end] = bytes([CODE]) * (end - pos)
        elif _MATH_LINE_RE.match(line):
            math = True
            ctx[pos:end] = bytes([MATH]) * (end - pos)
        else:
            q = _QUOTE_RE.match(line)
            if q:
                ctx[pos + q.end():end] = bytes([QUOTE]) * (end - pos - q.end())
        pos = end


def _inline(body: str, ctx: bytearray) -> None:
    """Comments, strikethrough, inline `$$`, hidden elements, over what is not code or a math
    block; inline code spans are skipped (nothing inside them is markup)."""
    n = len(body)
    i = 0
    while i < n:
        m = _SPECIAL_RE.search(body, i)
        if m is None:
            return
        i = m.start()
        if ctx[i] in (CODE, MATH):
            i += 1
            continue
        ch = body[i]
        if ch == "\\":
            i += 2  # an escaped character is literal
        elif ch == "`":
            i = _code_span(body, i)
        elif body.startswith("<!--", i):
            i = _hide(body, ctx, i, body.find("-->", i + 4), 3, COMMENT, to_end=True)
        elif body.startswith("%%", i):
            i = _hide(body, ctx, i, body.find("%%", i + 2), 2, COMMENT, to_end=True)
        elif body.startswith("~~", i):
            close = body.find("~~", i + 2)
            if close != -1 and "\n\n" in body[i:close]:
                close = -1  # strikethrough stays within its paragraph
            i = _hide(body, ctx, i, close, 2, STRUCK, to_end=False)
        elif body.startswith("$$", i):
            i = _hide(body, ctx, i, body.find("$$", i + 2), 2, MATH, to_end=False)
        elif ch == "<":
            i = _element(body, ctx, i)
        else:
            i += 1


def _hide(body: str, ctx: bytearray, start: int, close: int, width: int, kind: int, *,
          to_end: bool) -> int:
    """Mark `start` .. `close + width` as `kind` (to the end of the body when it is never
    closed and `to_end`); returns where to go on."""
    if close == -1:
        if not to_end:
            return start + width
        end = len(body)
    else:
        end = close + width
    for p in range(start, end):
        if ctx[p] not in (CODE, MATH) or kind == MATH:
            ctx[p] = kind
    return end


def _code_span(body: str, start: int) -> int:
    """The end of the inline code span opened at `start`, or just past its backticks when no
    run of the same length closes it (then they are literal)."""
    j = start
    while j < len(body) and body[j] == "`":
        j += 1
    size = j - start
    k = j
    while (k := body.find("`" * size, k)) != -1:
        e = k + size
        if (e >= len(body) or body[e] != "`") and body[k - 1] != "`":
            return e
        while k < len(body) and body[k] == "`":
            k += 1
    return j


def _element(body: str, ctx: bytearray, start: int) -> int:
    """A hidden HTML element opened at `start`: hidden up to its matching close tag (nested
    elements of the same name counted), or to the end of the body."""
    m = _OPEN_TAG_RE.match(body, start)
    if m is None:
        return start + 1
    name, attrs = m.group(1).lower(), m.group(2)
    if name in _VOID or attrs.rstrip().endswith("/") or not _HIDING_RE.search(attrs):
        return m.end()
    pattern = re.compile(rf"<(/?){re.escape(name)}(?=[\s>/])[^>]*>", re.I)
    depth = 1
    pos = m.end()
    end = len(body)
    while (tag := pattern.search(body, pos)) is not None:
        depth += -1 if tag.group(1) else 1
        pos = tag.end()
        if depth == 0:
            end = pos
            break
    for p in range(start, end):
        if ctx[p] not in (CODE, MATH):
            ctx[p] = HIDDEN
    return end
