"""`make bench`: run every bench/bench_*.py (and the crash test, bench/crash_dream.py) in turn;
each writes its own section of docs/benchmarks.md. Pass names to run a subset:
`python bench/run_all.py lint search crash_dream`."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    scripts = sorted(HERE.glob("bench_*.py")) + sorted(HERE.glob("crash_*.py"))
    if argv:
        scripts = [s for s in scripts if s.stem.removeprefix("bench_") in argv or s.stem in argv]
    failed = []
    for script in scripts:
        print(f"== {script.name}", flush=True)
        started = time.perf_counter()
        code = subprocess.call([sys.executable, str(script)], cwd=HERE.parent)
        print(f"== {script.name}: exit {code} in {time.perf_counter() - started:.0f} s", flush=True)
        if code:
            failed.append(script.name)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
