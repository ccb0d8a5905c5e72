"""Shared helpers for benchmark scripts: timing, machine facts, and writing a section of
docs/benchmarks.md between `<!-- bench:NAME -->` and `<!-- /bench:NAME -->` markers.

Every section records the command, the commit and the date it ran at (`write_section`), and the
index at the top of docs/benchmarks.md (between `<!-- bench-index -->` markers) is rebuilt from
those lines on every write: which section came from which run is read off the sections
themselves, never written by hand."""

from __future__ import annotations

import os
import platform
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "benchmarks.md"
SHARED_DATA = ROOT.parent / "shared" / "data"
OUT = ROOT / "bench" / "out"


def _load() -> float:
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


_START_LOAD = _load()  # a bench imports this module first: the load when it started


def machine() -> str:
    return (f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
            f"load average {_START_LOAD:.1f} at start, {_load():.1f} at the end, "
            f"{time.strftime('%Y-%m-%d')}")


def timeit(fn: Callable[[], object], repeat: int = 5) -> list[float]:
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def run_cmd(argv: list[str], repeat: int = 5, cwd: Path | None = None,
            env: dict[str, str] | None = None) -> list[float]:
    """Wall times of a whole process, `repeat` times."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - t)
    return times


def median(xs: list[float]) -> float:
    return statistics.median(xs)


def pct(xs: list[float], q: float) -> float:
    ys = sorted(xs)
    k = min(len(ys) - 1, max(0, round(q / 100 * (len(ys) - 1))))
    return ys[k]


def commit() -> str:
    """The commit the code under measurement is at: `abc1234`, with `+ uncommitted changes` when
    remelink/ or bench/ differ from it (a figure from a dirty tree is not reproducible)."""
    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True,
                              check=False)
        return done.stdout.strip() if done.returncode == 0 else ""

    head = git("rev-parse", "--short=7", "HEAD") or "unknown"
    dirty = git("status", "--porcelain", "--", "remelink", "bench", ":!bench/out")
    return f"{head} + uncommitted changes" if dirty else head


_START_COMMIT = commit()  # what the bench runs: the code as it was when it started


_SECTION = re.compile(r"<!-- bench:(?P<name>[\w-]+) -->\n(?P<body>.*?)<!-- /bench:(?P=name) -->",
                      re.S)
_PRODUCED = re.compile(r"Produced by `(?P<command>[^`]+)`(?: at commit `(?P<commit>[^`]+)`)? on "
                       r".*?load average (?P<load>[\d.]+) at start,(?: [\d.]+ at the end,)? "
                       r"(?P<date>\d{4}-\d{2}-\d{2})")
_INDEX = re.compile(r"<!-- bench-index -->.*?<!-- /bench-index -->", re.S)


def index(text: str) -> str:
    """The table of sections: title, command, commit and date, read off each section's own
    `Produced by` line."""
    rows = ["| section | written by | commit | date | load at start |", "|---|---|---|---|---|"]
    for m in _SECTION.finditer(text):
        body = m.group("body")
        title = next((ln.lstrip("#").strip() for ln in body.splitlines() if ln.startswith("#")),
                     m.group("name"))
        produced = list(_PRODUCED.finditer(body))
        if not produced:
            rows.append(f"| {title} | - | not recorded | - | - |")
            continue
        p = produced[-1]
        rows.append(f"| {title} | `{p.group('command')}` | "
                    f"{p.group('commit') or 'not recorded (before issue 25)'} | {p.group('date')} "
                    f"| {p.group('load')} |")
    return "<!-- bench-index -->\n" + "\n".join(rows) + "\n<!-- /bench-index -->"


def write_section(name: str, markdown: str, command: str) -> None:
    """Replace (or append) this benchmark's section of docs/benchmarks.md, stamped with the
    command, the commit and the date, and rebuild the index of sections."""
    import fcntl

    DOC.parent.mkdir(parents=True, exist_ok=True)
    OUT.mkdir(parents=True, exist_ok=True)
    with open(OUT / "benchmarks.lock", "w") as lock:  # benches may run side by side
        fcntl.flock(lock, fcntl.LOCK_EX)
        _write_section(name, markdown, command)
    print(f"wrote section {name!r} of {DOC}", flush=True)


def _write_section(name: str, markdown: str, command: str) -> None:
    text = DOC.read_text(encoding="utf-8") if DOC.exists() else "# Benchmarks\n\n"
    body = (f"<!-- bench:{name} -->\n{markdown.rstrip()}\n\nProduced by `{command}` at commit "
            f"`{_START_COMMIT}` on {machine()}.\n<!-- /bench:{name} -->")
    pattern = re.compile(rf"<!-- bench:{re.escape(name)} -->.*?<!-- /bench:{re.escape(name)} -->",
                         re.S)
    if pattern.search(text):
        text = pattern.sub(lambda _: body, text)
    else:
        text = text.rstrip() + "\n\n" + body + "\n"
    if _INDEX.search(text):
        text = _INDEX.sub(lambda _: index(text), text)
    DOC.write_text(text, encoding="utf-8")


def python() -> str:
    return sys.executable
