"""(b) End-to-end dedup through the real integrate path: a digest of one wiki node per STS-B
dev first sentence (each with a Sources section citing a generated daily note), then each second
sentence integrated as a unit (its own daily note) with `integrate_unit`, the local engine and
the real NodeIndex. Units run in dry-run mode: every unit meets the same digest of first
sentences, so one unit's decision never depends on another's.

Reported: for pairs scored >= 4, the share that update their partner node (duplicate avoidance)
and the share that update another node; for pairs <= 2, the share that merge into any node
(false merges); for pairs in between, the share whose new node links the partner.

    .venv/bin/python bench/quality/dedup.py [--sample N] [--embedder none|auto|blended]
                                            [--split tune|test] [stsb cstsb pawsx ...]

`none` is the lexical engine; `blended` blends the embedder into the data set's language whether
or not `embedder: auto` would (decide.EMBED_LANGUAGES is widened for the run), so every language
shows what the embedder does; `auto` is the shipped default, which equals `blended` in the
languages of EMBED_LANGUAGES and `none` in the others (`shipped` tells which row it is).

Data sets, held out from tuning: STS-B dev, Chinese STS-B dev, the `test` half of PAWS-X zh dev
(a paraphrase counts as same, a non-paraphrase as low: it must never merge). `--split tune` runs
the same code on each set's tuning split instead (STS-B and Chinese STS-B train, PAWS-X zh `tune`,
the realistic-vault pairs' `tune` half): the side to choose rules on; the default is `test`.
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import splits
from data import DATASETS, SPLITS, Pair, load
from vaults import NodeSpec, Runner, unit, write_node, write_note

from remelink.models.local import decide
from remelink.models.local import text as tx
from remelink.vault.paths import slugify


@dataclass(frozen=True)
class DedupResult:
    dataset: str
    embedder: str
    pairs: int
    same: int
    unrelated: int
    middle: int
    partner_updates: float     # >= 4: updated the partner
    other_updates: float       # >= 4: updated some other node
    false_merges: float        # <= 2: updated any node
    partner_merges: float      # <= 2: updated its own partner (gold says: wrong)
    identical_merges: float    # <= 2: updated another node whose sentence has the unit's words
    related_linked: float      # 2 < s < 4: created and linked the partner
    failed: int
    units_per_s: float
    actions: dict[str, int]
    # Per pair of the label, in data order (for paired bootstraps between embedders):
    same_partner: tuple[bool, ...] = ()   # same: updated its partner
    low_merged: tuple[bool, ...] = ()     # low: updated a node without the unit's exact words
    low_partner: tuple[bool, ...] = ()    # low: updated its partner
    side: str = "test"                    # which split of the data set: tune or test


def node_path(i: int, sentence: str) -> str:
    return f"digest/wiki/{slugify(tx.title_from(sentence))[:60]}-{i}.md"


def shipped(dataset: str) -> str:
    """Which row `embedder: auto` (the default) is for this data set's language."""
    return "blended" if decide.uses_embedder(DATASETS[dataset][0]) else "none"


def run(pairs: list[Pair], embedder: str, dataset: str = "stsb") -> DedupResult:
    if embedder != "blended":
        return _run(pairs, embedder, dataset)
    saved = decide.EMBED_LANGUAGES
    decide.EMBED_LANGUAGES = saved | {DATASETS[dataset][0]}
    try:
        return replace(_run(pairs, "auto", dataset), embedder="blended")
    finally:
        decide.EMBED_LANGUAGES = saved


