"""Fenced code blocks through the local engine (issue 21: code is kept, never truncated).

The engine reads a note as sentences: it joins lines, collapses spaces, strips emphasis. A
fenced block would not survive that, so extraction folds each block into one token that none
of those steps touches (its spaces, newlines, `*`, `_` and backticks mapped to private-use
characters between two markers) and attaches it to the line it follows ("Bump the image:");
the writer unfolds it back into the block, byte for byte, indented under its list item. A
block longer than `max_lines` is not copied: the node points to it (`the 152-line block at
line 120 of [[note]]`), so no block is ever cut. Code may be longer (MAX_LINES) than what came
out of it (DATA_MAX_LINES: output, data, a block that names no language): until issue 21's
reading of what a node keeps every block stopped at 30 lines, and the 51-line query a how-to
exists for was only a pointer.
"""

from __future__ import annotations

import re

MAX_LINES = 80
# A block that shows what came out (`json`, `text`, `output`, a log, a table, a quote, or a
# block that names no language, which in these notes is mostly output): 30 lines, as every
# block was before. A 77-line output copied while the code beside it was a pointer, and a
# 74-line strace dump, made nodes longer than their notes.
DATA_MAX_LINES = 30
_DATA_LANGS = frozenset(("", "json", "jsonl", "ndjson", "text", "txt", "plain", "plaintext",
                         "output", "out", "log", "logs", "csv", "tsv", "xml", "console-output"))


def max_lines(fence_line: str) -> int:
    """How long a block opened by `fence_line` may be and still be copied into a node: code
    (a language named: `python`, `sql`, `yaml`, `bash`) up to MAX_LINES, output and data up to
    DATA_MAX_LINES."""
    words = _FENCE_RE.sub("", fence_line).strip().split()
    lang = words[0].lower().strip("{}.") if words else ""
    return DATA_MAX_LINES if lang in _DATA_LANGS else MAX_LINES
START, END = "\ue010", "\ue011"
_ENCODE = {" ": "\ue000", "\n": "\ue001", "*": "\ue002", "_": "\ue003", "`": "\ue004",
           "\t": "\ue005", "[": "\ue006", "]": "\ue007"}
_DECODE = {v: k for k, v in _ENCODE.items()}
_PROSE = "\ue012"  # a folded pointer: prose, unfolded in its line
TOKEN_RE = re.compile(f"{START}[^{END}]*{END}")
_FENCE_RE = re.compile(r"^(\s*)(`{3,}|~{3,})")


def fold(lines: list[str]) -> str:
    """One token for a fenced block (its fence lines included, indentation of the opening
    fence removed from every line)."""
    indent = len(lines[0]) - len(lines[0].lstrip())
    text = "\n".join(line[indent:] if not line[:indent].strip() else line.lstrip()
                     for line in lines)
    return START + "".join(_ENCODE.get(c, c) for c in text) + END


def pointer(lines: list[str], line: int, path: str, quote: bool = False) -> str:
    """A prose pointer for a block (or a quote) too long to copy: where it is, how long it
    is."""
    lang = _FENCE_RE.sub("", lines[0]).strip()
    what = f"{len(lines)}-line quote" if quote else \
        f"{len(lines) - 2}-line {lang + ' ' if lang else ''}block"
    text = f"(The {what} is at line {line} of [[{path}]].)" if path else \
        f"(The {what} is at line {line} of the note.)"
    return START + _PROSE + "".join(_ENCODE.get(c, c) for c in text) + END


def split_body(lines: list[str], first_line: int = 1, path: str = ""
               ) -> list[tuple[str, bool]]:
    """The body's lines with each fenced block folded into one line: (line, is_block)."""
    out: list[tuple[str, bool]] = []
    i = 0
    while i < len(lines):
        m = _FENCE_RE.match(lines[i])
        # A quote a line introduces (`... came up with the following prompt:`) belongs with
        # it, whole and as written (issue 21); a table is kept as written (SPEC §4): each
        # folded like a block, unfolded line for line.
        end = _introduced_quote(lines, i)
        if end <= i:
            end = _quote_with_code(lines, i)
        if end <= i:
            end = _table(lines, i)
        if end > i:
            block = lines[i:end]
            out.append((pointer(block, first_line + i, path, quote=True)
                        if len(block) > DATA_MAX_LINES else fold(block), True))
            i = end
            continue
        if not m:
            end = _indented_block(lines, i)
            if end > i:
                # An indented code block: the same block, written without fences.
                block = [line[4:] if line.startswith("    ") else line.lstrip("\t")
                         for line in lines[i:end]]
                while block and not block[-1].strip():
                    block.pop()
                block = ["```", *block, "```"]
                out.append((pointer(block, first_line + i, path)
                            if len(block) - 2 > max_lines(block[0]) else fold(block), True))
                out.append(("", False))
                i = end
                continue
            out.append((lines[i], False))
            i += 1
            continue
        fence = m.group(2)
        j = i + 1
        while j < len(lines) and not (lines[j].strip().startswith(fence[0] * len(fence))
                                      and not lines[j].strip().lstrip(fence[0])):
            j += 1
        block = lines[i:j + 1]
        if j >= len(lines):
            block = [*lines[i:], lines[i][:len(lines[i]) - len(lines[i].lstrip())] + fence]
        if len(block) - 2 > max_lines(block[0]):
            out.append((pointer(block, first_line + i, path), True))
        else:
            out.append((fold(block), True))
        i = j + 1
    return out


