"""Bounded evidence for a unit: the parts of its source notes that matter, never whole files.

Each source contributes its blocks (paragraphs, list items, headings for context) ranked by
overlap with the unit's name, summary and points, kept in document order, within a per-source
and a total budget of estimated tokens (remelink/tokens.py: in characters, a Chinese note got
four times the tokens of an English one). The model can `read` a note for more.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

from remelink import language
from remelink.errors import RemelinkError
from remelink.tokens import estimate_tokens
from remelink.units import Unit
from remelink.vault.notes import Note, read_note
from remelink.vault.paths import has_cjk, resolve_inside

PER_SOURCE_TOKENS = 240   # about 960 characters of English, 240 of Chinese
TOTAL_TOKENS = 720

_WORD_RE = re.compile(r"[^\W\d_]{2,}|\d+", re.UNICODE)
_CJK_RUN_RE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+")


def terms(text: str) -> set[str]:
    """Lowercased Latin words and CJK character bigrams (the same idea as the index analyzer)."""
    out: set[str] = set()
    for m in _WORD_RE.finditer(text.lower()):
        word = m.group(0)
        if _CJK_RUN_RE.fullmatch(word):
            continue
        out.add(word)
    for m in _CJK_RUN_RE.finditer(text):
        run = m.group(0)
        if len(run) == 1:
            out.add(run)
        out.update(run[i:i + 2] for i in range(len(run) - 1))
    return out


def detect_language(text: str) -> str:
    """`zh` when CJK characters make up a fifth or more of the letters, else `en`."""
    return language.detect(text)


def blocks(note: Note) -> list[tuple[str, bool]]:
    """(text, is_heading) blocks of a note body, in order."""
    out: list[tuple[str, bool]] = []
    current: list[str] = []
    in_fence = False
    for line in note.body.replace("\r\n", "\n").split("\n"):
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            in_fence = not in_fence
            current.append(line)
            continue
        if in_fence:
            current.append(line)
            continue
        starts_item = bool(re.match(r"\s*(?:[-*+]|\d+[.)])\s+", line))
        if not stripped or stripped.startswith("#") or starts_item:
            if current:
                out.append(("\n".join(current).strip(), False))
                current = []
            if stripped.startswith("#"):
                out.append((stripped, True))
                continue
            if not stripped:
                continue
        current.append(line)
    if current:
        out.append(("\n".join(current).strip(), False))
    return [(t, h) for t, h in out if t]


def excerpt(note: Note, wanted: set[str], budget: int) -> str:
    """The most relevant blocks of `note` (with their headings), in order, within `budget`
    estimated tokens."""
    items = blocks(note)
    if sum(estimate_tokens(t) for t, _ in items) <= budget:
        return "\n".join(t for t, _ in items)
    scored = []
    heading_of: dict[int, int] = {}
    last_heading = -1
    for i, (text, is_heading) in enumerate(items):
        if is_heading:
            last_heading = i
            continue
        heading_of[i] = last_heading
        overlap = len(terms(text) & wanted)
        scored.append((overlap, -i, i))
    chosen: set[int] = set()
    used = 0
    for overlap, _, i in sorted(scored, reverse=True):
        if overlap == 0 and chosen:
            break
        text = items[i][0]
        extra = estimate_tokens(text) + (estimate_tokens(items[heading_of[i]][0])
                                         if heading_of[i] >= 0 and heading_of[i] not in chosen
                                         else 0)
        if used + extra > budget:
            continue
        chosen.add(i)
        if heading_of[i] >= 0:
            chosen.add(heading_of[i])
        used += extra
    out = []
    for i in sorted(chosen):
        out.append(items[i][0])
    omitted = len(items) - len(chosen)
    if omitted:
        out.append(f"[... {omitted} more block(s) not shown]")
    return "\n".join(out)


def build(vault: Path, unit: Unit, *, reader: Callable[[str], Note] | None = None,
          per_source: int = PER_SOURCE_TOKENS, total: int = TOTAL_TOKENS) -> str:
    """The evidence section of the integration prompt for `unit`."""
    wanted = terms(" ".join([unit.name, unit.summary, *unit.points]))
    def read_inside(rel: str) -> Note:
        resolve_inside(vault, rel)  # a unit path that is a symlink out of the vault is refused
        return read_note(vault, rel)

    read = reader or read_inside
    parts: list[str] = []
    remaining = total
    paths: Sequence[str] = unit.paths
    share = max(75, min(per_source, total // max(1, len(paths))))
    for rel in paths:
        if remaining <= 0:
            parts.append(f"### {rel}\n[not shown: evidence budget used; call read]")
            continue
        try:
            note = read(rel)
        except RemelinkError as exc:  # NoteError, SandboxError
            parts.append(f"### {rel}\n[unreadable: {exc}]")
            continue
        text = excerpt(note, wanted, min(share, remaining))
        title = next((t for t, is_heading in blocks(note) if is_heading and t.startswith("# ")), "")
        if title and not text.startswith(title):
            text = f"{title}\n{text}"
        remaining -= estimate_tokens(text)
        parts.append(f"### {rel}\n{text}")
    return "\n\n".join(parts)


OWN_LETTERS = 6  # a unit's own prose decides its language once it holds this many letters


def language_of(unit: Unit, evidence: str) -> str:
    """The language a unit's new node is written in: that of the unit's own prose (its name,
    summary and points, code and identifiers left out: language.prose, the same function the
    guard judges the node's prose with), which is what the node states; the notes it came
    from only when the unit says too little to tell. A Chinese statement in a mostly English
    note is a Chinese node, and so is `journaldb 的 max_connections 是 200`."""
    own = " ".join([unit.name, unit.summary, *unit.points])
    return language.of_prose(own, OWN_LETTERS) or language.detect(
        language.prose(f"{own} {evidence}"))


__all__ = ["build", "detect_language", "excerpt", "has_cjk", "language_of", "terms"]
