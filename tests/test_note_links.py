"""Links between raw notes are evidence that the nodes drawn from them are related (SPEC §8,
issue 21): resolved the way the vault resolves links, both directions, scoped by the line that
holds the link, carried on the unit as `linked_notes`, and woven into the node as a link."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from remelink.config import Settings
from remelink.index import NodeIndex
from remelink.integrate import IntegrationContext, integrate_unit
from remelink.models.local import LocalModel
from remelink.models.local.relate import linked_entries
from remelink.notelinks import NoteLinks, link_context
from remelink.prompts import integrate_messages
from remelink.units import LinkedNote, Unit, parse_unit
from remelink.vault.resolve import VaultFiles

INCIDENT = """# Incident: journal-svc 503s, pgbouncer pool exhausted

## Root cause
The recon export job held server connections idle in transaction for 40 minutes.

## Lessons
- Never do network calls inside a database transaction.
"""
MEETING = """# Weekly sync 11 Feb

## Progress
- After the pgbouncer incident ([[pgbouncer-pool-exhaustion]]) Liu looks at the pool settings.

## Other
- Zhao wants release forms submitted one day ahead, not on the morning itself.
"""


def _vault(tmp_path: Path, notes: dict[str, str], resolution: str = "obsidian") -> Path:
    root = tmp_path / "vault"
    for folder in ("daily", "resource", "digest/wiki", "digest/personal", "digest/procedure",
                   ".remelink"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    for rel, text in notes.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def _graph(root: Path, resolution: str = "obsidian") -> NoteLinks:
    return NoteLinks.scan(VaultFiles.scan(root), replace(Settings(), resolution=resolution))


def test_links_resolve_both_ways_with_their_line(tmp_path: Path) -> None:
    root = _vault(tmp_path, {"daily/2026-02-06/pgbouncer-pool-exhaustion.md": INCIDENT,
                             "daily/2026-02-11/sync.md": MEETING})
    graph = _graph(root)
    meeting = graph.linked(["daily/2026-02-11/sync.md"])
    assert [(n.path, n.direction) for n in meeting] == \
        [("daily/2026-02-06/pgbouncer-pool-exhaustion.md", "out")]
    assert meeting[0].context == ("Progress: After the pgbouncer incident "
                                  "(pgbouncer-pool-exhaustion) Liu looks at the pool settings.")
    incident = graph.linked(["daily/2026-02-06/pgbouncer-pool-exhaustion.md"])
    assert [(n.path, n.direction) for n in incident] == [("daily/2026-02-11/sync.md", "in")]
    # A note's links to itself and the unit's own notes are no evidence.
    assert graph.linked(["daily/2026-02-11/sync.md",
                         "daily/2026-02-06/pgbouncer-pool-exhaustion.md"]) == ()


def test_links_follow_the_vault_resolution(tmp_path: Path) -> None:
    """Path mode resolves only literal paths; an ambiguous name links nothing; a link into the
    digest or to a missing note is no evidence."""
    root = _vault(tmp_path, {
        "daily/a/x.md": "# X\n\nSee [[y]] and [[daily/b/y.md]] and [[digest/wiki/n.md]].\n",
        "daily/b/y.md": "# Y\n\nSee [[twin]] and [[missing note]].\n",
        "daily/c/twin.md": "# twin one\n", "resource/twin.md": "# twin two\n",
        "digest/wiki/n.md": "---\nname: n\ndescription: d\n---\nbody\n"})
    assert [n.path for n in _graph(root, "path").linked(["daily/a/x.md"])] == ["daily/b/y.md"]
    assert [n.path for n in _graph(root).linked(["daily/a/x.md"])] == ["daily/b/y.md"]
    assert _graph(root).linked(["daily/b/y.md"])[0].direction == "in"
    assert all(n.direction == "in" for n in _graph(root).linked(["daily/b/y.md"]))


@pytest.mark.parametrize("resolution", ["path", "obsidian"])
def test_a_markdown_link_to_a_note_is_a_link(tmp_path: Path, resolution: str) -> None:
    """Obsidian with its wikilink setting off writes `[words](path.md)`: a path relative to the
    note (percent-encoded, in <...>, with an #anchor or a title) or from the vault root. Never a
    URL, an image, code, or a path out of the vault."""
    root = _vault(tmp_path, {
        "daily/2026-02-11/sync.md": (
            "# Sync\n\n## Progress\n- After the [pgbouncer incident](../2026-02-06/"
            "pgbouncer%20pool.md#Root%20cause) Liu looks at the pool settings.\n"
            "- The design: [Ledger design](<resource/Ledger Event Design.md> \"doc\").\n"
            "- Not: [web](https://til.example/daily/2026-02-12/other.md), "
            "![pic](../2026-02-12/other.md), `[code](../2026-02-12/other.md)`, "
            "[out](../../../outside.md).\n"),
        "daily/2026-02-06/pgbouncer pool.md": INCIDENT,
        "daily/2026-02-12/other.md": "# Other\n\nbody\n",
        "resource/Ledger Event Design.md": "# Ledger Event Design\n\nbody\n",
        "outside.md": "# Outside the raw notes\n"})
    graph = _graph(root, resolution)
    found = graph.linked(["daily/2026-02-11/sync.md"])
    assert [(n.path, n.direction) for n in found] == [
        ("daily/2026-02-06/pgbouncer pool.md", "out"), ("resource/Ledger Event Design.md", "out")]
    assert found[0].context == ("Progress: After the pgbouncer incident Liu looks at the pool "
                                "settings.")
    back = graph.linked(["daily/2026-02-06/pgbouncer pool.md"])
    assert [(n.path, n.direction) for n in back] == [("daily/2026-02-11/sync.md", "in")]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.from_regex(r"[A-Za-z\u4e00-\u9fff][\w \u4e00-\u9fff-]{0,20}",
                                        fullmatch=True),
                          st.sampled_from(["plain", "angle", "code", "fence", "image", "url"])),
                min_size=1, max_size=6))
def test_markdown_links_to_notes_are_read_outside_code_only(
        links: list[tuple[str, str]]) -> None:
    from urllib.parse import quote

    from remelink.vault.links import parse_note_links

    lines, want = ["# Note", ""], []
    for name, how in links:
        path = f"../2026-01-0{len(lines) % 9 + 1}/{name.strip() or 'x'}.md"
        link = {"plain": f"[see]({quote(path)})", "angle": f"[see](<{path}>)",
                "code": f"`[see]({quote(path)})`", "image": f"![see]({quote(path)})",
                "url": f"[see](https://example.org/{quote(path[3:])})",
                "fence": f"```\n[see]({quote(path)})\n```"}[how]
        if how in ("plain", "angle"):
            want.append((path, "\n".join(lines).count("\n") + 2))
        lines += [link if how == "fence" else f"Text before {link} and after.", ""]
    assert parse_note_links("\n".join(lines), 1) == want


def test_a_hub_note_is_no_evidence(tmp_path: Path) -> None:
    notes = {f"daily/n/{i}.md": f"# Note {i}\n\nbody {i}\n" for i in range(70)}
    notes["daily/index.md"] = "# Index\n\n" + "\n".join(f"- [[{i}]]" for i in range(70)) + "\n"
    notes["daily/page.md"] = "# Page\n\n" + "\n".join(
        f"- the {'ledger' if i == 17 else 'other'} topic is in [[{i}]]" for i in range(20)) + "\n"
    graph = _graph(_vault(tmp_path, notes))
    assert graph.linked(["daily/index.md"]) == ()
    assert [n.path for n in graph.linked(["daily/n/3.md"])] == ["daily/page.md"]
    # A page of twenty links keeps twelve, the lines most about the unit first.
    kept = graph.linked(["daily/page.md"], about="the ledger topic")
    assert len(kept) == 12 and kept[0].path == "daily/n/17.md"


def test_context_names_the_heading_and_shows_links_as_text() -> None:
    lines = ["# T", "", "## Decision", "- adopt [[x/y|the design]] now", "- other"]
    assert link_context(lines, 3) == "Decision: adopt the design now"
    assert link_context(["[[a/b.md]] only"], 0) == "b.md only"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), max_size=15),
       st.sets(st.integers(0, 5), min_size=1, max_size=3))
def test_linked_is_the_other_notes_linked_either_way(edges: list[tuple[int, int]],
                                                     own: set[int]) -> None:
    graph = NoteLinks()
    for a, b in edges:
        if a != b:
            graph.out.setdefault(f"daily/{a}.md", {})[f"daily/{b}.md"] = "ctx"
            graph.back.setdefault(f"daily/{b}.md", {})[f"daily/{a}.md"] = "ctx"
    paths = [f"daily/{i}.md" for i in sorted(own)]
    found = graph.linked(paths)
    expected = {f"daily/{y}.md" for x, y in edges
                if x in own and y not in own} | \
        {f"daily/{x}.md" for x, y in edges if y in own and x not in own}
    assert {n.path for n in found} == expected
    assert len({n.path for n in found}) == len(found)
    for n in found:
        if n.direction == "out":
            assert any(n.path in graph.out.get(p, {}) for p in paths)


def test_units_carry_linked_notes_additively() -> None:
    data = {"name": "a", "bucket": "wiki", "summary": "s", "paths": ["daily/x.md"],
            "linked_notes": ["daily/y.md", {"path": "../z.md"}, "daily/x.md",
                             {"path": "resource/q.md", "direction": "in", "context": "c"}]}
    unit = parse_unit(data).unit
    assert unit is not None
    assert unit.linked_notes == (LinkedNote("daily/y.md", "out", ""),
                                 LinkedNote("resource/q.md", "in", "c"))
    plain = parse_unit({k: v for k, v in data.items() if k != "linked_notes"}).unit
    assert plain is not None and plain.id == unit.id  # evidence, not identity
    assert "linked_notes" not in plain.as_dict()


@pytest.fixture
def linked_ctx(tmp_path: Path) -> Iterator[IntegrationContext]:
    root = _vault(tmp_path, {"daily/2026-02-06/pgbouncer-pool-exhaustion.md": INCIDENT,
                             "daily/2026-02-11/sync.md": MEETING})
    s = replace(Settings(), embedder="none", resolution="obsidian")
    index = NodeIndex(root, s)
    index.refresh()
    model = LocalModel(s)
    model.bind_index(index)
    yield IntegrationContext(vault=root, settings=s, model=model, index=index,
                             files=VaultFiles.scan(root), today="2026-03-01")
    index.close()


def _digest_links(root: Path, rel: str) -> list[str]:
    text = (root / rel).read_text(encoding="utf-8")
    return re.findall(r"\[\[(digest/[^\]|#]+)", text.split("## Sources")[0])


def test_a_note_link_relates_the_nodes_of_its_line_only(linked_ctx: IntegrationContext) -> None:
    ctx = linked_ctx
    incident = integrate_unit(ctx, Unit(
        name="Never do network calls inside a database transaction", bucket="wiki",
        summary="Never do network calls inside a database transaction: the recon export held "
                "server connections idle in transaction for 40 minutes.",
        paths=("daily/2026-02-06/pgbouncer-pool-exhaustion.md",)))
    assert incident.ok and incident.action == "CREATE"
    pool = integrate_unit(ctx, Unit(
        name="Liu reviews the pool settings", bucket="wiki",
        summary="After the pgbouncer incident Liu looks at the pool settings.",
        paths=("daily/2026-02-11/sync.md",)))
    forms = integrate_unit(ctx, Unit(
        name="Release forms one day ahead", bucket="personal",
        summary="Zhao wants release forms submitted one day ahead.",
        paths=("daily/2026-02-11/sync.md",)))
    assert pool.ok and forms.ok and incident.target and pool.target and forms.target
    # The line that links the incident is about the pool: that node links the incident's.
    assert incident.target in _digest_links(ctx.vault, pool.target)
    # The release-form decision of the same meeting does not.
    assert incident.target not in _digest_links(ctx.vault, forms.target)


def test_the_linked_note_integrated_later_links_back(linked_ctx: IntegrationContext) -> None:
    ctx = linked_ctx
    pool = integrate_unit(ctx, Unit(
        name="Liu reviews the pool settings", bucket="wiki",
        summary="After the pgbouncer incident Liu looks at the pool settings.",
        paths=("daily/2026-02-11/sync.md",)))
    incident = integrate_unit(ctx, Unit(
        name="Never do network calls inside a database transaction", bucket="wiki",
        summary="Never do network calls inside a database transaction.",
        paths=("daily/2026-02-06/pgbouncer-pool-exhaustion.md",)))
    assert pool.ok and incident.ok and pool.target and incident.target
    assert pool.target in _digest_links(ctx.vault, incident.target)


_WORDS = ["ledger", "invoice", "rotation", "scheduler", "backup", "replica", "pipeline",
          "gateway", "cluster", "tokens", "payout", "migration", "dashboard", "handover",
          "latency", "capacity", "billing", "refunds", "settlement", "cursor"]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(_WORDS), min_size=6, max_size=6, unique=True),
       st.integers(0, 3))
def test_a_similar_link_never_rests_on_one_common_word(words: list[str], shared: int) -> None:
    """Whatever the comparison says, `similar` links only nodes sharing two topic words."""
    from remelink.models.local import relate
    from remelink.models.local.protocol import HitInfo

    common = words[:shared]
    unit = " ".join(["alpha", *words[3:5], *common])
    node = " ".join(["omega", words[5], *common])
    hit = HitInfo("digest/wiki/n.md", 5.0, node, node)
    links = relate.choose(raw_text=unit, lang="en", paths=["daily/u.md"], hits=[hit],
                          notes={}, labels={hit.path: "related"}, digest="digest",
                          idf=lambda t: 1.0)
    assert bool(links) == (shared >= 2)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_prompt_lists_linked_notes_once_as_rows(language: str) -> None:
    """The integrate prompt carries the linked notes once, in the unit's JSON block as
    [direction, path, context] rows (issue 23: a prose list repeated them, a few hundred tokens
    in every request of the unit); the local engine and parse_unit read the rows back."""
    linked = (LinkedNote("daily/2025-01-02/b.md", "out", "Results: b covers the rollback"),
              LinkedNote("resource/数据管道-39.md", "in", "决定: 见 a.md"))
    unit = Unit(name="Queue backpressure", bucket="wiki", summary="Shed load early.",
                paths=("daily/2025-01-01/a.md",), linked_notes=linked)
    user = integrate_messages(unit, "", language=language, today="2026-06-25")[1]["content"]
    for note in linked:
        assert user.count(note.path) == 1, user
    found = re.search(r"```json\n(.*?)\n```", user, re.S)
    assert found is not None
    block = json.loads(found.group(1))
    rows = block["linked_notes"]
    assert rows == [["out", "daily/2025-01-02/b.md", "Results: b covers the rollback"],
                    ["in", "resource/数据管道-39.md", "决定: 见 a.md"]]
    assert "linked_notes" in user.split("```", 2)[2]  # the instruction names the field
    assert [(e.path, e.direction, e.context) for e in linked_entries(rows)] == \
        [(n.path, n.direction, n.context) for n in linked]
    parsed = parse_unit(block).unit
    assert parsed is not None and parsed.linked_notes == linked


def test_a_markdown_link_between_notes_links_their_nodes_in_a_dream_run(tmp_path: Path) -> None:
    """End to end: the meeting links the incident by a markdown path, relative to itself; the
    meeting's node on that line links the incident's node (nothing else relates them)."""
    from local_support import dream

    meeting = ("# Weekly sync 11 Feb\n\n## Decisions\n- After the pgbouncer incident ([write-up]"
               "(../2026-02-06/pgbouncer%20pool%20exhaustion.md)) we decided to cap every "
               "service at 80 server connections per pool.\n- Zhao wants release forms "
               "submitted one day ahead, not on the morning itself.\n")
    digest = dream(tmp_path, {"daily/2026-02-06/pgbouncer pool exhaustion.md": INCIDENT,
                              "daily/2026-02-11/sync.md": meeting})
    incident = [p for p, t in digest.items()
                if "pgbouncer pool exhaustion.md]]" in t.split("## Sources")[-1]]
    pool = [p for p, t in digest.items() if "80 server connections" in t]
    assert incident and pool and not set(incident) & set(pool)
    assert any(f"[[{p}" in digest[pool[0]].split("## Sources")[0] for p in incident), \
        digest[pool[0]]
