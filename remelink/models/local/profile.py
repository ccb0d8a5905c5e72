"""Facts about people, grouped by topic across turns and sessions (SPEC §8: fewer, richer
units; merge evidence across notes).

A long conversation returns to the same things: Nate's turtles come up in January, in May and
in November. A careful reader keeps one entry per person and topic ("Nate's turtles"), with
what was said each time and when, not forty separate lines. The topic of a fact is a content
word or a two-word phrase (`video game`, `ice cream`) that at least two of the same person's
facts share; the most widely shared topics are taken first, two-word phrases before single
words. A fact that shares no topic stays a unit on its own. A topic with more facts than one
node should hold is split in chronological chunks under the same title: the later chunks
refine the node the first one created.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from remelink.models.local import points as pt
from remelink.models.local import speech, titles
from remelink.models.local import text as tx
from remelink.models.local.candidate import Candidate
from remelink.models.local.transcript import Fact

MAX_SENTENCES = 16  # sentences per unit: a node stays an entry, not a transcript
MAX_DETAILS = 6     # details kept with each fact of a topic entry
MIN_SHARED = 2    # facts that must share a topic
WEIGHT = 2.0
MIN_WORDS_ALONE = 5  # distinct content words of a fact that shares no topic (LoCoMo-tuned)
MIN_CJK_ALONE = 12
_WORD_RE = re.compile(r"[A-Za-z][A-Za-z-]+")
_GENERIC = tx.word_set("""
time times thing things life day days week weeks month months year years way ways lot lots
people person someone something everything anything nothing stuff kind sort bit fun moment
moments world place places part idea ideas today tonight tomorrow yesterday weekend morning
night evening afternoon others other friend friends family home work job new old good great
first last next few little big able ready hard busy super really much many more most back
feel feels felt feeling feelings think thought love loved loves like liked likes want wanted
make made makes making take took taking get got gets getting go went going goes keep kept
know knew see saw seen look looked looking try tried trying start started starting give gave
come came help helped helps find found tell told say said talk talked share shared enjoy
enjoyed enjoys enjoying need needed use used put hope hoping glad happy excited proud amazing
awesome cool nice fun great sure pretty totally definitely always never also still even just
their them they theirs themselves and others own january february march april may june july
august september october november december monday tuesday wednesday thursday friday saturday
sunday recently lately finally actually since while during before after about around
photo photos pic pics picture pictures image images shot shots snapshot photography
together alone anymore yourself myself themselves everyone anyone somebody reply
one ones hand importance rest end lots bunch couple plenty deal while chance level
""")
_VAGUE = tx.word_set("""it this that these those her him them there here one ones something
activity thing stuff""")
_VERB_CONTEXT = tx.word_set("""to they i we he she will would can could should must might
don't didn't doesn't won't can't never always""")
_DETERMINERS = tx.word_set("""a an the their his her my our its this that these those some any
every each another two three four five several few many new""")


@dataclass
class Said:
    """One fact with where and when it was said."""
    fact: Fact
    path: str
    day: str
    order: tuple[int, int]


def _key(word: str) -> str:
    word = word.lower()
    if word.endswith("ies") and len(word) > 5:
        return word[:-3] + "y"
    if word.endswith(("ss", "us", "is")):
        return word
    return word[:-1] if word.endswith("s") and len(word) > 4 else word


def _words(fact: Fact, names: set[str]) -> tuple[list[str], list[bool]]:
    words = _WORD_RE.findall(titles.without_dates(" ".join([fact.statement, *fact.points])))
    content = [len(w) >= 3 and w.lower() not in _GENERIC and w.lower() not in names and
               not speech.is_stop(w.lower()) and not w.lower().endswith("ly") and
               not w[:1].isupper() for w in words]
    return words, content


