"""Entity tags for a digest node (SPEC §10.2): people, organisations, projects and products only;
no tag rather than a wrong one.

A capitalised word is an entity only where English does not capitalise common words: not at
the start of a sentence, a line, a list item or after a label colon ("Cause: KEYS blocks ..."),
unless a verb of saying or wanting follows ("Alice prefers ..."). A word the node also writes
in lower case ("Action" beside "the action workflow") is a common word; a gerund opening a
sentence ("Getting started", "Having loaded") does nothing a person does; a quoted phrase
("Hello World") is a quotation; a capitalised phrase whose head is a common word ("Log Users
Out of Auth0") is the title of a page, not a name. Words in all capitals (`KEYS`, `SCAN`,
`MB`, `CD`, `API`), inline code, link paths, the Sources section, dates and units are never
tags. A word after "in / at / to / from / near" is a place and left out (places are not in
the list). People come first: a node about Priya is tagged Priya. Then the tool a technical
node is about: a word of its title that its own code runs as a command (`jq` in "Using jq in
an Observable notebook" with `jq '.items'` in a block). Existing vault tags the node mentions
are reused with their spelling.
"""

from __future__ import annotations

import re
from collections import Counter

from remelink.models.local import people
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
# A capitalised word, or a phrase of them with "of / the / de" between ("GitHub Actions",
# "Read the Docs"); a word with a capital inside ("macOS", "iPhone").
_WORD_RE = re.compile(r"(?<![\w'’=./-])((?:[A-Z]{2,5}[ \t]+(?=[A-Z][a-z]))?[A-Z][a-z][\w-]*"
                      r"(?:(?:[ \t]+(?:of|the|de)){0,2}[ \t]+(?:[A-Z][a-z][\w-]*|"
                      r"[A-Z]['’][A-Z][a-z]+)){0,3}|"
                      r"[a-z]+[A-Z][\w]*)"
                      r"(?![\w(-])")
_CONNECTORS = frozenset(("of", "the", "de"))
# English's closed-class words: capitalised at a sentence's start, never a name ("As
# illustrated by the following" is no one acting).
_CLOSED = tx.word_set("""a an the of for to in on at by with from into onto via and or nor not
but if then else while as so such than is are was were be been it its this that these those""")
# The parts of a screen a capitalised word labels ("the Developer tab", "the Metrics explorer",
# "the Advanced settings page"): the word is the label printed on it, not a product's name.
_UI_NOUNS = tx.word_set("""tab tabs page section button buttons menu option options explorer
settings setting panel pane screen dialog field checkbox sidebar toolbar""")
# A key chord (`Ctrl-C`) or a word joined to a lower-case one (`Shanghai-hours`,
# `Month-start`): a key, or an adjective made of a name, not the name.
_NOT_A_NAME_RE = re.compile(r"(?:Ctrl|Cmd|Alt|Shift|Option|Meta)[-+]\w+|[A-Z][a-z]+-[a-z][\w-]*")
# Quoted text up to a few words: a quotation ("Hello World"), not a name.
_QUOTED_RE = re.compile(r"[\"“]([^\"“”\n]{1,60})[\"”]")
# Words of a title that a command line may start with but that name no tool: English's
# closed-class words, shell and language keywords, and the generic nouns of software (`app`,
# `data`) that a program names its variables after.
_NO_TOOL = tx.word_set("""a an the of for to in on at by with from into onto via and or not
but if then else while as is are be do does did can use using run running how what why when
where which who this that these those it its my your our their all any each every some no
new get set let var const def class import return select insert update delete create drop
print echo cd export sudo source exec env true false null none app apps file files data code
script scripts test tests tool tools server project page pages blog function module package
command query table database issue issues user users key keys value values object string
list""")
_CJK_NAME_RE = people.zh_person_before(
    (*people.ZH_PERSON_VERBS, "不喜欢", "负责", "习惯", "建议", "下个月", "下周", "明天", "今天",
     "开始", "加入", "离职", "调到", "搬到", "接手"), nicknames=True)
