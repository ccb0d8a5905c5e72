"""`make bench`: run every bench/bench_*.py, bench/search_recall.py and the crash test
(bench/crash_dream.py) in turn; each writes its own section of docs/benchmarks.md. Pass names to
run a subset: `python bench/run_all.py lint search crash_dream`.

`make bench-quality` (`--quality`): every quality section at the current commit, prose included
(sentence pairs, links, orphans, LoCoMo, coverage, node-search recall, decisions on pairs and on
the realistic vaults' lines, the realistic vaults end to end, notes nobody here wrote), then the
README's figures copied from them (bench/readme_figures.py). It prints what it wrote and how long
it took. `--jobs N` runs N benches side by side (each writes its own section under a lock; the
quality figures do not depend on the load, the times in them do).

Every run ends by copying the README's figures from docs/benchmarks.md."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent

# The quality sections, in the order they are written: (script, arguments, sections).
QUALITY = (  # the longest first, so that `--jobs 2` keeps both cores busy to the end
    ("bench_quality.py", ["pairs", "links", "orphans"],
     ["quality-pairs", "quality-links", "quality-orphans"]),
    ("bench_foreign.py", ["--write"], ["foreign-heldout"]),
    ("bench_locomo.py", [], ["locomo"]),
    ("bench_coverage.py", [], ["coverage"]),
    ("search_recall.py", [], ["search-recall"]),
    ("quality/relations.py", ["--write"], ["realvault-relations"]),
    ("quality/merges.py", ["--write"], ["pair-merges"]),
    ("quality/decisions.py", ["--write"], ["realvault-decisions"]),
)


def _cpu() -> float:
    """CPU seconds of every child waited for so far (benches and their subprocesses)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(script: str, args: list[str]) -> int:
    """Run one bench; print its wall time, its CPU time (what an idle machine would take, near
    enough: most of the work is one process at a time) and the load average around it."""
    print(f"== {script} {' '.join(args)}".rstrip(), flush=True)
    started, cpu, load = time.perf_counter(), _cpu(), os.getloadavg()[0]
    code = subprocess.call([sys.executable, str(HERE / script), *args], cwd=HERE.parent)
    print(f"== {script}: exit {code} in {time.perf_counter() - started:.0f} s wall, "
          f"{_cpu() - cpu:.0f} s CPU (load average {load:.1f} at start, "
          f"{os.getloadavg()[0]:.1f} at the end)", flush=True)
    return code


def main(argv: list[str]) -> int:
    started = time.perf_counter()
    jobs_at_once = int(argv[argv.index("--jobs") + 1]) if "--jobs" in argv else 1
    if "--jobs" in argv:
        del argv[argv.index("--jobs"):argv.index("--jobs") + 2]
    if "--quality" in argv:
        jobs = [(script, args) for script, args, _ in QUALITY]
    else:
        scripts = [*sorted(HERE.glob("bench_*.py")), HERE / "search_recall.py",
                   *sorted(HERE.glob("crash_*.py"))]
        if argv:
            scripts = [s for s in scripts
                       if s.stem.removeprefix("bench_") in argv or s.stem in argv]
        jobs = [(s.name, []) for s in scripts]
    cpu = _cpu()
    with ThreadPoolExecutor(max_workers=jobs_at_once) as pool:
        codes = list(pool.map(lambda job: run(*job), jobs))
    failed = [script for (script, _), code in zip(jobs, codes, strict=True) if code]
    if run("readme_figures.py", []):
        failed.append("readme_figures.py")
    minutes = (time.perf_counter() - started) / 60
    if "--quality" in argv:
        written = ", ".join(name for _, _, names in QUALITY for name in names)
        print(f"wrote the sections {written} of {HERE.parent / 'docs' / 'benchmarks.md'} and "
              f"the figures of {HERE.parent / 'README.md'} in {minutes:.0f} min "
              f"({(_cpu() - cpu) / 60:.0f} min of CPU)", flush=True)
    else:
        print(f"done in {minutes:.0f} min ({(_cpu() - cpu) / 60:.0f} min of CPU)", flush=True)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
