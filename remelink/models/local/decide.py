"""Decisions of the local engine: is an existing node the same abstraction as a unit, related to
it, or unrelated; and when it is the same, does the unit corroborate, refine or correct it?

Similarity is IDF-weighted lexical cosine over the index's own terms (English words, CJK
bigrams), folded by a stronger stemmer than the index's (`rotated`, `rotation` -> `rotat`), and
optionally blended with an offline sentence embedding. A long node is compared through its best
passage (the sentences that, together, are most like the unit) so that a one-sentence unit is
not diluted by a long runbook. A merge is refused when the two disagree on a number, a date, a
negation or a named entity: plain similarity cannot tell "rotate every 30 days" from "rotate
every 24 hours".

Thresholds are frozen below with the figures that justify them. They were tuned on the STS-B
train split only (`python bench/bench_quality.py --tune`), never on the dev split or the
link vaults; docs/benchmarks.md shows the held-out results.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache

from remelink.index.analysis import terms as analyze
from remelink.models.local import fenced, people
from remelink.models.local import text as tx
from remelink.models.local.edits import without_superseded

# -- frozen thresholds ---------------------------------------------------------------------------
# Tuned on training data only, with the engine's own texts (unit = its summary, node = title +
# sentence, compared by `compare`, conflict rules included) and BM25 IDF over the split's first
# sentences, by `python bench/bench_quality.py --tune`. Same = score >= 4 (PAWS-X: a
# paraphrase), unrelated = score <= 2 (PAWS-X: a non-paraphrase).
# English, on STS-B train (5,749 pairs). The rule: the best F1 of "same" among thresholds whose
# false-merge rate (unrelated pairs labelled same) stays <= 2 % (the goal), then the related
# threshold with the best three-class macro-F1.
#   lexical: T_SAME 0.73 (train F1 0.521, false merges 1.9 %), T_RELATED 0.35 (macro-F1 0.615);
#            train Spearman 0.694 (plain TF-IDF cosine: 0.680, F1 0.461 by the same rule).
#   blended: BLEND_WEIGHT 0.85 maximised train Spearman (0.788; lexical alone 0.694);
#            T_SAME 0.79 (F1 0.615, false merges 1.6 %), T_RELATED 0.53 (macro-F1 0.670).
# Chinese, on Chinese STS-B train (5,231 pairs) with the same rule, and no threshold letting
# more than 3 % of the non-paraphrases of the PAWS-X zh tuning half (1,000 pairs) merge (that
# bound is the one that binds: without it the best threshold is lower):
#   lexical: T_SAME 0.92 (F1 0.326, false merges 1.1 %; PAWS-X 3.0 %), T_RELATED 0.46
#            (macro-F1 0.509); train Spearman 0.666.
#   blended: BLEND_WEIGHT 0.85 (Spearman 0.726), T_SAME 0.94 (F1 0.331, false merges 0.8 %;
#            PAWS-X 2.8 %), T_RELATED 0.62 (macro-F1 0.528).
#   NOVEL_COVERAGE 0.59: the share of a unit's IDF-weighted terms found in a node above which the
#            unit says nothing new; best F1 of "same" on STS-B train for that coverage alone.
# Held-out results (STS-B dev, Chinese STS-B dev, PAWS-X zh held-out half) are in
# docs/benchmarks.md, section "quality".
T_SAME_LEXICAL = 0.73
T_RELATED_LEXICAL = 0.35
T_SAME_BLENDED = 0.79
T_RELATED_BLENDED = 0.53
BLEND_WEIGHT = 0.85
T_SAME_LEXICAL_ZH = 0.92
T_RELATED_LEXICAL_ZH = 0.46
T_SAME_BLENDED_ZH = 0.94
T_RELATED_BLENDED_ZH = 0.62
BLEND_WEIGHT_ZH = 0.85
THRESHOLDS = {
    "en": ((T_SAME_LEXICAL, T_RELATED_LEXICAL), (T_SAME_BLENDED, T_RELATED_BLENDED)),
    "zh": ((T_SAME_LEXICAL_ZH, T_RELATED_LEXICAL_ZH), (T_SAME_BLENDED_ZH, T_RELATED_BLENDED_ZH)),
}
BLEND_WEIGHTS = {"en": BLEND_WEIGHT, "zh": BLEND_WEIGHT_ZH}
# Where `embedder: auto` blends the embedding in (docs/benchmarks.md, "quality", (b)): English,
# where it lifted duplicate avoidance on STS-B dev from 40 % to 53 % with the same 0.5 % false
# merges into the partner; not Chinese, where it lifted nothing (Chinese STS-B dev 20 % -> 19 %,
# PAWS-X zh 20 % -> 21 % with false merges 2.1 % -> 2.2 %): there auto stays lexical.
EMBED_LANGUAGES = frozenset({"en"})
# Word order, per language: two texts whose terms are nearly the same both ways (weighted
# coverage >= gate) that say them in another order (order_agreement < min) are never merged.
# English (STS-B train): (0.9, 0.8) flags 12 of the 658 same pairs with cosine >= 0.75 and
# none of the unrelated ones, yet "A replaced B" / "B replaced A" (agreement 0.33).
# Chinese (PAWS-X tuning half): (0.7, 0.99) flags 305 of its 365 non-paraphrases with cosine
# >= 0.75 and 126 of its 283 paraphrases; Chinese STS-B train loses 103 of 616 same pairs.
ORDER_RULE = {"en": (0.9, 0.8), "zh": (0.7, 0.99)}
# The node's name and description are (nearly) all in the unit, which says more: a restatement
# with a reason or a detail added.
CONTAIN_COVERAGE = {"en": 0.9, "zh": 0.9}
MAX_RESTATING_CLAUSES = 3  # restates_part: units of at most this many clauses
# ... and in Chinese, the restated clause holds this share of the node's name and description
# (PAWS-X tuning half: without it, 10 of 567 non-paraphrases merged on a shared leading phrase).
RESTATED_CLAUSE = 0.5
CONTAIN_SHARE = 0.55  # ... and at least this share of the unit's weighted terms is the claim
# Conflicts that no correction cue turns into a merge: another person, product or place;
# the opposite action; the same words in another order.
NEVER_SAME = frozenset({"entity", "action", "order"})
# What a correction may change: a number, a date, a polarity, a holder handed over.
CORRECTABLE = ("number", "date", "negation", "owner", "tool")
# A disagreeing sentence must be at least this like the unit to be "about the same point" (below
# it, two different numbers are two different facts); a restatement ("Alice again asked...")
# must reach it too. A judgement, not tuned (STS-B has neither numbers-in-dispute labels nor
# restatement cues): a little below T_RELATED_LEXICAL, so that a point must at least be related.
T_POINT = 0.30
# ... or the unit must hold this share of the node sentence's weighted terms (then it speaks of
# everything that sentence does). A judgement, like T_POINT.
POINT_CONTAIN = 0.75
# ... of a sentence (or clause) that names at least this many terms besides its values, per
# language: one English word ("Still one language"), two Chinese characters (one left, "后" of
# "两年后", is a position or a connective, no point).
POINT_TERMS = {"en": 1, "zh": 2}
# A value as a point leaves it out: a number, in digits or as a word, with a Chinese measure
# ("1862 年", "两年"; "3 languages" keeps what it counts).
_VALUE_RE = re.compile(tx.NUMBER_START + rf"\d+(?:[.,]\d+)?\s*[{tx._CJK_MEASURES}]?|" +
                       tx._WORD_NUM_RE.pattern + rf"[{tx._CJK_MEASURES}]?", re.I)
# The unit adds nothing the node does not say when this share of its weighted terms is in it:
# then an update is a CORROBORATE, else a REFINE (and with shared provenance, the same node).
NOVEL_COVERAGE = 0.59
# A unit announcing a repetition ("again", "once more", "再次") whose weighted terms are all but
# entirely in the node says that node again. A judgement, not tuned: "all but" leaves room for
# a cue word the stop list does not know.
RESTATED_COVERAGE = 0.9
# A handover ("Ines takes over X from Tomasz") changes the node sentence naming the old holder
# when that sentence holds this share of the thing's weighted terms. A judgement, like T_POINT.
HANDOVER_COVERAGE = 0.5

STOP = frozenset([
    "a", "an", "the", "and", "or", "but", "if", "of", "to", "in", "on", "at", "by", "for", "with",
    "from", "as", "is", "are", "was", "were", "be", "been", "being", "it", "its", "this", "that",
    "these", "those", "there", "here", "we", "you", "they", "he", "she", "i", "me", "my", "our",
    "your", "their", "his", "her", "them", "us", "do", "does", "did", "done", "have", "has", "had",
    "can", "could", "will", "would", "should", "may", "might", "must", "not", "no", "so", "than",
    "then", "too", "very", "also", "just", "only", "into", "over", "under", "about", "after",
    "before", "up", "down", "out", "off", "again", "once", "all", "any", "both", "each", "few",
    "more", "most", "other", "some", "such", "own", "same", "what", "which", "who", "whom",
    "whose", "when", "where", "why", "how",
    "的", "了", "和", "与", "及", "在", "是", "有", "也", "都", "就", "而", "并", "或", "被", "把",
    "对", "从", "到", "这", "那", "一个", "我们", "他们", "你们"
]) | \
    frozenset([
        "prefer", "prefers", "preferred", "like", "likes", "liked", "want", "wants", "wanted",
        "ask", "asks", "asked", "wish", "hope", "always", "again", "still", "once", "every",
        "decide", "decided", "decision", "agreed", "agree",
        "希望", "喜欢", "偏好", "总是", "再次", "仍然", "决定", "约定"
    ])
# The second line: cue words of preferences and restatements. They decide a unit's kind and
# bucket, not its topic; as terms they made every preference look like every other one.
STOP_CHARS = frozenset("的了和与及在是有也都就而并或被把对从到这那个一们他她它你我着过吗呢吧啊之其")
_CJK_CUE_RE = re.compile("希望|喜欢|偏好|总是|再次|仍然|决定|约定|一个|我们|他们|你们")
_CJK_TERM = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")

IdfFn = Callable[[str], float]
SemanticFn = Callable[[str, Sequence[str]], list[float]]

# (suffix, replacement), longest first; applied at most twice ("renderings" -> "render" ->
# "rend"), so that every inflection of a word lands on the same stem.
_SUFFIXES = (("izations", "iz"), ("ization", "iz"), ("ational", "at"), ("ations", "at"),
             ("ation", "at"), ("ements", ""), ("ement", ""), ("ments", ""), ("ment", ""),
             ("nesses", ""), ("ness", ""), ("ities", ""), ("ity", ""), ("ings", ""),
             ("ing", ""), ("ions", ""), ("ion", ""), ("ives", ""), ("ive", ""), ("ables", ""),
             ("able", ""), ("ers", ""), ("er", ""), ("edly", ""), ("ed", ""), ("ies", "i"),
             ("es", ""), ("ly", ""), ("s", ""))
_VOWELS = set("aeiouy")


def _strip_once(term: str) -> str:
    for suffix, replacement in _SUFFIXES:
        if suffix in ("s", "es") and term.endswith(("ss", "us", "is")):
            continue  # class, process, status, analysis
        if term.endswith(suffix) and len(term) - len(suffix) + len(replacement) >= 3:
            return term[: -len(suffix)] + replacement
    return term


@lru_cache(maxsize=1 << 16)  # a pure function of one word, asked for the same few hundred
def strong_stem(term: str) -> str:
    """A blunt suffix stripper for comparison only (`rotated`, `rotation`, `rotates` -> `rotat`;
    `move`, `moving`, `movement` -> `mov`); the index keeps its gentler plural stemmer. CJK
    bigrams and short words pass through."""
    if len(term) <= 3 or not term.isascii() or not term.isalpha():
        return term
    stem = _strip_once(term)
    if stem != term and len(stem) > 4:
        stem = _strip_once(stem)
    if stem.endswith("e") and len(stem) > 3:
        stem = stem[:-1]
    if stem.endswith("y") and len(stem) > 3:
        stem = stem[:-1] + "i"
    if len(stem) > 3 and stem[-1] == stem[-2] and stem[-1] not in _VOWELS and stem[-1] not in "ls":
        stem = stem[:-1]
    return stem


@dataclass(frozen=True)
class Bag:
    """Stemmed content terms of a text, with one analyzed surface form per stem (for IDF)."""

    counts: Counter[str]
    forms: dict[str, str] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.counts)

    def __add__(self, other: Bag) -> Bag:
        forms = dict(other.forms)
        forms.update(self.forms)
        return Bag(self.counts + other.counts, forms)


_BAG_CACHE: dict[str, Bag] = {}
_BAG_CACHE_LIMIT = 100_000


def _is_cjk(term: str) -> bool:
    return not term.isascii() and _CJK_TERM.match(term) is not None


def sequence(text: str) -> list[tuple[str, str]]:
    """The content terms of `text` in reading order, as (stem, surface form): English words
    (stop words, bare numbers and unit letters out, strongly stemmed) and, for Chinese, single
    characters rather than the index's bigrams (stop characters and cue words out).

    Characters, because Chinese has no spaces and one word is often written two ways
    (`吹长笛` / `吹一支笛子`): on Chinese STS-B train the best same-vs-unrelated split of the
    IDF cosine found 31 % of the score >= 4 pairs with characters, 21 % with bigrams, at 2 %
    of the score <= 2 pairs (`bench/quality/sts.py --tune`)."""
    if not text.isascii():
        text = _CJK_CUE_RE.sub(" ", text)
    out: list[tuple[str, str]] = []
    for term in analyze(text, query=False):
        if _is_cjk(term):
            if len(term) != 1 or term in STOP_CHARS:
                continue  # bigrams: their characters follow them in the index form
            out.append((term, term))
            continue
        if term in STOP or term.isdigit() or (len(term) == 1 and term.isascii()):
            continue  # numbers and their unit letters ("24 h") are facts, compared as such
        out.append((strong_stem(term), term))
    return out


def bag(text: str) -> Bag:
    """The content terms of `text` (see `sequence`), counted. Cached (comparisons see the same
    node texts many times)."""
    cached = _BAG_CACHE.get(text)
    if cached is not None:
        return cached
    counts: Counter[str] = Counter()
    forms: dict[str, str] = {}
    for stem, term in sequence(text):
        counts[stem] += 1
        # Keep the shortest form: the most frequent spelling in practice, so the least rare.
        if stem not in forms or len(term) < len(forms[stem]):
            forms[stem] = term
    result = Bag(counts, forms)
    if len(_BAG_CACHE) >= _BAG_CACHE_LIMIT:
        _BAG_CACHE.clear()
    _BAG_CACHE[text] = result
    return result


def text_of(*parts: str) -> str:
    """The parts joined, leaving out any part whose content terms the longer parts already hold:
    a title that repeats its summary's words must not count them twice."""
    items = [p.strip() for p in parts if p and p.strip()]
    keep: set[int] = set()
    seen: set[str] = set()
    for i in sorted(range(len(items)), key=lambda i: -len(items[i])):
        terms = set(bag(items[i]).counts)
        if keep and terms <= seen:
            continue
        keep.add(i)
        seen |= terms
    return " ".join(p if p[-1] in ".!?。！？;；:：" else p + ("。" if tx.is_cjk_text(p) else ".")
                    for i, p in enumerate(items) if i in keep)


