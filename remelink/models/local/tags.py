"""Entity tags for a digest node (SPEC §10.2): people, organisations, projects and products only;
no tag rather than a wrong one.

A capitalised word is an entity only where English does not capitalise common words: not at
the start of a sentence, a line, a list item or after a label colon ("Cause: KEYS blocks ..."),
unless a verb of saying or wanting follows ("Alice prefers ..."). Words in all capitals
(`KEYS`, `SCAN`, `MB`, `CD`, `API`), inline code, link paths, the Sources section, dates and
units are never tags. A word after "in / at / to / from / near" is a place and left out
(places are not in the list). People come first: a node about Priya is tagged Priya.
Existing vault tags the node mentions are reused with their spelling.
"""

from __future__ import annotations

import re

from remelink.models.local import text as tx

# Verbs that only a person (or a team) does: "Alice prefers", "Marco traced". Words that are
# as often nouns ("requests", "notes", "needs") or that anything does ("is", "has") are no sign.
_ACTOR = tx.word_set("""prefers preferred likes liked dislikes hates wants wanted asked asks said
says thinks thought told tells insisted suggested agreed decided loves loved enjoys enjoyed
adopted moved bought started finished shared works worked lives lived leads led owns traced
promised reported explained mentioned pointed proposed believes feels felt wrote writes plays
played visited joined met took went got made tried learned painted cooked baked hiked""")
_COMMON_NOUNS = tx.word_set("""much such nature life love family work home music art sports food
coffee chef dinner lunch breakfast school college church god heaven mother father mom dad
sister brother friend friends team game games book books movie movies dog dogs cat cats pet
pets summer winter spring fall autumn today tonight tomorrow yesterday everything nothing
something anything someone everyone people health yoga dance painting writing reading cooking
baking gaming running hiking camping exercise meditation progress time work data traffic
support security quality performance""")
_PLACE_NOUNS = tx.word_set("""office offices branch site campus area region airport beach park
coast city town trip trail trails lake river mountains downtown""")
_PLACE_WORDS = tx.word_set("in at to from near around across through visiting visited")
_WORD_RE = re.compile(r"(?<![\w'’-])([A-Z][a-z]+[A-Z][\w]*|[A-Z][a-z][\w-]*"
                      r"(?:(?:\s+(?:of|the|de)){0,2}\s+[A-Z][a-z][\w-]*){0,3}|[a-z]+[A-Z][\w]*)"
                      r"(?![\w-])")
_CJK_NAME_RE = re.compile(r"(?:^|[，。；：、\s（(“\"])([小老阿][\u4e00-\u9fff]|"
                          r"[\u4e00-\u9fff]{2,3}?)(?=希望|喜欢|更喜欢|不喜欢|偏好|说|认为|提出|要求|"
                          r"负责|习惯|建议|下个月|下周|明天|今天|开始|加入|离职|调到|搬到|接手)")
_NOT_NAMES = frozenset(tx._COMMON_CAPS) | tx.word_set("""Why How What When Where Who Cause Fix
Symptom Result Lesson Context Follow Also Diagnosis Inputs Failure Steps Step Use Check Read
Walk Confirm Post Run Logs Log Note Notes Decision Decisions Rule Rules Preference Lesson
Corrected Sources Source Thanks Hey Hi Hello Yes Yeah Wow Great Awesome Cool Nice Sorry
Good Happy Morning Evening Night Weekend Week Month Year Christmas Thanksgiving Easter
Halloween English Chinese American European British French German Spanish Italian Japanese
Korean Indian Mexican Canadian God Mom Dad Mum Grandma Grandpa Internet Wi Fi TV
Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec Mon Tue Wed Thu Fri Sat Sun""")


def _prose(text: str) -> str:
    """The text a reader sees as the node's prose: frontmatter values, body without Sources,
    links reduced to their display text, code and URLs removed."""
    body = text
    head = ""
    if text.startswith("---"):
        end = text.find("\n---", 3)
        if end != -1:
            fm = text[3:end]
            head = "\n".join(m.group(1).strip("'\" ") for m in
                             re.finditer(r"^(?:name|description):\s*(.+)$", fm, re.M))
            body = text[end + 4:]
    body = re.split(r"^##[ \t]+sources\b", body, flags=re.I | re.M)[0]
    prose = f"{head}\n{body}"
    # Fenced code is code, whatever it capitalises (`AssertionError`, `Match`).
    prose = re.sub(r"^[ \t]*(`{3,}|~{3,})[^\n]*\n.*?^[ \t]*\1[ \t]*$", " ", prose,
                   flags=re.M | re.S)
    prose = re.sub(r"!?\[\[[^\]|]*\|([^\]]*)\]\]", r"\1", prose)
    prose = re.sub(r"!?\[\[[^\]]*\]\]", " ", prose)
    prose = re.sub(r"`[^`\n]*`|https?://\S+", " ", prose)
    return prose


