"""CPU seconds per test, for the test-time section of docs/benchmarks.md.

On a machine other agents load, a test's wall time says more about the load than about the
test; its CPU time (this process and the child processes it waited for) much less. As a pytest
plugin (`PYTHONPATH=bench python -m pytest -p pytest_cputime ...`, also under pytest-xdist: each
worker appends) it writes one JSON line per test to $CPUTIME_OUT (default
bench/out/cputime.jsonl): id, CPU seconds, wall seconds, whether it is in the slow tier.
`python bench/pytest_cputime.py FILE...` sums them: total, per file, the dearest tests.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent / "out" / "cputime.jsonl"


def _cpu() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


try:
    import pytest
except ImportError:  # pragma: no cover - the summary needs no pytest
    pytest = None  # type: ignore[assignment]

if pytest is not None:
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item: Any, nextitem: Any) -> Iterator[None]:
        cpu, wall = _cpu(), time.perf_counter()
        yield
        cpu, wall = _cpu() - cpu, time.perf_counter() - wall
        out = Path(os.environ.get("CPUTIME_OUT", str(OUT)))
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps({"id": item.nodeid, "cpu": round(cpu, 3), "wall": round(wall, 3),
                                 "slow": item.get_closest_marker("slow") is not None}) + "\n")


def summary(paths: list[str], top: int = 15) -> str:
    rows = [json.loads(line) for p in paths for line in Path(p).read_text().splitlines() if line]
    lines = [f"{len(rows)} tests, {sum(r['cpu'] for r in rows):.1f} s CPU, "
             f"{sum(r['wall'] for r in rows):.1f} s wall summed over tests"]
    files: dict[str, float] = defaultdict(float)
    count: dict[str, int] = defaultdict(int)
    for r in rows:
        name = r["id"].split("::", 1)[0]
        files[name] += r["cpu"]
        count[name] += 1
    lines += [f"  {cpu:7.1f} s  {count[name]:4d} tests  {name}"
              for name, cpu in sorted(files.items(), key=lambda kv: -kv[1])[:top]]
    lines += [f"  {r['cpu']:7.2f} s  {r['id']}"
              for r in sorted(rows, key=lambda r: -r["cpu"])[:top]]
    return "\n".join(lines)


if __name__ == "__main__":
    print(summary(sys.argv[1:] or [str(OUT)]))
