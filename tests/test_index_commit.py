"""Incremental commits through remelink/index/commit.py write the segments Whoosh's own writer
writes: for any sequence of commits (documents added, replaced and deleted, small segments
merged by Whoosh's policy), every segment file is byte for byte the one `engine.writer(...,
bulk=False)` writes, and the segments hold the same documents and deletions; so no score or
rank can move. Both the node index's schema and the passage index's."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from depth import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_index_segment import WORDS, fields

from remelink.index import commit, engine
from remelink.search import engine as passage_engine

text = st.lists(st.sampled_from(WORDS), max_size=25).map(" ".join)
doc = st.tuples(text, text, st.lists(text, max_size=3), text)
# One commit: documents (re)written by number, and numbers deleted.
step = st.tuples(st.lists(st.tuples(st.integers(0, 30), doc), max_size=4),
                 st.lists(st.integers(0, 30), max_size=2))


def segment_state(ix: Any) -> list[tuple[int, frozenset[int], dict[str, bytes]]]:
    """Per segment of the latest commit, in order: its document count, its deleted documents
    and its files keyed by what follows the segment id."""
    storage = ix.storage
    names = list(storage.list())
    out = []
    for seg in ix._segments():
        prefix = f"{seg.make_filename('')}"
        files = {name[len(prefix):]: storage.open_file(name).read()
                 for name in sorted(names) if name.startswith(prefix)}
        out.append((seg.doc_count_all(), frozenset(seg.deleted_docs()), files))
    return out


def apply(ix: Any, changes: list[tuple[int, dict[str, Any]]], deletes: list[int],
          bulk: bool) -> None:
    w = engine.writer(ix, wait=1, bulk=bulk)
    assert commit.supported(w)
    assert isinstance(w.pool, commit.TermPool) == bulk
    for _, f in changes:
        w.update_document(**f)
    for number in deletes:
        w.delete_by_term("path", f"digest/wiki/n{number:04d}.md")
    w.commit()


def both(tmp: Path, create: Any) -> tuple[Any, Any]:
    return create(tmp, "whoosh"), create(tmp, "bulk")


def check_same(stock: Any, bulk: Any) -> None:
    a, b = segment_state(stock), segment_state(bulk)
    assert [(n, d, sorted(f)) for n, d, f in a] == [(n, d, sorted(f)) for n, d, f in b]
    for (_, _, fa), (_, _, fb) in zip(a, b, strict=True):
        for name in fa:
            assert fa[name] == fb[name], name


@settings(max_examples=examples(8, 50), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.lists(step, min_size=1, max_size=10))
def test_commits_write_whooshs_segments(tmp_path_factory: pytest.TempPathFactory,
                                        steps: list[Any]) -> None:
    tmp = tmp_path_factory.mktemp("commits")
    stock, bulk = both(tmp, engine.create)
    for changes, deletes in steps:
        docs = [(n, fields(n, *d)) for n, d in changes]
        apply(stock, docs, deletes, bulk=False)
        apply(bulk, docs, deletes, bulk=True)
        check_same(stock, bulk)


def test_many_commits_with_merges_and_long_posting_lists(tmp_path: Path) -> None:
    """Forty commits of one to eight nodes over 300 node names: Whoosh merges small segments
    again and again, common terms have posting lists of several blocks (over 128 documents),
    and replaced nodes leave deletions in merged segments."""
    rng = random.Random(7)
    stock, bulk = both(tmp_path, engine.create)
    words = [w for w in WORDS if w.strip()]
    for _ in range(40):
        docs = []
        for _ in range(rng.randint(1, 8)):
            n = rng.randrange(300)
            parts = [" ".join(rng.choices(words, k=rng.randint(0, 12))) for _ in range(3)]
            body = " ".join(rng.choices(words + ["common"] * 4, k=rng.randint(1, 60)))
            docs.append((n, fields(n, parts[0], parts[1], [parts[2]], body)))
        deletes = [rng.randrange(300) for _ in range(rng.randint(0, 1))]
        apply(stock, docs, deletes, bulk=False)
        apply(bulk, docs, deletes, bulk=True)
        check_same(stock, bulk)
    assert len(stock._segments()) > 1


def passage_fields(rng: random.Random, n: int) -> dict[str, Any]:
    words = [w for w in WORDS if w.strip()]
    say = lambda k: " ".join(rng.choices(words, k=k))  # noqa: E731
    return {"path": f"daily/n{n:03d}.md", "kind": "note", "folder": "daily", "day": "2026-01-01",
            "start": 1, "end": 3, "heading": say(2), "name": say(2), "description": say(3),
            "links": [], "fingerprint": f"{n:032x}", "key": say(2), "links_to": say(1),
            "text": passage_engine.passage_text(say(2), say(3), say(2), say(20))}


def test_passage_index_commits_write_whooshs_segments(tmp_path: Path) -> None:
    rng = random.Random(11)
    stock, bulk = both(tmp_path, passage_engine.create)
    for _ in range(30):
        numbers = [rng.randrange(60) for _ in range(rng.randint(1, 5))]
        for ix, is_bulk in ((stock, False), (bulk, True)):
            w = engine.writer(ix, wait=1, bulk=is_bulk)
            for n in numbers:
                w.delete_by_term("path", f"daily/n{n:03d}.md")
                w.add_document(**passage_fields(random.Random(n * 1000 + len(numbers)), n))
            w.commit()
        check_same(stock, bulk)
    assert len(stock._segments()) > 1
