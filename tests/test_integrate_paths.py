"""The four actions of SPEC §7.1 end to end through `integrate_unit` with the strict scripted
model: CREATE, CORROBORATE, REFINE, CORRECT, a cross-bucket update and a Chinese unit. Each
script (tests/scripts/*.yaml) asserts with `expect` what the loop fed back; the committed node
is compared byte for byte with a golden file, and nothing else in the vault may change."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import tree_bytes
from integrate_support import (
    context,
    copy_vault,
    golden_check,
    load_case,
    run_case,
    tool_results,
)

from remelink.config import load_settings
from remelink.integrate import integrate_unit
from remelink.lint import lint_links
from remelink.models.scripted import ScriptedModel
from remelink.vault import frontmatter
from remelink.vault.notes import read_note

CASES = [
    # script, action, target
    ("create", "CREATE", "digest/procedure/queue-long-exports.md"),
    ("corroborate", "CORROBORATE", "digest/wiki/idempotency-keys.md"),
    ("refine", "REFINE", "digest/wiki/idempotency-keys.md"),
    ("correct", "CORRECT", "digest/procedure/rotate-api-keys.md"),
    ("cross_bucket", "REFINE", "digest/wiki/progress-feedback.md"),
    ("create_zh", "CREATE", "digest/procedure/日志数据脱敏.md"),
]


@pytest.mark.parametrize(("script", "action", "target"), CASES, ids=[c[0] for c in CASES])
def test_action_commits_exactly_one_node(tmp_path: Path, script: str, action: str,
                                         target: str) -> None:
    vault = copy_vault(tmp_path)
    before = tree_bytes(vault)

    result, _, index = run_case(vault, script)

    assert result.ok, result.error
    assert (result.action, result.target, result.changed) == (action, target, True)
    after = tree_bytes(vault)
    golden_check(after[target], f"{script}.md")
    # Exactly one node changed (or appeared); every other file is byte-for-byte the same.
    assert {k for k in after if after[k] != before.get(k)} == {target}
    assert set(before) - set(after) == set()
    # The index hears about the commit, and the vault still lints clean.
    assert index.updates == [[target]]
    _lints_clean(vault)


@pytest.mark.parametrize(("script", "action", "target"), CASES, ids=[c[0] for c in CASES])
def test_action_with_the_real_node_index(tmp_path: Path, script: str, action: str,
                                         target: str) -> None:
    """The same scripts against remelink.index.NodeIndex (Whoosh): the recall the scripts
    expect is there, the committed node is the same, and the index finds it afterwards."""
    from remelink.index import NodeIndex

    vault = copy_vault(tmp_path)
    settings = load_settings(vault, env={})
    with NodeIndex(vault, settings) as index:
        index.refresh()
        result, _, _ = run_case(vault, script, index=index)
        assert result.ok, result.error
        golden_check((vault / target).read_bytes(), f"{script}.md")
        name = frontmatter.load(read_note(vault, target))["name"]
        hits = index.search(name, limit=5, refresh=False)
    assert target in [h.path for h in hits]
    _lints_clean(vault)


def _lints_clean(vault: Path) -> None:
    report = lint_links(vault, load_settings(vault, env={}))
    assert [p.format() for p in report.problems if p.level == "error"] == []


def test_create_reports_the_diff_and_usage(tmp_path: Path) -> None:
    vault = copy_vault(tmp_path)
    result, model, _ = run_case(vault, "create")
    assert result.diff.startswith("--- /dev/null\n+++ b/digest/procedure/queue-long-exports.md\n")
    assert "+name: Queue long exports\n" in result.diff
    assert result.steps == 4 and result.repairs == 0
    # The model saw the six tools on every call.
    names = [spec["function"]["name"] for spec in model.calls[0][1]]
    assert names == ["node_search", "read", "frontmatter_read", "write", "edit",
                     "frontmatter_update"]
    # Related nodes woven into the prose are reported; recall candidates are classified.
    assert result.related == ("digest/wiki/idempotency-keys.md",
                              "digest/wiki/progress-feedback.md")
    assert dict(result.classification)["digest/wiki/idempotency-keys.md"] == "related"


def test_the_receipt_sent_with_the_write_saves_the_receipt_turn(tmp_path: Path) -> None:
    """Issue 23: the receipt as the text of the write's message is judged once the write ran:
    the same node as with the receipt in a turn of its own, one turn less. A receipt that does
    not fit what was staged (here: an update action for a new node) is no repair: the model
    sees the write's result and answers again."""
    out = {}
    for variant in ("apart", "with", "wrong"):
        vault = copy_vault(tmp_path / variant)
        unit, _, data = load_case("create")
        steps = [dict(step) for step in data["steps"]]
        if variant != "apart":
            receipt = steps.pop()["text"]
            steps[-1]["text"] = receipt if variant == "with" else receipt.replace(
                '"CREATE"', '"REFINE"')
            if variant == "wrong":
                steps.append({"expect": "Staged CREATE", "text": receipt})
        model = ScriptedModel(steps)
        result = integrate_unit(context(vault, model), unit)
        model.assert_done()
        assert result.status == "done", result.error
        out[variant] = (result.steps, result.repairs, tree_bytes(vault / "digest"))
    assert out["apart"][:2] == (4, 0) and out["with"][:2] == (3, 0)
    assert out["wrong"][:2] == (4, 0)
    assert out["with"][2] == out["apart"][2] == out["wrong"][2]


def test_correct_keeps_the_old_claim_visible(tmp_path: Path) -> None:
    vault = copy_vault(tmp_path)
    result, _, _ = run_case(vault, "correct")
    assert result.ok, result.error
    text = (vault / "digest/procedure/rotate-api-keys.md").read_text(encoding="utf-8")
    # The wrong line is replaced; the correction quotes it verbatim, next to the new source.
    assert ("> Corrected on 2026-06-25: the rotation period is 24 h; the earlier text said "
            "\"The rotation period is 30 days.\", per [[daily/2026-06-21/soc2-review.md]].\n"
            ) in text
    # The original Sources sentence is still there, word for word.
    assert ("The rotation steps and the 30-day period were agreed in "
            "[[daily/2026-05-15/key-rotation.md]].") in text
    assert dict(result.classification)["digest/procedure/rotate-api-keys.md"] == \
        "same_abstraction"


def test_chinese_unit_gets_chinese_prompts_and_repair(tmp_path: Path) -> None:
    vault = copy_vault(tmp_path)
    result, model, _ = run_case(vault, "create_zh")
    assert result.ok and result.repairs == 1
    system = model.calls[0][0][0]["content"]
    assert system.startswith("把一个记忆单元整合进")
    repair = tool_results(model)[2]
    assert repair.startswith("回执没有问题，但节点 digest/procedure/日志数据脱敏.md 还不能接受")
    assert "bare-source-link" in repair


def test_cross_bucket_update_keeps_the_node_in_its_bucket(tmp_path: Path) -> None:
    vault = copy_vault(tmp_path)
    result, _, _ = run_case(vault, "cross_bucket")
    assert result.unit.bucket == "personal"
    assert result.target == "digest/wiki/progress-feedback.md"
    assert not (vault / "digest/personal/progress-feedback.md").exists()
