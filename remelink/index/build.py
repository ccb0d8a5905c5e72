"""Full builds of the node index: read, parse, analyse and write every digest node (SPEC §5).

The nodes are split into contiguous runs (in path order, balanced by bytes); each run becomes
one Whoosh segment written by `segment.SegmentBuilder`. With `procs=2` a worker process reads
and indexes the first run while this process does the second, so reading, frontmatter
parsing, analysis and writing all happen on both cores; the segments are left unmerged (a
merge would cost as much as the build) and committed together in one TOC, in path order, so
document numbers and therefore tie order are those of a one-process build.

The worker is a fresh interpreter (`python -c ...`, running `_worker_main`), never a fork: the
index may be rebuilt inside a threaded `dream run`, and forking a process that holds other
threads' locks is unsafe. A worker that cannot start or fails costs time, not documents: its
run is then built here, and the failure is reported as a notice.

Whoosh's own lock is held by this process's writer throughout; the worker writes its
segment's files without one (as Whoosh's multiprocessing writer does). Everything happens in
a fresh directory that the caller swaps in only after the commit, so a build that dies
half-way leaves nothing but a directory the next rebuild sweeps.
"""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from remelink.index.nodes import FileStat, read_node

# Below this many nodes a second process costs more than it saves (a worker takes about
# 0.2 s of CPU to start: interpreter, Whoosh, PyYAML).
PARALLEL_MIN = 1200
WORKER_TIMEOUT = 600.0  # seconds; a worker this slow is stuck, and its run is built here
_JOB = "remelink-build-job-{}.pickle"
_RESULT = "remelink-build-result-{}.pickle"


@dataclass(frozen=True, slots=True)
class Indexed:
    """What the manifest and the notices need to know about one file of a build."""

    path: str
    fingerprint: str
    indexed: bool
    notice: str | None


@dataclass(frozen=True)
class Built:
    ix: Any  # the committed Whoosh index
    files: list[Indexed]
    segments: int
    notices: list[str]

    @property
    def doc_count(self) -> int:
        return sum(1 for f in self.files if f.indexed)


