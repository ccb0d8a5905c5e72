"""Restatements and corrections of a line of a document (issue 21), end to end through `dream
run` with the local engine: a later note that sets a new value of what a document's line says
corrects that line, even when the line names its subject only at the document's head ("the
topic"); a line said under a lead-in that says it is said again ("Reminders:", "反复提到的")
corroborates the node whose line it restates, also across English and Chinese."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from local_support import dream

from remelink.models.local import decide


def citing(digest: dict[str, str], note: str) -> list[str]:
    return [p for p, text in digest.items() if f"[[{note}" in text]


DESIGN = """# Order events design

Producers publish an `OrderPlaced` event to the Kafka topic `orders.events.v1`.

## Problem

Checkout calls the order service over HTTP and times out under load.

## Design

- Partition key is `order_id`; 24 partitions, replication factor 3.
- Retention on the topic is 5 days. Older replays come from the orders archive.
- Payload is JSON with a `schema_version` field.
"""

SYNC = """# Team sync 9 Apr

- Retention on `orders.events.v1` goes to 21 days. The quarter-end replay needed 12 days of
  history and the archive path was slow. Priya OK'd the storage cost.
- Lunch on Friday is at the usual place.
"""

DESIGN_ZH = """# 订单事件设计

生产者把 `OrderPlaced` 事件发到 Kafka 主题 `orders.events.v1`。

## 设计

- 分区键是 `order_id`，24 个分区，三副本。
- 该主题的消息保留 5 天，更早的重放从订单归档里取。
- 消息体是 JSON，带 `schema_version` 字段。
"""

SYNC_ZH = """# 周会 4/9

- `orders.events.v1` 的保留时间改成 21 天：季末重放需要 12 天的历史，归档那条路太慢。
  王芳同意了存储成本。
- 周五中午聚餐，老地方。
"""


@pytest.mark.parametrize(("design_path", "design_text", "sync_path", "sync_text", "new", "old",
                          "corrected", "name"), [
    ("resource/order-events-design.md", DESIGN, "daily/2026-04-09/sync.md", SYNC, "21 days",
     "Retention on the topic is 5 days", "Corrected on 2026-04-09", "Order events design"),
    ("resource/订单事件设计.md", DESIGN_ZH, "daily/2026-04-09/周会.md", SYNC_ZH, "21 天",
     "该主题的消息保留 5 天", "更正", ""),
])
def test_a_new_value_of_a_document_line_that_names_only_the_documents_subject_corrects_it(
        tmp_path: Path, design_path: str, design_text: str, sync_path: str, sync_text: str,
        new: str, old: str, corrected: str, name: str) -> None:
    # "Retention on the topic is 5 days" names nothing: it speaks of `orders.events.v1`, which
    # the document names at its head. The sync sets a new value of it: a CORRECT of the
    # design's node, not a node of its own beside it.
    digest = dream(tmp_path, {design_path: design_text, sync_path: sync_text})
    design = citing(digest, design_path)
    assert len(design) == 1
    node = digest[design[0]]
    assert f"[[{sync_path}" in node
    assert new in node and old in node
    assert corrected in node
    if name:  # the node keeps its name: it did not say the old value
        assert f"name: {name}" in node
    assert not any(new in text for path, text in digest.items() if path not in design)


GUIDE = """# HTTP API conventions

What API review checks on every new endpoint of the team.

1. **Paths** are plural nouns in kebab-case under a version: `/v2/refund-requests`.
2. **Money** is an object `{"amount_cents": 1250, "currency": "USD"}`. Never a float.
3. **Pagination** uses `cursor` and `limit`; `limit` is at most 100. No offset paging.
4. **Errors** use `application/problem+json` with a stable `code`.
"""

REVIEW = """# Review of the refunds service PR

Reviewers: Ana, Kofi.

## Reminders (came up again)
- List endpoints take `cursor` and `limit`, no offset.
- Money goes as `amount_cents` plus `currency`, never a float.

## Other
- The retry helper should log the attempt number.
"""

REVIEW_PLAIN = REVIEW.replace("## Reminders (came up again)", "## Findings")

REVIEW_ZH = """# 退款服务代码评审

评审人：李娜、王强。记几条这次反复提到的问题：

- 列表接口用 `cursor` 和 `limit` 分页，不要 offset。
- 金额用 `amount_cents` 加币种，别用 float。

