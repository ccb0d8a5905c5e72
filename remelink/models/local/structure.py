"""Extraction for the local engine (SPEC §8, §11): units from the structure of daily and resource
notes, in English and Chinese.

A note is split into sections by its headings; a section's heading, or a label line ("We
agreed:", "Why: ...", "Root cause: ..."), says what it holds. Numbered lists under a how-to
heading become one procedure; a debugging log becomes one runbook (debuglog.py); list items and
sentences carrying a decision, rule, preference or definition cue become statements, their
subjects resolved when they open with a pronoun (people.py). What a note says *about* its
decisions (its context, the reason given, a follow-up like "Revisit after the load test")
becomes part of those units, never a unit of its own; chatter (attendance, one-off tasks,
thanks) is left out. A note that gives nothing gets a reason that says what it held.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from remelink.models.local import debuglog, decide, fenced, people, runbooks, runs, sections
from remelink.models.local import points as pt
from remelink.models.local import text as tx
from remelink.models.local.candidate import Candidate
from remelink.vault.notes import Note

title_of = sections.title_of  # the note's title (its first heading, else frontmatter, else name)
DAILY = "daily/"  # a note outside it is a resource document
MIN_WORDS = 5
MIN_CJK = 8
INTRO = 4  # a document's introduction: its paragraphs before the first second-level heading
# Sections whose statements are about the note's decisions, not units of their own.
_ATTACHED = ("context", "why", "followup", "symptom", "cause")
_FOLLOWUP_RE = re.compile(r"^(?:revisit|re-?check|follow up|follow-up|to do|todo|tbd|open "
                          r"question|再议|待定|后续)\b", re.I)
# A label is a short phrase before a colon: no code (a colon inside `x: y` labels nothing), no
# clause of its own (a comma or a full stop before the colon makes it a sentence).
_LABEL_LINE_RE = re.compile(r"^(?P<label>[^:：`,，;；。.!?！？]{2,30}?)\s*[:：]\s*(?P<rest>.*)$")


# Markup a reader never sees as words: an HTML element's tag (`<img width="736" alt=... src=...>`)
# or a markdown image. A line made of them states nothing, however long its attributes.
_MARKUP_RE = re.compile(r"<[^<>\n]{0,4000}>|!\[[^\]\n]{0,1000}\]\([^)\n]{0,4000}\)")


def long_enough(text: str) -> bool:
    """Long enough to state something on its own."""
    return _long_enough(text)


def _long_enough(text: str) -> bool:
    if tx.is_cjk_text(text):
        return len(re.findall(f"[{tx.CJK}]", text)) >= MIN_CJK
    return len(_MARKUP_RE.sub(" ", text).split()) >= MIN_WORDS


def _is_attendance(text: str) -> bool:
    return bool(re.match(r"^\s*(attendees|participants|present|参会|出席|与会)\s*[:：]",
                         text.lower()))


def _is_chatter(text: str) -> bool:
    if _is_attendance(text) or tx.is_wish(text):
        return True
    # "thanks to the following", "Thanks to tips on the forum I now know ..." give a cause;
    # "Thanks to Ana for the cake", "Thanks to everyone!" thank someone.
    if not _GRATITUDE_RE.search(text):
        text = _THANKS_TO_RE.sub(" ", text)
    if not tx.has_cue(text, tx.CHATTER_CUES) or tx.has_cue(
            text, tx.RULE_CUES + tx.PREFERENCE_CUES + tx.DECISION_CUES):
        return False
    # A line dated `tomorrow` or `下周` that states a value is about that value.
    social = tuple(c for c in tx.CHATTER_CUES if c not in tx.WHEN_CUES)
    return tx.has_cue(text, social) or not tx.states_value(text)


_THANKS_TO_RE = re.compile(r"\bthanks to\b", re.I)
_GRATITUDE_RE = re.compile(r"\bthanks to\b[^.!?\n]*?\bfor\b|^\W*thanks to(?:\W+\w+){1,3}\W*$",
                           re.I)


# A line the author labels as the note's gist (`**TLDR:** Use `shutil.copyfileobj()``) is what
# the note says, whatever its cue words and however short.
_GIST_RE = re.compile(
    r"^[\W_]*(?:tl;?\s?dr|summary|in short|bottom line|总结|结论|一句话)[\W_]*[:：]", re.I)


# A claim a named person states as theirs ("Priya said it again: design docs fit on one page",
# "陈静再次强调：…") is that person's view, whatever its words: kept like a preference.
_SAID_RE = re.compile(rf"^(?:{tx.REPORTED_RE.pattern})\s*[:：]\s*\S")


# A prohibition written as a noun phrase (`No network calls inside a DB transaction.`).
# Who owns what is decided (tx.DECISION_CUES: `接手`, `来负责`); in Chinese also said as the
# thing going to its owner: "payout-runner 的 on-call runbook 以后归何伟维护".
_OWNED_BY_ZH_RE = re.compile(r"归[^，。；\s]{1,8}?(?:维护|负责|管理|管)")
_PROHIBITION_RE = re.compile(r"^(?:\*\*)?no\s+[a-z][\w-]*\s+[a-z]", re.I)


# A statement that says when it holds: now, a day, a week, a date or a span of days.
_AT_A_TIME_RE = re.compile(
    r"\b(?:now|currently|today|tonight|tomorrow|yesterday|(?:this|that|next|last) (?:week|month|"
    r"quarter|sprint)|until|till)\b|\b\d{1,2}(?:\s*[-–]\s*\d{1,2})?\s+(?:jan|feb|mar|apr|may|jun|"
    r"jul|aug|sep|oct|nov|dec)[a-z]*\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*"
    r"\s+\d{1,2}\b|\d{4}-\d{2}-\d{2}|现在|目前|今天|明天|本周|这周|下周|上周|\d+\s*月\s*\d+\s*[日号]",
    re.I)


def _statement_kind(text: str, section_kind: str) -> str | None:
    """What a statement is, from its section and its own cue words; None for passing mentions."""
    if _GIST_RE.match(text) and len(_GIST_RE.sub("", text).split()) >= 2:
        return "finding"
    if _is_chatter(text) or tx.leans_on_context(text) or not (
            _long_enough(text) or (tx.states_value(text) and _short_value(text))):
        return None  # (a value needs few words: `单个 value 不要超过 10KB。`)
    if tx.has_cue(text, tx.PREFERENCE_CUES) or _SAID_RE.match(text):
        return "preference"
    if section_kind in ("decision", "preference", "lesson", "definition", "finding"):
        return section_kind
    if tx.has_cue(text, tx.DECISION_CUES) or _OWNED_BY_ZH_RE.search(text):
        return "decision"
    if tx.has_cue(text, tx.RULE_CUES) or _PROHIBITION_RE.match(text):
        return "rule"
    if tx.has_cue(text, tx.DEFINITION_CUES):
        # "journaldb-1 is the primary now", "Tomasz is the escalation point that week": how
        # things stand at a time is a finding, not what a term means.
        return "finding" if _AT_A_TIME_RE.search(text) else "definition"
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


def _label(text: str) -> tuple[str, str] | None:
    """A label line: ("decision", "") for "We agreed:", ("why", "X") for "Why: X"."""
    found = debuglog.label_of(text)
    if found:
        return found
    m = _LABEL_LINE_RE.match(tx.clean_statement(text))
    if not m:
        return None
    label = m.group("label").strip().lower()
    label = re.sub(r"^(?:we|the team|team|after [^:]+? we)\s+", "", label)
    kind = tx.heading_kind(label)
    if kind == "neutral" or len(label.split()) > 4 or (tx.is_cjk_text(label) and len(label) > 8):
        return None
    return kind, m.group("rest").strip()


@dataclass
class _Note:
    """What the walk through one note found."""
    out: list[Candidate] = field(default_factory=list)
    attached: list[tuple[str, str]] = field(default_factory=list)  # (kind, text)
    steps: list[tuple[str, str]] = field(default_factory=list)     # (section kind, step)
    debug_kinds: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)  # what was left out: attendance, tasks, ...
    # What the note states, in its order: the statements it gave (candidates) and, between
    # them, the lines that carry its code (a how-to's commands, however they are introduced).
    said: list[tuple[int, Candidate | str]] = field(default_factory=list)  # (section, item)
    listed: set[int] = field(default_factory=set)  # ids of the items written as list items
    quoted: set[int] = field(default_factory=set)  # ids of the items read in a quote
    problems: set[int] = field(default_factory=set)  # ids of the problems a document states
    notices: set[int] = field(default_factory=set)  # ids of the author's notices (tx.is_notice)
    block: str = ""  # the kind of block being read (`item`, `num`, `para`)
    blocks: int = 0  # blocks read so far (the id of the one being read)
    pieces: list[runs.Piece] = field(default_factory=list)  # a daily note's statements
    introduces: bool = False  # the block being read is a lead-in to a list after it
    introduced: bool = False  # the block being read is an item of a list a lead-in introduces
    listing: str = ""  # the kind of the block read before
    first_part: str = ""  # the part the note's first label (`**Symptom**:`) heads
    intro: int = 0  # paragraphs read before the first second-level heading


def note_candidates(note: Note, meta: dict[str, object], index: int
                    ) -> tuple[list[Candidate], str]:
    """Candidates of one note, in order, and the reason when it gives none."""
    title = sections.title_of(note, meta)
    found = _Note()
    parts = sections.sections(note.body, note.body_line, note.path)
    names = people.named(title, note.body, note.path)
    person = names[0] if names else None
    procedures: list[Candidate] = []
    debugging = _tells_a_failure(parts)
    for s_index, section in enumerate(parts):
        kind = tx.heading_kind(section.heading) if section.heading else "neutral"
        if section.level == 1 and kind != "procedure":
            # A note's title says what the note is about, not what this section holds,
            # except a how-to title over its own steps ("# How to rotate keys").
            kind = "neutral"
        if kind in debuglog.DEBUG_KINDS:
            found.debug_kinds.append(kind)
        if kind == "neutral" and section.heading.strip(" #:：").lower() in _ACTIONS:
            kind = "chatter"  # `## Actions`: who does what next, one-off tasks
        if kind == "chatter":
            found.seen.add("tasks" if "action" in section.heading.lower() or "todo" in
                           section.heading.lower() else "attendance")
            continue
        blocks = sections.blocks(section.lines)
        numbered = [t for k, t in blocks if k == "num"]
        if kind in ("investigation", "fix") and not debugging:
            # `## Alternative solutions` in a how-to: what the section lists is what the note
            # states, as under any heading (it was kept as a debugging log's steps, then lost).
            kind = "neutral"
        if kind in ("investigation", "fix") and (numbered or blocks):
            found.steps += [(kind, tx.clean_statement(t)) for k, t in blocks
                            if k in ("num", "item")]
            continue
        if numbered and (kind == "procedure" or (len(numbered) >= 3 and kind == "neutral"
                                                 and _steps(numbered, title,
                                                            section.heading, blocks))):
            cand = runbooks.procedure(note, section, blocks, title, index, s_index)
            procedures.append(cand)
            found.out.append(cand)
            blocks = [(k, t) for k, t in blocks if k != "num"]
            if kind == "procedure":
                continue
        local = kind
        # The labelled part of a debugging log a statement is in (`**Fix**:` and what follows
        # it up to the next label or heading): its role in the runbook.
        part = kind if kind in _PARTS else ""
        whole = _whole_lists(blocks) if not note.path.startswith(DAILY) else set()
        for b_index, (k, raw) in enumerate(blocks):
            found.block = "aside" if k == "para" and _aside(raw) else k
            found.blocks += 1
            if k == "para" and not note.path.startswith(DAILY) and _notice(
                    raw, section, found.blocks == 1 and section.level <= 1):
                # The author's own update, note or warning, or a retraction (issue 21): a
                # statement of the note, kept whole with its label, in its place.
                notice = tx.clean_statement(_unquoted(raw))
                found.block = "para"
                _said(found, s_index, notice)
                found.notices.add(id(notice))
                continue
            # A lead-in (`... the options are:`) and the list it introduces belong together
            # (issue 21): in a document both are kept, the items however short.
            after = blocks[b_index + 1][0] if b_index + 1 < len(blocks) else ""
            found.introduced = k in ("item", "num") and (
                found.introduces or (found.introduced and k == found.listing) or
                b_index in whole)
            found.introduces = k == "para" and after in ("item", "num") and \
                fenced.strip(raw).rstrip().endswith((":", "："))
            found.listing = k
            if k == "para" and found.intro <= INTRO:
                found.intro = found.intro + 1 if section.level < 2 else INTRO + 1
            text = tx.clean_statement(raw)
            label = _label(text)
            if label is None and k == "para" and _bare_label(text):
                part = ""  # a label of no kind known here (`Impact:`) ends the part before
            here = local
            if label:
                here = label[0]
                if k not in ("item", "num") or not label[1]:
                    # A labelled paragraph, or a label item with nothing after it, heads what
                    # follows; a labelled list item (`1. 3 月月结的教训：…`) is only itself.
                    local = label[0]
                if label[0] in debuglog.DEBUG_KINDS:
                    found.debug_kinds.append(label[0])
                if label[0] in _PARTS and (k not in ("item", "num") or not label[1]):
                    part = label[0]
                    found.first_part = found.first_part or part
                text = label[1][:1].upper() + label[1][1:]
                if here == "chatter":
                    found.seen.add("attendance")  # `参会：…`, `Agenda:` and what it lists
                    continue
                if not text:
                    # "We agreed:" heads the items below it; it says what kind they are (each
                    # its own), not what they are about (runs.py).
                    continue
            elif k == "para" and kind != local and not raw.startswith((" ", "\t")):
                local = here = kind
            if k == "item" and _TASK_RE.match(text):
                found.seen.add("tasks")  # `- [ ] drop catalog_v7`: a task, done or not
                continue
            pieces = [text] if k in ("num", "item") else tx.sentences(text, clauses=False)
            for piece in pieces:
                subject = people.subject_of(piece)
                piece = people.resolve(piece, person)
                if k in ("num", "item"):
                    piece = people.resolve_sentences(piece, subject or person)
                person = subject or person
                if people.about_person(piece, subject or person) and not _is_chatter(piece):
                    _person_fact(found, note, piece, index, s_index)
                    continue
                before = (len(found.out), len(found.attached), len(found.failures))
                _statement(found, note, piece, here, index, s_index)
                _read(found, before, runs.Piece(s_index, found.blocks, k, piece, None,
                                                part or ("" if found.first_part else "before")))
    if procedures and found.failures:
        procedures[-1].points += [f"failure: {f}" for f in found.failures]
    elif found.failures:
        for f in found.failures:
            found.out.append(Candidate(kind="lesson", bucket="wiki", name=tx.title_from(f),
                                       statement=f, points=[], paths=[note.path],
                                       weight=_WEIGHT["lesson"], order=(index, 99),
                                       roles={note.path: "failure"}))
    told_kinds = found.debug_kinds + [k for k, _ in found.attached if k == "outcome"]
    if debuglog.is_debug_log(told_kinds, bool(found.steps)):
        # One incident, one runbook: a numbered list elsewhere in the log ("What I checked")
        # is its diagnosis, not a runbook of its own.
        for cand in procedures:
            found.steps += [("investigation", p.split(": ", 1)[1]) for p in cand.points
                            if p.startswith("step: ")]
        # What the log tells between its labelled parts (what was tried, what it showed) is
        # its diagnosis, in the note's order; the log opens on what was seen.
        # A labelled log's parts keep their statements (what follows `**Fix**:` is the fix),
        # code included; what it says before its first label is the context.
        told = [p for p in found.pieces if (_prose(p.text) or p.part in ("fix", "investigation"))
                and not runs.unfinished(p.text)
                and (p.cand is None or p.cand.kind not in ("lesson", "fact"))]
        inside = [p.cand for p in told if p.cand is not None]
        # What a log says before its first label is its context when that label opens on the
        # symptom (`13 Feb, SEV2, I joined as IC.`, then `**Symptom**: ...`); before a later
        # part (`Fix:` after the story of the search) it is the diagnosis.
        parts_told = [("" if p.part == "before" and found.first_part != "symptom" else p.part,
                       p.text) for p in told]
        return [runbooks.debug_runbook(note, title, found.attached, found.steps,
                                       found.failures, index, parts_told)] + \
            [c for c in found.out if c.kind not in ("lesson",) and c not in procedures
             and not any(c is i for i in inside)], ""
    if note.path.startswith(DAILY):
        _runs(found, note, title, parts, index)
    _attach(found, note, index)
    if not note.path.startswith(DAILY):
        _topics(found, note, title, parts, procedures, index)
    return found.out, "" if found.out else f"{_reason(found, note)} ({title})"


def _whole_lists(blocks: list[tuple[str, str]]) -> set[int]:
    """The items of a document's lists that are kept whole: every item of a list one item of
    which says something on its own (is long enough). A list is one thing (a recipe's
    ingredients, a set of options): "3/4oz simple syrup (1/1 ratio sugar to water by
    weight) - ..." was kept and "1oz lemon juice", "3oz pisco", "1 egg white" were not."""
    out: set[int] = set()
    i = 0
    while i < len(blocks):
        kind = blocks[i][0]
        if kind not in ("item", "num"):
            i += 1
            continue
        j = i
        while j < len(blocks) and blocks[j][0] == kind:
            j += 1
        if any(_long_enough(tx.clean_statement(text)) for _, text in blocks[i:j]):
            out.update(range(i, j))
        i = j
    return out


