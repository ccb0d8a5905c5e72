"""Evidence recall on LoCoMo questions, node-search next to like-for-like baselines in one run.

For every question of categories 1-4 with evidence turns, five ranked items are asked for and a
hit is scored at two levels:

- **session level**: an item cites a session (daily note) that holds one of the evidence turns.
  A node cites the notes its `## Sources` links name; a raw turn cites its own session.
- **turn level**: an item names an evidence turn itself. A raw turn names itself; a node names
  the turns its Sources sentences list next to a session's link (`... in [[daily/x.md]]
  (turns D8:13, D8:15).`). No node can anchor a turn with a link: a session note has no heading
  or block id per turn, so every Sources link points at a whole note; the engine writes the turn
  ids only because the notes carry them (`Name (D8:13): text`). A note without turn ids allows
  session level only.

Rankers, each giving five items per question:

- `node-search`: `NodeIndex.search(question, limit=5)` over the digest (what `remelink
  node-search QUESTION --limit 5` returns);
- `TF-IDF over the nodes`: plain TF-IDF cosine over the same nodes' texts (name, description,
  prose without Sources): what the ranking adds over a plain one on the same digest;
- `5 random nodes`: the exact expectation of a hit over every draw of five distinct nodes
  (1 - C(N - g, 5) / C(N, 5) with g the nodes that would hit): what the digest's citations give
  by themselves, without any ranking (the limit of averaging over random seeds);
- `TF-IDF over the raw turns` and `5 random turns`: the same two over the conversation's turns,
  no digest at all.

A margin between two rankers is the mean over questions of the per-question difference, with a
95 % interval from a paired bootstrap over the questions (bench/spread.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from math import comb
from pathlib import Path

import spread
from locomo import Conversation
from locomo_eval import Node, TfIdf, read_nodes

QUESTION_CATEGORIES = (1, 2, 3, 4)
K = 5
LEVELS = ("session", "turn")
RANKERS = ("node-search", "TF-IDF over the nodes", "5 random nodes", "TF-IDF over the raw turns",
           "5 random turns")

_SOURCES_RE = re.compile(r"^##[ \t]+sources\b[^\n]*\n(?P<body>.*?)(?=^#{1,2}[ \t]|\Z)",
                         re.I | re.M | re.S)
_LINK_RE = re.compile(r"\[\[([^\]|#]+)(?:#[^\]|]*)?(?:\|[^\]]*)?\]\]")
_TURN_ID_RE = re.compile(r"\bD:?(\d+):(\d+)\b")
_SENTENCE_RE = re.compile(r"(?<=[.!?。！？])\s+|\n+")


def turn_id(text: str) -> str:
    """LoCoMo's turn ids in one form (`D8:13`; the data also writes `D:8:13`)."""
    m = _TURN_ID_RE.search(text)
    return f"D{m.group(1)}:{m.group(2)}" if m else text


@dataclass(frozen=True)
class Cited:
    sessions: frozenset[str]
    turns: frozenset[tuple[str, str]]  # (note path, turn id)


def citations(text: str) -> Cited:
    """What a node's Sources section cites: the notes it links, and the turns each sentence
    names after a link (the ids belong to the link before them in the sentence)."""
    m = _SOURCES_RE.search(text.replace("\r\n", "\n"))
    if m is None:
        return Cited(frozenset(), frozenset())
    sessions: set[str] = set()
    turns: set[tuple[str, str]] = set()
    for sentence in _SENTENCE_RE.split(m.group("body")):
        current: str | None = None
        pos = 0
        links = list(_LINK_RE.finditer(sentence))
        sessions.update(link.group(1).strip() for link in links)
        for link in links:
            if current is not None:
                turns.update((current, turn_id(t.group(0)))
                             for t in _TURN_ID_RE.finditer(sentence, pos, link.start()))
            current, pos = link.group(1).strip(), link.end()
        if current is not None:
            turns.update((current, turn_id(t.group(0)))
                         for t in _TURN_ID_RE.finditer(sentence, pos))
    return Cited(frozenset(sessions), frozenset(turns))


def node_text(node: Node) -> str:
    return f"{node.name}\n{node.description}\n{node.prose}"


