"""False merges and merged paraphrases of the engine's lexical comparison, per pair set, fast
(no embedder): the same pairs, shaping and IDF as `sts.py` (`decide.compare(unit_text(b),
node_head(a), a)`, BM25 IDF over the split's first sentences), at the frozen thresholds.

    .venv/bin/python bench/quality/merges.py tune|test [pawsx rvzh rvq rven stsb cstsb] [-v] [-m]
    .venv/bin/python bench/quality/merges.py --write   # both sides, every set, into docs/


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

SETS = ("pawsx", "rvzh", "rvq", "rven", "stsb", "cstsb")


NAMES = {"pawsx": "PAWS-X zh", "rvzh": "realistic-vault pairs, zh",
         "rvq": "realistic-vault questions, zh", "rven": "realistic-vault pairs, en",
         "stsb": "STS-B", "cstsb": "Chinese STS-B"}


def count(name: str, split: str, argv: list[str]) -> tuple[int, int, int, int, int]:
    """(false merges, negatives, paraphrases merged, positives, false merges of two identical
    texts) of one set's split."""
    # After `decide`: `common` puts this checkout first on sys.path, and PYTHONPATH may name
    # another one to compare with.
    from common import bm25_idf, node_head, unit_text
    from data import load

    pairs = load(name, split)
    idf = bm25_idf(node_head(p.a) + " " + p.a for p in pairs)
    negatives = positives = merged = found = identical = 0
    shown: list[str] = []
    for p in pairs:
        c = decide.compare(unit_text(p.b), node_head(p.a), p.a, idf=idf)
        same = c.label == "same_abstraction"
        if p.label == "unrelated":
            negatives += 1
            merged += same
            identical += same and p.a.strip() == p.b.strip()
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
          f"({found / max(positives, 1):.1%})", flush=True)
    print("\n".join(shown)) if shown else None
    return merged, negatives, found, positives, identical


def write() -> None:
    """Every set, held-out split first then the tuning one, as a section of docs/benchmarks.md."""
    from data import SPLITS

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from bench._report import write_section

    rows = ["| pairs | split | false merges | of which two identical texts | paraphrases merged |",
            "|---|---|---|---|---|"]
    for side in ("test", "tune"):
        for name in SETS:
            split = SPLITS[name][0 if side == "tune" else 1]
            merged, negatives, found, positives, identical = count(name, split, [])
            role = "**held out**" if side == "test" else "tuning"
            rows.append(f"| {NAMES[name]} | {split} ({role}) | {merged}/{negatives} "
                        f"({merged / max(negatives, 1):.1%}) | {identical} | {found}/{positives} "
                        f"({found / max(positives, 1):.1%}) |")
    write_section("pair-merges", f"""## Decisions on sentence pairs: false merges

The local engine's lexical decision (`decide.compare(unit_text(b), node_head(a), a)`, the
comparison `bench/quality/sts.py` makes, without the embedder, at the frozen thresholds) on each
pair set. *False merges*: pairs labelled non-paraphrase (PAWS-X), low similarity (STS-B,
Chinese STS-B) or hard negative (the realistic-vault pairs) that the engine calls the same
point, which would fold a unit into the wrong node. *Paraphrases merged*: pairs labelled the
same that it calls the same (duplicates avoided). Held-out splits are the results; the tuning
splits are what the thresholds and rules were chosen on (`bench/splits.py`). The realistic-vault
pairs' held-out half was read while rules were written (issue 21's decisions: `4 GPUs` / `8
GPUs`, `at least` / `at most`, `up to six pages` / `at least six pages`, `Who owns` / `Who
reviews`): its rows are tuning data in fact. The realistic-vault questions
(`bench/realvault/questions.yaml`) are LCQMC-style Chinese question pairs about the tuning vault's
Chinese notes, each question with a paraphrase and a hard negative (another parameter, person,
bound, time...), labelled by hand; their test half was not read while rules were written. A pair
set may label two identical texts as different (PAWS-X does): no rule can avoid merging those,
and the table counts them. Target: false merges below 2 % on every held-out set. Issue 21z's
rules (the same identifiers set to the same values, the same handover, two questions asking the
same of one setting) merge paraphrases whose words differ; on the English realistic held-out
half they merged `The maximum page_size is 200` with `page_size is capped at 200`, and also,
falsely, `page_size defaults to 200` with it: the same identifier and value in another relation.
A rule keeping a setting bounded on one side only apart from its plain value was written for
that pair (issue 21f) and dropped at the merge: no tuning pair moved it, so it could only have
been picked on the held-out half. The end-to-end figures
(each unit against a digest of every first sentence) are in
the local-engine section's table (b) (`bench/quality/dedup.py`, `--split tune` for the tuning
side).

{chr(10).join(rows)}""", "python bench/quality/merges.py --write")


def main(argv: list[str]) -> None:
    from data import SPLITS

    if "--write" in argv:
        write()
        return
    side = argv[0] if argv and argv[0] in ("tune", "test") else "test"
    sets = [a for a in argv if a in SETS] or list(SETS)
    started = time.perf_counter()
    for name in sets:
        count(name, SPLITS[name][0 if side == "tune" else 1], argv)
    print(f"({time.perf_counter() - started:.0f} s, code {Path(decide.__file__).parents[3]})")


if __name__ == "__main__":
    main(sys.argv[1:])
