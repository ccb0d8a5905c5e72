"""Full builds write Whoosh's own format (remelink/index/segment.py): for any documents, the
segment SegmentBuilder writes is byte for byte the one Whoosh's `add_document` + `commit`
writes, through the fast encoder and through the codec's per-posting API alike; and
`analysis.index_counts` counts exactly the terms `iter_terms` yields."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from remelink.index import analysis, engine, segment
from remelink.index.nodes import NodeDoc

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import search_corpus

WORDS = ["key", "keys", "policy", "policies", "class", "classes", "deploy", "Café", "café",
         "Ｐｙｔｈｏｎ", "status", "x" * 70, "2026", "idempotency", "alice", "的", "数据脱敏规则",
         "学习了Python编程", "キャッシュ", "한국어", "脱敏", "_", "-", "a.b", "\x1f", "", " "]
text = st.lists(st.sampled_from(WORDS), max_size=25).map(" ".join)
docs = st.lists(st.tuples(text, text, st.lists(text, max_size=3), text), min_size=1,
                max_size=12)


def segment_files(directory: Path) -> dict[str, bytes]:
    """A segment's files keyed by what follows the segment id (`.pst`, `._stored.col`, ...)."""
    out = {}
    for path in directory.iterdir():
        if path.name.startswith("MAIN_") and path.suffix != ".toc" and "." in path.name:
            out[path.name.split(".", 1)[1]] = path.read_bytes()
    return out


def build_both(tmp: Path, fields: list[dict[str, Any]],
               monkeypatch: pytest.MonkeyPatch | None = None,
               api: bool = False) -> tuple[dict[str, bytes], dict[str, bytes]]:
    a, b = tmp / "whoosh", tmp / "builder"
    ix = engine.create(a)
    w = engine.writer(ix, wait=1)
    for f in fields:
        w.add_document(**f)
    w.commit()
    ix2 = engine.create(b)
    w2 = engine.writer(ix2, wait=1)
    builder = segment.SegmentBuilder(w2)
    for f in fields:
        builder.add(f)
    if api:
        assert monkeypatch is not None
        monkeypatch.setattr(segment, "_fast_codec", lambda writer: False)
    assert builder.finish() == len(fields)
    w2.commit(merge=False)
    return segment_files(a), segment_files(b)


def fields(i: int, name: str, description: str, tags: list[str], body: str) -> dict[str, Any]:
    doc = NodeDoc(path=f"digest/wiki/n{i:04d}.md", bucket=("wiki", "personal")[i % 2],
                  name=name, description=description, memory_tags=tuple(tags), body=body,
                  fingerprint=f"{i:032x}")
    return engine.fields_of(doc)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(docs)
def test_builder_writes_whooshs_bytes(tmp_path_factory: pytest.TempPathFactory,
                                      items: list[tuple[str, str, list[str], str]]) -> None:
    tmp = tmp_path_factory.mktemp("seg")
    whoosh, ours = build_both(tmp, [fields(i, *item) for i, item in enumerate(items)])
    assert set(ours) == set(whoosh)
    for name in whoosh:
        assert ours[name] == whoosh[name], name


def corpus_fields(root: Path, n: int) -> list[dict[str, Any]]:
    """n nodes of the benchmark corpus: enough documents for terms with several blocks of
    postings (more than 128 documents), English, Chinese and mixed."""
    from remelink.index.nodes import read_node, scan_digest

    search_corpus.generate(root, n, 42)
    out = []
    for rel, stat in sorted(scan_digest(root, "digest").items()):
        doc = read_node(rel, stat, "digest", 1 << 20).doc
        assert doc is not None
        out.append(engine.fields_of(doc))
    return out


@pytest.mark.parametrize("api", [False, True], ids=["encoder", "codec-api"])
def test_builder_writes_whooshs_bytes_with_multi_block_terms(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, api: bool) -> None:
    items = corpus_fields(tmp_path / "vault", 400)
    whoosh, ours = build_both(tmp_path, items, monkeypatch, api=api)
    assert set(ours) == set(whoosh) and len(whoosh["pst"]) > 100_000
    for name in whoosh:
        assert ours[name] == whoosh[name], name


def test_builder_refuses_a_used_writer(tmp_path: Path) -> None:
    ix = engine.create(tmp_path)
    w = engine.writer(ix, wait=1)
    w.add_document(**fields(0, "a", "b", [], "c"))
    with pytest.raises(ValueError):
        segment.SegmentBuilder(w)
    w.cancel()


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(
    [*"abcXYZ019 _-.'éü的了数据脱敏キャ한국\u3000ＡＢ\x1f\n", "\U00020001"]), max_size=80))
def test_index_counts_equal_iter_terms(value: str) -> None:
    assert analysis.index_counts(value) == Counter(analysis.iter_terms(value))


@given(st.text(max_size=60))
def test_index_counts_equal_iter_terms_any_text(value: str) -> None:
    assert analysis.index_counts(value) == Counter(analysis.iter_terms(value))
