"""Extraction for the local engine (SPEC §8, §11): units from the structure of daily and resource
notes, in English and Chinese.

A note is split into sections by its headings; a section's heading says what it holds (steps,
decisions, preferences, lessons, definitions, chatter). Numbered lists under a how-to heading
become one procedure; list items and sentences carrying a cue become statements; statements
without a cue, and chatter (attendance, one-off tasks, greetings), are left out. Statements that
say the same thing across notes merge into one unit citing all of them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from remelink.models.local import text as tx
from remelink.models.local.candidate import Candidate
from remelink.vault.notes import Note

MIN_WORDS = 5
MIN_CJK = 8


@dataclass
class _Section:
    heading: str
    level: int
    lines: list[str] = field(default_factory=list)


def title_of(note: Note, meta: dict[str, object]) -> str:
    for line in note.body.splitlines():
        m = re.match(r"#\s+(.+?)\s*#*\s*$", line)
        if m:
            return m.group(1).strip()
    for key in ("name", "title"):
        value = meta.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return note.path.rsplit("/", 1)[-1].rsplit(".", 1)[0]


def _sections(body: str) -> list[_Section]:
    sections = [_Section("", 0)]
    fence = False
    for line in body.replace("\r\n", "\n").split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
            continue
        if fence:
            continue
        m = re.match(r"(#{1,6})\s+(.+?)\s*#*\s*$", line)
        if m:
            sections.append(_Section(m.group(2).strip(), len(m.group(1))))
            continue
        sections[-1].lines.append(line)
    return sections


def _blocks(lines: Sequence[str]) -> list[tuple[str, str]]:
    """(kind, text) blocks: `num` numbered item, `item` bullet, `para` paragraph."""
    out: list[tuple[str, str]] = []
    current_kind, current = "", []  # type: ignore[var-annotated]
    for line in [*lines, ""]:
        num = re.match(r"\s*\d+[.)]\s+(.*)", line)
        item = re.match(r"\s*[-*+]\s+(.*)", line)
        if not line.strip() or num or item:
            if current:
                out.append((current_kind, " ".join(s.strip() for s in current)))
                current = []
            if num:
                current_kind, current = "num", [num.group(1)]
            elif item:
                current_kind, current = "item", [item.group(1)]
            continue
        if current and current_kind in ("num", "item") and line.startswith((" ", "\t")):
            current.append(line)
            continue
        if current and current_kind != "para":
            out.append((current_kind, " ".join(s.strip() for s in current)))
            current = []
        current_kind = "para"
        current.append(line)
    return [(k, t) for k, t in out if t.strip()]


def _long_enough(text: str) -> bool:
    if tx.is_cjk_text(text):
        return len(re.findall(f"[{tx.CJK}]", text)) >= MIN_CJK
    return len(text.split()) >= MIN_WORDS


def _is_chatter(text: str) -> bool:
    low = text.lower()
    if re.match(r"^\s*(attendees|participants|present|参会|出席)\s*[:：]", low):
        return True
    return tx.has_cue(text, tx.CHATTER_CUES) and not tx.has_cue(
        text, tx.RULE_CUES + tx.PREFERENCE_CUES + tx.DECISION_CUES)


def _statement_kind(text: str, section_kind: str) -> str | None:
    """What a statement is, from its section and its own cue words; None for passing mentions."""
    if _is_chatter(text) or not _long_enough(text):
        return None
    if tx.has_cue(text, tx.PREFERENCE_CUES):
        return "preference"
    if section_kind in ("decision", "preference", "lesson", "definition", "finding"):
        return section_kind
    if tx.has_cue(text, tx.DECISION_CUES):
        return "decision"
    if tx.has_cue(text, tx.RULE_CUES):
        return "rule"
    if tx.has_cue(text, tx.DEFINITION_CUES):
        return "definition"
    if section_kind == "failure" or (tx.has_cue(text, tx.LESSON_CUES)
                                     and section_kind != "neutral"):
        return "lesson"
    return None


def _bucket(kind: str, text: str) -> str:
    if kind == "procedure":
        return "procedure"
    if kind == "preference":
        return "personal"
    if kind in ("decision", "rule") and tx.has_cue(text, tx.CONVENTION_CUES) and \
            not tx.has_cue(text, ("because", "因为", "caused", "导致")):
        return "personal"
    return "wiki"


_WEIGHT = {"procedure": 3.0, "preference": 2.5, "decision": 2.5, "rule": 2.0, "lesson": 2.0,
           "definition": 1.5, "finding": 1.0}


def note_candidates(note: Note, meta: dict[str, object], index: int
                    ) -> tuple[list[Candidate], str]:
    """Candidates of one note, in order, and the reason when it gives none."""
    title = title_of(note, meta)
    out: list[Candidate] = []
    sections = _sections(note.body)
    procedures: list[Candidate] = []
    failures: list[str] = []
    for s_index, section in enumerate(sections):
        kind = tx.heading_kind(section.heading) if section.heading else "neutral"
        if kind == "chatter":
            continue
        blocks = _blocks(section.lines)
        numbered = [t for k, t in blocks if k == "num"]
        if numbered and (kind == "procedure" or (len(numbered) >= 3 and kind == "neutral")):
            steps = [tx.clean_statement(t) for t in numbered if tx.clean_statement(t)]
            name = tx.procedure_title(section.heading or title, title)
            statement = " ".join(tx.clean_statement(t) for k, t in blocks if k == "para")
            cand = Candidate(
                kind="procedure", bucket="procedure", name=name,
                statement=statement or name, points=[f"step: {s}" for s in steps],
                paths=[note.path], weight=_WEIGHT["procedure"] + 0.1 * len(steps),
                order=(index, s_index), roles={note.path: "procedure"})
            procedures.append(cand)
            out.append(cand)
            blocks = [(k, t) for k, t in blocks if k != "num"]
            if kind == "procedure":
                continue
        for k, raw in blocks:
            text = tx.clean_statement(raw)
            pieces = [text] if k in ("num", "item") else tx.sentences(text)
            for piece in pieces:
                skind = _statement_kind(piece, kind)
                if kind == "failure" and skind in (None, "lesson") and _long_enough(piece):
                    failures.append(piece)
                    continue
                if skind is None:
                    continue
                why = tx.reason(piece) if skind in ("preference", "rule", "decision") else None
                out.append(Candidate(
                    kind=skind, bucket=_bucket(skind, piece), name=tx.title_from(piece),
                    statement=piece, points=[f"why: {why}"] if why else [], paths=[note.path],
                    weight=_WEIGHT[skind],
                    order=(index, s_index), roles={note.path: skind}))
    if procedures and failures:
        procedures[-1].points += [f"failure: {f}" for f in failures]
    elif failures:
        for f in failures:
            out.append(Candidate(kind="lesson", bucket="wiki", name=tx.title_from(f), statement=f,
                                 points=[], paths=[note.path], weight=_WEIGHT["lesson"],
                                 order=(index, 99), roles={note.path: "failure"}))
    return out, "" if out else "no decision, rule, preference, procedure or fact about a person"


