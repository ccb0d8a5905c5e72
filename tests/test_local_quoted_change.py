"""A change that quotes the value it changes (issue 21): people rarely write "from X to Y" in one
clause. They say what was wrong with the old value in one sentence and decide the new one in
another ("400 lines was too tight ... the limit is 600 lines from now on", "it timed out at
page_size=200 ... Decision: max is one hundred"). The value the unit writes and a node line
states, replaced by a deciding statement with another value of the same measure, is the line the
unit corrects, whatever else the node's title names. Without a deciding statement, or with the
quoted value of another measure, nothing is corrected."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from local_support import integrate_note, local_context

from remelink.integrate import IntegrationContext
from remelink.models.local import decide
from remelink.models.local import text as tx

GUIDE_HEAD = "Review guide (platform team). What reviewers check on every change."
GUIDE = """# Review guide (platform team)

What reviewers check on every change. Applies to all services the team owns.

1. **Tests** come with the change, not in a follow-up.
2. **Size**: keep a merge request under 300 lines, split anything bigger.
3. **Feature flags** are named `team.feature`, never a ticket number.
4. **Listings** page with `page_token`; `page_size` max is 200, default 50.
"""

ZH_HEAD = "评审规范（平台组）。每次评审都要检查的几条。"
ZH_GUIDE = """# 评审规范（平台组）

每次评审都要检查的几条，适用于组里所有服务。

- 测试跟着改动一起提，不要留到下一个 PR。
- 大家同意 MR 控制在 300 行以内，超过的拆开提。
- 告警规则：`queue-redis` 内存用到 80% 就要告警。
"""


def correction(unit: str, head: str, body: str) -> decide.Comparison:
    c = decide.compare(unit, head, body)
    return c


def test_an_old_value_called_too_tight_and_a_decided_new_one_correct_that_line() -> None:
    unit = ("300 lines was too tight, people split changes just to fit. We agreed that the "
            "limit is 500 lines from now on (generated code excluded).")
    c = correction(unit, GUIDE_HEAD, GUIDE)
    assert decide.classify(c) == "same_abstraction" and c.correction
    assert c.old_sentence and "under 300 lines" in c.old_sentence
    assert "500 lines" in c.new_sentence


def test_a_chinese_old_value_called_too_tight_corrects_that_line() -> None:
    unit = ("MR 大小：大家商量后上限改成 500 行（生成的代码不算）。"
            "300 行太紧，好多改动为了凑行数硬拆。")
    c = correction(unit, ZH_HEAD, ZH_GUIDE)
    assert decide.classify(c) == "same_abstraction" and c.correction
    assert c.old_sentence and "300 行以内" in c.old_sentence


def test_a_value_that_timed_out_and_a_decided_limit_in_words_correct_the_guide_line() -> None:
    unit = ("`GET /v1/refunds`: cursor pagination with `page_token`, fine. The exports listing "
            "timed out twice last week at page_size=200. Decision: page_size max is one hundred "
            "from now on, for every listing. Default stays 50.")
    c = correction(unit, GUIDE_HEAD, GUIDE)
    assert decide.classify(c) == "same_abstraction" and c.correction
    assert c.old_sentence and "`page_size` max is 200" in c.old_sentence


def test_a_change_from_a_value_written_again_later_still_corrects_it() -> None:
    # "从 80% 提前到 70%", and the old 80% named again in the reason.
    unit = ("queue-redis 内存告警从 80% 提前到 70%：上周内存涨得很快，"
            "80% 报出来的时候离写满只剩半小时。")
    c = correction(unit, ZH_HEAD, ZH_GUIDE)
    assert decide.classify(c) == "same_abstraction" and c.correction
    assert c.old_sentence and "80%" in c.old_sentence


def test_without_a_decision_the_two_values_are_only_a_story() -> None:
    unit = ("300 lines was too tight for the migration, so we split it. The last part was "
            "500 lines anyway.")
    c = correction(unit, GUIDE_HEAD, GUIDE)
    assert not (decide.classify(c) == "same_abstraction" and c.correction)


def test_a_quoted_value_of_another_measure_corrects_nothing() -> None:
    # 300 is a number of seconds here, not of lines; the decided value counts requests.
    unit = ("The export took 300 seconds last night. From now on the export batch is 500 "
            "requests.")
    c = correction(unit, GUIDE_HEAD, GUIDE)
    assert not c.correction


@given(st.integers(1, 9))
def test_hundreds_and_thousands_in_words_are_one_number(n: int) -> None:
    word = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine"][n - 1]
    assert tx.facts(f"max is {word} hundred from now on").quantities == {("", 100.0 * n)}
    assert tx.facts(f"keep {word} thousand rows").quantities == {("row", 1000.0 * n)}


def test_a_hundred_and_a_contraction_after_a_number() -> None:
    assert tx.facts("a hundred requests").quantities == {("request", 100.0)}
    # "5 wasn't enough": the auxiliary is no unit of the number.
    assert tx.facts("5 wasn't enough").quantities == {("", 5.0)}
    assert tx.facts("3 isn't much").quantities == {("", 3.0)}


@pytest.fixture
def ctx(tmp_path: Path) -> Iterator[IntegrationContext]:
    with local_context(tmp_path, "2026-04-20") as context:
        yield context


def test_a_review_that_quotes_the_old_limit_corrects_the_guide_end_to_end(
        ctx: IntegrationContext) -> None:
    made = integrate_note(ctx, "resource/review-guide.md", "Review guide (platform team)",
                          "What reviewers check on every change.", note=GUIDE,
                          points=("Keep a merge request under 300 lines, split anything "
                                  "bigger.",
                                  "Listings page with `page_token`; `page_size` max is 200, "
                                  "default 50."))
    later = integrate_note(
        ctx, "daily/2026-04-10/review.md", "Merge request limit is 500 lines",
        "300 lines was too tight, people split changes just to fit. We agreed that the limit "
        "is 500 lines from now on (generated code excluded).")
    assert later.action == "CORRECT" and later.target == made.target
    text = (ctx.vault / made.target).read_text(encoding="utf-8")
    [line] = [x for x in text.splitlines() if x.startswith(">")]
    assert "under 300 lines" in line and "[[daily/2026-04-10/review.md]]" in line


@pytest.mark.parametrize("unit, line", [
    # a day the story names, not the freeze's days
    ("封版两天不够。上线前一天还有人在改配置，对账差了很多笔。决定：从下个月开始，月结前封版四天。",
     "小王希望发布单大家提前一天提交，不要当天早上才提。"),
    # a month the reason names ("4 月休假"), not the month the line's change starts in
    ("夜间值班推迟到 5 月开始。小李 4 月休两周假，一个人排不过来。",
     "更正：从 4 月开始，月结前封版四天。"),
])
def test_a_value_of_the_story_is_not_the_old_value_of_another_line(unit: str, line: str) -> None:
    assert decide._quoted_change(unit, [line]) is None


ZH_DOC_HEAD = ("缓存踩坑总结（写给新同学）。"
               "我们有两套缓存：queue-cache（队列）和 session-cache（会话）。")
ZH_DOC = """# 缓存踩坑总结（写给新同学）