def _bare_label(text: str) -> bool:
    """A label line with nothing after it (`Checked:`)."""
    m = _LABEL_LINE_RE.match(text)
    return m is not None and not m.group("rest")


# The parts of a debugging log a label heads, besides the statement it labels.
_PARTS = ("symptom", "cause", "investigation", "fix", "outcome", "lesson")


def _tells_a_failure(parts: list[sections.Section]) -> bool:
    """The note has a symptom, a cause or a lesson, as a heading or a labelled line: only
    then may it be a debugging log (debuglog.is_debug_log), whose `Fix` and `What I tried`
    sections are its steps."""
    for section in parts:
        if section.heading and section.level >= 2 and \
                tx.heading_kind(section.heading) in _FAILURE_PARTS:
            return True
        for line in section.lines:
            if ":" in line or "：" in line:
                found = _label(line.strip().lstrip("-*+ "))
                if found and found[0] in _FAILURE_PARTS:
                    return True
    return False


_FAILURE_PARTS = ("symptom", "cause", "lesson")
_ACTIONS = ("actions", "next actions", "action", "行动", "待办事项")
_CODE_RE = re.compile(r"`[^`\n]*`")
_TASK_RE = re.compile(r"^\[[ xX]\]\s")  # a checkbox item: a task list's entry
_GENERIC_TITLE_RE = re.compile(r"\s+(?:notes?|overview|summary|笔记|说明|概述)$", re.I)


