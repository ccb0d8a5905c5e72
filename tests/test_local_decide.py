"""The local engine's decisions (SPEC 7.1, 11): same / related / unrelated, and the refusal
rules: a different number, date, negation or person is never a silent merge."""

from __future__ import annotations

import pytest

from remelink.models.local import decide
from remelink.models.local import text as tx


def label(unit: str, node: str, body: str | None = None, **kw: object) -> decide.Comparison:
    return decide.compare(unit, node, node if body is None else body, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("words", [
    "rotate rotated rotation rotates rotating", "move moving movement moved",
    "create creates creation created", "retry retries retried", "process processes processing",
])
def test_strong_stem_folds_inflections(words: str) -> None:
    assert len({decide.strong_stem(w) for w in words.split()}) == 1


def test_restatement_is_the_same_abstraction() -> None:
    c = label("Every schema migration must run in the maintenance window on Tuesdays.",
              "We decided that every schema migration must run in the maintenance window on "
              "Tuesdays.")
    assert c.label == "same_abstraction"
    assert c.conflict_kind is None


def test_unrelated_statement() -> None:
    c = label("Carol prefers release notes as a bulleted changelog.",
              "Cache entries expire after ten minutes.")
    assert c.label == "unrelated"


@pytest.mark.parametrize(("unit", "node", "kind"), [
    ("Retry the export job up to 5 times before alerting.",
     "Retry the export job up to 3 times before alerting.", "number"),
    ("The billing freeze starts on 2026-07-01 for all teams.",
     "The billing freeze starts on 2026-08-15 for all teams.", "date"),
    ("Do not cache the session tokens of admin users.",
     "Cache the session tokens of admin users.", "negation"),
    ("所有对外接口的超时时间统一为 5 秒。", "所有对外接口的超时时间统一为 10 秒。", "number"),
])
def test_the_same_statement_with_another_value_is_never_merged(unit: str, node: str,
                                                               kind: str) -> None:
    """Without a word saying it corrects the node, another value is another fact: related."""
    c = label(unit, node)
    assert c.conflict_kind == kind and not c.correction
    assert c.label == "related"


@pytest.mark.parametrize(("unit", "node", "kind"), [
    ("Correction: retry the export job up to 5 times before alerting.",
     "Retry the export job up to 3 times before alerting.", "number"),
    ("The billing freeze was postponed: it starts on 2026-08-15 for all teams.",
     "The billing freeze starts on 2026-07-01 for all teams.", "date"),
    ("We no longer cache the session tokens of admin users.",
     "We cache the session tokens of admin users.", "negation"),
    ("更正：所有对外接口的超时时间统一为 10 秒。", "所有对外接口的超时时间统一为 5 秒。", "number"),
])
def test_a_stated_correction_corrects(unit: str, node: str, kind: str) -> None:
    c = label(unit, node)
    assert c.conflict_kind == kind and c.correction and c.old_sentence == node
    assert c.label == "same_abstraction"


@pytest.mark.parametrize(("unit", "node", "kind"), [
    ("The nightly export job of the billing service retries up to 5 times.",
     "Retry the export job up to 3 times before alerting the on-call engineer.", "number"),
    ("The mobile team starts its billing freeze early, on 2026-07-01, before the app review.",
     "The billing freeze starts on 2026-08-15 for all teams.", "date"),
    ("Alice prefers dark mode in the dashboard.",
     "Bob prefers dark mode in the dashboard.", "entity"),
    ("小王喜欢把设计文档写成问答形式。", "小李喜欢把设计文档写成问答形式。", "entity"),
    ("Kestrel 项目的导出服务每天凌晨备份一次数据库。",
     "Delta 项目的导出服务每天凌晨备份一次数据库。", "entity"),
])
def test_a_disagreement_without_a_correction_is_only_related(unit: str, node: str,
                                                             kind: str) -> None:
    c = label(unit, node)
    assert c.conflict_kind == kind
    assert not c.correction
    assert c.label == "related"  # linked, never merged


@pytest.mark.parametrize(("unit", "node"), [
    ("API signing keys must be rotated every 24 hours, not every 30 days as our runbook says.",
     "Rotate API signing keys. The rotation period is 30 days."),
    ("接口超时时间改为 10 秒，而不是 5 秒。", "所有对外接口的超时时间统一为 5 秒。"),
])
def test_an_explicit_correction_is_the_same_abstraction(unit: str, node: str) -> None:
    c = label(unit, node)
    assert c.conflict_kind == "number"
    assert c.correction
    assert c.old_sentence
    assert c.label == "same_abstraction"


def test_a_node_that_already_holds_the_new_value_has_nothing_to_correct() -> None:
    body = ("The rotation period is 30 days.\n\n> Corrected on 2026-06-21: keys rotate every "
            "24 hours; the earlier claim was \u201cThe rotation period is 30 days\u201d.\n")
    c = label("Rotate the signing keys every 24 hours.", "Rotate API signing keys.", body)
    assert c.conflict_kind is None


def test_shared_source_with_covered_content_is_the_same_abstraction() -> None:
    body = ("An idempotency key lets a server treat a retried request as the same request.\n\n"
            "The server stores the key with the first response for 24 hours and replays it.\n\n"
            "## Sources\n\nKeys on every money-moving POST came from "
            "[[daily/2026-06-01/payments-retry.md]].\n")
    unit = ("Every POST that creates money movement must carry an idempotency key; the server "
            "stores the key with the response for 24 hours and replays the stored response.")
    shared = label(unit, "Idempotency keys", body,
                   unit_paths=["daily/2026-06-01/payments-retry.md"])
    alone = label(unit, "Idempotency keys", body, unit_paths=["daily/2026-06-09/other.md"])
    assert shared.shared_source and shared.label == "same_abstraction"
    # From a new note too: one clause of the unit says a sentence of the node again, so the unit
    # refines that node rather than starting `every-post-...-idempotency-key.md` beside it.
    assert not alone.shared_source and alone.contains and alone.label == "same_abstraction"
    # A unit that only uses the term is not that node.
    step = label("Enqueue an export job with an idempotency key, so a retried request does not "
                 "start a second render.", "Idempotency keys", body)
    assert step.label != "same_abstraction"


def test_restatement_cue_with_the_same_actor() -> None:
    node = ("Alice prefers to see concrete progress (a percentage or a step count) for any "
            "operation that takes longer than a few seconds, instead of a spinner.")
    c = label("Alice again asked to see progress while the export runs.", node)
    assert c.restated and c.label == "same_abstraction"
    other = label("Bob again asked to see progress while the export runs.", node)
    assert other.label != "same_abstraction"


def test_best_passage_of_a_long_node() -> None:
    body = "\n".join(f"{i}. Step number {i} of an unrelated checklist about backups." for i in
                     range(1, 12)) + "\n\nPDF exports over 200 pages are queued as jobs.\n"
    c = label("PDF exports over 200 pages are queued as background jobs.", "Backups", body)
    assert c.lexical > 0.8
    assert "PDF exports" in c.passage


def test_semantic_score_blends_with_the_frozen_weight() -> None:
    c = label("A cat sits on the mat.", "A cat sits on the mat.",
              semantic=lambda text, others: [0.5 for _ in others])
    assert c.semantic == 0.5
    assert c.score == pytest.approx(decide.BLEND_WEIGHT * 0.5 + (1 - decide.BLEND_WEIGHT) * 1.0)


def test_thresholds_are_ordered() -> None:
    assert 0 < decide.T_RELATED_LEXICAL < decide.T_SAME_LEXICAL < 1
    assert 0 < decide.T_RELATED_BLENDED < decide.T_SAME_BLENDED < 1
    assert 0 < decide.BLEND_WEIGHT <= 1


def test_facts_units_and_names() -> None:
    f = tx.facts("Alice asked us to rotate keys every 24 hours, not 30 days.")
    assert ("h", 24.0) in f.quantities and "Alice" in f.entities
    assert tx.facts("Rotation must be automated.").entities == frozenset()
    assert tx.numbers_conflict(tx.facts("every 24 h"), tx.facts("every 30 days"))
    assert tx.numbers_conflict(tx.facts("every 24 hours"), tx.facts("every 1 day")) is None


def test_with_an_embedder_a_stated_correction_still_needs_only_the_subject() -> None:
    """A long unit and a short runbook title can embed apart although they share the words:
    the correction rule takes the subject from either score."""
    unit = "API signing keys must be rotated every 24 hours, not every 30 days as the runbook says."
    c = label(unit, "Rotate API signing keys.", "The rotation period is 30 days.\n",
              semantic=lambda text, others: [0.2 for _ in others])
    assert c.semantic == 0.2 and c.score < decide.T_RELATED_BLENDED
    assert c.correction and c.label == "same_abstraction"


@pytest.mark.parametrize(("a", "b"), [
    ("Egypt votes on new constitution", "Egyptians Voting on New Constitution"),
    ("Snowden sees 'no chance' for US fair trial",
     "Snowden sees no chance of a fair trial in U.S."),
    ("Tony Abbott sworn in as new Australian PM", "Tony Abbott Sworn In As Australian PM"),
])
def test_a_name_written_another_way_is_no_substitution(a: str, b: str) -> None:
    # Case, dots and a derived form name the same thing: no entity conflict.
    assert decide.entity_conflict(b, a) is None


@pytest.mark.parametrize(("a", "b"), [
    ("Indonesian president to visit UK", "Indonesian president to visit Australia"),
    ("Experiments are tracked in MLflow from December.",
     "Experiments are tracked in Neptune from December."),
    ("Alice prefers dark mode.", "Bob prefers dark mode."),
])
def test_a_name_put_in_another_s_place_is_a_substitution(a: str, b: str) -> None:
    assert decide.entity_conflict(b, a) is not None
    assert label(b, a, a).label != "same_abstraction"


def test_the_thing_a_number_counts_is_the_word_both_name() -> None:
    # "Two black dogs": `black` follows the number, but both count dogs: the same value.
    c = label("Two black dogs in the snow.", "Two dogs playing in the snow.",
              "Two dogs playing in the snow.")
    assert c.conflict_kind is None
    # Two of one thing against two of another is still another fact.
    c = label("新人要 shadow 满两周才能做 primary。", "新人要 shadow 满两轮才能做 primary。",
              "新人要 shadow 满两轮才能做 primary。")
    assert c.conflict_kind == "number" and c.label != "same_abstraction"


def test_remembered_text_functions_give_each_caller_its_own_answer() -> None:
    """named_tokens, tx.facts and tx.clean_statement are remembered per text (a run asks the
    same few hundred texts thousands of times): a caller that changes its list must not change
    what the next caller gets, in English and in Chinese."""
    for sentence in ("Moved cl_waiting from Olu to 黄志强 on 2026-06-01 with W&B.",
                     "周会决定把 cl_waiting 队列交给黄志强，上线时间 3 天。"):
        first = decide.named_tokens(sentence)
        expected = list(first)
        first.append("poisoned")
        first.clear()
        assert decide.named_tokens(sentence) == expected and expected
        found = tx.facts(sentence)
        assert found == tx.facts(sentence) and (found.entities or found.quantities)
        assert tx.clean_statement(f"- **{sentence}**") == tx.clean_statement(f"- {sentence}")
