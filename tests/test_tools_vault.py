"""The six tools of SPEC §6 called through the ToolBox, as the loop calls them: tool schemas
(golden), read bounds, frontmatter values, node_search output, and the staging of writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import tree_bytes
from integrate_support import GOLDEN, TermIndex, copy_vault, golden_check

from remelink.config import load_settings
from remelink.models.base import ToolCall
from remelink.tools.base import ToolBox
from remelink.tools.vault_tools import READ_LIMIT, toolbox
from remelink.units import Unit
from remelink.workspace import UnitWorkspace

UNIT = Unit(name="Queue long exports", bucket="procedure", summary="Queue long exports.",
            paths=("daily/2026-06-20/pdf-export-timeout.md",))


def make_box(vault: Path, unit: Unit = UNIT) -> tuple[ToolBox, UnitWorkspace, TermIndex]:
    index = TermIndex(vault)
    ws = UnitWorkspace(vault, load_settings(vault, env={}), unit,
                       lambda q, n, b: index.search(q, limit=n, bucket=b))
    return toolbox(ws), ws, index


def call(box: ToolBox, tool: str, **args: object) -> str:
    return box.call(ToolCall("call_1", tool, json.dumps(args, ensure_ascii=False))).result


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return copy_vault(tmp_path)


def test_tool_schemas_match_the_golden_file(vault: Path) -> None:
    box, _, _ = make_box(vault)
    text = json.dumps(box.specs(), indent=2, ensure_ascii=False) + "\n"
    golden_check(text.encode("utf-8"), "tool_specs.json")
    for spec in box.specs():
        params = spec["function"]["parameters"]
        assert params["additionalProperties"] is False
        assert "title" not in params


def test_read_only_toolbox_has_no_writers(vault: Path) -> None:
    ws = make_box(vault)[1]
    # Extraction and tagging have no node index: only the readers they use.
    assert list(toolbox(ws, read_only=True).tools) == ["read", "frontmatter_read"]


# -- read ------------------------------------------------------------------------------------

def test_read_whole_note_and_a_line_range(vault: Path) -> None:
    box, ws, _ = make_box(vault)
    whole = call(box, "read", path="digest/wiki/idempotency-keys")
    assert whole == (vault / "digest/wiki/idempotency-keys.md").read_text().rstrip("\n")
    part = call(box, "read", path="digest/wiki/idempotency-keys.md", start_line=13, end_line=99)
    assert part == ("## Sources\n\nThe duplicate-charge incident that motivated keys on every "
                    "money-moving POST is recorded in\n"
                    "[[daily/2026-06-01/payments-retry.md]].\n[lines 13-16 of 16]")
    assert ws.reads == ["digest/wiki/idempotency-keys.md"] * 2


@pytest.mark.parametrize(("args", "message"), [
    ({"start_line": 17}, "Error: start_line 17 is past the end of digest/wiki/idempotency-keys.md "
                         "(16 lines)"),
    ({"start_line": 5, "end_line": 4}, "Error: end_line 4 is before start_line 5"),
    ({"start_line": 0}, "Error: invalid arguments for read: start_line: Input should be greater "
                        "than or equal to 1"),
])
def test_read_bad_ranges(vault: Path, args: dict[str, int], message: str) -> None:
    box = make_box(vault)[0]
    assert call(box, "read", path="digest/wiki/idempotency-keys.md", **args) == message


def test_read_is_bounded_and_says_how_to_continue(vault: Path) -> None:
    lines = [f"line {i:05d} " + "x" * 60 for i in range(1, 2001)]
    (vault / "resource/big.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    box = make_box(vault)[0]
    first = call(box, "read", path="resource/big.md")
    body, notice = first.rsplit("\n", 1)
    assert len(body.encode("utf-8")) <= READ_LIMIT
    shown = body.count("\n") + 1
    assert notice == (f"[... truncated at 50 KiB: lines 1-{shown} of 2000 shown; call read with "
                      f"start_line={shown + 1} to continue]")
    nxt = call(box, "read", path="resource/big.md", start_line=shown + 1)
    assert nxt.startswith(f"line {shown + 1:05d} ")
    last = call(box, "read", path="resource/big.md", start_line=1990)
    assert last.endswith("[lines 1990-2000 of 2000]")


def test_read_cuts_a_single_line_longer_than_the_bound(vault: Path) -> None:
    (vault / "resource/one-line.md").write_text("y" * (3 * READ_LIMIT) + "\nend\n")
    box = make_box(vault)[0]
    out = call(box, "read", path="resource/one-line.md")
    assert len(out) < READ_LIMIT + 200
    assert out.endswith("[... line 1 is longer than 50 KiB and was cut; call read with "
                        "start_line=2 to continue]")
    assert call(box, "read", path="resource/one-line.md", start_line=2) == "end\n[lines 2-2 of 2]"


def test_read_refuses_binary_and_reports_empty(vault: Path) -> None:
    (vault / "resource/blob.md").write_bytes(b"\x00\x01binary")
    (vault / "resource/empty.md").write_bytes(b"")
    box = make_box(vault)[0]
    assert call(box, "read", path="resource/blob.md").startswith(
        "Error: resource/blob.md: binary file (NUL bytes), not a note")
    assert call(box, "read", path="resource/empty.md") == "resource/empty.md is empty."


def test_read_sees_the_staged_version_of_the_target(vault: Path) -> None:
    box = make_box(vault)[0]
    node = "digest/procedure/rotate-api-keys.md"
    assert call(box, "edit", path=node, old="30 days.", new="30 days. See below.").startswith(
        "Staged edit")
    assert "30 days. See below." in call(box, "read", path=node)
    assert b"See below" not in (vault / node).read_bytes()


# -- frontmatter_read ------------------------------------------------------------------------

def test_frontmatter_read_shows_values_as_yaml(vault: Path) -> None:
    (vault / "digest/wiki/typed.md").write_text(
        "---\n# a comment the model does not need\nname: Typed\ndescription: 'Quoted: yes'\n"
        "flag: yes\nid: 0123\nver: 1.10\ntags: [a, b]\nwhen: 2026-06-21\n---\nBody.\n")
    box = make_box(vault)[0]
    # One YAML dialect reads and writes (PyYAML, YAML 1.1): the model sees what the file means.
    assert call(box, "frontmatter_read", path="digest/wiki/typed.md") == (
        "name: Typed\ndescription: 'Quoted: yes'\nflag: true\nid: 83\nver: 1.1\n"
        "tags:\n- a\n- b\nwhen: 2026-06-21")


def test_frontmatter_read_without_frontmatter_and_with_broken_yaml(vault: Path) -> None:
    (vault / "digest/wiki/bare.md").write_text("Just a body.\n")
    (vault / "digest/wiki/broken.md").write_text("---\nname: [unclosed\n---\nBody.\n")
    box = make_box(vault)[0]
    assert call(box, "frontmatter_read", path="digest/wiki/bare.md") == \
        "digest/wiki/bare.md has no frontmatter."
    out = call(box, "frontmatter_read", path="digest/wiki/broken.md")
    assert out.startswith("Error: digest/wiki/broken.md: invalid YAML in frontmatter at line")
    assert "\n" not in out


# -- node_search -----------------------------------------------------------------------------

def test_node_search_lists_hits_compactly(vault: Path) -> None:
    box, ws, index = make_box(vault)
    out = call(box, "node_search", query="rotate signing keys", limit=2, bucket="procedure")
    assert out == ("1 node(s), best first:\n"
                   "1. [8.00] digest/procedure/rotate-api-keys.md\n"
                   "   name: Rotate API signing keys\n"
                   "   description: How to rotate the API signing keys.")
    assert index.queries == [("rotate signing keys", 2, "procedure")]
    assert ws.searches[0][0] == "rotate signing keys"


def test_node_search_without_hits_suggests_create(vault: Path) -> None:
    box = make_box(vault)[0]
    assert call(box, "node_search", query="zebra crossing") == (
        "No digest node matches 'zebra crossing'. If nothing similar exists, CREATE a new node "
        "in the unit's bucket.")
    assert call(box, "node_search", query="   ") == "Error: query is empty"


# -- write / edit / frontmatter_update staging ------------------------------------------------

BODY = ("Use this when an export outlasts the gateway timeout.\n\n## Sources\n\n"
        "The timeout is recorded in [[daily/2026-06-20/pdf-export-timeout.md]].\n")


def test_write_stages_a_new_node_and_touches_no_file(vault: Path) -> None:
    before = tree_bytes(vault)
    box, ws, _ = make_box(vault)
    out = call(box, "write", path="digest/procedure/queue-long-exports", name=" Queue\n long "
               "exports ", description="Run long exports as jobs.", content=BODY,
               metadata={"kind": "procedure", "memory_tags": []})
    assert out == ("Staged CREATE of a new node digest/procedure/queue-long-exports.md (242 bytes, "
                   "11 lines). It is written to the vault when your receipt is accepted.")
    assert tree_bytes(vault) == before
    assert ws.target == "digest/procedure/queue-long-exports.md" and not ws.existed
    assert ws.staged is not None
    assert ws.staged.render().decode() == (
        "---\nname: Queue long exports\ndescription: Run long exports as jobs.\nkind: procedure\n"
        "memory_tags: []\n---\n" + BODY)


def test_write_new_node_needs_a_slug_in_the_unit_bucket(vault: Path) -> None:
    box = make_box(vault)[0]
    args = {"name": "Q", "description": "D", "content": BODY}
    assert call(box, "write", path="digest/procedure/Queue Exports.md", **args) == (
        "Error: digest/procedure/Queue Exports.md: new node file names are slugs; use "
        "digest/procedure/queue-exports.md")
    assert call(box, "write", path="digest/procedure/sub/queue.md", **args) == (
        "Error: digest/procedure/sub/queue.md: create new nodes directly in digest/procedure/")
    assert call(box, "write", path="digest/procedure/q.md", metadata={"name": "x"}, **args) == (
        "Error: pass name as its own argument, not inside metadata")


def test_write_cjk_slug_is_accepted(vault: Path) -> None:
    unit = Unit(name="日志数据脱敏", bucket="procedure", summary="脱敏。",
                paths=("daily/2026-06-21/数据脱敏.md",))
    box = make_box(vault, unit)[0]
    out = call(box, "write", path="digest/procedure/日志数据脱敏", name="日志数据脱敏",
               description="写入日志前脱敏。", content="脱敏。\n\n## Sources\n\n规则见 "
               "[[daily/2026-06-21/数据脱敏.md]]。\n")
    assert out.startswith("Staged CREATE of a new node digest/procedure/日志数据脱敏.md")


def test_edit_keeps_bom_and_frontmatter_bytes(vault: Path) -> None:
    node = vault / "digest/procedure/rotate-api-keys.md"
    original = b"\xef\xbb\xbf" + node.read_bytes().replace(b"kind: procedure",
                                                          b"kind: procedure   # keep me")
    node.write_bytes(original)
    box, ws, _ = make_box(vault)
    assert call(box, "edit", path="digest/procedure/rotate-api-keys.md", old="one hour.",
                new="one hour. Two in staging.").startswith("Staged edit")
    assert ws.staged is not None
    assert ws.staged.render() == original.replace(b"one hour.", b"one hour. Two in staging.")


def test_frontmatter_update_changes_only_that_key(vault: Path) -> None:
    box, ws, _ = make_box(vault)
    node = "digest/procedure/rotate-api-keys.md"
    out = call(box, "frontmatter_update", path=node,
               metadata={"description": "Rotate the API signing keys safely.",
                         "memory_tags": ["SOC2"]})
    assert out == ("Staged frontmatter update of digest/procedure/rotate-api-keys.md "
                   "(description, memory_tags). It is written to the vault when your receipt is "
                   "accepted.")
    assert ws.staged is not None
    before = (vault / node).read_text()
    assert ws.staged.text == before.replace(
        "description: How to rotate the API signing keys.\nkind: procedure\n",
        "description: Rotate the API signing keys safely.\nkind: procedure\nmemory_tags:\n"
        "- SOC2\n")


def test_golden_files_used_by_these_tests_exist() -> None:
    assert (GOLDEN / "tool_specs.json").is_file()
