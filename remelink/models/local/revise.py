"""The local engine's update of a node whose note was edited (SPEC §9.3): the pipeline paired a
new unit with the unit the note gave before (`revises` in the task) and names the node it went
into. A changed fact becomes a CORRECT of that node: a dated correction line after the sentence
that held the old value (kept, quoted), a Sources sentence for the note if it is new, and the
node's name and description set to the current value when they stated the old one."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from remelink.facts import facts, stated, values
from remelink.models.base import AssistantTurn, ToolCall
from remelink.models.local import decide, write
from remelink.vault import frontmatter
from remelink.vault.notes import Note


def with_value(text: str, old: str, new: str) -> str | None:
    """`text` with the one value that `old` states and `new` does not replaced by the one value
    `new` states and `old` does not (`four` -> `six`, `40` -> `80`, `两天` -> `四天`); None
    when the change is not one value for one value, or `text` does not state it."""
    # Only the values `text` states can be replaced in it: the old sentence may state others
    # the new one leaves out ("封版两天，期间只修 P0" / "封版四天": `P0` is not what changed).
    gone = tuple(v for v in values(facts(old) - facts(new)) if stated(text, (v,)))
    came = values(facts(new) - facts(old))
    numbers = [v for v in gone if not v[:1].isupper()], [v for v in came if not v[:1].isupper()]
    if not numbers[0] and not numbers[1]:
        # No number changed: one name or day for another ("on Thursday" -> "on Wednesday").
        numbers = ([v for v in gone if v[:1].isupper() and stated(text, (v,))],
                   [v for v in came if v[:1].isupper()])
    if len(numbers[0]) != 1 or len(numbers[1]) != 1:
        return None
    before, after = numbers[0][0], numbers[1][0]
    if not stated(text, (before,)):
        return None
    if before.isascii() and before[:1].isalnum():
        pattern = rf"(?<![\w.]){re.escape(before)}(?![\w])"
        # The word it counts follows it, in the number the new value takes ("one page" ->
        # "two pages"): the new text's own word, when it is the same word.
        counted = re.search(rf"(?<![\w.]){re.escape(after)}\s+([A-Za-z]+)", new)
        unit = re.search(rf"(?<![\w.]){re.escape(before)}\s+([A-Za-z]+)", text)
        if counted and unit and counted.group(1) != unit.group(1) and \
                decide.strong_stem(counted.group(1).lower()) == \
                decide.strong_stem(unit.group(1).lower()):
            return text[:unit.start()] + f"{after} {counted.group(1)}" + text[unit.end():]
    else:
        pattern = re.escape(before)
    changed, count = re.subn(pattern, after.replace("\\", r"\\"), text, count=1)
    return changed if count else None


def holding_sentence(body: str, old_statement: str, stale: Sequence[str],
                     idf: decide.IdfFn) -> str | None:
    """The node sentence that states what the note said before: one stating an old value if
    any does (the most alike first), else the one most alike if alike enough."""
    old = decide.bag(old_statement)
    scored = sorted(((decide.cosine(old, decide.bag(s), idf), s) for s in decide.passages(body)),
                    key=lambda pair: -pair[0])
    for score, sentence in scored:
        if stale and stated(sentence, tuple(stale)) and score > 0:
            return sentence
    if scored and scored[0][0] >= decide.T_POINT:
        return scored[0][1]
    return None


def correct_turn(*, target: str, note: Note, revises: dict[str, Any], name: str, summary: str,
                 description: str, sources: Sequence[write.SourceInfo], lang: str, today: str,
                 idf: decide.IdfFn, plan: Callable[[str], str]) -> AssistantTurn | None:
    """The edit (and frontmatter update) that corrects `target`; None when it already says
    everything (corrected by an earlier run), so the caller answers with the receipt."""
    body = note.body.replace("\r\n", "\n")
    old_statement = str(revises.get("old_statement") or "")
    new_statement = str(revises.get("new_statement") or summary)
    stale = tuple(str(v) for v in revises.get("stale") or ())
    anchor = holding_sentence(body, old_statement, stale, idf)
    new_sources = [s for s in sources if f"[[{s.path}" not in body]
    source = (new_sources or list(sources))[0].path
    line = write.correction_line(new_statement, anchor or old_statement, source, today, lang)
    new_body = body
    if line.strip() not in body:
        new_body = write.strike_superseded(write.insert_after_sentence(body, anchor, line),
                                           anchor, today, lang, quote=line) if anchor else \
            write.insert_before_sources(body, line)
    new_body = write.add_sources(new_body, [write.source_sentence(s, "correct", lang)
                                            for s in new_sources])
    calls: list[ToolCall] = []
    if new_body != body:
        old_text, new_text = body, new_body
        if note.newline == "\r\n":
            old_text, new_text = note.body, new_body.replace("\n", "\r\n")
        old, new = write.edit_span(old_text, new_text)
        calls.append(ToolCall("c1", "edit", json.dumps({"path": target, "old": old, "new": new},
                                                       ensure_ascii=False)))
    try:
        meta = frontmatter.load(note)
    except Exception:
        meta = {}
    update: dict[str, str] = {}
    current_name = str(meta.get("name") or "")
    if name and name != current_name and (stated(current_name, stale) or not current_name):
        # The name stated the old value: the same name with the new one, else the unit's.
        update["name"] = with_value(current_name, old_statement, new_statement) or name
    current_description = str(meta.get("description") or "")
    if description and description != current_description and \
            (stated(current_description, stale) or not current_description):
        update["description"] = description
    if update:
        calls.append(ToolCall("c2", "frontmatter_update", json.dumps(
            {"path": target, "metadata": update}, ensure_ascii=False)))
    if not calls:
        return None
    return AssistantTurn(text=plan("CORRECT"), tool_calls=tuple(calls))
