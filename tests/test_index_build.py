"""Full builds (remelink/index/build.py): one segment and the same hits and scores whatever
the number of processes, a failed worker costs time and not documents, a build killed
at any point leaves the previous index in service, and reading a node never follows a symlink
out of the vault or blocks on a FIFO."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import VaultFactory

from remelink.config import Settings
from remelink.index import INDEX_DIR, NodeIndex, build, store, worker
from remelink.index.nodes import read_bytes, scan_digest

SETTINGS = Settings()
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench import search_corpus  # noqa: E402

QUERIES = [*search_corpus.queries(12), "学习了Python编程", "Whoosh"]


def hits(ix: NodeIndex) -> list[list[tuple[str, float]]]:
    return [[(h.path, round(h.score, 6)) for h in ix.search(q, refresh=False)] for q in QUERIES]


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    search_corpus.generate(root, 300, 7)
    return root


def test_processes_change_nothing(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(build, "PARALLEL_MIN", 1)
    results = {}
    for procs in (1, 2):
        monkeypatch.setattr(store, "BUILD_PROCS", procs)
        with NodeIndex(corpus, SETTINGS) as ix:
            stats = ix.rebuild()
            assert stats.notices == () and stats.added == 300
            assert len(ix._store.ix._segments()) == 1
            results[procs] = hits(ix)
    assert results[1] == results[2]
    assert sum(map(len, results[1])) > 50


def test_two_processes_with_unindexable_files(make_vault: VaultFactory,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Skipped files (binary, not UTF-8) in either run leave the numbering consistent."""
    files: dict[str, str | bytes] = {
        f"digest/wiki/n{i:02d}.md": f"---\nname: Node {i}\n---\nword{i} heron\n"
        for i in range(20)}
    files["digest/wiki/n03-binary.md"] = b"\x00\x01\x02binary"
    files["digest/wiki/n15-latin1.md"] = "---\nname: Caf\xe9\n---\nheron\n".encode("latin-1")
    root = make_vault(files)
    monkeypatch.setattr(build, "PARALLEL_MIN", 1)
    results = {}
    for procs in (1, 2):
        monkeypatch.setattr(store, "BUILD_PROCS", procs)
        with NodeIndex(root, SETTINGS) as ix:
            stats = ix.rebuild()
            assert stats.added == 21 and stats.skipped == 1
            results[procs] = ([(h.path, round(h.score, 6)) for h in ix.search("heron")],
                              [h.path for h in ix.search("word17")], stats.notices)
    assert results[1] == results[2] and results[1][1] == ["digest/wiki/n17.md"]


