"""Conversation transcripts (SPEC §8, §11): a daily note whose body is speaker turns is read as
a conversation, and what each person tells about themselves becomes facts under their name.

Recognised turn layouts, with or without a turn id or a clock, as list items or quotes too:
`**Name**: text`, `**Name:** text`, `Name: text`, `Name (D8:13): text`, `[10:02] Name: text`,
`10:02 Name: text`, `<Name> text`, `小王：文本`. A note is a transcript when at least four lines
are turns, two speakers have two turns each, and turns are most of its prose lines: a meeting
note with a `Decision:` line and an `Alice: ...` remark is not one.

Per turn, the sentences that are facts about the speaker (speech.py) are restated in the third
person under the speaker's name, with relative dates resolved against the note's day (when.py):
one fact per turn, its first sentence the statement, the rest its points. A turn that answers
the other person's question without a fact of its own ("It's a mix of drama and romance!")
adds to the speaker's fact just before it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date

from remelink.models.local import retell, speech, titles, when
from remelink.models.local import text as tx

MIN_TURNS = 4
SUBJECT_REACH = 8  # the speaker's name within the first words: the fact is about them
ANSWER_REACH = 3  # a bare answer joins the speaker's fact of at most this many turns before

_NAME = r"[A-Z][\w'.-]*(?: [A-Z][\w'.-]*){0,2}"
_NAME_ZH = rf"[{tx.CJK}]{{1,4}}"
_ID = r"[A-Za-z]*\d+(?:[:.]\d+)*"
_CLOCK = r"\[?\(?\d{1,2}:\d{2}(?::\d{2})?(?:\s?[ap]\.?m\.?)?\]?\)?"
_STAMP = rf"(?:\[\d{{4}}-\d{{2}}-\d{{2}}[ T]{_CLOCK.strip('[]')}\]|{_CLOCK})"
_TURN_RES = (
    re.compile(rf"^\*\*(?P<name>{_NAME}|{_NAME_ZH})\*\*\s*(?:\((?P<id1>{_ID})\))?\s*[:：]\s*"
               r"(?P<text>.+)$"),
    re.compile(rf"^\*\*(?P<name>{_NAME}|{_NAME_ZH})\s*[:：]\*\*\s*(?P<text>.+)$"),
    re.compile(rf"^(?:(?P<clock>{_STAMP})\s+)?<(?P<name>{_NAME})>\s+(?P<text>.+)$"),
    re.compile(rf"^(?:(?P<clock>{_STAMP})\s+)?(?:\[?(?P<id2>D\d+:\d+)\]?\s+)?(?P<name>{_NAME}|{_NAME_ZH})"
               rf"\s*(?:[(\[](?P<id1>{_ID})[)\]])?\s*[:：]\s*(?P<text>\S.*)$"),
)
# Labels written like a speaker ("Decision: ...", "Why: ...") are never speakers.
_LABELS = tx.word_set("""
decision decisions note notes why how what when where who context background summary result
results outcome fix fixes cause causes symptom symptoms lesson lessons takeaway takeaways step
steps action actions todo owner owners status date time update updates agenda attendees
participants present q a question answer problem solution issue issues impact risk risks
next follow follow-up followup goal goals rule rules tip tips example examples warning caution
important reason reasons idea ideas plan plans pros cons input inputs output outputs error
errors log logs timeline root fixed resolved workaround see also source sources ref link links
tldr tl;dr nb ps edit edited location place venue topic topics subject re fyi eta deadline
priority severity env environment version build commit branch pr ticket bug feature
""")
_LABELS_ZH = tx.word_set("决定 结论 原因 背景 总结 结果 问题 方案 步骤 注意 备注 时间 地点 "
                         "参会 出席 议程 待办 行动项 风险 教训 经验 复盘 现象 "
                         "修复 影响 目标 计划 说明 补充")
_PHOTO_RE = re.compile(r"\s*[\[(](?:photo|image|picture|attachment|图片|照片)[:：]\s*"
                       r"([^\])]*)[\])]", re.I)


@dataclass(frozen=True)
class Turn:
    speaker: str
    text: str
    turn_id: str = ""
    photo: str = ""


@dataclass
class Fact:
    speaker: str
    statement: str
    points: list[str] = field(default_factory=list)
    turn_ids: list[str] = field(default_factory=list)
    lang: str = "en"
    core: str = ""  # the first thing the speaker told about themselves: what the title says

    def __post_init__(self) -> None:
        self.core = self.core or self.statement


def _match(line: str) -> tuple[str, str, str] | None:
    stripped = re.sub(r"^\s*(?:[-*+]\s+|>\s*)", "", line).strip()
    for pattern in _TURN_RES:
        m = pattern.match(stripped)
        if not m:
            continue
        name = m.group("name").strip()
        if name.lower() in _LABELS or name in _LABELS_ZH or name.lower().rstrip("s") in _LABELS:
            return None
        if re.fullmatch(_NAME_ZH, name) and len(name) > 4:
            return None
        groups = m.groupdict()
        clock = (groups.get("clock") or "").strip("[]() ")
        turn_id = groups.get("id1") or groups.get("id2") or clock
        return name, turn_id, m.group("text").strip()
    return None


def parse(body: str) -> list[Turn] | None:
    """The turns of a transcript, or None when the body is not one."""
    turns: list[Turn] = []
    prose = 0
    for line in body.replace("\r\n", "\n").split("\n"):
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", "---", "```")):
            continue
        prose += 1
        found = _match(line)
        if found is None:
            if turns and not re.match(r"^\s*(?:[-*+]|\d+[.)])\s", line):
                last = turns[-1]  # a continuation line of the turn above
                turns[-1] = Turn(last.speaker, f"{last.text} {stripped}", last.turn_id)
            continue
        name, turn_id, text = found
        turns.append(Turn(name, text, turn_id))
    if len(turns) < MIN_TURNS or len(turns) * 3 < prose * 2:
        return None
    counts: dict[str, int] = {}
    for t in turns:
        counts[t.speaker] = counts.get(t.speaker, 0) + 1
    if sum(1 for n in counts.values() if n >= 2) < 2:
        return None
    out = []
    for t in turns:
        photo = _PHOTO_RE.search(t.text)
        text = _PHOTO_RE.sub("", t.text).strip()
        out.append(Turn(t.speaker, text, t.turn_id, photo.group(1).strip() if photo else ""))
    return out


def _sentences(text: str) -> list[str]:
    # "Woo! I finally finished...": exclamations end sentences too, and a dash aside stays.
    parts = []
    for piece in tx.sentences(text, clauses=False):
        parts += [p for p in re.split(r"(?<=[!])\s+", piece) if p.strip()]
    return parts


def facts(turns: list[Turn], day: date | None) -> list[Fact]:
    """The facts each speaker tells about themselves, in order. A turn's first fact is the
    statement; its further facts, and the details around them ("It's about loss, identity
    and connection.", a photo it shares) are its points."""
    speakers = tuple(dict.fromkeys(t.speaker for t in turns))
    out: list[Fact] = []
    last_fact: dict[str, tuple[int, Fact]] = {}
    waiting: dict[str, tuple[list[str], list[str], int]] = {}
    for index, turn in enumerate(turns):
        others = [s for s in speakers if s != turn.speaker]
        other = others[0] if len(others) == 1 else ""
        lang = "zh" if tx.is_cjk_text(turn.text) else "en"
        told: list[str] = []
        details: list[str] = []
        for sentence in _sentences(turn.text):
            stated = speech.fact_sentence(sentence, speakers)
            if stated is not None:
                said = _told(stated, turn.speaker, other, day, lang, turn.text)
                if _about(said, turn.speaker, lang):
                    told.append(said)
                    continue
            detail = speech.detail_sentence(sentence, speakers)
            if detail is not None:
                details.append(_told(detail, turn.speaker, other, day, lang, turn.text))
        if turn.photo and (told or details):
            details.append(speech.photo_sentence(turn.photo, turn.speaker, lang))
        if told:
            ahead = waiting.pop(turn.speaker, None)
            lead, lead_ids = (ahead[0], ahead[1]) if ahead and index - ahead[2] <= ANSWER_REACH \
                else ([], [])
            new = Fact(turn.speaker, " ".join([*lead, told[0]]), [*told[1:], *details],
                       [*lead_ids, *([turn.turn_id] if turn.turn_id else [])], lang,
                       core=told[0])
            out.append(new)
            last_fact[turn.speaker] = (index, new)
        elif details and turn.speaker in last_fact and \
                index - last_fact[turn.speaker][0] <= ANSWER_REACH:
            # More about what the speaker just told (often the answer to a question on it).
            _, earlier = last_fact[turn.speaker]
            earlier.points += details
            if turn.turn_id:
                earlier.turn_ids.append(turn.turn_id)
        elif details:
            # News before the speaker's own part in it ("Acme escalated yesterday: ..." then
            # "I traced it to ..."): kept for their next fact.
            waiting[turn.speaker] = (details, [turn.turn_id] if turn.turn_id else [], index)
    return out


def _about(statement: str, speaker: str, lang: str) -> bool:
    """The statement is about the speaker: it names them near its start, as its subject or
    owner ("Joanna finished...", "Joanna's sister..."), not in passing ("Moments like these
    make Joanna appreciate it")."""
    if lang == "zh":
        return speaker in statement[:12]
    words = titles.without_dates(statement).split()[:SUBJECT_REACH]
    return any(w.startswith(speaker) for w in words)


def _told(sentence: str, speaker: str, other: str, day: date | None, lang: str,
          context: str) -> str:
    text = when.resolve(sentence, day, lang)
    if speech.about_self(text):
        text = retell.third_person(text, speaker, other, context=context)
    text = text.strip()
    text = text[:1].upper() + text[1:]
    if lang == "zh":
        return text if text[-1:] in "。！？" else text + "。"
    text = re.sub(r"!+$", ".", text)
    return text if text[-1:] in ".?" else text + "."