我们有两套缓存：`queue-cache`（队列）和 `session-cache`（会话）。用途不一样，配置也不能一样。

## 1. 队列缓存不能淘汰
- 必须关掉淘汰策略，宁可写失败也不能丢数据。
- 内存用到 80% 就要告警，不要等满了再处理。
- 单个 value 不要超过 10KB。
"""


def test_a_change_from_the_value_of_a_line_deep_in_a_document_corrects_that_line() -> None:
    # The document's opening names other things (`session-cache`); the line names nothing, and
    # the unit writes the line's value as the one it changes, on the line's words.
    unit = ("queue-cache 内存告警从 80% 提前到 70%：上周有个新服务往里写大 key，"
            "80% 报出来的时候离写满只剩半小时。")
    assert decide.entity_conflict(unit, ZH_DOC_HEAD)
    c = decide.compare(unit, ZH_DOC_HEAD, ZH_DOC)
    assert decide.classify(c) == "same_abstraction" and c.correction
    assert c.old_sentence == "内存用到 80% 就要告警，不要等满了再处理。"
    # Another value of another line's words is no change of this one.
    other = "queue-cache 的连接数从 80 调到 120：上周高峰排队了。"
    assert decide.classify(decide.compare(other, ZH_DOC_HEAD, ZH_DOC)) != "same_abstraction"


def test_code_decides_nothing_and_quotes_nothing() -> None:
    """A statement cut out of a code block ("/* From now on ... */ .panel { width: 500px;")
    corrected another note's node, and the correction line quoted the code cut open: the code
    guard refused it and the unit failed (a SilverBullet note on widgets). The same change in
    words still corrects."""
    node = ["The panel is 300px wide on every page."]
    code = ("The panel was 300px wide, too narrow for the table.\n\n"
            "```css\n/* From now on the panel is wider: */\n.panel { width: 500px; }\n```\n")
    assert decide._quoted_change(code, node) is None
    words = ("The panel was 300px wide, too narrow for the table.\n\n"
             "From now on the panel is 500px wide.")
    found = decide._quoted_change(words, node)
    assert found is not None and found.statement == "From now on the panel is 500px wide."
