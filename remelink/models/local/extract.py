"""Extraction for the local engine (SPEC §8, §11): units from daily and resource notes, in
English and Chinese, and for every note that gives none a reason specific to it.

A note whose body is speaker turns is a conversation (transcript.py): what each person tells
about themselves becomes facts under their name, bucket `personal`. Any other note is read by
its structure (structure.py): sections, list items, decision / preference / how-to cues,
debugging logs. Candidates that say the same thing merge into one unit citing every note (the
points a later note adds are marked with that note, `point@2: ...`). Nothing is capped here:
every unit found is returned.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Collection, Mapping, Sequence

from remelink.models.local import decide, profile, status, structure, transcript, weblinks, when
from remelink.models.local import points as pt
from remelink.models.local import text as tx
from remelink.models.local.candidate import Candidate
from remelink.units import HELD_KIND, LINE_KIND
from remelink.vault.notes import Note

SameFn = Callable[[str, str], bool]


def same_statement(a: str, b: str, *, idf: decide.IdfFn = decide.default_idf,
                   semantic: decide.SemanticFn | None = None) -> bool:
    """Two statements say the same thing: the engine's own same_abstraction decision, with no
    disagreement at all (a correction between two notes must stay two units, so that the later
    one corrects the earlier node)."""
    c = decide.compare(a, b, b, idf=idf, semantic=semantic)
    return c.conflict_kind is None and decide.classify(c) == "same_abstraction"


def conversation_facts(note: Note, meta: dict[str, object], index: int
                       ) -> tuple[list[profile.Said], str] | None:
    """The facts of a transcript note, with the reason when it has none; None when the note
    is not a transcript."""
    turns = transcript.parse(note.body)
    if turns is None:
        return None
    day = when.day_of(note.path, meta, structure.title_of(note, meta))
    iso = day.isoformat() if day else ""
    found = [profile.Said(f, note.path, iso, (index, i))
             for i, f in enumerate(transcript.facts(turns, day))]
    if found:
        return found, ""
    speakers = sorted({t.speaker for t in turns})
    return [], (f"a conversation ({', '.join(speakers[:3])}) of greetings, questions and "
                "reactions: nobody tells a fact about themselves")


def _same(a: Candidate, b: Candidate, same: SameFn) -> bool:
    if (a.kind == status.KIND) != (b.kind == status.KIND):
        return False
    if a.kind == status.KIND:
        return a.subject == b.subject  # one workstream key, one unit (status.py)
    if a.bucket != b.bucket or a.subject != b.subject:
        return False
    if a.kind == "procedure" and b.kind == "procedure":
        # Two runbooks are the same when their titles are (the steps may differ: REFINE).
        return same(b.name, a.name)
    if (a.kind == "procedure") != (b.kind == "procedure"):
        return False
    if a.kind == "topic" and b.kind == "topic":
        # Two documents are about the same thing when their titles are.
        return same(b.name, a.name)
    if not decide.bag(a.text()).counts.keys() & decide.bag(b.text()).counts.keys():
        return False  # nothing in common: not worth the full comparison
    # The later statement is compared with the earlier one ("Alice again asked..." refers back).
    return same(b.text(), a.text())


def merge(candidates: list[Candidate], same: SameFn | None = None) -> list[Candidate]:
    """Merge candidates that state the same thing (same bucket and subject, same abstraction,
    no disagreement); the merged unit cites every note, and each point it gains names the note
    it comes from."""
    same = same or same_statement
    merged: list[Candidate] = []
    for cand in candidates:
        for kept in merged:
            if _same(kept, cand, same):
                _absorb(kept, cand)
                break
        else:
            merged.append(cand)
    return merged


def _absorb(kept: Candidate, cand: Candidate) -> None:
    for path in cand.paths:
        if path not in kept.paths:
            kept.paths.append(path)
            kept.roles[path] = "corroborate"
    source = kept.paths.index(cand.paths[0])
    known = {pt.text_of(p).lower() for p in kept.points} | {kept.statement.lower()}
    if cand.kind == status.KIND:
        # Every status line is an entry of its own, dated by its note (said again or not).
        kept.points.append(pt.Point("status", source, cand.statement).format())
        kept.points += [pt.moved(p, kept.paths.index(cand.paths[pt.parse(p).source]))
                        for p in cand.points if pt.parse(p).role == status.KIND
                        and pt.parse(p).source < len(cand.paths)]
        kept.weight += 1.0
        return
    for raw in cand.points:
        p = pt.parse(raw)
        if p.role == "said":
            kept.points.append(pt.moved(raw, source))
        elif p.text.lower() not in known:
            kept.points.append(pt.moved(raw, source))
            known.add(p.text.lower())
    if cand.kind != "procedure" and cand.statement and cand.statement.lower() not in known:
        # A statement that announces itself as said again ("Dana repeated: ...", "..., still
        # not happening", "按规定") is the point again: provenance for its Sources sentence,
        # not a line of the body.
        again = decide.says_again(cand.statement) or \
            tx.has_word_cue(cand.statement, decide.STANDING_CUES)
        kept.points.append(pt.Point("again" if again else "point", source,
                                    cand.statement).format())
    if cand.kind == "procedure" and kept.kind != "procedure":
        kept.kind, kept.name = cand.kind, cand.name
    kept.weight += 1.0


ECHO = LINE_KIND  # the kind of a line's own unit: it may only update a node of another note
_CODE_FENCE_RE = re.compile(r"^\s*(?:```|~~~)")
_LINE_MARK_RE = re.compile(r"^\s*(?:[-*+]\s+(?:\[[ xX]\]\s+)?|\d+[.)]\s+|>\s*)")


def _echoes(text: str) -> bool:
    """The sentence changes a value (a decision, a correction, a value set from then on) or
    says a point again or as it stands."""
    return decide.decides(text) or decide.says_again(text) or tx.has_word_cue(
        text, decide.CORRECTION_CUES + decide.STANDING_CUES)


# A lead-in that says the list after it is said again ("Agreed / reminders", "记几条这次反复提到的
# 问题："): each item of the list says so as well. (A single line's "reminder" is no such cue.)
LEAD_IN_CUES = (*decide.RESTATEMENT_CUES, "reminder", "reminders", "反复", "提醒")
_LIST_ITEM_RE = re.compile(r"^\s*(?:[-*+]\s+|\d+[.)]\s+)")


def lead_ins(note: Note) -> dict[int, str]:
    """For each line of the note (by number) that is an item of a list whose lead-in (the
    heading or paragraph line above it) says the list is said again, that lead-in."""
    out: dict[int, str] = {}
    fenced = False
    lead = ""
    for n, raw in enumerate(note.body.splitlines()):
        if _CODE_FENCE_RE.match(raw):
            fenced = not fenced
            continue
        if fenced or not raw.strip() or raw.lstrip().startswith("|"):
            continue
        if raw.lstrip().startswith("#") or not (_LIST_ITEM_RE.match(raw) or raw[:1].isspace()):
            text = tx.clean_statement(raw.lstrip("# ").replace("**", ""))
            lead = text if tx.has_word_cue(text, LEAD_IN_CUES) else ""
        elif lead and _LIST_ITEM_RE.match(raw):
            out[n] = lead
    return out


def said_under(note: Note, cands: Sequence[Candidate], leads: dict[int, str]) -> None:
    """A unit of one statement that is an item of a list said again (`leads`, from
    `lead_ins`) carries its lead-in as an `under` point: compared with other notes' nodes as if
    it said so itself."""
    if not leads:
        return
    lines = note.body.splitlines()
    items = {tx.clean_statement(_LINE_MARK_RE.sub("", lines[n]).replace("**", "")).casefold(): lead
             for n, lead in leads.items()}
    for c in cands:
        if c.kind in ("procedure", "topic", "debug") or len(c.points) > 2 or not c.statement:
            continue
        lead = items.get(tx.clean_statement(c.statement).casefold())
        if lead:
            c.points.append(pt.Point("under", 0, lead).format())


def echo_lines(note: Note, cands: Sequence[Candidate], index: int,
               leads: dict[int, str] | None = None) -> list[Candidate]:
    """A unit of its own for each line of the note that changes a value or says a point
    again (in one of its sentences, or as an item of a list said again: `lead_ins`), where no
    unit of the note states just that line (a meeting's or review's line inside the document's
    node): compared with the nodes of other notes, it can CORRECT or CORROBORATE the node that
    holds the point (SPEC §7.2: one unit, one node). The engine lands it nowhere new: with no
    node of another note the same, it stays in its note's node."""
    if not cands:
        return []  # a note that gives nothing (chatter, a lunch plan) says nothing again
    # A document's unit (a runbook, a topic, a unit of many points) never says one point
    # again: its leading line is still a line of its own.
    own = [tx.clean_statement(c.statement).casefold() for c in cands
           if c.kind not in ("procedure", "topic", "debug") and c.statement and
           len(c.points) <= 2]
    leads = lead_ins(note) if leads is None else leads
    out: list[Candidate] = []
    fenced = False
    for n, raw in enumerate(note.body.splitlines()):
        if _CODE_FENCE_RE.match(raw):
            fenced = not fenced
            continue
        if fenced or raw.lstrip().startswith(("#", "|")):
            continue
        line = tx.clean_statement(_LINE_MARK_RE.sub("", raw).replace("**", ""))
        under = leads.get(n, "")
        if not structure.long_enough(line) or not (
                under or any(_echoes(x) for x in tx.sentences(line, clauses=False))):
            continue
        key = line.casefold()
        if any(o in key for o in own if len(o) >= 10):
            continue  # a unit of the note states just this
        out.append(Candidate(kind=ECHO, bucket="wiki", name=tx.title_from(line),
                             statement=line,
                             points=[pt.Point("under", 0, under).format()] if under else [],
                             paths=[note.path], weight=1.0, order=(index, 1000 + n)))
    return out


