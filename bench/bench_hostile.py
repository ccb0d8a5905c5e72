"""The hostile-vault suite (tests/hostile/ and tests/test_hostile_calls.py, issues 11, 20 and
22) as a count: it runs the suite under pytest, reads the JUnit report, prints "N attacks, N
held, N broken" and writes it with a table per area (and the broken cases by name) to the
`hostile` section of docs/benchmarks.md. Every test case is one attack (each parameter of a
parametrized case counts). A case holds when every check of tests/hostile/harness.py passed
(nothing outside read or written, raw notes untouched, no hang, one line reported; the tool
calls: one-line `Error:` results, no file changed); a skipped case (a device node where mknod
is not allowed) is counted apart.

Run: `.venv/bin/python bench/bench_hostile.py` (JOBS=N pytest workers, default 2)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

from _report import OUT, ROOT, python, write_section

AREAS = {
    "test_hostile_inputs": "symlinks, hard links, FIFOs, sockets, devices, size, binary",
    "test_hostile_names": "names: NFD, control characters, RTL, backslash, `#`, path length",
    "test_hostile_checkpoint": "crafted state.json, journal, runs/, .remelink files",
    "test_hostile_tools": "tool arguments, exceptions, dead runs, line endings, values",
    "test_hostile_fs": "permission denied, disk full, read-only; resume after a full disk",
    "test_hostile_tags": "a person's tags and comments (demo vault)",
    "test_hostile_llm": "the LLM path (loopback provider): nothing outside is sent",
    "test_hostile_remelink": "a tampered .remelink/ (index, locks), init, crash logs, dry-run "
                             "copies, config paths, device and FIFO inputs (issue 20)",
    "test_hostile_content": "hidden content, a person's save between read and write, "
                            "quadratic notes, surrogates, lint-links paths (issue 20)",
    "test_hostile_memory": "search and the MCP tools: the passage index tampered with, "
                           "`remember` through links and over taken names, `read` out of "
                           "the vault, crafted run records for `recent` (issues 20, 22)",
    "test_hostile_calls": "a hostile model's tool calls, through the tool box (SPEC §6, §7.2)",
}
# Every hostile case of the suite: the harness-checked cases and the tool-call cases.
SUITE = ("tests/hostile", "tests/test_hostile_calls.py")


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    report = OUT / "hostile.xml"
    load = os.getloadavg()[0]
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True, check=False).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--", "remelink",
                            "tests"], capture_output=True, text=True, check=False).stdout.strip()
    commit += " with uncommitted changes" if dirty else ""
    started = time.perf_counter()
    jobs = os.environ.get("JOBS", "2")
    code = subprocess.call([python(), "-m", "pytest", "-q", "-p", "no:cacheprovider",
                            "-n", jobs, f"--junitxml={report}", *SUITE], cwd=ROOT)
    seconds = time.perf_counter() - started
    rows: dict[str, list[int]] = {}  # module -> [cases, held, skipped]
    for case in ET.parse(report).getroot().iter("testcase"):
        module = case.get("classname", "").rsplit(".", 1)[-1]
        row = rows.setdefault(module, [0, 0, 0])
        outcome = {child.tag for child in case}
        row[0] += 1
        if "skipped" in outcome:
            row[2] += 1
        elif not outcome & {"failure", "error"}:
            row[1] += 1
    cases = sum(r[0] - r[2] for r in rows.values())
    held = sum(r[1] for r in rows.values())
    skipped = sum(r[2] for r in rows.values())
    lines = ["### Hostile vaults: the trust boundary", "",
             f"**{cases} attacks, {held} held, {cases - held} broken**"
             + (f" ({skipped} skipped on this machine)" if skipped else "")
             + f" (commit {commit or '?'}).", "",
             "Each case builds a copy of the demo vault beside an `outside/` tree holding a "
             "marker string, runs the real pipeline (in process with a local engine that "
             "records every request, as a subprocess where a hang would block, or through "
             "litellm against a loopback provider), and checks: the tree outside is "
             "byte-identical, raw notes are byte-identical, the marker is in no model "
             "request, no digest node and no file of `.remelink/`, no hang (pytest-timeout, "
             "subprocess timeouts), and exactly one line names the offending entry (where there "
             "is one: a symlink inside the vault or a hard link is no offence). In-process "
             "cases are also watched by an audit hook: nothing outside the vault may even be "
             "opened.", "",
             "| area | attacks | held |", "|---|---:|---:|"]
    for module, (n, ok, skip) in sorted(rows.items(), key=lambda kv: list(AREAS).index(kv[0])
                                        if kv[0] in AREAS else 99):
        lines.append(f"| {AREAS.get(module, module)} (`{module}.py`) | {n - skip} | {ok} |")
    lines += ["", f"The suite took {seconds:.0f} s with {jobs} pytest worker(s) (load average "
              f"{load:.1f} when it started)."]
    broken = [f"{c.get('classname', '')}::{c.get('name', '')}"
              for c in ET.parse(report).getroot().iter("testcase")
              if {child.tag for child in c} & {"failure", "error"}]
    if broken:
        lines += ["", "Broken:", "", *(f"- `{b}`" for b in broken)]
    write_section("hostile", "\n".join(lines), "python bench/bench_hostile.py")
    print(f"{cases} attacks, {held} held, {cases - held} broken")
    return 0 if code == 0 and held == cases else 1


if __name__ == "__main__":
    sys.exit(main())
