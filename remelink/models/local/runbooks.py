"""Runbooks from notes (SPEC §7.1): a numbered how-to list with what comes before it (when to
use it) and after it (what to do when it fails), and a debugging log with its symptom, cause,
diagnosis, fix, result and lesson (debuglog.py tells the parts apart)."""

from __future__ import annotations

import re

from remelink.models.local import debuglog, edits, people
from remelink.models.local import text as tx
from remelink.models.local.candidate import Candidate
from remelink.models.local.sections import Section
from remelink.vault.notes import Note

WEIGHT = 3.0


def procedure(note: Note, section: Section, blocks: list[tuple[str, str]], title: str,
               index: int, s_index: int) -> Candidate:
    numbered = [t for k, t in blocks if k == "num"]
    steps = [tx.clean_statement(t) for t in numbered if tx.clean_statement(t)]
    first_num = next(i for i, (k, _) in enumerate(blocks) if k == "num")
    lead = [tx.clean_statement(t) for k, t in blocks[:first_num] if k == "para"]
    after = [tx.clean_statement(t) for k, t in blocks[first_num:] if k == "para"]
    name = tx.procedure_title(section.heading or title, title)
    # "她的建议" under a talk by 陈静: the heading's pronoun is the person the note names.
    named = people.named(title, note.body, note.path)
    heading = tx.clean_statement(section.heading).strip("# ").strip()
    if named and heading and name.endswith(heading):
        name = name[:len(name) - len(heading)] + people.resolve(heading, named[0])
    points = [f"step: {s}" for s in steps]
    # What follows the steps is what to do when they fail ("If the pager test fails, ...").
    points += [f"failure: {a}" for a in after if re.match(r"^(?:if|when|unless|如果|若|当)\b", a,
                                                            re.I)]
    points += [f"point: {a}" for a in after if not re.match(r"^(?:if|when|unless|如果|若|当)\b",
                                                            a, re.I)]
    # The paragraphs before the steps, one after the other: each ends as a sentence (`... with
    # gdb](url)` then `Here's the recipe that worked:` is no one sentence).
    statement = " ".join([*(edits.end(t, "zh" if tx.is_cjk_text(t) else "en", more=True)
                            for t in lead[:-1] if t), *lead[-1:]])
    statement = re.sub(r"(?<=[。！？；：]) ", "", statement)  # no space after a Chinese end
    if statement:
        points.insert(0, f"context: {statement}")
    return Candidate(kind="procedure", bucket="procedure", name=name,
                     statement=statement or name, points=points, paths=[note.path],
                     weight=WEIGHT + 0.1 * len(steps), order=(index, s_index),
                     roles={note.path: "procedure"})


def debug_runbook(note: Note, title: str, attached: list[tuple[str, str]],
                  steps: list[tuple[str, str]], failures: list[str], index: int,
                  told: list[tuple[str, str]] | None = None) -> Candidate:
    """The log's runbook. `told` is what the note says besides its labelled lines, in order,
    each with the labelled part it is in (`fix` after `**Fix**:`, "before" ahead of the first
    label, "" in a log with no labels): a part keeps its statements in the note's order (the
    fix's command, then the line that goes with it); with no symptom labelled, the first
    statement is the symptom (a log opens on what was seen), the rest is the diagnosis."""
    points: list[str] = []
    by_kind: dict[str, list[str]] = {}
    for kind, text in attached:
        by_kind.setdefault(kind, []).append(text)
    told = list(told or [])
    if told and "symptom" not in by_kind and told[0][0] in ("", "before", "symptom"):
        by_kind["symptom"] = [told.pop(0)[1]]
    said = {t for _, t in attached}
    ordered: list[tuple[str, str]] = []
    for part, text in told:
        if text in said:
            continue
        if part == "before":
            by_kind.setdefault("context", []).append(text)
        elif part in ("symptom", "cause", "outcome", "lesson"):
            by_kind.setdefault(part, []).append(text)  # the labelled part goes on
        else:
            ordered.append(("fix" if part == "fix" else "investigation", text))
    in_order = {t for _, t in ordered}
    steps = ordered + [s for s in steps if s[1] not in in_order]
    points += [f"context: {t}" for t in by_kind.get("context", [])]
    for kind in ("symptom", "cause"):
        for text in by_kind.get(kind, []):
            points.append(f"{kind}: {text}")
    for section_kind, step in steps:
        role = debuglog.step_role(step)
        if section_kind == "fix" and role == "check":
            role = "step"
        points.append(f"{role}: {step}")
    points += [f"outcome: {t}" for t in by_kind.get("outcome", [])]
    points += [f"lesson: {t}" for t in by_kind.get("lesson", [])]
    points += [f"failure: {f}" for f in failures]
    symptom = next(iter(by_kind.get("symptom", [])), "")
    name = debuglog.runbook_title(title)
    return Candidate(kind="debug", bucket="procedure", name=name, statement=symptom or name,
                     points=points, paths=[note.path], weight=WEIGHT + 1,
                     order=(index, 0), roles={note.path: "debug"})
