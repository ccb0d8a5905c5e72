"""No invented commands (SPEC §7.2) and the markdown blocks it reads (remelink/mdblocks.py).

The guard runs in the write and edit tools, so it holds for every engine: a strict scripted
model (an LLM's mistakes, EN and ZH) is refused with the offending code named and lands the
node once it copies the code from the notes; the local engine's own writes pass it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import tree_bytes
from hypothesis import given, settings
from hypothesis import strategies as st
from integrate_support import TermIndex, context

from remelink import codeguard, mdblocks
from remelink.integrate import integrate_unit
from remelink.models.scripted import ScriptedModel
from remelink.units import Unit

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "til-simonw" / "notes"

# -- blocks ----------------------------------------------------------------------------------

NOTE = """# Deploy the ledger API

Run the rollout and wait for it:

1. Apply the manifest:

   ```bash
   kubectl -n ledger apply -f deploy.yaml
   ```
2. Watch it with `kubectl -n ledger rollout status deploy/ledger-api --timeout=10m`.
   Rollback: `kubectl -n ledger rollout undo deploy/ledger-api`.

| setting | value |
|---|---|
| timeout | 10m |

> Never deploy on Friday.

    indented code line
"""


def test_blocks_keep_the_note_s_own_markdown() -> None:
    blocks = mdblocks.parse(NOTE)
    kinds = [(b.kind, b.level) for b in blocks]
    assert kinds == [("heading", 1), ("para", 0), ("item", 0), ("code", 1), ("item", 0),
                     ("table", 0), ("quote", 0), ("code", 0)]
    step1, fence, step2 = blocks[2], blocks[3], blocks[4]
    assert (step1.ordered, step1.number, step1.text) == (True, 1, "Apply the manifest:")
    assert fence.parent == 2 and fence.info == "bash"
    assert fence.code == "kubectl -n ledger apply -f deploy.yaml"
    # A wrapped item is one line; code spans stay as written, with their backticks.
    assert step2.text == ("Watch it with `kubectl -n ledger rollout status deploy/ledger-api "
                          "--timeout=10m`. Rollback: `kubectl -n ledger rollout undo "
                          "deploy/ledger-api`.")
    assert blocks[-1].code == "indented code line"
    assert all(b.heading == 0 for b in blocks[1:])


def test_code_spans_follow_commonmark() -> None:
    def spans(text: str) -> list[str]:
        return [c for _, _, c in mdblocks.code_spans(text)]

    assert spans("run `a` and ``b ` c`` then `d") == ["a", "b ` c"]
    assert spans("`` `x` ``") == ["`x`"]
    assert spans(r"not \`code` but `this`") == ["but"]  # an escaped backtick opens nothing
    assert spans(r"a \\`b`") == ["b"]  # an escaped backslash escapes no backtick
    assert spans("`date.today()`.") == ["date.today()"]
    assert spans("两个命令：`redis-cli --bigkeys` 和 `SCAN 0`。") == ["redis-cli --bigkeys",
                                                                "SCAN 0"]


def test_tabs_inside_code_are_kept() -> None:
    body = "```\n\tindented\ta\tb\n```\n\n- item\n\n  ```\n  x\ty\n  ```\n"
    codes = [b.code for b in mdblocks.parse(body) if b.kind == "code"]
    assert codes == ["\tindented\ta\tb", "x\ty"]


@pytest.mark.skipif(not DATA.is_dir(), reason="til-simonw data not beside the repository")
def test_blocks_agree_with_markdown_it_on_real_notes() -> None:
    """Every fenced or indented block and every code span of 577 real notes, as markdown-it-py
    (CommonMark) finds them, whitespace runs folded (a span wrapped across lines keeps the
    trailing space of its first line in CommonMark; a paragraph here is joined by one space)."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark").enable("table")

    def fold(text: str) -> str:
        return " ".join(text.split())

    def ours(body: str) -> tuple[list[str], list[str]]:
        blocks, spans = [], []
        for b in mdblocks.parse(body):
            if b.kind == "code":
                blocks.append(b.code.rstrip("\n"))
            elif b.kind == "quote":
                inner = ours(mdblocks.unquote(b.text))
                blocks += inner[0]
                spans += inner[1]
            elif b.kind in ("para", "item", "heading", "table"):
                spans += [fold(c) for _, _, c in mdblocks.code_spans(b.text) if c.strip()]
        return blocks, spans

    mismatched = []
    for path in sorted(DATA.rglob("*.md")):
        body = path.read_text(encoding="utf-8")
        blocks, spans = [], []
        for tok in md.parse(body):
            if tok.type in ("fence", "code_block"):
                blocks.append(tok.content.rstrip("\n"))
            for child in tok.children or []:
                if child.type == "code_inline" and child.content.strip():
                    spans.append(fold(child.content))
        mine = ours(body)
        if sorted(blocks) != sorted(mine[0]) or sorted(spans) != sorted(mine[1]):
            mismatched.append(path.name)
    assert mismatched == []


