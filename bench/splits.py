"""The data splits, once, for every bench and every tuning script (TEAM.md, "The data splits").

Tune on the `tuning` side of a data set; report its `held-out` side. Each rule is fixed here and
nowhere else: a bench asks this module which items it may report as held out, and prints the
side next to every figure (`label(...)`). Reading held-out data to see what a bench reports is
fine; changing the engine because of what it showed is tuning, and must be said.

| data | tuning | held-out |
|---|---|---|
| LoCoMo (`locomo-train.json`) | conv-41, 42, 43, 44, 47, 48 | conv-49, conv-50 |
| link vaults | `silverbullet-docs` | `foam-docs`, and the held-out til-simonw notes |
| STS-B, Chinese STS-B | train | dev |
| PAWS-X zh dev | the `tune` half (seed 13) | the `test` half |
| til-simonw notes | first hex digit of sha1(path in index.tsv) in 0-7 | in 8-f |
| realistic vaults (`bench/realvault/`) | `dev/` | `heldout/` |

Everything here is plain Python with no import from remelink, so a throw-away virtualenv (see
bench/quality/embedders.py) and the tests can import it too.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Side = Literal["tuning", "held-out"]
TUNING: Side = "tuning"
HELD_OUT: Side = "held-out"

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = ROOT.parent / "shared" / "data"

# -- LoCoMo ----------------------------------------------------------------------------------
LOCOMO_TUNING = ("conv-41", "conv-42", "conv-43", "conv-44", "conv-47", "conv-48")
LOCOMO_HELD_OUT = ("conv-49", "conv-50")


def locomo(sample_id: str) -> Side:
    """The side of a LoCoMo conversation (its `sample_id`)."""
    if sample_id in LOCOMO_HELD_OUT:
        return HELD_OUT
    if sample_id in LOCOMO_TUNING:
        return TUNING
    raise ValueError(f"LoCoMo conversation {sample_id!r} is in no split (bench/splits.py)")


# -- link vaults -----------------------------------------------------------------------------
LINK_VAULTS_TUNING = ("silverbullet-docs",)
LINK_VAULTS_HELD_OUT = ("foam-docs",)  # and the held-out til-simonw notes (til_side)


def link_vault(name: str) -> Side:
    if name in LINK_VAULTS_HELD_OUT:
        return HELD_OUT
    if name in LINK_VAULTS_TUNING:
        return TUNING
    raise ValueError(f"link vault {name!r} is in no split (bench/splits.py)")


# -- sentence pairs --------------------------------------------------------------------------
# data set -> (tuning split, held-out split), as bench/quality/data.py names them.
PAIRS = {"stsb": ("train", "dev"), "cstsb": ("train", "dev"), "pawsx": ("tune", "test"),
         # bench/realvault/pairs.yaml's own id rule: even ids tune, odd ids test
         "rvzh": ("tune", "test"), "rven": ("tune", "test"),
         # bench/realvault/questions.yaml, the same id rule
         "rvq": ("tune", "test")}
PAWSX_SEED = 13  # the one shuffle of PAWS-X zh dev into its `tune` and `test` halves


def pairs(dataset: str, split: str) -> Side:
    tuning, held_out = PAIRS[dataset]
    if split == held_out:
        return HELD_OUT
    if split == tuning:
        return TUNING
    raise ValueError(f"{dataset} has no split {split!r} (bench/splits.py)")


def pawsx_halves(n: int) -> tuple[list[int], list[int]]:
    """Row indices (sorted) of the `tune` and `test` halves of PAWS-X zh dev's `n` labelled
    rows: one shuffle with PAWSX_SEED, the first half tunes."""
    order = list(range(n))
    random.Random(PAWSX_SEED).shuffle(order)
    return sorted(order[: n // 2]), sorted(order[n // 2:])


# -- til-simonw ------------------------------------------------------------------------------
TIL = SHARED_DATA / "til-simonw"
_TIL_TUNING_DIGITS = frozenset("01234567")


def til_side(path: str) -> Side:
    """A til-simonw note by its path as index.tsv writes it (`sqlite/ld-preload.md`): the
    first hex digit of the SHA-1 of that path (UTF-8) in 0-7 tunes, in 8-f is held out."""
    digit = hashlib.sha1(path.encode("utf-8")).hexdigest()[0]
    return TUNING if digit in _TIL_TUNING_DIGITS else HELD_OUT


@dataclass(frozen=True)
class TilNote:
    path: str   # as in index.tsv, relative to notes/
    date: str   # YYYY-MM-DD
    title: str

    @property
    def side(self) -> Side:
        return til_side(self.path)

    @property
    def file(self) -> Path:
        return TIL / "notes" / self.path


def til_notes(side: Side | None = None, root: Path = TIL) -> list[TilNote]:
    """The notes of index.tsv (in its order), all of them or one side."""
    out = []
    with open(root / "index.tsv", encoding="utf-8") as fh:
        next(fh)
        for line in fh:
            cells = line.rstrip("\n").split("\t")
            if len(cells) < 3:
                continue
            note = TilNote(cells[0], cells[1], cells[2])
            if side is None or note.side == side:
                out.append(note)
    return out


# -- realistic vaults ------------------------------------------------------------------------
REALVAULT = ROOT / "bench" / "realvault"
REALVAULT_DIRS: dict[Side, str] = {TUNING: "dev", HELD_OUT: "heldout"}


def realvault(side: Side) -> Path:
    """The realistic vault of one side (it may not exist in this checkout yet)."""
    return REALVAULT / REALVAULT_DIRS[side]


# -- presentation ----------------------------------------------------------------------------
def label(side: Side) -> str:
    """How a table cell names the side: **held-out** stands out, tuning does not hide."""
    return "**held-out**" if side == HELD_OUT else "tuning"
