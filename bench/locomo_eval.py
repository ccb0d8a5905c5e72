"""Scoring a digest written from a LoCoMo conversation (used by bench/bench_locomo.py).

Everything here reads only the vault's files and the data set: a node is its frontmatter, its
body prose (the `## Sources` section excluded) and the notes its Sources cite.

**Matching rule** (does a node state a gold observation?). An observation is a one-sentence
paraphrase of one or a few turns ("Joanna is allergic to most reptiles and animals with fur,
causing her face to get puffy and itchy."). Its content terms are its words, lowercased, minus
stop words and the two speakers' names (every node names them), each cut to a crude stem
(`allergic`/`allergies` -> `allerg`). A node *states* the observation when it cites the
observation's session and some window of two consecutive sentences of its prose (name and
description included) holds at least 40 % (`THRESHOLD`) of the observation's content terms,
rounded up, and at least two (`MIN_SHARED`).
Why this rule: observations are paraphrases of the turns, so they share words with the turns
they come from but not all of them. Measured on the raw turns of the 8 conversations
(`bench_locomo.calibrate()`, reported next to the figures): an observation's own evidence turn
states it in 83 % of cases, any other turn of the same speaker in the same session in 2.1 %.
At half the terms or more (0.5) the first figure falls to 76 % with 1.2 % false matches; at
0.3 it rises to 88 % with 3.9 %. 0.4 keeps false matches near one in fifty while missing few
true ones. The rule thus measures whether the node kept the turn's content, without demanding
the annotator's wording. It was calibrated on the raw turns of all eight conversations, not on
any digest: it is part of the metric, and no engine output chose it.

**Chatter**: a node whose statement (its first body sentence) is a question, opens with a
greeting or thanks, or whose prose holds fewer than five content words (names count).
**Boilerplate**: a body sentence of six words or more, Sources excluded, found verbatim in more
than 10 % of the vault's nodes.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml


def _words(text: str) -> list[str]:
    return text.split()


STOP = frozenset(_words("""
a an the and or but if then so to of in on at by for with from as into about over after before
is are was were be been being am have has had do does did will would can could should may might
must shall it its this that these those there here what which who whom whose when where why how
i me my mine myself we us our ours you your yours he him his she her they them their theirs
themselves himself herself not no yes all any some every each both very up out off down again
once only own same than too just now also really so such more most other s t ve ll re d m
"""))
_WORD_RE = re.compile(r"[a-z0-9]+")
_LINK_RE = re.compile(r"\[\[([^\]|#]+)(?:#[^\]|]*)?(?:\|[^\]]*)?\]\]")
_SOURCES_RE = re.compile(r"^##[ \t]+sources\b.*$", re.I | re.M)
_SENT_RE = re.compile(r"(?<=[.!?])\s+|\n+")
GREETING_RE = re.compile(r"^(?:hey|hi|hello|thanks|thank you|congrats|congratulations|good "
                         r"(?:morning|evening|night)|bye|wow|haha)\b", re.I)
THRESHOLD = 0.4
MIN_SHARED = 2


_SUFFIXES = ("ations", "ation", "ions", "ion", "ings", "ing", "ies", "ied", "edly", "ed", "es",
             "ers", "er", "ly", "s", "ments", "ment", "ness", "ful", "ic", "al", "y", "e")
# Dates are compared as content only once resolved: the engine writes "in the week before
# 7 November 2022" where the annotator wrote "last week", so words of relative time are not
# content terms on either side.
TEMPORAL = frozenset(_words("""
yesterday today tonight tomorrow week weeks weekend month months year years day days ago last
next recently lately morning evening afternoon night currently soon before after earlier later
monday tuesday wednesday thursday friday saturday sunday january february march april may june
july august september october november december
"""))


def stem(word: str) -> str:
    """A crude stem, applied twice (`rejections` -> `reject`, `rejected` -> `reject`)."""
    for _ in range(2):
        for suffix in _SUFFIXES:
            if word.endswith(suffix) and len(word) - len(suffix) >= 4:
                word = word[: -len(suffix)]
                break
    return word


def terms(text: str, names: Iterable[str] = ()) -> set[str]:
    skip = {n.lower() for n in names}
    return {stem(w) for w in _WORD_RE.findall(text.lower().replace("'s", ""))
            if w not in STOP and w not in skip and w not in TEMPORAL and len(w) > 1
            and not w.isdigit()}


@dataclass(frozen=True)
class Node:
    path: str
    name: str
    description: str
    tags: tuple[str, ...]
    prose: str
    cites: frozenset[str]

    def sentences(self) -> list[str]:
        body = [s.strip() for s in _SENT_RE.split(self.prose) if s.strip()]
        return [self.name, self.description, *body]

    def statement(self) -> str:
        body = [s.strip() for s in _SENT_RE.split(self.prose) if s.strip()]
        return body[0] if body else self.description


def read_nodes(vault: Path) -> list[Node]:
    out = []
    for path in sorted((vault / "digest").rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        meta: dict[str, object] = {}
        body = text
        if text.startswith("---\n"):
            end = text.find("\n---\n", 4)
            if end != -1:
                meta = yaml.safe_load(text[4:end]) or {}
                body = text[end + 5:]
        m = _SOURCES_RE.search(body)
        prose, sources = (body[:m.start()], body[m.end():]) if m else (body, "")
        cites = frozenset(link.strip() for link in _LINK_RE.findall(sources))
        tags = meta.get("memory_tags") or []
        out.append(Node(path.relative_to(vault).as_posix(), str(meta.get("name") or ""),
                        str(meta.get("description") or ""),
                        tuple(str(t) for t in tags) if isinstance(tags, list) else (),
                        _LINK_RE.sub(lambda k: k.group(0).split("|")[-1].strip("[]"), prose),
                        cites))
    return out


def states(sentences: Sequence[str], observation: set[str], names: Iterable[str]) -> bool:
    """Whether two consecutive sentences hold enough of the observation's terms (see above)."""
    if not observation:
        return False
    bags = [terms(s, names) for s in sentences]
    need = max(MIN_SHARED, math.ceil(THRESHOLD * len(observation)))
    for i in range(len(bags)):
        window = bags[i] | (bags[i + 1] if i + 1 < len(bags) else set())
        if len(observation & window) >= need:
            return True
    return False