# A title or heading that names a document's rules or advice (`API style guide`, `On-call &
# escalation policy`, `发布规范`, `她的建议`): its numbered list states them, it is no procedure.
_RULES_RE = re.compile(r"\b(?:polic(?:y|ies)|guide(?:lines?)?|rules?|standards?|conventions?|"
                       r"principles?|recommendations?|advice|tips|dos and don'ts)\b|"
                       r"规范|规则|指南|原则|制度|约定|建议|守则|须知", re.I)


def _steps(numbered: list[str], title: str, heading: str, blocks: list[tuple[str, str]]
           ) -> bool:
    """A numbered list under a heading that names no kind is a set of steps when the note is a
    how-to (its title says so, or the line that introduces the list: `Checklist:`,
    `操作步骤：`) or when its items carry their commands (half of them code), unless the heading
    or the title names rules or advice; otherwise it is what the author enumerates (a meeting's
    points, a policy's rules), each item a statement of its own (issue 21: an agenda or a
    policy is not a procedure)."""
    first = next(i for i, (k, _) in enumerate(blocks) if k == "num")
    lead = tx.clean_statement(blocks[first - 1][1]) if first and \
        blocks[first - 1][0] == "para" else ""
    label = _label(lead) if lead.rstrip().endswith((":", "：")) else None
    if tx.heading_kind(title) == "procedure" or (label is not None and label[0] == "procedure"):
        return True
    if _RULES_RE.search(heading) or _RULES_RE.search(title):
        return False
    return 2 * sum(1 for t in numbered if _carries_command(t)) >= len(numbered)


