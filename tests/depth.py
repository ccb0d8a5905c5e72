"""How hard the long runs of the slow tier look: by default (`make test`, CI) fewer examples of
every strategy and property, so the whole suite stays within its five minutes on two cores;
with REMELINK_DEEP=1 (`make test-deep`) the full counts, for a change to the code those runs
cover. The pytest header says which (tests/conftest.py)."""

from __future__ import annotations

import os

DEEP = os.environ.get("REMELINK_DEEP", "") == "1"


def examples(default: int, deep: int) -> int:
    """`deep` under REMELINK_DEEP=1, else `default`."""
    return deep if DEEP else default
