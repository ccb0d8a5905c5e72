"""What a daily note states without a cue word is kept when it states a value (SPEC §8: every
rule, threshold and decision a note states; issue 21): a meeting's points with their numbers, a
paragraph that gives a decision its figures, a table as written; small talk stays out."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from remelink.models.local import extract
from remelink.models.local import text as tx
from remelink.vault.notes import parse_text
from tests.test_local_foreign_notes import body_of, dream

PATH = "daily/2026-03-05/sync.md"


def units(body: str, path: str = PATH) -> list[dict[str, object]]:
    found, _ = extract.extract([(parse_text(path, body), {})])
    # A line's own unit (kind echo) only updates another note's node: not the note's units.
    return [u for u in found if u.get("kind") != extract.ECHO]


def said(unit: dict[str, object]) -> str:
    return " ".join([str(unit["summary"]), *(str(p) for p in unit["points"])])  # type: ignore


@pytest.mark.parametrize("text, value", [
    ("shadow mode at 100 % of traffic for 10 days, 0 mismatches out of 41.7M postings", True),
    ("Storage cost is ~€180/month more", True),
    ("pgbouncer `cl_waiting` touched 300", True),
    ("两轮之后可以上 primary", True),
    ("PR 控制在 400 行以内", True),
    ("status goes out Fridays before 4 pm", True),
    ("the espresso machine on the 4th floor is leaking again", False),
    ("Someone should book for ~12 people", False),
    ("Dana is back Monday.", False),
    ("third time this month", False),
])
def test_states_value(text: str, value: bool) -> None:
    assert tx.states_value(text) is value


SUBJECTS = ("Retention on the ledger topic", "The export job timeout", "Review turnaround",
            "The consumer batch size", "Peak traffic at month start")
UNITS_EN = ("days", "minutes", "ms", "%", "GB", "partitions", "requests")
SUBJECTS_ZH = ("对账任务超时", "消费者批量大小", "发布冻结期", "连接池上限", "告警阈值")
UNITS_ZH = ("天", "分钟", "秒", "行", "个", "次")


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(SUBJECTS) - 1), st.integers(2, 900),
                          st.sampled_from(UNITS_EN)), min_size=2, max_size=5,
                unique_by=lambda x: x[0]),
       st.lists(st.tuples(st.integers(0, len(SUBJECTS_ZH) - 1), st.integers(2, 900),
                          st.sampled_from(UNITS_ZH)), min_size=2, max_size=5,
                unique_by=lambda x: x[0]))
def test_every_item_of_a_meeting_that_states_a_value_reaches_a_unit(
        en: list[tuple[int, int, str]], zh: list[tuple[int, int, str]]) -> None:
    """A meeting's points, no cue word among them: each one that states a number with its
    unit is kept, by a unit citing the note; the attendance line and the small talk are not."""
    items_en = [f"{SUBJECTS[i]} goes to {n} {unit} from next week." for i, n, unit in en]
    items_zh = [f"{SUBJECTS_ZH[i]}调整为 {n} {unit}，周四生效。" for i, n, unit in zh]
    heads = ("Attendees: Dana, Ines, Sam.", "参会：刘洋、陈静。")
    for items, head in zip((items_en, items_zh), heads, strict=True):
        body = "# Platform sync\n\n" + head + "\n\n" + "\n".join(f"- {t}" for t in items) + \
            "\n- Thanks all, see you tomorrow!\n"
        found = units(body)
        text = " ".join(said(u) for u in found)
        for item in items:
            assert item in text, (item, found)
        assert "Thanks all" not in text and "Dana, Ines" not in text and "刘洋、陈静" not in text
        assert all(u["paths"] == [PATH] for u in found)


DECISION = """# On-call tooling decision

Dana, Ines, Sam. 30 min.

PagerDuty contract renews 1 April and the price went up 40 %.

Decision: from 1 April, pages go through incident.io, schedule `settle-primary`.

Everything else in the escalation policy stays: 10 minutes to ack, EM at 25 minutes.

Ines migrates the alert routes (Alertmanager `receiver: incidentio-settle`).
"""


def test_a_paragraph_with_a_value_joins_the_decision_of_its_section() -> None:
    """One node per topic: the paragraphs that give a decision its figures are part of it, in
    the note's order around it, not units of their own."""
    found = units(DECISION)
    assert len(found) == 1, found
    text = said(found[0])
    for line in ("the price went up 40 %", "10 minutes to ack", "`receiver: incidentio-settle`"):
        assert line in text
    assert "30 min" not in text  # how long the meeting took is not what it decided
    assert text.index("40 %") < text.index("10 minutes to ack")


