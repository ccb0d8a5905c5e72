"""Paraphrases the local engine's similarity judgement (`decide.compare`) merges though their
words differ (issue 21: a restatement corroborates its node), and the near misses it must
still keep apart: the same handover said two ways; the same setting in other words; two
questions asking the same of one setting; opposite bounds on one value in Chinese."""

from __future__ import annotations

from pathlib import Path

import pytest
from local_support import integrate_note, local_context

from remelink.models.local import decide


@pytest.mark.parametrize(("node", "unit"), [
    ("Ines took over the migration from Tomasz.", "Tomasz handed the migration over to Ines."),
    ("Tomasz handed the ledger on-call over to Ines.",
     "Ines takes over the ledger on-call from Tomasz."),
    ("embed_refresh_daily moved from Olu to Huang.",
     "Huang took over embed_refresh_daily from Olu."),
    ("何伟接手陈静的发布值班。", "发布值班从陈静交给何伟。"),
])
def test_the_same_handover_said_two_ways_is_one_statement(node: str, unit: str) -> None:
    assert decide.compare(unit, node, node).label == "same_abstraction"
    assert decide.compare(node, unit, unit).label == "same_abstraction"


@pytest.mark.parametrize(("node", "unit"), [
    ("Ines took over the migration from Tomasz.", "Ines handed the migration over to Tomasz."),
    ("Ines took over the migration from Tomasz.", "Ines took over the runbook from Tomasz."),
    ("何伟接手陈静的发布值班。", "发布值班从何伟交给陈静。"),
])
def test_another_handover_is_not_the_same(node: str, unit: str) -> None:
    assert decide.compare(unit, node, node).label != "same_abstraction"


@pytest.mark.parametrize(("node", "unit"), [
    ("Set ef_search to 128.", "Raise the query-time ef_search to 128."),
    ("gc_grace_seconds 改成 3 小时。", "把 gc_grace_seconds 设置为 10800 秒。"),
    ("回滚 embedding 模型只要把 EMBED_CANARY_PCT 改回 0。",
     "把 EMBED_CANARY_PCT 设成 0 就能回到旧模型。"),
])
def test_the_same_setting_in_other_words_is_one_statement(node: str, unit: str) -> None:
    assert decide.compare(unit, node, node).label == "same_abstraction"
    assert decide.compare(node, unit, unit).label == "same_abstraction"


@pytest.mark.parametrize(("node", "unit"), [
    ("Set ef_search to 128.", "Raise the query-time ef_search to 256."),
    ("Set ef_search to 128.", "Raise the query-time ef_construction to 128."),
    ("gc_grace_seconds 改成 3 小时。", "把 gc_grace_seconds 设置为 3 秒。"),
])
def test_another_value_or_identifier_is_not_the_same_setting(node: str, unit: str) -> None:
    assert decide.compare(unit, node, node).label != "same_abstraction"


@pytest.mark.parametrize(("node", "unit"), [
    ("PR 不要超过 400 行。", "PR 不要少于 400 行。"),
    ("单个任务最长跑 72 小时。", "单个任务最少跑 72 小时。"),
    ("孙悦希望 PR 控制在 300 行以内。", "孙悦希望 PR 控制在 300 行以上。"),
])
def test_opposite_bounds_on_one_value_in_chinese_are_another_rule(node: str, unit: str) -> None:
    assert decide.compare(unit, node, node).conflict_kind == "action"
    assert decide.compare(unit, node, node).label != "same_abstraction"


def test_a_bound_said_two_ways_in_chinese_is_no_conflict() -> None:
    within = "每个 PR 的改动控制在 400 行以内。"
    assert decide.action_conflict(within, "PR 不要超过 400 行。") is None
    assert decide.action_conflict("以上几点请大家注意。", "这些改动最多影响三个服务。") is None


@pytest.mark.parametrize(("node", "unit"), [
    ("为什么把 ledger-db 的 pool_size 从 20 调到 40？",
     "为什么 ledger-db 的 pool_size 要由 20 改成 40？"),
    ("Why was max_connections raised from 200 to 300?",
     "Why did we bump max_connections from 200 to 300?"),
])
def test_two_questions_asking_the_same_of_one_setting_are_one_question(node: str,
                                                                       unit: str) -> None:
    assert decide.compare(unit, node, node).label == "same_abstraction"


@pytest.mark.parametrize(("node", "unit"), [
    ("为什么把 ledger-db 的 pool_size 从 20 调到 40？",
     "怎么把 ledger-db 的 pool_size 由 20 改成 40？"),
    ("Why was max_connections raised from 200 to 300?",
     "When did we bump max_connections from 200 to 300?"),
    ("为什么把 ledger-db 的 pool_size 从 20 调到 40？",
     "为什么把 ledger-db 的 pool_size 从 40 调回 20？"),
])
def test_questions_asking_otherwise_of_one_setting_are_not_one_question(node: str,
                                                                         unit: str) -> None:
    assert decide.compare(unit, node, node).label != "same_abstraction"


@pytest.mark.parametrize(("first", "again"), [
    ("gc_grace_seconds 改成 3 小时。", "把 gc_grace_seconds 设置为 10800 秒。"),
    ("Set ef_search to 128 on the catalog index.", "Raise the query-time ef_search to 128."),
])
def test_a_setting_said_again_in_a_young_digest_updates_its_node(tmp_path: Path, first: str,
                                                                 again: str) -> None:
    """In a digest of one node every word the node lacks weighs the most (the unit's lexical
    score was 0.12): the identifiers and values, not the words, say it is that node."""
    with local_context(tmp_path, "2026-07-08") as ctx:
        made = integrate_note(ctx, "daily/2026-07-01/a.md", first.rstrip("。."), first)
        assert made.action == "CREATE"
        said = integrate_note(ctx, "daily/2026-07-08/b.md", again.rstrip("。."), again)
        assert said.target == made.target and said.action in ("CORROBORATE", "REFINE")
