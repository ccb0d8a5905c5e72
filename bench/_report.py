"""Shared helpers for benchmark scripts: timing, machine facts, and writing a section of
docs/benchmarks.md between `<!-- bench:NAME -->` and `<!-- /bench:NAME -->` markers."""

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


def machine() -> str:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
            f"load average {load:.1f} at start, {time.strftime('%Y-%m-%d')}")


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


def write_section(name: str, markdown: str, command: str) -> None:
    """Replace (or append) this benchmark's section of docs/benchmarks.md."""
    DOC.parent.mkdir(parents=True, exist_ok=True)
    text = DOC.read_text(encoding="utf-8") if DOC.exists() else "# Benchmarks\n\n"
    body = (f"<!-- bench:{name} -->\n{markdown.rstrip()}\n\nProduced by `{command}` on "
            f"{machine()}.\n<!-- /bench:{name} -->")
    pattern = re.compile(rf"<!-- bench:{re.escape(name)} -->.*?<!-- /bench:{re.escape(name)} -->",
                         re.S)
    if pattern.search(text):
        text = pattern.sub(lambda _: body, text)
    else:
        text = text.rstrip() + "\n\n" + body + "\n"
    DOC.write_text(text, encoding="utf-8")


def python() -> str:
    return sys.executable
