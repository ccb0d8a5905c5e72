"""Full builds write Whoosh's own format (remelink/index/segment.py, blocks.py): for any
documents, the segment written from one run is byte for byte the one Whoosh's `add_document` +
`commit` writes; written from several runs (a two-process build), it holds every posting and
term statistic Whoosh's does; and `analysis.index_counts` counts exactly the terms
`iter_terms` yields."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from remelink.index import analysis, blocks, engine, segment
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


def whoosh_index(directory: Path, fields: list[dict[str, Any]]) -> Any:
    ix = engine.create(directory.parent, directory.name)
    w = engine.writer(ix, wait=1, bulk=False)  # Whoosh's own writer: the reference
    for f in fields:
        w.add_document(**f)
    w.commit()
    return ix


def builder_index(directory: Path, fields: list[dict[str, Any]], cuts: int = 1) -> Any:
    """The documents cut into `cuts` runs, each with its own builder (as build processes
    have), written as one segment."""
    ix = engine.create(directory.parent, directory.name)
    w = engine.writer(ix, wait=1)
    size = -(-len(fields) // cuts)
    runs, base = [], 0
    for lo in range(0, len(fields), size):
        builder = segment.SegmentBuilder(w.schema)
        for f in fields[lo:lo + size]:
            builder.add(f)
        runs.append(builder.encode(docbase=base))
        base += builder.count
    assert blocks.write_runs(w, runs) == len(fields)
    w.commit(merge=False)
    return ix


def build_both(tmp: Path, fields: list[dict[str, Any]]) -> tuple[dict[str, bytes],
                                                                 dict[str, bytes]]:
    whoosh_index(tmp / "whoosh", fields)
    builder_index(tmp / "builder", fields)
    return segment_files(tmp / "whoosh"), segment_files(tmp / "builder")


def decoded(ix: Any) -> dict[tuple[str, bytes], tuple[Any, ...]]:
    """Every term's statistics and postings, as Whoosh's reader returns them."""
    out = {}
    with ix.reader() as reader:
        for fieldname, btext in reader.all_terms():
            info = reader.term_info(fieldname, btext)
            m = reader.postings(fieldname, btext)
            postings = []
            while m.is_active():
                postings.append((m.id(), m.weight(), m.value()))
                m.next()
            out[(fieldname, btext)] = (
                info.weight(), info.doc_frequency(), info.min_length(), info.max_length(),
                info.max_weight(), info.min_id(), info.max_id(), tuple(postings))
        out[("", b"stored")] = tuple(reader.all_stored_fields())
        out[("", b"lengths")] = tuple(
            (reader.doc_field_length(n, "text"), reader.doc_field_length(n, "name"))
            for n in range(reader.doc_count_all()))
    return out


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


def test_builder_writes_whooshs_bytes_with_multi_block_terms(tmp_path: Path) -> None:
    items = corpus_fields(tmp_path / "vault", 400)
    whoosh, ours = build_both(tmp_path, items)
    assert set(ours) == set(whoosh) and len(whoosh["pst"]) > 100_000
    for name in whoosh:
        assert ours[name] == whoosh[name], name


@pytest.mark.parametrize("cuts", [2, 3])
def test_runs_written_as_one_segment_hold_whooshs_postings(tmp_path: Path, cuts: int) -> None:
    items = corpus_fields(tmp_path / "vault", 400)
    expected = decoded(whoosh_index(tmp_path / "whoosh", items))
    ours = builder_index(tmp_path / "builder", items, cuts)
    assert len(ours._segments()) == 1
    got = decoded(ours)
    assert got.keys() == expected.keys()
    multi = [k for k, v in expected.items() if k[0] and v[1] > 128]
    assert len(multi) > 20  # terms whose postings span blocks and runs
    for key in expected:
        assert got[key] == expected[key], key


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(docs, st.integers(min_value=2, max_value=4))
def test_any_runs_hold_whooshs_postings(tmp_path_factory: pytest.TempPathFactory,
                                        items: list[tuple[str, str, list[str], str]],
                                        cuts: int) -> None:
    tmp = tmp_path_factory.mktemp("runs")
    values = [fields(i, *item) for i, item in enumerate(items)]
    assert decoded(builder_index(tmp / "b", values, cuts)) == \
        decoded(whoosh_index(tmp / "w", values))


def test_write_runs_refuses_a_used_writer(tmp_path: Path) -> None:
    ix = engine.create(tmp_path, "ix")
    w = engine.writer(ix, wait=1)
    w.add_document(**fields(0, "a", "b", [], "c"))
    with pytest.raises(ValueError):
        blocks.write_runs(w, [segment.SegmentBuilder(w.schema).encode()])
    w.cancel()


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(
    [*"abcXYZ019 _-.'éü的了数据脱敏キャ한국\u3000ＡＢ\x1f\n", "\U00020001"]), max_size=80))
def test_index_counts_equal_iter_terms(value: str) -> None:
    assert analysis.index_counts(value) == Counter(analysis.iter_terms(value))


@given(st.text(max_size=60))
def test_index_counts_equal_iter_terms_any_text(value: str) -> None:
    assert analysis.index_counts(value) == Counter(analysis.iter_terms(value))
