"""Status lines of a workstream (issue 21, "one node per topic"; SPEC §7.1).

What a project stands at is said across many daily notes (a sync, a standup, a weekly status, a
retro), one line at a time. Each such line is one entry of the project's status, not a node of
its own: a line said under a *workstream key* (the section heading it sits under, the bold
label that opens it, or a lead-in `X:` that is neither a speaker nor a genre label) that reports
progress becomes a `status` unit named by the key. Units of one key merge into one (extract.py),
and the engine keeps one node per key (frontmatter `project`), with a dated `Status:` list that
each later line joins in date order (engine.py).

The key comes only from the note's structure, never from a word of the line. A line that is a
decision, a rule, a preference or a fact about a person stays what it is (its own node), and so
does a debugging log (a runbook) and everything in a resource document.

Language: a status line joins its project's node whatever its language. The line is quoted as
written, dated; the node's own words (its `Status:` label, its description) are in the
language of the unit that created it.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from remelink.models.local import fenced, people, sections
from remelink.models.local import points as pt
from remelink.models.local import text as tx
from remelink.models.local.candidate import Candidate
from remelink.vault.notes import Note

KIND = "status"
DAILY = "daily/"
PROJECT_KEY = "project"  # the node's frontmatter key holding its workstream key

# Words saying a line reports where work stands: started, live, flipped, merged, done, planned
# for a date, blocked (English whole words; Chinese as written).
PROGRESS_CUES = (
    "started", "starts", "starting", "live", "shipped", "ships", "deployed", "deploy",
    "deploying", "rolled out", "rollout", "flipped", "flip", "flipping", "merged", "done",
    "finished", "completed", "fixed", "in progress", "planned", "on track", "blocked",
    "delayed", "slipped", "migrated", "launched", "released", "in prod", "in production",
    "in staging", "accepted", "target", "eta",
    "上线", "完成", "进行中", "开始", "切换", "切完", "已切", "合并", "修复", "计划", "预计",
    "延期", "阻塞", "灰度", "部署", "推进",
)
# A label that names the kind of a line or of a meeting's part, not a workstream: `Status
# updates`, `Other`, `What went well`, `进展`, `其他`.
GENRE_CUES = (
    "status", "update", "updates", "progress", "news", "notes", "note", "misc", "other",
    "others", "summary", "highlights", "lowlights", "blockers", "risks", "week", "weekly",
    "today", "yesterday", "tomorrow", "standup", "sync", "retro", "went well", "didn't",
    "did not", "reminders", "reminder", "people", "team", "fyi", "announcements", "questions",
    "进展", "其他", "本周", "上周", "下周", "近况", "汇报", "周报", "动态", "备注", "杂项",
    "今天", "明天", "人员", "公告", "问题",
)
MAX_KEY_WORDS = 5
MAX_KEY_CHARS = 40
MIN_ENTRY_WORDS = 2
MIN_ENTRY_CJK = 4
MIN_NOTES = 2  # a key is a project when this many notes of a run report on it

_HEADING_RE = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE_RE = re.compile(r"^\s*(?:```|~~~)")
_ITEM_RE = re.compile(r"^\s*(?:[-*+]\s+(?:\[[ xX]\]\s+)?|\d+[.)]\s+)")
# `**Async postings** (Tomasz): ...`: a bold label, its owner in brackets, a colon.
_BOLD_LABEL_RE = re.compile(
    r"^\*\*(?P<label>[^*\n]{2,60}?)\*\*\s*(?:[(（][^)）\n]{1,40}[)）])?\s*[:：]\s*(?P<rest>.*)$")
# `async postings: 3 producers flipped`: a short phrase and a colon (no code, no clause).
_LEAD_IN_RE = re.compile(
    r"^(?P<label>[^:：`,，;；。.!?！？*\[\]()（）]{2,40}?)\s*(?::\s+|：\s*)(?P<rest>\S.*)$")
_SPEAKER_RE = re.compile(r"^(?:[A-Z][a-z]+|[\u4e00-\u9fff]{2,3})$")


def normal_key(key: str) -> str:
    """The form two keys are compared in: case, hyphens and spacing aside."""
    return re.sub(r"[\s_-]+", " ", key.casefold()).strip()


def _key(label: str, names: Sequence[str], *, plain: bool) -> str:
    """`label` as a workstream key, or '' when it is none: a short name, not a genre label,
    not a kind of statement (`Agreed`, `New rule`), not a person (a speaker `Tomasz:`,
    `刘洋：`, `Dana repeated`). A plain lead-in of one capitalised word is a speaker's."""
    key = tx.clean_statement(label.replace("**", "")).strip(" :：-*_#")
    if not key or len(key) > MAX_KEY_CHARS or re.search(r"[.,;!?。，；！？`\[\]|]", key):
        return ""
    cjk = tx.is_cjk_text(key)
    if (not cjk and len(key.split()) > MAX_KEY_WORDS) or re.fullmatch(r"[\d\W_]+", key):
        return ""
    if tx.heading_kind(key) != "neutral" or tx.has_word_cue(key, GENRE_CUES) or \
            tx.has_cue(key, tx.DECISION_CUES + tx.RULE_CUES + tx.PREFERENCE_CUES) or \
            tx.REPORTED_RE.search(key):
        return ""
    if key in names or (plain and _SPEAKER_RE.match(key)) or (cjk and tx.is_cjk_name(key)):
        return ""
    if any(n in key.split() for n in names if " " not in n):
        return ""  # `Dana's list`, `Ines status`: said of a person
    return key


