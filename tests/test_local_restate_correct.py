"""Restatements and corrections written by the local engine (issue 21): what a correction line
and a Sources sentence quote, and the name a corrected node keeps."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from local_support import integrate_note, local_context

from remelink.integrate import IntegrationContext, UnitResult
from remelink.models.local import sources, write
from remelink.models.local.engine import LocalModel as Engine
from remelink.vault.notes import parse_text


@pytest.mark.parametrize(("claim", "lang", "expected"), [
    ("Correction: logs of the ledger are kept 30 days.", "en", "Logs of the ledger are kept 30"),
    ("Actually, logs are kept 30 days.", "en", "Logs are kept 30 days"),
    ("更正：日志保留 30 天。", "zh", "更正：日志保留 30 天"),
])
def test_a_correction_line_does_not_repeat_the_units_own_correction_label(
        claim: str, lang: str, expected: str) -> None:
    line = write.correction_line(claim, "Logs are kept 14 days.", "daily/2026-01-02/a.md",
                                 "2026-01-02", lang)
    assert expected in line
    assert "Correction:" not in line and "Actually" not in line
    assert line.count("更正") == (1 if lang == "zh" else 0)


@pytest.mark.parametrize(("claim", "lang", "expected"), [
    ("Priya said it again: design docs fit on one page, longer docs get split.", "en",
     "Design docs fit on one page, longer docs get split"),
    ("Dana repeated: status goes in #settle-status, Friday 16:00.", "en",
     "Status goes in #settle-status, Friday 16:00"),
    ("再次强调：数据库迁移必须先于代码单独发布。", "zh", "数据库迁移必须先于代码单独发布"),
    ("陈静重申：周五不发布。", "zh", "周五不发布"),
])
def test_a_sources_sentence_quotes_what_was_restated_not_the_announcement(
        claim: str, lang: str, expected: str) -> None:
    src = sources.SourceInfo("daily/2026-03-09/retro.md", "Retro", None, claim)
    sentence = sources.source_sentence(src, "corroborate", lang)
    assert sentence.endswith(f"{expected}{'。' if lang == 'zh' else '.'}")
    assert "again:" not in sentence and "repeated:" not in sentence and "再次强调" not in sentence


def _node(name: str, description: str, body: str) -> object:
    return parse_text("digest/wiki/n.md", f"---\nname: {json.dumps(name, ensure_ascii=False)}"
                                          f"\ndescription: "
                                          f"{json.dumps(description, ensure_ascii=False)}\n"
                                          f"kind: concept\n---\n{body}\n")


def test_a_corrected_node_keeps_its_name_with_the_new_value_in_english() -> None:
    """The unit says more than the change ("The doc was nine pages. ... So: design docs can be
    up to six pages now"): the name takes the value of the clause on the corrected point, not
    the first number of the unit, and is not replaced by the unit's title."""
    old = "She wants design docs to be at most four pages."
    note = _node("She wants design docs to be at most four pages", old, old)
    summary = ("The doc was nine pages. Dana said six pages is fine for cross-team designs. "
               "So: design docs can be up to six pages now.")
    head = Engine._corrected_head(note, old, "The doc was nine pages", summary, "wiki",
                                      "en", [])  # type: ignore[arg-type]
    assert head["name"] == "She wants design docs to be at most six pages"
    assert head["description"] == "She wants design docs to be at most six pages."


def test_a_corrected_node_keeps_its_name_with_the_new_value_in_chinese() -> None:
    """"从 4 月开始，月结前封版四天" states a month and the new value: the name keeps its words
    with 四天, not "从 4 月开始" (the unit's title), and not "4天" (the month's number); the
    description's other value (`P0`, unchanged) stays."""
    old = "每个月月结前封版两天，封版期间只修 P0。"
    note = _node("每个月月结前封版两天", old, old)
    summary = "决定：从 4 月开始，月结前封版四天。 封版期间只修 P0，改配置也算变更。"
    head = Engine._corrected_head(note, old, "从 4 月开始", summary, "wiki", "zh",
                                      [])  # type: ignore[arg-type]
    assert head["name"] == "每个月月结前封版四天"
    assert head["description"] == "每个月月结前封版四天，封版期间只修 P0。"


@pytest.fixture
def empty_ctx(tmp_path: Path) -> Iterator[IntegrationContext]:
    with local_context(tmp_path, "2026-04-01") as ctx:
        yield ctx


def _say(ctx: IntegrationContext, path: str, name: str, line: str) -> UnitResult:
    return integrate_note(ctx, path, name, line)


@pytest.mark.parametrize(("old", "old_name", "new", "new_name", "renamed"), [
    ("Priya wants design docs to fit on one page. Longer docs get split.",
     "Priya wants design docs to fit on one page",
     "Priya changed her mind: design docs can be two pages now.", "Priya changed her mind",
     "Priya wants design docs to fit on two pages"),
    ("陈静希望设计文档最多一页，超过就拆分。", "陈静希望设计文档最多一页",
     "陈静改主意了：设计文档现在最多可以两页。", "陈静改主意了", "陈静希望设计文档最多两页"),
])
def test_a_number_written_as_a_word_that_changes_is_a_correction(
        empty_ctx: IntegrationContext, old: str, old_name: str, new: str, new_name: str,
        renamed: str) -> None:
    """`one page` -> `two pages` (`一页` -> `两页`) said as a change is a CORRECT of the node
    that said one page, though the two share few words: the node keeps its name, with the new
    value, and the correction line quotes the old line without the unit's own label."""
    made = _say(empty_ctx, "daily/2026-03-02/review.md", old_name, old)
    later = _say(empty_ctx, "daily/2026-03-09/retro.md", new_name, new)
    assert (later.action, later.target) == ("CORRECT", made.target)
    text = (empty_ctx.vault / made.target).read_text(encoding="utf-8")
    assert f"name: {renamed}\n" in text
    assert old.split("。")[0].split(". ")[0] in text.split("## Sources")[0]
    assert "changed her mind:" not in text and "改主意了：" not in text


@pytest.mark.parametrize(("claim", "lang"), [
    ("Update frequency is daily now.", "en"),
    ("Changes need two approvals now.", "en"),
    ("更新频率现在是每天一次。", "zh"),
    ("更正后的配置是 80。", "zh"),
])
def test_a_correction_line_keeps_a_claim_that_only_starts_like_a_label(claim: str,
                                                                       lang: str) -> None:
    """A word that is a label only with its colon (`Update:`, `更新：`) opening the claim itself
    (`Update frequency ...`, `更新频率 ...`) stays."""
    line = write.correction_line(claim, "Old claim.", "daily/2026-01-02/a.md", "2026-01-02", lang)
    assert claim.rstrip("。.") in line


def test_a_corrected_name_takes_no_name_from_another_clause() -> None:
    """"Hana agreed" is no new value of the gate: the name keeps `Offline`, and takes the new
    number only from the clause that states it."""
    old = "Offline gate for a new ranker: it must beat prod by at least 0.5 % NDCG@10."
    note = _node("Offline gate at 0.5 % for a new ranker", old, old)
    summary = ("Offline gate raised: a new ranker has to beat prod by at least 1 % NDCG@10. "
               "Hana agreed.")
    head = Engine._corrected_head(note, old, "Offline gate raised", summary, "wiki", "en",
                                  [])  # type: ignore[arg-type]
    assert head["name"] == "Offline gate at 1 % for a new ranker"
    assert head["description"] == "Offline gate for a new ranker: it must beat prod by at " \
        "least 1 % NDCG@10."


def test_a_corrected_name_that_states_no_old_number_stays() -> None:
    """The unit does not repeat the name's word (`Offline`) and says who agreed (`Hana`): the
    name is neither `Hana gate for a new ranker` nor the unit's title."""
    old = "Offline gate for a new ranker: it must beat prod by at least 0.5 % NDCG@10."
    note = _node("Offline gate for a new ranker", old, old)
    summary = ("From now on a new ranker has to beat prod by at least 1 % NDCG@10 to get an "
               "A/B slot. Hana agreed.")
    head = Engine._corrected_head(note, old, "From now on a new ranker", summary, "wiki", "en",
                                  [])  # type: ignore[arg-type]
    assert "name" not in head


@pytest.mark.parametrize(("old", "old_name", "again"), [
    ("Priya wants design docs to fit on one page.", "Priya wants design docs to fit on one page",
     "Priya said it again: design docs fit on one page."),
    ("陈静希望设计文档控制在一页以内。", "陈静希望设计文档控制在一页以内",
     "陈静再次强调：设计文档控制在一页以内。"),
])
def test_a_person_saying_it_again_is_kept_and_restates_their_node(
        empty_ctx: IntegrationContext, old: str, old_name: str, again: str) -> None:
    """"Priya said it again: ..." states no cue word of its own (wants, must, decided): it is
    kept because a named person states it as theirs, titled by the claim, not the frame, and
    it CORROBORATEs the node that holds what she said first."""
    from remelink.models.local import extract

    found, skipped = extract.extract([(parse_text("daily/2026-03-09/retro.md",
                                                  f"# Retro\n\n- {again}\n"), {})])
    assert len(found) == 1, skipped
    name = str(found[0]["name"])
    assert "said it again" not in name and "再次强调" not in name
    made = _say(empty_ctx, "daily/2026-03-02/review.md", old_name, old)
    later = _say(empty_ctx, "daily/2026-03-09/retro.md", name, again)
    assert (later.action, later.target) == ("CORROBORATE", made.target)
