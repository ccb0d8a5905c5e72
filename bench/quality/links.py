"""(c) Link insertion on the SilverBullet and Foam docs: hide one note, integrate its text (links
replaced by their display text) as a unit into a digest of all the other notes (one wiki node
each, as bench/search_recall.py lays them out, plus a Sources line so each is a valid node), and
compare the digest links the engine writes with the note's true links. Baseline: plain TF-IDF
cosine top-k over the same notes, k = the number of links the engine wrote for that note.

Units run in dry-run mode through `integrate_unit` with the local engine and the real index; the
hidden note's node is deleted and `update()`d out of the index first, and restored after.
Nothing here was used to choose a threshold (the link decisions use the STS-B-tuned ones).

    .venv/bin/python bench/quality/links.py [--embedder none|auto] [vault ...]
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

from bench.search_recall import Note, load, tfidf_ranker

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


def evaluate(name: str, embedder: str) -> LinkResult:
    notes = load(SHARED_DATA / "link-vaults" / name, strip_refs=name == "foam-docs")
    baseline = tfidf_ranker(notes)
    found = written = true = base_found = 0
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
            try:
                result = runner.run(unit(note.name, note.body.strip() or note.name, [rel]),
                                    dry_run=True)
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
            ranked = [r for r in baseline(note) if r != note.rel][:len(links)]
            base_found += len(set(ranked) & truth)
        runner.close()
    count = sum(1 for n in notes if n.targets)
    return LinkResult(name, embedder, count, true, written, found / max(1, written),
                      found / max(1, true), base_found / max(1, written), base_found / max(1, true),
                      actions, time.perf_counter() - started)


def table(results: list[LinkResult]) -> str:
    lines = ["| vault | embedder | notes / true links | links written | precision | recall | "
             "TF-IDF top-k precision | TF-IDF top-k recall | actions |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        acts = ", ".join(f"{k} {v}" for k, v in sorted(r.actions.items()))
        lines.append(f"| {r.vault} | {r.embedder} | {r.notes} / {r.true_links} | {r.written} | "
                     f"{r.precision:.3f} | {r.recall:.3f} | {r.base_precision:.3f} | "
                     f"{r.base_recall:.3f} | {acts} |")
    return "\n".join(lines)


def main(argv: list[str]) -> tuple[str, list[LinkResult]]:
    embedders = [argv[argv.index("--embedder") + 1]] if "--embedder" in argv else ["none", "auto"]
    names = [a for a in argv if a in VAULTS] or list(VAULTS)
    results = [evaluate(n, e) for n in names for e in embedders]
    text = table(results)
    print(text)
    return text, results


if __name__ == "__main__":
    main(sys.argv[1:])
