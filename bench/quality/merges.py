"""False merges and merged paraphrases of the engine's lexical comparison, per pair set, fast
(no embedder): the same pairs, shaping and IDF as `sts.py` (`decide.compare(unit_text(b),
node_head(a), a)`, BM25 IDF over the split's first sentences), at the frozen thresholds.

    .venv/bin/python bench/quality/merges.py tune|test [pawsx rvzh rven stsb cstsb] [-v] [-m]

`tune` is each set's tuning split (PAWS-X zh `tune` half, realvault pairs `tune`, STS-B and
Chinese STS-B train), `test` its held-out one (bench/splits.py). `-v` lists the false merges,
`-m` the paraphrases not merged: use them on `tune` only (TEAM.md).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from remelink.models.local import decide

SETS = ("pawsx", "rvzh", "rven", "stsb", "cstsb")


def main(argv: list[str]) -> None:
    # After `decide`: `common` puts this checkout first on sys.path, and PYTHONPATH may name
    # another one to compare with.
    from common import bm25_idf, node_head, unit_text
    from data import SPLITS, load

    side = argv[0] if argv and argv[0] in ("tune", "test") else "test"
    sets = [a for a in argv if a in SETS] or list(SETS)
    started = time.perf_counter()
    for name in sets:
        split = SPLITS[name][0 if side == "tune" else 1]
        pairs = load(name, split)
        idf = bm25_idf(node_head(p.a) + " " + p.a for p in pairs)
        negatives = positives = merged = found = 0
        shown: list[str] = []
        for p in pairs:
            c = decide.compare(unit_text(p.b), node_head(p.a), p.a, idf=idf)
            same = c.label == "same_abstraction"
            if p.label == "unrelated":
                negatives += 1
                merged += same
                if same and "-v" in argv:
                    shown.append(f"  merged {p.id} ({c.score:.2f}): {p.a} | {p.b}")
            elif p.label == "same_abstraction":
                positives += 1
                found += same
                if not same and "-m" in argv:
                    shown.append(f"  apart {p.id} ({c.score:.2f}, {c.conflict_kind}): "
                                 f"{p.a} | {p.b}")
        print(f"{name} {split}: false merges {merged}/{negatives} "
              f"({merged / max(negatives, 1):.1%}); paraphrases merged {found}/{positives} "
              f"({found / max(positives, 1):.1%})")
        print("\n".join(shown)) if shown else None
    print(f"({time.perf_counter() - started:.0f} s, code {Path(decide.__file__).parents[3]})")


if __name__ == "__main__":
    main(sys.argv[1:])
