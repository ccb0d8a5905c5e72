"""What an edit can change about a statement (SPEC §9.3): its numbers and dates, the names it
writes with a capital, its negations. Shared by the pairing of an edited note's units
(dream/revisions.py) and the guard that a corrected node no longer states the old value in its
name or description (guards.py). Deliberately simple and engine-independent."""

from __future__ import annotations

import re

NUMBER_RE = re.compile(r"\d+(?:[.,:/\-]\d+)*")
_NAME_RE = re.compile(r"(?<![\w.])[A-Z][a-zA-Z]+")
# Capitalised only because they start a sentence: never names. (A name starting a sentence,
# "Bob prefers...", is still a name: edits that change who did something must be seen.)
STARTERS = frozenset((
    "a", "an", "the", "this", "that", "these", "those", "it", "its", "they", "their", "them",
    "we", "our", "us", "i", "my", "you", "your", "he", "his", "she", "her", "there", "here",
    "then", "so", "and", "but", "or", "if", "when", "while", "after", "before", "because",
    "since", "as", "for", "to", "in", "on", "at", "by", "of", "from", "with", "without",
    "all", "each", "every", "some", "any", "no", "not", "never", "always", "also", "only",
    "do", "does", "did", "don't", "is", "are", "was", "were", "be", "been", "has", "have",
    "had", "can", "could", "will", "would", "should", "must", "may", "might", "please",
    "note", "use"
))
NEGATIONS = frozenset({"not", "never", "no", "don't", "doesn't", "isn't", "aren't", "won't",
                       "can't", "cannot", "without", "nor"})
ZH_NEGATIONS = ("不", "没", "未", "别", "勿", "禁止", "无需", "非")


# Numbers written as words, counting something: "one page" -> "two pages", "三天" -> "五天". An
# English number word counts when a noun follows it (not "one of", "one or two"); a Chinese
# numeral when a measure word or unit follows it (两周, 五个工作日, 四页).
_EN_NUMBER_WORDS = ("one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
                    "thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|"
                    "thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand")
_NOT_COUNTED = ("of", "or", "and", "to", "the", "a", "an", "by", "in", "on", "at", "more",
                "less", "another", "other", "thing", "way", "day's")
WORD_NUMBER_RE = re.compile(rf"\b({_EN_NUMBER_WORDS})\b(?=[ -]+([a-z']+))|"
                            r"([一两二三四五六七八九十百千半]+)"
                            r"(?=[个位次天周年月日小分秒行页条台遍轮倍份项种名人次])", re.I)


def number_words(text: str) -> set[str]:
    """The numbers a text writes as words, as written (`four`, `四`)."""
    out = set()
    for m in WORD_NUMBER_RE.finditer(text):
        if m.group(1):
            if m.group(2).lower() not in _NOT_COUNTED:
                out.add(m.group(1).lower())
        elif m.group(3):
            out.add(m.group(3))
    return out


def facts(text: str) -> set[str]:
    """Fact tokens: `#300` a number or date (`#four`, `#四` when written as a word), `@Alice` a
    capitalised word that is not a common sentence starter, `!not` a negation."""
    found = {f"#{n}" for n in NUMBER_RE.findall(text)}
    found |= {f"#{w}" for w in number_words(text)}
    found |= {f"@{m}" for m in _NAME_RE.findall(text) if m.lower() not in STARTERS}
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