def default_idf(term: str) -> float:
    """IDF stand-in when no index statistics are bound: longer terms count a little more."""
    return 1.0 + min(len(term), 12) / 12


def memo(idf: IdfFn) -> IdfFn:
    """`idf` with a cache: one comparison looks the same terms up many times, and the index's
    own cache is emptied by every commit."""
    if getattr(idf, "memoised", False):
        return idf
    cache: dict[str, float] = {}

    def cached(term: str) -> float:
        value = cache.get(term)
        if value is None:
            value = cache[term] = idf(term)
        return value

    cached.memoised = True  # type: ignore[attr-defined]
    cached.weights = {}  # type: ignore[attr-defined]
    return cached


def _weights(b: Bag | Counter[str], idf: IdfFn) -> dict[str, float]:
    """Term weights of a bag (a fresh dict: callers adjust shared terms). Memoised per bag when
    `idf` is a `memo`: a unit is compared with the same sentences many times."""
    table: dict[int, tuple[Bag | Counter[str], dict[str, float]]] | None = \
        getattr(idf, "weights", None)
    if table is not None:
        hit = table.get(id(b))
        if hit is not None and hit[0] is b:
            return dict(hit[1])
    if isinstance(b, Bag):
        weights = {t: idf(b.forms.get(t, t)) for t in b.counts}
    else:
        weights = {t: idf(t) for t in b}
    if table is not None:
        if len(table) > 50_000:
            table.clear()
        table[id(b)] = (b, weights)
    return dict(weights)


def _counts(b: Bag | Counter[str]) -> Counter[str]:
    return b.counts if isinstance(b, Bag) else b


def cosine(a: Bag | Counter[str], b: Bag | Counter[str], idf: IdfFn) -> float:
    """IDF-weighted cosine. A stem's weight is the IDF of its surface form; a stem on both sides
    takes the lower of the two (the more common spelling), so both sides weigh it alike."""
    ca, cb = _counts(a), _counts(b)
    if not ca or not cb:
        return 0.0
    wa, wb = _weights(a, idf), _weights(b, idf)
    shared = ca.keys() & cb.keys()
    for t in shared:
        wa[t] = wb[t] = min(wa[t], wb[t])
    # math.fsum: the exact sum, whatever the order; `shared` is a set, which Python orders by
    # string hashes that change per process (PYTHONHASHSEED), and a plain sum's last bits with
    # them: a score at a threshold linked a node in one run and not in the next.
    dot = math.fsum(ca[t] * cb[t] * wa[t] * wb[t] for t in shared)
    na = math.sqrt(math.fsum((c * wa[t]) ** 2 for t, c in ca.items()))
    nb = math.sqrt(math.fsum((c * wb[t]) ** 2 for t, c in cb.items()))
    return dot / (na * nb) if na and nb else 0.0


def coverage(a: Bag | Counter[str], b: Bag | Counter[str], idf: IdfFn) -> float:
    """IDF-weighted share of a's terms that occur in b."""
    wa = _weights(a, idf)
    total = math.fsum(wa.values())
    cb = _counts(b)
    return math.fsum(w for t, w in wa.items() if t in cb) / total if total else 0.0


# -- passages ------------------------------------------------------------------------------------
_LIST_RE = re.compile(r"^\s*(?:[-*+]|\d+[.)]|>)\s+")
_FENCE_OPEN_RE = re.compile(r"^\s*(`{3,}|~{3,})")


def passages(body: str) -> list[str]:
    """The statements of a node body (Sources excluded): one per sentence, list item or quote
    line, link syntax reduced to its display text; a paragraph holding a fenced block is one
    (the dots and `1.` of code end no sentence)."""
    return [p for block, heading in _blocks(body)
            for p in ([block] if heading or _in_code(block) else tx.sentences(block)) if p]


def blocks(body: str) -> list[str]:
    """The paragraphs, list items and headings of a node body (Sources excluded), each one text:
    a document's rule is one list item however many sentences it has ("Pagination is cursor
    based: `page_token` and `page_size`; ... No offset pagination on tables that grow.")."""
    return [block for block, _ in _blocks(body)]


def _blocks(body: str) -> list[tuple[str, bool]]:
    """(text, is a heading) of each paragraph, list item and heading of a node body."""
    m = re.search(r"^##[ \t]+sources\b.*$", body, re.I | re.M)
    # A line struck as superseded by a correction is withdrawn: no claim of the node.
    prose = without_superseded(body[: m.start()] if m else body)
    out: list[tuple[str, bool]] = []
    block: list[str] = []

    def flush() -> None:
        if block:
            out.append((tx.clean_statement(" ".join(block)), False))
            block.clear()

    fence = ""
    for line in prose.replace("\r\n", "\n").split("\n"):
        stripped = line.strip()
        # A fenced block stays in its paragraph, its fences kept (code states no claim:
        # `_in_code`): its blank lines, `# comments` and `- name:` lines are no paragraphs,
        # headings or items of the node (a workflow's `name: Dump steps context` line was
        # "corrected" by a note about another step).
        opens = None if fence else _FENCE_OPEN_RE.match(line)
        if opens or fence:
            if not opens and stripped.startswith(fence) and not stripped.strip(fence[0]):
                fence = ""
            elif opens:
                fence = opens.group(1)
            block.append(stripped)
            continue
        if not stripped or stripped.startswith("#"):
            flush()
            if stripped.startswith("#"):
                heading = stripped.lstrip("#").strip()
                if heading:
                    out.append((tx.clean_statement(heading), True))
            continue
        if _LIST_RE.match(line):
            flush()
            block.append(_LIST_RE.sub("", line))
            continue
        block.append(stripped)
    flush()
    return [(b, h) for b, h in out if b]


def best_window(u: Bag, sentences: Sequence[str], idf: IdfFn,
                limit: int = 4) -> tuple[float, list[str]]:
    """The passage of the node most like the unit: start from its best sentence and add the next
    best while that raises the cosine (at most `limit` sentences)."""
    scored = sorted(((cosine(u, bag(s), idf), s) for s in sentences if s), reverse=True)
    if not scored or scored[0][0] <= 0:
        return 0.0, []
    best, window = scored[0][0], [scored[0][1]]
    acc = bag(scored[0][1])
    for _, sentence in scored[1:limit * 2]:
        if len(window) >= limit:
            break
        trial = acc + bag(sentence)
        value = cosine(u, trial, idf)
        if value > best:
            best, acc = value, trial
            window.append(sentence)
    return best, window


# -- decisions -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Comparison:
    score: float                     # what the thresholds apply to (lexical or blended)
    lexical: float
    semantic: float | None
    coverage: float                  # share of the unit's weighted terms found in the node
    novelty: float
    conflict: str | None = None      # human-readable: "24 h vs 30 d"
    conflict_kind: str | None = None  # number | date | negation | entity
    old_sentence: str | None = None  # the node sentence the unit disagrees with
    new_sentence: str = ""           # the unit's statement that disagrees (one of several),
                                     # or that says a node line again (restates_line)
    point_contained: bool = False    # the unit holds the disagreeing node sentence's terms
    correction: bool = False         # the unit says the node's point is wrong (CORRECT)
    passage: str = ""                # the node text the unit was compared with
    shared_source: bool = False      # the node already cites every note the unit came from
    restated: bool = False           # "again", "reiterated", "再次": the unit repeats a statement
                                     # of an actor the node names
    contains: bool = False           # the node's whole claim is in the unit, which adds to it
    lang: str = "en"                 # which thresholds apply (`language` of the unit)

    @property
    def label(self) -> str:
        return classify(self)


def language(text: str) -> str:
    """`zh` for a text with Chinese (or other CJK) characters, else `en`: which thresholds and
    which blend apply to a comparison."""
    return "zh" if tx.is_cjk_text(text) else "en"


def thresholds(semantic: bool, lang: str = "en") -> tuple[float, float]:
    """(same, related) for a comparison in `lang`, lexical or blended."""
    table = THRESHOLDS.get(lang, THRESHOLDS["en"])
    return table[1] if semantic else table[0]


def uses_embedder(lang: str) -> bool:
    """Whether the embedder takes part in this language's decisions (`embedder: auto`): only
    where it measurably helped on that language's training data."""
    return lang in EMBED_LANGUAGES


def classify(c: Comparison, *, same: float | None = None, related: float | None = None) -> str:
    """same_abstraction | related | unrelated.

    A disagreement on a number, date or negation is never a silent merge: it is the same
    abstraction only when the unit corrects that very point (then the action is CORRECT), else
    related. A disagreement on a named entity (another person, product, place) is never the same.
    `same` and `related` override the thresholds of the score being judged (for tuning).
    """
    same_t, related_t = thresholds(c.semantic is not None, c.lang)
    same_t = same_t if same is None else same
    related_t = related_t if related is None else related
    if c.score >= same_t:
        if c.conflict_kind is None or (c.conflict_kind not in NEVER_SAME and c.correction):
            return "same_abstraction"
        return "related"
    if c.conflict_kind is None and c.contains:
        # The unit states the node's claim again and adds to it (a reason, a detail): all of the
        # node's statement is in the unit, so the node is what the unit refines.
        return "same_abstraction"
    if c.conflict_kind is None and c.restated:
        # The unit announces itself as a repetition ("Alice again asked...") of something the
        # same actor said, and it is about the same point: that earlier statement is this node.
        return "same_abstraction"
    # The rules below rest on evidence beyond similarity; similarity only has to show that the
    # two are about the same subject, by either score (with an embedder, a long unit and a
    # short node title can share the words and still embed apart).
    on_topic = c.score >= related_t or c.lexical >= thresholds(False, c.lang)[1]
    if (on_topic or c.point_contained) and c.conflict_kind in CORRECTABLE \
            and c.correction:
        # "..., not every 30 days as our runbook says": an explicit rejection of the node's
        # value, on the node's own point, is a correction even when worded differently.
        return "same_abstraction"
    if on_topic and c.conflict_kind is None and c.shared_source and \
            c.coverage >= NOVEL_COVERAGE:
        # The node was distilled from the same note and already says what the unit says (a
        # re-extraction, or the same point worded differently).
        return "same_abstraction"
    if c.score < related_t:
        return "unrelated"
    return "related"


_NEGATED_CLAUSE_RE = re.compile(
    r"(?:,?\s*\b(?:not|instead of|rather than)\b[^,.;]*)|"
    r"(?:[，,]?\s*(?:而不是|而非|不是)[^，,。；;]*)|"
    # The value a change starts from: "from 40 to 80", "从 40 调到 80", "从两天改成四天".
    r"(?:\bfrom\s+[^,.;]*?\d[^,.;]*?(?=\s+to\s))|"
    r"(?:从\s*[^，,。；;]*?(?=\s*(?:调|改|提高|提升|降低|增加|减少|扩|缩|上调|下调|变|延长|缩短)?"
    r"\s*(?:到|为|成|至)))",
    re.I)
# A Chinese name before what a person says or wants ("陈静希望…", "陈静再次强调：…"): `tx.facts`
# finds Latin names and 小王/王总 forms, not a full Chinese name.
_ZH_SPEAKER_RE = people.zh_person_before((*people.ZH_PERSON_VERBS, "再次", "又一次", "强调",
                                           "重申", "还是", "仍然", "依然"))


def _speakers(text: str) -> set[str]:
    """The people a text names (casefolded), Chinese full names before a verb of saying or
    wanting included."""
    found = {e.casefold() for e in tx.facts(text).entities}
    return found | {m.group(1) for m in _ZH_SPEAKER_RE.finditer(text)
                    if tx.is_cjk_name(m.group(1))}


RESTATEMENT_CUES = ("again", "once more", "once again", "reiterated", "repeated", "restated",
                    "as before", "still wants", "still prefers", "still asks", "再次", "又一次",
                    "再一次", "重申", "仍然", "依然", "还是希望")
# "again", "once more" say that a statement is said again only beside a verb of saying, asking,
# wanting or deciding ("Alice again asked ...", "Dana said it once more: ..."): beside a deed or
# a state they say that a thing happened again ("I ran the above command again", "once I got the
# site working again", "the espresso machine is leaking again"), no statement said again (issue
# 21: such til lines were read as restating a node of another tool's note).
_AGAIN_CUES = ("again", "once again", "once more")
_SAYING_RE = re.compile(
    r"\b(?:says?|said|saying|ask(?:s|ed|ing)?|repeat(?:s|ed|ing)?|rais(?:e|es|ed|ing)|"
    r"mention(?:s|ed|ing)?|remind(?:s|ed|ing)?|reminder|insist(?:s|ed|ing)?|want(?:s|ed)?|"
    r"prefer(?:s|red)?|push(?:es|ed)?|br(?:ing|ings|ought) up|stress(?:es|ed)?|stat(?:e|es|ed)|"
    r"t(?:ell|ells|old)|not(?:e|es|ed)|propos(?:e|es|ed)|suggest(?:s|ed)?|request(?:s|ed)?|"
    r"complain(?:s|ed)?|point(?:s|ed)? out|flag(?:s|ged)?|agree(?:s|d)?|decid(?:e|es|ed)|"
    r"confirm(?:s|ed)?|emphasi[sz](?:e|es|ed)|argu(?:e|es|ed)|explain(?:s|ed)?|wr(?:ote|ites?)|"
    r"repl(?:y|ies|ied)|answer(?:s|ed)?|recommend(?:s|ed)?|call(?:s|ed)? for|ping(?:s|ed)?)\b",
    re.I)


def says_again(text: str) -> bool:
    """The text says it is a statement said again: a cue of repetition ("reiterated", "再次"),
    or "again" / "once more" said of a verb of saying, asking, wanting or deciding: at most
    five words after it ("asked again", "brought up the retention again"), right before it
    ("again asked"), or opening its clause ("Again, Dana wants ...")."""
    if tx.has_word_cue(text, tuple(c for c in RESTATEMENT_CUES if c not in _AGAIN_CUES)):
        return True
    for clause in re.split(r"[.;:!?。；：！？]\s+|\s+-\s+", text):
        # A code span is one thing named, however many words it writes.
        words = re.findall(r"[\w'#@-]+", re.sub(r"`[^`]*`", " code ", clause.lower()))
        for i, word in enumerate(words):
            if word == "more" and i and words[i - 1] == "once":
                at = i - 1
            elif word == "again":
                at = i - 1 if i and words[i - 1] == "once" else i
            else:
                continue
            if at == 0 or _SAYING_RE.search(" ".join(words[max(0, at - 5):at])) or (
                    i + 1 < len(words) and _SAYING_RE.fullmatch(words[i + 1])):
                return True
    return False


