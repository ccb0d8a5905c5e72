"""(d) Speed: integrate 1,000 units into a vault of about 10,000 digest nodes (bench/genvault.py)
through `integrate_unit` with the local engine and the real NodeIndex, committing every node,
with the share of time in recall (node_search), the engine's decisions (decide.compare),
its writing and the rest of its turns, the index update after each commit, and everything else
(tools, guards, staging, atomic writes).

    .venv/bin/python bench/quality/speed.py [--units 1000] [--notes 22300] [--embedder none]
"""

from __future__ import annotations

import random
import re
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from vaults import Runner

from remelink.models.local import decide, write
from remelink.units import Unit
from remelink.vault.notes import read_note


@dataclass
class Timer:
    seconds: float = 0.0
    calls: int = 0

    def wrap(self, fn):  # type: ignore[no-untyped-def]
        def timed(*args, **kwargs):  # type: ignore[no-untyped-def]
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - started
                self.calls += 1
        return timed


@dataclass(frozen=True)
class SpeedResult:
    embedder: str
    nodes: int
    units: int
    build_s: float
    seconds: float
    recall_s: float
    decide_s: float
    write_s: float
    engine_other_s: float
    index_s: float
    other_s: float
    actions: dict[str, int]
    failed: int
    errors: tuple[str, ...]


def make_units(root: Path, n: int, seed: int) -> list[Unit]:
    rng = random.Random(seed)
    raw = sorted(p.relative_to(root).as_posix() for p in (root / "daily").rglob("*.md")
                 if p.parent != root / "daily")
    units = []
    buckets = ("procedure", "personal", "wiki")
    for i, rel in enumerate(rng.sample(raw, n)):
        note = read_note(root, rel)
        text = re.sub(r"\[\[[^\]]*\]\]", "", note.body)
        lines = [ln.strip() for ln in text.splitlines()
                 if ln.strip() and not ln.lstrip().startswith(("#", "```", "<!--", "|", ">"))]
        title = next((ln.lstrip("# ").strip() for ln in note.body.splitlines()
                      if ln.startswith("# ")), rel.rsplit("/", 1)[-1][:-3])
        summary = " ".join(lines[:2])[:400] or title
        units.append(Unit(name=title[:80], bucket=buckets[i % 3], summary=summary, paths=(rel,)))
    return units


def run(n_units: int, notes: int, embedder: str, seed: int = 11) -> SpeedResult:
    from bench.genvault import generate

    with tempfile.TemporaryDirectory(prefix="remelink-speed-") as tmp:
        root = Path(tmp) / "v"
        generate(root, notes=notes, seed=seed)
        units = make_units(root, n_units, seed)
        started = time.perf_counter()
        runner = Runner(root, embedder)
        build = time.perf_counter() - started
        nodes = runner.index.doc_count()
        recall, index, engine = Timer(), Timer(), Timer()
        decide_t, write_t = Timer(), Timer()
        runner.index.search = recall.wrap(runner.index.search)  # type: ignore[method-assign]
        runner.index.update = index.wrap(runner.index.update)  # type: ignore[method-assign]
        runner.model.complete = engine.wrap(runner.model.complete)  # type: ignore[method-assign]
        original_compare, original_body = decide.compare, write.node_body
        decide.compare = decide_t.wrap(original_compare)
        write.node_body = write_t.wrap(original_body)
        actions: dict[str, int] = {}
        errors: list[str] = []
        try:
            started = time.perf_counter()
            for unit in units:
                result = runner.run(unit, dry_run=False)
                action = result.action or "FAILED"
                actions[action] = actions.get(action, 0) + 1
                if not result.ok and len(errors) < 3:
                    errors.append((result.error or "")[:200])
            seconds = time.perf_counter() - started
        finally:
            decide.compare, write.node_body = original_compare, original_body
            runner.close()
    # Recall runs inside the engine's turns? No: node_search is a tool call, outside complete().
    engine_other = engine.seconds - decide_t.seconds - write_t.seconds
    other = seconds - recall.seconds - index.seconds - engine.seconds
    return SpeedResult(embedder, nodes, n_units, build, seconds, recall.seconds, decide_t.seconds,
                       write_t.seconds, engine_other, index.seconds, other, actions,
                       actions.get("FAILED", 0), tuple(errors))


def table(results: list[SpeedResult]) -> str:
    lines = ["| embedder | nodes | units | units/s | total | recall (node_search) | decisions | "
             "writing | engine, other | index update | tools, guards, commit |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        def share(x: float, r: SpeedResult = r) -> str:
            return f"{x:.1f} s ({100 * x / r.seconds:.0f} %)"
        lines.append(f"| {r.embedder} | {r.nodes:,} | {r.units:,} | {r.units / r.seconds:.1f} | "
                     f"{r.seconds:.1f} s | {share(r.recall_s)} | {share(r.decide_s)} | "
                     f"{share(r.write_s)} | {share(r.engine_other_s)} | {share(r.index_s)} | "
                     f"{share(r.other_s)} |")
    return "\n".join(lines)


def main(argv: list[str]) -> tuple[str, list[SpeedResult]]:
    def opt(name: str, default: str) -> str:
        return argv[argv.index(name) + 1] if name in argv else default

    embedders = [opt("--embedder", "")] if "--embedder" in argv else ["none", "auto"]
    results = [run(int(opt("--units", "1000")), int(opt("--notes", "22300")), e)
               for e in embedders]
    text = table(results)
    print(text)
    for r in results:
        print(r.embedder, r.actions, "index build", round(r.build_s, 1), "s", r.errors)
    return text, results


if __name__ == "__main__":
    main(sys.argv[1:])