def test_another_whoosh_codec_builds_through_whooshs_own_writer(
        corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Whoosh whose codec the block encoder was not written against (e.g. the
    whoosh-reloaded fallback) gets the same index from Whoosh's own writer."""
    from remelink.index import blocks

    with NodeIndex(corpus, SETTINGS) as ix:
        ix.rebuild()
        expected = hits(ix)
    monkeypatch.setattr(blocks, "supported", lambda writer: False)
    monkeypatch.setattr(blocks, "write_runs", None)  # never reached
    with NodeIndex(corpus, SETTINGS) as ix:
        assert ix.rebuild().added == 300
        assert hits(ix) == expected


def test_split_keeps_path_order_and_shares_bytes(corpus: Path) -> None:
    files = sorted(scan_digest(corpus, "digest").items())
    for share in (0.5, 0.62):
        first, second = build.split(files, share)
        assert first + second == files and first and second
        size = sum(s.size for _, s in first) / sum(s.size for _, s in files)
        assert abs(size - share) < 0.02, (share, size)
    assert build.split([], 0.6) == ([], [])


def test_a_worker_that_cannot_start_costs_time_not_documents(
        corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store, "BUILD_PROCS", 1)
    with NodeIndex(corpus, SETTINGS) as ix:
        ix.rebuild()
        expected = hits(ix)
    monkeypatch.setattr(store, "BUILD_PROCS", 2)
    monkeypatch.setattr(build, "PARALLEL_MIN", 1)
    monkeypatch.setattr(sys, "executable", str(corpus / "no-such-python"))
    with NodeIndex(corpus, SETTINGS) as ix:
        stats = ix.rebuild()
        assert ix.doc_count() == 300 and hits(ix) == expected
        assert any("parallel index build: cannot start a worker" in n for n in stats.notices)


def test_a_worker_running_other_code_is_refused(corpus: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker must import this very remelink; if it finds another copy it exits and its
    run is built here (same documents, a notice)."""
    monkeypatch.setattr(store, "BUILD_PROCS", 2)
    monkeypatch.setattr(build, "PARALLEL_MIN", 1)
    monkeypatch.setattr(worker, "__file__", str(corpus / "elsewhere" / "remelink" / "index"
                                                / "worker.py"))
    with NodeIndex(corpus, SETTINGS) as ix:
        stats = ix.rebuild()
        assert ix.doc_count() == 300
        assert any("worker exited 3" in n for n in stats.notices), stats.notices
    assert not list((corpus / INDEX_DIR).glob("remelink-build-*"))


def test_a_worker_dying_mid_stream_costs_time_not_documents(
        corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker dies after this process has written part of the segment from its terms:
    that segment is dropped and the build redone here."""
    monkeypatch.setattr(store, "BUILD_PROCS", 1)
    with NodeIndex(corpus, SETTINGS) as ix:
        ix.rebuild()
        expected = hits(ix)
    monkeypatch.setattr(store, "BUILD_PROCS", 2)
    monkeypatch.setattr(build, "PARALLEL_MIN", 1)
    original = worker.Worker.terms
    fields: list[str] = []

    def die_on_second_field(self: worker.Worker, field: str) -> object:
        fields.append(field)
        if len(fields) == 3:  # bucket and name merged already
            self.proc.kill()
            self.proc.wait()
        return (yield from original(self, field))

    monkeypatch.setattr(worker.Worker, "terms", die_on_second_field)
    with NodeIndex(corpus, SETTINGS) as ix:
        stats = ix.rebuild()
        assert any("parallel index build: worker exited -9" in n for n in stats.notices), \
            stats.notices
        assert ix.doc_count() == 300 and hits(ix) == expected
        assert len(ix._store.ix._segments()) == 1
    names = [p.name for p in (corpus / INDEX_DIR).iterdir()]
    assert len({n.split(".")[0] for n in names if n.startswith("MAIN_") and
                not n.endswith("LOCK")}) == 1, names  # the dropped segment's files are gone
    assert not [n for n in names if n.startswith("remelink-build-")]


KILLED_BUILD = """
import sys
from pathlib import Path
from remelink.config import Settings
from remelink.index import NodeIndex, build, store
store.BUILD_PROCS = 2
build.PARALLEL_MIN = 1
print("start", flush=True)
with NodeIndex(Path(sys.argv[1]), Settings()) as ix:
    ix.rebuild()
print("done", flush=True)
"""


@pytest.mark.slow
def test_a_parallel_build_killed_leaves_the_previous_index(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    search_corpus.generate(root, 1500, 3)
    with NodeIndex(root, SETTINGS) as ix:
        ix.rebuild()
        before = hits(ix)
    inside = 0
    for delay in (0.2, 0.5, 0.9, 1.4):
        proc = subprocess.Popen([sys.executable, "-c", KILLED_BUILD, str(root)],
                                stdout=subprocess.PIPE, text=True, cwd=ROOT,
                                start_new_session=True)
        assert proc.stdout is not None and proc.stdout.readline().strip() == "start"
        time.sleep(delay)
        os.killpg(proc.pid, signal.SIGKILL)  # the builder and its worker
        proc.wait()
        inside += "done" not in proc.stdout.read()
        with NodeIndex(root, SETTINGS) as ix:
            assert ix._store.open() is None
            assert ix.doc_count() == 1500 and hits(ix) == before
            assert not ix.refresh().rebuilt
    assert inside >= 3, f"only {inside} of 4 kills landed inside the build"
    with NodeIndex(root, SETTINGS) as ix:
        ix.rebuild()  # sweeps what the killed builds left
        assert hits(ix) == before
    base = root / ".remelink"
    assert not [p for p in base.iterdir() if p.name.startswith(("index.new-", "index.old-"))]


def test_symlinks_out_of_the_vault_are_never_read(make_vault: VaultFactory,
                                                  tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("---\nname: Secret\n---\nplutonium recipe\n", encoding="utf-8")
    root = make_vault({"digest/wiki/inside.md": "---\nname: Inside\n---\nheron\n"})
    (root / "digest/wiki/out.md").symlink_to(secret)
    (root / "digest/wiki/alias.md").symlink_to(root / "digest/wiki/inside.md")
    with NodeIndex(root, SETTINGS) as ix:
        ix.rebuild()
        assert ix.search("plutonium") == []
        assert sorted(h.path for h in ix.search("heron")) == \
            ["digest/wiki/alias.md", "digest/wiki/inside.md"]


def test_read_bytes_refuses_special_files(tmp_path: Path) -> None:
    """A link is read through its target (the index walk lists only links whose real location
    is inside the vault: vault/boundary.py); a FIFO is refused at once, never waited on."""
    target = tmp_path / "t.md"
    target.write_bytes(b"x" * 10)
    link = tmp_path / "l.md"
    link.symlink_to(target)
    fifo = tmp_path / "f.md"
    os.mkfifo(fifo)
    assert read_bytes(str(target), 4) == b"xxxxx"  # at most max_bytes + 1
    assert read_bytes(str(link), 100) == b"x" * 10
    started = time.perf_counter()
    with pytest.raises(OSError):
        read_bytes(str(fifo), 100)
    assert time.perf_counter() - started < 1


def test_a_fifo_named_like_a_node_does_not_hang_a_build(make_vault: VaultFactory) -> None:
    root = make_vault({"digest/wiki/a.md": "---\nname: A\n---\nheron\n"})
    os.mkfifo(root / "digest/wiki/pipe.md")
    with NodeIndex(root, SETTINGS) as ix:
        ix.rebuild()
        assert [h.path for h in ix.search("heron")] == ["digest/wiki/a.md"]
