"""The bench helpers behind published figures: the section index of docs/benchmarks.md, the
turn-level citations LoCoMo's recall reads, the random-draw expectation and the bootstrap."""

from __future__ import annotations

import random
import sys
from math import comb
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import _report
import locomo_recall
import spread


def test_the_index_reads_each_section_its_commit_and_date() -> None:
    doc = ("# Benchmarks\n\n<!-- bench-index -->\n<!-- /bench-index -->\n\n"
           "<!-- bench:a -->\n## Section A\n\ntext\n\nProduced by `python bench/a.py` at commit "
           "`abc1234` on x86_64, 2 cores, Python 3.11.7, load average 1.5 at start, 2.0 at the "
           "end, 2026-12-02.\n<!-- /bench:a -->\n\n"
           "<!-- bench:b -->\n## Section B\n\nProduced by `python bench/b.py` on x86_64, 2 "
           "cores, Python 3.11.7, load average 1.0 at start, 2026-11-29.\n<!-- /bench:b -->\n")
    table = _report.index(doc)
    assert "| Section A | `python bench/a.py` | abc1234 | 2026-12-02 | 1.5 |" in table
    assert "| Section B | `python bench/b.py` | not recorded (before issue 25) | 2026-11-29 |" \
        in table


def test_sources_sentences_name_turns_of_the_link_before_them() -> None:
    node = ("---\nname: x\n---\nBody naming D9:9 outside Sources.\n\n## Sources\n\n"
            "Evan said this on 31 December 2023 in [[daily/2023-12-31/e.md]] (turns D22:6, "
            "D22:8). Sam added it in [[daily/2024-01-02/s.md]] (turn D:23:1).\n"
            "It was recorded in [[daily/2024-01-05/t.md]].\n")
    cited = locomo_recall.citations(node)
    assert cited.sessions == {"daily/2023-12-31/e.md", "daily/2024-01-02/s.md",
                              "daily/2024-01-05/t.md"}
    assert cited.turns == {("daily/2023-12-31/e.md", "D22:6"), ("daily/2023-12-31/e.md", "D22:8"),
                           ("daily/2024-01-02/s.md", "D23:1")}


@given(st.integers(0, 60), st.integers(0, 60), st.integers(1, 8))
def test_random_hit_is_the_exact_chance(total: int, good: int, k: int) -> None:
    good = min(good, total)
    p = locomo_recall.random_hit(total, good, k)
    if total == 0 or good == 0:
        assert p == 0.0
    elif total - good < k:
        assert p == 1.0
    else:
        assert abs(p - (1 - comb(total - good, k) / comb(total, k))) < 1e-12


def test_random_hit_matches_drawing() -> None:
    rng = random.Random(1)
    hits = sum(any(x < 3 for x in rng.sample(range(40), 5)) for _ in range(20000)) / 20000
    assert abs(hits - locomo_recall.random_hit(40, 3, 5)) < 0.02


def test_the_bootstrap_is_fixed_and_brackets_the_difference() -> None:
    a = [1.0] * 60 + [0.0] * 40
    b = [1.0] * 40 + [0.0] * 60
    d, lo, hi = spread.paired(a, b)
    assert abs(d - 0.2) < 1e-12 and lo < d < hi and lo > 0
    assert spread.paired(a, b) == (d, lo, hi)
    assert spread.verdict(lo, hi) == "above"
    assert spread.verdict(*spread.paired(a, a)[1:]) == "within noise"
