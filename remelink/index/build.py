"""Full builds of the node index: read, parse, analyse and write every digest node (SPEC §5).

The nodes are split into contiguous runs in path order, balanced by bytes. With `procs=2` a
worker process reads, parses, analyses and encodes the first run while this process does the
second; this process then writes both into one Whoosh segment (`blocks.write_runs`). So every
phase but the final write runs on both cores, and the index is the one segment a one-process
build makes: document numbers, tie order and scores are the same, and queries do not pay for
a second segment (+15 % CPU per 10-word query and +30 % per 150-word one on the 10,000-node
benchmark vault, measured with one segment per process).

The worker is a fresh interpreter (`python -c ...`, running `_worker_main`), never a fork: the
index may be rebuilt inside a threaded `dream run`, and forking a process that holds other
threads' locks is unsafe. The worker writes nothing but its result file: it reports how many
documents its run holds as soon as it has read them (this process numbers its own documents
after them), then sends its encoded run. A worker that cannot start, fails or returns something
unreadable costs time, not documents: the whole build is then done here, with a notice.

Whoosh's lock is held by this process's writer throughout. Everything happens in a fresh
directory that the caller swaps in only after the commit, so a build that dies half-way leaves
nothing but a directory the next rebuild sweeps.
"""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import select
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from remelink.index.nodes import FileStat, read_node

# Below this many nodes a second process costs more than it saves (a worker takes about
# 0.2 s of CPU to start: interpreter, Whoosh, PyYAML).
PARALLEL_MIN = 1200
WORKER_TIMEOUT = 600.0  # seconds; a worker this slow is stuck, and its run is built here
_JOB = "remelink-build-job.pickle"
_RESULT = "remelink-build-result.pickle"


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
    from remelink.index import blocks, engine

    ix = engine.create(directory)
    writer = engine.writer(ix, wait=wait)
    notices: list[str] = []
    try:
        with _gc_paused():
            if not blocks.supported(writer):  # another Whoosh: its own (slow) writer
                results = _whoosh_run(writer, files, digest, max_bytes)
            elif len(files) < PARALLEL_MIN or procs < 2:
                builder, results = read_run(writer.schema, files, digest, max_bytes)
                blocks.write_runs(writer, [builder.encode(lazy=True)])
            else:
                results = _two_runs(writer, directory, files, digest, max_bytes, notices)
            writer.commit(merge=False)
    except BaseException:
        with contextlib.suppress(Exception):
            writer.cancel()
        raise
    return Built(ix=ix, files=results, notices=notices)


def _two_runs(writer: Any, directory: Path, files: Sequence[tuple[str, FileStat]],
              digest: str, max_bytes: int, notices: list[str]) -> list[Indexed]:
    """The first run in a worker, the second here, both written into `writer`'s segment."""
    from remelink.index import blocks

    first, second = split(files, 2)
    worker = _Worker.start(directory, first, digest, max_bytes)
    try:
        builder, own = read_run(writer.schema, second, digest, max_bytes)
        count = worker.count()
        if isinstance(count, str):
            raise _WorkerFailed(count)
        mine = builder.encode(docbase=count)  # while the worker encodes its run
        got = worker.result()
        if isinstance(got, str):
            raise _WorkerFailed(got)
    except _WorkerFailed as failed:
        worker.stop()
        notices.append(f"parallel index build: {failed}; built in one process")
        builder, results = read_run(writer.schema, files, digest, max_bytes)
        blocks.write_runs(writer, [builder.encode(lazy=True)])
        return results
    except BaseException:
        worker.stop()
        raise
    theirs, their_results = got
    if theirs.count != count:
        raise RuntimeError("build worker changed its document count")
    blocks.write_runs(writer, [theirs, mine])
    return their_results + own


class _WorkerFailed(Exception):
    pass


def split(files: Sequence[tuple[str, FileStat]], parts: int) -> list[list[tuple[str, FileStat]]]:
    """`files` cut into `parts` contiguous runs of about equal bytes (fewer if there are
    fewer files; at least one run)."""
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