def said_again(text: str) -> bool:
    """The text says it is said again (says_again) or that its point stands as before
    (STANDING_CUES: "still", "as agreed", "按规定")."""
    return says_again(text) or tx.has_word_cue(text, STANDING_CUES)


# A later note saying that its point stands as before or follows a standing rule ("still",
# "as agreed", "per the style guide", "按规定", "规范里写了", "不变"): not a repetition by itself,
# but with an identifier or name the node writes too, the unit is that node's point said again.
STANDING_CUES = ("still", "as agreed", "as decided", "as discussed", "confirmed", "reaffirmed",
                 "per the", "as per", "stays", "unchanged", "as usual", "as always",
                 "按规定", "按照规定", "按照", "规定", "规范里", "规范上", "照旧", "不变", "继续",
                 "仍", "依旧", "还是", "如约")
CORRECTION_CUES = ("correct the", "corrected", "correction", "actually", "in fact", "no longer",
                   "not anymore", "any more", "anymore", "changed to", "change it to",
                   "changed from", "updated to", "moved to", "postponed", "was wrong", "is wrong",
                   "are wrong", "outdated", "should be", "instead", "supersede", "replaced by",
                   "changed her mind", "changed his mind", "changed their mind", "changed my mind",
                   "changed our mind", "改主意", "改变主意", "改了主意",
                   "更正", "纠正", "改为", "改成", "改回", "不再", "其实", "实际上", "应该是",
                   "应为", "已过时", "推迟到", "提前到", "有误", "错了")


# A statement that decides sets the value from then on: with another value on the same point,
# it changes that point (decisions are rare in STS-B and PAWS-X; the pair sets measure it).
DECISION_CUES = ("decided", "we decided", "agreed", "decision:", "from now on", "going forward",
                 "starting from", "决定", "约定", "商定", "从现在起", "今后", "以后一律")


# A value set from a point in time on ("从 4 月开始，月结前封版五天", "starting 1 April",
# "as of May"): the statement sets it from then on, like a decision.
_FROM_THEN_RE = re.compile(
    r"从[^，,。；;]{1,10}?(?:开始|起)|"
    r"\b(?:starting|effective|as of|from)\s+(?:\d{1,2}\s+)?(?:january|february|march|april|may|"
    r"june|july|august|september|october|november|december|\d{4}-\d{2}-\d{2}|next)\b", re.I)


# A value that changes to another: a verb of change with its new value ("goes to 14 days",
# "raised to 80", "调到 80", "延长到五天"), or "now" with the value ("can be up to six pages
# now", "现在是 80", "现在可以写两页").
_CHANGE_TO_RE = re.compile(
    r"\b(?:goes|go|going|went|gone|raised|lowered|bumped|increased|reduced|dropped|cut|"
    r"extended|shortened|moved|changed|set|grew|grows)\s+(?:up\s+|down\s+|back\s+)?"
    r"(?:to|from)\s+\S*\d|\bnow\b|"
    r"(?:调|改|提高|提升|降低|降|增加|减少|扩|缩|上调|下调|延长|缩短|放宽|收紧)(?:到|至|为|成)|"
    r"现在", re.I)


def decides(text: str) -> bool:
    """The text sets a value from then on: a decision cue, a starting point in time, or a
    value it changes to."""
    return tx.has_word_cue(text, DECISION_CUES) or _FROM_THEN_RE.search(text) is not None or \
        _CHANGE_TO_RE.search(text) is not None


def _assertive(text: str) -> str:
    """The text with "..., not X" / "而不是 X" clauses removed: what it asserts, for fact checks."""
    return _NEGATED_CLAUSE_RE.sub(" ", text)


@dataclass(frozen=True)
class Disagreement:
    kind: str          # number | date | negation
    description: str
    sentence: str      # the node's sentence
    explicit: bool     # the unit rejects the node's value or announces a correction
    statement: str = ""  # the unit's statement that sets the new value, when it is one of several
    quoted: bool = False  # the unit writes the sentence's value itself, as the one it changes


def disagreement(unit_text: str, node_sentences: Sequence[str], idf: IdfFn, *,
                 subject: str = "") -> Disagreement | None:
    """The node sentence closest to the unit that states a different number or date, or says the
    opposite, and whether the unit explicitly corrects it. `subject`: the node's name and
    description, what a sentence that names nothing speaks of (`with_subject`).

    A unit that rejects a value outright ("every 24 hours, not every 30 days") points at the node
    sentence holding the rejected value, however the two are worded.
    """
    u = bag(unit_text)
    scored = sorted(((cosine(u, bag(s), idf), s) for s in node_sentences if s), reverse=True)
    asserted = _assertive(unit_text)
    u_facts = tx.facts(asserted)
    if u_facts.quantities:
        known: set[tuple[str, float]] = set()
        for sentence in node_sentences:
            known |= tx.facts(sentence).quantities
        if u_facts.quantities <= known:
            # The node already states the unit's values (e.g. in an earlier correction line):
            # nothing left to correct on numbers.
            u_facts = tx.Facts(frozenset(), u_facts.dates, u_facts.negated, u_facts.entities)
    rejected = tx.facts(" ".join(m.group(0) for m in _NEGATED_CLAUSE_RE.finditer(unit_text)))
    # A value the unit changes from is the old value wherever the unit writes it again ("从 80%
    # 提前到 70%：...80% 报出来的时候只剩半小时"): what it asserts is the other values.
    rejected_values = {v for _, v in rejected.quantities}
    new_values = frozenset(q for q in u_facts.quantities if q[1] not in rejected_values)
    if rejected.quantities and new_values:
        for _, sentence in scored:
            n_facts = tx.facts(sentence)
            if rejected.quantities & n_facts.quantities and \
                    not new_values & n_facts.quantities:
                conflict = _numbers_conflict(replace(u_facts, quantities=new_values), n_facts,
                                             asserted, sentence) or ("", "")
                return Disagreement("number", f"{conflict[0]} vs {conflict[1]}".strip(" vs"),
                                    sentence, True, quoted=True)
    if rejected.dates and u_facts.dates:
        # "starts on Wednesday, not Thursday": the node sentence holding the rejected day.
        for _, sentence in scored:
            n_dates = tx.facts(sentence).dates
            if rejected.dates & n_dates and not u_facts.dates & n_dates:
                return Disagreement("date", f"{min(u_facts.dates)} vs "
                                            f"{min(rejected.dates & n_dates)}", sentence, True)
    quoted = _quoted_change(unit_text, [sentence for _, sentence in scored])
    if quoted is not None:
        return quoted
    cue = tx.has_word_cue(unit_text, CORRECTION_CUES)
    decided = decides(unit_text)
    whole = tx.facts(unit_text)
    # About the same point: alike, or the unit says everything the node sentence says (with
    # another value): in a young digest the unit's new words weigh the most, and "Dana agreed
    # design docs can now be six pages, appendix excluded" is then barely "alike" the sentence
    # it changes.
    # (A sentence that is only a value and its measure, "1800 年", is alike any unit that names
    # a year: it makes no point.)
    points = [sentence for sim, sentence in scored[:3] if sim >= T_POINT and
              _makes_point(sentence)]
    points += [sentence for _, sentence in scored[3:] + scored[:3]
               if sentence not in points and
               same_point(unit_text, with_subject(sentence, subject, unit_text), u, idf)]
    for sentence in points:
        # Only a unit that says it corrects something ("no longer", "changed to", "更正")
        # corrects this sentence. The same sentence with another value is not enough: on STS-B
        # train such pairs are mostly different facts (other events, other services), and
        # treating them as corrections cut the F1 of "same" at 1 % false merges from 0.41 to
        # 0.20 (the same threshold rule had to rise from 0.82 to 0.93).
        explicit = (cue or decided) and not _states_change(sentence)
        n_facts = tx.facts(sentence)
        values = _numbers_conflict(u_facts, n_facts, asserted, sentence)
        if values:
            return Disagreement("number", f"{values[0]} vs {values[1]}", sentence, explicit)
        dates = _dates_conflict(u_facts.dates, n_facts.dates)
        if dates:
            return Disagreement("date", f"{dates[0]} vs {dates[1]}", sentence, explicit)
        if whole.negated != n_facts.negated:
            # Compared without the negation words: "不" and "not" are the difference itself
            # (and a term the digest has never seen weighs the most).
            s = bag(tx._NEGATION_RE.sub(" ", sentence))
            plain = bag(tx._NEGATION_RE.sub(" ", unit_text))
            if coverage(plain, s, idf) >= 0.75 and coverage(s, plain, idf) >= 0.75:
                return Disagreement("negation", "opposite polarity", sentence, explicit)
    return _decided_change(unit_text, node_sentences, idf)


_TIME_UNITS = frozenset(("ms", "s", "min", "h", "d", "w", "mo", "y"))


def _same_measure(a: str, b: str) -> bool:
    """Two quantities' units measure the same thing: the same unit, or one is a bare number."""
    return a == b or not a or not b


_CJK_RUN_RE = re.compile(r"[\u4e00-\u9fff]+")


def _things(text: str) -> set[str]:
    """What a statement speaks of, besides its values: its Latin words and names (stems, without
    numbers) and the two-character words of its Chinese (a single character, 前 or 天, is
    shared by unrelated Chinese sentences)."""
    latin = {t for t in _plain(text).counts if t.isascii() and len(t) >= 2 and
             not any(c.isdigit() for c in t)}
    return latin | {run[i:i + 2] for run in _CJK_RUN_RE.findall(text)
                    for i in range(len(run) - 1)}


def things(text: str) -> set[str]:
    """What a statement speaks of besides its values (_things)."""
    return _things(text)


def _quoted_change(unit_text: str, node_sentences: Sequence[str]) -> Disagreement | None:
    """A statement of the unit sets a value from then on (it decides or corrects), and another
    statement of it writes the value a node sentence states, of the same measure, as the old one
    ("300 lines was too tight ... the limit is 500 lines from now on", "it timed out at
    page_size=200 ... Decision: page_size max is one hundred"): people say what was wrong with
    the old value in one sentence and set the new one in another. The sentence holding the
    quoted value, on a word of the unit's, is the one the unit corrects (`node_sentences` most
    alike first). A unit that never decides only tells a story with two values."""
    # Code decides nothing and quotes no value (a CSS rule `.my-marquee { color: purple; }` in a
    # SilverBullet note "corrected" another note's node, and its correction line quoted the
    # code cut open: the guard refused it and the unit failed).
    statements = [s for s in statements_of(unit_text) if not _code_piece(s)]
    if len(statements) < 2:
        return None
    for i, statement in enumerate(statements):
        if not (decides(statement) or tx.has_word_cue(statement, CORRECTION_CUES)):
            continue
        mine = tx.facts(_assertive(statement)).quantities
        values = {v for _, v in mine}
        others = [(other, tx.facts(other).quantities - mine)
                  for j, other in enumerate(statements) if j != i]
        for sentence in node_sentences:
            theirs = tx.facts(sentence).quantities
            if not sentence or not mine or values & {v for _, v in theirs}:
                continue
            for other, quoted in others:
                old = next(((unit, v) for unit, v in theirs
                            if any(qv == v and _same_measure(qu, unit) for qu, qv in quoted)
                            and any(_same_measure(mu, unit) for mu, _ in mine)), None)
                # The sentence speaks of what the deciding statement speaks of, and so does the
                # statement quoting the old value, or the two count the same thing ("300 行太紧"
                # / "改成 500 行"; a day or a month counts anything: "月结前一天还有人在改配置"
                # quotes a day, not the freeze's).
                if old is None or not (_things(sentence) & _things(statement)) or \
                        not (_things(other) & _things(statement) or
                             (old[0] not in _TIME_UNITS and any(mu == old[0] for mu, _ in mine))):
                    continue
                new = next((unit, v) for unit, v in mine if _same_measure(unit, old[0]))
                return Disagreement("number", f"{tx._fmt(new[1], new[0])} vs "
                                              f"{tx._fmt(old[1], old[0])}", sentence, True,
                                    statement.strip(), quoted=True)
    return None


def _dates_conflict(a: frozenset[str], b: frozenset[str]) -> tuple[str, str] | None:
    """Two sets of dates that disagree: calendar dates with calendar dates, weekdays with
    weekdays. A weekday both name says nothing of the day of the year ("2013年5月24日(星期五)"
    / "2013年8月23日(星期五)" are two Fridays)."""
    for kind in (str.isalpha, lambda d: not d.isalpha()):
        mine, theirs = {d for d in a if kind(d)}, {d for d in b if kind(d)}
        if mine and theirs and mine.isdisjoint(theirs):
            return min(mine), min(theirs)
    return None


_KNOWN_UNITS = frozenset(tx._UNIT_WORDS.values())


def _numbers_conflict(a: tx.Facts, b: tx.Facts, a_text: str, b_text: str
                      ) -> tuple[str, str] | None:
    """`tx.numbers_conflict`, where the word after a number is what it counts only if the other
    text does not name it too: "Two black dogs" / "Two dogs" count dogs on both sides (the word
    after the number, `black`, is no unit), so the value is the same; "两轮" / "两周" still
    count two things."""
    def counted(f: tx.Facts, other: tx.Facts, other_text: str) -> tx.Facts:
        values = {v for _, v in other.quantities}
        if across(a_text, b_text):
            # Across English and Chinese what a number counts is named in two languages
            # ("五个工作日" / "5 working days"): only the values can be compared.
            return replace(f, quantities=frozenset(("", v) for _, v in f.quantities))
        # A word the other text counts with a number of its own is counted on both sides:
        # "above 1 messages for 7 minutes" / "above 7 messages for 7 minutes" differ.
        theirs = {u for u, _ in other.quantities}
        quantities = frozenset(
            ("", v) if u and u not in _KNOWN_UNITS and u not in theirs and v in values and
            (_mentions(u, other_text) or strong_stem(u) in bag(other_text).counts) else (u, v)
            for u, v in f.quantities)
        return replace(f, quantities=quantities)

    a, b = _persons(a), _persons(b)
    found = tx.numbers_conflict(counted(a, b, b_text), counted(b, a, a_text))
    if found is None:
        mine, theirs = _clock_times(a_text), _clock_times(b_text)
        if mine and theirs and mine.isdisjoint(theirs):
            found = min(mine), min(theirs)
    return found


# A time of day, "10:00", "9:30", "14：30": one value. `tx.facts` reads its hours and minutes as
# two bare numbers, and "at 10:00" / "at 11:00" then share the 0 and state no other value.
_CLOCK_RE = re.compile(r"(?<![\d:.])([01]?\d|2[0-3])[:：]([0-5]\d)(?![\d:])")


