"""Restatements and corrections of a line of a document (issue 21), end to end through `dream
run` with the local engine: a later note that sets a new value of what a document's line says
corrects that line, even when the line names its subject only at the document's head ("the
topic"); a line said under a lead-in that says it is said again ("Reminders:", "反复提到的")
corroborates the node whose line it restates, also across English and Chinese."""

from __future__ import annotations

from pathlib import Path

from local_support import dream


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

- `orders.events.v1` 的保留时间改成 21 天：季末重放需要 12 天的历史，归档那条路太慢。王芳同意了存储成本。
- 周五中午聚餐，老地方。
"""


def test_a_new_value_of_a_document_line_that_names_only_the_documents_subject_corrects_it(
        tmp_path: Path) -> None:
    # "Retention on the topic is 5 days" names nothing: it speaks of `orders.events.v1`, which
    # the document names at its head. The sync sets a new value of it: a CORRECT of the
    # design's node, not a node of its own beside it.
    digest = dream(tmp_path, {"resource/order-events-design.md": DESIGN,
                              "daily/2026-04-09/sync.md": SYNC})
    design = citing(digest, "resource/order-events-design.md")
    assert len(design) == 1
    node = digest[design[0]]
    assert "[[daily/2026-04-09/sync.md" in node
    assert "21 days" in node and "Retention on the topic is 5 days" in node
    assert "Corrected on 2026-04-09" in node
    # The node keeps its name: it did not say the old value.
    assert "name: Order events design" in node
    assert not any("21 days" in text for path, text in digest.items() if path not in design)


def test_a_new_value_of_a_chinese_document_line_that_names_only_its_subject_corrects_it(
        tmp_path: Path) -> None:
    digest = dream(tmp_path, {"resource/订单事件设计.md": DESIGN_ZH,
                              "daily/2026-04-09/周会.md": SYNC_ZH})
    design = citing(digest, "resource/订单事件设计.md")
    assert len(design) == 1
    node = digest[design[0]]
    assert "[[daily/2026-04-09/周会.md" in node
    assert "21 天" in node and "该主题的消息保留 5 天" in node
    assert "更正" in node
    assert not any("21 天" in text for path, text in digest.items() if path not in design)
