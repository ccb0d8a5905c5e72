"""A later line that states the things an earlier node's line states (values with their
measures, identifiers), all of them and in the same order, with no value changed, states the
same claim (issue 21): across English and Chinese without any cue, in one language only when
it says it is said again (the same values and names can be another claim on them there). It
CORROBORATEs the node with a Sources sentence saying what was restated, never an `Also:`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from local_support import integrate_note, local_context

from remelink.integrate import IntegrationContext
from remelink.models.local import decide


@pytest.fixture
def ctx(tmp_path: Path) -> Iterator[IntegrationContext]:
    with local_context(tmp_path, "2026-04-01") as context:
        yield context


POLICY = "灰度顺序 5% → 25% → 100%，每一步至少观察 30 分钟，看 5xx、p99 和资金对账指标。"
CANARY = "灰度顺序 5% → 25% → 100%"


def test_an_english_runbook_line_restates_the_chinese_policy_line(
        ctx: IntegrationContext) -> None:
    made = integrate_note(ctx, "resource/2026-02-02/发布规范.md", CANARY, POLICY)
    again = integrate_note(ctx, "resource/2026-02-16/deploy.md", "How we ship journal-svc",
                           "How we ship `journal-svc` to prod. It runs as an Argo Rollout in "
                           "namespace `journal`, canary 5% -> 25% -> 100%.")
    assert again.action == "CORROBORATE" and again.target == made.target
    text = (ctx.vault / str(made.target)).read_text(encoding="utf-8")
    body, sources = text.split("## Sources")
    assert "Also:" not in body and "又说" not in body and "Argo" not in body
    # The Sources sentence quotes the statement said again, not the note's opening.
    assert "[[resource/2026-02-16/deploy.md]]" in sources and "canary 5% -> 25%" in sources


def test_a_chinese_meeting_saying_the_canary_still_stands_restates_it(
        ctx: IntegrationContext) -> None:
    made = integrate_note(ctx, "resource/2026-02-02/发布规范.md", CANARY, POLICY)
    again = integrate_note(ctx, "daily/2026-03-17/发布周会.md", "灰度还是 5% → 25% → 100%",
                           "灰度还是 5% → 25% → 100%，不变。")
    assert again.action == "CORROBORATE" and again.target == made.target


def test_another_value_across_languages_is_no_restatement(ctx: IntegrationContext) -> None:
    made = integrate_note(ctx, "resource/2026-02-02/发布规范.md", CANARY, POLICY)
    other = integrate_note(ctx, "resource/2026-02-16/deploy.md", "How we ship journal-svc",
                           "How we ship `journal-svc` to prod. It runs as an Argo Rollout in "
                           "namespace `journal`, canary 5% -> 50% -> 100%.")
    assert not (other.action == "CORROBORATE" and other.target == made.target)


_MEASURES = st.sampled_from([("%", "%"), (" minutes", " 分钟"), (" hours", " 小时"),
                             (" days", " 天"), (" ms", " ms")])
_VALUES = st.lists(st.integers(1, 900), min_size=2, max_size=3, unique=True)


@settings(max_examples=80, deadline=None)
@given(_MEASURES, _VALUES)
def test_the_same_measured_values_across_languages_are_the_same_claim(
        measure: tuple[str, str], values: list[int]) -> None:
    en, zh = measure
    line = "阈值依次是 " + " → ".join(f"{v}{zh}" for v in values) + "，超过就告警。"
    unit = "Thresholds: " + " -> ".join(f"{v}{en}" for v in values) + "."
    assert decide.restates_line(unit, [line]) == (unit, line)
    # Another value, the values in another order, or one value alone: no longer the claim.
    changed = [*values[:-1], max(values) + 1]  # a value the line does not state
    assert decide.restates_line(
        "Thresholds: " + " -> ".join(f"{v}{en}" for v in changed) + ".", [line]) is None
    assert decide.restates_line(
        "Thresholds: " + " -> ".join(f"{v}{en}" for v in values[::-1]) + ".", [line]) is None
    assert decide.restates_line(f"Threshold: {values[0]}{en}.", [line]) is None


@settings(max_examples=60, deadline=None)
@given(_VALUES, st.sampled_from(["Kapp beat Cher", "Cher beat Kapp", "the team won",
                                 "prices rose"]))
def test_in_one_language_the_same_values_need_a_cue(values: list[int], words: str) -> None:
    # PAWS-X: "A beat B 5-7, 6-3" / "B beat A 5-7, 6-3" state the same values, another claim.
    line = f"In {values[0]} days {words} by {values[1]} %."
    unit = f"In {values[0]} days, {words}, by {values[1]} %."
    assert decide.restates_line(unit, [line]) is None
    cued = f"As agreed, in {values[0]} days {words} by {values[1]} %."
    assert decide.restates_line(cued, [line], cue=True) == (cued, line)


def test_bare_numbers_across_languages_are_no_anchor() -> None:
    # A time's "03:00" and "0 lost postings", "3 月" and "3 members": no one thing.
    assert decide.restates_line("手续费批量入账改到 03:00 UTC 跑，错开白天高峰。",
                                ["async postings: 3 producers flipped, 0 lost postings"]) is None
    assert decide.restates_line("下周四是 3 月最后一次常规发布。",
                                ["Cluster: `journaldb` (Patroni, 3 members)."]) is None


def test_a_clause_naming_another_system_in_the_same_values_is_no_restatement() -> None:
    line = "`recon_export.max_memory` is 2048 MB, `recon_export.timeout` 30 s."
    assert decide.restates_line("`fee_service.max_memory` is 2048 MB, `fee_service.timeout` "
                                "30 s, as agreed.", [line], cue=True) is None
    same = "As agreed, `recon_export.max_memory` is 2048 MB and `recon_export.timeout` is 30 s."
    assert decide.restates_line(same, [line], cue=True) == (same, line)


INCIDENT = ("Checkout 502s (12 May): the card-batch job holds a transaction open for minutes.\n\n"
            "Timeline: alerts at 09:14, rollback at 09:40.\n\n"
            "Lesson: batch jobs read from the replica. Never do network calls inside a DB "
            "transaction. Alert on queue depth, not only on 5xx.\n")


def test_a_reminder_holding_a_documents_line_says_it_again() -> None:
    # The line is deep in a document whose head names other things (an entity conflict with
    # the head): the reminder holds the line's claim, the same polarity, and says it is one.
    head = decide.text_of("Checkout 502s (12 May)", "the card-batch job holds a transaction")
    unit = ("No network calls inside a DB transaction or inside a Kafka poll loop. Two of our "
            "incidents this quarter were exactly that.")
    cued = decide.compare(unit, head, INCIDENT, cued=True)
    assert cued.restated and cued.conflict_kind is None and cued.label == "same_abstraction"
    assert cued.new_sentence.startswith("No network calls inside a DB transaction")
    # Without the cue the same words are no evidence of a restatement (one language: PAWS-X).
    assert not decide.compare(unit, head, INCIDENT).restated


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["Never do network calls inside a DB transaction.",
                        "Always page the secondary after ten minutes without an ack.",
                        "Batch jobs read from the replica, never from the primary."]),
       st.sampled_from(["As agreed: ", "Reminder, still: ", "Again: "]))
def test_a_cued_statement_of_the_other_polarity_is_no_restatement(line: str, cue: str) -> None:
    flipped = line.replace("Never do", "Do").replace("Always", "Never").replace(
        "from the replica, never from the primary", "from the primary, never from the replica")
    assert decide.restates_line(cue + line, [line], cue=True) is not None
    assert decide.restates_line(cue + flipped, [line], cue=True) is None
