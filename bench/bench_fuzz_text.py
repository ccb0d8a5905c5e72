"""Fuzz the local engine's text functions for time: every function of
`remelink/models/local/text.py` and the whole local extraction of a note (and the other code
that runs regexes over a note: the link scanner, the index's analysis, the guards, the lint
checks of a node), on adversarial notes
(tests/fuzz_notes.py: each token that opens or closes a pattern, repeated, at several sizes) and
on random notes (seeded), each under a time bound. Reports the time per KB of every input, the
slowest input per KB, and how the time per KB grows from 4 KB to 64 KB (a linear function keeps
it flat; the quadratic wikilink clean-up of issue 20 grew it 16x per 4x of input).

Run: `.venv/bin/python bench/bench_fuzz_text.py [--sizes 1024,4096,16384,65536] [--random 300]`
(`--baseline REV` also times a checkout of REV's text.py on the 16 KB `[[` note).
"""

from __future__ import annotations

import argparse
import random
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from _report import ROOT, machine, write_section

sys.path.insert(0, str(ROOT / "tests"))
import fuzz_notes as fz

BOUND = 10.0  # wall seconds per (function, note); past it the input counts as a hang
# Times are CPU seconds of this process (time.process_time): on a machine shared by several
# jobs the wall clock measures the neighbours as much as the function.


class _Late(Exception):
    pass


def _alarm(*_: object) -> None:
    raise _Late


@dataclass
class Timing:
    function: str
    label: str
    size: int
    seconds: float  # BOUND when it ran past the bound

    @property
    def ms_per_kb(self) -> float:
        return self.seconds * 1000 / max(self.size / 1024, 1 / 1024)


def timed(fn: Callable[[str], object], text: str) -> float:
    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, BOUND)
    started = time.process_time()
    try:
        fn(text)
        return time.process_time() - started
    except _Late:
        return BOUND
    except Exception:  # a function may refuse odd input; only its time matters here
        return time.process_time() - started
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def functions() -> list[tuple[str, Callable[[str], object]]]:
    out = [(name, fz.per_line(fn)) for name, fn in fz.text_functions()]
    out += [(f"{name} (whole note)", fn) for name, fn in fz.text_functions()]
    out.append(("extract (whole note)", fz.extract_note))
    out += [(f"{name} (whole note)", fn) for name, fn in fz.vault_functions()]
    return out


def random_notes(count: int, seed: int, size: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    words = ["deploy", "keys", "Alice", "24 h", "部署", "密钥", "`make test`", "because", "[[x]]"]
    notes = []
    for i in range(count):
        parts: list[str] = []
        while sum(map(len, parts)) < size:
            pick = rng.random()
            if pick < 0.45:
                parts.append(rng.choice(fz.TOKENS) * rng.randint(1, 40))
            elif pick < 0.8:
                parts.append(rng.choice(words))
            else:
                parts.append("".join(chr(rng.randint(32, 0x9fff))
                                     for _ in range(rng.randint(1, 20))))
            parts.append(rng.choice(fz.SEPARATORS))
        notes.append((f"random #{i} (seed {seed})", "".join(parts)[:size]))
    return notes


def baseline_case10(rev: str) -> float | None:
    """The 16 KB `[[` note through `clean_statement` as it was at `rev` (its text.py alone)."""
    import importlib.util
    import subprocess
    import tempfile

    try:
        source = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{rev}:remelink/models/local/text.py"],
            capture_output=True, text=True, check=True).stdout
    except subprocess.CalledProcessError:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "text_before.py"
        path.write_text(source, encoding="utf-8")
        spec = importlib.util.spec_from_file_location("text_before", path)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        sys.modules["text_before"] = module
        spec.loader.exec_module(module)
        return timed(module.clean_statement, "[[" * 8000)


def _shape(label: str) -> str:
    """The input without its repeat count (`'[[' x4000 sep ''` -> `'[[' sep ''`), so the same
    shape can be compared across sizes."""
    if " x" in label and " sep " in label:
        return label.split(" x", 1)[0] + " sep " + label.rsplit(" sep ", 1)[1]
    return label