@dataclass
class Scores:
    """Per question, per (ranker, level): 1.0 / 0.0 for a hit, or an expectation (random)."""

    conversation: str
    values: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    sessions_per_node: float = 0.0
    turns_per_node: float = 0.0
    nodes_naming_turns: int = 0
    nodes: int = 0

    def add(self, ranker: str, level: str, value: float) -> None:
        self.values.setdefault((ranker, level), []).append(value)

    def questions(self) -> int:
        return len(self.values.get(("node-search", "session"), []))


def random_hit(total: int, good: int, k: int = K) -> float:
    """The chance that k distinct items drawn at random from `total` include one of `good`."""
    if total <= 0 or good <= 0:
        return 0.0
    if total - good < k:
        return 1.0
    return 1.0 - comb(total - good, k) / comb(total, k)


def score(conv: Conversation, vault: Path) -> Scores:
    """Every ranker at both levels on one conversation's digest (the vault after dream run)."""
    from remelink.config import load_settings
    from remelink.index import NodeIndex

    nodes = read_nodes(vault)
    cites = {n.path: citations((vault / n.path).read_text(encoding="utf-8")) for n in nodes}
    node_paths = [n.path for n in nodes]
    node_tfidf = TfIdf([node_text(n) for n in nodes])
    turns = [(conv.paths[s.number], turn_id(t.turn_id), f"{t.speaker}: {t.text}")
             for s in conv.sessions for t in s.turns]
    turn_tfidf = TfIdf([text for _, _, text in turns])
    out = Scores(conv.sample_id, nodes=len(nodes))
    if nodes:
        out.sessions_per_node = sum(len(c.sessions) for c in cites.values()) / len(nodes)
        out.turns_per_node = sum(len(c.turns) for c in cites.values()) / len(nodes)
        out.nodes_naming_turns = sum(1 for c in cites.values() if c.turns)
    questions = [q for q in conv.questions if q.category in QUESTION_CATEGORIES and q.evidence]
    with NodeIndex(vault, load_settings(vault)) as index:
        index.refresh()
        for q in questions:
            sessions = conv.evidence_paths(q.evidence)
            wanted = {(conv.paths[n], turn_id(t)) for t in q.evidence
                      if (n := conv.session_of(turn_id(t))) is not None and n in conv.paths}

            def node_hits(paths: Sequence[str], sessions: set[str] = sessions,
                          wanted: set[tuple[str, str]] = wanted) -> tuple[float, float]:
                got = [cites.get(p, Cited(frozenset(), frozenset())) for p in paths]
                return (float(any(c.sessions & sessions for c in got)),
                        float(any(c.turns & wanted for c in got)))

            found = [h.path for h in index.search(q.text, limit=K, refresh=False)]
            for level, value in zip(LEVELS, node_hits(found), strict=True):
                out.add("node-search", level, value)
            ranked = [node_paths[i] for i in node_tfidf.top(q.text, K)]
            for level, value in zip(LEVELS, node_hits(ranked), strict=True):
                out.add("TF-IDF over the nodes", level, value)
            good_session = sum(1 for c in cites.values() if c.sessions & sessions)
            good_turn = sum(1 for c in cites.values() if c.turns & wanted)
            out.add("5 random nodes", "session", random_hit(len(nodes), good_session))
            out.add("5 random nodes", "turn", random_hit(len(nodes), good_turn))
            top = [turns[i] for i in turn_tfidf.top(q.text, K)]
            out.add("TF-IDF over the raw turns", "session",
                    float(any(path in sessions for path, _, _ in top)))
            out.add("TF-IDF over the raw turns", "turn",
                    float(any((path, tid) in wanted for path, tid, _ in top)))
            out.add("5 random turns", "session",
                    random_hit(len(turns), sum(1 for path, _, _ in turns if path in sessions)))
            out.add("5 random turns", "turn",
                    random_hit(len(turns), sum(1 for path, tid, _ in turns
                                               if (path, tid) in wanted)))
    return out


def pooled(scores: Sequence[Scores], ranker: str, level: str) -> list[float]:
    return [v for s in scores for v in s.values.get((ranker, level), [])]


def mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs) if xs else float("nan")


def margin(a: Sequence[float], b: Sequence[float]) -> str:
    """`+0.05 (+0.01 to +0.09: above)`: the mean per-question difference and its interval."""
    return spread.show(spread.paired(a, b))