TABLE = """# pgb-journal 连接池配置调整

有两个参数设得不合理，一起改掉：

| 参数 | 旧 | 新 |
|---|---|---|
| `max_client_conn` | 1000 | 2000 |
| `query_wait_timeout` | 120 | 15 |

决定：连接池 `default_pool_size` 维持 40，不扩容。
"""


def test_a_table_reaches_the_node_as_written(tmp_path: Path) -> None:
    digest = dream(tmp_path, {"daily/2026-02-12/pool.md": TABLE})
    bodies = [body_of(text) for text in digest.values()]
    table = TABLE.split("\n\n")[2].strip()
    assert any(table in body for body in bodies), bodies
    assert any("维持 40" in body and table in body for body in bodies)  # one node, one topic
    assert any(f"\n\n{table}" in body for body in bodies)  # a block of its own


SMALL_TALK = """the espresso machine on the 4th floor is leaking again, puddle under it this
morning. third time this month. someone should file a facilities ticket, I did it last time

周五了～ 下午茶有人想喝奶茶吗，我来拼单，明天见。
"""


def test_small_talk_with_numbers_gives_no_unit() -> None:
    assert units(SMALL_TALK) == []


RULE_TEXTS = ("Acknowledge a page within {n} minutes, day or night.",
              "Every POST that moves money requires an `Idempotency-Key` header kept {n} hours.",
              "Rotation is one week; nobody does more than {n} consecutive weeks.",
              "Deprecations need a `Sunset` header and at least {n} days notice.",
              "数据库变更必须单独发布，比代码早至少 {n} 个版本。",
              "灰度每一步至少观察 {n} 分钟，看 5xx 和 p99。",
              "发布单至少提前 {n} 个工作日提交。")


@settings(max_examples=20, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(RULE_TEXTS) - 1), st.integers(2, 99)),
                min_size=3, max_size=7, unique_by=lambda x: x[0]),
       st.sampled_from(("On-call policy", "API style guide", "结算平台发布规范", "团队约定")))
def test_every_rule_of_a_policy_list_reaches_one_reference_unit(
        rules: list[tuple[int, int]], title: str) -> None:
    """A policy document's numbered rules (commands among them or not) are its rules, not a
    procedure: one reference unit holds every one of them, as a list."""
    items = [RULE_TEXTS[i].format(n=n) for i, n in rules]
    body = f"# {title}\n\nApplies to the settlement services.\n\n" + \
        "\n".join(f"{k}. {t}" for k, t in enumerate(items, 1)) + "\n"
    found = units(body, "resource/2026-02-02/policy.md")
    assert [u["kind"] for u in found] == ["topic"], found
    text = said(found[0])
    for item in items:
        assert f"- {item}" in text, (item, found)


AGENDA = """# 发布周会 3/17

赵敏主持。

1. 3 月月结的教训：封版两天不够，对账差了 1200 多笔。**决定：从 4 月开始，月结前封版四天。**
2. 灰度还是 5% → 25% → 100%，不变。
3. 发布单模板加一栏「是否影响对账」，赵敏来改模板。
"""


def test_a_meeting_agenda_is_no_procedure_and_keeps_each_point() -> None:
    found = units(AGENDA)
    assert all(u["bucket"] != "procedure" for u in found), found
    text = " ".join(said(u) for u in found)
    for point in ("封版四天", "1200", "5% → 25% → 100%", "是否影响对账"):
        assert point in text, (point, found)


RUNBOOK = """# Rotating the vault token

1. Log in with `vault login -method=oidc`.
2. Run `vault token create -policy=deploy -ttl=336h`.
3. Store it with `kubectl -n ledger create secret generic vault-token --from-literal=t=...`.
"""


def test_a_numbered_list_with_its_commands_is_still_a_runbook() -> None:
    found = units(RUNBOOK)
    assert [u["bucket"] for u in found] == ["procedure"], found


