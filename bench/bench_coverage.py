"""Coverage of `remelink dream run` on generated vaults (SPEC §8: every note gets a verdict).

Vaults: N = 1, 17, 40, 600 distinct-fact notes (bench/coverage_notes.py, about a tenth of them
chatter) and the 100-note generator of bench/crash_dream.py (four facts a note), all with the
default configuration and the local engine. Each is dreamt once by `remelink dream run` as a
subprocess; the figures come from the checkpoint it leaves:

- with a verdict: notes cited by some unit, or judged "nothing worth keeping" with a reason;
- with a unit: notes some unit cites;
- lost: notes checkpointed as processed with no unit and no verdict (what issue 10 found);
- units per note, and the wall time of the run.

`--baseline REV` runs the same vaults with the code of git revision REV too (extracted to a
temporary directory and put first on PYTHONPATH), side by side in the same process.

    python bench/bench_coverage.py [--baseline 8eadd0b] [--keep DIR]

Writes the section "coverage" of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import coverage_notes
import crash_dream
from _report import ROOT, write_section

TODAY = "2026-06-25"
SIZES = (1, 17, 40, 600)


@dataclass
class Figures:
    facts: int  # notes that state a fact (the generator knows)
    notes: int
    judged: int
    with_unit: int
    lost: int
    units: int
    seconds: float
    exit_code: int

    def row(self, name: str, code: str) -> str:
        n = self.notes
        return (f"| {name} | {code} | {n} | {self.facts} | {self.judged / n:.1%} | "
                f"{self.with_unit / n:.1%} | "
                f"{self.lost} | {self.units / n:.2f} | {self.seconds:.1f} s |")


def make(kind: str, n: int, root: Path) -> tuple[Path, int]:
    """The vault, and how many of its notes state a fact."""
    vault = root / f"{kind}-{n}"
    if kind == "facts":
        notes = coverage_notes.make_vault(vault, n, seed=n)
        return vault, sum(1 for note in notes if note.fact)
    (vault / ".remelink").mkdir(parents=True)
    (vault / ".remelink" / "config.yaml").write_text(coverage_notes.CONFIG, encoding="utf-8")
    crash_dream.write_notes(vault, n, seed=7)
    return vault, n


def dream(vault: Path, facts: int, pythonpath: str | None) -> Figures:
    env = crash_dream.run_env()
    if pythonpath:
        env["PYTHONPATH"] = pythonpath + os.pathsep + env.get("PYTHONPATH", "")
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "remelink.cli", "dream", "run", "--vault",
                           str(vault), "--quiet", "--today", TODAY, "--json"],
                          capture_output=True, text=True, env=env, check=False,
                          cwd=vault.parent)  # not the checkout: `-m` would import from it
    seconds = time.perf_counter() - started
    state = json.loads((vault / ".remelink" / "state.json").read_text(encoding="utf-8"))
    inputs = state["inputs"].values()
    judged = sum(1 for r in inputs if r.get("verdict") in ("units", "nothing") or r["units"])
    with_unit = sum(1 for r in inputs if r["units"])
    lost = sum(1 for r in inputs if r["status"] == "processed" and not r["units"]
               and not r.get("verdict"))
    return Figures(facts, len(state["inputs"]), judged, with_unit, lost, len(state["units"]),
                   seconds, proc.returncode)


def baseline_tree(rev: str, root: Path) -> str:
    target = root / f"baseline-{rev}"
    target.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "remelink"],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return str(target)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", help="also run the code of this git revision")
    parser.add_argument("--keep", type=Path, help="keep the vaults here")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)),
                        help="numbers of distinct-fact notes (a trial run: no docs written)")
    args = parser.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="bench-coverage-"))
    load = os.getloadavg()[0]
    try:
        codes: list[tuple[str, str | None]] = [("this branch", None)]
        if args.baseline:
            codes.insert(0, (f"before ({args.baseline})", baseline_tree(args.baseline, root)))
        sizes = tuple(int(x) for x in args.sizes.split(","))
        cases = [("facts", n) for n in sizes] + [("crash", 100)]
        rows = []
        for kind, n in cases:
            for label, path in codes:
                vault, facts = make(kind, n, root / label.split()[0])
                figures = dream(vault, facts, path)
                name = f"{n} distinct-fact notes" if kind == "facts" else \
                    "100 notes of crash_dream.py (4 facts each)"
                rows.append(figures.row(name, label))
                print(rows[-1], f"(exit {figures.exit_code})", flush=True)
        header = ("| vault | code | notes | of which facts | with a verdict | with a unit | "
                  "lost | units per note | time |\n|---|---|---|---|---|---|---|---|---|")
        text = (
            "## Coverage: every note gets a verdict\n\n"
            "`remelink dream run` (local engine, default configuration) on generated vaults; "
            "figures from the checkpoint it leaves. *With a verdict*: cited by a unit, or "
            "judged \"nothing worth keeping\" with a reason (target 100 %). *Lost*: checkpointed "
            "as processed with no unit and no verdict. About a tenth of the distinct-fact notes "
            "are chatter (greetings, attendance), which rightly give no unit: *with a unit* "
            "equal to *of which facts* means every fact note gave one. Times are whole "
            f"runs, integration included; load average {load:.1f} at start (2 shared cores).\n\n"
            + header + "\n" + "\n".join(rows))
        command = "python bench/bench_coverage.py" + \
            (f" --baseline {args.baseline}" if args.baseline else "")
        if sizes == SIZES:
            write_section("coverage", text, command)
        else:
            print(text)
        if args.keep:
            shutil.copytree(root, args.keep, dirs_exist_ok=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