def _clock_times(text: str) -> set[str]:
    return {f"{int(h)}:{m}" for h, m in _CLOCK_RE.findall(text)}


def _persons(f: tx.Facts) -> tx.Facts:
    """Chinese counts people with the measure word 名 ("13名平民") or the noun 人 ("58人"): one
    measure. Read as two, "炸死58人" / "炸死13名平民" stated no other value, and "57名参议员" /
    "57人是参议员" the same value of two things. (位, also a measure of people, counts digits and
    places too: "保留 3 位小数".)"""
    return replace(f, quantities=frozenset(("人" if u == "名" else u, v) for u, v in f.quantities))


def _states_change(sentence: str) -> bool:
    """The node sentence itself records a change or a decision ("gc_grace_seconds 改成 3 小时",
    "we decided on 4"): a unit worded the same way ("改成 3 天") states another change, not a
    correction of this one. A cue is evidence of a correction only where it is the unit's own
    (pairs zh-116 and zh-128 of the realistic-vault `tune` half merged on it)."""
    return tx.has_word_cue(sentence, CORRECTION_CUES) or decides(sentence) or \
        _MOVED_TO_RE.search(sentence) is not None


# A value that rose or fell to another, as a report records it ("收益率从 4.18% 升至 4.14%",
# "跌至 29 亿", "rose to 5.1%"): the sentence records a movement, and a unit recording another
# movement of the same measure records another one, no correction of it. (Only of the node's
# sentence: a unit's "上升至 10%" is no decision, `_CHANGE_TO_RE` keeps to verbs that set a value.)
_MOVED_TO_RE = re.compile(r"(?:升|涨|跌|降)(?:到|至)|\b(?:rose|risen|fell|fallen|climbed|"
                          r"jumped|slipped|dropped|declined|surged|plunged)\s+(?:\S+\s+)?to\s+\S*\d")


def same_point(unit_text: str, sentence: str, u: Bag, idf: IdfFn) -> bool:
    """The unit speaks of the point `sentence` makes, whatever else it says: it holds most of
    the sentence's weighted terms (POINT_CONTAIN, numbers left out), or both name the same
    setting or identifier (`default_pool_size`, `journal.postings.v2`): "维持 40" and "从 40 调到
    80" share few words."""
    # The point is what the sentence says of its values, not the values: a number written as a
    # word ("one page" / "two pages") is left out like a number in digits. Chinese joins with
    # "，" what English writes as two sentences: each clause is a point of its own ("每个月月结
    # 前封版三天，期间只修 P0": the freeze).
    # A part that says nothing but a value and its measure ("1862 年", "两年后": a node named
    # by the date its sentence opens on) makes no point: the unit's own 年 and 后 ("每年",
    # "后来") covered it, and a unit about another year "corrected" it (PAWS-X).
    plain = bag(tx._WORD_NUM_RE.sub(" ", unit_text))
    parts = [sentence]
    if tx.is_cjk_text(sentence):
        parts += [c for c in re.split(r"[，,]\s*", sentence) if c.strip() and c != sentence]
    if any(_makes_point(part) and
           coverage(bag(_VALUE_RE.sub(" ", part)), plain, idf) >= POINT_CONTAIN
           for part in parts):
        return True
    mine = {t for t in named_tokens(unit_text, names_too=False) if _IDENT_CHARS.search(t)
            and not t.replace(".", "").isdigit()}
    return bool(mine & set(named_tokens(sentence, names_too=False)))


def _makes_point(text: str) -> bool:
    """`text` says something besides its values: POINT_TERMS terms at least (a Chinese term is
    one character, and a word two: "1862 年" and "两年后" say nothing but when)."""
    return len(bag(_VALUE_RE.sub(" ", text)).counts) >= POINT_TERMS[language(text)]


# A "statement" longer than this many words is text the sentence splitter could not cut (a
# document's queries and markup run together), not one claim that could decide anything. A
# judgement: the longest statements of the realistic vault's notes are about 45 words.
STATEMENT_WORDS = 60


def _one_statement(text: str) -> bool:
    return len(text.split()) <= STATEMENT_WORDS or (tx.is_cjk_text(text) and len(text) <= 150)


def _said_by_one(found: Disagreement, unit_text: str, idf: IdfFn) -> Disagreement | None:
    """A disagreement of a unit of several statements, if one statement of it disagrees with the
    node's sentence on its own: that statement sets the new value (and a correction quotes it).
    Across a whole document, values of different statements met different sentences of a node
    (silverbullet-docs: a page "corrected" six unrelated pages); a unit of one statement is
    that statement."""
    statements = statements_of(unit_text)
    if len(statements) < 2 or _one_statement(unit_text):
        return found  # a note's few lines on one point are read together
    for statement in statements:
        if _one_statement(statement) and \
                disagreement(statement, [found.sentence], idf) is not None:
            return replace(found, statement=statement.strip())
    return None


def _decided_change(unit_text: str, node_sentences: Sequence[str], idf: IdfFn
                    ) -> Disagreement | None:
    """A statement of a unit of several sets a value where a node sentence on the same point
    states another ("决定：月结前封版四天" against "月结前封版两天"). The whole unit may
    name both values (the lesson quotes the old one), so each statement is compared alone. A
    statement that decides ("decided", "agreed", "决定") or corrects changes the value; else
    the two only disagree."""
    statements = statements_of(unit_text)
    if len(statements) < 2:
        return None
    for statement in statements:
        mine = tx.facts(_assertive(statement))
        if not mine.quantities:
            continue
        b = bag(statement)
        for sentence in node_sentences:
            if not sentence or cosine(b, bag(sentence), idf) < T_POINT:
                continue
            values = _numbers_conflict(mine, tx.facts(sentence), statement, sentence)
            if values:
                explicit = (tx.has_word_cue(statement, CORRECTION_CUES) or decides(statement)) and \
                    not _states_change(sentence)
                return Disagreement("number", f"{values[0]} vs {values[1]}", sentence, explicit,
                                    statement.strip())
    return None


_NAMED_RE = re.compile(r"[A-Za-z][\w.&/+-]*[\w&+]|(?<=[\s(])[\u4e00-\u9fff]{2,4}(?=[\s).,;])")
_IDENT_CHARS = re.compile(r"[_.&/+]|\d|[a-z][A-Z]|^[A-Z]{2,}[a-z]")
_ABBREVIATION_RE = re.compile(r"^[a-z](?:\.[a-z])+$", re.I)  # e.g, i.e, a.k.a (the last dot out)


def named_tokens(text: str, names_too: bool = True) -> list[str]:
    """The names and identifiers of a text in reading order: capitalised names
    (`tx.facts`), identifiers (`cl_waiting`, `W&B`, `journal.postings.v2`, `MLflow`), any Latin
    word in Chinese text (there it names a system, a setting or a person), and a Chinese name
    set in Latin text ("moved from Olu to 黄志强"). Remembered per text, as tx.facts is (a
    60-note vault asked 2,754 times about 312 texts); the caller gets its own list."""
    return list(_named_tokens(text, names_too))


@lru_cache(maxsize=tx.TEXT_CACHE)
def _named_tokens(text: str, names_too: bool) -> tuple[str, ...]:
    cjk = tx.is_cjk_text(text)
    names = {e.casefold() for e in tx.facts(text).entities}
    out = []
    for m in _NAMED_RE.finditer(text):
        word = m.group(0)
        if _ABBREVIATION_RE.match(word):
            continue  # `e.g.`, `i.e.`, `a.k.a.`: how a sentence goes on, no name of a thing
        if "-" in word and word.islower() and not cjk:
            if tx.word_number(word) is None:  # "twenty-four" is a number, not a name
                out.append(word)  # `idem-redis`, `ratelimit-redis`: a system's name
            continue
        if not word.isascii():
            latin = sum(c.isascii() and c.isalpha() for c in text)
            if latin > 4 * sum(1 for c in text if _CJK_TERM.match(c)):
                out.append(word)
            continue
        if (names_too and word.casefold() in names) or _IDENT_CHARS.search(word) or \
                (cjk and len(word) >= 2 and word.casefold() not in STOP):
            out.append(word.casefold())
    return tuple(out)


def is_identifier(token: str) -> bool:
    """A token written like an identifier (`cl_waiting`, `journal.postings.v2`, `W&B`, `p99`,
    `MLflow`), not a plain word or name."""
    if len(token) <= 4 and token.isalnum():
        return False  # `p99`, `5xx`, `SEV2`: everyone's metrics and levels, not one thing
    return bool(_IDENT_CHARS.search(token))


# Days and months are dates (compared as such), never the names of people or things.
_CALENDAR = frozenset(("monday", "tuesday", "wednesday", "thursday", "friday", "saturday",
                       "sunday", "mondays", "tuesdays", "wednesdays", "thursdays", "fridays",
                       "saturdays", "sundays", "january", "february", "march", "april", "may",
                       "june", "july", "august", "september", "october", "november",
                       "december"))


def entity_conflict(unit_text: str, node_text: str) -> str | None:
    """Both texts name people, products, places, systems or settings, and each names one the
    other does not ("Alice prefers..." vs "Bob prefers...", `W&B` vs `MLflow`)."""
    a = _names(unit_text) | set(named_tokens(unit_text, names_too=False))
    b = _names(node_text) | set(named_tokens(node_text, names_too=False))
    if not a or not b:
        return None
    fold_a = {e.casefold() for e in a} - _CALENDAR
    fold_b = {e.casefold() for e in b} - _CALENDAR
    # A thing one text names and the other never mentions, on both sides: one put in the
    # other's place. A name the other text writes in lower case, in another form or without
    # its dots ("Sworn In" / "sworn in", "Egyptians" / "Egypt", "U.S." / "US") is mentioned.
    mine = sorted(e for e in fold_a - fold_b if not _mentions(e, node_text))
    theirs = sorted(e for e in fold_b - fold_a if not _mentions(e, unit_text))
    if mine and theirs:
        return f"{', '.join(mine[:2])} vs {', '.join(theirs[:2])}"
    return None


_WORDS_RE = re.compile(r"[A-Za-z][a-z]{3,}")


def _names(text: str) -> set[str]:
    """The names `tx.facts` finds; in a Latin text that capitalises its words (a headline, a
    title: three in four of the words of four letters or more after the first open with a
    capital), a capital says nothing, and only names written in capitals or with inner
    capitals (`UN`, `NATO`, `MLflow`) count."""
    found = set(tx.facts(text).entities)
    words = _WORDS_RE.findall(text)[1:]  # the first opens the sentence
    if not tx.is_cjk_text(text) and len(words) >= 2 and \
            sum(w[0].isupper() for w in words) >= 0.75 * len(words):
        found = {e for e in found if sum(c.isupper() for c in e) >= 2}
    return found


def _undotted(text: str) -> str:
    return re.sub(r"(?<=\w)\.(?=\w)|(?<=\b\w)\.", "", text.casefold())


def _mentions(name: str, other: str) -> bool:
    """`other` mentions `name`: the same word in any case, without its dots,
    or (for a name of four letters or more) a word it begins ("Egypt" / "Egyptians")."""
    folded = _undotted(name)
    if not folded:
        return True
    body = _undotted(other)
    if not folded.isascii():
        return folded in body
    if len(folded) >= 4:
        return re.search(rf"(?<![\w]){re.escape(folded)}", body) is not None
    return re.search(rf"(?<![\w]){re.escape(folded)}(?![\w])", body) is not None


# A sentence's opening name, after a connective that only ties it to the one before ("And,
# Obama gets zero credit ..."): the connective is no subject.
_OPENING_RE = re.compile(r"^\W*(?:(?:And|But|So|Or|Also|Then|Now|Yes|No|Well|However|Still|"
                         r"Meanwhile|Again)\b,?\s+)?([A-Z][\w&.-]*[\w&])")


def subject_swapped(unit_text: str, texts: Sequence[str], idf: IdfFn) -> str | None:
    """The unit is a node statement with its opening name put in another's place ("Tomasz owns
    the posting-consumer migration" / "Ines owns ..."): the rest says the same (both ways,
    ORDER_RULE's gate), and each opening word is one the other text does not use. A name that
    opens a sentence has no capital of its own to tell it from a word, but the substitution
    shows it: another person, system or action doing the same thing is another fact."""
    m = _OPENING_RE.match(unit_text)
    if not m or m.group(1) in tx._COMMON_CAPS:
        return None
    mine = m.group(1)
    gate = ORDER_RULE["en"][0]
    for text in texts:
        t = _OPENING_RE.match(text or "")
        if not t or t.group(1) in tx._COMMON_CAPS or t.group(1).casefold() == mine.casefold():
            continue
        theirs = t.group(1)
        a, b = bag(unit_text), bag(text)
        sa, sb = set(bag(mine).counts), set(bag(theirs).counts)
        if not sa or not sb or sa & set(b.counts) or sb & set(a.counts):
            continue  # one opening word is used by the other text: a rewording, not a swap
        rest_a = Counter({k: v for k, v in a.counts.items() if k not in sa})
        rest_b = Counter({k: v for k, v in b.counts.items() if k not in sb})
        if len(rest_a) >= 2 and min(coverage(rest_a, rest_b, idf),
                                    coverage(rest_b, rest_a, idf)) >= gate:
            return f"{mine.casefold()} vs {theirs.casefold()}"
    return None


# One holder of a thing put in another's place, said as a change ("Ines takes over the
# posting-consumer migration from Tomasz", "何伟接手陈静的发布值班", "发布值班从陈静交给何伟"):
# the new holder, the old one, and the thing.
_HOLDER = r"[A-Z][\w.-]*\w|[\u4e00-\u9fff]{2,3}?"
_HANDOVER_RES = tuple(re.compile(p) for p in (
    rf"\b(?P<new>{_HOLDER}) (?:takes|took|is taking|will take|has taken) over (?P<thing>[^.;:]+?)"
    rf" from (?P<old>{_HOLDER})\b",
    rf"\b(?P<old>{_HOLDER}) (?:hands|handed|is handing|will hand|passes|passed) (?:over )?"
    rf"(?P<thing>[^.;:]+?) (?:over )?to (?P<new>{_HOLDER})\b",
    rf"\b(?P<new>{_HOLDER}) (?:replaces|replaced|will replace) (?P<old>{_HOLDER}) "
    rf"(?:as|on|for) (?P<thing>[^.;:]+)",
    rf"(?P<thing>[^.;:]+?) (?:moves|moved|passes|passed|goes|went) from (?P<old>{_HOLDER}) to "
    rf"(?P<new>{_HOLDER})\b",
    rf"(?<![从由])(?P<new>{_HOLDER})(?:接手|接管|接替)了?(?P<old>{_HOLDER})(?:的|负责的)(?P<thing>[^，,。；;]+)",
    rf"(?P<thing>[^，,。；;]+?)(?:从|由)(?P<old>{_HOLDER})(?:手里|那里|那边)?(?:交给|转给|移交给|"
    rf"改由|转交给)(?P<new>{_HOLDER})",
))


