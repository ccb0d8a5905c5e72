"""Edit-aware re-integration (SPEC §9.3): an edited note corrects the node its old unit went
into, and never creates a second one.

Each case starts from the same dreamt vault (tests/fixtures/dream/edits/), edits one note and
dreams again; the digest is compared with tests/golden/dream/edits/<case>/ and the run with
what a person expects: a changed number, date or name is a dated CORRECT of the old node (old
claim kept visible, name and description stating the current value), a removed fact is
reported and kept, an added fact is integrated as usual, a whitespace edit changes nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from dream_support import (
    audit_lines,
    copy_fixture,
    golden_tree,
    notes_bytes,
    run,
    settings_of,
    state_of,
)

from remelink.dream.run import status
from remelink.models.scripted import ScriptedModel
from remelink.render import dream_text
from remelink.vault import frontmatter
from remelink.vault.notes import parse_text

ZH = "daily/2026-06-20/代码评审.md"
KEYS = "daily/2026-06-21/key-rotation.md"
BILLING = "daily/2026-06-22/billing.md"
ZH_NODE = "digest/wiki/我们决定代码评审时每个-pr-不超过-300-行.md"
KEYS_NODE = "digest/procedure/rotate-the-api-keys.md"
BILLING_NODE = "digest/wiki/the-billing-launch-date-is-2026-07-01.md"
ALICE_NODE = "digest/personal/alice-prefers-written-rollout-plans-for-every-database-change.md"
EDIT_DAY = "2026-06-30"


def replace_in(rel: str, old: str, new: str) -> Callable[[Path], None]:
    def edit(vault: Path) -> None:
        path = vault / rel
        text = path.read_text(encoding="utf-8")
        assert old in text
        path.write_text(text.replace(old, new), encoding="utf-8")
    return edit


def append_to(rel: str, text: str) -> Callable[[Path], None]:
    def edit(vault: Path) -> None:
        with (vault / rel).open("a", encoding="utf-8") as f:
            f.write(text)
    return edit


def whitespace(vault: Path) -> None:
    path = vault / BILLING
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("\n## ", "\n\n\n## ").replace(".\n", ".  \n") + "\n\n",
                    encoding="utf-8")


def meta(vault: Path, rel: str) -> dict[str, object]:
    return dict(frontmatter.load(parse_text(rel, (vault / rel).read_text(encoding="utf-8"))))


@pytest.fixture
def dreamt(tmp_path: Path) -> Path:
    vault = copy_fixture(tmp_path, "edits")
    first = run(vault)
    assert first.ok, first.errors
    assert sorted(first.created) == sorted([ZH_NODE, KEYS_NODE, BILLING_NODE, ALICE_NODE])
    return vault


CASES = {
    "number": (replace_in(ZH, "300 行", "200 行"), ZH_NODE, ("300",), "200 行"),
    "date": (replace_in(BILLING, "2026-07-01", "2026-07-15"), BILLING_NODE, ("2026-07-01",),
             "2026-07-15"),
    "howto": (replace_in(KEYS, "every 90 days", "every 60 days"), KEYS_NODE, (), "60 days"),
    "name": (replace_in(BILLING, "Alice prefers", "Bob prefers"), ALICE_NODE, ("Alice",),
             "Bob prefers"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_changed_fact_corrects_its_own_node(dreamt: Path, case: str) -> None:
    edit, node, stale, current = CASES[case]
    nodes_before = set(notes_bytes(dreamt, ("digest",)))
    body_before = (dreamt / node).read_text(encoding="utf-8")
    edit(dreamt)

    report = run(dreamt, today=EDIT_DAY)

    assert report.ok, report.errors
    done = [u for u in report.units if u.status == "done"]
    assert [(u.action, u.target) for u in done] == [("CORRECT", node)]
    assert set(notes_bytes(dreamt, ("digest",))) == nodes_before  # no new node, no -2.md
    text = (dreamt / node).read_text(encoding="utf-8")
    assert current in text and EDIT_DAY in text
    # The old claim stays visible: every line of the old body is still there.
    old_lines = [ln for ln in body_before.split("---", 2)[2].splitlines() if ln.strip()]
    assert all(ln in text for ln in old_lines)
    # node-search shows the current value: the name and description no longer state the old.
    head = meta(dreamt, node)
    for value in stale:
        assert value not in f"{head['name']} {head['description']}", head
    rec = next(r for r in state_of(dreamt)["units"].values() if r.get("revises"))
    assert rec["revises"]["target"] == node and rec["revises"]["changed"] is True
    golden_tree(notes_bytes(dreamt, ("digest",)), f"dream/edits/{case}")
    again = run(dreamt, today=EDIT_DAY)
    assert not [u for u in again.units if u.status == "done"]  # a rerun is a no-op


def test_a_removed_fact_is_reported_and_kept(dreamt: Path) -> None:
    before = notes_bytes(dreamt, ("digest",))
    replace_in(BILLING, "- Alice prefers written rollout plans for every database change.\n",
               "")(dreamt)

    report = run(dreamt, today=EDIT_DAY)

    assert report.ok and not [u for u in report.units if u.status == "done"]
    assert notes_bytes(dreamt, ("digest",)) == before  # nodes never lose content
    assert [(u["path"], u["target"]) for u in report.unstated] == [(BILLING, ALICE_NODE)]
    assert "no longer stated by their edited notes" in dream_text(report, 0.1)
    [line] = [a for a in audit_lines(dreamt) if a["status"] == "unstated"]
    assert (line["path"], line["target"]) == (BILLING, ALICE_NODE)
    golden_tree(notes_bytes(dreamt, ("digest",)), "dream/edits/removed")


def test_an_added_fact_integrates_as_usual(dreamt: Path) -> None:
    nodes_before = set(notes_bytes(dreamt, ("digest",)))
    append_to(BILLING, "\n## Rules\n- Invoices must never be sent before the customer "
                       "confirms the billing address.\n")(dreamt)

    report = run(dreamt, today=EDIT_DAY)

    assert report.ok and not report.unstated
    done = [u for u in report.units if u.status == "done"]
    assert [u.action for u in done] == ["CREATE"] and "invoices" in (done[0].target or "")
    assert set(notes_bytes(dreamt, ("digest",))) == nodes_before | {done[0].target}
    golden_tree(notes_bytes(dreamt, ("digest",)), "dream/edits/added")


def test_a_reworded_fact_updates_its_node_and_never_duplicates_it(dreamt: Path) -> None:
    nodes_before = set(notes_bytes(dreamt, ("digest",)))
    replace_in(BILLING, "Alice prefers written rollout plans for every database change.",
               "Alice prefers a written rollout plan for every single database change.")(dreamt)

    report = run(dreamt, today=EDIT_DAY)

    assert report.ok and not report.unstated
    done = [u for u in report.units if u.status == "done"]
    assert [u.target for u in done] == [ALICE_NODE] and done[0].action != "CORRECT"
    assert set(notes_bytes(dreamt, ("digest",))) == nodes_before
    rec = next(r for r in state_of(dreamt)["units"].values() if r.get("revises"))
    assert rec["revises"]["changed"] is False


def test_a_whitespace_edit_changes_nothing(dreamt: Path) -> None:
    before = notes_bytes(dreamt, ("digest",))
    units_before = set(state_of(dreamt)["units"])
    whitespace(dreamt)

    report = run(dreamt, today=EDIT_DAY)

    assert report.ok and report.files_changed == 1
    assert not report.unstated and not [u for u in report.units if u.status == "done"]
    assert set(state_of(dreamt)["units"]) == units_before  # the same units, the same ids
    assert notes_bytes(dreamt, ("digest",)) == before
    assert status(dreamt, settings_of(dreamt)).ok


# -- the LLM path ---------------------------------------------------------------------------------
def test_an_llm_is_told_which_node_to_correct_and_held_to_it(dreamt: Path) -> None:
    """The integration prompt names the node and the old claim; a write to another node, or a
    name still stating the old value, is refused and sent back."""
    replace_in(ZH, "300 行", "200 行")(dreamt)
    new_unit = {"name": "代码评审时每个 PR 不超过 200 行", "bucket": "wiki",
                "summary": "我们决定代码评审时每个 PR 不超过 200 行，因为太大的 PR 没人认真看。",
                "paths": [ZH]}
    correction = (f"> {EDIT_DAY} 更正：每个 PR 不超过 200 行；原先的说法是“每个 PR 不超过 300 行”。"
                  f"依据 [[{ZH}]]。")
    body = (dreamt / ZH_NODE).read_text(encoding="utf-8").split("---", 2)[2].lstrip("\n")
    anchor = body.split("\n\n")[0]
    model = ScriptedModel([
        {"expect": '"task": "extract"', "text": json.dumps({"units": [new_unit]},
                                                           ensure_ascii=False)},
        {"expect": [ZH_NODE, "原先的说法：", "300 行", "CORRECT"],
         "tool_calls": [{"name": "write", "arguments": {
             "path": "digest/wiki/代码评审时每个-pr-不超过-200-行.md", "name": new_unit["name"],
             "description": "d", "content": f"x\n\n## Sources\n\n见 [[{ZH}]]。\n"}}]},
        {"expect": [f"this unit revises {ZH_NODE}"],
         "tool_calls": [{"name": "edit", "arguments": {
             "path": ZH_NODE, "old": anchor, "new": f"{anchor}\n\n{correction}"}}]},
        {"text": json.dumps({"action": "CORRECT", "target_path": ZH_NODE, "note": "fixed"})},
        {"expect": ["name still states 300"],
         "tool_calls": [{"name": "frontmatter_update", "arguments": {
             "path": ZH_NODE, "metadata": {"name": new_unit["name"],
                                           "description": new_unit["summary"]}}}]},
        {"text": json.dumps({"action": "CORRECT", "target_path": ZH_NODE, "note": "fixed"})},
        {"expect": '"task": "tag"', "text": json.dumps({"tags": []})},
    ])

    report = run(dreamt, model, today=EDIT_DAY)

    assert report.ok, (report.errors, [u.error for u in report.units], report.warnings)
    model.assert_done()
    assert report.ok, report.errors
    assert [(u.action, u.target) for u in report.units] == [("CORRECT", ZH_NODE)]
    assert not (dreamt / "digest/wiki/代码评审时每个-pr-不超过-200-行.md").exists()
    assert meta(dreamt, ZH_NODE)["name"] == new_unit["name"]