def _carries_command(item: str) -> bool:
    """A step's item with its command: a code block, a command line (code with a space in
    it: `pip install x`), or code with words that do something with it (`Run make`). An item
    that is one name alone (`browser_close` (read-only)) is an entry of a reference list (a
    tool's commands, a module's functions), not a step."""
    if fenced.has_block(item):
        return True
    spans = _CODE_RE.findall(item)
    return bool(spans) and (any(" " in span.strip("` ") for span in spans) or bool(
        re.search(r"\w", tx.drop_parentheticals(_CODE_RE.sub(" ", item)))))


def _topics(found: _Note, note: Note, title: str, parts: list[sections.Section],
            procedures: list[Candidate], index: int) -> None:
    """One node per topic (SPEC §7.1): a document's statements, and the lines that carry its
    code, are about what the document is about. They become one unit named by the document's
    title, led by its opening statement, holding the rest in the note's order; a statement made
    under a runbook's own heading joins that runbook. Facts about people stay their own."""
    # Lessons drawn from a failure section or a cause, made after the walk, close the topic.
    found.said += [(c.order[1], c) for c in found.out
                   if c.kind not in ("procedure", "fact") and
                   not any(c is item for _, item in found.said)]
    if "fix" not in found.debug_kinds:
        # A problem stated with no answer told (a design's `## Problem`) stays context, as it
        # was (noted in issue 21, not changed here); with its answer it is what the note says.
        found.said = [(s, item) for s, item in found.said if id(item) not in found.problems]
    members = [c for _, c in found.said if isinstance(c, Candidate)]
    if not found.said:
        return
    by_section = {c.order[1]: c for c in procedures}
    topic: list[tuple[int, Candidate | str]] = []
    for s_index, item in found.said:
        runbook = by_section.get(s_index)
        if runbook is not None:
            _join(runbook, item)
            continue
        topic.append((s_index, item))
    found.out = [c for c in found.out if c not in members]
    if not topic:
        return
    name = _GENERIC_TITLE_RE.sub("", tx.without_genre_label(tx.clean_statement(title)))
    name = tx.capitalised(name)
    own = next((c for c in procedures if c.name == name), None)
    if own is not None:
        # The runbook the note's title names is the topic: its statements join it, each
        # under its section's heading (issue 21).
        heading = ""
        for s_index, item in topic:
            shown = _shown_heading(_section(parts, s_index), title)
            if shown != heading:
                own.points.append(f"section: {shown or pt.NO_SECTION}")
                heading = shown
            _join(own, item)
        return
    lead = _opening(parts)
    points: list[str] = []
    heading = ""
    for s_index, item in topic:
        # A line keeps the heading of the section it sits under (issue 21): a `section:`
        # mark before the first line of each section, written as a heading (write.py) before
        # the first line of it the node keeps; "" where a section shows none.
        shown = _shown_heading(_section(parts, s_index), title)
        if shown != heading:
            points.append(f"section: {shown or pt.NO_SECTION}")
            heading = shown
        mark = "- " if id(item) in found.listed else ""
        if isinstance(item, str):
            points.append(f"text: {mark}{item}")
            continue
        points.append(f"text: {mark}{item.statement}")
        # What the statement already says in full (its reason) is not said twice.
        points += [p for p in item.points if not p.startswith("text: ") and
                   pt.text_of(p).lower() not in item.statement.lower()]
    texts = [item.statement if isinstance(item, Candidate) else item for _, item in topic]
    # The problem a document solves is no statement of what it says (its design, its answer).
    authored = [t for (_, item), t in zip(topic, texts, strict=True)
                if id(item) not in found.quoted | found.problems | found.notices]
    statement = lead or next((t for t in authored if _stands_alone(t)), "") or \
        next((t for t in authored if _prose(t)), texts[0])
    points = [p for p in points if p not in (f"text: {statement}", f"text: - {statement}")]
    # A document is filed by what it states, not by one of its lines: its statements' bucket
    # files it when they are at least half of what it states. A how-to with one liking or one
    # count among its commands ("I prefer 301 and 302", "at least one mistake in there") is
    # no preference or convention of the author (issue 21: a til how-to filed as personal).
    stated = [c for _, c in topic if isinstance(c, Candidate)]
    buckets = {c.bucket for c in stated}
    found.out.append(Candidate(
        kind="topic", bucket=buckets.pop() if len(buckets) == 1 and 2 * len(stated) >= len(
            topic) else "wiki",
        name=name, statement=statement, points=points, paths=[note.path],
        weight=max([c.weight for c in members] or [_WEIGHT["finding"]]) + 0.5 * len(topic),
        order=(index, topic[0][0]), roles={note.path: "topic"}))
    found.out.sort(key=lambda c: c.order)