def default_procs() -> int:
    """Two build processes when this process may run on two or more cores."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return 2 if cores >= 2 else 1


def build(directory: Path, files: Sequence[tuple[str, FileStat]], digest: str,
          max_bytes: int, *, wait: float, procs: int = 1) -> Built:
    """Create a Whoosh index in `directory` (new, empty) holding every indexable file."""
    from remelink.index import engine

    ix = engine.create(directory)
    writer = engine.writer(ix, wait=wait)
    runs = split(files, procs if len(files) >= PARALLEL_MIN else 1)
    workers: list[_Worker] = []
    try:
        with _gc_paused():
            workers = [_Worker.start(directory, n, run, digest, max_bytes)
                       for n, run in enumerate(runs[:-1])]
            own = index_run(writer, runs[-1], digest, max_bytes)
            segments: list[Any] = []
            results: list[Indexed] = []
            notices: list[str] = []
            for worker, run in zip(workers, runs[:-1], strict=True):
                got = worker.result()
                if isinstance(got, str):  # the worker failed: index its run here
                    notices.append(f"parallel index build: {got}; built in one process")
                    got = _index_run_here(ix, run, digest, max_bytes)
                segment, run_results = got
                if segment.doc_count_all():
                    segments.append(segment)
                results += run_results
            results += own
            writer.commit(mergetype=lambda _writer, _old: list(segments))
    except BaseException:
        for worker in workers:
            worker.stop()
        with contextlib.suppress(Exception):
            writer.cancel()
        raise
    return Built(ix=ix, files=results, segments=len(ix._segments()), notices=notices)


def split(files: Sequence[tuple[str, FileStat]], parts: int) -> list[list[tuple[str, FileStat]]]:
    """`files` cut into `parts` contiguous runs of about equal bytes (at least one run)."""
    files = list(files)
    if parts <= 1 or len(files) < parts:
        return [files]
    total = sum(stat.size for _, stat in files) or 1
    runs: list[list[tuple[str, FileStat]]] = [[]]
    acc = 0
    for item in files:
        if acc >= total * len(runs) / parts and len(runs) < parts:
            runs.append([])
        runs[-1].append(item)
        acc += item[1].size
    return [run for run in runs if run]


def index_run(writer: Any, run: Sequence[tuple[str, FileStat]], digest: str,
              max_bytes: int) -> list[Indexed]:
    """Read and add every file of `run` to `writer` (a SegmentWriter on an empty index) and
    write its postings; the caller commits or finalises the segment."""
    from remelink.index import engine
    from remelink.index.segment import SegmentBuilder

    builder = SegmentBuilder(writer)
    out: list[Indexed] = []
    for rel, stat in run:
        result = read_node(rel, stat, digest, max_bytes)
        if result.doc is not None:
            builder.add(engine.fields_of(result.doc))
        out.append(Indexed(rel, result.fingerprint, result.doc is not None, result.notice))
    builder.finish()
    return out


def _index_run_here(ix: Any, run: Sequence[tuple[str, FileStat]], digest: str,
                    max_bytes: int) -> tuple[Any, list[Indexed]]:
    """A run as its own segment, built in this process (`_lk=False`: the caller's writer
    holds the lock)."""
    from remelink.index import engine

    sub = engine.sub_writer(ix)
    try:
        results = index_run(sub, run, digest, max_bytes)
        return sub._finalize_segment(), results
    except BaseException:
        with contextlib.suppress(Exception):
            sub._close_segment()
        raise


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


class _Worker:
    """One worker process building one run into its own segment."""

    def __init__(self, proc: subprocess.Popen[bytes] | None, job: Path, result: Path,
                 error: str | None = None) -> None:
        self.proc = proc
        self.job = job
        self.result_path = result
        self.error = error

    @classmethod
    def start(cls, directory: Path, number: int, run: Sequence[tuple[str, FileStat]],
              digest: str, max_bytes: int) -> _Worker:
        job = directory / _JOB.format(number)
        result = directory / _RESULT.format(number)
        payload = {"directory": str(directory), "result": str(result), "digest": digest,
                   "max_bytes": max_bytes,
                   "files": [(rel, s.disk, s.mtime_ns, s.size) for rel, s in run]}
        # The worker must run this very code: the package's folder goes last on its path
        # (found when remelink is not installed, shadowing nothing when it is), and the
        # worker refuses to run if `remelink` resolves to another copy.
        here = str(Path(__file__).resolve())
        code = ("import sys\n"
                f"sys.path.append({str(Path(here).parents[2])!r})\n"
                "from remelink.index.build import _worker_main\n"
                f"sys.exit(_worker_main(sys.argv[1], {here!r}))\n")
        try:
            job.write_bytes(pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL))
            proc = subprocess.Popen(
                [sys.executable, "-c", code, str(job)], stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=str(directory))
        except OSError as exc:
            return cls(None, job, result, f"cannot start a worker ({exc.strerror or exc})")
        return cls(proc, job, result)

    def result(self) -> tuple[Any, list[Indexed]] | str:
        """(segment, per-file results), or why there are none."""
        try:
            if self.error is not None or self.proc is None:
                return self.error or "no worker"
            try:
                _, err = self.proc.communicate(timeout=WORKER_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.stop()
                return f"worker timed out after {WORKER_TIMEOUT:g} s"
            if self.proc.returncode != 0:
                lines = err.decode("utf-8", "replace").strip().splitlines()
                return f"worker exited {self.proc.returncode} ({lines[-1] if lines else ''})"
            try:
                segment, files = pickle.loads(self.result_path.read_bytes())
            except (OSError, pickle.UnpicklingError, EOFError, ValueError, TypeError) as exc:
                return f"worker result unreadable ({type(exc).__name__})"
            return segment, [Indexed(*f) for f in files]
        finally:
            self._cleanup()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(OSError):
                self.proc.kill()
            with contextlib.suppress(Exception):
                self.proc.wait(timeout=5)
        self._cleanup()

    def _cleanup(self) -> None:
        for path in (self.job, self.result_path):
            with contextlib.suppress(OSError):
                path.unlink()


def _worker_main(job_path: str, expected_file: str) -> int:
    """Worker side: build the job's run into a new segment of the job's index and save
    (segment, results) for the parent. The parent holds the index's lock."""
    gc.disable()  # a short-lived process that only allocates
    started = time.perf_counter()
    if str(Path(__file__).resolve()) != expected_file:
        print(f"worker imports remelink from {__file__}, not {expected_file}", file=sys.stderr)
        return 3
    from whoosh import index as windex

    job = pickle.loads(Path(job_path).read_bytes())
    directory = Path(job["directory"])
    ix = windex.open_dir(str(directory))
    from remelink.index import engine

    sub = engine.sub_writer(ix)
    run = [(rel, FileStat(disk, mtime, size)) for rel, disk, mtime, size in job["files"]]
    results = index_run(sub, run, job["digest"], job["max_bytes"])
    segment = sub._finalize_segment()
    out = Path(job["result"])
    tmp = out.with_suffix(".tmp")
    tmp.write_bytes(pickle.dumps(
        (segment, [(r.path, r.fingerprint, r.indexed, r.notice) for r in results]),
        protocol=pickle.HIGHEST_PROTOCOL))
    os.replace(tmp, out)
    if os.environ.get("REMELINK_BUILD_TRACE"):
        print(f"worker: {len(run)} files in {time.perf_counter() - started:.2f} s",
              file=sys.stderr)
    return 0

