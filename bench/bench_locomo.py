"""Conversations become memory: the 8 LoCoMo training conversations through `dream run`.

Each conversation (../shared/data/locomo-train/, SOURCE.md there) is written as a vault of daily
notes, one per session, by bench/locomo.py (`Name (D3:7): text` turns, `daily/<date>/`), and
distilled by `remelink dream run` with the local engine at its default configuration (the
embedder for English decisions, every changed note read in one pass, no unit cap). Reported
per conversation and overall (scoring rules in bench/locomo_eval.py):

1. evidence-hit@5: for every question of categories 1-4, the top 5 of `node-search QUESTION
   --limit 5` (the same NodeIndex search the command runs) hold a node whose Sources cite a
   session holding some of the question's evidence turns; next to plain TF-IDF over the raw
   turns with the same protocol (the top 5 turns; a hit when one of them is in such a session).
2. observation recall (gold observations some node citing their session states) and node
   precision (nodes that state some gold observation of a session they cite).
3. chatter nodes; 4. boilerplate sentences; 5. tag precision on the hand-labelled nodes of
   bench/locomo/tag_labels.yaml (which tags would be right for each: its people,
   organisations, projects and products).
The vaults use remelink's default configuration (the local engine reads every changed note in
one pass, so a topic a person returns to over many sessions is grouped at once); the overall
figures with the batches an LLM gets (`auto_dream.batch_tokens: 15000`) are reported as well
(there a topic split across batches can land in separate nodes).
Also the extraction alone (in process, all notes of a conversation in one call of the local
engine's `extract`): its time, and per conversation the share of notes with a verdict (a unit
or a reason), with at least one unit, and units per note: the coverage figures for issue 10.

    python bench/bench_locomo.py [--only conv-41] [--keep DIR] [--no-doc]
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

import yaml  # noqa: E402
from _report import machine, write_section  # noqa: E402
from locomo import Conversation, load, write_vault  # noqa: E402
from locomo_eval import Node, TfIdf, boilerplate, chatter, read_nodes, states, terms  # noqa: E402

LABELS = HERE / "locomo" / "tag_labels.yaml"
QUESTION_CATEGORIES = (1, 2, 3, 4)


@dataclass
class Result:
    sample_id: str
    sessions: int
    turns: int
    questions: int = 0
    hits: int = 0
    tfidf_hits: int = 0
    observations: int = 0
    recalled: int = 0
    nodes: int = 0
    precise: int = 0
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


def evidence_hits(conv: Conversation, vault: Path) -> tuple[int, int, int]:
    from remelink.config import load_settings
    from remelink.index import NodeIndex

    turns = [(conv.paths[s.number], f"{t.speaker}: {t.text}") for s in conv.sessions
             for t in s.turns]
    tfidf = TfIdf([text for _, text in turns])
    cites = {n.path: n.cites for n in read_nodes(vault)}
    questions = [q for q in conv.questions if q.category in QUESTION_CATEGORIES and q.evidence]
    hits = tfidf_hits = 0
    with NodeIndex(vault, load_settings(vault)) as index:
        index.refresh()
        for q in questions:
            wanted = conv.evidence_paths(q.evidence)
            found = index.search(q.text, limit=5, refresh=False)
            hits += any(cites.get(h.path, frozenset()) & wanted for h in found)
            tfidf_hits += any(turns[i][0] in wanted for i in tfidf.top(q.text, 5))
    return len(questions), hits, tfidf_hits


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


def tag_precision(vaults: dict[str, Path]) -> tuple[int, int, int, list[str]]:
    """(nodes labelled, tags written, tags right, wrong tags) on the hand-labelled nodes."""
    if not LABELS.exists():
        return 0, 0, 0, []
    labels = yaml.safe_load(LABELS.read_text(encoding="utf-8")) or []
    written = right = seen = 0
    wrong: list[str] = []
    for item in labels:
        vault = vaults.get(item["conversation"])
        if vault is None or not (vault / item["node"]).exists():
            continue
        node = next(n for n in read_nodes(vault) if n.path == item["node"])
        good = {str(t).casefold() for t in item.get("entities") or []}
        seen += 1
        for tag in node.tags:
            written += 1
            if tag.casefold().replace("_", " ") in good or tag.casefold() in good:
                right += 1
            else:
                wrong.append(f"{item['node']}: {tag}")
    return seen, written, right, wrong


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
    r.questions, r.hits, r.tfidf_hits = evidence_hits(conv, vault)
    r.observations, r.recalled, r.precise = observation_scores(conv, nodes)
    r.chatter = [n.path for n in nodes if chatter(n)]
    r.boilerplate = boilerplate(nodes)
    return r


def _ratio(a: int, b: int) -> str:
    return f"{a / b:.2f}" if b else "-"


def report(results: list[Result], calibration: tuple[float, float],
           tags: tuple[int, int, int, list[str]], load: float,
           default: list[Result] | None = None) -> str:
    rows = ["| conversation | sessions / turns | nodes | evidence-hit@5 | TF-IDF hit@5 | "
            "observation recall | node precision | chatter | boilerplate | actions |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    total = Result("all", 0, 0)
    for r in results:
        actions = ", ".join(f"{k} {v}" for k, v in sorted(r.actions.items()))
        rows.append(f"| {r.sample_id} | {r.sessions} / {r.turns} | {r.nodes} | "
                    f"{_ratio(r.hits, r.questions)} | {_ratio(r.tfidf_hits, r.questions)} | "
                    f"{_ratio(r.recalled, r.observations)} | {_ratio(r.precise, r.nodes)} | "
                    f"{len(r.chatter)} | {len(r.boilerplate)} | {actions} |")
        for name in ("sessions", "turns", "questions", "hits", "tfidf_hits", "observations",
                     "recalled", "nodes", "precise", "units", "with_verdict", "with_units",
                     "failed"):
            setattr(total, name, getattr(total, name) + getattr(r, name))
        total.chatter += r.chatter
        total.boilerplate += r.boilerplate
        total.extract_seconds += r.extract_seconds
        total.dream_seconds += r.dream_seconds
    rows.append(f"| **all** | {total.sessions} / {total.turns} | {total.nodes} | "
                f"**{_ratio(total.hits, total.questions)}** ({total.hits}/{total.questions}) | "
                f"{_ratio(total.tfidf_hits, total.questions)} ({total.tfidf_hits}) | "
                f"**{_ratio(total.recalled, total.observations)}** "
                f"({total.recalled}/{total.observations}) | "
                f"**{_ratio(total.precise, total.nodes)}** ({total.precise}/{total.nodes}) | "
                f"{len(total.chatter)} | "
                f"{len(total.boilerplate)} | {total.failed} failed |")
    cover = ["| conversation | notes | with a verdict | with a unit | units | units per note | "
             "extraction |", "|---|---|---|---|---|---|---|"]
    for r in [*results, total]:
        cover.append(f"| {r.sample_id} | {r.sessions} | {_ratio(r.with_verdict, r.sessions)} | "
                     f"{_ratio(r.with_units, r.sessions)} | {r.units} | "
                     f"{_ratio(r.units, r.sessions)} | {r.extract_seconds:.2f} s |")
    seen, written, right, wrong = tags
    own, other = calibration
    lines = [
        "## Conversations: LoCoMo through dream run",
        "",
        "The 8 LoCoMo training conversations (`../shared/data/locomo-train/`), each written as "
        "a vault of daily notes (one per session, `Name (D3:7): text` turns; `bench/locomo.py`) "
        "and distilled by `remelink dream run` with the local engine at its default "
        "configuration (the embedder for English decisions, every changed note read in one "
        "pass, no unit cap). Questions of categories 1-4 asked through the node index "
        "(`node-search QUESTION --limit 5`); scoring rules in `bench/locomo_eval.py`.",
        "",
        *rows,
        "",
        *([_default_line(default)] if default else []),
        "",
        f"Matching rule on the raw turns (its calibration): an observation's own evidence turn "
        f"states it in {own:.0%} of cases, another turn of the same speaker and session in "
        f"{other:.1%}.",
        "",
        f"Tag precision on {seen} hand-labelled nodes (`bench/locomo/tag_labels.yaml`): "
        f"{right} of {written} tags right ({_ratio(right, written)})"
        + (f"; wrong: {', '.join(wrong[:8])}" if wrong else "") + ".",
        "",
        "Extraction alone (the local engine's `extract` on all notes of a conversation at "
        "once) and note coverage:",
        "",
        *cover,
        "",
        f"Extraction of all eight: {total.extract_seconds:.2f} s; dream run of all eight: "
        f"{total.dream_seconds:.0f} s (load average {load:.1f} at start).",
    ]
    if total.chatter:
        lines += ["", "Chatter nodes: " + ", ".join(total.chatter[:10])]
    if total.boilerplate:
        lines += ["", "Boilerplate: " + "; ".join(f"{s!r} x{n}" for s, n in
                                                   total.boilerplate[:5])]
    return "\n".join(lines)


def _default_line(results: list[Result]) -> str:
    def total(name: str) -> int:
        return sum(getattr(r, name) for r in results)
    return (f"With the extraction batches an LLM gets (`batch_tokens: 15000`, "
            f"{total('nodes')} nodes): evidence-hit@5 {_ratio(total('hits'), total('questions'))}"
            f" (TF-IDF {_ratio(total('tfidf_hits'), total('questions'))}), observation recall "
            f"{_ratio(total('recalled'), total('observations'))}, node precision "
            f"{_ratio(total('precise'), total('nodes'))}, chatter "
            f"{sum(len(r.chatter) for r in results)}.")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", default=[])
    parser.add_argument("--keep", type=Path, help="write the vaults here and keep them")
    parser.add_argument("--no-doc", action="store_true", help="do not update docs/benchmarks.md")
    parser.add_argument("--no-default", action="store_true",
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
        print(f"{r.sample_id}: {r.nodes} nodes, hit@5 {_ratio(r.hits, r.questions)} "
              f"(TF-IDF {_ratio(r.tfidf_hits, r.questions)}), recall "
              f"{_ratio(r.recalled, r.observations)}, precision {_ratio(r.precise, r.nodes)}, "
              f"chatter {len(r.chatter)}, boilerplate {len(r.boilerplate)}, extraction "
              f"{r.extract_seconds:.2f} s, dream {r.dream_seconds:.0f} s", flush=True)
    default = None
    if not args.only and not args.no_default:
        default = [run_one(conv, root / "llm-batches", batch_tokens=15_000) for conv in convs]
    calibration = calibrate(convs)
    tags = tag_precision({c.sample_id: root / c.sample_id for c in convs})
    text = report(results, calibration, tags, load, default)
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
