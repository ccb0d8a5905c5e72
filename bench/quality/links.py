"""(c) Link insertion on real vaults: hide one note, integrate its text (links replaced by their
display text) as a unit into a digest of all the other notes (one wiki node each, as
bench/search_recall.py lays them out, plus a Sources line so each is a valid node), and compare
the digest links the engine writes with the note's true links.

Vaults and sides (bench/splits.py): `silverbullet-docs` is tuning data (link rules were chosen
on it), `foam-docs` and the held-out til-simonw notes (bench/tillinks.py: every note is in the
digest, the held-out ones are asked) are the results. Foam was also looked at while the link
rules were written, before the split existed: its rows say so.

Baselines, the same for every engine setting and chosen without it: plain TF-IDF cosine over
the same notes, ranked with the same text as the unit, (1) its top k for a fixed k of 1, 2 and
3, and (2) every note above a cosine threshold (at most 10) chosen on the tuning vault for the
best F1 there, then applied unchanged to the held-out vaults. A margin over (2) is the
difference of micro F1 (and of precision) with a 95 % interval from a bootstrap over the asked
notes; an interval that includes zero is reported as no margin.

Units run in dry-run mode through `integrate_unit` with the local engine and the real index; the
hidden note's node is deleted and `update()`d out of the index first, and restored after.

    .venv/bin/python bench/quality/links.py [--embedder none|auto] [--short|--long] [vault ...]

`--short`: the hidden note becomes the unit a real `dream run` makes of it, its title and first
sentence only; the TF-IDF baselines then rank with that same text.
"""

from __future__ import annotations

import re
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import splits
import spread
import tillinks
from data import SHARED_DATA
from vaults import Runner, unit, write_note

from bench.search_recall import Note, _first_sentence, load, tfidf_scorer

VAULTS = ("silverbullet-docs", "foam-docs", tillinks.NAME)
FIXED_K = (1, 2, 3)
MAX_K = 10
_LINK = re.compile(r"\[\[(digest/[^\]|#]+)")


def side(vault: str) -> splits.Side:
    return splits.HELD_OUT if vault == tillinks.NAME else splits.link_vault(vault)


def notes_of(vault: str) -> tuple[list[Note], set[str]]:
    """The vault's notes and the ones to ask about (with true links)."""
    if vault == tillinks.NAME:
        notes = tillinks.load()
        asked = tillinks.queries(notes)
    else:
        notes = load(SHARED_DATA / "link-vaults" / vault, strip_refs=vault == "foam-docs")
        asked = {n.rel for n in notes}
    return notes, {n.rel for n in notes if n.rel in asked and n.targets}


@dataclass(frozen=True)
class Asked:
    """One hidden note: its true links, the links the engine wrote, the baseline's ranking."""

    rel: str
    truth: frozenset[str]
    written: frozenset[str]
    ranked: tuple[tuple[str, float], ...]  # TF-IDF, best first, at most MAX_K


@dataclass
class LinkResult:
    vault: str
    embedder: str
    short: bool
    asked: list[Asked]
    actions: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    failures: list[tuple[str, str]] = field(default_factory=list)  # (note, why), failed units

    @property
    def side(self) -> splits.Side:
        return side(self.vault)


def write_digest(root: Path, notes: list[Note]) -> None:
    import yaml

    for note in notes:
        meta = yaml.safe_dump({"name": note.name, "description": note.description or note.name},
                              allow_unicode=True, sort_keys=False, width=1 << 30)
        path = root / note.node_path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\n{meta}---\n{note.body.rstrip()}\n\n## Sources\n\nThis was recorded "
                        f"in [[daily/2026-01-01/source.md]].\n", encoding="utf-8")
    write_note(root, "daily/2026-01-01/source.md", "# Source\n\nThe original documents.")


def short_unit(note: Note) -> tuple[str, str]:
    """What a real `dream run` gives for a note: a unit of its title and first sentence."""
    first = _first_sentence(note.body).strip() or note.name
    return note.name, first


