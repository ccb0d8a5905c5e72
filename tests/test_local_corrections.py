"""Corrections and restatements of the local engine on notes as people write them (issue 21): a
later decision that sets another value CORRECTs the node holding the old one (also in Chinese,
also when the number is a word), quoting the line it corrects and keeping the node's name
unless the name stated the old value; a restatement CORROBORATEs its node; and pairs that only
look alike (another value, another unit, before/after, swapped roles, another system) never
merge."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from local_support import integrate_note, local_context

from remelink.facts import facts, number_words
from remelink.integrate import IntegrationContext
from remelink.models.local import decide, revise
from remelink.models.local import text as tx


@pytest.fixture
def ctx(tmp_path: Path) -> Iterator[IntegrationContext]:
    with local_context(tmp_path, "2026-04-01") as context:
        yield context


run = integrate_note


def node(ctx: IntegrationContext, rel: str | None) -> str:
    assert rel
    return (ctx.vault / rel).read_text(encoding="utf-8")


def test_a_chinese_change_from_40_to_80_corrects_the_node_that_kept_40(
        ctx: IntegrationContext) -> None:
    kept = run(ctx, "daily/2026-02-12/pool.md", "连接池 default_pool_size 维持 40",
               "连接池 default_pool_size 维持 40，不扩容。journaldb 的 max_connections 是 200。")
    later = run(ctx, "daily/2026-03-04/review.md", "连接池 default_pool_size 从 40 调到 80",
                "连接池 default_pool_size 从 40 调到 80（三个实例一共 240）。")
    assert later.action == "CORRECT" and later.target == kept.target
    text = node(ctx, kept.target)
    [line] = [x for x in text.splitlines() if x.startswith(">")]
    # It quotes the very line that held the old value, and cites the correcting note.
    assert "原先的说法是“连接池 default_pool_size 维持 40，不扩容”" in line
    assert "[[daily/2026-03-04/review.md]]" in line
    assert "连接池 default_pool_size 维持 40，不扩容。" in text  # the old claim stays visible


def test_a_decided_freeze_of_four_days_corrects_the_policy_line_of_two(
        ctx: IntegrationContext) -> None:
    # A digest that holds a few other things (IDF over one node weighs every new word alike).
    for i, (name, summary) in enumerate([
            ("值班交接要写清楚未关闭的告警", "值班交接要写清楚未关闭的告警和正在进行的变更。"),
            ("代码评审 24 小时内给第一轮反馈", "代码评审要在 24 小时内给第一轮反馈。"),
            ("幂等键保存 24 小时", "幂等键和第一次的响应保存 24 小时。")]):
        run(ctx, f"daily/2026-01-0{i + 1}/other.md", name, summary)
    policy = run(ctx, "resource/2026-02-02/release-policy.md", "结算平台发布规范",
                 "常规发布窗口：每周二、周四 10:00–16:00。",
                 points=("rule: 每个月月结前封版两天，封版期间只修 P0。",
                         "rule: 出问题先回滚再排查，回滚决定要在 10 分钟内做出。"))
    meeting = run(ctx, "daily/2026-03-17/release-weekly.md", "月结前封版四天",
                  "3 月月结的教训：封版两天不够。决定：从 4 月开始，月结前封版四天。")
    assert meeting.action == "CORRECT" and meeting.target == policy.target
    text = node(ctx, policy.target)
    [line] = [x for x in text.splitlines() if x.startswith(">")]
    # The deciding statement, not the lesson that quotes the old value; the policy's own line.
    assert "更正：从 4 月开始，月结前封版四天；" in line and "封版两天，封版期间只修 P0" in line
    assert re.search(r"^name: 结算平台发布规范$", text, re.M)  # the name said no value: kept


def test_a_number_written_as_a_word_is_a_change_and_the_name_keeps_its_words(
        ctx: IntegrationContext) -> None:
    made = run(ctx, "daily/2026-02-04/1on1.md", "Dana wants design docs of at most four pages",
               "Dana wants design docs to be at most four pages. Anything longer means the "
               "scope is too big.", bucket="personal")
    later = run(ctx, "daily/2026-03-10/review.md", "Design docs can be six pages",
                "Dana agreed design docs can now be six pages, appendix excluded.",
                bucket="personal")
    assert later.action == "CORRECT" and later.target == made.target
    text = node(ctx, made.target)
    assert re.search(r"^name: Dana wants design docs of at most six pages$", text, re.M)
    assert "the earlier claim was “Dana wants design docs to be at most four pages”" in text


def test_a_restatement_with_again_corroborates_without_a_new_node(
        ctx: IntegrationContext) -> None:
    made = run(ctx, "resource/ops/vault.md", "Rotate vault tokens",
               "Vault tokens are rotated every 14 days by the scheduler; a token older than "
               "that is revoked.")
    again = run(ctx, "daily/2026-03-11/ops-sync.md",
                "We agreed again to rotate the vault tokens every 14 days",
                "We agreed again to rotate the vault tokens every 14 days.")
    assert again.action == "CORROBORATE" and again.target == made.target
    text = node(ctx, made.target)
    assert "[[daily/2026-03-11/ops-sync.md]] (“We agreed again to rotate the vault tokens every " \
           "14 days”) restates this: We agreed again to rotate " \
           "the vault tokens every 14 days." in text
    assert "said it again" not in text and "Also:" not in text
    assert len(list((ctx.vault / "digest").glob("*/*.md"))) == 1


@pytest.mark.parametrize(("a", "b"), [
    ("Alert when cl_waiting stays above 50 for 2 minutes.",
     "Alert when cl_waiting stays above 500 for 2 minutes."),
    ("New engineers shadow on-call for two weeks.", "New engineers shadow on-call for two days."),
    ("Keep PRs under 300 lines.", "Keep PRs over 300 lines."),
    ("Experiments are tracked in W&B; MLflow is only the registry.",
     "Experiments are tracked in MLflow; W&B is only the registry."),
    ("embed_refresh_daily moved from Olu to 黄志强.",
     "embed_refresh_daily moved from 黄志强 to Olu."),
    ("外部证书到期前 30 天告警。", "外部证书过期后 30 天告警。"),
    ("赵敏希望发布单提前一天提交。", "赵敏希望发布单推迟一天提交。"),
    ("实验从 12 月起记录在 W&B。", "实验从 12 月起记录在 MLflow。"),
    ("日志里只打印卡号后四位。", "日志里只打印卡号前四位。"),
    ("他在 1967 年选秀的第 7 轮（共有 77 轮）被选中。",
     "他在 1967 年选秀的第 77 轮（共有 7 轮）被选中。"),
    ("Jobs needing more than 4 GPUs need a ticket.",
     "Jobs needing more than 8 GPUs need a ticket."),
    ("新人要 shadow 满两轮才能做 primary。", "新人要 shadow 满两周才能做 primary。"),
    ("Wait at least 30 minutes at each canary step.",
     "Wait at most 30 minutes at each canary step."),
    ("Set maxmemory-policy noeviction on idem-redis.",
     "Set maxmemory-policy noeviction on ratelimit-redis."),
])
def test_look_alikes_that_state_another_fact_never_merge(a: str, b: str) -> None:
    unit = decide.text_of(tx.title_from(b), b)
    head = decide.text_of(tx.title_from(a), a)
    assert decide.compare(unit, head, a).label != "same_abstraction"


def test_number_words_are_facts_of_an_edit() -> None:
    assert facts("Design docs fit on one page.") - facts("Design docs fit on two pages.") == \
        {"#one"}
    assert number_words("月结前封版三天，复盘五个工作日内完成") == {"三", "五"}
    assert number_words("one of the reasons, one or the other") == set()
    assert revise.with_value("月结前封版两天", "每个月月结前封版两天", "月结前封版四天") == \
        "月结前封版四天"
    assert revise.with_value("Pool size 40", "pool 40", "pool 80 over 3 instances") is None
    assert revise.with_value("Docs fit on one page", "Docs fit on one page.",
                             "Docs can now be two pages.") == "Docs fit on two pages"


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 999), st.integers(1, 999), st.sampled_from(["days", "hours", "minutes"]))
def test_another_value_of_the_same_setting_never_merges_silently(x: int, y: int,
                                                                 unit: str) -> None:
    a = f"Idempotency keys are kept for {x} {unit} in the dedupe store."
    b = f"Idempotency keys are kept for {y} {unit} in the dedupe store."
    c = decide.compare(decide.text_of(b), decide.text_of(a), a)
    if x == y:
        assert c.conflict_kind is None
    else:
        assert c.conflict_kind == "number"
        assert c.label != "same_abstraction" or c.correction


def test_a_restatement_by_the_same_person_says_what_was_restated_not_also(
        ctx: IntegrationContext) -> None:
    made = run(ctx, "daily/2026-02-03/sync.md", "Dana wants the weekly status in #settle-status",
               "Dana wants the weekly status in #settle-status, every Friday by 16:00 Lisbon, "
               "one paragraph per workstream. Not in the sync, not in DMs.", bucket="personal")
    again = run(ctx, "daily/2026-03-25/retro.md", "Dana said it once more",
                "Status updates: Dana said it once more: #settle-status, Fridays, before 4 pm. "
                "DMs don't count.", bucket="personal")
    assert again.action == "CORROBORATE" and again.target == made.target
    text = node(ctx, made.target)
    assert "Also:" not in text and "said it once more" not in text.split("## Sources")[0]
    assert "[[daily/2026-03-25/retro.md]] (“Dana said it once more”) restates this: Status " \
           "updates: Dana said it once more: #settle-status, Fridays, before 4 pm." in text


def test_a_chinese_restatement_corroborates_the_english_node(ctx: IntegrationContext) -> None:
    made = run(ctx, "resource/ops/vault.md", "Rotate vault tokens",
               "Vault tokens are rotated every 14 days by the scheduler; a token older than "
               "that is revoked.")
    again = run(ctx, "daily/2026-03-12/运维例会.md", "再次约定 vault token 轮换周期",
                "我们再次约定每 14 天轮换 vault token。")
    assert again.action == "CORROBORATE" and again.target == made.target
    text = node(ctx, made.target)
    assert "[[daily/2026-03-12/运维例会.md]]" in text.split("## Sources")[1]
    assert "我们再次约定每 14 天轮换 vault token" in text.split("## Sources")[1]
    assert "Also" not in text and "又" not in text.split("## Sources")[0]
    assert len(list((ctx.vault / "digest").glob("*/*.md"))) == 1


def test_a_restatement_across_languages_needs_the_same_numbers_and_names() -> None:
    head = "Rotate vault tokens. Vault tokens are rotated every 14 days by the scheduler."
    body = "Vault tokens are rotated every 14 days by the scheduler."
    same = decide.compare("我们再次约定每 14 天轮换 vault token。", head, body)
    assert same.restated and same.label == "same_abstraction"
    other = decide.compare("我们再次约定每 14 天轮换 API key。", head, body)
    assert not other.restated and other.label != "same_abstraction"
    no_number = decide.compare("我们再次约定轮换 vault token。", head, body)
    assert not no_number.restated


def test_a_change_worded_like_the_node_is_another_change_not_a_correction() -> None:
    # Both say "改成" (changed to): the unit's cue is the node's wording, not a correction of it.
    for a, b in (("gc_grace_seconds 改成 3 小时。", "gc_grace_seconds 改成 3 天。"),
                 ("回滚 embedding 模型只要把 EMBED_CANARY_PCT 改回 0。",
                  "回滚 embedding 模型要把 EMBED_CANARY_PCT 改成 100。"),
                 ("We changed the pool size to 40.", "We changed the pool size to 80.")):
        c = decide.compare(decide.text_of(tx.title_from(b), b), decide.text_of(tx.title_from(a), a),
                           a)
        assert c.conflict_kind == "number" and not c.correction
        assert c.label != "same_abstraction"
    # A cue of the unit's own, against a plain statement, still corrects it.
    c = decide.compare("The pool size was changed to 80.", "Pool size", "The pool size is 40.")
    assert c.correction and c.label == "same_abstraction"


_SETTINGS = st.sampled_from([
    ("Idempotency keys are kept for {n} {u} in the dedupe store.", ["hours", "days", "minutes"]),
    ("Alert when the consumer lag stays above {n} messages for {n2} {u}.", ["minutes", "hours"]),
    ("幂等键在去重库里保存 {n} {u}。", ["小时", "天", "分钟"]),
    ("月结前封版 {n} {u}，期间只允许回滚。", ["天", "周"]),
])


@settings(max_examples=60, deadline=None)
@given(_SETTINGS, st.integers(1, 400), st.integers(1, 400), st.data())
def test_changing_a_number_never_corroborates(setting: tuple[str, list[str]], x: int, y: int,
                                              data: st.DataObject) -> None:
    template, units = setting
    unit = data.draw(st.sampled_from(units))
    a = template.format(n=x, n2=7, u=unit)
    b = template.format(n=y, n2=7, u=unit)
    c = decide.compare(decide.text_of(b), decide.text_of(tx.title_from(a), a), a)
    if x == y:
        assert c.conflict_kind is None and c.label == "same_abstraction"
    else:
        # Another value is never the same statement said again: at most a correction (which
        # quotes the old line), never a silent merge.
        assert c.conflict_kind == "number" and c.old_sentence
        assert not c.restated or c.label != "same_abstraction" or c.correction
        assert c.label != "same_abstraction" or c.correction


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([
    ("{p} owns the posting-consumer migration.", ["Ines", "Tomasz", "Priya", "Marco"]),
    ("{p} wants design docs to fit on one page.", ["Ines", "Tomasz", "Priya", "Dana"]),
    ("Experiments are tracked in {p} from December.", ["MLflow", "W&B", "Neptune"]),
    ("连接池配置由 {p} 负责调整。", ["刘洋", "陈静", "Olu", "Marco"]),
    ("实验从 12 月起记录在 {p}。", ["MLflow", "W&B", "Neptune"]),
]), st.data())
def test_another_person_or_system_in_the_same_statement_never_merges(
        case: tuple[str, list[str]], data: st.DataObject) -> None:
    template, names = case
    x, y = data.draw(st.permutations(names))[:2]
    a, b = template.format(p=x), template.format(p=y)
    for again in (b, b.replace(" wants", " said again she wants").replace("由", "再次由")):
        c = decide.compare(decide.text_of(tx.title_from(again), again),
                           decide.text_of(tx.title_from(a), a), a)
        assert c.label != "same_abstraction", (a, again, c)


def test_a_correction_of_a_day_renames_the_node_by_that_day_only() -> None:
    # One day for another: the node's own name with the new day (the work vault's freeze).
    assert revise.with_value("The deploy freeze starts on Thursday at 18:00",
                             "The deploy freeze starts on Thursday at 18:00 and lasts until "
                             "Monday morning.",
                             "The deploy freeze now starts on Wednesday at 18:00.") == \
        "The deploy freeze starts on Wednesday at 18:00"


def test_one_page_to_two_pages_in_other_words_corrects_the_node(ctx: IntegrationContext) -> None:
    # The later note shares few words with the node ("fit" is gone), and its number is a word:
    # the point is what the sentence says of its value, numbers left out.
    made = run(ctx, "daily/2026-02-04/1on1-priya.md", "Priya wants design docs to fit on one page",
               "Priya wants design docs to fit on one page. Anything longer means the scope is "
               "too big.", bucket="personal")
    later = run(ctx, "daily/2026-03-10/design-review.md",
                "Priya agreed design docs can now be two pages",
                "Priya agreed design docs can now be two pages, appendix excluded.")
    assert later.action == "CORRECT" and later.target == made.target
    text = node(ctx, made.target)
    assert "the earlier claim was “Priya wants design docs to fit on one page”" in text
    assert re.search(r"^name: Priya wants design docs to fit on two pages$", text, re.M)
    assert len(list((ctx.vault / "digest").glob("*/*.md"))) == 1


def test_a_freeze_from_april_on_corrects_the_clause_of_a_policy_line(
        ctx: IntegrationContext) -> None:
    # The policy line holds two clauses (the freeze, and what the freeze allows); the later
    # unit restates only the first with another value and a starting point ("从 4 月开始"):
    # a change of that clause, quoted whole, and the node keeps its name.
    made = run(ctx, "resource/发布规范.md", "结算平台发布规范",
               "每个月月结前封版三天，期间只修 P0。",
               points=("灰度按 5% → 25% → 100% 推进。", "发布单至少提前一个工作日提交。"))
    later = run(ctx, "daily/2026-03-17/发布周会.md", "从 4 月开始", "从 4 月开始，月结前封版五天。")
    assert later.action == "CORRECT" and later.target == made.target
    text = node(ctx, made.target)
    assert "原先的说法是“每个月月结前封版三天，期间只修 P0”" in text
    assert re.search(r"^name: 结算平台发布规范$", text, re.M)
    assert len(list((ctx.vault / "digest").glob("*/*.md"))) == 1


@pytest.mark.parametrize(("text", "sets"), [
    ("从 4 月开始，月结前封版五天。", True),
    ("Starting April, design docs can be six pages.", True),
    ("月结前封版五天。", False), ("Design docs can be six pages.", False),
])
def test_a_starting_point_in_time_sets_a_value(text: str, sets: bool) -> None:
    assert decide.decides(text) is sets


@pytest.mark.parametrize(("text", "sets"), [
    ("So: design docs can be up to six pages now.", True),
    ("Retention on the topic goes to 14 days.", True),
    ("连接池从 40 调到 80。", True),
    ("Retention on the topic is 14 days.", False),
    ("连接池是 80。", False),
])
def test_a_value_changed_to_another_is_a_change(text: str, sets: bool) -> None:
    assert decide.decides(text) is sets


def test_a_handover_corrects_the_node_that_named_the_old_owner(ctx: IntegrationContext) -> None:
    kept = run(ctx, "daily/2026-01-05/plan.md", "Tomasz owns the posting-consumer migration",
               "Tomasz owns the posting-consumer migration end to end (shadow mode -> flip -> "
               "remove HTTP path).")
    later = run(ctx, "daily/2026-02-05/sync.md", "Tomasz moves to the FX project",
                "Tomasz moves to the FX project from next week. Ines takes over the "
                "posting-consumer migration from Tomasz, including the HTTP write path removal.")
    assert later.action == "CORRECT" and later.target == kept.target
    text = node(ctx, kept.target)
    [line] = [x for x in text.splitlines() if x.startswith(">")]
    # The handover is the correction; the line that named Tomasz is quoted and struck.
    assert line.startswith("> Corrected on 2026-02-05: Ines takes over the posting-consumer")
    assert "the earlier claim was \u201cTomasz owns the posting-consumer migration" in line
    assert "~~Tomasz owns the posting-consumer migration end to end" in text
    # The name said who owns it: it says the new owner now.
    assert re.search(r"^name: Ines owns the posting-consumer migration$", text, re.M)


def test_a_handover_keeps_a_name_that_never_said_who_holds_the_thing(
        ctx: IntegrationContext) -> None:
    kept = run(ctx, "daily/2026-01-05/1on1.md", "Sam is stretched",
               "Sam is stretched: the billing prototype + `export_nightly` + reviews.")
    later = run(ctx, "daily/2026-02-05/sync.md", "export_nightly moves to Lee",
                "`export_nightly` moves from Sam to Lee. Handover Friday.")
    assert later.action == "CORRECT" and later.target == kept.target  # Sam's load changed
    text = node(ctx, kept.target)
    # "Lee is stretched" would be false: the name stated no holder of `export_nightly`.
    assert re.search(r"^name: Sam is stretched$", text, re.M), text


def test_a_chinese_handover_corrects_the_node_that_named_the_old_owner(
        ctx: IntegrationContext) -> None:
    kept = run(ctx, "daily/2026-01-05/oncall.md", "陈静负责发布值班",
               "陈静负责结算平台的发布值班，每周一交接。")
    later = run(ctx, "daily/2026-02-05/weekly.md", "何伟接手发布值班",
                "何伟接手陈静的结算平台发布值班，从下周开始。")
    assert later.action == "CORRECT" and later.target == kept.target
    text = node(ctx, kept.target)
    assert "原先的说法是“陈静负责结算平台的发布值班，每周一交接”" in text
    assert re.search(r"^name: 何伟负责发布值班$", text, re.M)


@pytest.mark.parametrize(("unit", "sentence"), [
    # Who had it before is not who the node names.
    ("Ines takes over the posting-consumer migration from Tomasz.",
     "Felix owns the posting-consumer migration end to end."),
    # The node already names the new holder: no change of holder.
    ("Ines takes over the posting-consumer migration from Tomasz.",
     "Tomasz and Ines own the posting-consumer migration."),
    # Another thing of the same person.
    ("Ines takes over the posting-consumer migration from Tomasz.",
     "Tomasz owns the on-call rota for the ledger team."),
    # A handover against a handover: the same names in another order (PAWS-X), not a claim.
    ("悉尼水务委员会于 1888 年从市议会接管悉尼的水供应事务。",
     "1888 年，镇议会从悉尼水务局接管悉尼的供水事务。"),
    ("何伟接手陈静的发布值班。", "陈静把发布值班交给了何伟。"),
])
def test_a_handover_changes_only_a_sentence_naming_the_old_holder_of_that_thing(
        unit: str, sentence: str) -> None:
    assert decide.handover(unit, [sentence], decide.default_idf) is None


@settings(max_examples=40, deadline=None)
@given(old=st.sampled_from(["Tomasz", "Priya", "Marco", "Dana"]),
       new=st.sampled_from(["Ines", "Felix", "Olu", "Huang"]),
       thing=st.sampled_from(["the posting-consumer migration", "the ledger export",
                              "the release rota", "the FX dashboards"]))
def test_a_handover_names_the_holders_and_never_merges_without_its_old_holder(
        old: str, new: str, thing: str) -> None:
    unit = f"{new} takes over {thing} from {old}."
    assert decide.holders(unit) == (new, old)
    found = decide.handover(unit, [f"{old} owns {thing}."], decide.default_idf)
    assert found is not None and found.kind == "owner" and found.explicit
    # Said of someone else, it changes nothing of that node.
    assert decide.handover(unit, [f"Alex owns {thing}."], decide.default_idf) is None


@pytest.mark.parametrize(("a", "b"), [
    ("Drain GPU nodes running Triton one at a time.",
     "Drain all GPU nodes running Triton at the same time."),
    ("Restart the consumers sequentially after a deploy.",
     "Restart the consumers in parallel after a deploy."),
    ("发布后逐个重启消费者实例。", "发布后并行重启消费者实例。"),
])
def test_one_at_a_time_and_all_at_once_are_opposite_manners(a: str, b: str) -> None:
    assert decide.action_conflict(a, b) is not None
    assert decide.compare(a, b, b).label != "same_abstraction"


def test_the_same_manner_in_other_words_is_no_conflict() -> None:
    assert decide.action_conflict("Drain the nodes one by one.",
                                  "Drain the nodes one at a time.") is None
    assert decide.action_conflict("逐一重启实例。", "依次重启实例。") is None
    # Both manners on one side (a choice between them) is no opposite either.
    assert decide.action_conflict("Drain one at a time, never all at once.",
                                  "Drain all at once.") is None


@pytest.mark.parametrize(("a", "b"), [
    ("Design docs can be up to six pages.", "Design docs must be at least six pages."),
    ("Keep a canary step for no more than 30 minutes.",
     "Keep a canary step for at least 30 minutes."),
    ("设计文档最多六页。", "设计文档至少六页。"),
    ("单个 PR 不超过 300 行。", "单个 PR 不少于 300 行。"),
])
def test_an_upper_and_a_lower_bound_on_a_value_are_opposite(a: str, b: str) -> None:
    assert decide.action_conflict(a, b) is not None
    assert decide.compare(a, b, b).label != "same_abstraction"
    assert decide.compare(b, a, a).label != "same_abstraction"


def test_the_same_bound_in_other_words_and_up_to_without_a_value_are_no_conflict() -> None:
    assert decide.action_conflict("Design docs can be up to six pages.",
                                  "Design docs are at most six pages.") is None
    # "up to" bounds nothing but a number: "it is up to the team" is no bound.
    assert decide.action_conflict("It is up to the reviewer to check at least one test.",
                                  "The reviewer checks at least one test.") is None
    assert decide.compare("Design docs can be up to six pages.", "Design docs can be up to six "
                          "pages.").label == "same_abstraction"


@pytest.mark.parametrize(("a", "b"), [
    ("Who owns the posting-consumer migration?", "Who reviews the posting-consumer migration?"),
    ("How do I roll back journal-svc?", "How do I restart journal-svc?"),
    ("谁负责记账服务的迁移？", "谁评审记账服务的迁移？"),
])
def test_two_questions_asked_with_another_word_ask_other_things(a: str, b: str) -> None:
    assert decide.asks_otherwise(a, b) is not None
    assert decide.compare(a, b, b).label != "same_abstraction"
    assert decide.compare(b, a, a).label != "same_abstraction"


def test_a_question_asked_again_or_with_an_addressee_is_the_same_question() -> None:
    q = "Who owns the posting-consumer migration?"
    assert decide.asks_otherwise(q, q) is None
    assert decide.compare(q, q, q).label == "same_abstraction"
    assert decide.asks_otherwise("@Lustig Andrei, so were Johnson and Kennedy compatible?",
                                 "@edgarblythe, so were Johnson and Kennedy compatible?") is None
    # A statement is not a question: statements keep their own rules.
    assert decide.asks_otherwise("Ines owns the posting-consumer migration.",
                                 "Ines reviews the posting-consumer migration.") is None
