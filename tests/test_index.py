"""NodeIndex (SPEC §5): search in English, Chinese and mixed text, hostile queries, bucket
filter, limit bounds, incremental refresh and update, unreadable nodes, Unicode paths."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import VaultFactory, tree_bytes

from remelink.config import Settings, load_settings
from remelink.errors import UsageError
from remelink.index import INDEX_DIR, Hit, NodeIndex, node_search
from remelink.index.core import FORMAT_FILE

SETTINGS = Settings()


def node(name: str, description: str, body: str = "", tags: list[str] | None = None) -> str:
    tag_line = f"memory_tags: [{', '.join(tags)}]\n" if tags is not None else ""
    return (f"---\nname: {name}\ndescription: {description}\n{tag_line}---\n# {name}\n\n"
            f"{body}\n\n## Sources\n\n- Seen in [[daily/2026-06-01/a.md]].\n")


NODES = {
    "digest/wiki/idempotency-keys.md": node(
        "Idempotency keys", "Retries are safe when every request carries an idempotency key.",
        "A client sends the same key on retry; the server returns the stored response.",
        ["Stripe"]),
    "digest/procedure/deploy-checklist.md": node(
        "Deploy checklist", "The steps before a production deploy.",
        "1. Run the migrations. 2. Check the error budget. 3. Announce in the channel."),
    "digest/personal/review-style.md": node(
        "Review style", "Alice prefers small pull requests.",
        "Why: large reviews hide bugs. How to apply: split changes above 400 lines.",
        ["Alice", "Acme_Corp"]),
    "digest/wiki/数据脱敏规则.md": node(
        "数据脱敏规则", "导出数据前必须对手机号和身份证号做脱敏处理。",
        "脱敏规则：手机号保留前三位和后四位，身份证号只保留后四位。"),
    "digest/wiki/python-learning.md": node(
        "学习笔记", "我在周末学习了Python编程。", "学习了Python编程，重点是异步和类型标注。"),
    "digest/procedure/密钥轮换.md": node(
        "密钥轮换流程", "每二十四小时轮换一次访问密钥。",
        "轮换步骤：生成新密钥，更新配置，吊销旧密钥。"),
}


@pytest.fixture
def vault(make_vault: VaultFactory) -> Path:
    return make_vault(dict(NODES))


@pytest.fixture
def index(vault: Path) -> NodeIndex:
    ix = NodeIndex(vault, SETTINGS, wait=2.0)
    yield ix
    ix.close()


def paths(hits: list[Hit]) -> list[str]:
    return [h.path for h in hits]


def test_first_search_builds_the_index_and_returns_hits(vault: Path) -> None:
    assert not (vault / INDEX_DIR).exists()
    hits = node_search(vault, SETTINGS, "idempotency key retries")
    assert hits[0].path == "digest/wiki/idempotency-keys.md"
    assert hits[0] == Hit(path="digest/wiki/idempotency-keys.md", score=hits[0].score,
                          name="Idempotency keys",
                          description="Retries are safe when every request carries an "
                                      "idempotency key.",
                          bucket="wiki", memory_tags=("Stripe",))
    assert hits[0].score > 0
    assert (vault / INDEX_DIR / FORMAT_FILE).is_file()
    assert all(a.score >= b.score for a, b in itertools.pairwise(hits))


@pytest.mark.parametrize(("query", "expected"), [
    ("deploy", "digest/procedure/deploy-checklist.md"),
    ("Deploying CHECKLISTS", "digest/procedure/deploy-checklist.md"),
    ("small pull requests", "digest/personal/review-style.md"),
    ("脱敏", "digest/wiki/数据脱敏规则.md"),
    ("数据脱敏规则", "digest/wiki/数据脱敏规则.md"),
    ("手机号", "digest/wiki/数据脱敏规则.md"),
    ("python", "digest/wiki/python-learning.md"),
    ("学习了Python编程", "digest/wiki/python-learning.md"),
    ("密钥", "digest/procedure/密钥轮换.md"),
    ("轮换访问密钥的流程", "digest/procedure/密钥轮换.md"),
    ("alice", "digest/personal/review-style.md"),
    ("acme", "digest/personal/review-style.md"),  # a tag, split at `_`
    ("stripe", "digest/wiki/idempotency-keys.md"),  # a tag
])
def test_english_chinese_mixed_and_tags(index: NodeIndex, query: str, expected: str) -> None:
    assert paths(index.search(query))[0] == expected


def test_name_and_description_outrank_the_body(make_vault: VaultFactory) -> None:
    root = make_vault({
        "digest/wiki/a.md": node("Canary release", "Ship to a small share of users first."),
        "digest/wiki/b.md": node("Feature flags", "Turn code paths on and off.",
                                 "Used together with a canary release; canary rollouts "
                                 "need flags."),
    })
    with NodeIndex(root, SETTINGS) as ix:
        assert paths(ix.search("canary release")) == ["digest/wiki/a.md", "digest/wiki/b.md"]


@pytest.mark.parametrize("query", [
    "a:b", "(", ")", "AND", "OR NOT", '"', '"unclosed', "*", "key*", "name:deploy", "[[x]]",
    "deploy AND (checklist OR", "\x00", "\\", "~2", "^3", "{}", "title:", "-deploy",
])
def test_hostile_queries_never_raise(index: NodeIndex, query: str) -> None:
    hits = index.search(query)
    assert isinstance(hits, list)
    if query in ("name:deploy", "-deploy", "deploy AND (checklist OR"):
        assert paths(hits)[0] == "digest/procedure/deploy-checklist.md"


def test_blank_and_huge_queries(index: NodeIndex) -> None:
    assert index.search("") == []
    assert index.search("   \n\t") == []
    assert index.search("☃ ✓ —") == []  # no terms at all
    huge = ("deploy checklist migrations " * 400)[:10_240]
    assert paths(index.search(huge))[0] == "digest/procedure/deploy-checklist.md"
    assert isinstance(index.search("x" * 10_240), list)


def test_bucket_filter(index: NodeIndex) -> None:
    everything = index.search("密钥 deploy 脱敏 review", limit=100)
    assert {h.bucket for h in everything} == {"procedure", "wiki", "personal"}
    for bucket in ("procedure", "personal", "wiki"):
        hits = index.search("密钥 deploy 脱敏 review", bucket=bucket)
        assert hits and all(h.bucket == bucket for h in hits)
        assert all(h.path.startswith(f"digest/{bucket}/") for h in hits)


def test_limit_bounds(index: NodeIndex) -> None:
    assert len(index.search("的 the", limit=1)) == 1
    assert len(index.search("的 the a 数据 key", limit=100)) <= 100
    for bad in (0, 101, -1):
        with pytest.raises(UsageError, match="limit"):
            index.search("deploy", limit=bad)
    with pytest.raises(UsageError, match="bucket"):
        index.search("deploy", bucket="digest")


def test_refresh_is_incremental(vault: Path, index: NodeIndex) -> None:
    first = index.refresh()
    assert first.rebuilt and first.added == len(NODES)
    again = index.refresh()
    assert (again.added, again.changed, again.removed, again.unchanged) == (0, 0, 0, len(NODES))
    assert not again.rebuilt

    # add
    (vault / "digest/wiki/rate-limits.md").write_text(
        node("Rate limits", "Token buckets smooth bursts.", "Each tenant has a bucket."),
        encoding="utf-8")
    # change
    (vault / "digest/procedure/deploy-checklist.md").write_text(
        node("Deploy checklist", "The steps before a production deploy.",
             "1. Freeze the zebra pipeline."), encoding="utf-8")
    # delete
    (vault / "digest/personal/review-style.md").unlink()
    stats = index.refresh()
    assert (stats.added, stats.changed, stats.removed) == (1, 1, 1)
    assert stats.unchanged == len(NODES) - 2
    assert paths(index.search("token bucket bursts"))[0] == "digest/wiki/rate-limits.md"
    assert paths(index.search("zebra"))[0] == "digest/procedure/deploy-checklist.md"
    assert index.search("migrations") == []  # the old body is gone
    assert "digest/personal/review-style.md" not in paths(index.search("alice small reviews"))


def test_same_size_same_mtime_edit_is_seen(vault: Path, index: NodeIndex) -> None:
    """A file rewritten within the racy window keeps mtime and size; its hash is checked."""
    index.refresh()
    path = vault / "digest/wiki/idempotency-keys.md"
    st = path.stat()
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("stored", "cached"), encoding="utf-8")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size
    assert paths(index.search("cached response"))[0] == "digest/wiki/idempotency-keys.md"


def test_touch_without_change_is_not_reindexed(vault: Path, index: NodeIndex) -> None:
    index.refresh()
    path = vault / "digest/wiki/idempotency-keys.md"
    later = time.time_ns() + 5_000_000_000
    os.utime(path, ns=(later, later))
    stats = index.refresh()
    assert (stats.added, stats.changed, stats.removed) == (0, 0, 0)


def test_update_reindexes_and_drops(vault: Path, index: NodeIndex) -> None:
    index.refresh()
    new = "digest/wiki/backpressure.md"
    (vault / new).write_text(node("Queue backpressure", "Slow consumers push back."),
                             encoding="utf-8")
    index.update([new, "daily/2026-06-01/a.md", "digest/wiki/not-there.md"])
    assert paths(index.search("backpressure", refresh=False))[0] == new
    (vault / new).unlink()
    index.update([new])
    assert index.search("backpressure", refresh=False) == []
    stats = index.refresh()
    assert stats.touched == 0  # update() already recorded both changes


def test_search_without_refresh_does_not_scan(vault: Path, index: NodeIndex) -> None:
    index.refresh()
    (vault / "digest/wiki/late.md").write_text(node("Late node", "Zeppelin."), encoding="utf-8")
    assert index.search("zeppelin", refresh=False) == []
    assert paths(index.search("zeppelin"))[0] == "digest/wiki/late.md"


def test_unreadable_nodes_are_indexed_or_skipped_with_notices(make_vault: VaultFactory) -> None:
    root = make_vault({
        "digest/wiki/good.md": node("Good node", "Fine."),
        "digest/wiki/bad-yaml.md": "---\nname: [unclosed\ndescription: x\n---\n# Walrus notes\n\n"
                                   "The walrus body is still searchable.\n",
        "digest/wiki/binary.md": b"\x00\x01\x02walrus\x00" * 50,
        "digest/wiki/latin1.md": "---\nname: Caf\xe9 walrus\ndescription: d\n---\nbody\n"
                                 .encode("latin-1"),
        "digest/wiki/empty.md": "",
        "digest/wiki/big.md": "walrus " * 300_000,
    })
    settings = Settings(max_note_bytes=1024 * 1024)
    with NodeIndex(root, settings) as ix:
        stats = ix.refresh()
        text = "\n".join(stats.notices)
        assert "digest/wiki/bad-yaml.md" in text and "invalid YAML" in text
        assert "digest/wiki/binary.md" in text and "binary" in text
        assert "digest/wiki/latin1.md" in text and "UTF-8" in text
        assert "digest/wiki/big.md" in text and "MiB" in text
        assert stats.skipped == 2  # binary and big
        found = {h.path: h for h in ix.search("walrus", limit=50)}
        assert set(found) == {"digest/wiki/bad-yaml.md", "digest/wiki/latin1.md"}
        assert found["digest/wiki/bad-yaml.md"].name == "Walrus notes"
        # Unchanged bad files are not read (or reported) again.
        assert ix.refresh().notices == ()


def test_unicode_paths_nfc_and_nfd(make_vault: VaultFactory) -> None:
    nfd = "digest/wiki/Cafe\u0301 notes.md"  # NFD on disk, as macOS writes it
    root = make_vault({
        "digest/wiki/机器学习 笔记.md": node("机器学习", "神经网络的训练技巧。"),
        nfd: node("Café notes", "Espresso ratios."),
    })
    with NodeIndex(root, SETTINGS) as ix:
        assert paths(ix.search("神经网络")) == ["digest/wiki/机器学习 笔记.md"]
        hit = ix.search("espresso")[0]
        assert hit.path == "digest/wiki/Café notes.md"  # NFC in results
        assert hit.path != nfd
        (root / nfd).write_text(node("Café notes", "Pour-over ratios."), encoding="utf-8")
        ix.update([hit.path])  # callers pass the NFC path
        assert paths(ix.search("pour over", refresh=False)) == [hit.path]


def test_bucket_of_odd_locations(make_vault: VaultFactory) -> None:
    root = make_vault({
        "digest/top.md": node("Top level", "Kiwi."),
        "digest/archive/old.md": node("Archived", "Kiwi too."),
        "digest/wiki/.hidden.md": node("Hidden", "Kiwi hidden."),
        "digest/.obsidian/x.md": node("Editor", "Kiwi editor."),
        "daily/2026-06-01/a.md": node("Daily", "Kiwi daily."),
        "digest/wiki/notes.txt": "kiwi",
    })
    with NodeIndex(root, SETTINGS) as ix:
        hits = ix.search("kiwi")
        assert sorted(paths(hits)) == ["digest/archive/old.md", "digest/top.md"]
        assert {h.bucket for h in hits} == {"wiki"}


def test_configured_digest_folder(make_vault: VaultFactory) -> None:
    root = make_vault({
        ".remelink/config.yaml": "folders: {digest: knowledge}\n",
        "knowledge/wiki/a.md": node("Otter", "Otters hold hands."),
        "digest/wiki/b.md": node("Otter twin", "Not a node here."),
    })
    with NodeIndex(root, load_settings(root)) as ix:
        assert paths(ix.search("otter")) == ["knowledge/wiki/a.md"]


def test_vault_files_are_never_written(vault: Path) -> None:
    before = tree_bytes(vault)
    with NodeIndex(vault, SETTINGS) as ix:
        ix.search("deploy")
        ix.rebuild()
        ix.update(["digest/wiki/idempotency-keys.md"])
    after = tree_bytes(vault)
    assert {k: v for k, v in after.items() if not k.startswith(".remelink/")} == before


def test_analyze_idf_and_doc_frequency(index: NodeIndex) -> None:
    assert index.analyze("Idempotency Keys 脱敏") == ["idempotency", "key", "脱敏"]
    assert index.doc_frequency("key") >= 1
    assert index.doc_frequency("zzzz") == 0
    common = index.idf("the")
    rare = index.idf("idempotency")
    unseen = index.idf("zzzz")
    assert 0 < common < rare < unseen
    assert index.idf("脱敏") == pytest.approx(rare, rel=0.5)
    assert index.doc_count() == len(NODES)


def test_long_query_keeps_informative_terms(index: NodeIndex) -> None:
    summary = ("When a client retries a payment request the server must recognise the "
               "repeat by its idempotency key and answer with the stored response. " * 20)
    chosen = [t for t, _ in index.select_terms(summary)]
    assert "idempotency" in chosen
    assert paths(index.search(summary))[0] == "digest/wiki/idempotency-keys.md"


def test_import_does_not_load_whoosh() -> None:
    code = ("import sys, remelink.index, remelink.lint; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('whoosh', 'typer', 'rich', 'litellm')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


def test_two_process_build_gives_the_same_hits(vault: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A two-process build indexes the same nodes, scored alike, in one segment."""
    from remelink.index import build, store

    monkeypatch.setattr(store, "BUILD_PROCS", 1)
    with NodeIndex(vault, SETTINGS) as ix:
        ix.rebuild()
        expected = [(h.path, round(h.score, 6)) for h in ix.search("密钥 deploy alice")]
    monkeypatch.setattr(store, "BUILD_PROCS", 2)
    monkeypatch.setattr(build, "PARALLEL_MIN", 1)
    with NodeIndex(vault, SETTINGS) as ix:
        stats = ix.rebuild()
        assert stats.notices == ()  # no worker failure fell back to one process
        assert len(ix._store.ix._segments()) == 1
        assert ix.doc_count() == len(NODES)
        assert [(h.path, round(h.score, 6)) for h in ix.search("密钥 deploy alice")] == expected