def evaluate(name: str, embedder: str, short: bool = False) -> LinkResult:
    notes, asked = notes_of(name)
    baseline = tfidf_scorer(notes)
    out = LinkResult(name, embedder, short, [])
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="remelink-links-") as tmp:
        root = Path(tmp)
        write_digest(root, notes)
        runner = Runner(root, embedder)
        for i, note in enumerate(notes):
            if note.rel not in asked:
                continue
            node = root / note.node_path
            data = node.read_bytes()
            node.unlink()
            runner.index.update([note.node_path])
            runner.ctx.files.discard(note.node_path)
            rel = f"daily/2026-06-01/hidden-{i}.md"
            write_note(root, rel, f"# {note.name}\n\n{note.body}")
            title, summary = short_unit(note) if short else (note.name,
                                                              note.body.strip() or note.name)
            try:
                result = runner.run(unit(title, summary, [rel]), dry_run=True)
            finally:
                node.write_bytes(data)
                runner.index.update([note.node_path])
                runner.ctx.files.add(note.node_path)
            action = result.action or "FAILED"
            out.actions[action] = out.actions.get(action, 0) + 1
            if not result.action:
                out.failures.append((note.rel, str(result.error)))
            added = {m.group(1) for line in result.diff.splitlines()
                     if line.startswith("+") and not line.startswith("+++")
                     for m in _LINK.finditer(line)}
            added.discard(result.target or "")
            links = frozenset(p.removeprefix("digest/wiki/") for p in added)
            query = Note(note.rel, title, "", summary, note.targets) if short else note
            ranked = tuple((r, s) for r, s in baseline(query) if r != note.rel)[:MAX_K]
            out.asked.append(Asked(note.rel, note.targets, links, ranked))
        runner.close()
    out.seconds = time.perf_counter() - started
    return out


# -- metrics -----------------------------------------------------------------------------------
Chooser = Callable[[Asked], frozenset[str]]


def engine(a: Asked) -> frozenset[str]:
    return a.written


def top_k(k: int) -> Chooser:
    return lambda a: frozenset(r for r, _ in a.ranked[:k])


def above(threshold: float) -> Chooser:
    return lambda a: frozenset(r for r, s in a.ranked if s >= threshold)


@dataclass(frozen=True)
class Metrics:
    links: int
    found: int
    truth: int

    @property
    def precision(self) -> float:
        return self.found / self.links if self.links else 0.0

    @property
    def recall(self) -> float:
        return self.found / self.truth if self.truth else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def metrics(asked: Sequence[Asked], choose: Chooser) -> Metrics:
    links = found = truth = 0
    for a in asked:
        chosen = choose(a)
        links += len(chosen)
        found += len(chosen & a.truth)
        truth += len(a.truth)
    return Metrics(links, found, truth)


def tune_threshold(asked: Sequence[Asked]) -> float:
    """The cosine threshold with the best micro F1 on `asked` (the tuning vault's notes)."""
    grid = [i / 100 for i in range(1, 100)]
    return max(grid, key=lambda t: (metrics(asked, above(t)).f1, -t))


def margin(asked: Sequence[Asked], a: Chooser, b: Chooser, what: str = "f1"
           ) -> tuple[float, float, float]:
    """`what` (f1 or precision) of a minus that of b, with its interval from resampling the
    asked notes (bench/spread.py)."""
    rows = [(a(x), b(x), x.truth) for x in asked]

    def value(rs: Sequence[tuple[frozenset[str], frozenset[str], frozenset[str]]]) -> float:
        truth = sum(len(r[2]) for r in rs)
        ma = Metrics(sum(len(r[0]) for r in rs), sum(len(r[0] & r[2]) for r in rs), truth)
        mb = Metrics(sum(len(r[1]) for r in rs), sum(len(r[1] & r[2]) for r in rs), truth)
        return float(getattr(ma, what) - getattr(mb, what))

    return spread.resampled(rows, value)


