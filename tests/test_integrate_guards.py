"""The loop's mistakes and the guards of SPEC §7.2, through `integrate_unit` with strict
scripts: every mistake comes back to the model as a message it can act on (asserted with
`expect`), a unit that never gets it right fails and leaves the vault byte-for-byte unchanged,
and a dry run returns the diff without writing or touching the index."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from conftest import tree_bytes
from integrate_support import TermIndex, context, copy_vault, golden_check, tool_results

from remelink.config import load_settings
from remelink.integrate import integrate_unit
from remelink.models.scripted import ScriptedModel
from remelink.units import Unit

NODE = "digest/wiki/idempotency-keys.md"
OLD_SOURCE = "[[daily/2026-06-01/payments-retry.md]]."
NEW_PATH = "daily/2026-06-23/checkout-retries.md"
UNIT = Unit(name="Idempotency keys on every charge", bucket="wiki",
            summary="A second duplicate charge shows every money-moving POST needs a key.",
            paths=(NEW_PATH,))
GOOD_EDIT: dict[str, Any] = {"name": "edit", "arguments": {
    "path": NODE, "old": OLD_SOURCE,
    "new": f"{OLD_SOURCE} The checkout incident in [[{NEW_PATH}]] confirms the rule."}}


def receipt(action: str = "CORROBORATE", target: str = NODE, note: str = "corroborated") -> str:
    return json.dumps({"action": action, "target_path": target, "note": note})


def run(vault: Path, steps: list[Any], unit: Unit = UNIT, *, dry_run: bool = False,
        index: TermIndex | None = None, **dream: Any) -> tuple[Any, ScriptedModel, TermIndex]:
    model = ScriptedModel(steps)
    index = index or TermIndex(vault)
    settings = load_settings(vault, env={})
    if dream:
        settings = replace(settings, auto_dream=replace(settings.auto_dream, **dream))
    result = integrate_unit(context(vault, model, index=index, settings=settings), unit,
                            dry_run=dry_run)
    assert not model.unused, f"{model.unused} step(s) unused; unit error: {result.error}"
    model.assert_done()
    return result, model, index


# -- tool mistakes are fed back, then the unit succeeds -----------------------------------

MISTAKES = {
    "unknown_tool": (
        {"name": "delete_node", "arguments": {"path": NODE}},
        "Error: unknown tool 'delete_node'; available tools: node_search, read, "
        "frontmatter_read, write, edit, frontmatter_update"),
    "bad_json": (
        {"name": "read", "arguments": '{"path": "digest/wiki/idempotency-keys.md"'},
        "Error: arguments are not valid JSON (Expecting ',' delimiter at character 42); "
        "send a JSON object"),
    "json_not_an_object": (
        {"name": "read", "arguments": '["digest/wiki/idempotency-keys.md"]'},
        "Error: arguments must be a JSON object, got list"),
    "schema_out_of_range": (
        {"name": "node_search", "arguments": {"query": "idempotency", "limit": 500}},
        "Error: invalid arguments for node_search: limit: Input should be less than or "
        "equal to 100"),
    "schema_missing_field": (
        {"name": "edit", "arguments": {"path": NODE, "old": "x"}},
        "Error: invalid arguments for edit: new: Field required"),
    "schema_extra_field": (
        {"name": "read", "arguments": {"path": NODE, "mode": "raw"}},
        "Error: invalid arguments for read: mode: Extra inputs are not permitted"),
    "schema_bad_bucket": (
        {"name": "node_search", "arguments": {"query": "keys", "bucket": "notes"}},
        "Error: invalid arguments for node_search: bucket: Input should be 'procedure', "
        "'personal' or 'wiki'"),
    "edit_old_not_found": (
        {"name": "edit", "arguments": {"path": NODE, "old": "no such text", "new": "x"}},
        "Error: old text not found in the body of digest/wiki/idempotency-keys.md; read the "
        "node and copy the text exactly"),
    "edit_old_ambiguous": (
        {"name": "edit", "arguments": {"path": NODE, "old": "request", "new": "call"}},
        "Error: old text occurs 2 times in digest/wiki/idempotency-keys.md; include more "
        "context so it occurs exactly once"),
    "edit_drops_a_link": (
        {"name": "edit", "arguments": {"path": NODE, "old": OLD_SOURCE,
                                       "new": "the payments note."}},
        "Error: refused, nothing staged: an update keeps every line, wikilink and Sources "
        "sentence digest/wiki/idempotency-keys.md had, in order; it only inserts. This call "
        "would lose:\n- body line 10 would be lost: \"[[daily/2026-06-01/payments-retry.md]].\"\n"
        "- it would remove wikilink(s) [[daily/2026-06-01/payments-retry.md]]\nPut these back "
        "word for word"),
    "write_drops_a_sources_sentence": (
        {"name": "write", "arguments": {
            "path": NODE, "name": "Idempotency keys", "description": "Retry-safe requests.",
            "content": "An idempotency key makes a retried request safe.\n\n## Sources\n\n"
                       "Keys were motivated by [[daily/2026-06-01/payments-retry.md]] and "
                       f"confirmed by [[{NEW_PATH}]].\n"}},
        # The rewrite of the issue: the 24-hours paragraph was dropped, and a whole-file write
        # is refused with every lost line in full.
        "- body line 4 would be lost: \"The server stores the key with the first response for "
        "24 hours and replays that response when\"\n- body line 5 would be lost: \"the key "
        "comes back.\"\n"),
    "read_missing_note": (
        {"name": "read", "arguments": {"path": "digest/wiki/nope"}},
        "Error: digest/wiki/nope.md does not exist (use node_search to find existing nodes)"),
}


@pytest.mark.parametrize("mistake", list(MISTAKES))
def test_tool_mistake_is_fed_back_and_the_unit_still_lands(tmp_path: Path,
                                                          mistake: str) -> None:
    call, message = MISTAKES[mistake]
    vault = copy_vault(tmp_path)
    steps = [
        {"expect": "did not send an idempotency key", "tool_calls": [call]},
        {"expect": message, "tool_calls": [GOOD_EDIT]},
        {"expect": "Staged edit of digest/wiki/idempotency-keys.md", "text": receipt()},
    ]
    result, model, _ = run(vault, steps)
    assert result.ok, result.error
    feedback = tool_results(model)[0]
    # One line, or a refusal whose items are whole lines of their own.
    assert feedback.startswith("Error: ")
    assert "\n" not in feedback or all(ln.startswith("- ") for ln in feedback.split("\n")[1:-1])
    # The mistake changed nothing: the node is exactly what the good edit alone produces.
    golden_check((vault / NODE).read_bytes(), "corroborate_min.md")


def test_refused_write_leaves_the_staged_node_as_it_was(tmp_path: Path) -> None:
    """A refused edit after a good one does not undo or corrupt the staged text."""
    vault = copy_vault(tmp_path)
    steps = [
        {"tool_calls": [GOOD_EDIT]},
        {"expect": "Staged edit", "tool_calls": [MISTAKES["edit_drops_a_link"][0]]},
        {"expect": "Error: refused", "text": receipt()},
    ]
    result, _, _ = run(vault, steps)
    assert result.ok
    golden_check((vault / NODE).read_bytes(), "corroborate_min.md")


# -- receipts -------------------------------------------------------------------------------

def test_no_receipt_gets_feedback_then_the_receipt_is_accepted(tmp_path: Path) -> None:
    vault = copy_vault(tmp_path)
    steps = [
        {"tool_calls": [GOOD_EDIT]},
        {"expect": "Staged edit", "text": "I added the checkout incident to the node."},
        {"expect": ["Your receipt was not accepted", "no receipt found"], "text": receipt()},
    ]
    result, _, _ = run(vault, steps)
    assert result.ok and result.repairs == 1 and result.action == "CORROBORATE"


RECEIPT_MISTAKES = {
    "update_of_missing_node": (
        [], receipt("REFINE", "digest/wiki/nope.md"),
        "digest/wiki/nope.md does not exist; an update targets an existing node"),
    "create_without_write": (
        [], receipt("CREATE", "digest/wiki/checkout-keys.md"),
        "the receipt says CREATE but nothing was written; write the node first"),
    "create_over_existing_node": (
        [GOOD_EDIT], receipt("CREATE"),
        "digest/wiki/idempotency-keys.md existed before this unit, so the action is an update "
        "(CORROBORATE, REFINE or CORRECT), not CREATE"),
    "target_differs_from_written_path": (
        [GOOD_EDIT], receipt(target="digest/wiki/progress-feedback.md"),
        "target_path is digest/wiki/progress-feedback.md, but this unit changed "
        "digest/wiki/idempotency-keys.md; the receipt names the node you wrote"),
    "unknown_action": (
        [GOOD_EDIT], receipt("MERGE"),
        "action must be one of CREATE, CORROBORATE, REFINE, CORRECT, got 'MERGE'"),
    "raw_note_as_target": (
        [], receipt(target=NEW_PATH),
        "target_path: daily/2026-06-23/checkout-retries.md: writes go only to "
        "digest/<bucket>/<slug>.md"),
}


@pytest.mark.parametrize("case", list(RECEIPT_MISTAKES))
def test_receipt_mistake_is_fed_back(tmp_path: Path, case: str) -> None:
    calls, bad, message = RECEIPT_MISTAKES[case]
    vault = copy_vault(tmp_path)
    steps: list[dict[str, Any]] = [{"tool_calls": calls}] if calls else []
    steps += [
        {"text": bad},
        {"expect": ["Your receipt was not accepted", message],
         "tool_calls": [] if calls else [GOOD_EDIT],
         "text": receipt() if calls else None},
    ]
    if not calls:
        steps.append({"expect": "Staged edit", "text": receipt()})
    else:
        steps[-1].pop("tool_calls")
    result, _, _ = run(vault, steps)
    assert result.ok, result.error
    assert result.repairs == 1
    golden_check((vault / NODE).read_bytes(), "corroborate_min.md")


def test_an_update_that_cites_nothing_new_blames_the_node_not_the_receipt(
        tmp_path: Path) -> None:
    vault = copy_vault(tmp_path)
    steps: list[dict[str, Any]] = [
        {"text": receipt()},
        {"expect": ["The receipt is fine, but the node digest/wiki/idempotency-keys.md cannot "
                    "be accepted yet", "## Sources does not cite "
                    "[[daily/2026-06-23/checkout-retries.md]]", "Fix digest/wiki/"],
         "tool_calls": [GOOD_EDIT]},
        {"expect": "Staged edit", "text": receipt()},
    ]
    result, _, _ = run(vault, steps)
    assert result.ok and result.repairs == 1
    golden_check((vault / NODE).read_bytes(), "corroborate_min.md")


def test_a_receipt_mistake_after_a_good_edit_says_to_keep_the_node(tmp_path: Path) -> None:
    """The issue's loop: blamed for a receipt mistake, a model repeated its edit and put the
    same Sources sentence in twice. Now the feedback says the staged node stays, and a repeated
    edit is refused, nothing staged."""
    vault = copy_vault(tmp_path)
    again = {"name": "edit", "arguments": {
        "path": NODE, "old": f"[[{NEW_PATH}]] confirms the rule.",
        "new": f"[[{NEW_PATH}]] confirms the rule. The checkout incident in [[{NEW_PATH}]] "
               "confirms the rule."}}
    steps: list[dict[str, Any]] = [
        {"tool_calls": [GOOD_EDIT]},
        {"expect": "Staged edit", "text": receipt("UPDATE")},
        {"expect": ["Your receipt was not accepted", "got 'UPDATE'",
                    "The node you staged is kept as it is: do not edit it again"],
         "tool_calls": [again]},
        {"expect": ["Error: refused, nothing staged: ## Sources of digest/wiki/idempotency-keys.md "
                    "would hold the same sentence twice"], "text": receipt()},
    ]
    result, _, _ = run(vault, steps)
    assert result.ok and result.repairs == 1
    golden_check((vault / NODE).read_bytes(), "corroborate_min.md")


# -- failures leave the vault exactly as it was ----------------------------------------

BARE = "## Sources\n\n- [[daily/2026-06-20/pdf-export-timeout.md]]\n"
EXPORT_UNIT = Unit(name="Queue long exports", bucket="procedure",
                   summary="Long exports run as queued jobs.",
                   paths=("daily/2026-06-20/pdf-export-timeout.md",))
WRITE_BARE: dict[str, Any] = {"name": "write", "arguments": {
    "path": "digest/procedure/queue-long-exports.md", "name": "Queue long exports",
    "description": "Run long exports as queued jobs.",
    "content": f"Use this when an export outlasts the gateway timeout.\n\n{BARE}"}}


def test_bare_source_link_is_repaired_after_feedback(tmp_path: Path) -> None:
    vault = copy_vault(tmp_path)
    target = "digest/procedure/queue-long-exports.md"
    steps = [
        {"tool_calls": [WRITE_BARE]},
        # The write's answer names the problem at once; this model sends its receipt anyway.
        {"expect": ["Staged CREATE", "Not acceptable yet", "body line 5: bare-source-link",
                    '"- [[daily/2026-06-20/pdf-export-timeout.md]]"'],
         "text": receipt("CREATE", target)},
        {"expect": ["The receipt is fine, but the node digest/procedure/queue-long-exports.md "
                    "cannot be accepted yet", "body line 5: bare-source-link: bare link line in "
                    "Sources: say in a sentence what this source supports: "
                    '"- [[daily/2026-06-20/pdf-export-timeout.md]]"'],
         "tool_calls": [{"name": "edit", "arguments": {
             "path": target, "old": "- [[daily/2026-06-20/pdf-export-timeout.md]]",
             "new": "The timeout and the decision to queue exports are recorded in "
                    "[[daily/2026-06-20/pdf-export-timeout.md]]."}}]},
        {"expect": ["Staged edit", "Checked: it passes every check"],
         "text": receipt("CREATE", target)},
    ]
    result, _, _ = run(vault, steps, EXPORT_UNIT)
    assert result.ok and result.repairs == 1
    assert (vault / target).read_text(encoding="utf-8").endswith(
        "## Sources\n\nThe timeout and the decision to queue exports are recorded in "
        "[[daily/2026-06-20/pdf-export-timeout.md]].\n")


def test_bare_source_link_never_repaired_fails_and_changes_nothing(tmp_path: Path) -> None:
    vault = copy_vault(tmp_path)
    before = tree_bytes(vault)
    target = "digest/procedure/queue-long-exports.md"
    steps: list[dict[str, Any]] = [{"tool_calls": [WRITE_BARE]},
                                   {"expect": "Staged CREATE", "text": receipt("CREATE", target)}]
    # The default budget is three repair turns; the model answers the same each time.
    steps += [{"expect": "bare-source-link", "text": receipt("CREATE", target)}] * 3
    result, _, index = run(vault, steps, EXPORT_UNIT)
    assert result.status == "failed"
    assert result.error == (
        "answer not accepted after 3 repair turn(s): body line 5: bare-source-link: bare link "
        "line in Sources: say in a sentence what this source supports: "
        '"- [[daily/2026-06-20/pdf-export-timeout.md]]"')
    # The turns it cost are counted, though the unit failed.
    assert (result.steps, result.repairs) == (5, 3)
    assert result.target == target
    assert tree_bytes(vault) == before
    assert index.updates == []


def test_step_limit_fails_the_unit(tmp_path: Path) -> None:
    vault = copy_vault(tmp_path)
    before = tree_bytes(vault)
    search = {"name": "node_search", "arguments": {"query": "idempotency"}}
    steps = [{"tool_calls": [search]}, {"expect": "node(s), best first", "tool_calls": [GOOD_EDIT]},
             {"expect": "Staged edit", "tool_calls": [search]}]
    result, _, index = run(vault, steps, max_steps=3)
    assert result.status == "failed"
    assert result.error == "step limit reached (3 model turns) without an accepted answer"
    assert tree_bytes(vault) == before and index.updates == []


def test_model_failure_mid_unit_changes_nothing(tmp_path: Path) -> None:
    """A script that ends early is a ModelError: infrastructure, not a tool mistake."""
    vault = copy_vault(tmp_path)
    before = tree_bytes(vault)
    model = ScriptedModel([{"tool_calls": [GOOD_EDIT]}])
    result = integrate_unit(context(vault, model), UNIT)
    assert result.status == "failed" and result.infrastructure
    assert "unexpected call #2" in (result.error or "")
    assert tree_bytes(vault) == before


# -- the one-target and create rules -------------------------------------------------------

def test_second_target_is_refused(tmp_path: Path) -> None:
    vault = copy_vault(tmp_path)
    steps = [
        {"tool_calls": [GOOD_EDIT]},
        {"expect": "Staged edit", "tool_calls": [{"name": "edit", "arguments": {
            "path": "digest/wiki/progress-feedback.md", "old": "A spinner alone",
            "new": "A spinner by itself"}}]},
        {"expect": "Error: this unit already changes digest/wiki/idempotency-keys.md; one unit "
                   "changes exactly one node. Put everything into "
                   "digest/wiki/idempotency-keys.md (link digest/wiki/progress-feedback.md in "
                   "its prose if related)",
         "text": receipt()},
    ]
    before = tree_bytes(copy_vault(tmp_path / "copy"))
    result, _, _ = run(vault, steps)
    assert result.ok
    after = tree_bytes(vault)
    assert after["digest/wiki/progress-feedback.md"] == \
        before["digest/wiki/progress-feedback.md"]


def test_create_in_the_wrong_bucket_is_refused(tmp_path: Path) -> None:
    vault = copy_vault(tmp_path)
    wrong = dict(WRITE_BARE["arguments"], path="digest/wiki/queue-long-exports.md")
    steps = [
        {"tool_calls": [{"name": "write", "arguments": wrong}]},
        {"expect": "Error: digest/wiki/queue-long-exports.md does not exist, and a new node goes "
                   "to the unit's own bucket (digest/procedure/)",
         "text": receipt("CREATE", "digest/wiki/queue-long-exports.md")},
        {"expect": "nothing was written", "tool_calls": [{"name": "write", "arguments": dict(
            wrong, path="digest/procedure/Queue Long Exports.md")}]},
        {"expect": "new node file names are slugs; use "
                   "digest/procedure/queue-long-exports.md",
         "text": "I give up."},
        {"expect": "no receipt found", "text": "Still nothing."},
        {"expect": "no receipt found", "text": "Nothing."},
    ]
    result, _, _ = run(vault, steps, EXPORT_UNIT)
    assert result.status == "failed"
    assert not (vault / "digest/wiki/queue-long-exports.md").exists()


def test_frontmatter_update_cannot_empty_the_name(tmp_path: Path) -> None:
    vault = copy_vault(tmp_path)
    steps = [
        {"tool_calls": [{"name": "frontmatter_update",
                         "arguments": {"path": NODE, "metadata": {"name": "  "}}}]},
        {"expect": "Error: name may change but not become empty", "tool_calls": [
            {"name": "frontmatter_update",
             "arguments": {"path": NODE, "metadata": {"description": None}}}]},
        {"expect": "Error: description may change but not become empty",
         "tool_calls": [GOOD_EDIT]},
        {"expect": "Staged edit", "text": receipt()},
    ]
    result, _, _ = run(vault, steps)
    assert result.ok
    golden_check((vault / NODE).read_bytes(), "corroborate_min.md")


# -- dry run ---------------------------------------------------------------------------------

def test_dry_run_returns_the_diff_and_writes_nothing(tmp_path: Path) -> None:
    vault = copy_vault(tmp_path)
    before = tree_bytes(vault)
    steps = [{"tool_calls": [GOOD_EDIT]}, {"expect": "Staged edit", "text": receipt()}]
    result, _, index = run(vault, steps, dry_run=True)
    assert result.ok and result.changed
    assert tree_bytes(vault) == before
    assert index.updates == []
    assert result.diff == (
        "--- a/digest/wiki/idempotency-keys.md\n"
        "+++ b/digest/wiki/idempotency-keys.md\n"
        "@@ -13,4 +13,4 @@\n"
        " ## Sources\n"
        " \n"
        " The duplicate-charge incident that motivated keys on every money-moving POST is "
        "recorded in\n"
        "-[[daily/2026-06-01/payments-retry.md]].\n"
        "+[[daily/2026-06-01/payments-retry.md]]. The checkout incident in "
        "[[daily/2026-06-23/checkout-retries.md]] confirms the rule.\n")


# -- CRLF ------------------------------------------------------------------------------------

def test_crlf_node_keeps_crlf_after_an_edit(tmp_path: Path) -> None:
    vault = copy_vault(tmp_path)
    path = vault / NODE
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    steps = [
        {"tool_calls": [{"name": "edit", "arguments": {
            "path": NODE, "old": "for 24 hours and replays that response when\nthe key",
            "new": "for 24 hours and replays that response\nwhen the key"}}]},
        {"expect": "Staged edit", "tool_calls": [GOOD_EDIT]},
        {"expect": "Staged edit", "tool_calls": [{"name": "frontmatter_update", "arguments": {
            "path": NODE, "metadata": {"memory_tags": ["payments"]}}}]},
        {"expect": "Staged frontmatter update", "text": receipt()},
    ]
    result, _, _ = run(vault, steps)
    assert result.ok, result.error
    data = path.read_bytes()
    assert b"\r\n" in data and data.count(b"\n") == data.count(b"\r\n")
    golden_check(data, "crlf_edit.md")


# -- an update is judged on what it changes ---------------------------------------------------

def _with_a_dangling_link(vault: Path) -> str:
    """Give the node a link to a note renamed since (the additive rule forbids dropping it)."""
    path = vault / NODE
    text = path.read_text(encoding="utf-8")
    dangling = "The history is in [[digest/wiki/renamed-away.md]]."
    path.write_text(text.replace("\n## Sources", f"\n{dangling}\n\n## Sources", 1),
                    encoding="utf-8")
    return dangling


def test_an_update_keeps_a_problem_the_node_already_had(tmp_path: Path) -> None:
    vault = copy_vault(tmp_path)
    dangling = _with_a_dangling_link(vault)
    steps = [{"tool_calls": [GOOD_EDIT]},
             {"expect": "Staged edit of digest/wiki/idempotency-keys.md", "text": receipt()}]
    result, _, _ = run(vault, steps)
    assert result.ok and result.repairs == 0, result.error
    text = (vault / NODE).read_text(encoding="utf-8")
    assert dangling in text and f"[[{NEW_PATH}]]" in text
    assert len(result.warnings) == 1
    assert result.warnings[0].startswith("kept a problem the node already had (line ")
    assert "broken-link: [[digest/wiki/renamed-away.md]]: target does not exist" in \
        result.warnings[0]


def test_an_update_may_not_add_a_problem_of_the_same_kind(tmp_path: Path) -> None:
    vault = copy_vault(tmp_path)
    _with_a_dangling_link(vault)
    before = tree_bytes(vault)
    bad_edit = {"name": "edit", "arguments": {
        "path": NODE, "old": OLD_SOURCE,
        "new": f"{OLD_SOURCE} The checkout incident in [[{NEW_PATH}]] confirms the rule, as "
               "[[digest/wiki/never-written.md]] says."}}
    steps: list[dict[str, Any]] = [
        {"tool_calls": [bad_edit]},
        {"expect": "Staged edit of digest/wiki/idempotency-keys.md", "text": receipt()}]
    steps += [{"expect": "never-written.md]]: target does not exist", "text": receipt()}] * 3
    result, _, _ = run(vault, steps)
    assert result.status == "failed"
    assert "never-written.md" in (result.error or "")
    assert "renamed-away.md" not in (result.error or "")
    assert tree_bytes(vault) == before