def _section(parts: list[sections.Section], s_index: int) -> sections.Section | None:
    """The section of this index; None for the order a statement made after the walk takes
    (a lesson drawn from a cause or a failure: 98, 99), which is no section of the note."""
    return parts[s_index] if 0 <= s_index < len(parts) else None


def _shown_heading(section: sections.Section | None, title: str) -> str:
    """The heading a node writes over the lines of a section: a document's own heading of
    level 2 or deeper, unless it is the note's title or a label the engine reads as a role
    (`## Symptom`, `## Fix`, `## 决定`, `## Steps`: a kind of section, one word or a short
    Chinese noun)."""
    if section is None:
        return ""
    heading = " ".join(section.heading.split()).strip()
    if section.level < 2 or not heading:
        return ""
    if heading.casefold().strip(" .:：") == " ".join(title.split()).casefold().strip(" .:："):
        return ""
    if tx.heading_kind(heading) != "neutral" and _labels(heading.strip(" #:：")):
        return ""
    return heading


def _read(found: _Note, before: tuple[int, int, int], piece: runs.Piece) -> None:
    """Keep what one statement gave for the cut into runs: its candidate, or the statement
    itself when it was a passing mention (it may be what a later statement refers back to);
    background, reasons and failure modes go to their decisions (_attach), chatter nowhere."""
    if len(found.out) > before[0]:
        piece.cand = found.out[-1]
    elif (len(found.attached), len(found.failures)) != before[1:] or _is_chatter(piece.text):
        return
    found.pieces.append(piece)


# A heading that dates a note (`standup mon 9 feb`, `周五`, `上海周会 2/11`) names no topic.
_DATED_RE = re.compile(r"\b(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*\b|\b\d{1,2}\s*(?:jan|feb|mar|"
                       r"apr|may|jun|jul|aug|sep|oct|nov|dec)|\d{1,2}[/.-]\d{1,2}|周[一二三四五"
                       r"六日天]|星期|\d+\s*月\s*\d+\s*日", re.I)


def _labels(heading: str) -> bool:
    """A heading that labels its part (one word, a short Chinese noun, `What I checked`)."""
    if tx.is_cjk_text(heading):
        return len(re.findall(f"[{tx.CJK}]", heading)) <= 3
    return len(heading.split()) == 1 or bool(re.match(r"what (?:i|we)\b", heading, re.I))


def _runs(found: _Note, note: Note, title: str, parts: list[sections.Section], index: int
          ) -> None:
    """One node per topic in a daily note (runs.py): the statements of a run become one unit,
    led by the first that can be read alone. The points of a list that a lead-in introduces
    (a review's, a talk's) are about what their section, or the note, is about: its heading
    names the unit when it names a topic (not a label, a kind of section or a date); they are
    what the note states about it, cue words or not (SPEC §8)."""
    gone: list[Candidate] = []
    loose: list[list[runs.Piece]] = []  # runs that gave no unit but state a value
    homes: list[tuple[runs.Piece, Candidate]] = []  # (the run's first piece, its unit)
    listings: list[tuple[list[runs.Piece], Candidate]] = []  # a lead-in and its list
    named = frozenset(w for n in people.named(title, note.body, note.path)
                      for w in decide.things(n))
    for run in runs.cut(found.pieces, named):
        stated = [p for p in run if p.kind in ("item", "num") and _long_enough(p.text)
                  and not _is_chatter(p.text)]
        if runs.is_listing(run) and len(stated) >= 2 and all(p.cand is None for p in run):
            first = stated[0]
            first.cand = Candidate(kind="finding", bucket="wiki", name=tx.title_from(first.text),
                                   statement=first.text, points=[], paths=[note.path],
                                   weight=_WEIGHT["finding"], order=(index, first.section),
                                   roles={note.path: "finding"})
            found.out.append(first.cand)
        if all(p.cand is None for p in run):
            if any(_states_value(p.text) for p in run):
                loose.append(run)
            continue
        kept = runs.unit_of(run)
        gone += [p.cand for p in run if p.cand is not None and p.cand is not kept]
        if kept is not None:
            homes.append((run[0], kept))
        if kept is not None and runs.is_listing(run) and \
                kept.kind not in ("decision", "preference", "fact"):
            listings.append((run, kept))
        if kept is not None and runs.is_listing(run):
            section = parts[run[0].section]
            heading = section.heading if section.level >= 2 else title
            name = tx.without_code_marks(tx.drop_parentheticals(tx.clean_statement(heading)))
            name = _GENERIC_TITLE_RE.sub("", name.strip(" #:：")).strip()
            if len(name.split()) > 10 or len(name) > 60:
                name = tx.title_from(name)
            if name and tx.heading_kind(heading) == "neutral" and not _labels(name) and \
                    not _DATED_RE.search(heading):
                kept.name = name
    found.out = [c for c in found.out if not any(c is g for g in gone)]
    _values(found, note, loose, homes, index)
    for run, listing in listings:
        # The options a decision chose among (`Options:` and its list, then `Decision: option
        # 4`) are part of that decision: one node per topic, the list read first, as written.
        chose = next((c for p, c in homes if p.section == run[0].section and
                      p.block > run[-1].block and c.kind == "decision"), None)
        if chose is None:
            continue
        lines = [f"text: {'- ' if p.kind in ('item', 'num') else ''}{p.text}" for p in run
                 if p.text not in chose.statement]
        texts = " ".join(p.text for p in run)
        lines += [q for q in listing.points if q.startswith("text: ") and
                  pt.text_of(q).removeprefix("- ") not in texts]
        at = next((i for i, q in enumerate(chose.points) if q.startswith("text: ")),
                  len(chose.points))
        chose.points[at:at] = lines
        found.out = [c for c in found.out if c is not listing]


