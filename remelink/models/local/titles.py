"""Titles of facts about people (SPEC §11: a title is the abstraction in a few words, never a
fragment): the main clause under the person's name, without dates, asides and fillers.
"""

from __future__ import annotations

import re

from remelink.models.local import text as tx

_TITLE_ADVERBS = re.compile(r"\b(?:just|really|finally|actually|totally|definitely|also|so|very|"
                            r"super|pretty|kinda|basically|truly|now|currently|recently)\s+", re.I)
_DATE_PHRASE = re.compile(
    r"\s*\b(?:on|in|around|during)\s+(?:the\s+)?(?:(?:night|morning|afternoon|evening|week|"
    r"weekend)\s+(?:of|before|after)\s+)?(?:(?:Monday|Tuesday|Wednesday|Thursday|Friday|"
    r"Saturday|Sunday)\s+)?(?:\d{1,2}\s+)?(?:January|February|March|April|May|June|July|August|"
    r"September|October|November|December)?\s*\d{4}\b|\s*\b(?:a few|\d+)\s+\w+\s+before\s+\d{1,2}"
    r"\s+\w+\s+\d{4}|\s*\d{4}年\d{1,2}月(?:\d{1,2}日)?(?:之前的一周|之后的一周|这一周|之前的周末|"
    r"之后的周末)?|\s*\d{4}年")
_CLAUSE_CUT = re.compile(r"\s*(?:[,;:—–]|\s-\s|\b(?:because|since|so that|but|which|who|while|"
                         r"although|though|after|before|when|until|as soon as|and then|and "
                         r"(?=[a-z]+ (?:it|them|her|him)\b))\b)", re.I)


def without_dates(text: str) -> str:
    """The text without date phrases ("on Friday 21 January 2022", "2022年1月21日")."""
    return " ".join(_DATE_PHRASE.sub("", text).split())


def fact_title(statement: str, speaker: str = "", *, max_words: int = 12) -> str:
    """A fact's title: its main clause under the person's name, without dates and fillers
    ("Joanna finally finished their first full screenplay and printed it on Friday 21 January
    2022" -> "Joanna finished their first full screenplay")."""
    text = tx.without_relative_days(tx.clean_statement(statement))
    if tx.is_cjk_text(text):
        text = _DATE_PHRASE.sub("", text)
        clauses = [c.strip() for c in re.split(r"[，,。；;：:！？!?]", text) if c.strip()]
        # The clause about the person: "还在跑，小王每周跑三次" -> "小王每周跑三次".
        clause = next((c[c.index(speaker):] for c in clauses if speaker and speaker in c),
                      clauses[0] if clauses else text)
        return clause[:24].rstrip("的了和与及 ")
    text = " ".join(_DATE_PHRASE.sub("", text).split())
    text = re.sub(r"\s*[(（][^)）]*[)）]", "", text)
    # "As an engineering student, Jolene ...", "When Deborah is overloaded, they use ...": the
    # leading phrase is circumstance; the title is the clause about the person after it.
    lead = re.match(r"^([^,;:]{3,80}),\s+(?=\S)", text)
    if lead and speaker and (not lead.group(1).startswith(speaker) or
                             re.match(r"(?:when|if|as|after|before|since|because|while|though|"
                                      r"although|once|until)\b", lead.group(1), re.I)):
        rest = text[lead.end():]
        if re.match(rf"(?:{re.escape(speaker)}\b|they\b)", rest):
            text = rest[:1].upper() + rest[1:]
            if text.startswith("They "):
                verb, _, tail = text[5:].partition(" ")
                fixed = ("will", "would", "can", "could", "should", "must", "might", "may",
                         "had", "did", "got", "went", "made", "took", "felt")
                verb = {"are": "is", "have": "has", "were": "was", "do": "does"}.get(
                    verb, verb if verb.endswith(("s", "ed")) or not verb.isalpha() or
                    verb in fixed or "'" in verb else verb + "s")
                text = f"{speaker} {verb} {tail}".strip()
    head = text
    m = _CLAUSE_CUT.search(text, len(speaker) + 1 if speaker and text.startswith(speaker) else 0)
    while m is not None and len(text[:m.start()].split()) < 3:
        m = _CLAUSE_CUT.search(text, m.end())
    if m is not None:
        head = text[:m.start()]
    head = re.sub(r"[.!?]+$", "", head.strip())
    first, _, rest = head.partition(" ")
    head = f"{first} {_TITLE_ADVERBS.sub('', rest)}".strip() if rest else first
    words = head.split()
    if len(words) > max_words:
        # Cut before a preposition or conjunction, never inside a noun phrase.
        cut = max((i for i, w in enumerate(words[:max_words + 1])
                   if w.lower() in _CUT_BEFORE and i >= 3), default=max_words)
        words = words[:cut]
        while words and words[-1].lower() in tx._STOP_TAIL:
            words.pop()
    title = " ".join(words).strip(" .,:;")
    for quote in ("'", '"', "\u201c", "\u201d"):
        if title.count(quote) % 2 and not re.search(r"\w'\w", title.replace(quote * 2, "")):
            title = title.replace(quote, "")  # "called 'Sleep" cut inside its quotes
    return tx.capitalised(title) if title else text[:60]


_CUT_BEFORE = tx.TITLE_CUT_BEFORE
