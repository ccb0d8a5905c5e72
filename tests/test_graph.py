"""The file graph: outlinks, backlinks and dangling edges (SPEC §3.3)."""

from __future__ import annotations

from pathlib import Path

from conftest import VaultFactory

from remelink.vault.graph import FileGraph


def build(make_vault: VaultFactory, mode: str = "path") -> tuple[Path, FileGraph]:
    root = make_vault({
        "daily/a.md": "See [[digest/wiki/x.md]] and [[digest/wiki/x.md#Part]] and "
                      "[[digest/wiki/x.md|again]].\n```\n[[digest/wiki/in-code.md]]\n```\n",
        "digest/wiki/x.md": "---\nrelated: '[[daily/not-an-edge.md]]'\n---\n"
                            "Body cites [[daily/a.md]] and [[digest/wiki/later.md]].\n",
        "resource/r.md": "![[digest/wiki/x.md]]\n",
        "bad.md": b"\x00\x01binary",
    })
    return root, FileGraph.build(root, mode)


def test_outlinks_are_deduplicated_edges_with_positions(make_vault: VaultFactory) -> None:
    _, graph = build(make_vault)
    edges = graph.out("daily/a.md")
    assert [(e.target, e.anchor, e.resolved, e.line, e.col) for e in edges] == [
        ("digest/wiki/x.md", None, True, 1, 5),
        ("digest/wiki/x.md", "Part", True, 1, 30),
    ]


def test_backlinks(make_vault: VaultFactory) -> None:
    _, graph = build(make_vault)
    assert graph.back("digest/wiki/x.md") == ["daily/a.md", "resource/r.md"]
    assert graph.back("daily/a.md") == ["digest/wiki/x.md"]
    assert graph.back("daily/not-an-edge.md") == []  # frontmatter is not scanned


def test_unreadable_notes_are_recorded_not_fatal(make_vault: VaultFactory) -> None:
    _, graph = build(make_vault)
    assert "binary" in graph.unreadable["bad.md"]
    assert graph.out("bad.md") == []


def test_dangling_edge_becomes_real_when_the_file_appears(make_vault: VaultFactory) -> None:
    root, graph = build(make_vault)
    (dangling,) = graph.dangling()
    assert (dangling.source, dangling.target, dangling.resolved) == \
        ("digest/wiki/x.md", "digest/wiki/later.md", False)
    assert graph.back("digest/wiki/later.md") == ["digest/wiki/x.md"]
    (root / "digest/wiki/later.md").write_text("Back to [[digest/wiki/x.md]].\n")
    graph.file_added("digest/wiki/later.md")
    assert list(graph.dangling()) == []
    later = [e for e in graph.out("digest/wiki/x.md") if e.target == "digest/wiki/later.md"]
    assert later[0].resolved
    assert graph.back("digest/wiki/x.md") == ["daily/a.md", "digest/wiki/later.md",
                                              "resource/r.md"]


def test_real_edge_dangles_again_when_the_file_goes(make_vault: VaultFactory) -> None:
    root, graph = build(make_vault)
    (root / "resource/r.md").unlink()
    graph.file_removed("resource/r.md")
    assert graph.back("digest/wiki/x.md") == ["daily/a.md"]
    (root / "daily/a.md").unlink()
    graph.file_removed("daily/a.md")
    dangling = {(e.source, e.target) for e in graph.dangling()}
    assert ("digest/wiki/x.md", "daily/a.md") in dangling
    assert graph.back("daily/a.md") == ["digest/wiki/x.md"]  # kept as a dangling edge


def test_obsidian_mode_edges_resolve_names(make_vault: VaultFactory) -> None:
    root = make_vault({"daily/a.md": "[[X]] and [[missing]]\n", "digest/wiki/x.md": "x\n"})
    graph = FileGraph.build(root, "obsidian")
    assert [(e.target, e.resolved) for e in graph.out("daily/a.md")] == [
        ("digest/wiki/x.md", True), ("missing", False)]
    (root / "digest/wiki/missing.md").write_text("")
    graph.file_added("digest/wiki/missing.md")
    assert [(e.target, e.resolved) for e in graph.out("daily/a.md")] == [
        ("digest/wiki/x.md", True), ("digest/wiki/missing.md", True)]
    # A second file with the same name makes the link ambiguous: it dangles again.
    (root / "daily/X.md").write_text("")
    graph.file_added("daily/X.md")
    first = graph.out("daily/a.md")[0]
    assert (first.target, first.resolved) == ("X", False)


def test_update_rereads_one_note(make_vault: VaultFactory) -> None:
    root, graph = build(make_vault)
    (root / "resource/r.md").write_text("Now [[daily/a.md]] only.\n")
    graph.update("resource/r.md")
    assert graph.back("digest/wiki/x.md") == ["daily/a.md"]
    assert graph.back("daily/a.md") == ["digest/wiki/x.md", "resource/r.md"]
