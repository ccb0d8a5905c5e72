"""One node per topic in a daily note (SPEC §7.1, §8; runs.py): a daily note's statements are
cut into runs, one unit each; unrelated things of one day stay apart, the points of one review
stay together, and a fragment never stands alone. English and Chinese."""

from __future__ import annotations

import pytest

from remelink.models.local import extract, runs
from remelink.vault.notes import parse_text


def units(body: str, name: str = "note.md") -> list[dict[str, object]]:
    note = parse_text(f"daily/2026-03-05/{name}", body)
    found, _ = extract.extract([(note, {})])
    # A line's own unit (kind echo) only updates another note's node: not the note's units.
    return [u for u in found if u.get("kind") != extract.ECHO]


def said(unit: dict[str, object]) -> str:
    return " ".join([str(unit["summary"]), *(str(p) for p in unit["points"])])  # type: ignore


TWO_TOPICS_EN = """# Thursday

Looked at the search API with Maya. When there are no results it returns 404. It should return
200 with an empty list. Clients treat 404 as a broken route and retry it.

Separately: we agreed to pin the Kafka client to 3.6 because 3.7 breaks the SASL handshake.
"""

TWO_TOPICS_ZH = """# 周四

和小周看了搜索接口。没有结果的时候她返回了 404。
应该返回 200 和空列表，客户端把 404 当成路由错误会一直重试。

另外：我们决定把 Kafka 客户端固定在 3.6，因为 3.7 的 SASL 握手有问题。
"""


@pytest.mark.parametrize("body, api, kafka", [
    (TWO_TOPICS_EN, "return 200", "Kafka client"),
    (TWO_TOPICS_ZH, "返回 200", "Kafka 客户端"),
])
def test_two_topics_of_one_day_are_two_units(body: str, api: str, kafka: str) -> None:
    found = units(body)
    assert len(found) == 2, found
    first, second = found
    # The statement that leans on its predecessor is read with it, not alone.
    assert api in said(first) and "404" in str(first["summary"])
    assert kafka not in said(first)
    assert kafka in said(second) and api not in said(second)
    # The title is never the fragment that only makes sense after its predecessor.
    assert not runs.refers_back(str(first["name"]))


REVIEW_EN = """# Code review of the fee-service refactor

Review notes from Ana and Joe on PR 2412:

- Amounts must be stored as integer minor units with a currency, never floats.
- Fees must be rounded per line item with HALF_EVEN, not after summing.
- New list endpoints must use page_token pagination, not offset.
"""

REVIEW_ZH = """# 代码评审记录

评审人：刘洋、陈静。记几条这次反复提到的问题：

- 金额一律用整数分加币种，不要用浮点数，也不要用字符串。
- 手续费按笔计算，四舍五入到分，不要先汇总再舍入。
- 新接口的分页用 page_token，不要用 offset 分页。
"""


@pytest.mark.parametrize("body, points", [
    (REVIEW_EN, ("minor units", "HALF_EVEN", "page_token")),
    (REVIEW_ZH, ("整数分", "四舍五入到分", "page_token")),
])
def test_a_reviews_points_are_one_node(body: str, points: tuple[str, ...]) -> None:
    found = units(body)
    assert len(found) == 1, [u["name"] for u in found]
    assert all(p in said(found[0]) for p in points)


LABELLED_EN = """# Sync

We agreed:
- The deploy freeze starts on Thursday at 18:00 and lasts until Monday 09:00.
- Logs of the payments service are kept for 30 days, then deleted.
"""

LABELLED_ZH = """# 周会

我们决定：
- 发布冻结从周四 18:00 开始，到周一 09:00 结束。
- 支付服务的日志保留 30 天，然后删除。
"""


@pytest.mark.parametrize("body", [LABELLED_EN, LABELLED_ZH])
def test_a_label_says_what_kind_its_items_are_not_one_topic(body: str) -> None:
    """`We agreed:` classifies the items under it (each a decision of its own), unlike a
    lead-in that says what they are about."""
    assert len(units(body)) == 2