# -- the guard as a function -------------------------------------------------------------------

def test_code_from_the_notes_passes_and_changed_code_is_named() -> None:
    body = ("Watch the rollout with `kubectl -n ledger rollout status deploy/ledger-api "
            "--timeout=10m.`\n\n```bash\nkubectl -n ledger apply -f deploy.yaml\n"
            "kubectl -n ledger delete pod --all\n```\n")
    found = codeguard.invented(body, [], [NOTE])
    assert [(f.kind, f.text) for f in found] == [
        ("span", "kubectl -n ledger rollout status deploy/ledger-api --timeout=10m."),
        ("line", "kubectl -n ledger delete pod --all")]
    assert found[0].shown().startswith("inline code `kubectl")
    # Code the node already had is not added by this call.
    assert codeguard.invented(body, [body], []) == []
    # Whitespace runs are one space (a span wraps across lines in a note).
    assert codeguard.invented("`rollout status deploy/ledger-api`", [], [
        "`rollout status\n  deploy/ledger-api`"]) == []


def test_chinese_nodes_are_checked_the_same_way() -> None:
    note = "排查大 key：先跑 `redis-cli --bigkeys`，再用 `SCAN 0 COUNT 500` 分批清理。"
    good = "用 `redis-cli --bigkeys` 找大 key，用 `SCAN 0 COUNT 500` 分批清理。\n"
    bad = "用 `redis-cli --bigkey` 找大 key。\n"
    assert codeguard.invented(good, [], [note]) == []
    assert [f.text for f in codeguard.invented(bad, [], [note])] == ["redis-cli --bigkey"]


_CODE = st.text(st.characters(codec="utf-8", exclude_characters="`\r\n\x00",
                              exclude_categories=("Cs", "Cc")), min_size=1, max_size=30
                ).filter(lambda s: s.strip() != "")


@settings(max_examples=200, deadline=None)
@given(spans=st.lists(_CODE, min_size=1, max_size=4),
       lines=st.lists(_CODE.filter(lambda s: not s.lstrip().startswith(("```", "~~~"))),
                      max_size=4))
def test_a_node_that_copies_its_note_s_code_always_passes(spans: list[str],
                                                           lines: list[str]) -> None:
    """Property: whatever code a note holds, a node made of that code (spans in prose, lines in
    a fence) passes; the same node with a character added inside one span does not, unless
    the note holds that text too."""
    note = "Notes:\n\n" + "\n".join(f"- use ` {s} ` here" for s in spans) + \
        ("\n\n```\n" + "\n".join(lines) + "\n```\n" if lines else "\n")
    node = "Keep:\n\n" + " ".join(f"` {s} `" for s in spans) + \
        ("\n\n```sh\n" + "\n".join(lines) + "\n```\n" if lines else "\n")
    assert codeguard.invented(node, [], [note]) == []
    changed = f"Also ` {spans[0]}. `\n"
    found = codeguard.invented(changed, [], [note])
    if " ".join(f"{spans[0]}.".split()) not in " ".join(note.split()):
        assert [f.text.strip() for f in found] == [f"{spans[0]}.".strip()]


# -- through the tools, with a strict scripted model (an LLM's mistakes) ---------------------

DEPLOY = "daily/2026-03-05/ledger-deploy.md"
DEPLOY_NOTE = """# Ledger API deploy

1. `kubectl -n ledger apply -f deploy.yaml`
2. `kubectl -n ledger rollout status deploy/ledger-api --timeout=10m`

Rollback: `kubectl -n ledger rollout undo deploy/ledger-api`
"""
ZH = "daily/2026-03-06/redis-大key.md"
ZH_NOTE = "# Redis 大 key 排查\n\n先跑 `redis-cli --bigkeys`，再用 `SCAN 0 COUNT 500` 分批删除。\n"


