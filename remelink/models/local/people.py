"""The people a note names, and pronoun subjects resolved to them (SPEC §11: a node's subject is
never a bare pronoun).

"# 1:1 with Priya" followed by "- She prefers async status updates" is about Priya: the node is
"Priya prefers async status updates", never "She prefers ...". A note names people in its title
("1:1 with Priya", "Dashboard review with Alice"), its attendance line ("Attendees: Priya,
Marco"; "参会：王芳、李雷") and as the subjects of its sentences ("Marco prefers ..."). A
sentence that opens with he / she / 他 / 她 is about the person named last before it, else the
person the title names.
"""

from __future__ import annotations

import re

from remelink.models.local import text as tx

_TITLE_RE = re.compile(r"\b(?:with|w/|1:1|1-1|1on1|and|for)\s+([A-Z][a-z]+|[\u4e00-\u9fff]{2,3})"
                       r"(?:\s+and\s+([A-Z][a-z]+))?")
# A file named for a 1:1 (`1on1-olu.md`, `1on1-陈静.md`, `one-on-one_dana.md`).
_FILE_RE = re.compile(r"(?:1on1|1-1|one-on-one)[-_ ]+([a-z]+|[\u4e00-\u9fff]{2,3})(?![a-z])",
                      re.I)
# Spaces within the line only: `^\s*` under re.M crossed newlines, so a note of blank lines
# was scanned from every line to its end (quadratic).
_ATTEND_RE = re.compile(r"^[ \t]*(?:attendees|participants|present|speaker|presenter|参会|出席|"
                        r"与会|分享人|主讲人?)[ \t]*[:：]"
                        r"[ \t]*(.+)$", re.I | re.M)
# A person's name, then a verb (or an adverb and a verb: "Priya also wants"); "Storage cost
# is ..." is no one.
_SUBJECT_RE = re.compile(r"(?:^|[.!?]\s+|^[-*+]\s+)([A-Z][a-z]+)\s+(?:[a-z]+ly\s+|(?:also|still|"
                         r"now|again|just|already|never|always|often|then|too|even|once)\s+)?"
                         r"(?:prefers|likes|"
                         r"wants|asked|asks|said|says|thinks|will|is|was|has|needs|insisted|"
                         r"suggested|agreed|proposed|owns|leads|hates|dislikes|again)\b", re.M)
# A Chinese person is found as the two or three characters before a verb only a person does
# ("陈静希望…", "王芳说…"). One home for the three readers of that shape: who opens a statement
# (here), who speaks in a restatement (decide._speakers: and the words of restating), who a
# node is about for its tags (tags.candidates: and the words of a person's moves and plans).
ZH_PERSON_VERBS = ("希望", "喜欢", "更喜欢", "偏好", "说", "认为", "提出", "要求")
ZH_NAME_LEAD = r"(?:^|[，。；：、\s（(“\"])"  # a clause or a quotation opens before the name


def zh_person_before(verbs: tuple[str, ...], *, lead: str = ZH_NAME_LEAD,
                     nicknames: bool = False) -> re.Pattern[str]:
    """The pattern of a Chinese name (group 1) after `lead` and before one of `verbs`;
    `nicknames` admits 小/老/阿 and one character (`小王`)."""
    name = r"[\u4e00-\u9fff]{2,3}?"
    if nicknames:
        name = r"[小老阿][\u4e00-\u9fff]|" + name
    return re.compile(f"{lead}({name})(?={'|'.join(verbs)})")


_ZH_SUBJECT_RE = zh_person_before((*ZH_PERSON_VERBS, "负责", "不喜欢", "习惯"),
                                  lead=r"(?:^|[。！？\n]|[-*+]\s*)")
_LABEL_RE = re.compile(r"^([A-Za-z][\w -]{0,29}?):\s+(\S.*)$", re.S)
_PRONOUN_RE = re.compile(r"^(She|He)\b(?:'s)?", re.I)
# A statement with no subject that opens with what only a person does ("Wants a second SRE",
# "希望…") is the person's the note is about, as a pronoun would be.
_VERB_FIRST_RE = re.compile(r"^(Wants|Prefers|Likes|Dislikes|Hates|Thinks|Needs|Insists|"
                            r"Suggested|Proposed|Asked for)\b")
_ZH_VERB_FIRST_RE = re.compile(r"^(?:希望|更喜欢|喜欢|不喜欢|偏好|认为|建议|要求)")
_ZH_PRONOUN_RE = re.compile(r"^(他|她)(?!们)")
_ZH_INNER_PRONOUN_RE = re.compile(r"(他|她)(?!们)")
_NOT_NAMES = frozenset(tx._COMMON_CAPS) | {"Debugging", "Platform", "Weekly", "Team", "Sync",
                                           "Meeting", "Notes", "Retro", "Review", "Call"}


def _clean(name: str) -> str | None:
    name = name.strip().strip("*_").strip()
    if not name or name in _NOT_NAMES:
        return None
    if tx.is_cjk_text(name):
        return name if tx.is_cjk_name(name) else None
    return name if re.fullmatch(r"[A-Z][a-z]+(?: [A-Z][a-z]+)?", name) else None


