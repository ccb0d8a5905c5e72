"""What an edit can change about a statement (SPEC §9.3): its numbers and dates, the names it
writes with a capital, its negations. Shared by the pairing of an edited note's units
(dream/revisions.py) and the guard that a corrected node no longer states the old value in its
name or description (guards.py). Deliberately simple and engine-independent."""

from __future__ import annotations

import re

NUMBER_RE = re.compile(r"\d+(?:[.,:/\-]\d+)*")
_NAME_RE = re.compile(r"(?<![\w.])[A-Z][a-zA-Z]+(?:[ -][A-Z][a-zA-Z]+)*")
_SENTENCE_START_RE = re.compile(r"(?:^|[.!?:;]\s+)([A-Z][a-zA-Z]+)")
NEGATIONS = frozenset({"not", "never", "no", "don't", "doesn't", "isn't", "aren't", "won't",
                       "can't", "cannot", "without", "nor"})
ZH_NEGATIONS = ("不", "没", "未", "别", "勿", "禁止", "无需", "非")


def facts(text: str) -> set[str]:
    """Fact tokens: `#300` a number or date, `@Alice` a name (not a sentence's first word),
    `!not` a negation."""
    found = {f"#{n}" for n in NUMBER_RE.findall(text)}
    starts = {m.group(1) for m in _SENTENCE_START_RE.finditer(text)}
    found |= {f"@{m}" for m in _NAME_RE.findall(text) if m not in starts}
    words = set(re.findall(r"[a-z']+", text.lower()))
    found |= {f"!{w}" for w in words & NEGATIONS}
    found |= {f"!{w}" for w in ZH_NEGATIONS if w in text}
    return found


def values(tokens: set[str]) -> tuple[str, ...]:
    """The numbers, dates and names among fact tokens, as the text wrote them."""
    return tuple(sorted(t[1:] for t in tokens if t[:1] in "#@"))


def stated(text: str, wanted: tuple[str, ...]) -> list[str]:
    """Which of the `wanted` values `text` states (as whole numbers or names, not substrings:
    `300` is not in `3000`)."""
    have = set(values(facts(text)))
    return [v for v in wanted if v in have]