def report(timings: list[Timing], sizes: list[int], args: argparse.Namespace,
           seconds: float, case10: float, before: float | None) -> str:
    late = [t for t in timings if t.seconds >= BOUND]
    slowest = max(timings, key=lambda t: t.ms_per_kb)
    top = max(sizes)
    big = [t for t in timings if t.size >= top * 0.9] or timings
    worst_big = max(big, key=lambda t: t.ms_per_kb)
    small_size = 4096 if 4096 in sizes else sizes[0]
    by_key = {(t.function, _shape(t.label), t.size): t for t in timings
              if not t.label.startswith("random")}
    growth: list[tuple[float, Timing, Timing]] = []
    for (name, shape, size), t in by_key.items():
        small = by_key.get((name, shape, small_size))
        if size == top and small is not None and small.seconds >= 0.005:
            growth.append((t.ms_per_kb / max(small.ms_per_kb, 1e-9), small, t))
    growth.sort(key=lambda g: -g[0])
    per_function: dict[str, Timing] = {}
    for t in timings:
        if t.function not in per_function or t.ms_per_kb > per_function[t.function].ms_per_kb:
            per_function[t.function] = t
    inputs = len({(t.label, t.size) for t in timings})
    functions_run = len({t.function for t in timings})
    shapes = len({_shape(t.label) for t in timings if not t.label.startswith("random")})
    was = ""
    if before is not None:
        was = f" (at {args.baseline}: {before:.1f} s{', the bound' if before >= BOUND else ''})"
    lines = [
        "### Fuzzing the local engine's text functions (time per KB)", "",
        f"**{inputs} notes** ({shapes} adversarial shapes at {len(sizes)} sizes up to "
        f"{top // 1024} KB, {args.random} random notes of 4 KB), {functions_run} functions: "
        f"{len(timings)} runs, **{len(late)} past the {BOUND:g} s bound**.", "",
        f"Slowest input per KB: `{slowest.function}` on {slowest.label} ({slowest.size} chars), "
        f"{slowest.ms_per_kb:.2f} ms/KB ({slowest.seconds * 1000:.0f} ms). At {top // 1024} KB: "
        f"`{worst_big.function}` on {worst_big.label}, {worst_big.ms_per_kb:.2f} ms/KB "
        f"({worst_big.seconds * 1000:.0f} ms).", "",
        f"Issue 20 case 10, a 16 KB line of `[[` x 8000, through `clean_statement`: "
        f"{case10 * 1000:.1f} ms{was}.", "",
        f"Growth of the time per KB from {small_size // 1024} KB to {top // 1024} KB (1x is "
        "linear, 16x quadratic; inputs whose small run took under 5 ms are left out), the five "
        "largest:", "",
        "| function | input | ms/KB small | ms/KB large | growth |", "|---|---|---:|---:|---:|"]
    for ratio, small, large in growth[:5]:
        lines.append(f"| `{large.function}` | {_shape(large.label)} | {small.ms_per_kb:.2f} | "
                     f"{large.ms_per_kb:.2f} | {ratio:.1f}x |")
    lines += ["", "The slowest input per KB of each function:", "",
              "| function | slowest input | chars | ms/KB |", "|---|---|---:|---:|"]
    for name, t in sorted(per_function.items(), key=lambda kv: -kv[1].ms_per_kb):
        lines.append(f"| `{name}` | {t.label} | {t.size} | {t.ms_per_kb:.2f} |")
    lines += ["", f"At commit {args.commit or '?'}; {machine()}; the run took {seconds:.0f} s. "
              "Times are CPU time of the process (the machine is shared); the bound is "
              "wall-clock."]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1024,4096,16384,65536")
    parser.add_argument("--random", type=int, default=300)
    parser.add_argument("--seed", type=int, default=20)
    parser.add_argument("--baseline", default=None)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    import subprocess

    args.commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                                 capture_output=True, text=True, check=False).stdout.strip()
    sizes = [int(s) for s in args.sizes.split(",")]
    fns = functions()
    fz.extract_note("warm up the imports")
    started = time.perf_counter()
    timings: list[Timing] = []
    for size in sizes:
        for label, text in fz.adversarial(size):
            for name, fn in fns:
                timings.append(Timing(name, label, len(text), timed(fn, text)))
    for label, text in random_notes(args.random, args.seed, 4096):
        for name, fn in fns:
            timings.append(Timing(name, label, len(text), timed(fn, text)))
    seconds = time.perf_counter() - started
    from remelink.models.local.text import clean_statement

    case10 = timed(clean_statement, "[[" * 8000)
    before = baseline_case10(args.baseline) if args.baseline else None
    text = report(timings, sizes, args, seconds, case10, before)
    print(text)
    if not args.no_write:
        # The command as run (the sizes and the number of random notes set the budget).
        command = " ".join(["python bench/bench_fuzz_text.py", *sys.argv[1:]])
        write_section("fuzz-text", text, command)
    return 1 if any(t.seconds >= BOUND for t in timings) else 0


if __name__ == "__main__":
    sys.exit(main())
