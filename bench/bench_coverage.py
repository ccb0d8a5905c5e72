"""Coverage of `remelink dream run` (SPEC §8: every note gets a verdict), on notes in their own
words and on generated ones.

Notes in their own words (the figures):
- a fixed sample of 60 held-out til-simonw notes (bench/splits.py; notes nobody here wrote,
  each laid out as `resource/<date>/<topic>-<name>.md`);
- the realistic vaults of bench/realvault/ (`dev` tuning, `heldout` held out), with their
  answer keys: a key fact is *kept* when every one of its needles (literal substrings of the
  note, bench/realvault/key.yaml) is in some digest node whose Sources cite that note.

Generated (a regression check that passes by construction: bench/coverage_notes.py writes every
fact note from six templates in the engine's own cue words): N = 1, 17, 40, 600 distinct-fact
notes (about a tenth chatter) and the 100-note generator of bench/crash_dream.py.

All with the default configuration and the local engine, each dreamt once by `remelink dream
run` as a subprocess; the figures come from the checkpoint it leaves:

- with a verdict: notes cited by some unit, or judged "nothing worth keeping" with a reason;
- with a unit: notes some unit cites;
- lost: notes checkpointed as processed with no unit and no verdict (what issue 10 found);
- units per note, and the wall time of the run.

`--baseline REV` runs the same vaults with the code of git revision REV too (extracted to a
temporary directory and put first on PYTHONPATH), side by side in the same process.

    python bench/bench_coverage.py [--baseline 8eadd0b] [--keep DIR] [--sizes 1,17]

Writes the section "coverage" of docs/benchmarks.md (full runs only).
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
import splits
from _report import ROOT, write_section

sys.path.insert(0, str(ROOT))

TODAY = "2026-06-25"
SIZES = (1, 17, 40, 600)


@dataclass
class Figures:
    facts: int  # notes that state a fact (the generator or the answer key knows)
    notes: int
    judged: int
    with_unit: int
    lost: int
    units: int
    seconds: float
    exit_code: int
    kept: str = "-"  # key facts kept, per language, where an answer key exists

    def row(self, name: str, data: str, code: str) -> str:
        n = self.notes
        return (f"| {name} | {data} | {code} | {n} | {self.facts} | {self.judged / n:.1%} | "
                f"{self.with_unit / n:.1%} | "
                f"{self.lost} | {self.units / n:.2f} | {self.kept} | {self.seconds:.1f} s |")


TIL_SAMPLE = 60  # held-out til-simonw notes (seeded sample): all 283 in one pass took over
# 7 CPU-minutes of extraction on this machine before the first node (2026-12-02, load 15)
TIL_SEED = 25


def til_vault(vault: Path) -> int:
    """A fixed sample of the held-out til-simonw notes as resource notes of their dates."""
    import random

    (vault / ".remelink").mkdir(parents=True)
    (vault / ".remelink" / "config.yaml").write_text("model: local\n", encoding="utf-8")
    held = splits.til_notes(splits.HELD_OUT)
    notes = sorted(random.Random(TIL_SEED).sample(held, min(TIL_SAMPLE, len(held))),
                   key=lambda n: n.path)
    for note in notes:
        topic, name = note.path.split("/", 1)
        target = vault / "resource" / note.date / f"{topic}-{name.replace('/', '-')}"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(note.file.read_bytes())
    return len(notes)


def realvault(side: splits.Side) -> object | None:
    """The answer key of a realistic vault (bench/realvault/key.py), None when absent."""
    if not (splits.realvault(side) / "key.yaml").exists():
        return None
    from bench.realvault import load

    return load(splits.REALVAULT_DIRS[side])


def kept(key: object, vault: Path) -> str:
    """Key facts whose needles all stand in one digest node citing the fact's note, per
    language: `en 41/52, zh 20/27`."""
    sys.path.insert(0, str(ROOT / "bench"))
    from locomo_recall import citations

    nodes = []
    for path in sorted((vault / "digest").rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        nodes.append((" ".join(text.split()), citations(text).sessions))
    counts: dict[str, list[int]] = {}
    for note in key.notes.values():  # type: ignore[attr-defined]
        for fact in note.facts:
            needles = [" ".join(n.text.split()) for n in fact.needles]
            hit = any(note.path in cited and all(n in text for n in needles)
                      for text, cited in nodes)
            got = counts.setdefault(note.lang, [0, 0])
            got[0] += hit
            got[1] += 1
    return ", ".join(f"{lang} {a}/{b} ({a / b:.0%})" for lang, (a, b) in sorted(counts.items()))


def lost(key: object, vault: Path) -> list[str]:
    """The key facts `kept` does not find, one line each: note, fact id, the needles missing
    from the cited node that holds most of them (all of them when no node cites the note)."""
    sys.path.insert(0, str(ROOT / "bench"))
    from locomo_recall import citations

    nodes = []
    for path in sorted((vault / "digest").rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        nodes.append((" ".join(text.split()), citations(text).sessions))
    out = []
    for note in key.notes.values():  # type: ignore[attr-defined]
        cited = [text for text, sessions in nodes if note.path in sessions]
        for fact in note.facts:
            needles = [" ".join(n.text.split()) for n in fact.needles]
            missing = min(([n for n in needles if n not in text] for text in cited),
                          key=len, default=needles)
            if missing:
                out.append(f"{note.path} {fact.id} ({len(cited)} nodes cite it): "
                           f"missing {missing}")
    return out


def make(kind: str, n: int, root: Path) -> tuple[Path, int]:
    """The vault, and how many of its notes state a fact."""
    vault = root / f"{kind}-{n}"
    if kind == "til":
        return vault, til_vault(vault)
    if kind.startswith("realvault-"):
        key = realvault(splits.HELD_OUT if kind.endswith("heldout") else splits.TUNING)
        shutil.copytree(key.root, vault, ignore=shutil.ignore_patterns(  # type: ignore[attr-defined]
            "key.yaml", "index", "state.json", "runs"))
        return vault, sum(1 for note in key.notes.values()  # type: ignore[attr-defined]
                          if note.facts)
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


CASES = {
    "til": (f"{TIL_SAMPLE} held-out til-simonw notes (seed {TIL_SEED}), in their own words",
            splits.label(splits.HELD_OUT)),
    "realvault-heldout": ("realistic vault `heldout/`, in its own words",
                          splits.label(splits.HELD_OUT)),
    "realvault-dev": ("realistic vault `dev/`, in its own words", splits.label(splits.TUNING)),
    "facts": ("{n} distinct-fact notes (generated from six templates in the engine's cue words)",
              "regression check"),
    "crash": ("100 notes of crash_dream.py (4 facts each, generated)", "regression check"),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", help="also run the code of this git revision")
    parser.add_argument("--keep", type=Path, help="keep the vaults here")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)),
                        help="numbers of distinct-fact notes (a trial run: no docs written)")
    parser.add_argument("--no-own-words", action="store_true",
                        help="only the generated vaults (a trial run: no docs written)")
    args = parser.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="bench-coverage-"))
    load = os.getloadavg()[0]
    try:
        codes: list[tuple[str, str | None]] = [("this commit", None)]
        if args.baseline:
            codes.insert(0, (f"before ({args.baseline})", baseline_tree(args.baseline, root)))
        sizes = tuple(int(x) for x in args.sizes.split(","))
        cases: list[tuple[str, int]] = []
        missing = []
        if not args.no_own_words:
            cases.append(("til", 0))
            for side, kind in ((splits.HELD_OUT, "realvault-heldout"),
                               (splits.TUNING, "realvault-dev")):
                if realvault(side) is not None:
                    cases.append((kind, 0))
                else:
                    missing.append(f"`{splits.realvault(side).relative_to(ROOT)}`")
        cases += [("facts", n) for n in sizes] + [("crash", 100)]
        rows = []
        for kind, n in cases:
            for label, path in codes:
                vault, facts = make(kind, n, root / label.split()[0])
                figures = dream(vault, facts, path)
                if kind.startswith("realvault-"):
                    figures.kept = kept(realvault(splits.HELD_OUT if kind.endswith("heldout")
                                                  else splits.TUNING), vault)
                name, data = CASES[kind]
                rows.append(figures.row(name.format(n=n), data, label))
                print(rows[-1], f"(exit {figures.exit_code})", flush=True)
        header = ("| vault | data | code | notes | of which facts | with a verdict | with a unit | "
                  "lost | units per note | key facts kept | time |\n"
                  "|---|---|---|---|---|---|---|---|---|---|---|")
        text = (
            "## Coverage: every note gets a verdict\n\n"
            "`remelink dream run` (local engine, default configuration) on notes in their own "
            "words (the held-out til-simonw notes; the realistic vaults of `bench/realvault/`, "
            "whose answer keys list each note's key facts) and, as a regression check only, on "
            "generated vaults whose every fact note is written from six templates in the "
            "engine's own cue words (they pass by construction: `bench/coverage_notes.py`). "
            "Figures from the checkpoint the run leaves. *With a verdict*: cited by a unit, or "
            "judged \"nothing worth keeping\" with a reason (target 100 %). *Lost*: "
            "checkpointed as processed with no unit and no verdict. *Of which facts*: notes "
            "the generator or the answer key says state a fact (til-simonw: every note). *Key "
            "facts kept*: facts of the answer key whose needles (literal substrings of the "
            "note) all stand in one digest node citing the note. Times are whole runs, "
            f"integration included; load average {load:.1f} at start (2 shared cores).\n\n"
            + header + "\n" + "\n".join(rows))
        if missing:
            text += ("\n\nNot measured: " + ", ".join(missing)
                     + " (no answer key in this checkout).")
        command = "python bench/bench_coverage.py" + \
            (f" --baseline {args.baseline}" if args.baseline else "")
        if sizes == SIZES and not args.no_own_words:
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