def handover(unit_text: str, node_sentences: Sequence[str], idf: IdfFn) -> Disagreement | None:
    """The unit hands a thing from one holder to another, and a node sentence says the old
    holder has it: that sentence is what the unit changes (an owner, a person, a system put in
    another's place, said as a change, is a correction; said without one it is another fact,
    `entity_conflict`). The sentence names the old holder, not the new one, and most of the
    thing."""
    for new, old, thing_text, start in _handover_matches(unit_text):
        thing = bag(thing_text)
        if new in tx._COMMON_CAPS or old in tx._COMMON_CAPS or \
                new.casefold() == old.casefold() or not thing:
            continue
        for sentence in node_sentences:
            # A sentence that records a handover itself is not one holder's claim.
            if not sentence or _handover_matches(sentence):
                continue
            if _mentions(old, sentence) and not _mentions(new, sentence) and \
                    coverage(thing, bag(sentence), idf) >= HANDOVER_COVERAGE:
                return Disagreement("owner", f"{new.casefold()} vs {old.casefold()}",
                                    sentence, True, statement=_sentence_at(unit_text, start))
    return None


@lru_cache(maxsize=tx.TEXT_CACHE)
def _handover_matches(text: str) -> tuple[tuple[str, str, str, int], ...]:
    """(new holder, old holder, thing, where) of each handover a text writes, in the order of
    _HANDOVER_RES: remembered per text (a unit is compared with many nodes, and a node's
    sentences with many units)."""
    return tuple((m.group("new"), m.group("old"), m.group("thing"), m.start())
                 for pattern in _HANDOVER_RES for m in pattern.finditer(text))


_CLAUSE_RE = re.compile(r"[,;:，；：]\s*")


def _systems(text: str) -> dict[str, str]:
    """The systems a text names, written like identifiers (`PagerDuty`, `incident.io`,
    `pgbouncer.ini`): casefolded -> as written. Not people, places or plain words, and not
    the parts of a URL: an address is a page someone went to or an example (`hits to e.g.
    https://til.simonwillison.org/cloudflare?a=1 redirect to ...`), not a system a decision
    puts in another's place."""
    text = tx.URL_RE.sub(" ", text)
    return {m.group(0).casefold(): m.group(0) for m in _NAMED_RE.finditer(text)
            if m.group(0).isascii() and is_identifier(m.group(0))}



def _frame(text: str, names: Iterable[str]) -> Bag:
    for name in names:
        text = re.sub(re.escape(name), " ", text, flags=re.I)
    return bag(text)


def replaced(unit_text: str, node_sentences: Sequence[str], idf: IdfFn) -> Disagreement | None:
    """A unit that decides ("Decision:", "from 1 April", "moved to") puts another system where a
    clause of a node sentence names one, the clause otherwise said again: "From 1 April, pages
    go through incident.io" against "Pages go through PagerDuty, service ...". The sentence
    with the old system is what the decision corrects. A person taking over is `handover`.
    Only the statement that decides is read: the other systems a long unit names (a document's
    commands and paths) are no decision (foam-docs: 11 pages "corrected" one another)."""
    for statement in tx.sentences(unit_text, clauses=False):  # `incident.io` is no full stop
        if _in_code(statement) or not _one_statement(statement):
            continue  # a code block names systems; it decides nothing
        if decides(statement) or tx.has_word_cue(statement, CORRECTION_CUES):
            found = _replaced_by(statement, node_sentences, idf)
            if found is not None:
                return replace(found, statement=statement.strip())
    return None


def _code_piece(text: str) -> bool:
    """A piece of a note that is code, or cut out of it: it holds a block (written out or
    folded) or opens an inline code span it does not close."""
    return _in_code(text) or text.count("`") % 2 == 1


def _in_code(text: str) -> bool:
    return "```" in text or "~~~" in text or fenced.START in text  # written out or folded


def _replaced_by(unit_text: str, node_sentences: Sequence[str],
                 idf: IdfFn) -> Disagreement | None:
    mine = _systems(unit_text)
    if not mine:
        return None
    rest = _frame(unit_text, mine.values())
    for sentence in node_sentences:
        if not sentence or _states_change(sentence) or _in_code(sentence):
            continue
        theirs = _systems(sentence)
        new = [mine[k] for k in mine if k not in theirs]
        for clause in _CLAUSE_RE.split(sentence):
            gone = [v for k, v in _systems(clause).items() if k not in mine]
            if not new or not gone:
                continue
            frame = _frame(clause, gone)
            if len(frame.counts) >= 2 and coverage(frame, rest, idf) >= POINT_CONTAIN:
                return Disagreement("tool", f"{', '.join(new)} vs {', '.join(gone)}", sentence,
                                    True)
    return None


def holders(statement: str) -> tuple[str, str] | None:
    """The new and the old holder a handover statement names, or None."""
    found = handed_over(statement)
    return (found[0], found[1]) if found else None


def handed_over(statement: str) -> tuple[str, str, str] | None:
    """The new holder, the old holder and the thing handed over that a statement names, or
    None."""
    for pattern in _HANDOVER_RES:
        m = pattern.search(statement)
        if m and m.group("new") not in tx._COMMON_CAPS and m.group("old") not in tx._COMMON_CAPS:
            return m.group("new"), m.group("old"), m.group("thing")
    return None


# Time in one unit, so that "3 小时" and "10800 秒" are one value (as tx.numbers_conflict).
_SECONDS = {"ms": 0.001, "s": 1, "min": 60, "h": 3600, "d": 86400, "w": 604800, "mo": 2592000}


def _values(text: str) -> frozenset[tuple[str, float]]:
    return frozenset(("s", value * _SECONDS[unit]) if unit in _SECONDS else (unit, value)
                     for unit, value in tx.facts(text).quantities)


def same_setting(unit_text: str, node_text: str) -> bool:
    """Both texts name the same identifiers (`ef_search`, `EMBED_CANARY_PCT`, at least one) and
    state the same values (at least one; a duration in any unit): the same setting, whatever
    words say it ("Set ef_search to 128" / "Raise the query-time ef_search to 128")."""
    mine = {t for t in named_tokens(unit_text, names_too=False) if is_identifier(t)}
    if not mine or mine != {t for t in named_tokens(node_text, names_too=False)
                            if is_identifier(t)}:
        return False
    values = _values(unit_text)
    return bool(values) and values == _values(node_text)


def handovers_agree(unit_text: str, texts: Sequence[str]) -> bool | None:
    """A statement of the unit and one of `texts` record a handover of the same thing (things
    handed over that share a term): True when they name the same new and the same old holder,
    False when not (another handover, or the same one the other way round); None when no two
    such statements are found."""
    mine = [h for st in statements_of(unit_text) if (h := handed_over(st))]
    if not mine:
        return None
    found: bool | None = None
    for text in texts:
        for statement in statements_of(text) if text else ():
            theirs = handed_over(statement)
            if theirs is None:
                continue
            for new, old, thing in mine:
                if not names_thing(theirs[2], thing):
                    continue
                if new.casefold() == theirs[0].casefold() and \
                        old.casefold() == theirs[1].casefold():
                    return True
                found = False
    return found


def names_thing(text: str, thing: str) -> bool:
    """`text` (a node's name or description) names some of `thing` (what was handed over)."""
    return bool(bag(thing).counts.keys() & bag(text).counts.keys())


def _sentence_at(text: str, pos: int) -> str:
    """The sentence of `text` that holds position `pos`."""
    start = max((m.end() for m in re.finditer(r"[.!?。！？；;]\s*", text[:pos])), default=0)
    end = re.search(r"[.!?。！？；;]", text[pos:])
    return text[start:pos + end.end() if end else len(text)].strip()


def compare(unit_text: str, node_head: str, node_body: str = "", *, idf: IdfFn = default_idf,
            semantic: SemanticFn | float | None = None,
            unit_paths: Sequence[str] = (), linked: bool = False,
            document: bool = False, cued: bool = False, whole_note: bool = False,
            across_semantic: SemanticFn | None = None) -> Comparison:
    """Compare a unit with a node. `node_head` is its name and description (the abstraction),
    `node_body` the markdown body; `semantic` an embedding cosine, or a function giving the
    cosine of the unit with each text (called once, with the best passage). `linked`: the
    unit's notes link a note the node cites (a wikilink says the later note refers to it);
    `document`: the unit is a whole document or runbook (its summary leads many points), never
    one statement said again; `cued`: the unit is said under a lead-in that says it is said
    again ("Reminders:", "记几条这次反复提到的问题："), as if it said so itself; `whole_note`: the
    unit is a whole note (its topic, runbook or log), no decision of one statement: it replaces
    no system a node's line names (`replaced`), whatever one of its sentences decides ("I
    decided to figure out how to use ... Playwright MCP", "... should be treated as a success");
    `across_semantic`: the embedder's cosines, asked only whether a unit states again a line of
    a node in the other language (restates_line_across: saying it is said again, or writing the
    line's identifier)."""
    idf = memo(idf)
    u = bag(unit_text)
    sentences = passages(node_body)
    head_score = cosine(u, bag(node_head), idf)
    window_score, window = best_window(u, sentences, idf)
    if head_score >= window_score:
        lexical, passage = head_score, node_head
    else:
        lexical, passage = window_score, " ".join(window)
    whole = bag(node_head) + bag(_sources_prose(node_body)) + bag(" ".join(sentences))
    cov = coverage(u, whole, idf)
    sem: float | None
    if callable(semantic):
        try:
            sem = max(semantic(unit_text, [passage, node_head]))
        except RuntimeError:
            sem = None
    else:
        sem = semantic
    lang = language(unit_text)
    weight = BLEND_WEIGHTS.get(lang, BLEND_WEIGHT)
    score = lexical if sem is None else weight * sem + (1 - weight) * lexical
    kind = description = old = None
    new_sentence = ""
    correction = quoted = False
    ent = entity_conflict(unit_text, f"{node_head}\n{' '.join(sentences[:2])}") or \
        subject_swapped(unit_text, [node_head, *sentences[:2]], idf) or \
        person_conflict(unit_text, passage)
    if ent and len(sentences) > 2 and not document:
        # A document names its subject at its opening; a line deeper in it that the unit sets
        # another value of, naming what the unit names (`P0`), is what the unit is about. Not
        # for a unit that is a whole document itself: it names its own subject, and one of its
        # lines meeting a line of the node makes it no more about the node's subject.
        # Or the unit writes that line's value itself as the one it changes, on a word of the
        # line's ("内存告警从 80% 提前到 70%" / "内存用到 80% 就要告警").
        line = disagreement(unit_text, sentences[2:], idf, subject=node_head)
        if line is not None and entity_conflict(unit_text, line.sentence) is None and \
                person_conflict(unit_text, line.sentence) is None and \
                (set(named_tokens(unit_text, names_too=False)) &
                 set(named_tokens(with_subject(line.sentence, node_head, unit_text),
                                  names_too=False)) or
                 (line.quoted and bool(_things(line.sentence) & _things(unit_text)))):
            ent = None
    act = action_conflict(unit_text, passage) or asks_otherwise(unit_text, passage) or \
        scope_conflict(unit_text, passage)
    handed = handover(unit_text, [*sentences, node_head], idf)
    swap = replaced(unit_text, sentences, idf) if handed is None and not whole_note else None
    if handed is not None:
        kind, description, old, correction = "owner", handed.description, handed.sentence, True
        new_sentence = handed.statement
    elif swap is not None:
        kind, description, old, correction = "tool", swap.description, swap.sentence, True
        new_sentence = swap.statement
    elif ent:
        kind, description = "entity", ent
    elif act:
        kind, description, old = "action", act, passage
    else:
        found = disagreement(unit_text, [node_head, *sentences], idf, subject=node_head)
        if found is not None and found.sentence == node_head and sentences:
            # The name and description say it, and so does a line of the body: the line is
            # what a correction quotes (and marks superseded), not the node's head.
            line = disagreement(unit_text, sentences, idf, subject=node_head)
            if line is not None and line.kind == found.kind:
                found = replace(found, sentence=line.sentence,
                                statement=found.statement or line.statement)
        if found is not None and not found.statement:
            found = _said_by_one(found, unit_text, idf)
        if found is not None:
            kind, description, old, correction = (found.kind, found.description, found.sentence,
                                                  found.explicit)
            new_sentence, quoted = found.statement, found.quoted
        elif swapped(u, unit_text, [node_head, *sentences], idf, lang):
            # The same words in another order: "A replaced B" / "B replaced A".
            kind, description, old = "order", "the same terms in another order", passage
        elif names_swapped(unit_text, [node_head, *sentences], idf, lang):
            # The same names in another order: "moved from Olu to Huang" / "from Huang to Olu".
            kind, description, old = "order", "the same names in another order", passage
        elif numbers_swapped(unit_text, [node_head, *sentences]):
            # The same numbers in another order: "round 7 of 77" / "round 77 of 7".
            kind, description, old = "order", "the same numbers in another order", passage
    if correction and kind in CORRECTABLE and kind not in ("owner", "tool") and old and \
            not names_met(unit_text, with_subject(old, node_head, unit_text)):
        # Another value of another thing: the line names what its value belongs to
        # (`sv_active`, a person, a service) and the unit names none of it.
        correction = False
    shared = bool(unit_paths) and all(f"[[{p}" in node_body for p in unit_paths)
    restated = False
    if not document and kind in (None, "entity") and \
            restates_standing(unit_text, node_head, sentences, lexical, lang, idf,
                              linked=linked, cued=cued, lines=blocks(node_body)):
        # Said again, on what the node names: the names the unit adds (`offset`, a reviewer)
        # are the occasion, not another subject.
        kind = description = None
        restated = True
    elif not document and kind in (None, "entity") and sem is not None and \
            restates_across_by_meaning(unit_text, f"{node_head} {' '.join(sentences)}", sem):
        kind = description = None
        restated = True
    elif not document and kind in (None, "entity") and (again := restates_line(
            unit_text, [*sentences, *blocks(node_body)], idf=idf,
            cue=cued or said_again(unit_text))):
        # The things the node's line states, stated again (the names the unit adds are its
        # occasion: the runbook's `journal-svc`, the policy's `p99`); the unit's statement
        # that says them is what its Sources sentence quotes.
        kind = description = None
        restated = True
        new_sentence = again[0]
    elif not document and kind in (None, "entity") and across_semantic is not None and \
            (again := restates_line_across(unit_text, f"{node_head} {' '.join(sentences)}",
                                           [*sentences, *blocks(node_body)], across_semantic,
                                           cued=cued)):
        kind = description = None
        restated = True
        new_sentence = again[0]
    # The unit records the handover a node statement records ("Tomasz handed the migration
    # over to Ines" / "Ines took over the migration from Tomasz": the order rule's guess, "A
    # replaced B", is read here), or another handover of the same thing.
    same = handovers_agree(unit_text, [node_head, *sentences]) if kind in (None, "order") \
        else None
    if same is False:
        kind, description, old = "order", "another handover of the same thing", passage
    elif same:
        kind = description = old = None
    if not restated and (cued or says_again(unit_text)):
        # Said again by someone the node names, or said again with nothing the node does not
        # already say ("We agreed again to rotate the vault tokens every 14 days").
        node_text = f"{node_head} {' '.join(sentences)}"
        mine = _speakers(unit_text)
        theirs = _speakers(node_text)
        # ... and about the same thing: alike, or naming the same thing besides the person
        # ("Dana said it once more: #settle-status, Fridays, before 4 pm").
        things = set(named_tokens(unit_text, names_too=False)) & \
            set(named_tokens(node_text, names_too=False))
        restated = (bool(mine & theirs) and (lexical >= T_POINT or bool(things))) or \
            cov >= RESTATED_COVERAGE or _restates_across(unit_text, [node_head, *sentences])
    head = bag(node_head)
    # A claim of a few terms ("Idempotency keys") is a name, not a statement to contain.
    # And the unit is mostly that claim: a unit that only cites it inside a statement of its
    # own ("night-shift dashboards follow Bob prefers dark mode and ...") is another node.
    # Or it states that claim first and then adds to it. (In a young digest every term the
    # digest has not seen yet weighs much more than the node's own: a long addition alone can
    # push the share below the bar.)
    need = CONTAIN_COVERAGE.get(lang, 0.9)
    # ... and a unit of one statement that names something the node does not changes the
    # claim rather than adding to it ("Claudia is the feminine of Claudius", PAWS-X).
    new_names = len(re.split(r"(?<=[.!?;。！？；])\s*", unit_text.strip())) <= 1 and \
        bool(set(named_tokens(unit_text)) - set(named_tokens(f"{node_head} {node_body}")))
    contains = not new_names and len(head.counts) >= 4 and coverage(head, u, idf) >= need and \
        coverage(u, head, idf) < 1.0 and (coverage(u, head, idf) >= CONTAIN_SHARE or
                                          _leads_with(unit_text, head, idf, need)) and \
        order_agreement(unit_text, node_head) >= ORDER_RULE.get(lang, ORDER_RULE["en"])[1]
    if not contains and kind is None:
        contains = restates_part(unit_text, sentences, idf, lang, head)
    if not contains and kind is None and not document and len(statements_of(unit_text)) == 1:
        # The unit states the node's claim in other words: the same handover, or the same
        # identifiers set to the same values ("Raise the query-time ef_search to 128" / "Set
        # ef_search to 128"), identifiers the node's name or description writes (what the node
        # is about; no lexical bar: in a young digest every word the node lacks weighs the
        # most, and "把 gc_grace_seconds 设置为 10800 秒" scored 0.12 against "gc_grace_seconds
        # 改成 3 小时"). What else the unit says is its own (REFINE).
        contains = bool(same) or (same_setting(unit_text, passage) and
                                  same_setting(unit_text, node_head))
    return Comparison(score=score, lexical=lexical, semantic=sem, coverage=cov,
                      novelty=1.0 - cov, conflict=description, conflict_kind=kind,
                      old_sentence=old, new_sentence=new_sentence, correction=correction,
                      # A handover names the sentence's holder and its thing: its point; a
                      # change that quotes the sentence's value is about that sentence.
                      point_contained=bool(old) and (kind in ("owner", "tool") or quoted or
                                                     same_point(unit_text, with_subject(
                                                         old or "", node_head, unit_text),
                                                         u, idf)),
                      passage=passage,
                      shared_source=shared, restated=restated, contains=contains, lang=lang)