def read_run(schema: Any, run: Sequence[tuple[str, FileStat]], digest: str,
             max_bytes: int) -> tuple[Any, list[Indexed]]:
    """Read, parse and analyse every file of `run` into a SegmentBuilder."""
    from remelink.index import engine
    from remelink.index.segment import SegmentBuilder

    builder = SegmentBuilder(schema)
    out: list[Indexed] = []
    for rel, stat in run:
        result = read_node(rel, stat, digest, max_bytes)
        if result.doc is not None:
            builder.add(engine.fields_of(result.doc))
        out.append(Indexed(rel, result.fingerprint, result.doc is not None, result.notice))
    return builder, out


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


class _Worker:
    """The worker process that reads and encodes the first run."""

    def __init__(self, proc: subprocess.Popen[bytes] | None, job: Path, result: Path,
                 error: str | None = None) -> None:
        self.proc = proc
        self.job = job
        self.result_path = result
        self.error = error

    @classmethod
    def start(cls, directory: Path, run: Sequence[tuple[str, FileStat]], digest: str,
              max_bytes: int) -> _Worker:
        job = directory / _JOB
        result = directory / _RESULT
        payload = {"result": str(result), "digest": digest, "max_bytes": max_bytes,
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
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=str(directory))
        except OSError as exc:
            return cls(None, job, result, f"cannot start a worker ({exc.strerror or exc})")
        return cls(proc, job, result)

    def count(self) -> int | str:
        """How many documents the worker's run holds (it says so once it has read them), or
        why it will not say."""
        if self.error is not None or self.proc is None or self.proc.stdout is None:
            return self.error or "no worker"
        ready, _, _ = select.select([self.proc.stdout], [], [], WORKER_TIMEOUT)
        line = self.proc.stdout.readline() if ready else b""
        try:
            return int(line)
        except ValueError:
            return self._failure()

    def result(self) -> tuple[Any, list[Indexed]] | str:
        """(the worker's encoded Run, per-file results), or why there are none."""
        try:
            assert self.proc is not None
            try:
                self.proc.wait(timeout=WORKER_TIMEOUT)
            except subprocess.TimeoutExpired:
                return self._failure()
            if self.proc.returncode != 0:
                return self._failure()
            try:
                run, files = pickle.loads(self.result_path.read_bytes())
            except (OSError, pickle.UnpicklingError, EOFError, ValueError, TypeError,
                    AttributeError) as exc:
                return f"worker result unreadable ({type(exc).__name__})"
            return run, [Indexed(*f) for f in files]
        finally:
            self.stop()

    def _failure(self) -> str:
        """Why the worker failed (its exit code and last line of stderr)."""
        assert self.proc is not None
        if self.proc.poll() is None:
            self.stop()
            return f"worker gave no answer within {WORKER_TIMEOUT:g} s"
        err = self.proc.stderr.read() if self.proc.stderr is not None else b""
        lines = err.decode("utf-8", "replace").strip().splitlines()
        return f"worker exited {self.proc.returncode} ({lines[-1] if lines else 'no message'})"

    def stop(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                with contextlib.suppress(OSError):
                    self.proc.kill()
                with contextlib.suppress(Exception):
                    self.proc.wait(timeout=5)
            for stream in (self.proc.stdout, self.proc.stderr):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()
        for path in (self.job, self.result_path):
            with contextlib.suppress(OSError):
                path.unlink()


def _worker_main(job_path: str, expected_file: str) -> int:
    """Worker side: read, analyse and encode the job's run; say how many documents it holds
    as soon as that is known; save (Run, per-file results) for the parent."""
    gc.disable()  # a short-lived process that only allocates
    if str(Path(__file__).resolve()) != expected_file:
        print(f"worker imports remelink from {__file__}, not {expected_file}", file=sys.stderr)
        return 3
    from remelink.index import engine

    job = pickle.loads(Path(job_path).read_bytes())
    run = [(rel, FileStat(disk, mtime, size)) for rel, disk, mtime, size in job["files"]]
    builder, results = read_run(engine.schema(), run, job["digest"], job["max_bytes"])
    print(builder.count, flush=True)
    encoded = builder.encode(docbase=0)
    out = Path(job["result"])
    tmp = out.with_suffix(".tmp")
    tmp.write_bytes(pickle.dumps(
        (encoded, [(r.path, r.fingerprint, r.indexed, r.notice) for r in results]),
        protocol=pickle.HIGHEST_PROTOCOL))
    os.replace(tmp, out)
    return 0
