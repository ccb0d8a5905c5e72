"""Conversations become memory: the 8 LoCoMo training conversations through `dream run`.

Each conversation (../shared/data/locomo-train/, SOURCE.md there) is written as a vault of daily
notes, one per session, by bench/locomo.py (`Name (D3:7): text` turns, `daily/<date>/`), and
distilled by `remelink dream run` with the local engine at its default configuration (the
embedder for English decisions, every changed note read in one pass, no unit cap).

**Split** (bench/splits.py): conv-49 and conv-50 are held out and are the results; the six
others were used to tune the engine (e.g. `profile.MIN_WORDS_ALONE`, the tag rules) and are
reported as tuning, never pooled into a headline. Reported per conversation and per side:

1. evidence recall@5 of the questions (categories 1-4) at session and at turn level, for
   node-search and the like-for-like baselines of bench/locomo_recall.py (TF-IDF over the same
   nodes, five random nodes, TF-IDF and random over the raw turns), with the margins and their
   bootstrap intervals;
2. observation recall (gold observations some node citing their session states) and node
   precision (nodes that state some gold observation of a session they cite), by the matching
   rule of bench/locomo_eval.py;
3. chatter nodes; 4. boilerplate sentences; 5. tag precision on the hand-labelled nodes of
   bench/locomo/tag_labels.yaml, per side.
The held-out conversations are also run with the extraction batches an LLM gets
(`auto_dream.batch_tokens: 15000`). Also the extraction alone (in process, all notes of a
conversation in one call of the local engine's `extract`): its time, and per conversation the
share of notes with a verdict (a unit or a reason), with at least one unit, and units per note.

    python bench/bench_locomo.py [--only conv-49] [--keep DIR] [--no-doc] [--no-batches]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE / "quality"))

import locomo_recall as lr  # noqa: E402
import splits  # noqa: E402
import spread  # noqa: E402
import yaml  # noqa: E402
from _report import machine, write_section  # noqa: E402
from locomo import Conversation, load, write_vault  # noqa: E402
from locomo_eval import (  # noqa: E402
    THRESHOLD,
    Node,
    boilerplate,
    chatter,
    read_nodes,
    states,
    terms,
)
from orphans import lint_orphans  # noqa: E402

LABELS = HERE / "locomo" / "tag_labels.yaml"


@dataclass
class Result:
    sample_id: str
    sessions: int
    turns: int
    recall: lr.Scores | None = None
    observations: int = 0
    recalled: int = 0
    nodes: int = 0
    precise: int = 0
    orphans: int = 0       # nodes `orphan-node` flags (no link to or from another node)
    lint_errors: int = 0
    chatter: list[str] = field(default_factory=list)
    boilerplate: list[tuple[str, int]] = field(default_factory=list)
    extract_seconds: float = 0.0
    units: int = 0
    with_verdict: int = 0
    with_units: int = 0
    dream_seconds: float = 0.0
    actions: dict[str, int] = field(default_factory=dict)
    failed: int = 0


def extraction(conv: Conversation, vault: Path) -> tuple[float, list[dict[str, Any]],
                                                         dict[str, str]]:
    """The local engine's extraction over all the conversation's notes, in one call."""
    from remelink.models.local import extract
    from remelink.vault import frontmatter
    from remelink.vault.notes import parse_text

    notes = []
    for path in conv.paths.values():
        note = parse_text(path, (vault / path).read_text(encoding="utf-8"))
        notes.append((note, dict(frontmatter.load(note))))
    started = time.perf_counter()
    units, skipped = extract.extract(notes)
    return time.perf_counter() - started, units, skipped


def dream(vault: Path) -> tuple[float, dict[str, Any]]:
    exe = Path(sys.executable).parent / "remelink"
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True", LITELLM_OFFLINE_MODE="true")
    started = time.perf_counter()
    proc = subprocess.run([str(exe), "dream", "run", "--vault", str(vault), "--json"],
                          capture_output=True, text=True, env=env, check=False)
    seconds = time.perf_counter() - started
    if proc.returncode not in (0, 1):
        raise SystemExit(f"dream run failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return seconds, json.loads(proc.stdout)


def observation_scores(conv: Conversation, nodes: list[Node]) -> tuple[int, int, int]:
    names = conv.speakers
    by_path: dict[str, list[set[str]]] = {}
    gold = []
    for o in conv.observations:
        path = conv.paths.get(o.session)
        if path is None:
            continue
        t = terms(o.text, names)
        gold.append((path, t))
        by_path.setdefault(path, []).append(t)
    sentences = {n.path: n.sentences() for n in nodes}
    recalled = sum(1 for path, t in gold
                   if any(path in n.cites and states(sentences[n.path], t, names)
                          for n in nodes))
    precise = sum(1 for n in nodes
                  if any(states(sentences[n.path], t, names)
                         for path in n.cites for t in by_path.get(path, [])))
    return len(gold), recalled, precise


def calibrate(convs: list[Conversation]) -> tuple[float, float]:
    """The matching rule on the raw turns: how often an observation's own evidence turn
    states it, and how often another turn of the same speaker and session does."""
    own = own_n = other = other_n = 0
    for conv in convs:
        for o in conv.observations:
            session = next((s for s in conv.sessions if s.number == o.session), None)
            if session is None:
                continue
            t = terms(o.text, conv.speakers)
            for turn in session.turns:
                if turn.speaker != o.speaker:
                    continue
                sentences = [turn.text]
                hit = states(sentences, t, conv.speakers)
                if turn.turn_id in o.evidence:
                    own, own_n = own + hit, own_n + 1
                else:
                    other, other_n = other + hit, other_n + 1
    return own / max(own_n, 1), other / max(other_n, 1)


def fixture_boilerplate(root: Path) -> list[tuple[str, int, int]]:
    """(vault, nodes, boilerplate sentences) for the demo and work fixture vaults, dreamt on a
    copy."""
    out = []
    for name in ("demo-vault", "work-vault"):
        vault = root / name
        shutil.rmtree(vault, ignore_errors=True)
        shutil.copytree(HERE.parent / "fixtures" / name, vault)
        dream(vault)
        nodes = read_nodes(vault)
        out.append((name, len(nodes), len(boilerplate(nodes))))
    return out


def tag_precision(vaults: dict[str, Path]) -> dict[str, tuple[int, int, int, list[str]]]:
    """Per side: (nodes labelled and found, tags written, tags right, wrong tags) on the
    hand-labelled nodes (a node the current engine no longer writes is not counted)."""
    out: dict[str, tuple[int, int, int, list[str]]] = {}
    if not LABELS.exists():
        return out
    labels = yaml.safe_load(LABELS.read_text(encoding="utf-8")) or []
    for item in labels:
        vault = vaults.get(item["conversation"])
        if vault is None or not (vault / item["node"]).exists():
            continue
        side = splits.locomo(item["conversation"])
        seen, written, right, wrong = out.get(side, (0, 0, 0, []))
        node = next(n for n in read_nodes(vault) if n.path == item["node"])
        good = {str(t).casefold() for t in item.get("entities") or []}
        seen += 1
        for tag in node.tags:
            written += 1
            if tag.casefold().replace("_", " ") in good or tag.casefold() in good:
                right += 1
            else:
                wrong.append(f"{item['node']}: {tag}")
        out[side] = (seen, written, right, wrong)
    return out


def run_one(conv: Conversation, root: Path, batch_tokens: int | None = None) -> Result:
    vault = root / conv.sample_id
    shutil.rmtree(vault, ignore_errors=True)
    write_vault(conv, vault, batch_tokens=batch_tokens)
    r = Result(conv.sample_id, len(conv.sessions), sum(len(s.turns) for s in conv.sessions))
    r.extract_seconds, units, skipped = extraction(conv, vault)
    r.units = len(units)
    cited = {p for u in units for p in u["paths"]}
    r.with_units = sum(1 for p in conv.paths.values() if p in cited)
    r.with_verdict = sum(1 for p in conv.paths.values() if p in cited or skipped.get(p))
    r.dream_seconds, envelope = dream(vault)
    counts = envelope.get("counts") or {}
    r.actions = dict(counts.get("actions") or {})
    r.failed = int(counts.get("units_failed") or 0)
    nodes = read_nodes(vault)
    r.nodes = len(nodes)
    r.recall = lr.score(conv, vault)
    _, r.orphans, r.lint_errors = lint_orphans(vault)
    r.observations, r.recalled, r.precise = observation_scores(conv, nodes)
    r.chatter = [n.path for n in nodes if chatter(n)]
    r.boilerplate = boilerplate(nodes)
    return r


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}" if b else "-"


_SUMS = ("sessions", "turns", "observations", "recalled", "nodes", "precise", "units",
         "with_verdict", "with_units", "failed", "orphans", "lint_errors")


def total(results: list[Result], name: str) -> Result:
    out = Result(name, 0, 0)
    for r in results:
        for key in _SUMS:
            setattr(out, key, getattr(out, key) + getattr(r, key))
        out.chatter += r.chatter
        out.boilerplate += r.boilerplate
        out.extract_seconds += r.extract_seconds
        out.dream_seconds += r.dream_seconds
        for k, v in r.actions.items():
            out.actions[k] = out.actions.get(k, 0) + v
    return out


def _scores(results: list[Result]) -> list[lr.Scores]:
    return [r.recall for r in results if r.recall is not None]


def _hit(results: list[Result], ranker: str, level: str) -> str:
    values = lr.pooled(_scores(results), ranker, level)
    return f"{lr.mean(values):.2f}" if values else "-"


def _side(sample_id: str) -> str:
    return splits.label(splits.locomo(sample_id))


def recall_table(held: list[Result], tuning: list[Result]) -> list[str]:
    rows = ["| ranker (5 items per question) | **held-out**: session level | **held-out**: turn "
            "level | tuning: session level | tuning: turn level |", "|---|---|---|---|---|"]
    for ranker in lr.RANKERS:
        rows.append(f"| {ranker} | {_hit(held, ranker, 'session')} | "
                    f"{_hit(held, ranker, 'turn')} | {_hit(tuning, ranker, 'session')} | "
                    f"{_hit(tuning, ranker, 'turn')} |")
    return rows


def margin_rows(results: list[Result]) -> list[str]:
    scores = _scores(results)
    rows = ["| node-search minus | session level (95 % interval) | turn level (95 % interval) |",
            "|---|---|---|"]
    for ranker in lr.RANKERS[1:]:
        cells = [lr.margin(lr.pooled(scores, "node-search", level),
                           lr.pooled(scores, ranker, level)) for level in lr.LEVELS]
        rows.append(f"| {ranker} | {cells[0]} | {cells[1]} |")
    return rows


def report(results: list[Result], calibration: tuple[float, float],
           tags: dict[str, tuple[int, int, int, list[str]]], load: float,
           batches: list[Result] | None = None) -> str:
    held = [r for r in results if splits.locomo(r.sample_id) == splits.HELD_OUT]
    tuning = [r for r in results if splits.locomo(r.sample_id) == splits.TUNING]
    rows = ["| conversation | data | sessions / turns | nodes | node-search hit@5, session | "
            "node-search hit@5, turn | observation recall | node precision | chatter | "
            "boilerplate | orphan nodes | lint errors | actions |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        actions = ", ".join(f"{k} {v}" for k, v in sorted(r.actions.items()))
        rows.append(f"| {r.sample_id} | {_side(r.sample_id)} | {r.sessions} / {r.turns} | "
                    f"{r.nodes} | {_hit([r], 'node-search', 'session')} | "
                    f"{_hit([r], 'node-search', 'turn')} | "
                    f"{_ratio(r.recalled, r.observations)} | {_ratio(r.precise, r.nodes)} | "
                    f"{len(r.chatter)} | {len(r.boilerplate)} | {r.orphans} | "
                    f"{r.lint_errors} | {actions} |")
    groups = [(f"**held-out ({', '.join(r.sample_id for r in held)})**", held, "**held-out**"),
              (f"tuning ({len(tuning)} conversations)", tuning, "tuning"),
              ("all eight (tuning and held-out pooled, as published before the split)",
               results, "both")]
    for label, group, side in groups:
        if not group:
            continue
        t = total(group, label)
        questions = len(lr.pooled(_scores(group), "node-search", "session"))
        rows.append(f"| {label} | {side} | {t.sessions} / {t.turns} | {t.nodes} | "
                    f"{_hit(group, 'node-search', 'session')} ({questions} questions) | "
                    f"{_hit(group, 'node-search', 'turn')} | "
                    f"{_ratio(t.recalled, t.observations)} ({t.recalled}/{t.observations}) | "
                    f"{_ratio(t.precise, t.nodes)} ({t.precise}/{t.nodes}) | {len(t.chatter)} | "
                    f"{len(t.boilerplate)} | {t.orphans} ({_ratio(t.orphans, t.nodes)}) | "
                    f"{t.lint_errors} | {t.failed} failed |")
    everything = total(results, "all")
    cover = ["| conversation | data | notes | with a verdict | with a unit | units | units per "
             "note | extraction |", "|---|---|---|---|---|---|---|---|"]
    for r in [*results, everything]:
        side = _side(r.sample_id) if r is not everything else "both"
        cover.append(f"| {r.sample_id} | {side} | {r.sessions} | "
                     f"{_ratio(r.with_verdict, r.sessions)} | {_ratio(r.with_units, r.sessions)} "
                     f"| {r.units} | {_ratio(r.units, r.sessions)} | {r.extract_seconds:.2f} s |")
    own, other = calibration
    scores = _scores(held)
    per_node = [(s.sessions_per_node, s.turns_per_node, s.nodes_naming_turns, s.nodes)
                for s in scores]
    nodes = sum(n for *_, n in per_node) or 1
    sessions_per_node = sum(a * n for a, _, _, n in per_node) / nodes
    turns_per_node = sum(b * n for _, b, _, n in per_node) / nodes
    naming = sum(c for _, _, c, _ in per_node)
    held_hit = _hit(held, "node-search", "session")
    held_turn = _hit(held, "node-search", "turn")
    lines = [
        "## Conversations: LoCoMo through dream run",
        "",
        "The 8 LoCoMo training conversations (`../shared/data/locomo-train/`), each written as "
        "a vault of daily notes (one per session, `Name (D3:7): text` turns; `bench/locomo.py`) "
        "and distilled by `remelink dream run` with the local engine at its default "
        "configuration (the embedder for English decisions, every changed note read in one "
        "pass, no unit cap). **Split** (`bench/splits.py`): conv-49 and conv-50 are held out; "
        "the six others were used to tune the engine and are shown as tuning data, never as "
        "results.",
        "",
        f"**Protocol, in one line**: each question (categories 1-4) asks `node-search` for 5 "
        f"nodes; a hit at session level is a node whose Sources cite a session holding an "
        f"evidence turn, at turn level a node whose Sources sentence names the evidence turn "
        f"itself; the same 5-item protocol is run in the same process over TF-IDF on the same "
        f"nodes, over 5 random nodes (the exact expectation over every draw), and over the raw "
        f"turns. Held out: node-search {held_hit} at session level, {held_turn} at turn level.",
        "",
        *recall_table(held, tuning),
        "",
        "Margins on the held-out questions (mean per-question difference; "
        f"{spread.described()} over the questions); a margin whose interval includes zero is "
        "not a margin:",
        "",
        *margin_rows(held),
        "",
        f"Why the random rows matter: on the held-out digests a node cites "
        f"{sessions_per_node:.2f} sessions and names {turns_per_node:.2f} turns on average "
        f"({naming} of {sum(n for *_, n in per_node)} nodes name turns), so five nodes cover far "
        "more of a conversation than five turns; the random-node row is what those citations "
        "give without any ranking. No node anchors a turn with a link (a session note has no "
        "block id per turn): the turn level counts the turn ids the Sources sentences write, "
        "which the engine copies from notes that carry them (`Name (D8:13): text`); a note "
        "without turn ids allows session level only.",
        "",
        *rows,
        "",
    ]
    if batches:
        t = total(batches, "batches")
        lines += [f"With the extraction batches an LLM gets (`batch_tokens: 15000`), held-out "
                  f"conversations ({t.nodes} nodes): node-search hit@5 "
                  f"{_hit(batches, 'node-search', 'session')} at session level, "
                  f"{_hit(batches, 'node-search', 'turn')} at turn level (TF-IDF over the same "
                  f"nodes {_hit(batches, 'TF-IDF over the nodes', 'session')} / "
                  f"{_hit(batches, 'TF-IDF over the nodes', 'turn')}); observation recall "
                  f"{_ratio(t.recalled, t.observations)}, node precision "
                  f"{_ratio(t.precise, t.nodes)}, chatter {len(t.chatter)}.", ""]
    lines += [
        f"Matching rule for observations (`bench/locomo_eval.py`: two consecutive sentences of a "
        f"node citing the session hold at least {THRESHOLD:.0%} of the observation's content "
        f"terms, and two), calibrated on the raw turns of all eight conversations (it measures "
        f"the metric, not the engine): an observation's own evidence turn states it in "
        f"{own:.0%} of cases, another turn of the same speaker and session in {other:.1%}.",
        "",
    ]
    for side in (splits.HELD_OUT, splits.TUNING):
        if side not in tags:
            continue
        seen, written, right, wrong = tags[side]
        lines += [f"Tag precision on the {seen} hand-labelled nodes of {splits.label(side)} "
                  f"conversations that this run still writes (`bench/locomo/tag_labels.yaml`; "
                  f"the tag rules were written before the labels): {right} of {written} tags "
                  f"right ({_ratio(right, written)})"
                  + (f"; wrong: {', '.join(wrong[:8])}" if wrong else "") + ".", ""]
    lines += [
        "Extraction alone (the local engine's `extract` on all notes of a conversation at "
        "once) and note coverage:",
        "",
        *cover,
        "",
        f"Extraction of all eight: {everything.extract_seconds:.2f} s; dream run of all eight: "
        f"{everything.dream_seconds:.0f} s (load average {load:.1f} at start).",
    ]
    if everything.chatter:
        lines += ["", "Chatter nodes: " + ", ".join(everything.chatter[:10])]
    if everything.boilerplate:
        lines += ["", "Boilerplate: " + "; ".join(f"{s!r} x{n}" for s, n in
                                                   everything.boilerplate[:5])]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", default=[])
    parser.add_argument("--keep", type=Path, help="write the vaults here and keep them")
    parser.add_argument("--no-doc", action="store_true", help="do not update docs/benchmarks.md")
    parser.add_argument("--no-batches", action="store_true",
                        help="skip the second pass with LLM-sized extraction batches")
    args = parser.parse_args(argv)
    load = os.getloadavg()[0]
    convs = [c for c in load_conversations() if not args.only or c.sample_id in args.only]
    root = args.keep or Path(tempfile.mkdtemp(prefix="remelink-locomo-"))
    root.mkdir(parents=True, exist_ok=True)
    results = []
    for conv in convs:
        r = run_one(conv, root)
        results.append(r)
        print(f"{r.sample_id} ({splits.locomo(r.sample_id)}): {r.nodes} nodes, hit@5 session "
              f"{_hit([r], 'node-search', 'session')} (TF-IDF over the nodes "
              f"{_hit([r], 'TF-IDF over the nodes', 'session')}, 5 random nodes "
              f"{_hit([r], '5 random nodes', 'session')}), turn "
              f"{_hit([r], 'node-search', 'turn')}, recall "
              f"{_ratio(r.recalled, r.observations)}, precision {_ratio(r.precise, r.nodes)}, "
              f"chatter {len(r.chatter)}, boilerplate {len(r.boilerplate)}, extraction "
              f"{r.extract_seconds:.2f} s, dream {r.dream_seconds:.0f} s", flush=True)
    batches = None
    if not args.only and not args.no_batches:
        batches = [run_one(conv, root / "llm-batches", batch_tokens=15_000) for conv in convs
                   if splits.locomo(conv.sample_id) == splits.HELD_OUT]
    calibration = calibrate(convs)
    tags = tag_precision({c.sample_id: root / c.sample_id for c in convs})
    text = report(results, calibration, tags, load, batches)
    if not args.only:
        text += "\n\nBoilerplate on the fixture vaults (the same rule): " + "; ".join(
            f"`fixtures/{name}/` {n} nodes, {b} boilerplate sentences"
            for name, n, b in fixture_boilerplate(root)) + "."
    print(text)
    if not args.no_doc and not args.only:
        write_section("locomo", text, "python bench/bench_locomo.py")
    if args.keep is None:
        shutil.rmtree(root, ignore_errors=True)
    print(machine())
    return 0


def load_conversations() -> list[Conversation]:
    return load()


if __name__ == "__main__":
    sys.exit(main())
