"""The answer keys of the realistic vaults (`dev/`, `heldout/`) and the shared pair set.

Plain values for the benches to import; nothing here runs the engine. The schema is documented
in `bench/realvault/README.md`. Usage:

    from bench.realvault import load, pairs
    vault = load("dev")               # or "heldout" (report only: never tune on it)
    for fact in vault.facts():        # every key fact of every note
        ...
    tune = pairs("tune")              # pair ids ending in an even digit; "test": odd; "all"

`code_segments(text)` returns the code of a markdown text (fenced blocks, inline spans), so that
a bench can check that a code needle reached a node as code, as the integrity test does for the
notes themselves.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
SPLITS = ("dev", "heldout")
PAIR_SPLITS = ("tune", "test", "all")


@dataclass(frozen=True)
class Needle:
    """A literal substring of the note; `code` means it is code there and must stay code."""

    text: str
    code: bool = False


@dataclass(frozen=True)
class Fact:
    id: str
    note: str
    text: str
    needles: tuple[Needle, ...]


@dataclass(frozen=True)
class Note:
    path: str  # workspace-relative, e.g. "daily/2026-02-06/pgbouncer-pool-exhaustion.md"
    kind: str
    lang: str  # "en" | "zh"
    chatter: bool
    facts: tuple[Fact, ...]


@dataclass(frozen=True)
class Related:
    a: str
    b: str
    why: str


@dataclass(frozen=True)
class Correction:
    note: str       # the later note that states the new value
    corrects: str   # the earlier note that held the old value
    fact: str       # the fact id (in `corrects`) whose value changed
    old: str        # occurs in `corrects`
    new: str        # occurs in `note`


@dataclass(frozen=True)
class Restatement:
    note: str       # the later note
    restates: str   # the earlier note
    fact: str       # the fact id (in `restates`) said again


@dataclass(frozen=True)
class Question:
    id: str
    lang: str
    q: str
    answers: tuple[str, ...]   # the notes that hold the answer
    needles: tuple[str, ...]   # what an answer must contain (each occurs in an answer note)


@dataclass(frozen=True)
class Vault:
    split: str
    root: Path
    notes: dict[str, Note]
    related: tuple[Related, ...]
    corrections: tuple[Correction, ...]
    restatements: tuple[Restatement, ...]
    questions: tuple[Question, ...]

    def facts(self) -> Iterator[Fact]:
        for note in self.notes.values():
            yield from note.facts

    def fact(self, fact_id: str) -> Fact:
        for fact in self.facts():
            if fact.id == fact_id:
                return fact
        raise KeyError(fact_id)

    def text(self, path: str) -> str:
        return (self.root / path).read_text(encoding="utf-8")


@dataclass(frozen=True)
class Pair:
    id: str
    lang: str
    a: str
    b: str
    same: bool
    kind: str  # paraphrase, or what differs: number, unit, person, role, negation, system, ...
    vault: str  # whose notes the pair paraphrases: "dev" or "heldout"

    @property
    def split(self) -> str:
        return pair_split(self.id)


def pair_split(pair_id: str) -> str:
    """The fixed rule: an id ending in an even digit is `tune`, an odd digit `test`."""
    last = pair_id[-1]
    if not last.isdigit():
        raise ValueError(f"pair id {pair_id!r} does not end in a digit")
    return "tune" if int(last) % 2 == 0 else "test"


def _needle(raw: Any) -> Needle:
    if isinstance(raw, str):
        return Needle(raw)
    if isinstance(raw, dict) and set(raw) == {"code"} and isinstance(raw["code"], str):
        return Needle(raw["code"], code=True)
    raise ValueError(f"a needle is a string or {{code: string}}, not {raw!r}")


def _read(path: Path) -> Any:
    with open(path, encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def load(split: str) -> Vault:
    """The answer key of `dev` (tune on it) or `heldout` (report on it)."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, not {split!r}")
    root = HERE / split
    raw = _read(root / "key.yaml")
    notes: dict[str, Note] = {}
    for path, entry in raw["notes"].items():
        facts = tuple(
            Fact(f["id"], path, f["text"], tuple(_needle(n) for n in f["needles"]))
            for f in entry.get("facts") or ()
        )
        notes[path] = Note(path, entry["kind"], entry["lang"], bool(entry.get("chatter")), facts)
    return Vault(
        split=split,
        root=root,
        notes=notes,
        related=tuple(Related(r["a"], r["b"], r["why"]) for r in raw.get("related") or ()),
        corrections=tuple(
            Correction(c["note"], c["corrects"], c["fact"], str(c["old"]), str(c["new"]))
            for c in raw.get("corrections") or ()
        ),
        restatements=tuple(
            Restatement(r["note"], r["restates"], r["fact"]) for r in raw.get("restatements") or ()
        ),
        questions=tuple(
            Question(q["id"], q["lang"], q["q"], tuple(q["answers"]),
                     tuple(str(n) for n in q["needles"]))
            for q in raw.get("questions") or ()
        ),
    )