_NOT_NAMES = frozenset(tx._COMMON_CAPS) | tx.word_set("""Why How What When Where Who Cause Fix
Symptom Result Lesson Context Follow Also Diagnosis Inputs Failure Steps Step Use Check Read
Walk Confirm Post Run Logs Log Note Notes Decision Decisions Rule Rules Preference Lesson
Corrected Sources Source Thanks Hey Hi Hello Yes Yeah Wow Great Awesome Cool Nice Sorry
Good Happy Morning Evening Night Weekend Week Month Year Christmas Thanksgiving Easter
Halloween English Chinese American European British French German Spanish Italian Japanese
Korean Indian Mexican Canadian God Mom Dad Mum Grandma Grandpa Internet Wi Fi TV
Mine Yours Ours Theirs Hers His Its Nobody Somebody Everybody Anybody Everyone Someone
Let Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec Mon Tue Wed Thu Fri Sat Sun""")


_MD_LINK_RE = re.compile(r"!?\[[^\[\]\n]*\]\([^()\s]*(?:\([^()\s]*\)[^()\s]*)*\)")
# A run of three or more capitalised words, small words between them allowed, is the title of
# a page, a talk or a post ("Bringing Open Large Language Models to Consumer Devices",
# "Towards Inserting One Billion Rows in SQLite Under A Minute"): no word of it is a name.
_TITLE_RUN_RE = re.compile(r"(?<![\w'’-])[A-Z][\w'’.-]*(?:(?:[ \t]+(?:a|an|the|of|to|in|on|for|"
                           r"and|with|at|by|from|vs)){0,2}[ \t]+[A-Z][\w'’.-]*){2,}")
_SMALL_CAPS = frozenset(("A", "An", "The", "Of", "To", "In", "On", "For", "And", "With", "At",
                         "By", "From", "Under", "Over", "Into", "Is", "Are"))


def _title_cased(run: str) -> bool:
    """A run of capitals written as a title: four capitalised words or more, or a small word
    capitalised inside it (`Read The Docs`, `SQLite Under A Minute`); three words of a
    product's name (`Programmable Search Engine`, `Google Cloud Run`) are not one."""
    words = run.split()
    capitals = [w for w in words if w[:1].isupper()]
    return len(capitals) >= 4 or any(w in _SMALL_CAPS for w in words[1:])


_FENCE_RE = re.compile(r"^[ \t]*(`{3,}|~{3,})([^\n]*)\n(.*?)^[ \t]*\1[ \t]*$", re.M | re.S)


def _split(text: str) -> tuple[dict[str, str], str]:
    """The node's `name` and `description`, and its body without the Sources section."""
    fields: dict[str, str] = {}
    body = text
    if text.startswith("---"):
        end = text.find("\n---", 3)
        if end != -1:
            fields = {m.group(1): m.group(2).strip("'\" ") for m in
                      re.finditer(r"^(name|description):\s*(.+)$", text[3:end], re.M)}
            body = text[end + 4:]
    return fields, re.split(r"^##[ \t]+sources\b", body, flags=re.I | re.M)[0]


def _prose(text: str) -> str:
    """The text a reader sees as the node's prose: frontmatter values, body without Sources;
    code, links and URLs removed."""
    fields, body = _split(text)
    prose = "\n".join([*fields.values(), body])
    # Fenced code is code, whatever it capitalises (`AssertionError`, `Match`).
    prose = _FENCE_RE.sub(" ", prose)
    # A quotation block is somebody else's text (a model's answer, a page quoted): what it
    # names (`... landed humans on the Moon`) is not what the node is about. A correction's
    # block (`> Corrected on ...`, `> 2026-03-10 更正：...`) is the node's own.
    prose = re.sub(r"^[ \t]*>(?![ \t]*(?:Corrected on\b|\d{4}-\d{2}-\d{2} 更正)).*$", " ", prose,
                   flags=re.M)
    # A link names another node or page: its title says nothing about who or what this node
    # is about (`[Byte order](https://en.wikipedia.org/...)`); a name the node also writes
    # outside the link is still found there.
    prose = re.sub(r"!?\[\[[^\]]*\]\]", " ", prose)
    prose = _MD_LINK_RE.sub(" ", prose)
    # Inline code and URLs leave a mark, not a gap: the word before them is not followed by
    # the word after them ("My `package.json` has ...", "Lowercase `service` works" named no
    # one acting).
    prose = re.sub(r"`[^`\n]*`|https?://\S+", " \u00a7 ", prose)
    return prose