def _run(pairs: list[Pair], embedder: str, dataset: str = "stsb") -> DedupResult:
    with tempfile.TemporaryDirectory(prefix="remelink-dedup-") as tmp:
        root = Path(tmp)
        partner: dict[int, str] = {}
        for i, p in enumerate(pairs):
            path = node_path(i, p.a)
            partner[i] = path
            write_node(root, NodeSpec(path, tx.title_from(p.a), p.a, p.a,
                                      f"daily/2026-06-01/sts-{i}.md", f"# Note {i}\n\n{p.a}"))
            write_note(root, f"daily/2026-06-02/unit-{i}.md", f"# Note {i}\n\n{p.b}")
        runner = Runner(root, embedder)
        actions: dict[str, int] = {}
        same_ok = same_other = false_merge = partner_merge = identical = linked = failed = 0
        same_partner: list[bool] = []
        low_merged: list[bool] = []
        low_partner: list[bool] = []
        sentence = {partner[i]: p.a for i, p in enumerate(pairs)}
        started = time.perf_counter()
        for i, p in enumerate(pairs):
            result = runner.run(unit(tx.title_from(p.b), p.b, [f"daily/2026-06-02/unit-{i}.md"]),
                                dry_run=True)
            action = result.action or "FAILED"
            actions[action] = actions.get(action, 0) + 1
            if not result.ok:
                failed += 1
                if p.label == "same_abstraction":
                    same_partner.append(False)
                elif p.label == "unrelated":
                    low_merged.append(False)
                    low_partner.append(False)
                continue
            merged = action != "CREATE"
            # A node of the partner's very sentence is the partner: a sentence repeated across
            # pairs gets a node per pair (the realistic-vault sets give each source sentence a
            # paraphrase pair and a hard-negative pair: a negative's unit that merged into its
            # sentence's other node counted as "another node", never "into the partner").
            into_partner = merged and (result.target == partner[i] or
                                       sentence.get(result.target or "") == p.a)
            if p.label == "same_abstraction":
                same_ok += into_partner
                same_other += merged and not into_partner
                same_partner.append(into_partner)
            elif p.label == "unrelated":
                same_words = merged and not into_partner and \
                    decide.bag(sentence.get(result.target or "", "")).counts == \
                    decide.bag(p.b).counts
                false_merge += merged
                partner_merge += into_partner
                identical += same_words
                low_merged.append(merged and not same_words)
                low_partner.append(into_partner)
            elif not merged and partner[i] in result.related:
                linked += 1
        seconds = time.perf_counter() - started
        runner.close()
    n_same = sum(1 for p in pairs if p.label == "same_abstraction")
    n_unrel = sum(1 for p in pairs if p.label == "unrelated")
    n_mid = len(pairs) - n_same - n_unrel
    return DedupResult(dataset, embedder, len(pairs), n_same, n_unrel, n_mid,
                       same_ok / max(1, n_same),
                       same_other / max(1, n_same), false_merge / max(1, n_unrel),
                       partner_merge / max(1, n_unrel), identical / max(1, n_unrel),
                       linked / max(1, n_mid), failed, len(pairs) / seconds, actions,
                       tuple(same_partner), tuple(low_merged), tuple(low_partner))


def sample(n: int | None, seed: int = 7, dataset: str = "stsb",
           side: str = "test") -> list[Pair]:
    pairs = load(dataset, SPLITS[dataset][0 if side == "tune" else 1])
    if n and n < len(pairs):
        pairs = random.Random(seed).sample(pairs, n)
    return pairs


def table(results: list[DedupResult]) -> str:
    lines = ["| pairs (data) | embedder (the default `auto` is the row marked shipped) | pairs "
             "(same / low / between) | duplicate avoidance (same "
             "updates its partner) | same updates another node | false merges (low updates a "
             "node, not one with the unit's exact words) | of which into the partner | low "
             "into a node with the unit's exact words | between: partner linked | failed | "
             "units/s |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        real = r.false_merges - r.identical_merges
        split, role = (SPLITS[r.dataset][0], splits.label(splits.TUNING)) if r.side == "tune" else \
            (SPLITS[r.dataset][1], splits.label(splits.HELD_OUT))
        lines.append(f"| {r.dataset} {split} ({role}) | "
                     f"{r.embedder}{' (shipped)' if shipped(r.dataset) == r.embedder else ''} | "
                     f"{r.pairs} ({r.same} / {r.unrelated} / "
                     f"{r.middle}) | **{100 * r.partner_updates:.1f} %** | "
                     f"{100 * r.other_updates:.1f} % | **{100 * real:.1f} %** | "
                     f"{100 * r.partner_merges:.1f} % | {100 * r.identical_merges:.1f} % | "
                     f"{100 * r.related_linked:.1f} % | {r.failed} | {r.units_per_s:.1f} |")
    return "\n".join(lines)


def main(argv: list[str]) -> tuple[str, list[DedupResult]]:
    n = int(argv[argv.index("--sample") + 1]) if "--sample" in argv else None
    embedders = [argv[argv.index("--embedder") + 1]] if "--embedder" in argv else \
        ["none", "blended"]
    side = argv[argv.index("--split") + 1] if "--split" in argv else "test"
    if side not in ("tune", "test"):
        raise SystemExit(f"--split tune|test, not {side!r}")
    datasets = [a for a in argv if a in DATASETS] or list(DATASETS)
    results = [replace(run(sample(n, dataset=d, side=side), e, d), side=side)
               for d in datasets for e in embedders]
    text = table(results)
    print(text)
    for r in results:
        print(r.dataset, r.embedder, r.actions)
    return text, results


if __name__ == "__main__":
    main(sys.argv[1:])