def pairs(split: str = "all", vault: str | None = None) -> list[Pair]:
    """The question/statement pairs of `pairs.yaml`: `tune`, `test` or `all`.

    `vault="dev"` keeps only the pairs that paraphrase the dev vault's notes (for a bench that
    must not tune on anything drawn from the held-out vault).
    """
    if split not in PAIR_SPLITS:
        raise ValueError(f"split must be one of {PAIR_SPLITS}, not {split!r}")
    if vault is not None and vault not in SPLITS:
        raise ValueError(f"vault must be one of {SPLITS}, not {vault!r}")
    out = [
        Pair(p["id"], p["lang"], p["a"], p["b"], bool(p["same"]), p["kind"], p["vault"])
        for p in _read(HERE / "pairs.yaml")["pairs"]
    ]
    return [
        p for p in out
        if (split == "all" or p.split == split) and (vault is None or p.vault == vault)
    ]


def questions(split: str = "all") -> list[Pair]:
    """The Chinese question pairs of `questions.yaml` (LCQMC-style, made from the dev vault's
    Chinese notes' questions): `tune`, `test` or `all`, by the id rule of `pairs.yaml`."""
    if split not in PAIR_SPLITS:
        raise ValueError(f"split must be one of {PAIR_SPLITS}, not {split!r}")
    out = [
        Pair(p["id"], p["lang"], p["a"], p["b"], bool(p["same"]), p["kind"], p["vault"])
        for p in _read(HERE / "questions.yaml")["questions"]
    ]
    return [p for p in out if split == "all" or p.split == split]


_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})")


def code_segments(text: str) -> list[str]:
    """The code of a markdown text: each fenced block's content, each inline code span.

    A small CommonMark subset, enough for notes: fences of three or more backticks or tildes
    (indented or not, closed by the same character at least as long), and inline spans
    delimited by equal backtick runs within a line (one leading and trailing space stripped
    when both are there). Indented code blocks are not recognised.
    """
    segments: list[str] = []
    fence: str | None = None
    block: list[str] = []
    for line in text.split("\n"):
        line = line.removesuffix("\r")
        match = _FENCE.match(line)
        if fence is not None:
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence) \
                    and not line.strip()[len(match.group(1)):].strip():
                segments.append("\n".join(block))
                fence, block = None, []
            else:
                block.append(line)
            continue
        if match:
            fence, block = match.group(1), []
            continue
        segments.extend(_inline_spans(line))
    if fence is not None:  # an unclosed fence runs to the end of the text
        segments.append("\n".join(block))
    return segments


def _inline_spans(line: str) -> list[str]:
    spans: list[str] = []
    i = 0
    while i < len(line):
        if line[i] != "`":
            i += 1
            continue
        j = i
        while j < len(line) and line[j] == "`":
            j += 1
        run = line[i:j]
        k = j
        while True:
            k = line.find(run, k)
            if k < 0:
                break
            end = k + len(run)
            if (k == 0 or line[k - 1] != "`") and (end >= len(line) or line[end] != "`"):
                break
            k = end
            while k < len(line) and line[k] == "`":
                k += 1
        if k < 0:
            i = j  # no closing run: the backticks are literal
            continue
        content = line[j:k]
        if len(content) >= 2 and content[0] == " " and content[-1] == " " and content.strip(" "):
            content = content[1:-1]
        spans.append(content)
        i = k + len(run)
    return spans


def in_code(needle: str, text: str) -> bool:
    """Whether `needle` occurs inside one code segment of `text`."""
    return any(needle in seg for seg in code_segments(text))