def chatter(node: Node) -> bool:
    statement = node.statement()
    words = [w for w in _WORD_RE.findall(node.prose.lower()) if w not in STOP]
    return statement.rstrip().endswith("?") or bool(GREETING_RE.match(statement)) or \
        len(set(words)) < 5


def boilerplate(nodes: Sequence[Node], share: float = 0.10) -> list[tuple[str, int]]:
    """Sentences of six words or more found verbatim in more than `share` of the nodes."""
    counts: Counter[str] = Counter()
    for node in nodes:
        seen = {s.strip() for s in _SENT_RE.split(node.prose) if len(s.split()) >= 6}
        counts.update(seen)
    limit = share * len(nodes)
    return [(s, n) for s, n in counts.most_common() if n > limit]


class TfIdf:
    """Plain TF-IDF cosine over documents (scikit-learn's defaults: tokens of two or more word
    characters, lowercased, smoothed idf ln((1+n)/(1+df))+1, l2-normalised raw counts)."""

    _TOKEN_RE = re.compile(r"(?u)\b\w\w+\b")

    def __init__(self, docs: Sequence[str]) -> None:
        self.docs = [Counter(self._TOKEN_RE.findall(d.lower())) for d in docs]
        n = len(self.docs)
        df: Counter[str] = Counter()
        for d in self.docs:
            df.update(d.keys())
        self.idf = {t: math.log((1 + n) / (1 + f)) + 1 for t, f in df.items()}
        self.vectors = [self._vector(d) for d in self.docs]

    def _vector(self, counts: Counter[str]) -> dict[str, float]:
        v = {t: c * self.idf.get(t, 0.0) for t, c in counts.items() if t in self.idf}
        norm = math.sqrt(sum(x * x for x in v.values())) or 1.0
        return {t: x / norm for t, x in v.items()}

    def top(self, query: str, k: int) -> list[int]:
        q = self._vector(Counter(self._TOKEN_RE.findall(query.lower())))
        scores = [(sum(w * v.get(t, 0.0) for t, w in q.items()), i)
                  for i, v in enumerate(self.vectors)]
        scores.sort(key=lambda si: (-si[0], si[1]))
        return [i for s, i in scores[:k] if s > 0]