_ITEM_RE = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")
_QUOTE_RE = re.compile(r"^\s{0,3}>")


def _introduced_quote(lines: list[str], i: int) -> int:
    """The end of a quote starting at line `i` that the line before it introduces (its last
    non-blank line before the quote ends with a colon), or `i` when none starts there."""
    if not _QUOTE_RE.match(lines[i]) or (i > 0 and _QUOTE_RE.match(lines[i - 1])):
        return i
    prior = next((line for line in reversed(lines[max(0, i - 2):i]) if line.strip()), "")
    if not prior.rstrip().endswith((":", "：")) or _FENCE_RE.match(prior):
        return i
    end = i
    while end < len(lines) and _QUOTE_RE.match(lines[end]):
        end += 1
    return end


_QUOTED_FENCE_RE = re.compile(r"^\s{0,3}>[\s>]*(`{3,}|~{3,})")


def _quote_with_code(lines: list[str], i: int) -> int:
    """The end of a quote starting at line `i` that holds a fenced block, or `i`: its code is
    kept as written like any other (SPEC §4), so the quote is kept whole, not read as
    sentences (joined, its `>` marks and the block's lines would run into one line)."""
    if not _QUOTE_RE.match(lines[i]) or (i > 0 and _QUOTE_RE.match(lines[i - 1])):
        return i
    end = i
    while end < len(lines) and _QUOTE_RE.match(lines[end]):
        end += 1
    return end if any(_QUOTED_FENCE_RE.match(line) for line in lines[i:end]) else i


_TABLE_ROW_RE = re.compile(r"^\s{0,3}\|.*\|\s*$")
_TABLE_RULE_RE = re.compile(r"^\s{0,3}\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$")


def _table(lines: list[str], i: int) -> int:
    """The end of a pipe table starting at line `i` (a header row, then its rule row), or `i`
    when none starts there."""
    if not _TABLE_ROW_RE.match(lines[i]) or i + 1 >= len(lines) or \
            not _TABLE_RULE_RE.match(lines[i + 1]):
        return i
    end = i + 2
    while end < len(lines) and _TABLE_ROW_RE.match(lines[end]):
        end += 1
    return end


def _indented_block(lines: list[str], i: int) -> int:
    """The end of an indented code block starting at line `i` (CommonMark: lines indented by
    four spaces or a tab after a blank line, not inside a list), or `i` when none starts."""
    if not lines[i].startswith(("    ", "\t")) or not lines[i].strip():
        return i
    if i > 0 and lines[i - 1].strip():
        return i  # a paragraph's continuation line
    prior = next((line for line in reversed(lines[:i]) if line.strip()), "")
    if _ITEM_RE.match(prior) or prior.startswith((" ", "\t")):
        return i  # a list item's own paragraph or block
    end = i
    j = i
    while j < len(lines) and (lines[j].startswith(("    ", "\t")) or not lines[j].strip()):
        if lines[j].strip():
            end = j + 1
        j += 1
    return end


def strip(text: str) -> str:
    """Text without its folded blocks (titles, descriptions, Sources sentences are words)."""
    return " ".join(TOKEN_RE.sub(" ", text).split()) if START in text else text


def has_block(text: str) -> bool:
    return START in text


def ends_with_block(text: str) -> bool:
    return text.rstrip().endswith(END)


def unfold(text: str) -> str:
    """Every folded block back as a fenced block on its own lines, indented under the list item
    it belongs to; a period written after it is dropped."""
    if START not in text:
        return text
    out: list[str] = []
    pos = 0
    for m in TOKEN_RE.finditer(text):
        before = text[pos:m.start()].rstrip(" ")
        line_start = before.rfind("\n") + 1
        item = re.match(r"(\s*(?:\d+[.)]|[-*+])\s+|\s+)", before[line_start:])
        indent = " " * len(item.group(1)) if item else ""
        block = "".join(_DECODE.get(c, c) for c in m.group(0)[1:-1])
        if block.startswith(_PROSE):
            out.append(before + " " + block[1:])
            pos = m.end()
            continue
        lines = "\n".join(indent + line if line else line for line in block.split("\n"))
        # A table starts a block of its own: a blank line before it (a fence needs none).
        gap = "\n\n" if block.startswith("|") else "\n"
        # What the block follows on its line: the text before it, or with none, what was
        # written last (a pointer to a long block right before it: `(The 65-line block is
        # at line 214 of [[note]].)` ends no line of its own).
        prior = before or (out[-1] if out else "")
        out.append(before + (gap if prior and not prior.endswith("\n") else "") + lines)
        pos = m.end()
        rest = re.match(r"[ ]*[.。]?[ ]*", text[pos:])
        pos += rest.end() if rest else 0
        if pos < len(text) and text[pos] != "\n":
            out.append("\n" + indent)
    out.append(text[pos:])
    return "".join(out)