王强补充：重试的日志要带上第几次。
"""


def test_a_list_said_again_under_its_lead_in_corroborates_the_documents_node(
        tmp_path: Path) -> None:
    # "Reminders (came up again)" says its list is said again: each item is a line of its own
    # that restates a rule of the guide, which is corroborated with a Sources sentence quoting
    # it; the guide's body gets no "Also: ...".
    digest = dream(tmp_path, {"resource/api-conventions.md": GUIDE,
                              "daily/2026-04-14/review.md": REVIEW})
    guide = citing(digest, "resource/api-conventions.md")
    assert len(guide) == 1
    node = digest[guide[0]]
    body, _, sources = node.partition("## Sources")
    # Each restated line is quoted by a Sources sentence (a node update only inserts).
    assert "restates this: Money goes as amount_cents plus currency" in sources
    assert "restates this: List endpoints take cursor and limit, no offset" in sources
    assert "daily/2026-04-14" not in body and "Also:" not in body
    # Nothing of the review's restated lines is a node of its own.
    assert not any("List endpoints" in text for path, text in digest.items()
                   if path not in guide)


def test_the_same_list_without_a_lead_in_saying_so_stays_in_its_note(tmp_path: Path) -> None:
    digest = dream(tmp_path, {"resource/api-conventions.md": GUIDE,
                              "daily/2026-04-14/review.md": REVIEW_PLAIN})
    guide = citing(digest, "resource/api-conventions.md")
    assert len(guide) == 1
    assert "[[daily/2026-04-14/review.md" not in digest[guide[0]]


def test_a_chinese_list_said_again_corroborates_the_english_documents_node(
        tmp_path: Path) -> None:
    # "记几条这次反复提到的问题：" (points that came up again and again): its items restate the
    # English guide's rules, across languages (the identifiers they share: `cursor`, `limit`).
    digest = dream(tmp_path, {"resource/api-conventions.md": GUIDE,
                              "daily/2026-04-14/评审.md": REVIEW_ZH})
    guide = citing(digest, "resource/api-conventions.md")
    assert len(guide) == 1
    node = digest[guide[0]]
    body, _, sources = node.partition("## Sources")
    # In the English node, the Sources sentence is English; the note's words are quoted.
    assert "[[daily/2026-04-14/评审.md" in sources and " restates this: \u201c" in sources
    # The body says nothing of the review in its words (no "Also: ..."); a link to the
    # review's own node is a link, and says what it is: never "The same note also records".
    assert "评审" not in re.sub(r"\[\[[^\]]*\]\]", "", body)
    assert "The same note also records" not in body


def test_an_item_under_the_lead_in_with_another_value_is_no_restatement(
        tmp_path: Path) -> None:
    # Said "again", but with another bound (`limit` up to 500, the guide says 100): not the
    # guide's rule said again, and no cue of a correction either.
    review = REVIEW.replace("take `cursor` and `limit`, no offset.",
                            "take `cursor` and `limit`, with `limit` up to 500.")
    review = review.replace("- Money goes as `amount_cents` plus `currency`, never a float.\n", "")
    digest = dream(tmp_path, {"resource/api-conventions.md": GUIDE,
                              "daily/2026-04-14/review.md": review})
    guide = citing(digest, "resource/api-conventions.md")
    assert len(guide) == 1
    assert "[[daily/2026-04-14/review.md" not in digest[guide[0]]


POLICY_ZH = """# 支付网关发布规范

适用于 gateway-api 以及所有跟资金相关的服务。

- 常规发布窗口：每周三 10:00–15:00。
- 每个月月底前封版三天，封版期间只修 P0。
- hotfix 也要事后补发布单。
"""

MEETING_ZH = """# 网关发布周会 5/12

1. 小李问 hotfix 要不要发布单：要，事后补，规范里写了。
2. 5 月月底的教训：封版三天不够。
   **决定：从 6 月开始，月底前封版五天。** 封版期间只修 P0。
