"""The headline figures the README points to (docs/figures.md), copied from
docs/benchmarks.md: one source of truth.

Each figure of the list (between `<!-- figures -->` and `<!-- /figures -->` in docs/figures.md)
is a cell or phrase of one section of docs/benchmarks.md, found by a pattern below; this script
rewrites the list from the sections as they are, and `--check` (run by
tests/test_readme_figures.py) fails when the list says anything else, or when a pattern no
longer finds its figure (a section changed shape: fix the pattern, never the number).

    python bench/readme_figures.py           # rewrite the list
    python bench/readme_figures.py --check   # exit 1 when they differ
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "benchmarks.md"
README = ROOT / "docs" / "figures.md"  # the README links it as its figures
BLOCK = re.compile(r"<!-- figures -->\n.*?<!-- /figures -->", re.S)

_N = r"([\d.,]+ ?(?:s|ms|x|MB))"  # a measured value with its unit

# name -> (section, pattern whose first group is the figure)
FIGURES: dict[str, tuple[str, str]] = {
    "lint_10k": ("lint", r"\| `remelink-lint-links` whole vault \| path-10k \| \d+ \| " + _N),
    "lint_5": ("lint", r"\| `remelink-lint-links` 5 files \(pre-commit\) \| path-10k \| \d+ \| "
               + _N),
    "lint_help": ("lint", r"\| `remelink-lint-links --help` \(start-up\) \| - \| \d+ \| " + _N),
    "mdlint_1k": ("lint", r"\| mdlint-obsidian [\d.]+ `--vault` \| obsidian-1k \|"
                  r"(?: [^|]* \|){6} ([\d.]+x)"),
    "otools_1k": ("lint", r"\| obsidiantools [\d.]+ `Vault.connect\(\)` \| obsidian-1k \|"
                  r"(?: [^|]* \|){6} ([\d.]+x)"),
    "otools_10k": ("lint", r"\| obsidiantools [\d.]+ `Vault.connect\(\)` \| obsidian-10k \| \d+ \| "
                   + _N),
    "mdlint_10k": ("lint", r"\| mdlint-obsidian [\d.]+ `--vault` \| obsidian-10k \| \d+ \| " + _N),
    "precommit_renames": ("precommit", r"\| 5 files, git repository, a rename and a deletion "
                          r"staged \| [\d.]+ s \| ([\d.]+ s)"),
    "q10": ("search", r"\| 10,000 nodes \|.*?\| warm query p50, 10 words \| ([\d.]+ ms)"),
    "cold": ("search", r"\| 10,000 nodes \|.*?\| cold process \+ 1 query \| ([\d.]+ ms)"),
    "update_10k": ("search", r"\| 10,000 nodes \|.*?\| one-node update \| ([\d.]+ ms)"),
    "build_10k": ("search", r"\| 10,000 \([^|]*\) \|(?: [^|]* \|){2} \*\*([\d.]+ s)\*\*"),
    "rss_10k": ("search", r"\| 10,000 \([^|]*\) \|(?: [^|]* \|){7} \*\*(\d+ MB)\*\*"),
    "til_ns": ("search-recall", r"\| til-simonw \(\*\*held-out\*\*\) \| [^|]* \| node-search \| "
               r"([\d.]+)"),
    "til_tfidf": ("search-recall", r"\| til-simonw \(\*\*held-out\*\*\) \| [^|]* \| tfidf \| "
                  r"([\d.]+)"),
    "til_margin": ("search-recall", r"\| til-simonw \(\*\*held-out\*\*\) \| ([+-][\d.]+ "
                   r"\([^)]*\)) \|"),
    "foam_ns": ("search-recall", r"\| foam-docs \([^|]*\) \| [^|]* \| node-search \| ([\d.]+)"),
    "foam_tfidf": ("search-recall", r"\| foam-docs \([^|]*\) \| [^|]* \| tfidf \| ([\d.]+)"),
    "lc_nodes": ("locomo", r"\| \*\*held-out \(conv-49, conv-50\)\*\* \| [^|]* \| [^|]* \| "
                 r"(\d+) \|"),
    "lc_session": ("locomo", r"\| node-search \| ([\d.]+) \|"),
    "lc_turn": ("locomo", r"\| node-search \| [\d.]+ \| ([\d.]+) \|"),
    "lc_tfidf_nodes": ("locomo", r"\| TF-IDF over the nodes \| ([\d.]+) \|"),
    "lc_tfidf_turn": ("locomo", r"\| TF-IDF over the nodes \| [\d.]+ \| ([\d.]+) \|"),
    "lc_random": ("locomo", r"\| 5 random nodes \| ([\d.]+) \|"),
    "lc_tfidf_turns": ("locomo", r"\| TF-IDF over the raw turns \| ([\d.]+) \|"),
    "lc_recall": ("locomo", r"\| \*\*held-out \(conv-49, conv-50\)\*\* \|(?: [^|]* \|){5} "
                  r"([\d.]+ \(\d+/\d+\))"),
    "lc_precision": ("locomo", r"\| \*\*held-out \(conv-49, conv-50\)\*\* \|(?: [^|]* \|){6} "
                     r"([\d.]+ \(\d+/\d+\))"),
    "dream_units": ("dream", r"\*\*Wall time \d+ s \([^)]*\) for\s+(\d+) units"),
    "dream_wall": ("dream", r"\*\*Wall time (\d+ s)"),
    "crash": ("crash", r"\*\*Result: (\d+/\d+ kills recovered)"),
    "til_n": ("foreign-heldout", r"\| til-simonw \*\*held-out\*\* \| (\d+) \|"),
    "til_verdict": ("foreign-heldout", r"\| til-simonw \*\*held-out\*\* \| \d+ \| (\d+/\d+) \|"),
    "til_per_note": ("foreign-heldout", r"\| til-simonw \*\*held-out\*\* \|(?: [^|]* \|){3} "
                     r"([\d.]+) \|"),
    "til_code": ("foreign-heldout", r"\| til-simonw \*\*held-out\*\* \|(?: [^|]* \|){4} "
                 r"[\d.]+% / ([\d.]+%)"),
    "rv_facts": ("foreign-heldout", r"- realvault: facts kept: (en \d+/\d+ \(\d+%\), "
                 r"zh \d+/\d+ \(\d+%\))"),
    "pawsx_fm": ("pair-merges", r"\| PAWS-X zh \| test \(\*\*held out\*\*\) \| "
                 r"(\d+/\d+ \([\d.]+%\))"),
    "stsb_fm": ("pair-merges", r"\| STS-B \| dev \(\*\*held out\*\*\) \| (\d+/\d+ \([\d.]+%\))"),
}

TEMPLATE = """\
Measured on this project's 2-core machine, side by side with peers in the same run. Every
figure is copied from [benchmarks.md](benchmarks.md) by `bench/readme_figures.py`
(a test fails when they differ), where each comes with its command, the commit and the date it
ran at, and whether it is held-out data; the engine's quality figures below are held out.