def lone_status_keys(notes: Sequence[tuple[Note, dict[str, object]]]) -> dict[str, str]:
    """The workstream keys that the status lines of fewer than two of these notes are said
    under (status.keyed_lines): a project only if the vault keeps its node already. Normal key
    -> key as first written."""
    out: dict[str, str] = {}
    said: dict[str, set[str]] = {}
    for note, meta in notes:
        for key, _, _ in status.keyed_lines(note, structure.title_of(note, meta)):
            out.setdefault(status.normal_key(key), key)
            said.setdefault(status.normal_key(key), set()).add(note.path)
    return {k: key for k, key in out.items() if len(said[k]) < status.MIN_NOTES}


def held_candidates(held: Sequence[Mapping[str, object]]) -> list[Candidate]:
    """The status lines held for a later note (units.HELD_KIND, the task's `held`), as the
    candidates of their notes, before the batch's own."""
    out: list[Candidate] = []
    for i, h in enumerate(held):
        name, summary = str(h.get("name") or ""), str(h.get("summary") or "")
        paths = [str(p) for p in h.get("paths") or [] if isinstance(p, str)]  # type: ignore
        if not (name and summary and paths):
            continue
        out.append(Candidate(kind=status.KIND, bucket="wiki", name=name, statement=summary,
                             points=[str(p) for p in h.get("points") or []],  # type: ignore
                             paths=paths, weight=1.0, order=(-1, i),
                             roles={p: "finding" for p in paths},
                             subject=status.normal_key(name)))
    return out