def _states_value(text: str) -> bool:
    """A statement of a daily note that states a value (tx.states_value) of its own: not
    chatter, not a question, not a fragment."""
    return tx.states_value(text) and not _is_chatter(text) and _prose(text) and \
        not tx.asks(text) and not runs.unfinished(text)


def _short_value(text: str) -> bool:
    """A value stated in a few words that stands on its own (not leaning on its neighbour)."""
    plain = fenced.strip(text)
    if tx.is_cjk_text(plain):
        enough = len(re.findall(f"[{tx.CJK}]", plain)) >= MIN_CJK // 2
    else:
        enough = len(_MARKUP_RE.sub(" ", plain).split()) >= MIN_WORDS - 2
    return enough and not tx.leans_on_context(plain) and not runs.refers_back(plain)


def _values(found: _Note, note: Note, loose: list[list[runs.Piece]],
            homes: list[tuple[runs.Piece, Candidate]], index: int) -> None:
    """What a daily note states without a cue word is kept when it states a value (a number
    with its unit, a threshold, code; SPEC §8: every rule, threshold and decision a note
    states). A paragraph is part of its section's topic: it joins the unit drawn from that
    section (the nearest), among its first lines when it comes first; a list item, or a
    paragraph of a section that gave no unit, is a unit of its own (a meeting's points are its
    topics)."""
    held = " ".join(text for c in found.out
                    for text in [c.statement, *(pt.text_of(p) for p in c.points)])
    evidence: dict[int, int] = {}  # id of a decision -> where its next evidence line goes
    for run in loose:
        if all(p.text in held for p in run):
            continue  # already in a unit (a runbook's lead-in: `The handover happens ...`)
        if any(tx.asks(p.text) or tx.is_wish(p.text) for p in run):
            continue  # a paragraph that asks the room (`有人想喝奶茶吗，我来拼单`) states nothing
        first = run[0]
        near = [(abs(p.block - first.block), p.block > first.block, c) for p, c in homes
                if p.section == first.section and p.kind == "para"]
        if first.kind == "para" and near:
            _, later, home = min(near, key=lambda x: (x[0], x[1]))
            texts = [p.text for p in run if _prose(p.text) and not _is_chatter(p.text)
                     and (_long_enough(p.text) or fenced.has_block(p.text))]
            new = [f"text: {t}" for t in texts if t not in home.statement]
            if later:
                # It comes before the unit's lead: it reads first of the unit's lines (a
                # `context:` point would be one of two a node shows).
                at = next((i for i, q in enumerate(home.points) if q.startswith("text: ")),
                          len(home.points))
                home.points[at:at] = new
            else:
                home.points += new
            continue
        chose = _drawn_from(run, loose, homes) if first.kind in ("item", "num") else None
        if chose is not None:
            # What the note measured, then decided from it (`- cl_waiting max 4, p99 290 ms.`
            # ... `Decision: the pool goes back down to 60`): the values are the decision's
            # evidence, read first, in the note's order (one node per topic).
            if id(chose) not in evidence:
                evidence[id(chose)] = next((i for i, q in enumerate(chose.points)
                                            if q.startswith("text: ")), len(chose.points))
            at = evidence[id(chose)]
            new = [f"text: - {p.text}" for p in run if p.text not in chose.statement
                   and _prose(p.text) and not _is_chatter(p.text)]
            chose.points[at:at] = new
            evidence[id(chose)] = at + len(new)
            continue
        # A value needs few words to state (`灰度还是 5% → 25% → 100%，不变`).
        lead = next((p for p in run if _states_value(p.text) and _short_value(p.text)), None)
        if lead is None:
            continue
        lead.cand = Candidate(kind="finding", bucket="wiki", name=tx.title_from(lead.text),
                              statement=lead.text, points=[], paths=[note.path],
                              weight=_WEIGHT["finding"], order=(index, lead.section),
                              roles={note.path: "finding"})
        kept = runs.unit_of(run)
        if kept is not None:
            found.out.append(kept)
            homes.append((first, kept))
    found.out.sort(key=lambda c: c.order)


def _drawn_from(run: list[runs.Piece], loose: list[list[runs.Piece]],
                homes: list[tuple[runs.Piece, Candidate]]) -> Candidate | None:
    """The decision a list of bare values was drawn from: the first paragraph of the same
    section after the list that decides, when nothing between them states a claim of its own
    (every list item between is a bare value too). A list with claims among its items is a
    meeting's points, each its own topic; values after a decision are not what it chose from."""
    last = run[-1]
    later = sorted(((p, c) for p, c in homes if p.section == last.section and
                    p.block > last.block), key=lambda x: x[0].block)
    if not later:
        return None
    p, chose = later[0]
    if p.kind != "para" or chose.kind != "decision":
        return None
    # Between the list and the decision, only bare values (loose list items) or nothing.
    blocks = {q.block for r in loose for q in r if q.kind in ("item", "num")}
    between = [q for r in loose for q in r if q.section == last.section and
               last.block < q.block < p.block]
    if not all(q.block in blocks for q in between):
        return None
    # ... and the decision speaks of something the list measures (`3 pgbouncers at 80 each` /
    # `60 per pgbouncer instance`); who decided (its parenthesis) is no such thing.
    listed = " ".join(q.text for q in [*run, *between])
    decided = tx.drop_parentheticals(chose.statement)
    return chose if decide.things(listed) & decide.things(decided) else None


