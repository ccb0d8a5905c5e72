"""Decisions of the local engine: is an existing node the same abstraction as a unit, related to
it, or unrelated; and if it is the same, does the unit corroborate, refine or correct it?

Similarity is IDF-weighted lexical cosine over the index's own terms (English words, CJK
bigrams), optionally blended with an offline sentence embedding. A merge is refused when the two
disagree on a number, a date, a negation or a named entity: plain similarity cannot tell
"rotate every 30 days" from "rotate every 24 hours".

The thresholds are frozen here with the figures that justify them (bench/quality, on the STS-B
train split only; docs/benchmarks.md shows the dev-split results).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from remelink.index.analysis import terms as analyze
from remelink.models.local import text as tx

# Frozen thresholds (see module docstring). `same` applies to the combined score.
T_SAME_LEXICAL = 0.50
T_RELATED_LEXICAL = 0.18
T_SAME_BLENDED = 0.62
T_RELATED_BLENDED = 0.35
BLEND_WEIGHT = 0.6          # share of the embedding in the blended score
MIN_COVERAGE = 0.55         # share of the unit's weighted terms the node must contain
T_CORRECT = 0.45            # matched-sentence similarity needed to call a disagreement a correction
NOVELTY_REFINE = 0.35       # share of the unit's weighted terms new to the node: REFINE

STOP = frozenset("""a an the and or but if of to in on at by for with from as is are was were be
been being it its this that these those there here we you they he she i me my our your their his
her them us do does did done have has had can could will would should may might must not no so
than then too very also just only into over under about after before up down out off again once
all any both each few more most other some such own same what which who whom whose when where why
how 的 了 和 与 及 在 是 有 也 都 就 而 并 或 被 把 对 从 到 这 那 一个 我们 他们 你们""".split())

IdfFn = Callable[[str], float]
EmbedFn = Callable[[Sequence[str]], list[list[float]]]


_SUFFIXES = ("ations", "ation", "ments", "ment", "ings", "ing", "ions", "ion", "edly", "ed",
             "ers", "er", "ies", "es", "ly", "s", "e")


def strong_stem(term: str) -> str:
    """A blunt suffix stripper for comparison only (`rotated`, `rotation`, `rotates` -> `rotat`);
    the index keeps its gentler plural stemmer. CJK bigrams pass through."""
    if not term.isascii() or len(term) <= 4:
        return term
    for suffix in _SUFFIXES:
        if term.endswith(suffix) and len(term) - len(suffix) >= 4:
            return term[: -len(suffix)]
    return term


def content_terms(text: str) -> Counter[str]:
    """Query-form terms without stop words, strongly stemmed: the unit of lexical comparison."""
    return Counter(strong_stem(t) for t in analyze(text, query=True)
                   if t not in STOP and not t.isdigit())


def default_idf(term: str) -> float:
    """IDF stand-in when no index statistics are bound: longer terms count a little more."""
    return 1.0 + min(len(term), 12) / 12


def cosine(a: Counter[str], b: Counter[str], idf: IdfFn) -> float:
    if not a or not b:
        return 0.0
    dot = sum(a[t] * b[t] * idf(t) ** 2 for t in a.keys() & b.keys())
    na = math.sqrt(sum((c * idf(t)) ** 2 for t, c in a.items()))
    nb = math.sqrt(sum((c * idf(t)) ** 2 for t, c in b.items()))
    return dot / (na * nb) if na and nb else 0.0


def coverage(a: Counter[str], b: Counter[str], idf: IdfFn) -> float:
    """IDF-weighted share of a's terms that occur in b."""
    total = sum(idf(t) for t in a)
    return sum(idf(t) for t in a if t in b) / total if total else 0.0


@dataclass(frozen=True)
class Comparison:
    score: float
    lexical: float
    semantic: float | None
    coverage: float
    novelty: float
    conflict: str | None = None      # human-readable: "24 h vs 30 d"
    conflict_kind: str | None = None  # number | date | negation | entity
    old_sentence: str | None = None  # the node sentence the unit disagrees with

    @property
    def label(self) -> str:
        return classify(self)