- `lint-links` on a 10,000-note vault: {lint_10k}; 5 files (the pre-commit case) {lint_5}
  ({precommit_renames} when the commit renames or deletes notes, whose links it then looks
  for); `remelink-lint-links` start-up {lint_help}. On 1,000 notes {mdlint_1k} faster than
  mdlint-obsidian and {otools_1k} faster than obsidiantools; on 10,000 notes obsidiantools
  takes {otools_10k} and mdlint-obsidian {mdlint_10k}. It is the only one of the three that
  checks anchors, and it reports no false alarms on the generated vaults.
- `node-search` on 10,000 nodes: a warm 10-word query {q10} (median), a whole `remelink
  node-search` process {cold}, a one-node update {update_10k}; building the index from scratch
  {build_10k} on two cores, peaking at {rss_10k}. Recall@10 of hidden links on the held-out
  til-simonw notes {til_ns} against {til_tfidf} for plain TF-IDF (node-search minus TF-IDF:
  {til_margin}); on the Foam docs (held out, but seen while its settings were chosen) {foam_ns}
  against {foam_tfidf}.
- Conversations: the held-out LoCoMo conversations (conv-49 and conv-50, as daily notes)
  through `dream run` with the local engine: {lc_nodes} nodes, a share of {lc_precision} of
  them stating a fact the data set's annotators kept, {lc_recall} of those facts kept. Asked
  the data set's questions, `node-search` returns a node citing an evidence session in its top
  5 for {lc_session} of them, and a node naming the evidence turn for {lc_turn}; on the same
  nodes plain TF-IDF scores {lc_tfidf_nodes} and {lc_tfidf_turn}, five random nodes
  {lc_random} (session level), TF-IDF over the raw turns {lc_tfidf_turns}.
- `dream run` with the local engine: {dream_units} units into a 10,000-node vault in
  {dream_wall}; killed with SIGKILL at random instants and rerun, the vault ends byte-identical
  to an uninterrupted run ({crash}).
- Notes nobody here wrote: {til_n} held-out til-simonw notes (one engineer's how-to notes)
  through `dream run` with the local engine: {til_verdict} get a verdict, {til_per_note} nodes
  per note, {til_code} of their code kept as code; on the held-out realistic vault, key facts
  kept {rv_facts}. Deciding whether a unit restates a node, the engine merges {pawsx_fm} of the
  held-out PAWS-X zh non-paraphrases (target: below 2 %) and {stsb_fm} of STS-B dev's.
"""


def sections(text: str) -> dict[str, str]:
    return {m.group(1): m.group(2) for m in
            re.finditer(r"<!-- bench:([\w-]+) -->\n(.*?)<!-- /bench:\1 -->", text, re.S)}


def values(doc: str) -> dict[str, str]:
    found = sections(doc)
    out = {}
    for name, (section, pattern) in FIGURES.items():
        if section not in found:
            raise SystemExit(f"docs/benchmarks.md has no section {section!r} (figure {name})")
        m = re.search(pattern, found[section], re.S)
        if m is None:
            raise SystemExit(f"figure {name}: no match in section {section!r} of "
                             f"docs/benchmarks.md; fix the pattern in bench/readme_figures.py")
        out[name] = " ".join(m.group(1).split())
    return out


def render(doc: str) -> str:
    return "<!-- figures -->\n" + TEMPLATE.format(**values(doc)) + "<!-- /figures -->"


def main(argv: list[str]) -> int:
    doc = DOC.read_text(encoding="utf-8")
    readme = README.read_text(encoding="utf-8")
    if not BLOCK.search(readme):
        raise SystemExit(f"{README} has no <!-- figures --> block")
    want = BLOCK.sub(lambda _: render(doc), readme)
    if "--check" in argv:
        if want != readme:
            print(f"{README.name}'s figures differ from docs/benchmarks.md: run "
                  "`python bench/readme_figures.py`", file=sys.stderr)
            return 1
        return 0
    README.write_text(want, encoding="utf-8")
    print(f"wrote the figures of {README}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
