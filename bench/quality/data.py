"""Shared data and metrics for the quality benchmarks: STS-B pairs, Spearman, ROC-AUC, F1.

Plain Python and numpy-free on purpose: it is imported both by the project's virtualenv and by
the throw-away one used to measure `wordllama` (see embedders.py).
"""

from __future__ import annotations

import csv
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import splits  # bench/splits.py: the one place the splits are written

SHARED_DATA = splits.SHARED_DATA
STS = SHARED_DATA / "sts-benchmark"
CSTSB = SHARED_DATA / "cstsb"
PAWSX = SHARED_DATA / "pawsx-zh" / "dev_2k.tsv"
PAWSX_SEED = splits.PAWSX_SEED
SAME_SCORE = 4.0       # STS-B score >= 4: the same abstraction
UNRELATED_SCORE = 2.0  # <= 2: unrelated; in between: related
LABELS = ("same_abstraction", "related", "unrelated")


@dataclass(frozen=True)
class Pair:
    id: str
    score: float
    a: str
    b: str

    @property
    def label(self) -> str:
        if self.score >= SAME_SCORE:
            return "same_abstraction"
        return "unrelated" if self.score <= UNRELATED_SCORE else "related"


def sts(split: str) -> list[Pair]:
    """STS-B `train` or `dev` pairs (the test split is not in shared/ on purpose)."""
    pairs = []
    with open(STS / f"sts-{split}.csv", encoding="utf-8") as fh:
        for row in csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
            if len(row) < 7:
                continue
            pairs.append(Pair(f"{split}-{len(pairs)}", float(row[4]), row[5].strip(),
                              row[6].strip()))
    return pairs


def cstsb(split: str) -> list[Pair]:
    """Chinese STS-B `train` or `dev` (machine-translated STS-B, integer scores 0-5)."""
    pairs = []
    with open(CSTSB / f"sts-b-{split}.txt", encoding="utf-8") as fh:
        for line in fh:
            row = line.rstrip("\n").split("\t")
            if len(row) != 3:
                continue
            pairs.append(Pair(f"cstsb-{split}-{len(pairs)}", float(row[2]), row[0].strip(),
                              row[1].strip()))
    return pairs


def pawsx(half: str) -> list[Pair]:
    """PAWS-X zh dev, split once at random (bench/splits.py, seed 13) into `tune` (tuning only)
    and `test` (held out). A paraphrase (label 1) counts as score 5, a non-paraphrase (0: the
    same words in another order, another meaning) as score 0: it must never merge."""
    if half not in splits.PAIRS["pawsx"]:
        raise ValueError(f"PAWS-X zh has no half {half!r}: tune or test")
    rows = []
    with open(PAWSX, encoding="utf-8") as fh:
        next(fh)
        for line in fh:
            row = line.rstrip("\n").split("\t")
            if len(row) == 4 and row[3] in ("0", "1"):
                rows.append(Pair(f"pawsx-{row[0]}", 5.0 if row[3] == "1" else 0.0,
                                 row[1].strip(), row[2].strip()))
    tune, test = splits.pawsx_halves(len(rows))
    return [rows[i] for i in (tune if half == "tune" else test)]


def realvault_pairs(lang: str) -> Callable[[str], list[Pair]]:
    """The LCQMC-style question and statement pairs of `bench/realvault/pairs.yaml` in one
    language, `tune` or `test` (its fixed id rule): a paraphrase counts as score 5, a hard
    negative (another value, unit, person, system, order...) as 0: it must never merge."""

    def load_pairs(split: str) -> list[Pair]:
        sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
        from bench.realvault import pairs

        return [Pair(p.id, 5.0 if p.same else 0.0, p.a, p.b) for p in pairs(split)
                if p.lang == lang]

    return load_pairs


def realvault_questions(split: str) -> list[Pair]:
    """The Chinese question pairs of `bench/realvault/questions.yaml` (LCQMC-style, from the
    dev vault's Chinese notes' questions), `tune` or `test` (pairs.yaml's id rule): a
    paraphrase counts as score 5, a hard negative (another question) as 0."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from bench.realvault import questions

    return [Pair(p.id, 5.0 if p.same else 0.0, p.a, p.b) for p in questions(split)]


DATASETS = {"stsb": ("en", sts), "cstsb": ("zh", cstsb), "pawsx": ("zh", pawsx),
            "rvzh": ("zh", realvault_pairs("zh")), "rven": ("en", realvault_pairs("en")),
            "rvq": ("zh", realvault_questions)}
# The split each data set is tuned on and the one it is reported on (bench/splits.py; the
# realistic-vault pairs by pairs.yaml's own id rule: even ids tune, odd ids test).
SPLITS = splits.PAIRS


def load(name: str, split: str) -> list[Pair]:
    return DATASETS[name][1](split)


def ranks(xs: Sequence[float]) -> list[float]:
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    out = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def pearson(xs: Sequence[float], ys: Sequence[float]) -> float:
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    cov = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    vx = sum((x - mx) ** 2 for x in xs) ** 0.5
    vy = sum((y - my) ** 2 for y in ys) ** 0.5
    return cov / (vx * vy) if vx and vy else 0.0


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float:
    return pearson(ranks(xs), ranks(ys))


def roc_auc(scores: Sequence[float], positive: Sequence[bool]) -> float:
    """Probability that a random positive scores above a random negative (ties count half)."""
    r = ranks(scores)
    n_pos = sum(positive)
    n_neg = len(positive) - n_pos
    if not n_pos or not n_neg:
        return float("nan")
    rank_sum = sum(ri for ri, p in zip(r, positive, strict=True) if p)
    return (rank_sum - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


def f1(predicted: Sequence[bool], actual: Sequence[bool]) -> float:
    tp = sum(1 for p, a in zip(predicted, actual, strict=True) if p and a)
    fp = sum(1 for p, a in zip(predicted, actual, strict=True) if p and not a)
    fn = sum(1 for p, a in zip(predicted, actual, strict=True) if a and not p)
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def macro_f1(predicted: Sequence[str], actual: Sequence[str]) -> float:
    return sum(f1([p == c for p in predicted], [a == c for a in actual]) for c in LABELS) / 3