def _join(runbook: Candidate, item: Candidate | str) -> None:
    """A statement or line joins a runbook as a point, unless the runbook already says it (its
    lead paragraph, the lines after its steps)."""
    said = " ".join([runbook.statement, *(pt.text_of(p) for p in runbook.points)])
    text = item.statement if isinstance(item, Candidate) else item
    if text not in said:
        runbook.points.append(f"point: {text}")
    if isinstance(item, Candidate):
        runbook.points += [p for p in item.points if pt.text_of(p) not in said]


def _stands_alone(text: str) -> bool:
    """A statement that says something on its own: long enough, no chatter, not leaning on
    its neighbour, and not a lead-in to what follows (`... do this:` before a block)."""
    first = tx.sentences(text, clauses=False)[0] if text.strip() else ""
    plain = fenced.strip(first).rstrip()
    return _prose(text) and _long_enough(plain) and not tx.leans_on_context(plain) and \
        not _is_chatter(plain) and not plain.endswith((":", "："))


def _states(text: str) -> bool:
    """A sentence of a document that states something itself: a value, or a claim that stands
    alone and is neither the author's story nor a question (`Maybe they removed that
    feature?`)."""
    return (_states_value(text) or (_stands_alone(text) and not tx.is_narration(text))) and \
        not tx.asks(tx.URL_RE.sub(" ", text)) and not _CONTINUES_RE.match(text)


# A sentence that goes on from the one before it (`... which didn't work, because ...`, `and
# then it failed`): it opens on an ellipsis or, in lower case, on a word that joins clauses.
_CONTINUES_RE = re.compile(r"^\s*(?:\.{3}|…|(?:which|and|but|or|so|then|that|because|while|"
                           r"whereas|although|though|since|until|unless)\b)")


def _unquoted(text: str) -> str:
    """A quote's words without its quote marks (`> **Update:** ...`, its lines joined)."""
    if not text.lstrip().startswith(">"):
        return text
    return re.sub(r"(?:^|\s)>(?=\s|$)", " ", text).strip()


def _notice(raw: str, section: sections.Section, first: bool) -> bool:
    """A paragraph of a document that is its author's notice about it: labelled (`Update:`,
    `Note:`, `Warning:`) or retracting (tx.is_notice), quoted or not; any paragraph of a
    section whose heading opens a notice (`## Update`, `## I was wrong`); or a quote that opens
    the note, before its body (`> The OOB flow described in this document has been scheduled
    for deprecation by Google.`), unless it asks. A quote holding a code block is read as
    before (its code keeps it)."""
    quote = raw.lstrip().startswith(">")
    if raw.lstrip().startswith(("!", "<")) or (quote and fenced.has_block(raw)):
        return False
    text = tx.clean_statement(_unquoted(raw))
    if not text or tx.asks(text):
        return False
    if tx.is_notice(text) or (section.level >= 2 and tx.is_notice_heading(section.heading)):
        return True
    return quote and first and _long_enough(text)


def _aside(text: str) -> bool:
    """A quote (`> ...`, someone else's words or a later update) or an image."""
    return text.lstrip().startswith((">", "!", "<"))


def _prose(text: str) -> bool:
    """Words of the author's own: not a bare block or code span, not an aside."""
    return not _aside(text) and bool(_CODE_RE.sub("", fenced.strip(text)).strip(" .:`"))


def _opening(parts: list[sections.Section]) -> str:
    """A document's opening statement: its first paragraph, when it says something on its own
    (long enough, not leaning on what follows, no wish), before any second-level heading."""
    for section in parts:
        if section.level >= 2:
            return ""
        for k, raw in sections.blocks(section.lines):
            text = tx.clean_statement(raw)
            if k == "para" and (_aside(raw) or tx.is_notice(text)):
                continue  # a quote, an update notice, an image: not the author's opening
            if k != "para" or not text or _label(text):
                return ""
            if _stands_alone(text):
                return text
            # A whole sentence that introduces the note's code ("This recipe runs a script to
            # update a README, then commits it only if it has changed:") says what the note is
            # about; a short one ("Run this:", "Here's how:") does not.
            lead_in = fenced.strip(text).rstrip()
            if lead_in.endswith((":", "：")) and _stands_alone(lead_in[:-1].rstrip() + ".") and \
                    _long_enough(lead_in) and len(tx.sentences(lead_in, clauses=False)) == 1:
                return text
            return ""
    return ""