def _starts_sentence(text: str, pos: int) -> bool:
    line = text[text.rfind("\n", 0, pos) + 1:pos]
    if not line.strip(" \t#>*+-0123456789.)"):
        return True
    before = text[:pos].rstrip()
    return not before or before[-1] in ".!?:;。！？：；\"'(“|"  # a table's cell opens like a line


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


_NAME_WORD = r"(?:[A-Z][a-z][\w-]*|[A-Z]['’][A-Z][a-z]+)"


def _surnamed(name: str, prose: str, found: dict[str, tuple[int, bool]]) -> str | None:
    """A first name with the surname the prose writes after it (`Angus Hollands`), or None. A
    word that names nothing (`Thanks`, `The`) or something of its own (`Fly Docker` beside
    `Docker`) is no surname."""
    for m in re.finditer(rf"(?<![\w'’-]){re.escape(name)}[ \t]+({_NAME_WORD})(?![\w'’-])", prose):
        other = m.group(1)
        if other in _NOT_NAMES or other in found or other.lower() in _CLOSED or \
                other.lower() in _COMMON_NOUNS:
            continue
        return f"{name} {other}"
    return None


# A capitalised word joined to another by "&" or a plural possessive ("Weights & Biases",
# "Workers & Pages", "Singles' Day"): one name of several words, which no tag can spell.
_JOINED_AFTER_RE = re.compile(r"[ \t]*&[ \t]*[A-Z]|['’][ \t]+[A-Z][a-z]")
_JOINED_BEFORE_RE = re.compile(r"[A-Z][\w-]*[ \t]*&[ \t]*$|[A-Z][\w-]*s['’][ \t]+$")


