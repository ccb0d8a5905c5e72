"""`auto_tag_step` (SPEC §10.2): entity tags in `memory_tags` of the nodes a run wrote: at most 3,
normalised, existing spellings reused, byte-faithful, crash-safe, and a failure never undoes the
checkpoint. The local engine and the scripted model (the LLM path)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dream_support import Wrapped, copy_fixture, notes_bytes, run, settings_of, state_of

from remelink.dream.autotag import VaultTags, auto_tag_step, normalize_tags
from remelink.dream.context import AuditLog, RunContext, RunReport, SilentReporter
from remelink.dream.run import LockedIndex
from remelink.dream.state import State
from remelink.index import NodeIndex
from remelink.models.base import ChatModel
from remelink.models.scripted import ScriptedModel
from remelink.vault import frontmatter
from remelink.vault.notes import read_note

NODE = "digest/wiki/stripe-webhooks.md"
NODE_TEXT = """\
---
# a comment the tag write must keep
name: "Stripe webhooks"
description: 'Stripe signs every webhook; verify before trusting it.'
kind: concept
extra: yes
---
Stripe signs every webhook it sends to Project_A; Alice checks the signature first.\r
\r
## Sources\r
\r
This comes from [[daily/2026-06-01/a.md]].\r
"""


def test_normalize_tags() -> None:
    existing = ["Project_A", "Alice"]
    raw: list[Any] = ["project a", "#ALICE", "alice", "x" * 65, "   ", "!!!", 42, "Stripe",
                      "Extra"]
    assert normalize_tags(raw, existing, 3) == ["Project_A", "Alice", "Stripe"]
    assert normalize_tags(["Data  Team\tLead"], [], 3) == ["Data_Team_Lead"]
    assert normalize_tags(["a" * 64, "b" * 65], [], 3) == ["a" * 64]
    assert normalize_tags([], existing, 3) == []


def test_vault_tags_snapshot_is_canonical_and_leaves_out_the_pass() -> None:
    by_node = {"n1": ["Stripe", "Alice"], "n2": ["stripe"], "n3": ["stripe", "Zed"]}
    assert VaultTags(by_node).spellings() == ["Alice", "stripe", "Zed"]  # most used spelling
    tags = VaultTags(by_node, exclude={"n3"})
    assert tags.spellings() == ["Alice", "Stripe"]  # a tie: the first in sort order
    assert tags.for_model("Alice met the stripe team") == ["Alice", "Stripe"]
    assert VaultTags(by_node).for_model("Zed rides with Stripe") == ["stripe", "Zed", "Alice"]


def tag_context(vault: Path, model: ChatModel, pending: list[str]) -> RunContext:
    settings = settings_of(vault)
    state = State.load(vault)
    state.pending_tags = list(pending)
    index = LockedIndex(NodeIndex(vault, settings))
    index.refresh()
    return RunContext(vault=vault, settings=settings, model=model, state=state, index=index,
                      window=None, report=RunReport("r", None, [], False),
                      audit=AuditLog(vault, "r", enabled=False), reporter=SilentReporter(),
                      today="2026-06-25")


def tag_vault(tmp_path: Path) -> Path:
    vault = tmp_path / "v"
    (vault / ".remelink").mkdir(parents=True)
    (vault / NODE).parent.mkdir(parents=True)
    (vault / NODE).write_bytes(NODE_TEXT.encode())
    other = vault / "digest/wiki/other.md"
    other.write_text("---\nname: Other\ndescription: d\nmemory_tags: [Project_A, Bob]\n---\n"
                     "Bob.\n\n## Sources\n\nFrom [[daily/2026-06-01/a.md]].\n", encoding="utf-8")
    return vault


def test_scripted_tags_are_normalised_and_written_byte_faithfully(tmp_path: Path) -> None:
    vault = tag_vault(tmp_path)
    model = ScriptedModel([
        {"expect": "Tag the node", "tool_calls": [{"name": "read", "arguments": {"path": NODE}}]},
        {"expect": "Stripe signs every webhook",
         "text": '{"tags": ["stripe", "project a", "ALICE", "Alice", "Extra"]}'}])
    ctx = tag_context(vault, model, [NODE])

    auto_tag_step(ctx)

    model.assert_done()
    task = model.calls[0][0][1]["content"]
    assert '"existing_tags": ["Project_A", "Bob"]' in task  # mentioned first, then the rest
    assert ctx.report.tags == {NODE: ["stripe", "Project_A", "ALICE"]}
    after = (vault / NODE).read_bytes().decode()
    want = NODE_TEXT.replace("extra: yes\n", "extra: yes\nmemory_tags:\n- stripe\n- Project_A\n"
                             "- ALICE\n")
    assert after == want  # one key added; comment, quoting, CRLF body untouched
    assert ctx.state.pending_tags == [] and state_of(vault)["pending_tags"] == []
    hits = ctx.index.search("stripe webhook signature", limit=3, refresh=False)
    assert hits[0].path == NODE and "ALICE" in hits[0].memory_tags  # the index was told


def test_a_tagging_outage_is_reported_the_checkpoint_kept_and_retried(tmp_path: Path) -> None:
    """The model cannot be reached while tagging: reported, the units stay integrated, the
    nodes stay pending for the next run (which tags them), and an outage stops the pass after
    a few nodes instead of walking every node through the retries."""
    vault = copy_fixture(tmp_path, "en")
    settings = settings_of(vault)
    down = Wrapped(settings, fail_tag=True)
    report = run(vault, down, settings)
    assert report.ok and report.units and all(u.status == "done" for u in report.units)
    assert not report.tags  # nothing tagged
    failures = [w for w in report.warnings if "tagging" in w]
    assert failures and all("tagging backend down (test)" in w for w in failures)
    assert any(w.startswith("tagging stopped: the model failed 3 time(s) in a row") for w in
               failures)
    written = set(report.created + report.updated)
    assert len(written) > 3 and down.tag_calls == 3  # the outage stopped the pass
    state = state_of(vault)
    assert {i["status"] for i in state["inputs"].values()} == {"processed"}
    assert set(state["pending_tags"]) == written  # the next run tags them
    again = run(vault)
    assert again.units == []  # nothing is integrated again
    assert set(again.tags) == written and state_of(vault)["pending_tags"] == []


def test_a_wrong_tagging_answer_is_reported_not_retried(tmp_path: Path) -> None:
    vault = copy_fixture(tmp_path, "en")
    settings = settings_of(vault)
    report = run(vault, Wrapped(settings, garble_tag=True), settings)
    assert report.ok and report.units
    failures = [w for w in report.warnings if "tagging failed" in w]
    assert len(failures) == len(set(report.created + report.updated))
    assert state_of(vault)["pending_tags"] == []  # attempted once, not retried forever


def test_local_engine_tags_and_retagging_is_a_no_op(tmp_path: Path) -> None:
    """Tagging again the nodes a run tagged (what a run killed during tagging does) writes the
    same bytes: a node's tags depend on the vault, not on the order or history of tagging."""
    vault = copy_fixture(tmp_path, "en")
    settings = settings_of(vault)
    report = run(vault, settings=settings)
    assert report.tags and set(report.tags) == set(report.created + report.updated)
    for rel, tags in report.tags.items():
        meta = frontmatter.load(read_note(vault, rel))
        assert meta.get("memory_tags", []) == tags and len(tags) <= 3
        if not tags:  # an empty list is never written (SPEC §10.2); the fixture had none
            assert "memory_tags" not in meta
    before = notes_bytes(vault)
    from remelink.models.local import LocalModel

    ctx = tag_context(vault, LocalModel(settings), sorted(report.tags, reverse=True))
    auto_tag_step(ctx)
    assert notes_bytes(vault) == before
    assert ctx.report.tags == report.tags