def _binds(sentence: str) -> bool:
    """The sentence decides, rules or prefers something, asks or wishes: by the cue words of
    a statement of that kind (`agreed`, `from now on`, `must`, `new rule`, `wants`), not by a
    noun that names rules (`rules doc in progress` reports progress on a document)."""
    plain = fenced.strip(sentence)
    return tx.has_cue(plain, tx.DECISION_CUES + tx.RULE_CUES + tx.PREFERENCE_CUES) or \
        tx.asks(plain) or tx.is_wish(plain)


def _leads_in(sentence: str) -> bool:
    """The sentence ends in a colon: it introduces what follows it (a list, a snippet), it
    reports nothing itself (`Found this on the live index:`)."""
    return sentence.rstrip().rstrip(".。").rstrip().endswith((":", "："))


def is_status(sentence: str) -> bool:
    """A sentence reporting where work stands (a progress cue), and no decision, rule,
    preference, question or wish, and no lead-in."""
    return not _binds(sentence) and not _leads_in(sentence) and \
        tx.has_word_cue(fenced.strip(sentence), PROGRESS_CUES)


def _entry(text: str) -> str:
    """The status a line reports: its sentences up to the first that decides, rules or prefers
    something (what follows that is its reason) or leads into what follows it, when one of
    them reports progress."""
    kept: list[str] = []
    for sentence in tx.sentences(text, clauses=False):
        if _binds(sentence) or _leads_in(sentence):
            break
        kept.append(sentence.strip())
    if not any(is_status(s) for s in kept):
        return ""
    entry = " ".join(kept).strip()
    if tx.is_cjk_text(entry):
        enough = len(re.findall(f"[{tx.CJK}]", entry)) >= MIN_ENTRY_CJK
    else:
        enough = len(entry.split()) >= MIN_ENTRY_WORDS
    return entry if enough else ""


def keyed_lines(note: Note, title: str = "") -> list[tuple[str, str, str]]:
    """(key, entry, line) for each line of a daily note that reports the status of the
    workstream it is said under; none for a resource document."""
    if not note.path.startswith(DAILY):
        return []
    names = people.named(title or sections.title_of(note, {}), note.body, note.path)
    out: list[tuple[str, str, str]] = []
    section = ""  # the key of the heading the line is under
    block = ""    # the key of the labelled paragraph (or bare label) the line continues
    fence = False
    for raw in note.body.splitlines():
        if _FENCE_RE.match(raw):
            fence = not fence
            continue
        if fence or raw.lstrip().startswith("|"):
            continue
        heading = _HEADING_RE.match(raw)
        if heading:
            section = _key(heading.group(2), names, plain=False) \
                if len(heading.group(1)) >= 2 else ""
            block = ""
            continue
        if not raw.strip():
            block = ""
            continue
        item = bool(_ITEM_RE.match(raw))
        text = _ITEM_RE.sub("", raw).strip()
        key = ""
        bold = _BOLD_LABEL_RE.match(text)
        lead = None if bold else _LEAD_IN_RE.match(tx.clean_statement(text))
        if bold:
            key = _key(bold.group("label"), names, plain=False)
            if key:
                text = bold.group("rest")
                if not item:
                    block = key
        elif lead:
            key = _key(lead.group("label"), names, plain=True)
            if key:
                text = lead.group("rest")
        elif text.rstrip().endswith((":", "：")) and not item:
            block = _key(text.rstrip(" :："), names, plain=True)
            continue
        key = key or block or section
        if not key:
            continue
        entry = _entry(tx.clean_statement(text))
        if entry:
            out.append((key, entry, tx.clean_statement(_ITEM_RE.sub("", raw))))
    return out


