"""The data splits of bench/splits.py: fixed, disjoint, covering, and the ones TEAM.md names."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import SHARED_DATA
from hypothesis import given
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import splits


@given(st.integers(min_value=0, max_value=5000))
def test_pawsx_halves_partition_the_rows(n: int) -> None:
    tune, test = splits.pawsx_halves(n)
    assert sorted(tune + test) == list(range(n))
    assert len(tune) == n // 2
    assert splits.pawsx_halves(n) == (tune, test)  # the same halves every time


@given(st.text(min_size=1, max_size=80))
def test_every_til_path_has_one_fixed_side(path: str) -> None:
    assert splits.til_side(path) in (splits.TUNING, splits.HELD_OUT)
    assert splits.til_side(path) == splits.til_side(path)


def test_til_rule_on_known_paths() -> None:
    # sha1("ab/apache-bench-length-errors.md") starts with a digit of one side or the other;
    # the rule is the first hex digit: 0-7 tunes, 8-f is held out.
    import hashlib

    for path in ("ab/apache-bench-length-errors.md", "sqlite/ld-preload.md", "a", "b", "c"):
        digit = hashlib.sha1(path.encode()).hexdigest()[0]
        assert (splits.til_side(path) == splits.TUNING) == (digit in "01234567")


def test_sides_are_disjoint_and_named() -> None:
    assert not set(splits.LOCOMO_TUNING) & set(splits.LOCOMO_HELD_OUT)
    assert not set(splits.LINK_VAULTS_TUNING) & set(splits.LINK_VAULTS_HELD_OUT)
    assert splits.locomo("conv-49") == splits.HELD_OUT
    assert splits.locomo("conv-41") == splits.TUNING
    assert splits.link_vault("silverbullet-docs") == splits.TUNING
    assert splits.link_vault("foam-docs") == splits.HELD_OUT
    assert splits.pairs("stsb", "dev") == splits.HELD_OUT
    assert splits.pairs("pawsx", "tune") == splits.TUNING
    with pytest.raises(ValueError):
        splits.locomo("conv-99")
    with pytest.raises(ValueError):
        splits.pairs("stsb", "test")
    assert splits.realvault(splits.HELD_OUT).name == "heldout"


@pytest.mark.skipif(not (SHARED_DATA / "locomo-train").is_dir(), reason="no shared data")
def test_locomo_split_covers_every_conversation_once() -> None:
    data = json.loads((SHARED_DATA / "locomo-train" / "locomo-train.json").read_text("utf-8"))
    ids = sorted(item["sample_id"] for item in data)
    assert ids == sorted(splits.LOCOMO_TUNING + splits.LOCOMO_HELD_OUT)


@pytest.mark.skipif(not (SHARED_DATA / "til-simonw").is_dir(), reason="no shared data")
def test_til_split_of_the_shared_notes() -> None:
    notes = splits.til_notes()
    tuning, held = splits.til_notes(splits.TUNING), splits.til_notes(splits.HELD_OUT)
    assert len(notes) == 577 and len(tuning) + len(held) == 577
    assert {n.path for n in tuning}.isdisjoint({n.path for n in held})
    assert (len(tuning), len(held)) == (294, 283)
    assert all(n.file.is_file() for n in held)
