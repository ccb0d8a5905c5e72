"""Realistic engineering vaults for measuring (dev: tune on it; heldout: report only).

See README.md for the layout and the schema of `key.yaml` and `pairs.yaml`.
"""

from bench.realvault.key import (
    Correction,
    Fact,
    Needle,
    Note,
    Pair,
    Question,
    Related,
    Restatement,
    Vault,
    code_segments,
    in_code,
    load,
    pair_split,
    pairs,
    questions,
)

__all__ = [
    "Correction",
    "Fact",
    "Needle",
    "Note",
    "Pair",
    "Question",
    "Related",
    "Restatement",
    "Vault",
    "code_segments",
    "in_code",
    "load",
    "pair_split",
    "pairs",
    "questions",
]
