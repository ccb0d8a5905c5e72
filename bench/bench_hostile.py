"""The hostile-vault suite (tests/hostile/, issues 11 and 20) as a count: it runs the suite
under pytest, reads the JUnit report, and writes "N attacks, N held, N broken" with a table per
area to the `hostile` section of docs/benchmarks.md. A case holds when every check of
tests/hostile/harness.py passed (nothing outside read or written, raw notes untouched, no hang,
one line reported); a skipped case (a device node where mknod is not allowed) is counted apart.

Run: `.venv/bin/python bench/bench_hostile.py`."""

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
}


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
    code = subprocess.call([python(), "-m", "pytest", "-q", "-p", "no:cacheprovider",
                            f"--junitxml={report}", "tests/hostile"], cwd=ROOT)
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
    lines += ["", f"The suite took {seconds:.0f} s (load average {load:.1f} when it started)."]
    write_section("hostile", "\n".join(lines), "python bench/bench_hostile.py")
    print(f"{cases} attacks, {held} held, {cases - held} broken")
    return 0 if code == 0 and held == cases else 1


if __name__ == "__main__":
    sys.exit(main())
