"""No invented commands (SPEC §7.2), for every engine: the code a write or an edit adds to a node
must come from the unit's notes.

Code is what a reader copies and runs: every inline code span and every line of a code block of
the new body. A piece of code is *added* when the node held no such text before the call (or
before the unit); an added piece must occur verbatim in one of the unit's notes. Whitespace runs
count as one space on both sides (a span may wrap across lines in a note, a fence nested under a
list item is indented there), and a piece must not end or start inside a word of the note
(`--bigkey` is not in `--bigkeys`); nothing else is forgiven: `--timeout=10m.` is not
`--timeout=10m`. A model that "fixes" a command in passing is the worst memory there is; the
call is refused with the offending code named, so that it can copy the code from the notes or
write it as prose.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from remelink import mdblocks

_WS_RE = re.compile(r"\s+")
_WORD = re.compile(r"[A-Za-z0-9_]")
SHOWN = 160  # characters of an offending piece shown in the feedback


def _fold(text: str) -> str:
    return _WS_RE.sub(" ", text).strip()


def _occurs(needle: str, haystack: str) -> bool:
    """`needle` is in `haystack` without cutting a word of it at either end."""
    head = bool(_WORD.match(needle[:1]))
    tail = bool(_WORD.match(needle[-1:]))
    pos = haystack.find(needle)
    while pos != -1:
        before = haystack[pos - 1:pos] if pos else ""
        after = haystack[pos + len(needle):pos + len(needle) + 1]
        if not (head and _WORD.match(before)) and not (tail and _WORD.match(after)):
            return True
        pos = haystack.find(needle, pos + 1)
    return False


@dataclass(frozen=True)
class Invented:
    kind: str  # "span" (inline code) or "line" (a line of a code block)
    text: str

    def shown(self) -> str:
        text = self.text if len(self.text) <= SHOWN else self.text[:SHOWN - 3] + "..."
        if self.kind == "span":
            ticks = "``" if "`" in text else "`"
            pad = " " if text.startswith("`") or text.endswith("`") else ""
            return f"inline code {ticks}{pad}{text}{pad}{ticks}"
        return f"code block line {text!r}"


def invented(new_body: str, before: Sequence[str], sources: Sequence[str]) -> list[Invented]:
    """The code of `new_body` that is in none of `before` (the node's body before this call,
    and before the unit) and in none of `sources` (the texts of the unit's notes), each piece
    once, in order."""
    known = [_fold(t) for t in (*before, *sources) if t]
    out: list[Invented] = []
    seen: set[tuple[str, str]] = set()
    for kind, code in mdblocks.iter_code(new_body):
        key = _fold(code)
        if not key or (kind, key) in seen:
            continue
        seen.add((kind, key))
        if not any(_occurs(key, text) for text in known):
            out.append(Invented(kind, code.strip() if kind == "line" else code))
    return out


def refusal(found: Sequence[Invented], path: str, sources: Sequence[str]) -> tuple[str, list[str],
                                                                                     str]:
    """(message, items, tail) of the tool error for code no note of the unit holds."""
    where = ", ".join(f"[[{p}]]" for p in sources) or "the unit's notes"
    message = (f"refused, nothing staged: {path} would hold code that none of the unit's notes "
               "holds (no invented commands: every inline code span and code block line a "
               "node gains must occur verbatim in " + where + " or already be in the node):")
    tail = ("Copy each command, identifier or code line byte for byte from the notes (no "
            "punctuation added inside the backticks, nothing corrected or completed), or say it "
            "in prose without code formatting.")
    return message, [f.shown() for f in found], tail