def take(note: Note, cands: list[Candidate], index: int, title: str = "",
         keys: Collection[str] | None = None) -> list[Candidate]:
    """The note's status units, taken out of the candidates that held their lines: a
    candidate that is the line (a finding of that line alone) is dropped, a point that is the
    line is taken off its unit. A line some candidate states as a decision, rule, preference
    or fact, or as a finding with other lines, stays that candidate's and is no status. With
    `keys` (normal keys), only the lines of those keys are taken; the others stay as they are
    (see `projects`)."""
    out: list[Candidate] = []
    for n, (key, entry, line) in enumerate(keyed_lines(note, title)):
        if keys is not None and normal_key(key) not in keys:
            continue
        holders = [c for c in cands if c.kind not in ("procedure", "topic", "debug")
                   and _is_line(c.statement, line, entry)]
        if any(c.kind != "finding" or any(
                pt.text_of(p) and not _is_line(pt.text_of(p), line, entry) for p in c.points)
               for c in holders):
            continue  # a statement of another kind, or a finding that holds more lines
        for c in holders:
            cands.remove(c)
        for c in cands:
            c.points = [p for p in c.points if not _is_line(pt.parse(p).text, line, entry)]
        out.append(Candidate(kind=KIND, bucket="wiki", name=key, statement=entry, points=[],
                             paths=[note.path], weight=1.0, order=(index, 500 + n),
                             roles={note.path: "finding"}, subject=normal_key(key)))
    return out


def projects(taken: Sequence[Sequence[Candidate]], known: Collection[str] = ()) -> set[str]:
    """The keys that are projects: a workstream is what several notes report on. A key is one
    when the status lines of at least two notes of the run are said under it (`taken`: each
    note's status units, as `take` gives them with no `keys`), or when a node keeping its
    status is in the vault already (`known`: normal keys). A line an earlier run held for a
    later note (units.HELD_KIND) is one of `taken`: a nightly run's note and an earlier night's
    make a project. A key of one note alone (a retro's problem heading, a `TIL:` lead-in) is
    no project: its line stays where it was, and is held (extract.extract)."""
    notes: dict[str, set[str]] = {}
    for units in taken:
        for c in units:
            notes.setdefault(c.subject, set()).update(c.paths)
    return {k for k, paths in notes.items() if len(paths) >= MIN_NOTES or k in known}


def _is_line(text: str, line: str, entry: str) -> bool:
    """`text` (a candidate's statement or point) is the keyed line or holds its entry."""
    t = tx.clean_statement(text).casefold()
    return len(t) >= 8 and (t in line.casefold() or entry.casefold() in t)


# -- writing -------------------------------------------------------------------------------------
LABEL = {"en": "Status:", "zh": "进展："}
_DATE_RE = re.compile(r"(?<!\d)(\d{4}-\d{2}-\d{2})(?!\d)")
_LINE_RE = re.compile(r"^- (\d{4}-\d{2}-\d{2})[:：] ?(.*)$")
# A project node's status list: its label line, then its `- ` lines (group 1).
_LIST_RE = re.compile(rf"^(?:{re.escape(LABEL['en'])}|{re.escape(LABEL['zh'])})[ \t]*\n"
                      r"((?:- .*\n?)+)", re.M)


def title(key: str, lang: str) -> tuple[str, str]:
    """A project node's name and description: what it keeps (the workstream's status), not
    the bare key (a heading of a note is no node's name)."""
    if lang == "zh":
        gap = "" if tx.is_cjk_text(key) else " "
        return f"{key}{gap}进展", f"{key}{gap}的进展，按日期记录。"
    return f"{key} status", f"The status of {key}, dated, as the notes report it."


def latest(body: str, key: str, lang: str) -> str:
    """A project node's description once its list holds entries: where the project stands, its
    latest entry (`Async postings, as of 2026-03-25: 3 producers flipped, 0 lost postings.`);
    what a reader of a status wants first. '' without a dated entry."""
    m = _LIST_RE.search(body)
    found = [d for d in (_LINE_RE.match(x) for x in m.group(1).split("\n")) if d] if m else []
    if not found:
        return ""
    last = max(found, key=lambda d: d.group(1))  # the last line of the latest date
    last = [d for d in found if d.group(1) == last.group(1)][-1]
    text = _EDITED_RE.split(last.group(2))[-1].strip()
    text = re.sub(r"\[\[[^\]|]*\|?([^\]]*)\]\]", r"\1", text)
    if lang == "zh":
        gap = "" if tx.is_cjk_text(key) else " "
        out = f"{key}{gap}（截至 {last.group(1)}）：{text}"
    else:
        out = f"{key}, as of {last.group(1)}: {text}"
    return out if len(out) <= 240 else out[:237].rsplit(" ", 1)[0] + "..."


