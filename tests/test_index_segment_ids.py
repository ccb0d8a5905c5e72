"""Whoosh segment ids are unique per segment whatever seeds the global `random` (Hypothesis seeds
it to 0 for every example): the per-segment tables of remelink.index.engine are keyed by them,
across the indexes of one process."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

from dream_support import DEMO, settings_of

from remelink.index.core import NodeIndex


def segment_ids(vault: Path) -> set[str]:
    from remelink.index.engine import _segment_id

    index = NodeIndex(vault, settings_of(vault))
    index.refresh()
    (vault / "digest/wiki/new-node.md").write_text(
        "---\nname: New node\ndescription: one more\n---\nA body.\n", encoding="utf-8")
    index.update(["digest/wiki/new-node.md"])  # a second segment, written by an update
    reader = index._store.searcher.reader()
    ids = {_segment_id(leaf) for leaf, _ in reader.leaf_readers()}
    index.close()
    return ids


def test_two_vaults_indexed_after_the_same_seed_share_no_segment_id(tmp_path: Path) -> None:
    state = random.getstate()
    try:
        seen = []
        for name in ("a", "b"):
            vault = tmp_path / name
            shutil.copytree(DEMO, vault)
            random.seed(0)
            seen.append(segment_ids(vault))
    finally:
        random.setstate(state)
    assert len(seen[0]) == len(seen[1]) == 2
    assert not seen[0] & seen[1]