def named(title: str, body: str, path: str = "") -> list[str]:
    """The people the note names, in order of first appearance: its title (a note without a
    heading is often titled by its first line, "1:1 w/ Felix"), its file's name
    (`1on1-olu.md`), then its attendance lines."""
    out: list[str] = []

    def add(name: str | None) -> None:
        if name and name not in out:
            out.append(name)

    first = next((line.strip() for line in body.splitlines() if line.strip()), "")
    for line in dict.fromkeys((title, first[:80])):
        for m in _TITLE_RE.finditer(line):
            add(_clean(m.group(1)))
            if m.group(2):
                add(_clean(m.group(2)))
    stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    for m in _FILE_RE.finditer(stem):
        word = m.group(1)
        add(_clean(word if tx.is_cjk_text(word) else word.capitalize()))
    for m in _ATTEND_RE.finditer(body):
        for part in re.split(r"[,，、;；]|\band\b", m.group(1)):
            add(_clean(part.strip().rstrip(".。")))
    return out


def subject_of(text: str) -> str | None:
    """The person a sentence opens with ("Marco prefers ..."), if any."""
    m = _SUBJECT_RE.search(text)
    if m:
        return _clean(m.group(1))
    m = _ZH_SUBJECT_RE.search(text)
    return _clean(m.group(1)) if m else None


def resolve(text: str, person: str | None) -> str:
    """`She prefers X` -> `Priya prefers X` (and `她希望` -> `王芳希望`) when a person is known."""
    if not person:
        return text
    # "Promo: he's going for principal": a short label before the statement; its subject is
    # still the person's.
    label = _LABEL_RE.match(text)
    if label and not tx.is_cjk_text(text) and len(label.group(1).split()) <= 3:
        rest = resolve(label.group(2), person)
        return text if rest == label.group(2) else f"{label.group(1)}: {rest}"
    if tx.is_cjk_text(text):
        if _ZH_VERB_FIRST_RE.match(text):
            return person + text  # "希望发布提前一天" in a 1:1 with 王芳
        if _ZH_PRONOUN_RE.match(text):
            return _ZH_PRONOUN_RE.sub(person, text, count=1)
        # A topic put first ("recon 重构她很想做，…"): the first clause's pronoun is still the
        # statement's subject when no one is named before it.
        m = _ZH_INNER_PRONOUN_RE.search(re.split(r"[，,。；;！!？?：:]", text, maxsplit=1)[0])
        if m and not re.search(rf"[A-Z][a-z]+|{re.escape(person)}", text[:m.start()]) and \
                subject_of(text[:m.start()]) is None:
            return text[:m.start()] + person + text[m.end():]
        return text
    m = _VERB_FIRST_RE.match(text)
    if m:
        return f"{person} {m.group(1).lower()}{text[m.end():]}"  # "Wants a second SRE ..."
    m = _PRONOUN_RE.match(text)
    if not m:
        return text
    rest = text[m.end():]
    if m.group(0).lower().endswith("'s"):
        return f"{person} is{rest}"  # "She's moving to Berlin"
    short = re.match(r"['’](ll|d|ve)\b", rest)
    if short:  # "She'll enforce it" -> "Ines will enforce it"
        word = {"ll": "will", "d": "would", "ve": "has"}[short.group(1)]
        return f"{person} {word}{rest[short.end():]}"
    return f"{person}{rest}"


_SPEAKER_RE = re.compile(r"^([A-Z][a-z]+|[\u4e00-\u9fff]{2,3})\s*[:：]\s")
_NOT_SPEAKERS = frozenset({"Me", "We", "Note", "Update", "Todo", "Reason", "Why", "Status"})


def resolve_sentences(text: str, person: str | None) -> str:
    """`resolve` for every sentence of an English list item, not only its first: "Me: asked
    about leading the recon rewrite. She's open to it" -> "... Dana is open to it". A sentence
    that names its own subject hands the pronouns after it to that person."""
    if not person or tx.is_cjk_text(text):
        return text
    parts = tx.sentences(text, clauses=False)
    if len(parts) < 2 or not any(_PRONOUN_RE.match(p) for p in parts[1:]):
        return text
    speaker = _SPEAKER_RE.match(parts[0])
    if speaker and _clean(speaker.group(1)) and speaker.group(1) not in _NOT_SPEAKERS:
        person = speaker.group(1)  # "刘洋: month-start peak today. He's on it"
    out = []
    for i, part in enumerate(parts):
        subject = subject_of(part)
        out.append(resolve(part, person) if i else part)
        person = subject or person
    return " ".join(out)


_PERSON_FACT_RE = re.compile(
    r"^\S+(?: \S+)?\s+(?:is|was|will be)?\s*(?:moving to|moved to|relocating to|joining|joined|"
    r"leaving|left|will lead|leads|will own|owns|took over|takes over|is responsible for|"
    r"will be responsible for|is on leave|starts at|started at|is taking over|reports to|"
    r"was promoted|got promoted|is back from|returns from)\b", re.I)
_PERSON_FACT_ZH_RE = re.compile(r"^[\u4e00-\u9fff]{2,3}(?:下个月|下周|明年|今年|从\S{1,8})?"
                                r"(?:开始)?(?:负责|加入|离职|调到|搬到|接手|调岗|休假|升任|转岗)")


def about_person(text: str, person: str | None) -> bool:
    """A sentence that tells where a named person works, what they take on or where they go."""
    if not person or not text.startswith(person):
        return False
    pattern = _PERSON_FACT_ZH_RE if tx.is_cjk_text(text) else _PERSON_FACT_RE
    return bool(pattern.match(text))
