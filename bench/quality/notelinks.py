"""Links across notes after a real `dream run` of a link vault (issue 21): the SilverBullet and
Foam docs (../shared/data/link-vaults/) laid out as raw notes under `resource/` (their folders
kept, `links.resolution: obsidian` as they are written), distilled by the real CLI with the
local engine, then the digest read against the notes' own links:

- note pairs linked: of the pairs of notes that link each other (either way, resolved by the
  vault's file graph, vault/graph.py), the share whose nodes are linked (some node citing one
  links, in its body, a node citing the other), among the pairs where both notes gave a node;
- links across notes: digest-to-digest links between nodes of different notes, and the share
  joining notes that link each other (a lower bound of precision: a link between two notes on
  one subject that do not link each other counts as wrong); links within one note apart;
- per link reason (the sentence that carries it) is not recorded by the digest: the rows above
  are what a reader sees.

Tune on SilverBullet, report Foam (TEAM.md). `--baseline REV` runs git revision REV's code on
the same vault in the same process (a `git archive` of `remelink/` put first on PYTHONPATH).

    .venv/bin/python bench/quality/notelinks.py [silverbullet-docs|foam-docs ...]
        [--embedder none|auto] [--baseline REV] [--keep DIR]
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from relations import read_digest  # noqa: E402

VAULTS = ("silverbullet-docs", "foam-docs")
DATA = ROOT.parent / "shared" / "data" / "link-vaults"


@dataclass(frozen=True)
class NoteLinkResult:
    vault: str
    code: str
    notes: int
    nodes: int
    linking_pairs: int       # pairs of notes that link each other, both with a node
    linking_linked: int      # ... whose nodes are linked
    cross_links: int
    cross_linking: int       # cross-note links joining notes that link each other
    same_note_links: int
    seconds: float


def lay_out(source: Path, root: Path) -> None:
    """The vault's markdown notes under resource/, folders kept; obsidian resolution."""
    for file in sorted(source.rglob("*.md")):
        rel = file.relative_to(source)
        if any(part.startswith(".") for part in rel.parts):
            continue
        target = root / "resource" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(file, target)
    (root / "digest").mkdir(parents=True, exist_ok=True)
    (root / ".remelink").mkdir(parents=True, exist_ok=True)
    (root / ".remelink" / "config.yaml").write_text(
        "model: local\nlinks: {resolution: obsidian}\n", encoding="utf-8")


def note_pairs(root: Path) -> set[frozenset[str]]:
    """Pairs of raw notes that link each other (either way), by the vault's own file graph."""
    from remelink.vault.graph import FileGraph

    graph = FileGraph.build(root, mode="obsidian")
    pairs: set[frozenset[str]] = set()
    for source, edges in graph.outlinks.items():
        if not source.startswith("resource/"):
            continue
        for edge in edges:
            if edge.resolved and edge.target != source and edge.target.startswith("resource/"):
                pairs.add(frozenset((source, edge.target)))
    return pairs


def _archive(rev: str, into: Path) -> Path:
    out = into / f"code-{rev}"
    out.mkdir(parents=True, exist_ok=True)
    tar = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "remelink"],
                         capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(out)], input=tar, check=True)
    return out


def run(vault: str, embedder: str, code: Path | None, label: str,
        keep: Path | None = None) -> NoteLinkResult:
    with tempfile.TemporaryDirectory(prefix="remelink-notelinks-") as tmp:
        root = Path(tmp) / "vault"
        lay_out(DATA / vault, root)
        env = {k: v for k, v in os.environ.items() if not k.startswith("REMELINK_")}
        env["REMELINK_LOCAL__EMBEDDER"] = embedder
        if code is not None:
            env["PYTHONPATH"] = str(code)
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "remelink.cli", "dream", "run", "--vault",
                               str(root)], env=env, capture_output=True, text=True, timeout=7200)
        seconds = time.perf_counter() - started
        if done.returncode not in (0, 1):
            raise RuntimeError(f"dream run failed on {vault}: {done.stderr.strip()[-400:]}")
        nodes = read_digest(root)
        pairs = note_pairs(root)
        cited = {s for n in nodes.values() for s in n.sources}
        citing: dict[str, list[str]] = {}
        for n in nodes.values():
            for s in n.sources:
                citing.setdefault(s, []).append(n.path)
        linked_pairs: set[frozenset[str]] = set()
        cross = cross_linking = same = 0
        for n in nodes.values():
            for target in n.links:
                other = nodes.get(target)
                if other is None:
                    continue
                if n.sources & other.sources:
                    same += 1
                    continue
                cross += 1
                joined = {frozenset((a, b)) for a in n.sources for b in other.sources if a != b}
                if joined & pairs:
                    cross_linking += 1
                linked_pairs |= joined
        possible = {p for p in pairs if p <= cited}
        if keep is not None:
            shutil.rmtree(keep, ignore_errors=True)
            shutil.copytree(root, keep)
        notes = sum(1 for _ in (root / "resource").rglob("*.md"))
        return NoteLinkResult(vault, label, notes, len(nodes), len(possible),
                              len(possible & linked_pairs), cross, cross_linking, same, seconds)


def table(results: list[NoteLinkResult]) -> str:
    lines = ["| vault | code | notes | nodes | linking note pairs linked | links across notes "
             "(joining linking notes) | links within a note | dream run |",
             "|---|---|---|---|---|---|---|---|"]
    for r in results:
        lines.append(
            f"| {r.vault} | {r.code} | {r.notes} | {r.nodes} | {r.linking_linked}/"
            f"{r.linking_pairs} ({r.linking_linked / max(1, r.linking_pairs):.0%}) | "
            f"{r.cross_links} ({r.cross_linking}, {r.cross_linking / max(1, r.cross_links):.0%})"
            f" | {r.same_note_links} | {r.seconds:.0f} s |")
    return "\n".join(lines)


def main(argv: list[str]) -> tuple[str, list[NoteLinkResult]]:
    vaults = [a for a in argv if a in VAULTS] or list(VAULTS)
    embedder = argv[argv.index("--embedder") + 1] if "--embedder" in argv else "none"
    keep = Path(argv[argv.index("--keep") + 1]) if "--keep" in argv else None
    results = []
    with tempfile.TemporaryDirectory(prefix="remelink-notelinks-code-") as tmp:
        codes: list[tuple[str, Path | None]] = [("HEAD", None)]
        if "--baseline" in argv:
            rev = argv[argv.index("--baseline") + 1]
            codes.insert(0, (rev, _archive(rev, Path(tmp))))
        for vault in vaults:
            for label, code in codes:
                where = keep / f"{vault}-{label}" if keep else None
                results.append(run(vault, embedder, code, label, where))
                print(table(results[-1:]).splitlines()[-1], flush=True)
    text = table(results)
    print(text)
    return text, results


if __name__ == "__main__":
    main(sys.argv[1:])