def classify(c: Comparison) -> str:
    """same_abstraction | related | unrelated (a disagreement on an entity is never the same)."""
    same_t, related_t = ((T_SAME_BLENDED, T_RELATED_BLENDED) if c.semantic is not None
                         else (T_SAME_LEXICAL, T_RELATED_LEXICAL))
    if c.score >= same_t and c.coverage >= MIN_COVERAGE and c.conflict_kind != "entity":
        if c.conflict_kind in ("number", "date", "negation"):
            return "same_abstraction" if c.score >= max(same_t, T_CORRECT) else "related"
        return "same_abstraction"
    if c.score >= related_t:
        return "related"
    return "unrelated"


_NEGATED_CLAUSE_RE = re.compile(
    r"(?:,?\s*\b(?:not|instead of|rather than)\b[^,.;]*)|(?:[，,]?\s*(?:而不是|而非|不是)[^，,。；;]*)",
    re.I)


def _assertive(text: str) -> str:
    """The text with "..., not X" / "而不是 X" clauses removed: what it asserts, for fact checks."""
    return _NEGATED_CLAUSE_RE.sub(" ", text)


def disagreement(unit_text: str, node_sentences: Sequence[str], idf: IdfFn
                 ) -> tuple[str, str, str] | None:
    """(kind, description, old sentence) for the node sentence closest to the unit that states a
    different number or date, or says the opposite.

    A unit that rejects a value outright ("every 24 hours, not every 30 days") points at the node
    sentence holding the rejected value, however the two are worded.
    """
    u_terms = content_terms(unit_text)
    scored = sorted(((cosine(u_terms, content_terms(s), idf), s) for s in node_sentences),
                    reverse=True)
    asserted = _assertive(unit_text)
    u_facts = tx.facts(asserted)
    rejected = tx.facts(" ".join(m.group(0) for m in _NEGATED_CLAUSE_RE.finditer(unit_text)))
    if rejected.quantities and u_facts.quantities:
        for sim, sentence in scored:
            n_facts = tx.facts(sentence)
            if rejected.quantities & n_facts.quantities and \
                    not u_facts.quantities & n_facts.quantities:
                conflict = tx.numbers_conflict(u_facts, n_facts) or ("", "")
                return "number", f"{conflict[0]} vs {conflict[1]}".strip(" vs"), sentence
    for sim, sentence in scored[:3]:
        if sim < 0.2:
            break
        n_facts = tx.facts(sentence)
        conflict = tx.numbers_conflict(u_facts, n_facts)
        if conflict:
            return "number", f"{conflict[0]} vs {conflict[1]}", sentence
        if u_facts.dates and n_facts.dates and u_facts.dates.isdisjoint(n_facts.dates):
            return "date", f"{min(u_facts.dates)} vs {min(n_facts.dates)}", sentence
        if sim >= 0.6 and tx.facts(unit_text).negated != n_facts.negated:
            s_terms = content_terms(sentence)
            if coverage(u_terms, s_terms, idf) >= 0.75 and coverage(s_terms, u_terms, idf) >= 0.75:
                return "negation", "opposite polarity", sentence
    return None


def entity_conflict(unit_text: str, node_text: str) -> str | None:
    a = tx.facts(unit_text).entities
    b = tx.facts(node_text).entities
    if a and b and a.isdisjoint(b):
        return f"{', '.join(sorted(a)[:2])} vs {', '.join(sorted(b)[:2])}"
    return None


def compare(unit_text: str, node_head: str, node_body: str = "", *, idf: IdfFn = default_idf,
            semantic: float | None = None) -> Comparison:
    """Compare a unit with a node. `node_head` is its name and description (the abstraction),
    `node_body` the prose without Sources; `semantic` an optional embedding cosine."""
    u = content_terms(unit_text)
    head = content_terms(node_head)
    whole = head + content_terms(node_body)
    lexical = max(cosine(u, head, idf), cosine(u, whole, idf))
    cov = coverage(u, whole, idf)
    score = lexical if semantic is None else (BLEND_WEIGHT * semantic + (1 - BLEND_WEIGHT) * lexical)
    conflict_kind = description = old = None
    first = tx.sentences(node_body[:600])
    ent = entity_conflict(unit_text, f"{node_head}\n{first[0] if first else ''}")
    if ent:
        conflict_kind, description = "entity", ent
    else:
        found = disagreement(unit_text, tx.sentences(f"{node_head}. {node_body}"), idf)
        if found:
            conflict_kind, description, old = found
    return Comparison(score=score, lexical=lexical, semantic=semantic, coverage=cov,
                      novelty=1.0 - cov,
                      conflict=description, conflict_kind=conflict_kind, old_sentence=old)