def extract(notes: Sequence[tuple[Note, dict[str, object]]], *, same: SameFn | None = None,
            projects: Collection[str] = (), held: Sequence[Mapping[str, object]] = ()
            ) -> tuple[list[dict[str, object]], dict[str, str]]:
    """Units (as the mappings an LLM would return) for a batch of notes, and for every note
    that gave none a short reason specific to it. No cap: every unit found is returned.
    `projects`: the normal keys of the workstreams the vault keeps a status node for
    (status.py); `held`: the status lines earlier runs held (units.HELD_KIND), each one more
    note reporting on its key. A status line whose key is no project is returned as a held
    unit, besides staying where it is: a later note reporting on the key makes it one."""
    candidates: list[Candidate] = []
    said: list[profile.Said] = []
    speakers: set[str] = set()
    skipped: dict[str, str] = {}
    echoes: list[Candidate] = []
    drafts: list[tuple[int, Note, dict[str, object], list[Candidate], str]] = []
    for index, (note, meta) in enumerate(notes):
        conversation = conversation_facts(note, meta, index)
        if conversation is not None:
            facts, reason = conversation
            said += facts
            speakers |= {f.fact.speaker for f in facts}
            if not facts:
                skipped[note.path] = reason
            continue
        cands, reason = structure.note_candidates(note, meta, index)
        drafts.append((index, note, meta, cands, reason))
    # A status line leaves its unit only for a project: a key several notes report on, or one
    # the vault keeps a status node for (tried on copies: `take` changes what it takes from).
    taken = [status.take(note, [copy.copy(c) for c in cands], index,
                         structure.title_of(note, meta))
             for index, note, meta, cands, _ in drafts]
    earlier = held_candidates(held)
    keys = status.projects([*taken, earlier], projects)
    candidates += [c for c in earlier if c.subject in keys]
    lone = merge([c for units in taken for c in units if c.subject not in keys])
    for index, note, meta, cands, reason in drafts:
        cands += status.take(note, cands, index, structure.title_of(note, meta), keys)
        leads = lead_ins(note)
        said_under(note, cands, leads)
        for c in cands:
            c.name = tx.note_case(c.name, note.body)
        candidates += cands
        echoes += echo_lines(note, cands, index, leads)
        if not cands:
            skipped[note.path] = reason
    # Facts about people are grouped by topic across the whole batch (profile.py); other
    # candidates merge when they state the same thing.
    people = profile.group(said, sorted(speakers))
    told = {p for c in people for p in c.paths}
    for item in said:
        if item.path not in told and item.path not in skipped:
            skipped[item.path] = ("a conversation with only passing remarks: nothing anyone "
                                  "tells about themselves is specific enough to keep")
    # A note's echoes merge with nothing: each is compared with the nodes on its own.
    units = sorted(merge(candidates, same) + people + echoes, key=lambda c: c.order)
    units += lone
    held_ids = {id(c) for c in lone}
    by_path = {note.path: note for note, _ in notes}
    web = {path: weblinks.in_note(note.body) for path, note in by_path.items()
           if "](" in note.body}
    out: list[dict[str, object]] = []
    for c in units:
        summary = c.statement
        if c.kind == "procedure":
            steps = [p for p in pt.parse_all(c.points) if p.role == "step"]
            lead = c.statement if c.statement and c.statement != c.name else ""
            summary = lead or (f"{c.name}: {steps[0].text}" if steps else c.name)
        words = " ".join([summary, *c.points])
        kept = [p for k, path in enumerate(c.paths)
                for p in weblinks.points(web.get(path, ()), words, k)]
        out.append({"name": c.name, "bucket": c.bucket, "summary": summary,
                    "paths": list(c.paths), "points": [*c.points, *kept],
                    "kind": HELD_KIND if id(c) in held_ids else c.kind})
    return out, skipped
