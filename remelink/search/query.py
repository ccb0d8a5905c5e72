"""A person's or an agent's question as weighted index terms (SPEC §5.1). No Whoosh here.

The index analysis is node_search's (`remelink.index.analysis`: lowercased, accents folded, a
plural stemmer, CJK bigrams, no stop words at index time). What differs is the query side: a
question is mostly function words ("what does Priya want for status updates"), and in a
small vault IDF alone cannot tell them from content (a node titled "What I checked" holds
the vault's only "what", so that word is its rarest, most weighted term). So a question's
function words count only when it has nothing else:

- English: the Snowball English stop list (snowballstem.org, as PostgreSQL and Whoosh ship it:
  pronouns, auxiliaries, articles, prepositions, question words), matched on the word before
  stemming.
- Chinese: the function characters of the `stop-words` list (python-stop-words,
  BSD-3-Clause: 把 吧 被 的 了 么 们 哪 是 怎 ...). A bigram made of two of them (怎么, 我们,
  哪些, 如何) is a function term; a bigram with one (的状, 什么) counts half, since it is as
  likely to straddle a word boundary as to be a word.

Terms are then chosen as node_search chooses them: by query frequency x IDF, common terms
dropped while rarer ones exist, within a postings budget.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from remelink.index import analysis


def _words(text: str) -> list[str]:
    return text.split()


# The Snowball English stop list (as in whoosh.lang.stopwords "en").
EN_STOP = frozenset(_words("""
i me my myself we our ours ourselves you your yours yourself yourselves he him his himself
she her hers herself it its itself they them their theirs themselves what which who whom
this that these those am is are was were be been being have has had having do does did
doing a an the and but if or because as until while of at by for with about against between
into through during before after above below to from up down in out on off over under again
further then once here there when where why how all any both each few more most other some
such no nor not only own same so than too very s t can will just don should now
"""))
# python-stop-words, chinese.txt (BSD-3-Clause): single function characters.
ZH_STOP = frozenset(
    "把吧被比别并不曾趁此从打但当到得的儿而尔凡该个各给跟还好何和很后或及即几既今据距看靠可啦来了另"
    "嘛么每们某拿哪那乃你您凭其起且去却让人仍如若啥上谁使是虽随所他它她同哇往为嗡我无下向小些沿也一"
    "已以亦因哟用由有又于与再在咱则怎这着之只至致诸自最")
HALF = 0.5


@dataclass(frozen=True, slots=True)
class QueryTerm:
    term: str  # index form
    count: int  # occurrences in the query
    factor: float  # 1.0; HALF for a CJK bigram with one function character
    function: bool  # a function word: used only when the query has no other term


def query_terms(text: str) -> list[QueryTerm]:
    """The query's terms in first-occurrence order, with their counts and kinds."""
    counts: Counter[str] = Counter()
    kind: dict[str, tuple[float, bool]] = {}

    def add(term: str, factor: float, function: bool) -> None:
        counts[term] += 1
        old = kind.get(term)
        if old is None:
            kind[term] = (factor, function)
        else:  # the most contentful reading wins
            kind[term] = (max(old[0], factor), old[1] and function)

    for match in analysis._TOKEN_RE.finditer(analysis.normalize(text)):
        run = match.group(1)
        if run is None:
            raw = match.group(2)
            term = analysis._word(raw)
            if term is not None:
                add(term, 1.0, raw in EN_STOP)
            continue
        if len(run) == 1:
            add(run, 1.0, run in ZH_STOP)
            continue
        for i in range(len(run) - 1):
            stops = (run[i] in ZH_STOP) + (run[i + 1] in ZH_STOP)
            add(run[i:i + 2], HALF if stops == 1 else 1.0, stops == 2)
    return [QueryTerm(t, counts[t], *kind[t]) for t in counts]