def _vault(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    for rel, text in ((DEPLOY, DEPLOY_NOTE), (ZH, ZH_NOTE)):
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    (vault / "digest" / "procedure").mkdir(parents=True)
    (vault / ".remelink").mkdir()
    return vault


def _write(path: str, body: str, name: str) -> dict[str, Any]:
    return {"name": "write", "arguments": {"path": path, "name": name,
                                           "description": f"{name}.", "content": body}}


def _receipt(target: str) -> str:
    return json.dumps({"action": "CREATE", "target_path": target, "note": "new"})


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_llm_that_changes_a_command_is_refused_then_copies_it(tmp_path: Path,
                                                                 lang: str) -> None:
    vault = _vault(tmp_path)
    if lang == "en":
        unit = Unit("Deploy the ledger API", "procedure", "Apply, watch, roll back.", (DEPLOY,))
        target = "digest/procedure/deploy-the-ledger-api.md"
        sources = f"## Sources\n\nThe steps were recorded in [[{DEPLOY}]].\n"
        bad = ("1. `kubectl -n ledger apply -f deploy.yaml`\n2. `kubectl -n ledger rollout status "
               "deploy/ledger-api --timeout=10m.`\n\n```\nkubectl rollout undo deploy/ledger-api"
               f"\n```\n\n{sources}")
        good = ("1. `kubectl -n ledger apply -f deploy.yaml`\n2. `kubectl -n ledger rollout "
                "status deploy/ledger-api --timeout=10m`\n\nRollback: `kubectl -n ledger "
                f"rollout undo deploy/ledger-api`\n\n{sources}")
        named = ["inline code `kubectl -n ledger rollout status deploy/ledger-api "
                 "--timeout=10m.`", "code block line 'kubectl rollout undo deploy/ledger-api'"]
    else:
        unit = Unit("Redis 大 key 排查", "procedure", "先找大 key 再分批删除。", (ZH,))
        target = "digest/procedure/redis-大-key-排查.md"
        sources = f"## Sources\n\n操作步骤记录于 [[{ZH}]]。\n"
        step2 = "2. 用 `SCAN 0 COUNT 500` 分批删除。"
        bad = f"1. 运行 `redis-cli --bigkey` 找出大 key。\n{step2}\n\n{sources}"
        good = f"1. 运行 `redis-cli --bigkeys` 找出大 key。\n{step2}\n\n{sources}"
        named = ["inline code `redis-cli --bigkey`"]
    before = tree_bytes(vault)
    steps: list[dict[str, Any]] = [
        {"tool_calls": [_write(target, bad, unit.name)]},
        {"expect": ["Error: refused, nothing staged:", "none of the unit's notes holds",
                    *named, "byte for byte"],
         "tool_calls": [_write(target, good, unit.name)]},
        {"expect": ["Staged CREATE", "Checked: it passes every check"], "text": _receipt(target)},
    ]
    model = ScriptedModel(steps)
    result = integrate_unit(context(vault, model, index=TermIndex(vault)), unit)
    model.assert_done()
    assert result.ok, result.error
    assert tree_bytes(vault) != before
    assert (vault / target).read_text(encoding="utf-8").endswith(good)


def test_an_edit_may_add_code_the_node_has_but_not_code_nobody_wrote(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    node = "digest/procedure/deploy-the-ledger-api.md"
    (vault / node).write_text(
        "---\nname: Deploy the ledger API\ndescription: Apply and watch.\n---\n"
        "Apply with `kubectl -n ledger apply -f deploy.yaml`.\n\n## Sources\n\n"
        f"The steps were recorded in [[{DEPLOY}]].\n", encoding="utf-8")
    unit = Unit("Deploy the ledger API", "procedure", "Rollback.", (DEPLOY,))
    invented = {"name": "edit", "arguments": {
        "path": node, "old": "## Sources",
        "new": "Rollback: `kubectl -n ledger rollout undo deploy/ledger-api --to-revision=2`"
               "\n\n## Sources"}}
    kept = {"name": "edit", "arguments": {
        "path": node, "old": "## Sources",
        "new": "Rollback: `kubectl -n ledger rollout undo deploy/ledger-api`; again "
               "`kubectl -n ledger apply -f deploy.yaml` to roll forward.\n\n## Sources"}}
    model = ScriptedModel([
        {"tool_calls": [invented]},
        {"expect": ["Error: refused, nothing staged", "--to-revision=2`"], "tool_calls": [kept]},
        {"expect": "Staged edit", "text": json.dumps(
            {"action": "REFINE", "target_path": node, "note": "rollback"})},
    ])
    result = integrate_unit(context(vault, model, index=TermIndex(vault)), unit)
    model.assert_done()
    assert result.ok, result.error
