"""Full builds of the node index: read, parse, analyse and write every digest node (SPEC §5).

The nodes are split into two contiguous runs in path order, balanced by bytes. A worker
process (remelink/index/worker.py) reads, parses, analyses and encodes the first run while this
process does the second; this process then writes both into one Whoosh segment
(`blocks.write_runs`), merging the worker's encoded terms as they arrive. So every phase but
the final write runs on both cores, and the index is the one segment a one-process build
makes: the same document numbers, tie order and scores, and queries do not pay for a second
segment (+15 % CPU per 10-word query and +30 % per 150-word one on the 10,000-node benchmark
vault, measured with one segment per process).

A worker that cannot start, fails or stalls costs time, not documents: the build is then done
in this process, with a notice. Small vaults (under PARALLEL_MIN nodes), one-core machines and
`store.BUILD_PROCS = 1` build in this process only.

Whoosh's lock is held by this process's writer throughout. Everything happens in a fresh
directory that the caller swaps in only after the commit, so a build that dies half-way leaves
nothing but a directory the next rebuild sweeps.
"""

from __future__ import annotations

import contextlib
import gc
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from remelink.index.gather import Indexed, read_run
from remelink.index.nodes import FileStat, read_node
from remelink.index.worker import Worker, WorkerFailed

# Below this many nodes a second process costs more than it saves (a worker takes about
# 0.2 s of CPU to start: interpreter, Whoosh, PyYAML).
PARALLEL_MIN = 1200
# The worker's share of the bytes: this process also writes every document's record, merges
# and writes all terms and commits, so an even split left the worker idle a third of the
# time (6,500-node benchmark vault: 5.3 s of CPU here, 3.5 s in the worker).
WORKER_SHARE = 0.62


@dataclass(frozen=True)
class Built:
    ix: Any  # the committed Whoosh index
    files: list[Indexed]
    notices: list[str]

    # Documents in the index, when a file can give more than one (the passage index); None:
    # one per indexed file.
    document_count: int | None = None

    @property
    def doc_count(self) -> int:
        """Files indexed."""
        return sum(1 for f in self.files if f.indexed)

    @property
    def documents(self) -> int:
        return self.doc_count if self.document_count is None else self.document_count


def default_procs() -> int:
    """Two build processes when this process may run on two or more cores."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return 2 if cores >= 2 else 1


def build(root: Path, folder: str, files: Sequence[tuple[str, FileStat]], digest: str,
          max_bytes: int, *, wait: float, procs: int = 1) -> Built:
    """Create a Whoosh index in the folder `root/folder` (new, empty) holding every indexable
    file."""
    from remelink.index import blocks, engine

    ix = engine.create(root, folder)
    writer = engine.writer(ix, wait=wait)
    notices: list[str] = []
    try:
        with _gc_paused():
            if not blocks.supported(writer):  # another Whoosh: its own (slow) writer
                results = _whoosh_run(writer, files, digest, max_bytes)
            elif len(files) < PARALLEL_MIN or procs < 2:
                results = _one_run(writer, files, digest, max_bytes)
            else:
                failed = None
                try:
                    results = _two_runs(writer, root, folder, files, digest, max_bytes)
                except WorkerFailed as exc:
                    failed = str(exc)  # (outside this block the traceback, which holds
                    # this process's postings, is gone before the one-process build)
                if failed is not None:
                    notices.append(f"parallel index build: {failed}; built in one process")
                    writer.cancel()  # what it wrote is not in any TOC; the commit sweeps it
                    writer = engine.writer(ix, wait=wait)
                    results = _one_run(writer, files, digest, max_bytes)
            writer.commit(merge=False)
    except BaseException:
        with contextlib.suppress(Exception):
            writer.cancel()
        raise
    return Built(ix=ix, files=results, notices=notices)


def _one_run(writer: Any, files: Sequence[tuple[str, FileStat]], digest: str,
             max_bytes: int) -> list[Indexed]:
    from remelink.index import blocks

    builder, results = read_run(writer.schema, files, digest, max_bytes)
    blocks.write_runs(writer, [builder.encode(lazy=True)])
    return results


def _two_runs(writer: Any, root: Path, folder: str, files: Sequence[tuple[str, FileStat]],
              digest: str, max_bytes: int) -> list[Indexed]:
    """The first run in a worker, the second here, merged into `writer`'s segment as the
    worker's encoded terms arrive (see remelink/index/worker.py)."""
    from remelink.index import blocks
    from remelink.index.runs import Run

    first, second = split(files, WORKER_SHARE)
    worker = Worker.start(root, folder, first, digest, max_bytes)
    try:
        builder, own = read_run(writer.schema, second, digest, max_bytes)
        count = worker.expect("count")[1]
        _, docs, theirs = worker.expect("docs")
        if not isinstance(count, int) or len(docs) != count:
            raise WorkerFailed("inconsistent document count")
        mine = builder.encode(docbase=count, lazy=True)
        streamed = Run(count, docs, {name: worker.terms(name) for name in mine.fields})
        blocks.write_runs(writer, [streamed, mine])
        worker.finish()
    finally:
        worker.stop()
    return [Indexed(*f) for f in theirs] + own


def split(files: Sequence[tuple[str, FileStat]], share: float
          ) -> tuple[list[tuple[str, FileStat]], list[tuple[str, FileStat]]]:
    """`files` cut in two contiguous runs, the first holding about `share` of the bytes."""
    files = list(files)
    total = sum(stat.size for _, stat in files)
    acc = 0
    for i, (_, stat) in enumerate(files):
        if acc >= share * total:
            return files[:i], files[i:]
        acc += stat.size
    return files, []


def _whoosh_run(writer: Any, run: Sequence[tuple[str, FileStat]], digest: str,
                max_bytes: int) -> list[Indexed]:
    """Every file through Whoosh's own `add_document` (a codec blocks.py does not know)."""
    from remelink.index import engine

    out: list[Indexed] = []
    for rel, stat in run:
        result = read_node(rel, stat, digest, max_bytes)
        if result.doc is not None:
            writer.add_document(**engine.fields_of(result.doc))
        out.append(Indexed(rel, result.fingerprint, result.doc is not None, result.notice))
    return out


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while millions of small lists are created (none of them
    is garbage; the collector only walks them): 10-15 % of a build's CPU."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