_MEASURE_RE = re.compile(r"^(?:p\d{2,4}|\d[\d.,]*\w{0,3})$", re.I)  # p99, 12ms, 5xx


def names_met(unit_text: str, sentence: str) -> bool:
    """The unit names what the sentence's clause with a value names (an identifier, a
    product, a person; not only a measure such as `p99`), one naming it and the other saying
    it; or that clause names nothing ("每个月月结前封版三天，期间只修 P0": the freeze's clause)."""
    def named(text: str) -> set[str]:
        # Identifiers and names; not any Latin word of a Chinese text (a label such as "rule:").
        people = {e.casefold() for e in tx.facts(text).entities}
        return {t.casefold() for t in named_tokens(text) if not _MEASURE_RE.match(t) and
                (is_identifier(t) or t.casefold() in people)}

    def met(part: str) -> bool:
        theirs = named(part)
        return not theirs or any(says(unit_text, t) for t in theirs) or \
            any(says(part, t) for t in named(unit_text))

    parts = [p for p in re.split(r"[，,;；]\s*", sentence)
             if tx.facts(p).quantities or tx.facts(p).dates]
    return any(met(p) for p in parts) if parts else met(sentence)


def with_subject(sentence: str, node_head: str, unit_text: str) -> str:
    """A node's sentence read with its subject: a line that names nothing ("Retention on the
    topic is 7 days") speaks of what the node's name and description name, and the identifiers
    of those that the unit names too (`journal.postings.v2`) are added to it."""
    if not node_head or named_tokens(sentence, names_too=False):
        return sentence
    subject = [t for t in named_tokens(node_head, names_too=False)
               if is_identifier(t) and says(unit_text, t)]
    return f"{sentence} ({', '.join(subject)})" if subject else sentence


HEAD_RESTATED = 0.5  # share of a node's name and description a restating unit holds


def shared_identifiers(unit_text: str, node_text: str) -> set[str]:
    """The identifiers both texts write (`page_token`, `journal.postings.v2`, a Latin word such
    as `hotfix` in Chinese text): what names one thing in either language."""
    mine = {t for t in named_tokens(unit_text, names_too=False)
            if is_identifier(t) or (tx.is_cjk_text(unit_text) and t.isascii() and len(t) > 2)}
    return mine & set(named_tokens(node_text, names_too=False))


_HAS_CJK_RE = re.compile(f"[{tx.CJK}]")


def across(a: str, b: str) -> bool:
    """One text is Chinese and the other has no Chinese at all (a Chinese text may be mostly
    identifiers and numbers: "gc_grace_seconds 改成 3 天" is not English)."""
    return bool(_HAS_CJK_RE.search(a)) != bool(_HAS_CJK_RE.search(b))


def said_across(unit_text: str, node_text: str) -> set[str]:
    """Across English and Chinese, the Latin words of the Chinese text (`shadow`, `primary`:
    there they name a thing) that the English text says as plain words."""
    if not across(unit_text, node_text):
        return set()
    cjk, latin = (unit_text, node_text) if _HAS_CJK_RE.search(unit_text) else \
        (node_text, unit_text)
    return {t for t in named_tokens(cjk, names_too=False)
            if t.isascii() and len(t) > 2 and says(latin, t)}


def says(text: str, token: str) -> bool:
    """The text writes the token (a name, an identifier) as a word of its own, in any case."""
    if not token.isascii():
        return token.casefold() in text.casefold()
    return re.search(rf"(?<![\w-]){re.escape(token.casefold())}(?![\w-])",
                     text.casefold()) is not None


_CODE_SPAN_RE = re.compile(r"`([^`\n]{1,40})`")


def _says_more(unit_text: str, line: str, names: set[str]) -> bool:
    """Besides the names they share, the unit and a node's line share a word (`offset`,
    `float`), not a negation: two names alone are a topic ("Don't log `cursor` or `limit`
    values" is no pagination rule). Across English and Chinese the words cannot be compared:
    the names are all there is."""
    if across(unit_text, line):
        return True
    pattern = re.compile("|".join(rf"(?<![\w-]){re.escape(n)}(?![\w-])"
                                  for n in sorted(names, key=len, reverse=True)), re.I)
    # ... nor a negation ("never a float" / "never write them to the audit log").
    plain = (bag(tx._NEGATION_RE.sub(" ", pattern.sub(" ", t))).counts.keys()
             for t in (unit_text, line))
    return bool(next(plain) & next(plain))


def _holds_line(unit_text: str, line: str, names: set[str], idf: IdfFn) -> bool:
    """The unit holds most of the weighted terms of a node's line (POINT_CONTAIN, numbers left
    out), a line of a few terms at least that names one of `names`."""
    if not any(says(line, t) for t in names):
        return False
    b = bag(tx._WORD_NUM_RE.sub(" ", line))
    return len(b.counts) >= 4 and \
        coverage(b, bag(tx._WORD_NUM_RE.sub(" ", unit_text)), idf) >= POINT_CONTAIN


def restates_standing(unit_text: str, node_head: str, sentences: Sequence[str], lexical: float,
                      lang: str, idf: IdfFn, *, linked: bool = False, cued: bool = False,
                      lines: Sequence[str] = ()) -> bool:
    """The unit says the node's point again: it says so (a cue of repetition or of a standing
    rule: "again", "per the style guide", "按规定", "不变"), or its note links the node's note;
    it writes an identifier or name the node writes; it is about what the node is about (an
    identifier of the node's name or description, or HEAD_RESTATED of their terms); after a
    link without a cue, it is also on the node's topic (half the related threshold: a young
    digest weighs every word it has not seen yet the most); and it states no value the node
    does not (a changed value is a correction, not this). A unit of many statements (a whole
    document) is never one node's point said again."""
    cue = cued or said_again(unit_text)
    if not (linked or cue):
        return False
    if len(statements_of(unit_text)) > MAX_RESTATING_CLAUSES:
        return False
    node_text = f"{node_head} {' '.join(sentences)}"
    shared = shared_identifiers(unit_text, node_text)
    said = said_across(unit_text, node_text)
    # What the unit writes as code (`cursor`, `limit`) names a thing, and the node says it.
    coded = {t.strip() for t in _CODE_SPAN_RE.findall(unit_text.casefold())
             if t.strip() and says(node_text, t.strip())}
    if not (shared or said or coded):
        return False
    on_topic = lexical >= thresholds(False, lang)[1] / 2
    # What the node is about: an identifier its name or description writes, or most of its
    # name and description (a plain word such as `hotfix` is named by many rules).
    # Or, for a note that links the node's note and says it follows it ("use `page_token`,
    # per the [[api-style-guide]]"), an identifier of the node's body: a document names its
    # subject at its head, each of its rules deeper in.
    # Or, across languages, one sentence of the node says two of the things the unit names
    # ("按规定要 shadow 满两轮才能做 primary" / "New people shadow two full rotations before they
    # go primary"): one shared word (`on-call`) is a topic, two are the point. A document's
    # rule is a line of it, however many sentences ("Pagination is cursor based: `page_token`
    # ... No offset pagination"); in one language, two shared identifiers likewise. Or the unit
    # holds most of one line of the node that names what they share ("何伟问 hotfix 要不要发布单：
    # 要，事后补，规范里写了" / "补充：hotfix 也要事后补发布单").
    about = bool({t for t in shared if is_identifier(t)} &
                 set(named_tokens(node_head, names_too=False))) or \
        any(sum(says(s, t) for t in said | shared | coded) >= 2 and
            _says_more(unit_text, s, said | shared | coded) for s in [*sentences, *lines]) or \
        any(_holds_line(unit_text, b, said | shared | coded, idf) for b in lines) or \
        coverage(bag(node_head), bag(unit_text), idf) >= HEAD_RESTATED or \
        (linked and cue and any(is_identifier(t) for t in shared))
    # A link alone is about the whole note: the unit must also be on the node's topic.
    if not (about if cue else (on_topic and about)):
        return False
    # The values of the statements that say the node's thing: another statement of the unit
    # is its occasion ("这次 PR 里 ... 差一分钱": this review's bug, not the rule's value).
    point = [st for st in statements_of(unit_text)
             if any(says(st, t) for t in shared | said | coded)] or [unit_text]
    mine = tx.facts(_assertive(" ".join(point))).quantities
    theirs = tx.facts(node_text).quantities
    if across(unit_text, node_text):
        # Across languages only the values can be compared ("两轮" / "two full rotations").
        return {v for _, v in mine} <= {v for _, v in theirs}
    return mine <= theirs


# Across English and Chinese the words cannot be compared; the offline embedder places a
# statement and its translation close: on the dev realistic vault, the retro's "First review
# comment within one working day ... (陈静 asked for this in Feb, still ...)" at 0.50 to 陈静's
# 24-hour wish, at 0.27 to her other preference and 0.23 or less to the other lines.
T_SAME_ACROSS = 0.4


def people_named(text: str) -> set[str]:
    """The people a text names, a Chinese name set in Latin text included ("(陈静 asked")."""
    return _speakers(text) | {t for t in named_tokens(text) if tx.is_cjk_name(t)}


def restates_across_by_meaning(unit_text: str, node_text: str, semantic: float) -> bool:
    """A unit in one language says again what a node says in the other: it says so (a cue of
    repetition or of a standing rule), both name the same person or identifier, and the
    embedder places them close (T_SAME_ACROSS). A changed value is never this."""
    if language(unit_text) == language(node_text) or semantic < T_SAME_ACROSS:
        return False
    if not said_again(unit_text):
        return False
    if len(statements_of(unit_text)) > MAX_RESTATING_CLAUSES:
        return False
    return bool(people_named(unit_text) & people_named(node_text)) or \
        bool(shared_identifiers(unit_text, node_text))


# A clause ends at a comma, semicolon or colon (a colon inside a time, "16:00", ends nothing).
_ANCHOR_CLAUSE_RE = re.compile(r"[,;，；：、]\s*|:\s+")
ANCHORS_SAID = 2  # distinct things a clause and a node line both state, at least
# In one language, the share of the clause's other weighted terms the line holds too: the words
# around the things agree ("灰度还是 5% → 25% → 100%" / "灰度顺序 5% → 25% → 100%"), where "3 月
# 3 日" of a talk's date and of a load test's do not (0.33). Weighed by length, not by the
# vault's IDF: in a young digest an unseen word ("还") outweighs the rest.
ANCHOR_WORDS = 0.5


def anchors(text: str, measured: bool = False) -> set[tuple[str, object]]:
    """What a text states that names one thing in any wording or language: its values (a
    number with its measure) and its identifiers (`page_token`, `journal.postings.v2`, a code
    span). `measured`: only values with a measure (`5%`, `30 分钟`): a bare number is compared
    by the words around it, which across languages cannot be (a time's "03:00" and "0 lost
    postings"; "3 月" and "3 members" are no one thing)."""
    found: set[tuple[str, object]] = {
        ("value", (m, v)) for m, v in tx.facts(_assertive(text)).quantities if m or not measured}
    found |= {("name", t.casefold()) for t in named_tokens(text, names_too=False)
              if is_identifier(t)}
    found |= {("name", t.strip().casefold()) for t in _CODE_SPAN_RE.findall(text)
              if t.strip() and not t.strip().replace(".", "").isdigit()}
    return found


