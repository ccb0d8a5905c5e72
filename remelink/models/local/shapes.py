"""Title shapes and the template lines built on them, grammatical for every shape (SPEC §7.1).

A runbook's title is a verb phrase (`Queue a long export`), a gerund (`Debugging checkout Redis
timeouts`), a noun phrase (`On-call handover checklist`) or a sentence (`Exports run as queued
jobs`); "Use this when you need to ..." fits only the first. Each shape gets its own wording,
in English and Chinese.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from remelink.models.local import fenced, titles
from remelink.models.local import points as pt
from remelink.models.local import text as tx

KIND_BY_BUCKET = {"procedure": "procedure", "personal": "preference", "wiki": "concept"}

_VERBS = tx.word_set("""
add apply archive audit back backfill bootstrap build bump calibrate cancel change check clean
clear close collect compact configure connect convert copy create cut debug decommission delete
deploy diagnose disable downgrade drain drop enable encrypt enroll escalate estimate evaluate
export extend fail fix flush fork freeze generate grant hand handle import index install
investigate invite issue keep kill label launch list load lock log merge migrate mirror monitor
mount move notify offboard onboard open pause patch pin plan prepare profile promote provision
prune publish purge queue rebase rebuild reboot recover redeploy refresh register reindex release
reload remove rename renew repair replace replay report request reset resize restart restore
resume retire retry revert review revoke roll rollback rotate run scale schedule seed send set
setup ship shrink sign snapshot split start stop submit switch sync tag test throttle trace
train transfer triage trim tune turn unblock unlock update upgrade upload validate verify
warm watch wipe write
""")
_FINITE = tx.FINITE_RE


def shape(title: str) -> str:
    """`verb`, `gerund`, `noun` or `sentence` (English); CJK titles are `noun` or `verb`."""
    text = tx.clean_statement(title)
    if tx.is_cjk_text(text):
        nouns = r"(?:清单|流程|规范|指南|手册|步骤|方案|检查表|模板)$"
        return "noun" if re.search(nouns, text) else "verb"
    first = text.split(" ", 1)[0].lower() if text else ""
    if first in _VERBS:
        return "verb"
    if first.endswith("ing") and len(first) > 4:
        return "gerund"
    if _FINITE.search(text):
        return "sentence"
    return "noun"


def when_line(title: str, lang: str) -> str:
    """When to use a runbook, from its title alone (used when the notes give no trigger)."""
    text = tx.clean_statement(title)
    kind = shape(text)
    if lang == "zh":
        return f"适用场景：{text}。" if kind == "noun" else f"适用场景：需要{text}时。"
    low = tx.lower_first(text)
    if kind == "verb":
        return f"Use this when you need to {low}."
    if kind == "gerund":
        return f"Use this when {low}."
    if kind == "sentence":
        return f"Use this when {low}."
    return f"Use this as the {low}." if re.search(
        r"\b(?:checklist|runbook|playbook|procedure|process|guide|steps|recipe|routine)$",
        low, re.I) else f"Use this for {low}."


def procedure_description(title: str, steps: int, lang: str, *, debug: bool = False,
                          cause: str = "") -> str:
    """One line for a runbook: what it does and in how many steps; for a debugging log what
    caused it, from the notes ("Checkout Redis timeouts: KEYS blocks Redis while it walks the
    whole keyspace; fixed in 2 steps.")."""
    text = tx.clean_statement(title)
    why = tx.title_from(cause, max_words=16, cut_words=14, max_cjk=30) if cause else ""
    if lang == "zh":
        if debug:
            return f"{text}：{why}；修复共 {steps} 步。" if why else f"{text}：修复共 {steps} 步。"
        return f"{text}的操作步骤（{steps} 步）。"
    kind = shape(text)
    count = f"{steps} step{'s' if steps != 1 else ''}"
    if debug:
        return f"{text}: {tx.lower_first(why)}; fixed in {count}." if why else \
            f"{text}: fixed in {count}."
    if kind == "verb":
        return f"How to {tx.lower_first(text)}, in {count}."
    return f"{text}, in {count}."


DESCRIPTION_CHARS = 240


def told_description(name: str, summary: str, points: Sequence[str], lang: str) -> str:
    """A topic a person came back to, in one line: the topic and what each account said
    ("Nate's turtles: has had them for 3 years; took them to the beach in Tampa")."""
    said = pt.said_of(points)
    speaker = next(iter(said.values())).speaker if said else ""
    facts = [summary] + [p.text for p in pt.parse_all(points)
                         if p.role == "point" and p.source and p.text]
    heads: list[str] = []
    for fact in facts:
        title = titles.fact_title(fact, speaker)
        if speaker and title.startswith(speaker + " "):
            title = title[len(speaker) + 1:]
        if title and title.lower() not in (t.lower() for t in heads):
            heads.append(title if lang == "zh" else tx.lower_first(title))
    sep = "；" if lang == "zh" else "; "
    head = f"{name}：" if lang == "zh" else f"{name}: "
    out = head
    for title in heads:
        piece = title if out == head else sep + title
        if len(out) + len(piece) > DESCRIPTION_CHARS:
            break
        out += piece
    return out.rstrip() + ("。" if lang == "zh" else ".")


# The words after a claim that only point at what follows it (`..., for example:`, `like so:`).
# A verb of looking takes its `like this` along: `JSON that looks like this:` -> `JSON`, not
# `JSON that looks`.
_POINTING_RE = re.compile(
    r"(?:\s+(?:(?:that|which)\s+)?(?:looks?|looked|seems?|sounds?)\s+like\s+(?:this|so)|"
    r"[,，]?\s*(?:for example|for instance|e\.g\.|like so|like this|as follows|"
    r"here it is)|"
    # `... can lead to an XSS hole, thanks to the following:`
    r"[,，]?\s+(?:(?:thanks to|due to|because of|as (?:in|shown in)|with|using|in)\s+)?"
    r"the following(?:\s+[a-z]+)?|[,，]\s*(?:例如|比如|如下))\s*[:：]$", re.I)


# A field of a document rather than a claim: a short label before a colon (`Non-goals: ...`,
# `Status: accepted`, `Sources: ...`, `分享人：...`), the label having no verb of its own.
_FIELD_RE = re.compile(r"^(?P<label>[^:：`\n]{1,30}?)\s*(?::(?=\s)|：)\s*(?P<rest>\S.*)$")


def _field(line: str) -> tuple[bool, str]:
    """(whether `line` is a labelled field, the claim after its label if that is a clause of
    its own): `Rule of thumb: every service gets a dashboard` -> the rule; `Non-goals:
    cross-account ordering, ...` and `分享人：陈静，...` -> no claim."""
    m = _FIELD_RE.match(line)
    if not m:
        return False, ""
    label, rest = m.group("label").strip(), m.group("rest").strip()
    if tx.is_cjk_name(label) and len(rest.split()) >= 3:
        return True, tx.capitalised(rest)  # a speaker (`刘洋: month-start peak, ...`): her claim
    if tx.is_cjk_text(label):
        return len(re.findall(f"[{tx.CJK}]", label)) <= 4 and not re.search(r"[A-Za-z]", label), ""
    if len(label.split()) > 3 or _FINITE.search(label):
        return False, ""  # `Export is async: POST ...`: a sentence, not a label
    claim = rest if _FINITE.search(rest) and len(rest.split()) >= 4 else ""
    return True, (tx.capitalised(claim) if claim else "")


# What a description cannot say: a sentence that points at what is around it in the note (`I
# noticed the following.`, `... includes this snippet.`, `That's the database file, ...`,
# `... tell you to do this.`, `values like this.`, `That confirms it is cached.`, `It includes
# full markdown support.`) or says only where the tip came from (`Tip
# via Mark on Twitter.`). A description is read alone, in a list of search hits. (A sentence
# that opens with its demonstrative, `This recipe commits the file ...`, says what it is about.)
_POINTS_AT_RE = re.compile(
    r"\b(?:the following|as follows|that last|see (?:above|below)|the above|"
    r"(?:do|did|doing|try|tried|run|figure|figured)\s+(?:this|that)(?:\s+out)?)\b|"
    r"\s(?:this|that|these)\s+(?:snippet|trick|tip|recipe|line|lines|command|commands|"
    r"script|code|example|bit|test|tests|function|pattern|query|error|problem|bug|output|"
    r"result|thing|things)\b|"
    # ... or anything named with `this`/`these` inside the sentence (`Drop a variant of this
    # decorator onto your failing test`); `this issue`, `this tweet` are links in TIL notes,
    # `this morning` a time
    r"\s(?:this|these)\s+(?!issues?\b|(?:pull )?requests?\b|post\b|tweet\b|"
    r"(?:morning|afternoon|evening|week|month|year|quarter|sprint|days?)\b)[a-z]+|"
    r"\b(?:like (?:this|so)|above|below|here)\W*$|"
    r"\bthis\s*(?:[,;:!?]|\.?$)|\bthis\s+(?:one|for|in|to|with|by|on|at|from|into|out|up|"
    r"about|helps?|works?)\b|"
    r"^(?:that's|that is|this is|here's|here is|here are|these are|those are)\b|"
    r"^(?:this|that|it)\s+(?:[a-z]+s|[a-z]+ed|was|has|had)\b(?<!\bis)|"
    # `The fix was to ...`: an answer to a problem the sentence does not name.
    r"^the\s+(?:fix|solution|answer|workaround|culprit|trick|result|output)\s+(?:was|is|"
    r"turned out)\b", re.I)
# A step of what the note does (`First, checkout the cpython repo.`, `Start by outputting
# ...`) or a question it asks (`What's with the 953 failed requests?`): no description of it.
_STEP_OR_QUESTION_RE = re.compile(r"^(?:first|then|next|finally|start by|begin by)\b|\?\W*$",
                                  re.I)
_PROVENANCE_RE = re.compile(r"^(?:(?:hat[- ])?tip|h/t|via|thanks to|credit to|found via|"
                            r"spotted via)\b", re.I)


def stands_alone(sentence: str) -> bool:
    """Whether an English sentence can be read without the note around it (see above)."""
    plain = tx.without_code_marks(sentence).strip()
    if not plain or tx.is_cjk_text(plain):
        return True
    return not (_POINTS_AT_RE.search(plain) or _PROVENANCE_RE.match(plain) or
                _STEP_OR_QUESTION_RE.search(plain))


def _fragment(line: str) -> bool:
    """A piece of a list's sentence (`a table payout_outbox(...) written in the same
    transaction as the payout row;`): it goes on in the next item."""
    return line.rstrip().endswith((";", ",", "；", "，"))


# How far into a note a description looks: the opening's sentences, then its first lines. A
# note's point is stated near its top or not at all; further down, a line may be another
# note's, merged into the node.
_OPENING_SENTENCES = 4
# The author in a description's sentence, anywhere in it (`When I deploy ...`, `Every time I
# paste ...`, `For datasette-seaborn I wanted ...`): the story of the note, not its point. A
# description speaks in the node's voice.
_FIRST_PERSON_RE = re.compile(r"(?<![\w'’])(?:I(?:'m|'ve|'d|'ll|’m|’ve|’d|’ll)?|[Mm]y|[Mm]e|"
                              r"[Mm]ine|[Mm]yself)(?![\w'’/.-])|我(?![们司方])")


# What the author learned is the claim (`While exploring null bytes I learned that the hexdump
# command has a confusing default output`, `I figured out a minimal pattern for ...`).
_LEARNED_RE = re.compile(r"\bI(?:'ve| have)?\s+(?:just\s+|recently\s+)?(?:learned|learnt|found out|"
                         r"discovered|realised|realized|figured out)\s+(?:that\s+)?(?P<claim>.+)$")
# A how-to told as a pointer at its code: `Here's how to use VALUES with a CTE ...:`, `To
# calculate the size of a database file, run this:` -> `How to ...`.
_HOW_TO_RE = re.compile(r"^(?:(?:here's|here is|this is)\s+how\s+(?:to|you can)\s+(?P<how>[^:]+)|"
                        r"to\s+(?P<how2>[^,:]+),\s*(?:run|use|do|try|add|call)\s+(?:this|the "
                        r"following)[^:,]*):$", re.I)
# The author's aside after a claim (`Fly has a GraphQL API ... - I found it while browsing`,
# `... can be used to extract items - but I couldn't find documentation`).
_STORY_TAIL_RE = re.compile(r"\s*(?:\s[-–—]\s|[,;]\s*but\s|\sbut\s)\s*(?:I|my|[Ww]e)\b.*$")


# A sentence after the opening's first that opens on a word pointing back at the one before it
# (`They were both started in the background`, `In the meantime, here are notes on ...`).
_LEANS_RE = re.compile(r"(?:they|them|it|its|it's|this|that|these|those|he|she|his|her|"
                       r"in the meantime|however|but|so|also|and|then|instead|otherwise)\b",
                       re.I)


def _without_story(sentence: str) -> str:
    """A sentence without the author's part around its claim (see above): the claim of what
    was learned, the sentence without an aside in brackets or a trailing clause told in the
    first person. Unchanged when that leaves too little to say anything."""
    end = sentence[-1:] if sentence[-1:] in ".!?:：" else "."
    m = _HOW_TO_RE.match(sentence)
    how = m and (m.group("how") or m.group("how2"))
    if how and len(how.split()) >= 4:
        return f"How to {how.strip()}."
    m = _LEARNED_RE.search(sentence)
    if m and len(m.group("claim").split()) >= 5 and not _LEANS_RE.match(m.group("claim")) and \
            not re.search(r"\b(?:these|those)\b", m.group("claim"), re.I):
        return tx.capitalised(m.group("claim").rstrip(" .!?:：")) + end
    plain = re.sub(r"\s*\([^()]*\b(?:I|my|me)\b[^()]*\)", "", sentence)
    plain = _STORY_TAIL_RE.sub("", plain.rstrip(" .!?:：")).rstrip(" ,;-–—")
    if plain != sentence.rstrip(" .!?:：") and len(plain.split()) >= 5:
        return plain + end
    return sentence


def _opening_sentences(summary: str, lines: Sequence[str]) -> list[tuple[str, str]]:
    """(sentence, its whole line) of a node's opening: the summary's first sentences (a
    labelled field's own clause: `Rule of thumb: X` says X); the first sentence of each of the
    document's lines only when the summary is a field with no claim (`Status: accepted`)."""
    text = tx.clean_statement(summary)
    field, claim = _field(text)
    out: list[tuple[str, str]] = []
    if not field or claim:
        said: list[str] = []
        rest = claim or text
        while rest and len(said) < _OPENING_SENTENCES:  # never cut inside brackets or code
            said.append(tx.first_sentence(rest))
            rest = rest[len(said[-1]):].strip()
        out = [(s, claim or text) for s in said]
        if not _fragment(text) and not fenced.strip(text).rstrip().endswith((":", "：")):
            return out
    for line in lines:
        line = tx.clean_statement(line).removeprefix("- ")
        out.append((tx.first_sentence(line), line))
    return out


def _gist(summary: str, lines: Sequence[str]) -> str:
    """What a description says (issue 21: what the node holds in one sentence, never its first
    line for being first): the first sentence of the node's opening (the summary's first
    sentences; the document's lines when the summary is only a label, a list fragment or a
    lead-in to code) that states what the note teaches: a claim, a how-to, a definition.
    Skipped: the author's story (tx.is_narration, or the author anywhere in the sentence: `I
    was thinking about documentation SEO.`, `For a friend's wedding I needed to ...`), a later
    sentence opening on a word that points back (`It's pretty easy to ...`), a labelled field
    (`Status: accepted`; a label's own clause is the claim: `Rule of thumb: X` says X), a
    fragment of a list item, and a lead-in with no claim of its own (`Here's how you can use
    it:`; `The awk program adds a prefix, for example:` says its claim without `for
    example`). What the author learned is a claim (_without_story). A sentence that cannot be
    read alone (`Tip via Mark on Twitter.`, `I noticed the following.`) ends the search: what
    follows it leans on it in turn. Nothing when no sentence states anything: the description
    names the topic instead. (Until issue 21q the summary's first sentence was kept even when
    narrated, because the later LINES were worse, `It ended up getting over 200 replies`; the
    search still reads no further than the opening and stops at a sentence leaning on it.)"""
    for n, (first, line) in enumerate(_opening_sentences(summary, lines)):
        if _fragment(line) or (n and _LEANS_RE.match(first)):
            continue
        field, claim = _field(line) if first == tx.first_sentence(line) else (False, "")
        if field and not claim:
            continue
        first = _without_story(fenced.strip(tx.first_sentence(claim or first)).strip())
        story = tx.is_narration(first) or (_FIRST_PERSON_RE.search(
            tx.without_code_marks(first)) is not None and not tx.is_own_rule(first))
        if not first or (story and first.endswith((":", "："))):
            continue
        if first.endswith((":", "：")):
            # A claim that introduces its code (`This recipe commits the file only if it
            # changed:`) is one; a bare pointer (`Here's how you can use it:`) is not.
            claim = _POINTING_RE.sub("", first).rstrip(" :：")
            short = len(claim) < 8 if tx.is_cjk_text(claim) else len(claim.split()) < 5
            if not claim or short or tx.leans_on_context(claim):
                continue
            first = claim + ("。" if tx.is_cjk_text(claim) else ".")
        if not stands_alone(first):
            # A sentence that leans on what is around it ends the search: what follows it in
            # the note leans on it in turn (`I noticed the following. The tool keeps ...`).
            return ""
        if not story:
            return first
    return _after_label(summary)


# A word of a title that names what the node is about (`nullglob`, `pip-tools`, `requirements`),
# not a word any sentence may hold.
_TITLE_WORD_RE = re.compile(r"[A-Za-z][\w.+-]*[A-Za-z0-9]|[A-Za-z]")
_TITLE_STOP = tx.word_set(
    "a an the and or of in on at to for with from by into onto using use via how what why when "
    "is are be it its your you my our their this that these those one two some any all out up "
    "do does get gets getting make makes making run running")


def _topic_words(name: str) -> set[str]:
    words = {w.lower().strip(".") for w in _TITLE_WORD_RE.findall(tx.without_code_marks(name))}
    return {w for w in words if len(w) > 2 and w not in _TITLE_STOP}


# How far down a note a description may look when its opening is only the author's story.
# A sentence there that says how things are holds a finite verb in the present (`is`, `can`,
# `provides`); a step (`Check out the tag`), a list line's fragment (`Two laptop power
# supplies`) or the story of the past (`Hitting Ctrl+C quit the script`) holds none.
_PRESENT_RE = re.compile(r"\b(?:is|are|isn't|aren't|has|have|hasn't|haven't|can|can't|cannot|"
                         r"will|won't|does|doesn't|do|don't|must|should|may|means|provides|"
                         r"returns|lets|allows|makes|creates|runs|works|uses|supports|defines|"
                         r"sets|writes|reads|takes|gets|accepts|ensures|treats|handles|contains|"
                         r"needs|fails|breaks|shows|adds|removes|starts|stops)\b", re.I)
# A sentence whose first words lean on the one before it (`Or pipe ...`, `Note that it ...`,
# `The next step ...`), or that has no subject (`Uses GeoDjango, so needs GDAL`, `Already has
# a Dockerfile`: a list line about something named elsewhere).
_BODY_LEAD_RE = re.compile(rf"^(?:{tx.NARRATION_LEAD}|or|one|another|note|the (?:next|other|"
                           r"above|same|first|second|last))\b", re.I)
_ADVERB_LEAD_RE = re.compile(r"^(?:(?:already|still|just|\w+ly)\s+)?", re.I)
# A sentence pointing at its place in the note (`The key trick here is ...`, `The --install
# line there ...`; an existential `there is` points nowhere), leaning on what came before it
# (`You can also send ...`), or telling the author's party's story (`... gets us that`).
_PLACED_RE = re.compile(r"\bhere\b|(?<=\w)\s+there\b(?!\s+(?:is|are|was|were)\b)|"
                        r"\b(?:also|us|we|our)\b", re.I)


def _says_how_things_are(sentence: str) -> bool:
    """Whether a sentence from further down a note can stand for it (see _body_gist)."""
    plain = tx.without_code_marks(sentence)
    lead = _ADVERB_LEAD_RE.match(plain)
    if _LEANS_RE.match(plain) or _BODY_LEAD_RE.match(plain) or _PLACED_RE.search(plain) or \
            plain.split(" ", 1)[0].lower() in _VERBS or \
            _PRESENT_RE.match(plain, lead.end() if lead else 0) or \
            not _PRESENT_RE.search(tx.drop_parentheticals(plain)):
        return False
    return not (plain.count('"') % 2 or sentence.endswith((":", "：", "?")) or
                len(plain.split()) < 5 or tx.is_narration(sentence) or
                _FIRST_PERSON_RE.search(plain) or not stands_alone(sentence))


def _body_gist(summary: str, lines: Sequence[str], name: str) -> str:
    """When the opening states nothing but the author's story (`For apple-notes-to-sqlite I
    needed to ...`), the first sentence further down the note that says how things are
    (_says_how_things_are) about the node's topic, a word of its title: `The solution, for
    bash, is to set the nullglob shell option.` A sentence leaning on what is around it, told by
    the author, a step or a pointer at code is passed over, not an end of the search: the body
    is the note's own account, read past its asides. English only: Chinese notes state their
    point in their opening."""
    topic = _topic_words(name)
    if not topic or tx.is_cjk_text(name):
        return ""
    said = {s for s, _ in _opening_sentences(summary, ())}
    for line in lines:
        text = tx.clean_statement(line).removeprefix("- ")
        if not text or text.startswith(("#", ">", "|", "```", "~~~", "    ")) or \
                _fragment(text) or _field(text)[0]:
            continue
        rest = text
        for _ in range(_OPENING_SENTENCES):
            first = tx.first_sentence(rest)
            rest = rest[len(first):].strip()
            words = {w.lower().strip(".") for w in
                     _TITLE_WORD_RE.findall(tx.without_code_marks(first))}
            if first not in said and topic & words and _says_how_things_are(first):
                return first
            if not rest:
                break
    return ""


def _after_label(summary: str) -> str:
    """The labelled line's first sentence, label included, when no claim was read after its
    label (`提醒：GPU 新规下周一生效，...`, `Non-goals: cross-account ordering, ...`) and
    nothing in the opening states more: what the line says, as the descriptions before issue
    21q kept it; nothing when what follows the label is short, a story or leans on the note."""
    text = tx.clean_statement(summary)
    m = _FIELD_RE.match(text)
    if m is None or not _field(text)[0]:
        return ""
    rest = fenced.strip(tx.first_sentence(m.group("rest"))).strip()
    short = len(re.findall(f"[{tx.CJK}]", rest)) < 8 if tx.is_cjk_text(rest) else \
        len(rest.split()) < 4
    if short or _fragment(rest) or rest.endswith((":", "：")) or \
            _FIRST_PERSON_RE.search(tx.without_code_marks(rest)) or not stands_alone(rest):
        return ""
    # With its label: `Non-goals: cross-account ordering` is no claim of cross-account ordering.
    return fenced.strip(tx.first_sentence(text)).strip()


def description(summary: str, lang: str, bucket: str = "", name: str = "",
                 points: Sequence[str] = ()) -> str:
    """One sentence for the frontmatter: the unit's first full sentence (a clause cut at `;` is
    not one), or for a runbook what it does and how many steps it has, worded for the shape of
    its title (`How to queue a long export, in 4 steps.`, `On-call handover checklist, in 6
    steps.`)."""
    parsed = pt.parse_all(points)
    said = pt.said_of(points)
    if len(said) > 1:
        return told_description(name, summary, points, lang)
    steps = sum(1 for p in parsed if p.role == "step")
    if bucket == "procedure" and steps:
        debug = any(p.role in ("symptom", "cause", "lesson") for p in parsed)
        cause = next((p.text for p in parsed if p.role == "cause"), "")
        return procedure_description(name, steps, lang, debug=debug, cause=cause)
    lines = [p.text for p in parsed if p.role == "text"]
    text = _gist(summary, lines) or _body_gist(summary, lines, name)
    if not text and name:  # nothing the note says stands alone: what the node is about
        text = tx.without_code_marks(name).rstrip(".。") + ("。" if lang == "zh" else ".")
    first = tx.without_code_marks(tx.first_sentence(text)) if text else ""
    first = tx.without_relative_days(first or tx.without_code_marks(text))
    if len(first) > DESCRIPTION_CHARS:
        first = _shortened(first, lang)
    if first.rstrip().endswith((":", "：")):  # a lead-in to code: a sentence of its own here
        first = first.rstrip().rstrip(":：").rstrip() + ("。" if lang == "zh" else ".")
    return first.rstrip(" ;:；：,，") or summary[:240]


def _shortened(text: str, lang: str) -> str:
    """A sentence too long for a description, shortened where a reader can stop: without its
    asides in brackets, then at the last clause boundary (`,`, `;`, ` - `) that fits, never
    inside brackets or on a word that needs what follows (`... blocked by an`)."""
    text = " ".join(tx.drop_parentheticals(text).split())
    if len(text) <= DESCRIPTION_CHARS:
        return text
    cut = text[:DESCRIPTION_CHARS]
    bounds = [m.start() for m in re.finditer(r"[,;，；]\s|\s[-–—]\s", cut)
              if m.start() >= DESCRIPTION_CHARS // 3 and
              cut[:m.start()].count("(") == cut[:m.start()].count(")")]
    if bounds:
        cut = cut[:bounds[-1]]
    elif " " in cut:
        cut = cut[:cut.rfind(" ")]
    words = cut.split(" ")
    while len(words) > 1 and words[-1].lower().strip("'’,;:") in tx.DANGLING:
        words.pop()
    return " ".join(words).rstrip(",;:，；：") + ("…" if lang == "zh" else "...")


def frontmatter_kind(bucket: str, kind: str) -> str:
    if kind == "fact" or (bucket == "wiki" and kind in ("lesson", "finding", "decision")):
        return "observation"
    return KIND_BY_BUCKET[bucket]
