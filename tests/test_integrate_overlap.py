"""Units integrated side by side (issue 23): a unit whose first-message candidates overlap those
of an earlier unit still running waits for it to settle before its first request, instead of
running a conversation that the earlier unit's node makes stale (paid for twice). Only earlier
units are waited for; a unit sharing no candidate, or sharing one with a unit already settled
or a later one, goes on at once."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from remelink.integrate import IntegrationContext


def context(tmp_path: Path) -> IntegrationContext:
    none: Any = None
    return IntegrationContext(vault=tmp_path, settings=none, model=none, index=none,
                              files=none, today="2026-06-25")


def waits(ctx: IntegrationContext, rank: int, paths: set[str]) -> tuple[threading.Thread,
                                                                         list[bool]]:
    out: list[bool] = []
    thread = threading.Thread(target=lambda: out.append(ctx.wait_for_overlap(rank,
                                                                             frozenset(paths))))
    thread.start()
    return thread, out


def test_a_unit_waits_for_an_earlier_running_unit_shown_the_same_candidate(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    assert ctx.wait_for_overlap(0, frozenset({"digest/wiki/a.md", "digest/wiki/b.md"})) is False
    thread, out = waits(ctx, 1, {"digest/wiki/b.md", "digest/wiki/c.md"})
    time.sleep(0.2)
    assert thread.is_alive() and out == []  # rank 0 still running, shown b.md
    ctx.settle(0)
    thread.join(timeout=5)
    assert out == [True]  # it waited: the caller recalls again


def test_no_shared_candidate_a_settled_unit_or_a_later_one_never_blocks(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    ctx.wait_for_overlap(0, frozenset({"digest/wiki/a.md"}))
    assert ctx.wait_for_overlap(1, frozenset({"digest/wiki/z.md"})) is False  # nothing shared
    ctx.wait_for_overlap(5, frozenset({"digest/wiki/y.md"}))  # a later unit, running
    assert ctx.wait_for_overlap(3, frozenset({"digest/wiki/y.md"})) is False
    ctx.settle(0)
    assert ctx.wait_for_overlap(4, frozenset({"digest/wiki/a.md"})) is False  # 0 settled


def test_a_unit_waits_for_every_earlier_overlapping_unit(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    ctx.wait_for_overlap(0, frozenset({"digest/wiki/a.md"}))
    ctx.wait_for_overlap(1, frozenset({"digest/wiki/b.md"}))
    thread, out = waits(ctx, 2, {"digest/wiki/a.md", "digest/wiki/b.md"})
    ctx.settle(1)
    time.sleep(0.2)
    assert thread.is_alive()  # 0 is still running
    ctx.settle(0)
    thread.join(timeout=5)
    assert out == [True]
