"""Across English and Chinese, a statement that writes the identifier a node line writes, and
that the embedder places close to that line, states that line again without saying so (issue
21): an English debugging log applying a Chinese talk's setting, a newcomer's Chinese notes
writing down the English runbook's caveat. A name half the notes write (a service such as
`journal-svc`) is no such identifier, nor a level (`SEV2`); a far line or another value is no
restatement."""

from __future__ import annotations

from remelink.models.local import decide

TALK_LINES = ["建议 `session.timeout.ms=45000`，心跳设成它的三分之一左右。",
              "rebalance 一小时超过 3 次就告警。"]
RUNBOOK_LINES = ["Rollback: `kubectl argo rollouts -n journal undo journal-svc` goes back to the "
                 "previous ReplicaSet.",
                 "Caveat: `undo` does not roll back the database migration, so migrations must "
                 "be expand/contract."]


def _close(line_part: str, score: float = 0.5) -> decide.SemanticFn:
    """An embedder stand-in: `score` to the line holding `line_part`, 0.1 to the others."""
    return lambda text, others: [score if line_part in o else 0.1 for o in others]


def test_the_same_setting_across_languages_says_the_line_again_without_a_cue() -> None:
    unit = "We set `session.timeout.ms=45000` so a restarting pod is back before it's kicked out."
    again = decide.restates_line_across(unit, " ".join(TALK_LINES), TALK_LINES,
                                        _close("session.timeout"))
    assert again == (unit, TALK_LINES[0])
    head = decide.text_of("Kafka 消费者重平衡", "分享人：陈静。")
    c = decide.compare(unit, head, "\n\n".join(TALK_LINES),
                       across_semantic=_close("session.timeout"))
    assert c.restated and c.new_sentence == unit


def test_a_chinese_note_writing_the_runbooks_identifier_restates_its_line() -> None:
    unit = "回滚只回滚镜像，不回滚数据库迁移，所以迁移一定要 expand/contract。"
    assert decide.restates_line_across(unit, " ".join(RUNBOOK_LINES), RUNBOOK_LINES,
                                       _close("Caveat")) == (unit, RUNBOOK_LINES[1])


def test_without_a_cue_a_service_name_a_far_line_or_another_value_is_no_restatement() -> None:
    # A service name both write is no identifier of one claim.
    unit = "本地跑 journal-svc 的集成测试一直卡住，最后超时。"
    assert decide.restates_line_across(unit, " ".join(RUNBOOK_LINES), RUNBOOK_LINES,
                                       _close("Rollback")) is None
    # The embedder places the statement far from the line.
    unit = "We set `session.timeout.ms=45000` on the refunds consumer."
    assert decide.restates_line_across(unit, " ".join(TALK_LINES), TALK_LINES,
                                       _close("session.timeout", 0.2)) is None
    # Another value of the same setting.
    unit = "We set `session.timeout.ms=30000` on the refunds consumer."
    assert decide.restates_line_across(unit, " ".join(TALK_LINES), TALK_LINES,
                                       _close("session.timeout")) is None