def nouns(facts: Sequence[Fact], names: set[str]) -> set[str]:
    """The keys a person uses as nouns somewhere: after a determiner or possessive ("their
    turtles", "a rejection letter", "my first full screenplay"). Without a tagger, this tells
    most nouns from verbs and adjectives ("gives", "tough", "allergic"), which rarely follow
    one."""
    out: set[str] = set()
    verbs: set[str] = set()
    modifier: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    for fact in facts:
        words, content = _words(fact, names)
        for i, w in enumerate(words):
            low = w.lower()
            key = _key(low)
            before = [x.lower() for x in words[max(0, i - 2):i]]
            if not content[i]:
                continue
            seen[key] += 1
            if i + 1 < len(words) and not speech.is_stop(words[i + 1].lower()) and \
                    words[i + 1][:1].islower():
                modifier[key] += 1  # "homeless shelter", "a tough time": a modifier
            if before and before[-1] in _VERB_CONTEXT:
                verbs.add(key)  # "to sign", "they chat": used as a verb
            if (any(b in _DETERMINERS for b in before) and not low.endswith(("ed", "ing"))) or \
                    (before and before[-1] in _DETERMINERS):
                out.add(key)
    return {k for k in out - verbs if modifier[k] * 2 < seen[k]}


def _topics(fact: Fact, names: set[str], known: set[str]) -> dict[str, str]:
    """Topic keys of a fact with their surface forms: the person's nouns, and two-word
    phrases that end in one (`video game`, `ice cream`)."""
    words, content = _words(fact, names)
    out: dict[str, str] = {}
    for i, w in enumerate(words):
        low = w.lower()
        if not content[i] or _key(low) not in known:
            continue
        if len(low) >= 4:
            out.setdefault(_key(low), low)
        if i and content[i - 1] and words[i - 1].lower() not in ("through", "about"):
            a = words[i - 1].lower()
            out.setdefault(f"{_key(a)} {_key(low)}", f"{a} {low}")
    return out


def _title(speaker: str, surface: str, lang: str) -> str:
    return f"{speaker}的{surface}" if lang == "zh" else f"{speaker}'s {surface}"


def _zh_topics(fact: Fact) -> dict[str, str]:
    text = titles.without_dates(fact.statement.replace(fact.speaker, " "))
    out: dict[str, str] = {}
    for run in re.findall(f"[{tx.CJK}]+", text):
        for n in (4, 3, 2):
            for i in range(len(run) - n + 1):
                gram = run[i:i + n]
                if not re.search(r"[的了是在我你他她们也都就很和与及这那一个]", gram):
                    out.setdefault(gram, gram)
    return out


def group(items: Sequence[Said], names: Sequence[str]) -> list[Candidate]:
    """Candidates from facts: per person, one per topic the facts share, one per other fact."""
    lower_names = {n.lower() for n in names}
    by_person: dict[str, list[int]] = {}
    for i, item in enumerate(items):
        by_person.setdefault(item.fact.speaker, []).append(i)
    out: list[Candidate] = []
    for speaker, indexes in by_person.items():
        skip = lower_names | {speaker.lower()}
        known = nouns([items[i].fact for i in indexes], skip)
        topics = {i: (_zh_topics(items[i].fact) if items[i].fact.lang == "zh" else
                      _topics(items[i].fact, skip, known)) for i in indexes}
        df: Counter[str] = Counter()
        for keys in topics.values():
            df.update(keys.keys())
        ranked = sorted((k for k, n in df.items() if n >= MIN_SHARED),
                        key=lambda k: (-(df[k] * (1.5 if " " in k or (len(k) >= 3 and
                                                   not k.isascii()) else 1.0)), k))
        free = set(indexes)
        for key in ranked:
            members = [i for i in indexes if i in free and key in topics[i]]
            if len(members) < MIN_SHARED:
                continue
            surface = Counter(topics[i][key] for i in members).most_common(1)[0][0]
            lang = items[members[0]].fact.lang
            chunks = _split(members, items)
            for chunk in chunks:
                title = _title(speaker, surface, lang)
                if len(chunks) > 1:  # a long-running topic, one entry per period
                    period = _period([items[i].day for i in chunk], lang)
                    title = f"{title}（{period}）" if lang == "zh" else f"{title}, {period}"
                out.append(_candidate([items[i] for i in chunk], title))
            free -= set(members)
        for i in sorted(free):
            fact = items[i].fact
            title = titles.fact_title(fact.core, fact.speaker)
            if _specific(fact, names) and _own(title, fact.speaker, names):
                out.append(_candidate([items[i]], title))
    out.sort(key=lambda c: c.order)
    return out


