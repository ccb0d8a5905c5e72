"""Text analysis for the node index: English, Chinese / Japanese / Korean and mixed text.

Pure Python, no Whoosh: the index, the query builder and the local engine's similarity checks
all call `terms()` so that they agree on what a term is.

- Text is NFKC-normalised (full-width `Ｐｙｔｈｏｎ` is `python`) and lowercased.
- Latin (and any other spaced script): runs of letters and digits; `_`, `.`, `-`, `'` split.
  Accents fold (`café` is `cafe`). A light plural stemmer (`keys` -> `key`, `policies` ->
  `policy`) and no stop words: a query made of common words still finds something, and IDF
  plus the query's common-term cut keep such words from dominating. Measured on the hidden-link
  benchmark (bench/search_recall.py --ablation, recall@10 SilverBullet / Foam): plural stemmer
  0.698 / 0.788; no stemming 0.675 / 0.786; Porter 0.666 / 0.764; Whoosh's English stop-word
  list removed 0.694 / 0.763.
- CJK runs (Han, kana, hangul) become overlapping character bigrams; when indexing, each
  character is also a term, so a one-character query finds it. `数据脱敏规则` indexes `脱敏`, and
  `学习了Python编程` indexes `python`. A query run of two or more characters asks for its bigrams
  only: single characters are as common as stop words and add cost, not recall.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterator

# Han (BMP, extension A, compatibility, supplementary planes), kana, hangul (syllables, jamo,
# compatibility jamo), plus the ideographic iteration / zero marks.
CJK_CHARS = ("\u1100-\u11ff\u3005\u3007\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf"
             "\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7af\ud7b0-\ud7ff\uf900-\ufaff"
             "\U00020000-\U0003134f")
_TOKEN_RE = re.compile(rf"([{CJK_CHARS}]+)|([^\W_{CJK_CHARS}]+)")
_RUN_RE = re.compile(rf"[{CJK_CHARS}]+|[^\W_{CJK_CHARS}]+")  # the same runs, ungrouped
_ASCII_RUN_RE = re.compile(r"[a-z0-9]+")  # _RUN_RE on lowercased ASCII text, 40 % faster
_CJK_START_RE = re.compile(rf"[{CJK_CHARS}]")
MAX_WORD = 64  # longer Latin "words" are hashes or base64, not search terms
_CACHE_LIMIT = 200_000

_word_cache: dict[str, str | None] = {}


def normalize(text: str) -> str:
    """NFKC + lowercase: the form every term is derived from."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    return text.lower()


def stem(word: str) -> str:
    """A minimal English plural stemmer (in the spirit of Lucene's EnglishMinimalStemmer):
    plural folding is the part of stemming that helped recall; Porter cost some (above)."""
    if len(word) < 4 or word[-1] != "s" or not word.isalpha():
        return word
    if word.endswith("ies") and word[-4] not in "ae":
        return word[:-3] + "y"  # policies -> policy
    if word.endswith(("ss", "us", "is")):
        return word  # class, status, analysis
    if word.endswith(("sses", "xes")):
        return word[:-2]  # classes -> class, indexes -> index
    return word[:-1]  # keys -> key, caches -> cache


def _word(raw: str) -> str | None:
    """The term for one Latin-like word, or None if it is not a useful term."""
    term = _word_cache.get(raw)
    if term is not None or raw in _word_cache:
        return term
    word = raw
    if not word.isascii():
        decomposed = unicodedata.normalize("NFKD", word)
        folded = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
        word = unicodedata.normalize("NFC", folded)
    result = None if len(word) > MAX_WORD else stem(word)
    if len(_word_cache) >= _CACHE_LIMIT:
        clear_cache()
    _word_cache[raw] = result
    return result


def clear_cache() -> None:
    """Forget every cached word (needed when `stem` is replaced, as the ablation does)."""
    _word_cache.clear()


def iter_terms(text: str, *, query: bool = False) -> Iterator[str]:
    """Every term of `text`, in order, repeats included."""
    for match in _TOKEN_RE.finditer(normalize(text)):
        run = match.group(1)
        if run is None:
            term = _word(match.group(2))
            if term is not None:
                yield term
            continue
        if len(run) == 1:
            yield run
            continue
        for i in range(len(run) - 1):
            yield run[i:i + 2]
        if not query:
            yield from run


def index_counts(text: str) -> Counter[str]:
    """How often each index-form term occurs in `text`: `Counter(iter_terms(text))`, without
    a generator step per term (full builds analyse millions of words)."""
    text = normalize(text)
    out: list[str] = []
    add = out.append
    cache = _word_cache
    cjk = _CJK_START_RE.match
    for run in (_ASCII_RUN_RE if text.isascii() else _RUN_RE).findall(text):
        term = cache.get(run)
        if term is not None:
            add(term)
        elif run in cache:
            continue
        elif cjk(run):
            if len(run) > 1:
                out += [run[i:i + 2] for i in range(len(run) - 1)]
            out += run
        else:
            term = _word(run)
            if term is not None:
                add(term)
    return Counter(out)


def terms(text: str, *, query: bool = False) -> list[str]:
    """The analyzed terms of `text` (index form by default; `query=True` for the query form)."""
    return list(iter_terms(text, query=query))