def _statement(found: _Note, note: Note, piece: str, kind: str, index: int, s_index: int) -> None:
    if kind in ("fix", "investigation"):
        # A labelled line (`Fix: ...`): a step if the note is a debugging log, else read as
        # any other line (`Solution:` before a how-to's code).
        found.steps.append((kind, piece))
    if kind in _ATTACHED or (kind in ("neutral", "lesson") and _FOLLOWUP_RE.match(piece)):
        if kind == "symptom" and not note.path.startswith(DAILY) and _long_enough(piece):
            # The problem a how-to solves (`Problem: this contains both single AND double
            # quotes`, then `Solution: ...`) is what it states, in its place; a debugging log's
            # symptom opens its runbook (debuglog.is_debug_log, decided after the walk; a log
            # reads no topic).
            _said(found, s_index, piece)
            found.problems.add(id(piece))
        if _long_enough(piece) or _FOLLOWUP_RE.match(piece):
            found.attached.append(("followup" if _FOLLOWUP_RE.match(piece) else kind, piece))
        return
    if kind == "lesson":
        found.attached.append(("lesson", piece))  # the lesson line, if this is a debugging log
    if kind == "outcome":
        found.attached.append(("outcome", piece))
        return
    skind = _statement_kind(piece, kind)
    if skind is None and found.block == "num" and note.path.startswith(DAILY) and \
            _long_enough(piece) and not _is_chatter(piece) and _stands_alone(piece):
        # An item the author numbered is a point they make (a meeting's agenda item and what
        # came of it), cue words or not (SPEC §8).
        skind = "finding"
    if kind == "failure" and skind in (None, "lesson") and _long_enough(piece):
        found.failures.append(piece)
        return
    document = not note.path.startswith(DAILY)
    introduced = document and (found.introduced or (
        found.introduces and fenced.strip(piece).rstrip().endswith((":", "："))))
    if skind is None and not _is_chatter(piece) and (
            fenced.has_block(piece) or "`" in fenced.strip(piece) or introduced or (
                document and (found.block in ("item", "num") or (
                    found.block == "para" and (0 < found.intro <= INTRO or _states(piece)))) and
                _long_enough(piece))):
        # A line with code is a how-to's substance; what a document's introduction says is
        # what it is about; an item of a document's list, and a sentence of its own anywhere
        # in it, is one of the things it states (a consequence, an option, a caveat: `Google
        # Calendar polls for updates to the feed less than once every 24 hours`), cue words or
        # not. The author's story stays in the note (write._taught).
        _said(found, s_index, piece)
    if skind is None:
        if _is_attendance(piece):
            found.seen.add("attendance")
        elif _is_chatter(piece):
            found.seen.add("chatter")
        elif piece.rstrip().endswith(("?", "？")):
            found.seen.add("questions")
        else:
            found.seen.add("mentions")
        return
    why = tx.reason(piece) if skind in ("preference", "rule", "decision") else None
    if skind == "preference" and kind == "decision" and tx.is_cjk_text(piece):
        # "导出改为异步后要显示进度百分比，用户不喜欢只看到转圈": a decision whose last
        # clause gives the reason (a preference of its users), not a preference of its own.
        clauses = [c for c in re.split(r"[，,；;]", piece.rstrip("。")) if c.strip()]
        if len(clauses) > 1 and tx.has_cue(clauses[-1], tx.PREFERENCE_CUES) and \
                not any(tx.has_cue(c, tx.PREFERENCE_CUES) for c in clauses[:-1]):
            skind, why = "decision", clauses[-1].strip()
            _add(found, s_index, Candidate(
                kind=skind, bucket=_bucket(skind, piece),
                name=tx.title_from("，".join(clauses[:-1])), statement=piece,
                points=[f"why: {why}"], paths=[note.path], weight=_WEIGHT[skind],
                order=(index, s_index), roles={note.path: skind}))
            return
    _add(found, s_index, Candidate(
        kind=skind, bucket=_bucket(skind, piece), name=tx.title_from(piece),
        statement=piece, points=[f"why: {why}"] if why else [], paths=[note.path],
        weight=_WEIGHT[skind], order=(index, s_index), roles={note.path: skind}))


def _add(found: _Note, s_index: int, cand: Candidate) -> None:
    found.out.append(cand)
    _said(found, s_index, cand)


def _said(found: _Note, s_index: int, item: Candidate | str) -> None:
    found.said.append((s_index, item))
    if found.block in ("item", "num"):
        found.listed.add(id(item))
    if found.block == "aside":
        found.quoted.add(id(item))


def _person_fact(found: _Note, note: Note, piece: str, index: int, s_index: int) -> None:
    """What a note says about a teammate's work, role, plans or places ("Priya is moving to
    the Berlin office in May"): a fact about a person, bucket personal."""
    found.out.append(Candidate(kind="fact", bucket="personal", name=tx.title_from(piece),
                               statement=piece, points=[], paths=[note.path],
                               weight=_WEIGHT["preference"], order=(index, s_index),
                               roles={note.path: "fact"}))


def _attach(found: _Note, note: Note, index: int) -> None:
    """Context, reasons and follow-ups join the decision or rule of the note they are about:
    the one they share the most words with, else the first."""
    targets = [c for c in found.out if c.kind in ("decision", "rule", "preference", "lesson")]
    if not targets:
        # Without a decision to explain, a lesson or a cause is worth keeping on its own.
        for kind, text in found.attached:
            if kind == "cause" and _long_enough(text):
                found.out.append(Candidate(kind="lesson", bucket="wiki", name=tx.title_from(text),
                                           statement=text, points=[], paths=[note.path],
                                           weight=_WEIGHT["lesson"], order=(index, 98),
                                           roles={note.path: "lesson"}))
        return
    for kind, text in found.attached:
        if kind == "lesson":
            continue
        # Background explains decisions and rules; a person's preference only takes what is
        # said about it (its follow-up, its reason).
        fitting = [c for c in targets if kind in ("followup", "why") or c.kind != "preference"]
        if kind in ("followup", "why"):
            fitting = [c for c in fitting if c.kind != "lesson"] or fitting
        if not fitting:
            continue
        words = decide.bag(text).counts.keys()
        best = max(fitting, key=lambda c: (len(words & decide.bag(c.text()).counts.keys()),
                                           -fitting.index(c)))
        role = {"symptom": "context", "cause": "context"}.get(kind, kind)
        best.points.append(f"{role}: {text}")


def _reason(found: _Note, note: Note) -> str:
    if not note.body.strip():
        return "an empty note"
    # Passing mentions ("see you tomorrow") do not change what kind of note it was.
    seen = found.seen - {"mentions"} or found.seen
    if seen == {"mentions"}:
        return "passing mentions only: no decision, rule, preference, procedure or fact " \
               "about a person"
    if seen <= {"attendance"} and seen:
        return "an attendance list only"
    if seen <= {"attendance", "chatter"} and "chatter" in seen:
        return "greetings, thanks and small talk only" + \
            (", and an attendance list" if "attendance" in seen else "")
    if seen <= {"attendance", "chatter", "tasks"} and "tasks" in seen:
        return "one-off tasks and attendance only"
    if seen <= {"questions", "chatter"} and "questions" in seen:
        return "questions only, nothing settled"
    if found.attached and not found.out:
        return "background and follow-ups only, no decision they belong to"
    return "no decision, rule, preference, procedure or fact about a person"
