"""The measures of bench/bench_foreign.py that the issue-21 figures rest on: what counts as a
title cut inside its phrase."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

from bench_foreign import is_cut


@pytest.mark.parametrize("title", [
    "Priya wants design docs to fit on one",  # a word that needs what follows
    "Consumers must be idempotent on event_id because",
    "Up to 3 of",
    "数据库迁移的",
    "Run `make test",  # a backtick left open
    "Never call date.",  # the dot of `date.today()` in the note
])
def test_a_cut_title_is_counted(title: str) -> None:
    assert is_cut(title, "Never call date.today() in business logic.")


@pytest.mark.parametrize("title", [
    "Hybrid A/B started this morning at 10 %",  # a number with its unit ends the phrase
    "The worker pod got evicted at 02:40",
    "Rotate vault tokens every 14 days",
    "每个服务的数据库连接池上限设为 20",
])
def test_a_whole_title_is_not_counted(title: str) -> None:
    assert not is_cut(title, "")