FRAGMENT_EN = """# Monday

Read Olu's sharding doc. Single-writer per shard means the hot tenant saturates one node.
This is the wall Olu's sharding doc talks about. The definition comes from

- Shard keys must include the tenant id.
- This is what the doc calls a hot partition.
"""

FRAGMENT_ZH = """# 周一

看了 Olu 的分片文档。单写者分片意味着热点租户会压满一个节点。

- 分片键必须包含租户 ID，不然热点租户会压满一个节点。
- 这个就是文档里说的热点分区问题，以后设计都要考虑。
"""


@pytest.mark.parametrize("body, fragment, joined", [
    (FRAGMENT_EN, "The definition comes from", "This is what the doc calls a hot partition"),
    (FRAGMENT_ZH, None, "这个就是文档里说的热点分区问题"),
])
def test_a_fragment_is_joined_to_its_topic(body: str, fragment: str | None, joined: str
                                           ) -> None:
    found = units(body)
    names = [str(u["name"]) for u in found]
    assert not any(runs.refers_back(n) or runs.unfinished(n) for n in names), names
    # The item that refers back joins the item before it.
    holder = [u for u in found if joined in said(u)]
    assert len(holder) == 1 and not str(holder[0]["summary"]).startswith(joined[:4])
    if fragment:
        # A fragment with nothing after it is no node and no line of one.
        assert not any(fragment in said(u) for u in found)


@pytest.mark.parametrize("text, back", [
    ("It should return 200 with an empty list.", True),
    ("This is the wall the doc talks about.", True),
    ("Clients treat 404 as a broken route.", False),
    ("There must be a runbook link on every alert.", False),
    ("She wants design docs to be at most four pages.", False),  # a person, resolved elsewhere
    ("应该返回 200 和空列表。", True),
    ("这个要先在测试库验证一下。", True),
    ("客户端把 404 当成路由错误。", False),
    # "Remaining" presupposes the whole it is the rest of: what came before (issue 21).
    ("Remaining producers to flip: payouts, fees, refunds.", True),
    ("剩下的两个 producer 下周切。", True),
    ("其余的告警先不动。", True),
])
def test_refers_back(text: str, back: bool) -> None:
    assert runs.refers_back(text) is back


@pytest.mark.parametrize("text, open_", [
    ("The definition comes from", True),
    ("Review notes on PR 2412:", True),
    ("Ran it in a loop: \ue010x\ue011", False),
    ("The definition comes from the RFC.", False),
    ("原因是", True),
    ("记几条问题：", True),
    ("原因是连接池太小。", False),
])
def test_unfinished(text: str, open_: bool) -> None:
    from remelink.models.local import fenced
    if "\ue010" in text:
        text = "Ran it in a loop: " + fenced.fold(["```bash", "pytest -x", "```"])
    assert runs.unfinished(text) is open_


DEBUG_EN = """# flaky: test_split_batches

CI red about 1 in 8 runs on payout-runner, always `test_split_batches`.

Couldn't reproduce locally at first. Ran it 200 times with `--count=200`: failed at 31.

Set iteration order depends on `PYTHONHASHSEED`, which is random per process.

Fix: `for c in sorted(currencies)` in the code, and the test asserts the sorted order.

Lesson: never iterate a set when the order of the output matters.
"""

DEBUG_ZH = """# 银行网关证书过期

3/24 02:10 payout-runner 调银行网关全部失败，`SSL: CERTIFICATE_EXPIRED`，陈静值班。

处理：用新证书替换，`kubectl -n payouts rollout restart deploy/payout-runner`，02:55 恢复。

原因：证书续签的提醒发到了一个已经离职同事的邮箱。

改进：所有外部证书到期前 30 天告警，负责人改成值班组，不再绑个人。
"""