def test_an_added_line_refines_and_a_changed_value_corrects(tmp_path: Path) -> None:
    """A note edited after it was distilled: a line it gained extends its node (the rule it
    still states is not struck out); a value it changed corrects the line that held it."""
    rule = "# Backups\n\nRule: once a month someone restores the latest backup into staging.\n\n" \
        "The database is backed up every night at 02:00 UTC.\n"
    logs = "# Logging\n\nWe decided that services log structured JSON, one event per line.\n\n" \
        "Logs are kept for 30 days.\n"
    dream(tmp_path, {"daily/2026-06-05/backups.md": rule, "daily/2026-06-09/logging.md": logs})
    digest = dream(tmp_path, {
        "daily/2026-06-05/backups.md": rule + "\nA restore into staging takes about 40 minutes.\n",
        "daily/2026-06-09/logging.md": logs.replace("30 days", "90 days")})
    backups = next(body_of(t) for t in digest.values() if "restores the latest backup" in t)
    assert "~~" not in backups and "about 40 minutes" in backups, backups
    logging = next(body_of(t) for t in digest.values() if "structured JSON" in t)
    assert "~~Logs are kept for 30 days.~~" in logging and "Logs are kept for 90 days" in logging
    assert "Text:" not in logging, logging  # a point's role is not part of what it says


OPTIONS = """# Design review: payouts stuck in PENDING

Felix presented the two stuck payouts from January. Options:

1. dual write + retry loop — still loses the event if the process dies. Rejected.
2. Kafka transactions — don't cover the DB write. Rejected.
3. transactional outbox with a poller
4. transactional outbox with Debezium CDC

Discussion: the poller adds 100 ms polling load on payoutsdb.

**Decision: option 4, outbox + Debezium.** Felix writes the ADR.
"""


def test_the_options_a_decision_chose_among_are_part_of_it() -> None:
    """One node per topic: the list of options, then the decision that picks one of them, is
    one unit led by the decision, holding the options as the note lists them."""
    found = units(OPTIONS)
    assert len(found) == 1, found
    assert "option 4" in str(found[0]["summary"]).lower()
    text = said(found[0])
    options = [f"- {line.split('. ', 1)[1]}" for line in OPTIONS.splitlines() if line[:2]
               in ("1.", "2.", "3.", "4.")]
    at = [text.index(o) for o in options]
    assert at == sorted(at) and at[-1] < text.index("100 ms polling")


@pytest.mark.parametrize("line, kept", [
    ("No network calls inside a DB transaction or inside a Kafka poll loop.",
     "No network calls inside a DB transaction"),
    ("Tomasz moves to FX from next week. Ines takes over the posting-consumer migration.",
     "Ines takes over the posting-consumer migration"),
    ("Shanghai-hours secondary on-call: approved, 刘洋 and 陈静 alternate, starting April.",
     "刘洋 and 陈静 alternate"),
    ("Ines: she's happy with one producer per week. Refunds next, fees last.", "Refunds next"),
    ("recon 重构她很想做，Dana 那边也同意让她一起。", "Dana 那边也同意让她一起"),
])
def test_a_rule_a_decision_or_an_owner_without_the_usual_cue_is_kept(line: str, kept: str) -> None:
    """What a meeting states is kept by what it is (a prohibition, an approval, who owns what,
    a preference), not only by the cue words `must`, `decided`, `prefers`."""
    found = units(f"# Platform sync\n\n- {line}\n")
    assert any(kept in said(u) for u in found), found


def test_a_short_rule_with_its_value_is_kept_in_a_document() -> None:
    """A value needs few words (`单个 value 不要超过 10KB。`): a document's short rule that states
    one reaches its reference unit like its longer rules."""
    body = "# Redis 踩坑总结\n\n## 大 key\n单个 value 不要超过 10KB。\n" \
        "用 `redis-cli --bigkeys` 定期扫一遍。\n"
    found = units(body, "resource/2026-03-12/redis.md")
    text = " ".join(said(u) for u in found)
    assert "不要超过 10KB" in text and "`redis-cli --bigkeys`" in text, found


@pytest.mark.parametrize("body", [
    "周五了～ 下午茶有人想喝奶茶吗，我来拼单，大概 12 杯。\n",
    "Friday! Anyone up for bubble tea at 15:00? I'll order, about 12 cups.\n",
    "Team lunch: someone should book for 12 people at 12:30.\n",
])
def test_a_request_to_the_room_with_a_count_gives_no_unit(body: str) -> None:
    """Asking the room (a question, a wish) states nothing, however many cups it counts."""
    assert units(body) == []
