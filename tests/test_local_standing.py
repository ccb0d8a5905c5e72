"""A later note that says a rule still stands ("per the style guide", "still", "规范里写了", "不变")
or links the earlier note, and writes an identifier the node writes, restates that node
(issue 21): it CORROBORATEs it with a Sources sentence saying what was restated. Without an
identifier in common, or with another value, a cue is no evidence of the same point."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from local_support import integrate_note, local_context

from remelink.integrate import IntegrationContext, integrate_unit
from remelink.models.local import decide
from remelink.units import Unit


@pytest.fixture
def ctx(tmp_path: Path) -> Iterator[IntegrationContext]:
    with local_context(tmp_path, "2026-04-01") as context:
        yield context


def test_a_review_applying_the_style_guide_restates_its_rule(ctx: IntegrationContext) -> None:
    made = integrate_note(ctx, "resource/api-style-guide.md", "Pagination is cursor based",
                          "Pagination is cursor based: `page_token` and `page_size`; "
                          "`page_size` max is 200, default 50.")
    again = integrate_note(ctx, "daily/2026-03-10/review.md", "Use page_token for listing",
                           "Tomasz: use `page_token` for the listing endpoint, per the "
                           "api-style-guide. Felix had offset pagination.")
    assert again.action == "CORROBORATE" and again.target == made.target
    text = (ctx.vault / str(made.target)).read_text(encoding="utf-8")
    body, sources = text.split("## Sources")
    assert "Also:" not in body and "offset" not in body
    assert "[[daily/2026-03-10/review.md]]" in sources and "restates this" in sources


def test_a_chinese_meeting_citing_the_policy_restates_its_rule(ctx: IntegrationContext) -> None:
    made = integrate_note(ctx, "resource/2026-02-02/发布规范.md", "hotfix 也要补发布单",
                          "hotfix 也要事后补发布单。")
    again = integrate_note(ctx, "daily/2026-03-17/发布周会.md", "hotfix 要发布单",
                           "何伟问 hotfix 要不要发布单：要，事后补，规范里写了。")
    assert again.action == "CORROBORATE" and again.target == made.target
    sources = (ctx.vault / str(made.target)).read_text(encoding="utf-8").split("## Sources")[1]
    assert "[[daily/2026-03-17/发布周会.md]]" in sources


_WORDS = st.sampled_from(["ledger", "payout", "fee", "journal", "recon", "card", "batch",
                          "export", "retry", "window", "quota", "token", "shard", "queue"])
_IDENT = st.builds(lambda a, b: f"{a}_{b}", _WORDS, _WORDS)
_CUES = st.sampled_from(["still", "as agreed", "per the style guide", "again", "confirmed",
                         "as usual"])
_FACTS = st.sampled_from([
    "Every request must set `{i}` before it reaches the gateway.",
    "The `{i}` setting is owned by the platform team and reviewed quarterly.",
    "Never log `{i}` in plain text; mask all but the last four characters.",
])
_OTHER = st.sampled_from([
    "Lunch moved to the ramen place on Thursdays.",
    "The espresso machine on the third floor is fixed.",
    "Sam is out next week, Ines covers the standup.",
])


@settings(max_examples=60, deadline=None)
@given(_FACTS, _IDENT, _CUES)
def test_a_cued_restatement_naming_the_nodes_identifier_is_the_same_node(
        fact: str, ident: str, cue: str) -> None:
    node = fact.format(i=ident)
    head = decide.text_of(node.split(";")[0].rstrip("."), node)
    unit = f"Reminder from the review, {cue}: `{ident}` is set as the rule says."
    c = decide.compare(unit, head, node)
    assert c.restated and c.label == "same_abstraction"


@settings(max_examples=60, deadline=None)
@given(_FACTS, _IDENT, _CUES, _OTHER)
def test_a_cued_line_without_the_nodes_identifier_is_not_the_same_node(
        fact: str, ident: str, cue: str, other: str) -> None:
    node = fact.format(i=ident)
    head = decide.text_of(node.split(";")[0].rstrip("."), node)
    unit = f"{other[:-1]}, {cue}."
    c = decide.compare(unit, head, node)
    assert not c.restated and c.label != "same_abstraction"


@settings(max_examples=40, deadline=None)
@given(_IDENT, _CUES, st.integers(2, 90), st.integers(2, 90))
def test_a_cue_never_hides_a_changed_value(ident: str, cue: str, x: int, y: int) -> None:
    node = f"`{ident}` is kept for {x} days."
    unit = f"{cue.capitalize()}: `{ident}` is kept for {y} days."
    c = decide.compare(unit, decide.text_of(f"{ident} is kept for {x} days", node), node)
    if x != y:
        assert not (c.label == "same_abstraction" and c.conflict_kind is None)
        assert c.conflict_kind == "number"


def _write(ctx: IntegrationContext, path: str, text: str) -> None:
    file = ctx.vault / path
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(text, encoding="utf-8")
    ctx.files.add(path)


def test_a_note_linking_the_earlier_note_restates_its_rule_without_a_cue(
        ctx: IntegrationContext) -> None:
    rule = "Money is an object: `amount_minor` as an integer and `currency`, never a float."
    later = "Amounts in the export: `amount_minor` as an integer plus `currency`, no floats."
    _write(ctx, "resource/api-style-guide.md", f"# API style guide\n\n- {rule}\n")
    _write(ctx, "daily/2026-03-10/review.md",
           f"# Export review\n\nSee [[resource/api-style-guide.md]].\n\n- {later}\n")
    made = integrate_note(ctx, "resource/api-style-guide.md", "Money is an object", rule)
    again = integrate_note(ctx, "daily/2026-03-10/review.md", "Amounts in the export", later)
    assert again.action == "CORROBORATE" and again.target == made.target


def test_a_runbook_from_a_linking_note_is_not_folded_into_the_linked_node(
        ctx: IntegrationContext) -> None:
    rule = "Money is an object: `amount_minor` as an integer and `currency`, never a float."
    _write(ctx, "resource/api-style-guide.md", f"# API style guide\n\n- {rule}\n")
    _write(ctx, "daily/2026-03-10/export.md",
           "# Export runbook\n\nPer [[resource/api-style-guide.md]].\n\n"
           "1. Read `amount_minor` rows.\n2. Convert with `currency`.\n"
           "3. Upload the Parquet file.\n")
    made = integrate_note(ctx, "resource/api-style-guide.md", "Money is an object", rule)
    runbook = integrate_note(ctx, "daily/2026-03-10/export.md", "Export amounts",
                             "Export `amount_minor` with its `currency`, per the style guide.",
                             bucket="procedure",
                             points=("step: Read `amount_minor` rows.",
                                     "step: Convert with `currency`.",
                                     "step: Upload the Parquet file."))
    assert runbook.action == "CREATE" and runbook.target != made.target


def test_a_restatement_merged_at_extraction_is_provenance_not_body(
        ctx: IntegrationContext) -> None:
    from remelink.models.local import extract
    from remelink.models.local import points as pt
    from remelink.vault.notes import parse_text

    first = parse_text("daily/2026-02-03/sync.md", "# Sync\n\n- Dana wants the weekly status in "
                       "#settle-status, every Friday by 16:00, not in DMs.\n")
    again = parse_text("daily/2026-03-02/sync.md", "# Sync\n\n- Dana repeated: the weekly "
                       "status goes in #settle-status, every Friday by 16:00, not in DMs.\n")
    found, _ = extract.extract([(first, {}), (again, {})])
    [unit] = [u for u in found if "settle-status" in str(u["summary"])]
    assert unit["paths"] == ["daily/2026-02-03/sync.md", "daily/2026-03-02/sync.md"]
    roles = [pt.parse(p) for p in unit["points"]]  # type: ignore[attr-defined]
    assert [(p.role, p.source) for p in roles if "repeated" in p.text] == [("again", 1)]
    for path, note in (("daily/2026-02-03/sync.md", first), ("daily/2026-03-02/sync.md", again)):
        _write(ctx, path, note.body)
    made = integrate_unit(ctx, Unit(name=str(unit["name"]), bucket=str(unit["bucket"]),
                                    summary=str(unit["summary"]),
                                    paths=tuple(unit["paths"]),  # type: ignore[arg-type]
                                    points=tuple(unit["points"])))  # type: ignore[arg-type]
    assert made.action == "CREATE", made.error
    text = (ctx.vault / str(made.target)).read_text(encoding="utf-8")
    body, sources = text.split("## Sources")
    assert "repeated" not in body and "Also" not in body
    assert "[[daily/2026-03-02/sync.md]]" in sources and "restates this" in sources


_ZH_WISH = "陈静希望 code review 在 24 小时内给第一轮反馈，哪怕只是说「今天没空，明天看」。"
_EN_AGAIN = ("First review comment within one working day, even if it's just \"will look "
             "tomorrow\". (陈静 asked for this in Feb, still not happening.)")


@pytest.mark.parametrize(("unit", "sem", "same"), [
    (_EN_AGAIN, 0.5, True),                                        # cue, name, close
    (_EN_AGAIN, 0.3, False),                                       # not close enough
    (_EN_AGAIN.replace("still ", ""), 0.5, False),                 # no cue
    (_EN_AGAIN.replace("陈静", "Felix"), 0.5, False),               # another person
])
def test_a_restatement_across_languages_by_meaning(unit: str, sem: float, same: bool) -> None:
    c = decide.compare(unit, decide.text_of("陈静希望 code review 在 24 小时", _ZH_WISH),
                       _ZH_WISH, semantic=sem)
    assert (c.restated and c.label == "same_abstraction") is same


def test_a_shared_plain_word_is_not_what_the_node_is_about() -> None:
    # `hotfix` is named by many rules: the release-window rule is not the one restated.
    unit = "何伟问 hotfix 要不要发布单：要，事后补，规范里写了。"
    window = ("常规发布窗口：每周二、周四 10:00–16:00（里斯本时间）。窗口外只允许 hotfix，"
              "而且要 EM 批准。")
    c = decide.compare(unit, decide.text_of("常规发布窗口", window), window)
    assert not c.restated and c.label != "same_abstraction"
    rule = "补充：hotfix 也要事后补发布单。"
    c = decide.compare(unit, decide.text_of("hotfix 也要事后补发布单", rule), rule)
    assert c.restated and c.label == "same_abstraction"


def test_a_decision_that_replaces_a_named_tool_corrects_the_line_naming_the_old_one(
        ctx: IntegrationContext) -> None:
    policy = ("Acknowledge a page within 10 minutes, day or night. Pages go through PagerDuty, "
              "service `settlement-platform`. Don't page people on Slack DMs.")
    made = integrate_note(ctx, "resource/2026-02-05/policy.md", "On-call policy", policy)
    fix = integrate_note(ctx, "daily/2026-03-16/tooling.md", "Pages go through incident.io",
                         "From 1 April, settle-oncall pages go through incident.io, schedule "
                         "`settle-primary`.",
                         points=("point: PagerDuty stays as a backup integration until 30 "
                                 "April, then it's switched off.",))
    assert fix.action == "CORRECT" and fix.target == made.target
    text = (ctx.vault / str(made.target)).read_text(encoding="utf-8")
    assert "the earlier claim was \u201cPages go through PagerDuty" in text
    assert "name: On-call policy" in text  # the node keeps its name
    assert "PagerDuty stays as a backup integration until 30 April" in text  # kept, not dropped


@pytest.mark.parametrize("unit", [
    "Pages go through incident.io, service `settlement-platform`.",     # no decision: differs
    "From 1 April, the status page is hosted on statuspage.io.",        # another frame
])
def test_another_tool_without_a_decision_on_the_same_frame_is_no_correction(unit: str) -> None:
    node = "Pages go through PagerDuty, service `settlement-platform`."
    assert decide.replaced(unit, [node], decide.default_idf) is None


@pytest.mark.parametrize("unit", [
    # A document: the decision is one statement; the systems of its other lines decide nothing.
    "Install the CLI with `npm install -g foam-cli`. From now on we use Foam for the wiki. "
    "Run `foam lint path/to/workspace` to check links.",
    # Code names systems; it decides nothing.
    "Decision: keep it.\n\n```bash\nfoam lint path/to/workspace\n```",
])
def test_systems_outside_the_deciding_statement_correct_nothing(unit: str) -> None:
    node = "Run `markdownlint docs/` to check links before a release."
    assert decide.replaced(unit, [node], decide.default_idf) is None
    assert decide.replaced("From 1 April, pages go through incident.io, service "
                           "`settlement-platform`.",
                           ["Pages go through PagerDuty, service `settlement-platform`."],
                           decide.default_idf) is not None


def test_notes_are_extracted_in_the_order_they_were_written() -> None:
    from remelink.dream.extract import _written
    from remelink.vault.notes import parse_text

    paths = ["daily/2026-03-16/tooling.md", "resource/2026-02-05/policy.md",
             "resource/api-style-guide.md", "resource/notes/dated.md"]
    notes = {p: parse_text(p, "# x\n\nbody\n") for p in paths}
    notes["resource/notes/dated.md"] = parse_text("resource/notes/dated.md",
                                                  "---\ndate: 2026-03-01\n---\n# x\n\nbody\n")
    ordered = sorted(((p, notes[p], "") for p in paths), key=_written)
    assert [p for p, _, _ in ordered] == ["resource/api-style-guide.md",
                                          "resource/2026-02-05/policy.md",
                                          "resource/notes/dated.md",
                                          "daily/2026-03-16/tooling.md"]


def test_a_link_label_carries_no_code_of_the_other_nodes_name() -> None:
    from remelink.codeguard import invented
    from remelink.models.local import write

    sentence = write.related_sentence(
        [("digest/procedure/gpu-quota.md", "GPU quota policy (shared ML cluster `mlk8s`)")], "en")
    assert "`" not in sentence and "mlk8s" in sentence
    # The code guard finds no code in it that the unit's notes would have to hold.
    assert invented(sentence, [], ["GPU rules changed"]) == []


def test_a_chinese_line_per_the_rules_restates_an_english_policy_line() -> None:
    """Issue 21e: across languages a standing cue ("按规定") and two things the Chinese line
    names (`canary`, `rollback`) that one English sentence says are the point said again; the
    counted thing is named in two languages ("两次" / "two"), so only the value is compared."""
    head = decide.text_of("Release policy (payments)", "Applies to every payments service.")
    body = ("Applies to every payments service.\n\n- Deploys go out on Tuesdays only.\n"
            "- A canary that fails two checks triggers a rollback at once.\n")
    unit = "王磊说这次按规定，canary 连续两次检查失败就直接 rollback。"
    c = decide.compare(unit, head, body)
    assert c.restated and c.label == "same_abstraction"
    # One shared word is a topic, not the point; another value is no restatement.
    assert not decide.compare("王磊说按规定 canary 要看监控。", head, body).restated
    assert not decide.compare("王磊说这次按规定，canary 连续三次检查失败就直接 rollback。",
                              head, body).restated


def test_numbers_across_languages_compare_their_values() -> None:
    """"五个工作日" and "5 working days" count one thing in two languages; "3 小时" and "3 天"
    in one language count two things."""
    from remelink.models.local import text as tx

    def conflict(a: str, b: str) -> tuple[str, str] | None:
        return decide._numbers_conflict(tx.facts(a), tx.facts(b), a, b)

    node = "A postmortem is due within 5 working days."
    assert conflict("复盘文档五个工作日内完成。", node) is None
    assert conflict("复盘文档七个工作日内完成。", node) is not None
    assert conflict("gc_grace_seconds 改成 3 天。", "gc_grace_seconds 改成 3 小时。") is not None