def _starts_sentence(text: str, pos: int) -> bool:
    line = text[text.rfind("\n", 0, pos) + 1:pos]
    if not line.strip(" \t#>*+-0123456789.)"):
        return True
    before = text[:pos].rstrip()
    return not before or before[-1] in ".!?:;。！？：；\"'(“"


def _next_word(text: str, end: int) -> str:
    m = re.match(r"\s*(?:'s\s+|’s\s+)?([A-Za-z]+)", text[end:end + 30])
    return m.group(1).lower() if m else ""


def _prev_word(text: str, start: int) -> str:
    m = re.search(r"([A-Za-z]+)\s*$", text[max(0, start - 20):start])
    return m.group(1).lower() if m else ""


_AUX_RE = re.compile(r"\s+(?:(?:is|was)\s+(?:not\s+|just\s+|really\s+|also\s+)*[a-z]+ing\b|"
                     r"(?:will|can|could|would|should|can't|couldn't|won't|wouldn't|does|did|"
                     r"doesn't|didn't)\s+(?:not\s+|never\s+|just\s+|really\s+|also\s+)*"
                     r"[a-z]+|and (?:others|their|his|her)\b)")


def _first_name_acting(name: str, prose: str, end: int) -> bool:
    """"Priya is moving ...", "James can't wait ...", "Evan and others ...": a word shaped
    like a first name doing something. A word the text also writes in lower case
    ("Checkout ... the checkout flow") is a common noun, not a name."""
    if not re.fullmatch(r"[A-Z][a-z]{2,11}", name) or name.lower() in _COMMON_NOUNS:
        return False
    if re.search(rf"(?<![\w-]){name.lower()}(?![\w-])", prose):
        return False
    return bool(_AUX_RE.match(prose[end:end + 50]))


def candidates(text: str) -> dict[str, tuple[int, bool]]:
    """Entity names of a node with (count, is a person)."""
    prose = _prose(text)
    found: dict[str, tuple[int, bool]] = {}
    for m in _WORD_RE.finditer(prose):
        name = re.sub(r"\s+", " ", m.group(1)).strip()
        words = name.split(" ")
        while words and words[0] in _NOT_NAMES:
            words = words[1:]
        if not words:
            continue
        name = " ".join(words)
        if name in _NOT_NAMES or name.isupper() or len(name) < 2:
            continue
        start = m.start() if name == m.group(1) else prose.find(name, m.start())
        follows = _next_word(prose, start + len(name))
        possessive = prose[start + len(name):start + len(name) + 2] in ("'s", "’s")
        if name.lower() in _COMMON_NOUNS:
            continue  # "Nature's great", "Much has happened": common words opening a sentence
        person = len(words) == 1 and (follows in _ACTOR or possessive or
                                      _first_name_acting(name, prose, start + len(name)))
        acting = follows.endswith("ed") and len(follows) > 4  # "Acme escalated ..."
        if _starts_sentence(prose, start) and not person and not acting:
            continue  # "Roll back a deploy": a capital that only opens a sentence is no name
        before = {_prev_word(prose, m.start()), _prev_word(prose, start)}
        if m.start() > 4 and _prev_word(prose, m.start()) in ("the", "a"):
            before.add(_prev_word(prose, m.start() - len(_prev_word(prose, m.start())) - 1))
        if not person and before & _PLACE_WORDS and not re.search(r"[a-z][A-Z]", name):
            continue  # "in Tampa", "to Berlin": a place
        window = prose[max(0, m.start() - 30):m.start()].lower()
        if re.search(r"\b(?:(?:named|called)(?:\s+\w+)?|dog|dogs|cat|cats|pup|pups|puppy|"
                     r"kitten|pet|pets|turtle|turtles|horse|bird|parrot|hamster|bunny|snake)\s*$",
                     window):
            continue  # "a pup named Buddy": a pet, not a person, organisation or product
        if not person and follows in _PLACE_NOUNS:
            continue  # "the Berlin office", "Tampa beach"
        count, was_person = found.get(name, (0, False))
        found[name] = (count + 1, was_person or person)
    for m in _CJK_NAME_RE.finditer(prose):
        name = m.group(1)
        if not tx.is_cjk_name(name):
            continue
        count, _ = found.get(name, (0, True))
        found[name] = (count + 1, True)
    return found


def entity_tags(text: str, existing: list[str], max_tags: int) -> list[str]:
    """Tags for a node: the people it is about first, then organisations, projects and
    products it names; existing vault tags it mentions keep their spelling."""
    found = candidates(text)
    prose = _prose(text).lower()
    out: list[str] = []
    for tag in existing:
        probe = tag.replace("_", " ").lower()
        # A vault tag is reused when the node names it as an entity: its spelling wins.
        if probe in {n.lower() for n in found} and tag not in out and probe in prose:
            out.append(tag)
    ranked = sorted(found.items(), key=lambda kv: (not kv[1][1], -kv[1][0], kv[0]))
    for name, _ in ranked:
        if any(name.casefold() == t.replace("_", " ").casefold() for t in out):
            continue
        out.append(name)
    return out[:max_tags]
