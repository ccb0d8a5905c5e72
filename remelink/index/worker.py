"""The second process of a full build (see remelink/index/build.py).

The worker is a fresh interpreter (`python -c ...`, running `main`), never a fork: the index
may be rebuilt inside a threaded `dream run`, and forking a process that holds other threads'
locks is unsafe. It writes nothing to the index. It reads, parses and analyses its run of
nodes, then streams pickled messages on its stdout:

    ("count", n)                     as soon as its run is read (the parent numbers its own
                                     documents after these n)
    ("docs", records, results)       per-document records and per-file results
    ("terms", field, [TermPart...])  encoded terms in batches, fields and terms in order
    ("end",)

The parent merges the term batches into its segment as they come, so neither process holds
more than its own postings and a batch of the other's, and the pipe paces the worker. Every
read has a deadline: a worker that dies or stalls raises `WorkerFailed`, and the parent then
builds in one process.
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
from pathlib import Path
from typing import Any

from remelink.index.nodes import FileStat

TIMEOUT = 300.0  # seconds without a byte from the worker before it counts as stuck
BATCH = 2048  # terms per message
_JOB = "remelink-build-job.pickle"


class WorkerFailed(Exception):
    pass


class Worker:
    """A running worker and the stream of its messages."""

    def __init__(self, proc: subprocess.Popen[bytes], job: Path) -> None:
        self.proc = proc
        self.job = job
        assert proc.stdout is not None
        self._fd = proc.stdout.fileno()
        self._buf = bytearray()
        self._pending: Any = None

    @classmethod
    def start(cls, root: Path, folder: str, run: Sequence[tuple[str, FileStat]], digest: str,
              max_bytes: int) -> Worker:
        """Start a worker on `run`; its job file goes into the build's fresh folder
        `root/folder`, created exclusively through the vault boundary."""
        from remelink.errors import RemelinkError
        from remelink.vault import own

        if not sys.executable:  # an embedded interpreter: nothing to start
            raise WorkerFailed("no Python executable to start a worker with")
        directory = root / folder
        job = directory / _JOB
        payload = {"digest": digest, "max_bytes": max_bytes,
                   "files": [(rel, s.disk, s.mtime_ns, s.size) for rel, s in run]}
        # The worker must run this very code: the package's folder goes last on its path
        # (found when remelink is not installed, shadowing nothing when it is), and the
        # worker refuses to run if `remelink` resolves to another copy.
        here = str(Path(__file__).resolve())
        code = ("import sys\n"
                f"sys.path.append({str(Path(here).parents[2])!r})\n"
                "from remelink.index.worker import main\n"
                f"sys.exit(main(sys.argv[1], {here!r}))\n")
        try:
            own.create(root, f"{folder}/{_JOB}",
                       pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL), mode=0o600)
            proc = subprocess.Popen(
                [sys.executable, "-c", code, str(job)], stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=str(directory))
        except RemelinkError as exc:
            raise WorkerFailed(f"cannot start a worker ({exc})") from None
        except OSError as exc:
            with contextlib.suppress(OSError):
                job.unlink()
            raise WorkerFailed(f"cannot start a worker ({exc.strerror or exc})") from None
        return cls(proc, job)

    # -- the message stream -------------------------------------------------------------------
    def read(self, n: int) -> bytes:
        """File protocol for pickle.load: n bytes from the pipe, each wait bounded."""
        while len(self._buf) < n:
            ready, _, _ = select.select([self._fd], [], [], TIMEOUT)
            if not ready:
                raise WorkerFailed(self._why(f"no answer within {TIMEOUT:g} s"))
            chunk = os.read(self._fd, 1 << 20)
            if not chunk:
                raise WorkerFailed(self._why("its output ended early"))
            self._buf += chunk
        out = bytes(self._buf[:n])
        del self._buf[:n]
        return out

    def readline(self) -> bytes:
        out = bytearray()
        while not out.endswith(b"\n"):
            out += self.read(1)
        return bytes(out)

    def message(self) -> tuple[Any, ...]:
        if self._pending is not None:
            msg, self._pending = self._pending, None
            return msg  # type: ignore[no-any-return]
        try:
            msg = pickle.load(self)
        except WorkerFailed:
            raise
        except Exception as exc:
            raise WorkerFailed(self._why(f"unreadable output ({type(exc).__name__})")) from None
        if not isinstance(msg, tuple) or not msg:
            raise WorkerFailed("unexpected output")
        return msg

    def expect(self, kind: str) -> tuple[Any, ...]:
        msg = self.message()
        if msg[0] != kind:
            raise WorkerFailed(f"expected {kind!r}, got {msg[0]!r}")
        return msg

    def terms(self, field: str) -> Iterator[Any]:
        """The worker's encoded terms of `field` (fields must be asked for in sorted order,
        each read to its end)."""
        while True:
            msg = self.message()
            if msg[0] == "terms" and msg[1] == field:
                yield from msg[2]
                continue
            if msg[0] == "terms" and msg[1] < field:
                raise WorkerFailed(f"terms of {msg[1]!r} after {field!r}")
            self._pending = msg  # the next field's, or the end
            return

    def finish(self) -> None:
        self.expect("end")
        try:
            self.proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            raise WorkerFailed("did not exit") from None
        if self.proc.returncode != 0:
            raise WorkerFailed(self._why("failed"))

    def _why(self, what: str) -> str:
        """What went wrong, with the worker's exit code and last line of stderr if it died."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=2)  # its output may end a moment before it is reaped
        if self.proc.poll() is None:
            return f"worker: {what}"
        err = b""
        if self.proc.stderr is not None:
            with contextlib.suppress(OSError, ValueError):
                err = self.proc.stderr.read()
        lines = err.decode("utf-8", "replace").strip().splitlines()
        return f"worker exited {self.proc.returncode} ({lines[-1] if lines else what})"

    def stop(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(OSError):
                self.proc.kill()
            with contextlib.suppress(Exception):
                self.proc.wait(timeout=5)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        with contextlib.suppress(OSError):
            self.job.unlink()


def main(job_path: str, expected_file: str) -> int:
    """Worker side (see the module docstring)."""
    gc.disable()  # a short-lived process that only allocates
    if str(Path(__file__).resolve()) != expected_file:
        print(f"worker imports remelink from {__file__}, not {expected_file}", file=sys.stderr)
        return 3
    from remelink.index import engine
    from remelink.index.gather import read_run
    from remelink.index.runs import TermPart

    job = pickle.loads(Path(job_path).read_bytes())
    run = [(rel, FileStat(disk, mtime, size)) for rel, disk, mtime, size in job["files"]]
    schema = engine.schema()
    builder, results = read_run(schema, run, job["digest"], job["max_bytes"])
    out = sys.stdout.buffer

    def send(*msg: Any) -> None:
        out.write(pickle.dumps(msg, protocol=pickle.HIGHEST_PROTOCOL))

    send("count", builder.count)
    out.flush()
    send("docs", builder.docs,
         [(r.path, r.fingerprint, r.indexed, r.notice) for r in results])
    run_ = builder.encode(docbase=0, lazy=True)
    for name in sorted(run_.fields):
        batch: list[TermPart] = []
        for part in run_.fields[name]:
            batch.append(part)
            if len(batch) >= BATCH:
                send("terms", name, batch)
                batch = []
        if batch:
            send("terms", name, batch)
    send("end")
    out.flush()
    return 0
