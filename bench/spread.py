"""The spread of a margin: a percentile bootstrap over the items a figure is made of (questions,
notes, sentence pairs), with a fixed seed so the same data gives the same interval every run.

A margin is claimed only when its 95 % interval leaves zero out (`verdict`); a table shows the
difference, the interval and the verdict (`show`).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import TypeVar

SAMPLES = 2000
SEED = 25
T = TypeVar("T")


def resampled(items: Sequence[T], statistic: Callable[[Sequence[T]], float],
              samples: int = SAMPLES, seed: int = SEED) -> tuple[float, float, float]:
    """statistic(items) and its 95 % percentile interval over `samples` resamples of the items
    with replacement."""
    if not items:
        return float("nan"), float("nan"), float("nan")
    rng = random.Random(seed)
    n = len(items)
    values = sorted(statistic([items[rng.randrange(n)] for _ in range(n)])
                    for _ in range(samples))
    return statistic(items), values[int(0.025 * samples)], values[int(0.975 * samples) - 1]


def paired(a: Sequence[float], b: Sequence[float], samples: int = SAMPLES,
           seed: int = SEED) -> tuple[float, float, float]:
    """Mean of a - b over paired items, with its interval."""
    diffs = [x - y for x, y in zip(a, b, strict=True)]
    return resampled(diffs, lambda xs: sum(xs) / len(xs), samples, seed)


def verdict(lo: float, hi: float) -> str:
    return "above" if lo > 0 else "below" if hi < 0 else "within noise"


def show(d: tuple[float, float, float], digits: int = 2, scale: float = 1.0,
         unit: str = "") -> str:
    """`+0.05 (+0.01 to +0.09: above)`; `scale=100, unit=" pt"` for percentage points."""
    value, lo, hi = d
    f = f"{{:+.{digits}f}}"
    return (f"{f.format(scale * value)}{unit} ({f.format(scale * lo)} to "
            f"{f.format(scale * hi)}: {verdict(lo, hi)})")


def described() -> str:
    return f"95 % interval of a bootstrap, {SAMPLES} resamples, seed {SEED}"
