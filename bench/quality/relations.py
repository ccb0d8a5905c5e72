"""Relations on the realistic vaults (`bench/realvault/{dev,heldout}`, issue 21): after a `dream
run` of the vault (the real CLI, the local engine), read the digest against the answer key:

- related note pairs linked: some node citing one note links (in its body) a node citing the
  other, or one node cites both (they state the same thing); by language (en, zh, en-zh);
- links between nodes of different notes: how many, and the share joining notes the key
  relates (a lower bound of precision: the key lists the pairs its author saw, not every one);
  the same for links between nodes of one note, counted apart;
- corrections landed in the right node: a node citing the note that held the old value also
  cites the correcting note in a correction line (`> Corrected on ...`, `> ... 更正`), and the
  old value is still visible; by language of the correcting note;
- restatements recognised: a node citing the earlier note also cites the later one; by
  language of the later note.

Tune on `dev`, report `heldout` (TEAM.md). `--embedder none|auto` (default: both).

    .venv/bin/python bench/quality/relations.py [dev|heldout ...] [--embedder none|auto]
        [--keep DIR] [--write]

`--write` puts the table into docs/benchmarks.md (section `realvault-relations`).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.realvault import load  # noqa: E402

_LINK = re.compile(r"\[\[([^\]|#]+)")


@dataclass
class Node:
    path: str
    body: str                 # before `## Sources`
    text: str                 # the whole file
    sources: set[str]         # raw notes its Sources cite
    links: set[str]           # digest nodes its body links


@dataclass
class Result:
    split: str
    embedder: str
    nodes: int
    related: Counter[str] = field(default_factory=Counter)         # lang -> pairs
    related_linked: Counter[str] = field(default_factory=Counter)  # lang -> linked pairs
    cross_links: int = 0
    cross_keyed: int = 0
    same_note_links: int = 0
    corrections: Counter[str] = field(default_factory=Counter)
    corrections_landed: Counter[str] = field(default_factory=Counter)
    restatements: Counter[str] = field(default_factory=Counter)
    restatements_found: Counter[str] = field(default_factory=Counter)
    actions: Counter[str] = field(default_factory=Counter)
    missed_related: list[str] = field(default_factory=list)
    missed_corrections: list[str] = field(default_factory=list)
    missed_restatements: list[str] = field(default_factory=list)
    wrong_links: list[str] = field(default_factory=list)


def read_digest(root: Path) -> dict[str, Node]:
    nodes: dict[str, Node] = {}
    for file in sorted((root / "digest").rglob("*.md")):
        rel = file.relative_to(root).as_posix()
        text = file.read_text(encoding="utf-8")
        m = re.search(r"^##\s+Sources\s*$", text, re.M | re.I)
        body, tail = (text[:m.start()], text[m.end():]) if m else (text, "")
        nodes[rel] = Node(rel, body, text,
                          {t for t in _LINK.findall(tail) if not t.startswith("digest/")},
                          {t for t in _LINK.findall(body) if t.startswith("digest/")})
    return nodes


def _lang(langs: dict[str, str], *notes: str) -> str:
    found = sorted({langs.get(n, "en") for n in notes})
    return "-".join(found)


def _correction_lines(node: Node, source: str) -> list[str]:
    return [line for line in node.text.splitlines()
            if line.lstrip().startswith(">") and f"[[{source}" in line
            and re.search(r"Corrected|更正", line)]


def evaluate(root: Path, split: str, embedder: str) -> Result:
    key = load(split)
    langs = {p: n.lang for p, n in key.notes.items()}
    nodes = read_digest(root)
    result = Result(split, embedder, len(nodes))
    citing: dict[str, list[Node]] = {}
    for node in nodes.values():
        for source in node.sources:
            citing.setdefault(source, []).append(node)
    keyed = {frozenset((r.a, r.b)) for r in key.related}
    for r in key.related:
        lang = _lang(langs, r.a, r.b)
        result.related[lang] += 1
        xs, ys = citing.get(r.a, []), citing.get(r.b, [])
        linked = any(x.path == y.path or y.path in x.links or x.path in y.links
                     for x in xs for y in ys)
        result.related_linked[lang] += linked
        if not linked:
            result.missed_related.append(f"{r.a} <-> {r.b} ({r.why})")
    for node in nodes.values():
        for target in node.links:
            other = nodes.get(target)
            if other is None:
                continue
            if node.sources & other.sources:
                result.same_note_links += 1
                continue
            result.cross_links += 1
            if any(frozenset((a, b)) in keyed for a in node.sources for b in other.sources):
                result.cross_keyed += 1
            else:
                result.wrong_links.append(f"{node.path} -> {target}")
    for c in key.corrections:
        lang = langs.get(c.note, "en")
        result.corrections[lang] += 1
        landed = any(c.note in n.sources and _correction_lines(n, c.note)
                     for n in citing.get(c.corrects, []))
        result.corrections_landed[lang] += landed
        if not landed:
            result.missed_corrections.append(f"{c.corrects} <- {c.note} ({c.old} -> {c.new})")
    for s in key.restatements:
        lang = langs.get(s.note, "en")
        result.restatements[lang] += 1
        found = any(s.note in n.sources for n in citing.get(s.restates, []))
        result.restatements_found[lang] += found
        if not found:
            result.missed_restatements.append(f"{s.restates} <- {s.note} ({s.fact})")
    return result


def run(split: str, embedder: str = "none", keep: Path | None = None) -> Result:
    """Copy the vault, `dream run` it with the real CLI, and read the digest."""
    source = ROOT / "bench" / "realvault" / split
    with tempfile.TemporaryDirectory(prefix="remelink-relations-") as tmp:
        root = Path(tmp) / "vault"
        shutil.copytree(source, root, ignore=shutil.ignore_patterns("key.yaml"))
        env = {k: v for k, v in os.environ.items() if not k.startswith("REMELINK_")}
        env["REMELINK_LOCAL__EMBEDDER"] = embedder
        exe = Path(sys.executable).with_name("remelink")
        done = subprocess.run([str(exe), "dream", "run", "--vault", str(root), "--json"],
                              env=env, capture_output=True, text=True, timeout=3600)
        if done.returncode not in (0, 1):
            raise RuntimeError(f"dream run failed on {split}: {done.stderr.strip()[-400:]}")
        result = evaluate(root, split, embedder)
        import json

        try:
            data = json.loads(done.stdout)
            for unit in data.get("data", {}).get("units", []):
                result.actions[str(unit.get("action") or unit.get("status"))] += 1
        except ValueError:
            pass
        if keep is not None:
            shutil.rmtree(keep, ignore_errors=True)
            shutil.copytree(root, keep)
    return result


def _share(found: Counter[str], total: Counter[str]) -> str:
    cells = []
    for lang in sorted(total):
        cells.append(f"{lang} {found[lang]}/{total[lang]}")
    all_found, all_total = sum(found.values()), sum(total.values())
    cells.append(f"all {all_found}/{all_total} ({all_found / max(1, all_total):.0%})")
    return ", ".join(cells)


def table(results: list[Result]) -> str:
    lines = ["| vault | embedder | nodes | related pairs linked | links across notes (keyed) "
             "| links within a note | corrections landed | restatements recognised | actions |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        lines.append(
            f"| {r.split} | {r.embedder} | {r.nodes} | {_share(r.related_linked, r.related)} | "
            f"{r.cross_links} ({r.cross_keyed}, {r.cross_keyed / max(1, r.cross_links):.0%}) | "
            f"{r.same_note_links} | {_share(r.corrections_landed, r.corrections)} | "
            f"{_share(r.restatements_found, r.restatements)} | "
            f"{', '.join(f'{k} {v}' for k, v in sorted(r.actions.items()))} |")
    return "\n".join(lines)


def main(argv: list[str]) -> tuple[str, list[Result]]:
    if "-h" in argv or "--help" in argv:  # else it would run every split
        print(__doc__)
        raise SystemExit(0)
    splits = [a for a in argv if a in ("dev", "heldout")] or ["heldout", "dev"]
    embedders = [argv[argv.index("--embedder") + 1]] if "--embedder" in argv else \
        ["none", "auto"]
    keep = Path(argv[argv.index("--keep") + 1]) if "--keep" in argv else None
    results = []
    for split in splits:
        for embedder in embedders:
            where = keep / f"{split}-{embedder}" if keep else None
            results.append(run(split, embedder, where))
    text = table(results)
    print(text)
    if "--write" in argv:
        from bench._report import write_section

        marked = text.replace("| heldout |", "| heldout (**held out**) |").replace(
            "| dev |", "| dev (tuning) |")
        write_section("realvault-relations", f"""## Realistic vaults end to end: links, \