@pytest.mark.parametrize("body, symptom, parts", [
    (DEBUG_EN, "1 in 8", ("PYTHONHASHSEED", "sorted(currencies)", "iterate a set")),
    (DEBUG_ZH, "CERTIFICATE_EXPIRED", ("rollout restart", "离职同事", "30 天告警")),
])
def test_a_debugging_log_written_as_prose_is_one_runbook(body: str, symptom: str,
                                                         parts: tuple[str, ...]) -> None:
    found = units(body)
    assert len(found) == 1, [u["name"] for u in found]
    assert found[0]["bucket"] == "procedure" and symptom in str(found[0]["summary"])
    assert all(p in said(found[0]) for p in parts)


LISTING_EN = """# Design review — ledger export API

Feedback on the design itself:
- Export is async: the POST returns 202 and an export id, the client polls for the file.
- Files land in S3 as Parquet, and the signed URL stays valid for one hour.
- Max export range is 31 days per request.
"""

LISTING_ZH = """# 导出接口设计评审

对设计本身的意见：
- 导出是异步的，POST 返回 202 和导出编号，客户端轮询结果。
- 文件以 Parquet 格式存放在 S3 上，签名链接有效期一小时。
- 每次请求最多导出 31 天的数据。
"""


@pytest.mark.parametrize("body, name, points", [
    (LISTING_EN, "Design review — ledger export API", ("202", "Parquet", "31 days")),
    (LISTING_ZH, "导出接口设计评审", ("202", "Parquet", "31 天")),
])
def test_a_lead_ins_points_are_kept_and_named_by_their_topic(
        body: str, name: str, points: tuple[str, ...]) -> None:
    """The points a lead-in introduces are what the note states, cue words or not, and the
    unit is named by the note's topic, not by one of its points."""
    found = units(body)
    assert [u["name"] for u in found] == [name]
    assert all(p in said(found[0]) for p in points)


def test_a_dated_title_does_not_name_a_topic() -> None:
    found = units(REVIEW_EN.replace("# Code review of the fee-service refactor", "# Thursday"))
    assert len(found) == 1 and found[0]["name"] != "Thursday"


# What a note measured, then what it decided from it (issue 21: a month-start review gave one
# node per measurement and one for the decision): the list of bare values is the decision's
# evidence, read first; a list with a claim of its own stays its own topics.
MEASURED_THEN_DECIDED = {
    "en": ("""# March month-start, pgb-ledger

Ana and Joe watched the 2 Mar peak.

- Peak concurrency about 2.8x a normal day.
- cl_waiting max 7, p99 310 ms.
- ledgerdb had ~180 of its 400 connections in use at the top, with 3 pgbouncers at 70 each.

Decision (Ana, Joe OK'd it): the pool goes down to 50 per pgbouncer instance. 3 × 50 = 150.
""", ("2.8x", "cl_waiting max 7", "~180 of its 400", "50 per pgbouncer")),
    "zh": ("""# 3 月月初高峰，pgb-ledger

小周和阿明看了 3/2 的高峰。

- 峰值并发大约是平时的 2.8 倍。
- cl_waiting 最高 7，p99 310 ms。
- ledgerdb 高峰时用了 400 个连接里的 180 个左右。

决定（小周，阿明同意）：连接池降到每个 pgbouncer 50。3 × 50 = 150，留有余量。
""", ("2.8 倍", "cl_waiting 最高 7", "180 个", "每个 pgbouncer 50")),
}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_values_a_decision_was_drawn_from_are_that_decision(lang: str) -> None:
    body, needles = MEASURED_THEN_DECIDED[lang]
    found = units(body)
    assert len(found) == 1, [u["name"] for u in found]
    text = said(found[0])
    assert all(n in text for n in needles), text
    # The evidence reads in the note's order, before the decision's own reasons.
    assert text.index(needles[0]) < text.index(needles[1]) < text.index(needles[2])