def _said_in(anchor: tuple[str, object], line: str, line_anchors: set[tuple[str, object]]
             ) -> bool:
    return anchor in line_anchors or (anchor[0] == "name" and says(line, str(anchor[1])))


def _plain(text: str) -> Bag:
    """A statement's terms without its values and negations (the claim's head terms; a value
    and the polarity are compared on their own)."""
    return bag(tx._NEGATION_RE.sub(" ", tx._WORD_NUM_RE.sub(" ", text)))


def holds_statement(statement: str, line: str, idf: IdfFn) -> bool:
    """The unit's statement states the line's claim: RESTATED_COVERAGE of the line's weighted
    terms (values and negations aside; a line of a few terms at least), in the line's order,
    the same polarity ("No network calls inside a DB transaction or inside a Kafka poll loop"
    / "Never do network calls inside a DB transaction")."""
    b = _plain(line)
    return len(b.counts) >= 4 and coverage(b, _plain(statement), idf) >= RESTATED_COVERAGE and \
        bool(tx._NEGATION_RE.search(statement)) == bool(tx._NEGATION_RE.search(line)) and \
        order_agreement(statement, line) >= ORDER_RULE.get(language(line), ORDER_RULE["en"])[1]


def restates_line(unit_text: str, lines: Sequence[str], *, cue: bool = False,
                  idf: IdfFn = default_idf) -> tuple[str, str] | None:
    """The unit states again what one line of the node states: a clause of the unit states
    ANCHORS_SAID things or more (values, identifiers) and every one of them is in the line
    ("canary 5% -> 25% -> 100%" / "灰度顺序 5% → 25% → 100%，每一步至少观察 30 分钟"), in the
    line's order, and no value of the unit's statement differs from the line's value of the same
    measure (a changed value is a correction).

    Across languages the words cannot be compared and the things said are the claim, the
    clause naming nothing the line does not (another person or system in the same values). In
    one language the unit must say it is said again (`cue`): the same values and names there
    may be another claim on them (PAWS-X: "A beat B 6-4" / "B beat A 6-4"), which the words
    tell apart; the line also holds most of the clause's other words (ANCHOR_WORDS) and shares
    a plain word with it (two identifiers alone are a topic, "Don't log `cursor` or `limit`").
    With a cue, a statement holding the line's claim (`holds_statement`) says it again too,
    whatever it names or sets besides. Returns the unit's statement and the line it states
    again, or None.
    A unit of many statements (a document) restates none."""
    statements = statements_of(unit_text)
    if not statements or len(statements) > MAX_RESTATING_CLAUSES:
        return None
    for line in lines:
        if not _one_statement(line):
            continue
        cross = across(unit_text, line)
        if not (cross or cue):
            continue
        theirs = anchors(line, measured=cross)
        for statement in statements:
            said = tx.facts(_assertive(statement)).quantities
            known = tx.facts(line).quantities
            if cross:
                if not {v for _, v in said} <= {v for _, v in known}:
                    continue
            elif any(m and m in {k for k, _ in known} and (m, v) not in known
                     for m, v in said):
                continue
            if not cross and said <= known and holds_statement(statement, line, idf) and \
                    entity_conflict(statement, line) is None and \
                    person_conflict(statement, line) is None:
                return statement.strip(), line
            if len(theirs) < ANCHORS_SAID:
                continue
            for clause in _ANCHOR_CLAUSE_RE.split(statement):
                mine = anchors(clause, measured=cross)
                if len(mine) < ANCHORS_SAID or \
                        not all(_said_in(a, line, theirs) for a in mine):
                    continue
                if not cross and (coverage(_plain(clause), _plain(line), default_idf) < ANCHOR_WORDS
                                  or not _says_more(clause, line, {
                                      str(n) for k, n in mine if k == "name"} or {"\x00"})):
                    continue
                if entity_conflict(clause, line) or person_conflict(clause, line):
                    continue
                if _same_order(clause, line, mine):
                    return statement.strip(), line
    return None


def _same_order(clause: str, line: str, said: set[tuple[str, object]]) -> bool:
    """The values the clause and the line both state come in the same order (a swap, "max 50,
    default 200" / "max 200, default 50", is another claim)."""
    values = {v[1] for k, v in said if k == "value" and isinstance(v, tuple)}

    def order(text: str) -> list[float]:
        found = (float(m.group(0).replace(",", "")) for m in _NUMBER_RE.finditer(text))
        return list(dict.fromkeys(x for x in found if x in values))

    a, b = order(clause), order(line)
    return [x for x in a if x in b] == [x for x in b if x in a]


def _same_identifier(statement: str, line: str) -> bool:
    """The statement and the line write one identifier (`max.poll.interval.ms`, `sorted()`,
    `expand/contract`): a thing named alike in both languages, unlike a service's name
    (`journal-svc`) that half the notes name."""
    return any(is_identifier(t) for t in shared_identifiers(statement, line))


def restates_line_across(unit_text: str, node_text: str, lines: Sequence[str],
                         similarity: SemanticFn, *, cued: bool = False
                         ) -> tuple[str, str] | None:
    """A unit in one language says again a line of a node in the other, worded so that no
    value or identifier shows it ("按照值班规定，复盘文档五个工作日内完成" / "A postmortem doc is
    due within 5 working days ... for every SEV1 and SEV2"): the statement says so (a cue of
    its own, or the unit's lead-in: `cued`; another statement of the unit, "级别 SEV2", applies
    the policy rather than saying it again), the unit names a person or thing the node names
    too, and the embedder places the statement close to one line (T_SAME_ACROSS: 0.45 there,
    0.17 or less to the policy's other lines), with the line's polarity ("这次没有 idle in
    transaction" is no "the transaction stays open") and every value of it in the line. The
    embedder is evidence of the same claim here, never blended into a score (EMBED_LANGUAGES).
    A statement that does not say so may still state a line it writes an identifier of
    (`_same_identifier`: an English log setting the Chinese talk's `session.timeout.ms=45000`,
    a newcomer's Chinese notes writing down the runbook's expand/contract caveat); a dev scan of
    every line across languages found 4 such pairs, all the same setting or metric, where any
    shared name (`journal-svc`, `posting-consumer`) had added 3 unrelated ones.
    Returns the unit's statement and the line, or None."""
    statements = statements_of(unit_text)
    if not statements or len(statements) > MAX_RESTATING_CLAUSES or \
            not across(unit_text, node_text):
        return None
    if not (people_named(unit_text) & people_named(node_text) or
            shared_identifiers(unit_text, node_text) or said_across(unit_text, node_text)):
        return None
    targets = [line for line in lines if _one_statement(line) and across(unit_text, line)]
    if not targets:
        return None
    best: tuple[float, str, str] | None = None
    for statement in statements:
        cue = cued or said_again(statement)
        if not cue and not any(_same_identifier(statement, line) for line in targets):
            continue
        try:
            scores = similarity(statement, targets)
        except RuntimeError:
            return None
        for score, line in zip(scores, targets, strict=True):
            if not cue and not _same_identifier(statement, line):
                continue
            mine = {v for _, v in tx.facts(_assertive(statement)).quantities}
            if score >= T_SAME_ACROSS and mine <= {v for _, v in tx.facts(line).quantities} \
                    and bool(tx._NEGATION_RE.search(statement)) == \
                    bool(tx._NEGATION_RE.search(line)) and (best is None or score > best[0]):
                best = (score, statement.strip(), line)
    return (best[1], best[2]) if best else None


# A statement ends at a Latin stop followed by a space, or at a Chinese stop: a dot inside a
# number or an identifier ends nothing ("亏损9.65亿美元", "journal.postings.v2", "date.today()";
# cut there, "9." and "65亿" were two statements with numbers of their own).
_STATEMENT_END_RE = re.compile(r"(?<=[.!?;])\s+|(?<=[。！？；])\s*")


def statements_of(text: str) -> list[str]:
    return [c for c in _STATEMENT_END_RE.split(text) if c.strip()]


def _restates_across(unit_text: str, texts: Sequence[str]) -> bool:
    """A unit in one language saying again what a node says in the other ("我们再次约定每 14 天
    轮换 vault token" against "Vault tokens are rotated every 14 days"): across languages only
    what a statement binds can be compared. One node statement states every number of the unit
    with its unit (at least one), and every Latin word the unit writes (`vault`, `token`) is a
    term of that statement."""
    lang = language(unit_text)
    mine = tx.facts(_assertive(unit_text)).quantities
    if not mine:
        return False
    latin = {strong_stem(w.casefold()) for w in re.findall(r"[A-Za-z][\w.-]*[A-Za-z0-9]", unit_text)
             if w.casefold() not in STOP} if lang == "zh" else set()
    for text in texts:
        if not text or language(text) == lang:
            continue
        if lang == "en":
            latin = {strong_stem(w.casefold()) for w in re.findall(r"[A-Za-z][\w.-]*[A-Za-z0-9]",
                                                                     text)
                     if w.casefold() not in STOP}
            words = set(bag(unit_text).counts)
        else:
            words = set(bag(text).counts)
        if mine <= tx.facts(text).quantities and latin and latin <= words:
            return True
    return False


def _leads_with(unit_text: str, head: Bag, idf: IdfFn, need: float) -> bool:
    """A sentence of the unit opens with the node's claim: its first terms (the claim's number of
    distinct terms, plus two) hold the claim. "Schema migrations ship in their own deploy,
    before ..., and ..." opens with it; "Night-shift dashboards follow Bob prefers dark mode"
    only cites it."""
    size = len(head.counts) + 2
    for sentence in re.split(r"(?<=[.!?。！？])\s*", unit_text):
        terms = [t for t, _ in sequence(sentence)]
        if terms and coverage(head, Bag(Counter(terms[:size]), {}), idf) >= need:
            return True
    return False


def restates_part(unit_text: str, sentences: Sequence[str], idf: IdfFn, lang: str,
                  head: Bag | None = None) -> bool:
    """One statement of the unit (of several) is a statement of the node, said again: "every
    POST must carry an idempotency key; the server stores the key with the response for 24
    hours" against a node that says the second half. The unit then adds the rest to that node.

    Chinese joins with "，" what English writes as two sentences: there a clause of the unit
    may also restate the leading clause of a node sentence (its statement; the clauses after it
    qualify it), when that clause holds most of what the node is about (RESTATED_CLAUSE: a
    leading phrase, "越南战争期间", is no claim). Any clause against any clause merged 10 more of
    the 567 non-paraphrases of the PAWS-X tuning half, each sharing one clause."""
    statements = statements_of(unit_text)
    pairs = [(st, sentences) for st in statements]
    count = len(statements)
    if lang == "zh":
        split = r"(?<=[，,])\s*"
        clauses = [c for st in statements for c in re.split(split, st) if c.strip()]
        leading = [c for s in sentences for c in re.split(split, s)[:1]
                   if c.strip() and c.strip() != s.strip()]
        count = len(clauses)
        if head is not None and leading:
            pairs += [(c, leading) for c in clauses
                      if coverage(head, bag(c), idf) >= RESTATED_CLAUSE]
    if not 2 <= count <= MAX_RESTATING_CLAUSES:
        # A long unit (a whole document) shares a sentence or two with many nodes: one of its
        # sentences said again is no evidence that it is that node.
        return False
    same_t = thresholds(False, lang)[0]
    for text, targets in pairs:
        b = bag(text)
        if len(b.counts) < 4:
            continue
        for sentence in targets:
            if cosine(b, bag(sentence), idf) >= same_t and \
                    tx.facts(text).quantities == tx.facts(sentence).quantities:
                return True
    return False


def swapped(u: Bag, unit_text: str, texts: Sequence[str], idf: IdfFn, lang: str) -> bool:
    """The node's statement most like the unit says nearly the same terms (both ways), in
    another order (ORDER_RULE). Statements are compared one by one: a passage of several
    sentences has no order of its own."""
    gate, minimum = ORDER_RULE.get(lang, ORDER_RULE["en"])
    scored = [(min(coverage(u, bag(t), idf), coverage(bag(t), u, idf)), t) for t in texts if t]
    if not scored:
        return False
    best, text = max(scored, key=lambda st: st[0])
    return best >= gate and order_agreement(unit_text, text) < minimum


_NUMBER_RE = re.compile(tx.NUMBER_START + r"\d+(?:\.\d+)?")  # a number, as tx.facts reads it


def numbers_swapped(unit_text: str, texts: Sequence[str]) -> bool:
    """A text states the unit's numbers (two or more distinct, the same multiset) in another
    order: each number then belongs to something else."""
    mine = _NUMBER_RE.findall(unit_text)
    if len(set(mine)) < 2:
        return False
    for text in texts:
        theirs = _NUMBER_RE.findall(text)
        if sorted(theirs) == sorted(mine) and theirs != mine:
            return True
    return False


def names_swapped(unit_text: str, texts: Sequence[str], idf: IdfFn, lang: str) -> bool:
    """A text that says nearly what the unit says (both ways, ORDER_RULE's gate) names two or
    more of the unit's names and identifiers in another order: the roles changed hands
    ("moved from Olu to Huang" / "from Huang to Olu")."""
    mine = list(dict.fromkeys(named_tokens(unit_text)))
    if len(mine) < 2:
        return False
    u = bag(unit_text)
    gate = ORDER_RULE.get(lang, ORDER_RULE["en"])[0]
    for text in texts:
        t = bag(text)
        if min(coverage(u, t, idf), coverage(t, u, idf)) < gate:
            continue
        theirs = list(dict.fromkeys(named_tokens(text)))
        shared = set(mine) & set(theirs)
        if len(shared) >= 2 and [t for t in mine if t in shared] != \
                [t for t in theirs if t in shared]:
            return True
    return False


# Chinese coordinators: which items a list joins is part of what it says ("来自希腊和马其顿色雷斯" /
# "源自马其顿和色雷斯"), yet they are stop characters, absent from `sequence`. English "and" is
# left out: on STS-B train it only made "white and brown" / "brown and white" differ.
_COORDINATORS = re.compile(r"[和与及或]")


def _ordered(text: str) -> list[str]:
    """The terms of `sequence`, and in Chinese each coordinator between them, in reading order."""
    if text.isascii():
        return [t for t, _ in sequence(text)]
    out: list[str] = []
    for k, piece in enumerate(_COORDINATORS.split(text)):
        if k:
            out.append("和")
        out += [t for t, _ in sequence(piece)]
    return out