def candidates(text: str) -> dict[str, tuple[int, bool]]:
    """Entity names of a node with (count, is a person)."""
    prose = _prose(text)
    # A word in humps the node also writes as code (`PostingRequested`, `LimitExceededException`)
    # is an identifier wherever it appears, not a product's name.
    _, body = _split(text)
    code = " ".join([*re.findall(r"`([^`\n]+)`", body),
                     *(b.group(3) for b in _FENCE_RE.finditer(body))])
    in_code = {w for w in re.findall(r"[A-Za-z]\w*", code) if re.search(r"[a-z][A-Z]", w)}
    # ... and so is a capitalised word the node only ever calls (`Template()`): a class.
    in_code |= {w for w in re.findall(r"(?<![\w.])([A-Z][A-Za-z]+)\(\)", text)
                if not re.search(rf"(?<![\w.]){w}(?![\w(])", prose)}
    lower = Counter(re.findall(r"(?<![\w'’-])[a-z][a-z]+(?![\w'’-])", prose))
    quoted = [m.span(1) for m in _QUOTED_RE.finditer(prose) if len(m.group(1).split()) <= 5]
    quoted += [m.span() for m in _TITLE_RUN_RE.finditer(prose) if _title_cased(m.group(0))]
    found: dict[str, tuple[int, bool]] = {}
    for m in _WORD_RE.finditer(prose):
        if any(a <= m.start() < b for a, b in quoted):
            continue  # returns "Hello World": a quotation
        name = re.sub(r"\s+", " ", m.group(1)).strip()
        words = name.split(" ")
        head = len(words)
        # A common capital heading a run drops off (`Why Kafka`, `Check Grafana`); inside a
        # sentence a run that ends on a name is that name whole (`the Internet Archive`), only
        # its function words dropping (`... and The Stack`).
        whole = len(words) > 1 and words[-1] not in _NOT_NAMES and \
            not _starts_sentence(prose, m.start())
        while words and (words[0] in tx._COMMON_CAPS if whole else words[0] in _NOT_NAMES):
            words = words[1:]
        if not words:
            continue
        if len(words) < head and _CONNECTORS & set(words):
            continue  # "Log Users Out of Auth0": a page's title whose head is a common word
        if len(words) < head and m.group(1).split()[0] in ("The", "A", "An") and \
                not _starts_sentence(prose, m.start()):
            continue  # "known as The Stack": a name that carries its article; never half of it
        if in_code & set(words):
            continue
        name = " ".join(words)
        if name in _NOT_NAMES or name.isupper() or len(name) < 2 or \
                name.lower() in _CLOSED or _NOT_A_NAME_RE.fullmatch(name):
            continue
        start = m.start() if name == m.group(1) else prose.find(name, m.start())
        if _JOINED_AFTER_RE.match(prose, start + len(name)) or \
                _JOINED_BEFORE_RE.search(prose[max(0, start - 40):start]):
            continue  # "Weights & Biases", "Singles' Day": a word of a longer name, not a name
        follows = _next_word(prose, start + len(name))
        possessive = prose[start + len(name):start + len(name) + 2] in ("'s", "’s")
        if name.lower() in _COMMON_NOUNS:
            continue  # "Nature's great", "Much has happened": common words opening a sentence
        opens = _starts_sentence(prose, start)
        if opens and len(words) == 1 and name.endswith("ing"):
            continue  # "Getting started", "Having loaded": a gerund, nobody acting
        if opens and re.match(r"[^\W\d_][\w'’-]*(?:[ \t]+[\w'’-]+){0,2}[ \t]*:", prose[start:]):
            continue  # "5. Verify writes: ...": a step's label, its first word no one's name
        after_the = _prev_word(prose, start) == "the"
        person = len(words) == 1 and not after_the and (
            follows in _ACTOR or possessive or _first_name_acting(name, prose, start + len(name)))
        if not person and after_the and follows in _UI_NOUNS and re.fullmatch(r"[A-Z][a-z]+", name):
            continue  # "the Developer tab": a label on a screen
        acting = follows.endswith("ed") and len(follows) > 4  # "Acme escalated ..."
        if opens and not person and not acting:
            continue  # "Roll back a deploy": a capital that only opens a sentence is no name
        capital = re.findall(rf"(?<![\w'’-]){re.escape(name)}(?![\w'’-])", prose)
        if not person and len(words) == 1 and lower[name.lower()] >= max(1, len(capital)):
            continue  # "Action" beside "the action workflow", as often in lower case: a common word
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
        if not person and (follows == "time" or re.search(r"\d{1,2}:\d{2}\s*$", prose[:start])):
            continue  # "11:00 Lisbon time", "by 16:00 Lisbon": a time zone is a place
        count, was_person = found.get(name, (0, False))
        found[name] = (count + 1, was_person or person)
    # "Mike Driscoll ... Mike's recipe": one person, tagged by the name the note gives in full.
    for name, (count, person) in list(found.items()):
        if not person or not re.fullmatch(r"[A-Z][a-z]{1,11}", name):
            continue
        # ... unless the other words name something of their own (`Fly Docker` beside `Docker`).
        full = next((n for n in found if re.fullmatch(rf"{name}(?: {_NAME_WORD}){{1,2}}|"
                                                      rf"{_NAME_WORD} {name}", n) and
                     not any(w in found for w in n.split(" ") if w != name)), None)
        full = full or _surnamed(name, prose, found)
        if full is not None:
            del found[name]
            found[full] = (found.get(full, (0, False))[0] + count, True)
    # "Google Sheets ... existing Sheets functions": the short form of a name the node writes in
    # full, at least as often, inside a sentence, is that name (not `Running Python`, nor `Fly
    # PostgreSQL` beside `Fly`, nor `another Python` beside Python said alone,
    # nor `Writing Fly logs`).
    for name, (count, person) in list(found.items()):
        if person or " " in name:
            continue
        runs = [m for m in re.finditer(rf"(?<![\w'’.-])([A-Z][\w.-]*) {re.escape(name)}"
                                       rf"(?![\w'’-])", prose)
                if m.group(1) not in _NOT_NAMES and m.group(1) != name and
                not m.group(1).endswith("ing") and
                m.group(1) not in found]
        heads = {m.group(1) for m in runs}
        if len(heads) == 1 and len(runs) >= count and \
                any(not _starts_sentence(prose, m.start()) for m in runs):
            full = f"{heads.pop()} {name}"
            del found[name]
            found[full] = (found.get(full, (0, False))[0] + count, False)
    for m in _CJK_NAME_RE.finditer(prose):
        name = m.group(1)
        if not tx.is_cjk_name(name):
            continue
        count, _ = found.get(name, (0, True))
        found[name] = (count + 1, True)
    return found


_SHELLS = frozenset(("", "bash", "sh", "shell", "console", "zsh", "fish", "shell-session",
                     "sh-session", "terminal", "powershell", "ps", "cmd", "bat"))