def _split(members: list[int], items: Sequence[Said]) -> list[list[int]]:
    """A topic too big for one node, in chronological chunks of at most MAX_SENTENCES
    sentences (a fact and its details), a late single fact kept with the chunk before it."""
    out: list[list[int]] = []
    size = 0
    for i in members:
        cost = 1 + min(len(items[i].fact.points), MAX_DETAILS)
        if out and size + cost <= MAX_SENTENCES:
            out[-1].append(i)
            size += cost
        else:
            out.append([i])
            size = cost
    if len(out) > 1 and len(out[-1]) == 1:
        last = out.pop()
        out[-1] += last
    return out


def _period(days: Sequence[str], lang: str) -> str:
    """`April to May 2023`, `March 2023`, `2022年4月至5月` from ISO days."""
    months = sorted({d[:7] for d in days if len(d) >= 7})
    if not months:
        return ""
    first, last = months[0], months[-1]
    def name(ym: str, year: bool) -> str:
        y, m = int(ym[:4]), int(ym[5:7])
        if lang == "zh":
            return f"{y}年{m}月" if year else f"{m}月"
        return f"{date(y, m, 1):%B}" + (f" {y}" if year else "")
    if first == last:
        return name(first, True)
    sep = "至" if lang == "zh" else " to "
    return f"{name(first, first[:4] != last[:4])}{sep}{name(last, True)}"


def _specific(fact: Fact, names: Sequence[str]) -> bool:
    """A fact that stands alone must say enough to be worth a node: a passing remark ("Maria
    got a puppy", "Sam is considering giving it a try") is kept only as part of a topic."""
    if fact.lang == "zh":
        return len(re.findall(f"[{tx.CJK}]", " ".join([fact.statement, *fact.points]))) >= \
            MIN_CJK_ALONE
    text = " ".join([fact.statement, *fact.points])
    words = speech.content_words(text, tuple(names))
    # A dated event ("got back from a road trip on 22 January 2023") is specific in itself.
    dated = 1 if titles.without_dates(text) != " ".join(text.split()) else 0
    return len({w for w in words if w not in _GENERIC}) + dated >= MIN_WORDS_ALONE


def _own(title: str, speaker: str, names: Sequence[str]) -> bool:
    """A fact on its own is kept when its title is about its speaker: it opens with them
    ("Maria has gone camping a few times") and does not turn to the other person ("Maria can
    picture John all laughing" is a reaction to John's news)."""
    if not title.startswith(speaker):
        return False
    if tx.is_cjk_text(title):
        return not re.search(r"(?:这个|那个|它|这|那)$", title)
    words = [w.lower() for w in re.findall(r"[A-Za-z']+", title[len(speaker):])]
    if words and words[-1] in _VAGUE:
        return False  # "Jolene got her", "... if they do this": about something unnamed
    solid = [w for w in words if not speech.is_stop(w) and w not in _GENERIC and w not in _VAGUE
             and "'" not in w and len(w) > 2 and w not in ("yet", "anymore", "either")]
    if len(solid) < 2:
        return False
    return not any(n != speaker and re.search(rf"\b{re.escape(n)}\b", title) for n in names)


def _candidate(facts: Sequence[Said], name: str) -> Candidate:
    paths: list[str] = []
    for f in facts:
        if f.path not in paths:
            paths.append(f.path)
    first = facts[0]
    points: list[str] = [f"point: {p}" for p in first.fact.points]
    turns: dict[int, list[str]] = {}
    for f in facts:
        k = paths.index(f.path)
        turns.setdefault(k, []).extend(f.fact.turn_ids)
        if f is first:
            continue
        points.append(pt.Point("point", k, f.fact.statement).format())
        points += [pt.Point("point", k, p).format() for p in f.fact.points[:MAX_DETAILS]]
    for k, ids in turns.items():
        points.append(pt.said(first.fact.speaker, next(f.day for f in facts if f.path == paths[k]),
                              ids, k))
    return Candidate(kind="fact", bucket="personal", name=name, statement=first.fact.statement,
                     points=points, paths=paths, weight=WEIGHT + len(facts) - 1,
                     order=first.order, roles={p: "fact" for p in paths},
                     subject=first.fact.speaker)