corrections, restatements

Each realistic vault of `bench/realvault/` (a team's notes in English and Chinese, written for
this project, with an answer key `key.yaml` a person wrote) through the real `dream run` (local
engine, embedder `none` and `auto`), the digest read against the key. *Related pairs linked*:
some node citing one note links a node citing the other, or one node cites both; by language
(en, zh, en-zh). *Links across notes (keyed)*: links between nodes of different notes, and how
many join notes the key relates (a lower bound of precision: the key lists the pairs its author
saw). *Corrections landed*: a node citing the note with the old value also cites the correcting
note in a correction line, the old value still visible. *Restatements recognised*: a node citing
the earlier note also cites the later one. *Actions*: the units' decisions. `dev` is tuning
data, `heldout` the result.

{marked}""", "python bench/quality/relations.py --write")
    if "-v" in argv:
        for r in results:
            print(f"\n## {r.split} / {r.embedder}")
            for title, items in (("related pairs not linked", r.missed_related),
                                 ("corrections not landed", r.missed_corrections),
                                 ("restatements not recognised", r.missed_restatements),
                                 ("links across notes the key does not relate", r.wrong_links)):
                print(f"{title} ({len(items)}):")
                for item in items:
                    print(f"  - {item}")
    return text, results


if __name__ == "__main__":
    main(sys.argv[1:])