_PROMPT_RE = re.compile(r"^\s*(?:\$|%|>)\s+")
# A command line's program; a line `name = value` or `name: value` sets something, runs nothing.
_COMMAND_RE = re.compile(r"(?:^|\||&&|;|\$\()\s*([a-z][\w.+-]*)(?=\s|$)(?!\s*[=:])", re.M)
# Commands that run the command after them: `npx prettier`, `uv run pytest`, `python -m pip`.
_RUNNER_RE = re.compile(r"\b(?:npx|uvx|pipx run|bunx|pnpm dlx|npm exec|uv run|poetry run|"
                        r"pipenv run|python3? -m|sudo|time|exec)\s+([a-z][\w.+-]*)(?=\s|$)")


def tools(text: str) -> list[str]:
    """The tools a technical node is about: words of its title (`name`) that its own code runs
    as a command, in a shell block (`jq '.items'`, `$ uv tool install ...`, `ls | awk ...`) or
    as an inline span of its own (`flake8`), spelled as the title spells them. Closed-class
    words and keywords (`for`, `select`, `export`) are no tool."""
    fields, body = _split(text)
    title = fields.get("name", "")
    commands: set[str] = set()
    for block in _FENCE_RE.finditer(body):
        if (block.group(2).split() or [""])[0] not in _SHELLS:
            continue
        for line in block.group(3).splitlines():
            line = _PROMPT_RE.sub("", line)
            commands.update(_COMMAND_RE.findall(line), _RUNNER_RE.findall(line))
    prose = _FENCE_RE.sub(" ", body)
    plain = set(re.findall(r"(?<![\w`.-])[a-z][\w+-]*(?![\w`-])", re.sub(r"`[^`\n]*`", " ", prose)))
    # An inline span that is the word alone (`awk`), when the prose never uses it as a word,
    # spelled as a command is (`Template` is a class; `journal.postings.v2`, a dotted name;
    # `default_pool_size`, a setting: a program run from a shell block is found above).
    spans = {span for span in (s.strip() for s in re.findall(r"`([^`\n]+)`", prose))
             if span not in plain and span[:1].islower() and span.count(".") < 2 and
             "_" not in span}
    out: list[str] = []
    words = re.findall(r"(?<![\w.+-])[A-Za-z][\w+-]*(?:\.[A-Za-z][\w+-]*)*", title)
    for i, word in enumerate(words):
        run = word.lower() in commands or word in spans or (i == 0 and word.lower() in spans)
        if run and word.lower() not in _NO_TOOL and len(word) > 1:
            if i == 0 and word[1:].islower():
                word = word.lower()  # "Pytest coverage with context": the title's capital
            if word not in out:
                out.append(word)
    return out


def entity_tags(text: str, existing: list[str], max_tags: int) -> list[str]:
    """Tags for a node: the people it is about first, then the tools it runs (`tools`), then
    organisations, projects and products it names; existing vault tags it mentions keep their
    spelling."""
    found = candidates(text)
    prose = _prose(text).lower()
    out: list[str] = []
    # A project's status node (status.py) is tagged with its project, whose name the node's
    # words may show only in part (`Async postings`: `Async`).
    project = re.search(r"\A---\n(?:.*\n)*?project:[ \t]*['\"]?([^'\"\n]+?)['\"]?[ \t]*\n",
                        text)
    if project:
        key = project.group(1).strip()
        out.append(key)
        found = {n: v for n, v in found.items() if n not in key.split()}
    for tag in existing:
        probe = tag.replace("_", " ").lower()
        # A vault tag is reused when the node names it as an entity: its spelling wins.
        if probe in {n.lower() for n in found} and tag not in out and probe in prose:
            out.append(tag)
    ranked = sorted(found.items(), key=lambda kv: (not kv[1][1], -kv[1][0], kv[0]))
    people = [name for name, (_, person) in ranked if person]
    others = [name for name, (_, person) in ranked if not person]
    for name in [*people, *tools(text), *others]:
        # "GitHub Action" beside "GitHub Actions": one name, singular or plural.
        if any(name.casefold().removesuffix("s") == t.replace("_", " ").casefold().removesuffix("s")
               for t in out):
            continue
        out.append(name)
    return out[:max_tags]