# -- tables ------------------------------------------------------------------------------------
def _unit(short: bool) -> str:
    return "title + first sentence" if short else "whole note"


def _vault(r: LinkResult) -> str:
    return f"{r.vault} ({splits.label(r.side)})"


def table(results: list[LinkResult]) -> str:
    lines = ["| vault (data) | unit | embedder | notes / true links | links written | links per "
             "unit (notes with >= 2 true links) | precision | recall | F1 | actions |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        m = metrics(r.asked, engine)
        rich = [a for a in r.asked if len(a.truth) >= 2]
        per_rich = sum(len(a.written) for a in rich) / max(1, len(rich))
        acts = ", ".join(f"{k} {v}" for k, v in sorted(r.actions.items()))
        lines.append(f"| {_vault(r)} | {_unit(r.short)} | {r.embedder} | {len(r.asked)} / "
                     f"{m.truth} | {m.links} | {m.links / max(1, len(r.asked)):.2f} "
                     f"({per_rich:.2f}) | {m.precision:.3f} | {m.recall:.3f} | {m.f1:.3f} | "
                     f"{acts} |")
    return "\n".join(lines)


def thresholds(results: list[LinkResult]) -> dict[bool, float]:
    """Per unit kind, the baseline's threshold chosen on the tuning vault."""
    out: dict[bool, float] = {}
    for r in results:
        if r.side == splits.TUNING and r.short not in out:
            out[r.short] = tune_threshold(r.asked)
    return out


def baseline_table(results: list[LinkResult], chosen: dict[bool, float]) -> str:
    lines = ["| vault (data) | unit | TF-IDF baseline | links | precision | recall | F1 |",
             "|---|---|---|---|---|---|---|"]
    seen = set()
    for r in results:
        if (r.vault, r.short) in seen:
            continue
        seen.add((r.vault, r.short))
        rankers: list[tuple[str, Chooser]] = [(f"top {k}", top_k(k)) for k in FIXED_K]
        if r.short in chosen:
            t = chosen[r.short]
            rankers.append((f"cosine >= {t:.2f} (chosen on the tuning vault)", above(t)))
        for label, choose in rankers:
            m = metrics(r.asked, choose)
            lines.append(f"| {_vault(r)} | {_unit(r.short)} | {label} | {m.links} | "
                         f"{m.precision:.3f} | {m.recall:.3f} | {m.f1:.3f} |")
    return "\n".join(lines)


def margin_table(results: list[LinkResult], chosen: dict[bool, float]) -> str:
    lines = ["| vault (data) | unit | embedder | F1, engine minus TF-IDF above the threshold "
             "(95 % interval) | precision, engine minus it (95 % interval) |",
             "|---|---|---|---|---|"]
    for r in results:
        if r.short not in chosen:
            continue
        base = above(chosen[r.short])
        lines.append(f"| {_vault(r)} | {_unit(r.short)} | {r.embedder} | "
                     f"{spread.show(margin(r.asked, engine, base, 'f1'), 3)} | "
                     f"{spread.show(margin(r.asked, engine, base, 'precision'), 3)} |")
    return "\n".join(lines)


def main(argv: list[str]) -> tuple[str, list[LinkResult]]:
    embedders = [argv[argv.index("--embedder") + 1]] if "--embedder" in argv else ["none", "auto"]
    names = [a for a in argv if a in VAULTS] or list(VAULTS)
    modes = [True] if "--short" in argv else [False] if "--long" in argv else [True, False]
    results = []
    for short in modes:
        for n in names:
            for e in embedders:
                results.append(evaluate(n, e, short))
                print(f"{n} {_unit(short)} {e}: {results[-1].seconds:.0f} s", flush=True)
                for rel, why in results[-1].failures:  # the engine failed its own guards
                    print(f"  FAILED {rel}: {why}", flush=True)
    chosen = thresholds(results)
    text = "\n\n".join([table(results), baseline_table(results, chosen),
                        margin_table(results, chosen)])
    print(text)
    return text, results


if __name__ == "__main__":
    main(sys.argv[1:])