"""


def test_a_line_said_as_the_policy_says_corroborates_it_and_a_later_line_still_corrects_it(
        tmp_path: Path) -> None:
    # "规范里写了" (the policy says so): the meeting's line holds the policy's hotfix line, and
    # corroborates the policy's node. The meeting's decision further down still corrects the
    # policy's freeze, though the policy's node now cites the meeting (it is not the meeting's
    # own node: that is the node drawn from it).
    digest = dream(tmp_path, {"resource/网关发布规范.md": POLICY_ZH,
                              "daily/2026-05-12/发布周会.md": MEETING_ZH})
    policy = citing(digest, "resource/网关发布规范.md")
    assert len(policy) == 1
    node = digest[policy[0]]
    body, _, sources = node.partition("## Sources")
    assert "[[daily/2026-05-12/发布周会.md]]" in sources and "再次说明了这一点" in sources
    assert "更正" in body and "五天" in body
    # The meeting, cited already as restating the policy, is named as the correction's too.
    assert "更正依据 [[daily/2026-05-12/发布周会.md]]" in sources
    assert not any("小李问" in text for path, text in digest.items() if path not in policy)


POLICY = """# Payments on-call policy

Applies to everyone in the pay-oncall rotation.

- Acknowledge a page within 10 minutes.
- Pages go through PagerDuty, service `payments-platform`. Don't page people on Slack DMs.
- A postmortem is due within 5 working days.
"""

TOOLING = ("# Paging tool decision\n\n"
           "Decision: from 1 June, pay-oncall pages go through rootly.io, schedule `pay-primary`. "
           "PagerDuty stays as a backup until 30 June. Sam updates the policy doc. Ines tells "
           "the rotation on Monday.\n")


def test_two_lines_of_a_note_with_the_same_change_correct_the_node_once(tmp_path: Path) -> None:
    # The decision is a unit of several points, and its line a line unit too; the policy's
    # line stays unstruck (two sentences): the line meets it again after the decision corrected
    # it (another tool), and the node already records that correction from that note.
    digest = dream(tmp_path, {"resource/oncall-policy.md": POLICY,
                              "daily/2026-05-20/paging.md": TOOLING})
    policy = citing(digest, "resource/oncall-policy.md")
    assert len(policy) == 1
    node = digest[policy[0]]
    assert node.count("Corrected on 2026-05-20") == 1, node
    assert "rootly.io" in node


def test_items_said_again_that_only_name_what_a_rule_names_are_no_restatement(
        tmp_path: Path) -> None:
    # Said again, and naming two things the guide's pagination and money lines name, but about
    # logging: two shared names are a topic, not the rule said again.
    review = """# Review of the audit service PR

## Reminders (came up again)
- Don't log `cursor` or `limit` values in prod.
- Never write `amount_cents` and `currency` to the audit log.
"""
    digest = dream(tmp_path, {"resource/api-conventions.md": GUIDE,
                              "daily/2026-04-15/review.md": review})
    guide = citing(digest, "resource/api-conventions.md")
    assert len(guide) == 1
    assert "[[daily/2026-04-15/review.md" not in digest[guide[0]]


LIMITS_HEAD = "Service limits. Limits for the settlement services, reviewed every quarter."
LIMITS = """Limits for the settlement services, reviewed every quarter.

- Pods restart when they pass the limit; alerts fire at 80 %.
- Requests time out after 30 s at the gateway.
- `recon_export.max_memory` is 1 GiB.
- `payout_runner.max_memory` is 4 GiB.
"""

LIMITS_ZH_HEAD = "结算服务资源上限。每季度复查一次。"
LIMITS_ZH = """每季度复查一次。

- 超过上限的 Pod 会被重启，80% 时告警。
- `recon_export.max_memory` 是 1 GiB。
- `payout_runner.max_memory` 是 4 GiB。
"""


@pytest.mark.parametrize(("head", "body", "unit", "corrects"), [
    (LIMITS_HEAD, LIMITS, "Decision: from now on `recon_export.max_memory` is 2 GiB.", True),
    # Another setting's value: the line names what its value belongs to, the unit names
    # something else. No correction of that line (a related node, not a CORRECT).
    (LIMITS_HEAD, LIMITS, "Decision: from now on `fee_service.max_memory` is 2 GiB.", False),
    (LIMITS_ZH_HEAD, LIMITS_ZH, "决定：以后 `recon_export.max_memory` 改成 2 GiB。", True),
    (LIMITS_ZH_HEAD, LIMITS_ZH, "决定：以后 `fee_service.max_memory` 改成 2 GiB。", False),
])
def test_a_new_value_corrects_only_the_line_of_the_thing_it_names(
        head: str, body: str, unit: str, corrects: bool) -> None:
    c = decide.compare(unit, head, body)
    assert (c.label == "same_abstraction" and c.conflict_kind in decide.CORRECTABLE) is corrects