def order_agreement(a: str, b: str) -> float:
    """How much of what two texts share they say in the same order: the longest common
    subsequence of their shared terms over the number of shared terms (1.0: the same order).
    PAWS-X's non-paraphrases are the same words with two roles swapped; bags cannot see it."""
    sa, sb = _ordered(a), _ordered(b)
    common = set(sa) & set(sb)
    xa, xb = [t for t in sa if t in common], [t for t in sb if t in common]
    shared = sum((Counter(xa) & Counter(xb)).values())
    if not shared:
        return 1.0
    if len(xa) * len(xb) > 40_000:  # very long passages: order says little there
        return 1.0
    prev = [0] * (len(xb) + 1)
    for x in xa:
        cur = [0]
        for j, y in enumerate(xb):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1] / shared


# Opposite actions: the same sentence with the other one is another fact ("buy" / "sell").
ANTONYMS = (
    ("buy", "sell"), ("purchase", "sell"), ("add", "remove"), ("enable", "disable"),
    ("allow", "forbid"), ("allow", "deny"), ("allow", "block"), ("increase", "decrease"),
    ("increase", "reduce"), ("raise", "lower"), ("open", "close"), ("accept", "reject"),
    ("approve", "reject"), ("start", "stop"), ("include", "exclude"), ("upload", "download"),
    ("import", "export"), ("lock", "unlock"), ("encrypt", "decrypt"), ("grant", "revoke"),
    ("hire", "fire"), ("win", "lose"), ("push", "pull"), ("show", "hide"),
    ("create", "delete"), ("install", "uninstall"), ("join", "leave"), ("borrow", "lend"),
    ("买", "卖"), ("买入", "卖出"), ("购买", "出售"), ("增加", "减少"), ("提高", "降低"),
    ("上升", "下降"), ("上涨", "下跌"), ("涨", "跌"), ("开启", "关闭"), ("打开", "关闭"),
    ("启用", "停用"), ("启用", "禁用"), ("允许", "禁止"), ("接受", "拒绝"), ("批准", "拒绝"),
    ("同意", "反对"), ("加密", "解密"), ("上传", "下载"), ("导入", "导出"), ("升级", "降级"),
    ("加入", "退出"), ("添加", "删除"), ("创建", "删除"), ("显示", "隐藏"), ("借入", "借出"),
    ("收款", "付款"), ("入库", "出库"), ("锁定", "解锁"), ("安装", "卸载"), ("赢", "输"),
    # Directions of a bound or of time: the same sentence with the other one is another rule.
    ("before", "after"), ("above", "below"), ("under", "over"), ("earlier", "later"),
    ("minimum", "maximum"), ("前", "后"), ("提前", "推迟"), ("以上", "以下"), ("最多", "最少"),
    ("至少", "至多"), ("least", "most"), ("高于", "低于"), ("超过", "低于"), ("大于", "小于"),
    ("多于", "少于"), ("primary", "replica"), ("主库", "从库"),
    ("weaken", "strengthen"), ("rise", "fall"), ("gain", "loss"), ("succeed", "fail"),
    ("success", "failure"), ("pass", "fail"), ("support", "oppose"), ("love", "hate"),
    ("strong", "weak"), ("high", "low"), ("north", "south"), ("east", "west"),
    ("public", "private"), ("internal", "external"), ("valid", "invalid"), ("true", "false"),
    ("impose", "lift"), ("always", "never"), ("like", "dislike"), ("like", "hate"),
    ("成功", "失败"), ("支持", "反对"), ("公开", "私有"), ("内部", "外部"), ("以东", "以西"),
    ("以南", "以北"), ("东部", "西部"), ("南部", "北部"), ("强", "弱"), ("喜欢", "讨厌"),
    ("总是", "从不"), ("始终", "从不"),
)
# Another person, said with a common noun: "A man plays a guitar" / "A woman plays a guitar"
# (the entity rule, for people no name tells apart).
PERSONS = (("man", "woman"), ("men", "women"), ("boy", "girl"), ("boys", "girls"),
           ("男人", "女人"), ("男孩", "女孩"), ("男子", "女子"), ("男生", "女生"))
_PERSON_STEMS = tuple((strong_stem(a) if a.isascii() else a, strong_stem(b) if b.isascii()
                       else b) for a, b in PERSONS)
_ANTONYM_STEMS = tuple((strong_stem(a) if a.isascii() else a, strong_stem(b) if b.isascii()
                        else b) for a, b in ANTONYMS)


# The irregular forms of ANTONYMS' verbs, which no suffix rule stems ("won" / "lost", "sold" /
# "bought", "rose" / "fell"): an antonym pair holds in every tense. ("left" is also a direction
# and what remains, "two days left"; `_opposite` still needs "join" on the other side.)
_IRREGULAR = {"rose": "rise", "risen": "rise", "fell": "fall", "fallen": "fall", "sold": "sell",
              "bought": "buy", "won": "win", "lost": "lose", "hid": "hide", "hidden": "hide",
              "shown": "show", "lent": "lend", "forbade": "forbid", "forbidden": "forbid",
              "left": "leave"}


def _inflections(word: str) -> set[str]:
    """The regular inflections of an English word: -s, -ed, -ing, with a final e dropped, a
    final y turned to i, a short word's last consonant doubled ("stopped", "winning")."""
    out = {word, word + ("es" if re.search(r"(?:s|sh|ch|x|z|o)$", word) else "s")}
    if word.endswith("e"):
        return out | {word + "d", word[:-1] + "ing"}
    if re.search(r"[^aeiou]y$", word):
        return out | {word[:-1] + "ied", word[:-1] + "ies", word + "ing"}
    out |= {word + "ed", word + "ing"}
    if len(word) <= 4 and re.search(r"[^aeiou][aeiou][^aeiouwxy]$", word):
        out |= {word + word[-1] + "ed", word + word[-1] + "ing"}
    return out


def _inflected_stems(words: Iterable[str]) -> dict[str, str]:
    """The stem of each inflection of `words` that the suffix stemmer does not bring back to the
    word's own stem ("increased" -> increa, "increase" -> increas; "disabled" -> disabl,
    "disable" -> dis), mapped to that stem."""
    out = {}
    for word in words:
        base = strong_stem(word)
        for form in _inflections(word):
            for term in analyze(form, query=True):
                if strong_stem(term) != base:
                    out[strong_stem(term)] = base
    return out


_INFLECTED = _inflected_stems(w for pair in (*ANTONYMS, *PERSONS) for w in pair if w.isascii())


def _acts(text: str, pairs: Sequence[tuple[str, str]] = _ANTONYM_STEMS) -> set[str]:
    """The antonym words a text uses (English by stem, in any inflection; Chinese as written)."""
    stems = _act_stems(text)
    stems |= {_INFLECTED[s] for s in stems if s in _INFLECTED}
    out = set()
    for a, b in pairs:
        for w in (a, b):
            if (w in stems) if w.isascii() else (w in text):
                out.add(w)
    return out


@lru_cache(maxsize=tx.TEXT_CACHE)
def _act_stems(text: str) -> frozenset[str]:
    """The stems of a text's English words, irregular forms read as their base (remembered
    per text: a unit is compared with many nodes)."""
    return frozenset(strong_stem(_IRREGULAR.get(t, t)) for t in analyze(text, query=True)
                     if t.isascii())


# Opposite manners, said in phrases: one at a time or all together ("Drain GPU nodes one at a
# time" / "Drain all GPU nodes at the same time").
MANNERS = (
    ("one at a time", re.compile(r"\bone (?:at a time|by one|after (?:the )?other)\b|"
                                 r"\b(?:sequentially|serially|in sequence|in series)\b|"
                                 r"逐个|逐一|一个一个|依次|串行", re.I)),
    ("all at once", re.compile(r"\b(?:at the same time|all at once|in parallel|simultaneously|"
                               r"concurrently)\b|同一时间|一次性全部|并行", re.I)),
)
# Opposite bounds on a value, said in phrases: "up to six pages" / "at least six pages" (the
# word pairs, `least` / `most`, are ANTONYMS). "Up to" bounds a value only before a number;
# so do 以内 / 以上 ("300 行以内", "300 行以上"), which mean "within" and "the above" elsewhere.
_ZH_AMOUNT = r"[\d一二两三四五六七八九十百千万]\s*[\u4e00-\u9fff%]{0,4}?"
BOUNDS = (
    ("at most", re.compile(r"\bup to (?=\d|(?:a|an|one|two|three|four|five|six|seven|eight|nine|"
                           r"ten|twelve|twenty|thirty|hundred)\b)|\b(?:at most|no more than|"
                           r"not more than|no longer than|or (?:less|fewer)|capped at|"
                           r"max(?:imum)?(?![\w-]))|最多|至多|最长|"
                           r"上限|不(?:要|能|得|可以?)?超过|不多于|不高于|"
                           rf"{_ZH_AMOUNT}(?:以内|以下)", re.I)),
    ("at least", re.compile(r"\b(?:at least|no less than|not less than|no fewer than|"
                            r"no shorter than|or more)\b|至少|最少|最短|下限|"
                            r"不(?:要|能|得|可以?)?少于|不低于|不短于|"
                            rf"{_ZH_AMOUNT}以上", re.I)),
)


# What a value holds for: "31 days per request" / "31 days per month" (a rate's denominator,
# a quota's scope) are other rules with the same number. English `per`; "per cent" is a unit.
_PER_RE = re.compile(r"\bper (?!cent\b)([a-z]+)", re.I)


def _scopes(text: str) -> set[str]:
    return {strong_stem(m.group(1).casefold()) for m in _PER_RE.finditer(text)}


def scope_conflict(unit_text: str, node_text: str) -> str | None:
    """Both texts say what their values hold for (`per request`, `per month`), and not the
    same thing."""
    mine, theirs = _scopes(unit_text), _scopes(node_text)
    if mine and theirs and mine.isdisjoint(theirs):
        return f"per {min(mine)} vs per {min(theirs)}"
    return None


def _opposite(unit_text: str, node_text: str, pairs: Sequence[tuple[str, str]]) -> str | None:
    """One text uses a word of a pair where the other uses its opposite, and neither both."""
    ua, na = _acts(unit_text, pairs), _acts(node_text, pairs)
    for a, b in pairs:
        if (a in ua and b in na and b not in ua and a not in na) or \
                (b in ua and a in na and a not in ua and b not in na):
            return f"{a if a in ua else b} vs {b if a in ua else a}"
    return None


def person_conflict(unit_text: str, node_text: str) -> str | None:
    """The unit says of a man what the node says of a woman (PERSONS), or the reverse."""
    return _opposite(unit_text, node_text, _PERSON_STEMS)


def action_conflict(unit_text: str, node_text: str) -> str | None:
    """The unit does one thing where the node does its opposite ("buy" / "sell", "买" / "卖"),
    or does it in the opposite manner (one at a time / all at once), or bounds a value the other
    way (up to / at least), and neither says both."""
    found = _opposite(unit_text, node_text, _ANTONYM_STEMS)
    if found:
        return found
    for phrases in (MANNERS, BOUNDS):
        um = {name for name, pattern in phrases if pattern.search(unit_text)}
        nm = {name for name, pattern in phrases if pattern.search(node_text)}
        if len(um) == 1 and len(nm) == 1 and um != nm:
            return f"{min(um)} vs {min(nm)}"
    return None


def bounds_of(text: str) -> set[str]:
    """Which way `text` bounds a value (BOUNDS: at most, at least), if it does."""
    return {name for name, pattern in BOUNDS if pattern.search(text)}


_QUESTION_END = re.compile(r"[?？][\s\"'”’)）。.]*$")


# What a question asks for, first match first (什么原因 is a why, 几点 a when, before 什么, 几).
_ASKS = tuple((kind, re.compile(pattern, re.I)) for kind, pattern in (
    ("why", r"为什么|为何|什么原因|\bwhy\b"),
    ("when", r"什么时候|何时|几点|\bwhen\b"),
    ("where", r"哪里|哪儿|\bwhere\b"),
    ("who", r"谁|\bwho(?:m|se)?\b"),
    ("amount", r"多久|多少|多长|几|\bhow (?:long|many|much|often)\b"),
    ("how", r"怎么|怎样|如何|\bhow\b"),
    ("what", r"什么|哪|\bwhat\b|\bwhich\b"),
    ("whether", r"吗|是否|能否|是不是|^\s*(?:is|are|was|were|do|does|did|can|could|should|will)\b"),
))


def asked_kind(text: str) -> str | None:
    """What a question asks for (why, when, where, who, amount, how, what, whether), or None."""
    return next((kind for kind, pattern in _ASKS if pattern.search(text)), None)


def asks_otherwise(unit_text: str, node_text: str) -> str | None:
    """Both are questions, and each asks with a word the other does not use ("Who owns the
    migration?" / "Who reviews the migration?"): a question is all in its words, and another
    word asks for another thing. Names are left out (an addressee, "@Lustig Andrei, so ...?", is
    not what is asked)."""
    if not (_QUESTION_END.search(unit_text.strip()) and _QUESTION_END.search(node_text.strip())):
        return None
    if asked_kind(unit_text) == asked_kind(node_text) is not None and \
            same_setting(unit_text, node_text):
        # Both ask the same (why, how long, ...) of the same identifiers and values: the other
        # words say how, not what, is asked ("为什么要从 200 调到 300" / "为什么由 200 改成 300").
        return None

    def words(text: str) -> list[tuple[str, str]]:
        # Latin words as written (the index's stemmer folds "owns" into the stop word "own"),
        # Chinese characters as `sequence` gives them.
        latin = [(strong_stem(w), w) for w in re.findall(r"[A-Za-z][A-Za-z'-]*",
                                                          text.casefold())
                 if w not in STOP and len(w) > 1]
        return latin + [(t, t) for t, _ in sequence(text) if _is_cjk(t)]

    def asked(text: str, other: str) -> list[str]:
        theirs = {stem for stem, _ in words(other)}
        names = {n.casefold() for n in _names(text)} | set(named_tokens(text))
        return [form for stem, form in words(text) if stem not in theirs and form not in names]

    mine, theirs = asked(unit_text, node_text), asked(node_text, unit_text)
    if mine and theirs:
        return f"asks {mine[0]} vs {theirs[0]}"
    return None


def _sources_prose(body: str) -> str:
    """The words of the Sources section (what each source supports), without the link paths."""
    m = re.search(r"^##[ \t]+sources\b.*$", body, re.I | re.M)
    if not m:
        return ""
    text = re.sub(r"!?\[\[[^\]]*\]\]", " ", body[m.end():])
    return text


def novel(points: Iterable[str], node_text: str, idf: IdfFn) -> list[str]:
    """The points whose weighted terms the node does not mostly contain already."""
    node = bag(node_text)
    out = []
    for p in points:
        text = p.partition(": ")[2] or p
        b = bag(text)
        if b and coverage(b, node, idf) < NOVEL_COVERAGE:
            out.append(p)
    return out
