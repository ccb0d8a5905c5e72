"""(c) Link insertion on the SilverBullet and Foam docs: hide one note, integrate its text (links
replaced by their display text) as a unit into a digest of all the other notes (one wiki node
each, as bench/search_recall.py lays them out, plus a Sources line so each is a valid node), and
compare the digest links the engine writes with the note's true links. Baseline: plain TF-IDF
cosine top-k over the same notes, k = the number of links the engine wrote for that note.

Units run in dry-run mode through `integrate_unit` with the local engine and the real index; the
hidden note's node is deleted and `update()`d out of the index first, and restored after.
Nothing here was used to choose a threshold (the link decisions use the STS-B-tuned ones).

    .venv/bin/python bench/quality/links.py [--embedder none|auto] [--short|--long] [vault ...]

`--short`: the hidden note becomes the unit a real `dream run` makes of it, its title and first
sentence only; the TF-IDF baseline then ranks with that same text.
"""

from __future__ import annotations

import re
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from data import SHARED_DATA
from vaults import Runner, unit, write_note

from bench.search_recall import Note, _first_sentence, load, tfidf_ranker

VAULTS = ("silverbullet-docs", "foam-docs")
_LINK = re.compile(r"\[\[(digest/[^\]|#]+)")


@dataclass(frozen=True)
class LinkResult:
    vault: str
    embedder: str
    notes: int
    true_links: int
    written: int
    precision: float
    recall: float
    base_precision: float
    base_recall: float
    actions: dict[str, int]
    seconds: float
    short: bool = False
    per_unit: float = 0.0        # links written per unit
    per_unit_linked: float = 0.0  # ... for the notes with two or more true links


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
    notes = load(SHARED_DATA / "link-vaults" / name, strip_refs=name == "foam-docs")
    baseline = tfidf_ranker(notes)
    found = written = true = base_found = 0
    rich_units = rich_links = 0
    actions: dict[str, int] = {}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="remelink-links-") as tmp:
        root = Path(tmp)
        write_digest(root, notes)
        runner = Runner(root, embedder)
        for i, note in enumerate(notes):
            if not note.targets:
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
            actions[action] = actions.get(action, 0) + 1
            added = {m.group(1) for line in result.diff.splitlines()
                     if line.startswith("+") and not line.startswith("+++")
                     for m in _LINK.finditer(line)}
            added.discard(result.target or "")
            links = {p.removeprefix("digest/wiki/") for p in added}
            truth = set(note.targets)
            found += len(links & truth)
            written += len(links)
            true += len(truth)
            query = Note(note.rel, title, "", summary, note.targets) if short else note
            ranked = [r for r in baseline(query) if r != note.rel][:len(links)]
            base_found += len(set(ranked) & truth)
            if len(truth) >= 2:
                rich_units += 1
                rich_links += len(links)
        runner.close()
    count = sum(1 for n in notes if n.targets)
    return LinkResult(name, embedder, count, true, written, found / max(1, written),
                      found / max(1, true), base_found / max(1, written), base_found / max(1, true),
                      actions, time.perf_counter() - started, short, written / max(1, count),
                      rich_links / max(1, rich_units))


def table(results: list[LinkResult]) -> str:
    lines = ["| vault | unit | embedder | notes / true links | links written | links per unit "
             "(notes with >= 2 true links) | precision | recall | TF-IDF top-k precision | "
             "TF-IDF top-k recall | actions |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        acts = ", ".join(f"{k} {v}" for k, v in sorted(r.actions.items()))
        lines.append(f"| {r.vault} | {'title + first sentence' if r.short else 'whole note'} | "
                     f"{r.embedder} | {r.notes} / {r.true_links} | {r.written} | "
                     f"{r.per_unit:.2f} ({r.per_unit_linked:.2f}) | "
                     f"{r.precision:.3f} | {r.recall:.3f} | {r.base_precision:.3f} | "
                     f"{r.base_recall:.3f} | {acts} |")
    return "\n".join(lines)


def main(argv: list[str]) -> tuple[str, list[LinkResult]]:
    embedders = [argv[argv.index("--embedder") + 1]] if "--embedder" in argv else ["none", "auto"]
    names = [a for a in argv if a in VAULTS] or list(VAULTS)
    modes = [True] if "--short" in argv else [False] if "--long" in argv else [True, False]
    results = [evaluate(n, e, short) for short in modes for n in names for e in embedders]
    text = table(results)
    print(text)
    return text, results


if __name__ == "__main__":
    main(sys.argv[1:])