def test_values_after_a_decision_or_beside_claims_stay_their_own() -> None:
    # A meeting's points, one of them a decision: each agenda item is its own topic.
    body = """# Platform sync 2 Mar

- Card captures flip to async postings on Thursday, 3 producers left.
- Felix: outbox table migration merged, 2 connectors in staging.

Decision: retention on `ledger.v2` goes to 14 days.
"""
    found = units(body)
    assert len(found) >= 2, [u["name"] for u in found]
    body = """# Month-start

Decision: the pool goes down to 50 per pgbouncer instance.

- Peak concurrency about 2.8x a normal day.
"""
    assert len(units(body)) == 2


def test_who_owns_what_from_now_on_is_decided_in_chinese_too() -> None:
    # `Ines takes over the migration` is a decision; so is the thing going to its owner
    # ("... 以后归何伟维护"): a 1:1's item was dropped as a passing mention (issue 21).
    body = """# 1:1 小周 4/13

- ledger-export 的告警规则以后归小周维护。阿明要专心做 fees，交接上周做完了。
- 周三的维护窗口挪到了晚上，大家都知道了。
"""
    found = units(body)
    assert [u for u in found if "归小周维护" in str(u["summary"])], found
    assert not [u for u in found if "维护窗口" in said(u)], found


# An item that makes no claim of its own (no cue word) about the things the item next to it
# makes a claim about is that claim's detail (issue 21: "Every design doc needs a "Non-goals"
# section" after "She wants design docs to be at most four pages" was in no node; a status line
# and the decision that follows it). Two claims stay two topics; an item sharing one word (a
# system both name) with its neighbour is another agenda point.
ONE_TOPIC_TWO_ITEMS = {
    "en": ("""1:1 Maya / Joe, 4 Feb

- She wants design docs to be at most five pages. Anything longer means the scope is too big.
- Every design doc has an "Alternatives" section, she reads that first.
- She prefers not to be tagged on PRs unless they touch billing.
""", "Alternatives", "five pages", "tagged"),
    "zh": ("""# 1:1 小周 2/17

- 她希望设计文档控制在五页以内，超过了说明范围太大，要拆。
- 每个设计文档都有一节「不做什么」，她先看那一节。
- 她更喜欢在 PR 里直接评论，不喜欢开会。
""", "不做什么", "五页", "PR 里直接评论"),
}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_item_without_a_claim_is_the_detail_of_its_neighbours_claim(lang: str) -> None:
    body, detail, claim, other = ONE_TOPIC_TWO_ITEMS[lang]
    found = units(body)
    home = [u for u in found if detail in said(u)]
    assert len(home) == 1 and claim in said(home[0]), found
    assert other not in said(home[0])
    assert [u for u in found if other in said(u)]


def test_an_item_sharing_one_word_with_a_claim_is_another_agenda_point() -> None:
    body = """# API review, 10 Apr

- `GET /v1/refunds`: cursor pagination, fine. Decision: page_size max is 100 from now on.
- The refund body had `"amount": "12.50"`, sent back.
"""
    found = units(body)
    assert not [u for u in found if "12.50" in said(u) and "page_size" in said(u)], found


def test_what_remains_of_a_workstream_is_that_workstreams_point() -> None:
    # "Remaining producers to flip" after the handover of the migration (realistic dev 3/09):
    # the rest of what the item before it is about, not a topic of its own.
    body = """# Platform sync — 9 Mar

- Ana moves to the FX project next week. **Joe takes over the ledger-consumer migration** from
  Ana, including the HTTP path removal.
- Remaining producers to flip: payouts, fees. Joe wants one per week, not all at once.
- Shanghai-hours secondary on-call: approved, starting April.
"""
    found = units(body)
    home = [u for u in found if "Remaining producers" in said(u)]
    assert len(home) == 1 and "takes over" in said(home[0]), found
    assert "Shanghai" not in said(home[0])