def test_update_history_does_not_change_scores(make_vault: VaultFactory, tmp_path: Path) -> None:
    """Replaced versions of a node linger in Whoosh until a merge; statistics must ignore them,
    or a node updated three times would rank (and weigh its terms) differently from the same
    vault indexed fresh. (Scores agree to 1 %: Whoosh keeps a deleted node's length only as a
    one-byte approximation, which the average-length correction has to use; in this six-node
    vault that moves the average length by 0.9 %, less in larger vaults.)"""
    import shutil

    updated = make_vault(dict(NODES))
    target = "digest/wiki/idempotency-keys.md"
    with NodeIndex(updated, SETTINGS) as ix:
        ix.refresh()
        for i in range(3):
            (updated / target).write_text(
                node("Idempotency keys", f"Version {i} of the idempotency rule.",
                     "A client sends the same key on retry; zygote replay."), encoding="utf-8")
            ix.update([target])
        queries = ["idempotency key", "zygote replay", "密钥 deploy", "retry the same key"]
        after_updates = [ix.search(q, refresh=False) for q in queries]
        idf_after = ix.idf("zygote"), ix.idf("idempotency")
    fresh = tmp_path / "fresh"
    shutil.copytree(updated, fresh, ignore=shutil.ignore_patterns("index*"))
    with NodeIndex(fresh, SETTINGS) as ix:
        ix.rebuild()
        for q, before in zip(queries, after_updates, strict=True):
            hits = ix.search(q, refresh=False)
            assert paths(hits) == paths(before)
            assert [h.score for h in hits] == pytest.approx([h.score for h in before], rel=1e-2)
        assert (ix.idf("zygote"), ix.idf("idempotency")) == idf_after


def test_cached_field_lengths_score_as_whoosh_does(vault: Path, index: NodeIndex,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The scorer's per-segment length tables (engine._length_table) give exactly the scores
    of Whoosh's own per-posting column reads, over several segments with deletions."""
    from remelink.index import engine

    index.search("warm", limit=5)
    for i, rel in enumerate(["digest/wiki/idempotency-keys.md", "digest/wiki/数据脱敏规则.md"]):
        text = (vault / rel).read_text(encoding="utf-8")
        (vault / rel).write_text(text.replace("## Sources", f"Retry keys, 脱敏 {i}.\n\n## Sources"),
                                 encoding="utf-8")
        index.search("warm", limit=5)  # a one-node update: a new segment, an old version deleted
    queries = ["idempotency key retry", "脱敏 手机号", "Alice pull requests", "deploy steps key"]
    cached = [[(h.path, h.score) for h in index.search(q, limit=10)] for q in queries]
    assert any(hits for hits in cached) and engine._SEGMENT_LENGTHS
    monkeypatch.setattr(engine, "_length_table", lambda reader, fieldname: None)  # Whoosh reads
    plain = [[(h.path, h.score) for h in index.search(q, limit=10)] for q in queries]
    assert cached == plain
