"""`remelink search` (SPEC §5.1): passages of every note, both languages, filters, link
expansion, freshness, concurrency, the vault boundary, and the CLI."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import VaultFactory
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from remelink.cli import app
from remelink.config import load_settings
from remelink.errors import UsageError
from remelink.index import NodeIndex
from remelink.index.store import PASSAGES_DIR
from remelink.search import PassageIndex, search
from remelink.search.passages import split
from remelink.search.reading import day_of

runner = CliRunner()


def node(name: str, description: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}\n"


ROLLBACK = """# Ledger API rollback

## Context
We ship ledger-api twice a week.

## Rollback
1. Run `kubectl rollout undo deploy/ledger-api`.
2. Check the error rate for ten minutes.
"""

FILES: dict[str, str | bytes] = {
    "daily/2026-06-01/ledger.md": ROLLBACK,
    "daily/2026-06-10/status.md": "# Weekly sync\n\nPriya wants short written status updates "
                                  "every Friday, not meetings.\n",
    "daily/2026-06-12/checks.md": "# What I checked\n\nWhat did I check today? What else?\n",
    "daily/2026-06-15/脱敏.md": "# 数据脱敏\n\n## 决定\n"
                              "所有写入日志的手机号必须先脱敏，只保留后四位。\n",
    "resource/guide.md": "# Style guide\n\nUse British spelling in user-facing text.\n",
    "digest/procedure/roll-back-ledger-api.md": node(
        "Roll back ledger-api", "How to undo a bad ledger-api deploy.",
        "Run the rollout undo and watch the error rate. See also "
        "[[digest/wiki/deploy-cadence.md]].\n\n## Sources\n"
        "- The steps come from [[daily/2026-06-01/ledger.md#L6-L7]].\n"
        "- The context is in [[daily/2026-06-01/ledger.md#Context]]."),
    "digest/wiki/deploy-cadence.md": node(
        "Deploy cadence", "ledger-api ships twice a week.",
        "We deploy twice a week.\n\n## Sources\n- Stated in [[daily/2026-06-01/ledger.md]]."),
    "digest/personal/日志脱敏.md": node("日志脱敏", "日志里的手机号只保留后四位。",
                                     "手机号只保留后四位。\n\n## Sources\n"
                                     "- 来自 [[daily/2026-06-15/脱敏.md]] 的决定。"),
}


@pytest.fixture
def vault(make_vault: VaultFactory) -> Path:
    return make_vault(FILES)


def paths(vault: Path, query: str, **kw: Any) -> list[str]:
    return [h.hit.path for h in search(vault, load_settings(vault), query, **kw).hits]


def test_finds_passages_in_every_folder(vault: Path) -> None:
    assert paths(vault, "how do I roll back ledger-api")[:2] == [
        "digest/procedure/roll-back-ledger-api.md", "daily/2026-06-01/ledger.md"]
    assert paths(vault, "British spelling") == ["resource/guide.md"]


def test_the_hit_is_the_section_with_its_line_range(vault: Path) -> None:
    hits = search(vault, load_settings(vault), "kubectl rollout undo", folder="daily").hits
    h = hits[0]
    assert (h.hit.path, h.hit.start, h.hit.end) == ("daily/2026-06-01/ledger.md", 6, 8)
    assert h.passage.startswith("## Rollback\n1. Run `kubectl rollout undo")
    assert h.hit.heading == "Ledger API rollback > Rollback"
    lines = (vault / h.hit.path).read_text().splitlines()
    assert h.passage == "\n".join(lines[5:8])


def test_chinese_and_mixed_queries(vault: Path) -> None:
    assert paths(vault, "手机号怎么脱敏？")[:2] == ["daily/2026-06-15/脱敏.md",
                                                "digest/personal/日志脱敏.md"] or \
        set(paths(vault, "手机号怎么脱敏？")[:2]) == {"daily/2026-06-15/脱敏.md",
                                                  "digest/personal/日志脱敏.md"}
    assert paths(vault, "ledger-api 回滚 kubectl")[0] == "daily/2026-06-01/ledger.md"


def test_function_words_do_not_drown_the_question(vault: Path) -> None:
    found = paths(vault, "what does Priya want for status updates")
    assert found[0] == "daily/2026-06-10/status.md"
    assert "daily/2026-06-12/checks.md" not in found
    # A query of nothing but function words still finds what has them.
    assert paths(vault, "what") == ["daily/2026-06-12/checks.md"]


def test_date_and_folder_filters(vault: Path) -> None:
    q = "ledger-api deploy rollback status 脱敏 spelling"
    assert set(paths(vault, q, limit=20, since="2026-06-10")) == {
        "daily/2026-06-10/status.md", "daily/2026-06-15/脱敏.md"}
    assert set(paths(vault, q, limit=20, until="2026-06-09")) == {"daily/2026-06-01/ledger.md"}
    assert set(paths(vault, q, limit=20, since="2026-06-10", until="2026-06-10")) == {
        "daily/2026-06-10/status.md"}
    assert set(paths(vault, q, limit=20, folder="digest")) == {
        "digest/procedure/roll-back-ledger-api.md", "digest/wiki/deploy-cadence.md",
        "digest/personal/日志脱敏.md"}
    assert paths(vault, q, limit=20, folder="resource") == ["resource/guide.md"]
    with pytest.raises(UsageError, match="since must be a date"):
        search(vault, load_settings(vault), "x", since="June")
    with pytest.raises(UsageError, match="after until"):
        search(vault, load_settings(vault), "x", since="2026-06-02", until="2026-06-01")
    with pytest.raises(UsageError, match="in must be one of"):
        search(vault, load_settings(vault), "x", folder="notes")


def test_day_of_path() -> None:
    assert day_of("daily/2026-06-01/x.md") == "2026-06-01"
    assert day_of("daily/2026-06-01.md") == "2026-06-01"
    assert day_of("resource/2026-06-01/spec.txt") == "2026-06-01"
    assert day_of("resource/spec.md") is None
    assert day_of("digest/wiki/2026-06-01.md") is None  # digest nodes have no date


def test_link_expansion(vault: Path) -> None:
    hits = search(vault, load_settings(vault), "roll back ledger-api", folder="digest").hits
    h = next(x for x in hits if x.hit.path == "digest/procedure/roll-back-ledger-api.md")
    assert h.name == "Roll back ledger-api"
    assert [n.path for n in h.outlinks] == ["digest/wiki/deploy-cadence.md"]
    assert h.outlinks[0].description == "ledger-api ships twice a week."
    src = {(c.path, c.anchor): c for c in h.sources}
    steps = src[("daily/2026-06-01/ledger.md", "L6-L7")]
    assert steps.says == "The steps come from daily/2026-06-01/ledger.md."
    assert steps.passage == "## Rollback\n1. Run `kubectl rollout undo deploy/ledger-api`."
    assert steps.lines == (6, 7)
    context = src[("daily/2026-06-01/ledger.md", "Context")]
    assert context.passage == "## Context\nWe ship ledger-api twice a week."
    # in-links: the daily note is cited by both digest nodes
    raw = search(vault, load_settings(vault), "kubectl rollout undo", folder="daily").hits[0]
    assert [n.path for n in raw.inlinks] == ["digest/procedure/roll-back-ledger-api.md",
                                             "digest/wiki/deploy-cadence.md"]
    assert raw.inlinks_total == 2
    bare = search(vault, load_settings(vault), "roll back ledger-api", links=False).hits[0]
    assert bare.outlinks == bare.inlinks == bare.sources == []


def test_json_envelope_and_text(vault: Path) -> None:
    result = runner.invoke(app, ["search", "roll back ledger-api", "--json", "--vault",
                                 str(vault), "--limit", "2"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert (doc["ok"], doc["command"], doc["counts"], doc["errors"]) == (
        True, "search", {"hits": 2}, [])
    first = doc["data"]["hits"][0]
    assert set(first) >= {"path", "lines", "score", "name", "heading", "passage", "links"}
    assert first["links"]["sources"][0]["passage"].startswith("## Rollback")
    text = runner.invoke(app, ["search", "roll back ledger-api", "--vault", str(vault)])
    assert text.stdout.startswith("digest/procedure/roll-back-ledger-api.md:5-5  [")
    assert "  sources:\n    daily/2026-06-01/ledger.md#L6-L7: The steps come from" in text.stdout
    bad = runner.invoke(app, ["search", "x", "--in", "nowhere", "--json", "--vault",
                              str(vault)])
    assert bad.exit_code == 2
    assert json.loads(bad.stdout)["errors"] == [
        "in must be one of daily, resource, digest, got 'nowhere'"]
    none = runner.invoke(app, ["search", "zzzqqq", "--vault", str(vault)])
    assert none.exit_code == 0 and none.stdout == ""
    assert "no note matches 'zzzqqq'" in none.stderr


def test_incremental_freshness(vault: Path) -> None:
    s = load_settings(vault)
    with PassageIndex(vault, s) as index:
        assert index.refresh().rebuilt
        assert index.refresh().touched == 0
        (vault / "daily/2026-06-20").mkdir()
        (vault / "daily/2026-06-20/new.md").write_text("# Zebra migration\n\nThe zebras moved.\n")
        stats = index.refresh()
        assert (stats.added, stats.changed, stats.removed, stats.rebuilt) == (1, 0, 0, False)
        assert [h.path for h in index.search("zebras")] == ["daily/2026-06-20/new.md"]
        note = vault / "resource/guide.md"
        note.write_text("# Style guide\n\nUse American spelling now.\n")
        os.utime(note, ns=(time.time_ns() + 5_000_000_000,) * 2)
        stats = index.refresh()
        assert (stats.added, stats.changed, stats.removed) == (0, 1, 0)
        assert [h.path for h in index.search("American")] == ["resource/guide.md"]
        assert index.search("British") == []
        (vault / "daily/2026-06-20/new.md").unlink()
        assert index.refresh().removed == 1
        assert index.search("zebras") == []
        # in-links follow the change of the note that links
        info = index.backlinks("digest/wiki/deploy-cadence.md", 5)
        assert [n.path for n in info[0]] == ["digest/procedure/roll-back-ledger-api.md"]
        p = vault / "digest/procedure/roll-back-ledger-api.md"
        p.write_text(p.read_text().replace("See also [[digest/wiki/deploy-cadence.md]].", ""))
        os.utime(p, ns=(time.time_ns() + 6_000_000_000,) * 2)
        index.refresh()
        assert index.backlinks("digest/wiki/deploy-cadence.md", 5) == ([], 0)


def test_node_index_rebuild_keeps_the_passage_index(vault: Path) -> None:
    s = load_settings(vault)
    with PassageIndex(vault, s) as index:
        index.refresh()
    marker = json.loads((vault / PASSAGES_DIR / "remelink-format.json").read_text())
    with NodeIndex(vault, s) as nodes:
        nodes.rebuild()
    assert json.loads((vault / PASSAGES_DIR / "remelink-format.json").read_text()) == marker
    with PassageIndex(vault, s) as index:
        assert not index.refresh().rebuilt
    result = runner.invoke(app, ["index", "rebuild", "--vault", str(vault), "--json"])
    counts = json.loads(result.stdout)["counts"]
    assert counts == {"indexed": 3, "skipped": 0, "notes_indexed": 8, "notes_skipped": 0}


def test_concurrent_refresh_and_search(vault: Path) -> None:
    """Threads of one index and a second index (as a second process would) writing notes,
    refreshing and searching at once: no error, and every note ends up found."""
    s = load_settings(vault)
    errors: list[BaseException] = []
    shared = PassageIndex(vault, s)
    (vault / "daily/2026-07-01").mkdir()

    def writer(k: int) -> None:
        try:
            other = PassageIndex(vault, s)
            for i in range(6):
                (vault / f"daily/2026-07-01/w{k}-{i}.md").write_text(
                    f"# Note {k} {i}\n\nquokka{k}x{i} observed.\n")
                other.search(f"quokka{k}x{i}")
                shared.search("ledger-api rollback")
            other.close()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for k in range(3):
        for i in range(6):
            assert [h.path for h in shared.search(f"quokka{k}x{i}")] == [
                f"daily/2026-07-01/w{k}-{i}.md"]
    shared.close()


def test_the_vault_boundary(make_vault: VaultFactory, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("# Secret\n\nplatypus secret outside the vault\n")
    vault = make_vault({"daily/2026-06-01/a.md": "# A\n\nplatypus inside\n"})
    (vault / "daily/2026-06-01/link.md").symlink_to(outside)
    os.mkfifo(vault / "daily/2026-06-01/pipe.md")
    (vault / ".remelink/index").mkdir(parents=True, exist_ok=True)
    found = paths(vault, "platypus secret")
    assert found == ["daily/2026-06-01/a.md"]


def test_bad_notes_are_reported_not_fatal(make_vault: VaultFactory) -> None:
    vault = make_vault({"daily/2026-06-01/a.md": "---\nname: [unclosed\n---\n# A\n\nwombat\n",
                        "daily/2026-06-01/b.md": b"\x00\x01binary wombat",
                        "daily/2026-06-01/c.md": b"# C\n\nwombat caf\xe9\n"})
    result = search(vault, load_settings(vault), "wombat")
    assert sorted(h.hit.path for h in result.hits) == ["daily/2026-06-01/a.md",
                                                      "daily/2026-06-01/c.md"]
    text = " ".join(result.notices)
    assert "indexed without its frontmatter" in text and "not valid UTF-8" in text
    assert "daily/2026-06-01/b.md" in text


def test_limits(vault: Path) -> None:
    with pytest.raises(UsageError, match="limit must be"):
        search(vault, load_settings(vault), "x", limit=0)
    with pytest.raises(UsageError, match="limit must be"):
        search(vault, load_settings(vault), "x", limit=51)
    assert search(vault, load_settings(vault), "   ").hits == []


lines_st = st.lists(st.one_of(
    st.sampled_from(["", "# Title", "## Section", "### Sub", "## Sources", "```", "text",
                     "- item [[daily/x.md]]", "a longer line of prose " * 8]),
    st.text(alphabet="ab #`\n中文", max_size=30)), max_size=60)


@settings(max_examples=200, deadline=None)
@given(lines_st, st.booleans(), st.integers(min_value=1, max_value=5))
def test_passages_are_ordered_in_range_and_cover_the_text(lines: list[str], digest: bool,
                                                         first: int) -> None:
    body = "\n".join(lines)
    count = len(body.splitlines())
    passages = split(body, first, digest=digest, window=120, max_section=200)
    last = first - 1
    for p in passages:
        assert first <= p.start <= p.end < first + count
        assert p.start > last  # in order, no overlap
        last = p.end
        file_lines = body.splitlines()
        assert p.text == "\n".join(file_lines[p.start - first:p.end - first + 1])
    if not digest:  # every non-blank line outside a bare heading is in some passage
        covered = {n for p in passages for n in range(p.start, p.end + 1)}
        for i, line in enumerate(body.splitlines()):
            if line.strip() and not line.lstrip().startswith("#"):
                assert first + i in covered, (i, line)


def test_a_long_lived_index_rechecks_at_most_every_recheck_seconds(vault: Path) -> None:
    with PassageIndex(vault, load_settings(vault), recheck=3600) as index:
        assert index.search("kubectl")
        new = vault / "daily/2026-06-01/later.md"
        new.write_text("# Later\n\naardvark sighting\n")
        assert index.search("aardvark") == []  # checked less than an hour ago
        index.update(["daily/2026-06-01/later.md"])  # what the server wrote itself
        assert [h.path for h in index.search("aardvark")] == ["daily/2026-06-01/later.md"]
        new.unlink()
        index.refresh()
        assert index.search("aardvark") == []
    with PassageIndex(vault, load_settings(vault), recheck=0) as index:
        index.search("kubectl")
        new.write_text("# Later\n\naardvark again\n")
        assert [h.path for h in index.search("aardvark")] == ["daily/2026-06-01/later.md"]


def test_a_node_rebuild_never_waits_long_for_a_busy_passage_index(vault: Path) -> None:
    from remelink.vault.fsio import file_lock

    s = load_settings(vault)
    with PassageIndex(vault, s) as index:  # built before any node index exists
        assert index.refresh().rebuilt
    assert not (vault / ".remelink/index/remelink-format.json").exists()
    with file_lock(vault / ".remelink/passages.lock", what="index"):  # a long passage build
        started = time.perf_counter()
        with NodeIndex(vault, s) as nodes:
            assert nodes.rebuild().added == 3
        assert time.perf_counter() - started < 8
    assert not (vault / PASSAGES_DIR).exists()  # left behind: derived, rebuilt when missing
    with PassageIndex(vault, s) as index:
        stats = index.refresh()
        assert stats.rebuilt and "passage index missing" in stats.notices[0]
        assert index.search("kubectl")
    assert not list((vault / ".remelink").glob("passages.new-*"))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("abcXYZ _-.?的了是状态更新怎么我们脱敏Ωé1 \n")),
               max_size=40))
def test_query_terms_are_node_search_terms(text: str) -> None:
    """The query side only weighs terms: it never makes a term node_search's analysis would
    not make, and it keeps every one of them."""
    from remelink.index import analysis
    from remelink.search.query import query_terms

    got = query_terms(text)
    assert [t.term for t in got] == list(dict.fromkeys(analysis.terms(text, query=True)))
    assert all(t.count >= 1 and 0 < t.factor <= 1 for t in got)