def dated(paths: Sequence[str], summary: str, points: Sequence[str], today: str
          ) -> list[tuple[str, str]]:
    """The unit's status entries as (date, line), in date order: each dated by the note it is
    from (its path's date, as a correction is; else today)."""
    def day(source: int) -> str:
        path = paths[source] if source < len(paths) else ""
        m = _DATE_RE.search(path)
        return m.group(1) if m else today

    entries = [(day(0), summary)] if summary else []
    entries += [(day(p.source), p.text) for p in pt.parse_all(points)
                if p.role == KIND and p.text]
    return sorted(entries, key=lambda e: e[0])  # stable: a note's lines keep their order


def _line(day: str, text: str, lang: str) -> str:
    text = tx.clean_statement(text).strip()
    if text and text[-1] not in ".!?。！？":
        text += "。" if lang == "zh" or tx.is_cjk_text(text) else "."
    return f"- {day}: {text}"


def body_list(entries: Sequence[tuple[str, str]], lang: str) -> str:
    """A new project node's status list."""
    return LABEL[lang] + "\n" + "\n".join(_line(d, t, lang) for d, t in entries)


def add_entries(body: str, entries: Sequence[tuple[str, str]], lang: str) -> str | None:
    """The body with each entry not in it yet inserted into its status list in date order
    (after the lines of the same date); None when the body has no status list."""
    m = _LIST_RE.search(body)
    if m is None:
        return None
    lines = m.group(1).rstrip("\n").split("\n")
    for day, text in entries:
        new = _line(day, text, lang)
        said = tx.clean_statement(new.split(": ", 1)[1]).casefold()
        if any(tx.clean_statement(held.split(": ", 1)[-1]).casefold() == said and
               held.startswith(f"- {day}") for held in lines):
            continue  # the node has this line of this note already
        at = len(lines)
        for i, held in enumerate(lines):
            d = _LINE_RE.match(held)
            if d and d.group(1) > day:
                at = i
                break
        lines.insert(at, new)
    tail = "\n" if m.group(1).endswith("\n") else ""
    return body[:m.start(1)] + "\n".join(lines) + tail + body[m.end(1):]


EDITED = {"en": " Edited in [[{path}]], it now says: {text}",
          "zh": "[[{path}]] 修改后写的是：{text}"}
_EDITED_RE = re.compile(r"Edited in \[\[[^\]]+\]\], it now says: |\[\[[^\]]+\]\] 修改后写的是：")


def revise_entries(body: str, entries: Sequence[tuple[str, str]], lang: str, path: str,
                   old_statement: str) -> str | None:
    """The body with the entries of an edited note (`path`): a line of the note's date that
    the note no longer says gets what it says now appended (`... Edited in [[path]], it now
    says: ...`: the entry is updated where it stands, what it said is kept, SPEC §7.2); a line
    the note now says and the list lacks, with no such line left, is inserted as `add_entries`
    does. A line of that date is the note's when the node cites no other note of that date,
    else only when it says `old_statement`. None when the body has no status list."""
    m = _LIST_RE.search(body)
    found = _DATE_RE.search(path)
    if m is None or found is None:
        return add_entries(body, entries, lang)
    day = found.group(1)
    lines = m.group(1).rstrip("\n").split("\n")

    def said(text: str) -> str:
        return tx.clean_statement(text).rstrip(".。").strip().casefold()

    def now(line: str) -> str:  # what a line of the list says now (after its last edit)
        return said(_EDITED_RE.split(line.split(": ", 1)[-1])[-1])

    new = [t for d, t in entries if d == day]
    fresh = [t for t in new if not any(said(t) == now(held) or said(t) in said(held)
                                       for held in lines if held.startswith(f"- {day}"))]
    others = {p for p in re.findall(r"\[\[(daily/[^\]|#]+)", body) if day in p} - {path}
    stale = [i for i, held in enumerate(lines) if held.startswith(f"- {day}") and
             now(held) not in {said(t) for t in new} and
             (not others or now(held) == said(old_statement))]
    for i, text in zip(stale, list(fresh), strict=False):
        clean = _line(day, text, lang).split(": ", 1)[1]
        lines[i] += EDITED[lang].format(path=path, text=clean)
        fresh.remove(text)
    tail = "\n" if m.group(1).endswith("\n") else ""
    body = body[:m.start(1)] + "\n".join(lines) + tail + body[m.end(1):]
    return add_entries(body, [(day, t) for t in fresh], lang) if fresh else body
