"""A speaker's sentence told about them, in the third person (SPEC §11): "I've had them for 3
years" -> "Nate has had them for 3 years", "我昨天搬到杭州" -> "小王昨天搬到杭州".

The speaker's name stands for the first self-reference, and the verb after it agrees; later
references are singular "they" (a note-taker does not know anyone's pronouns), the name again
when the sentence has a "they" of its own. "We" is the speaker with the group the turn names;
"you" is the other person.
"""

from __future__ import annotations

import re

from remelink.models.local import text as tx
from remelink.models.local.speech import GERUND_SUBJECT_RE, SUBJECTLESS_RE

_ADVERBS = tx.word_set("""just really also still always usually recently finally actually totally
first once later then now soon sometimes
definitely never often even sometimes already only probably kinda mostly truly absolutely
currently seriously honestly literally basically certainly officially""")
_UNCHANGED = tx.word_set("""can could will would shall should may might must can't couldn't won't
were weren't
wouldn't shouldn't didn't wasn't had was used did got went made took saw found bought came left
met ran said told thought felt gave kept knew lost paid put sent sat set spent won wrote brought
built caught chose drove ate fell forgot grew heard hit held hurt let led quit rode rose sang sold
shot slept spoke stood stuck swam taught threw understood woke wore became began broke drank flew
hung read cut""")
_IRREGULAR = {"am": "is", "are": "is", "have": "has", "do": "does", "go": "goes",
              "don't": "doesn't", "haven't": "hasn't", "aren't": "isn't", "'m": "is"}
_NOT_VERBS = tx.word_set("""a an the to of in on at for with and or but so too guys all both know
really just also can could will would should must might may can't won't don't didn't""")
_COLLOQUIAL = {"gotta": "has to", "wanna": "wants to", "gonna": "is going to"}
_GROUP_WORDS = ("family", "kids", "children", "wife", "husband", "partner", "friends", "team",
                "sister", "brother", "mom", "dad", "parents", "son", "daughter", "girlfriend",
                "boyfriend", "fiancé", "fiance", "fiancée", "mother", "father", "siblings",
                "cousins", "band", "club", "group", "colleagues", "coworkers", "classmates")


def _third_singular(verb: str) -> str:
    low = verb.lower()
    if low in _IRREGULAR:
        return _IRREGULAR[low]
    if low in _COLLOQUIAL:
        return _COLLOQUIAL[low]
    if low in _UNCHANGED or low.endswith(("ed", "n't")) or not low.isalpha():
        return verb
    if low.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if low.endswith("y") and len(low) > 2 and low[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def third_person(sentence: str, speaker: str, other: str = "", *, context: str = "") -> str:
    """The speaker's sentence told about them: "I've had them for 3 years" -> "Nate has had
    them for 3 years". The speaker's name stands for the first self-reference; later ones are
    singular "they", as a careful note-taker writes without knowing anyone's pronouns (the name
    again when the sentence has a "they" of its own). "We" is the speaker with the group the
    turn names ("my family" -> "Maria and their family"); "my sister and I" -> "Maria and their
    sister". One pass, left to right, so that each reference sees the ones before it."""
    if tx.is_cjk_text(sentence):
        return third_person_zh(sentence, speaker, other)
    text = sentence.replace("\u2019", "'")
    state = {"named": False}
    crowded = bool(re.search(r"\b(?:they|them|their|theirs|they're|they've)\b", text, re.I))
    group = next((g for g in _GROUP_WORDS if re.search(rf"\bmy {g}\b", context or text, re.I)),
                 "")
    if group and re.search(rf"\bwith (?:my|our) {group}\b", text, re.I):
        group = "-"  # "we went camping with my family": the speaker went, with the family

    def name_or_they() -> str:
        if state["named"] and not crowded:
            return "they"
        state["named"] = True
        return speaker

    def pair(m: re.Match[str]) -> str:
        owner, who = m.group(1), m.group(2)
        state["named"] = True
        return f"{speaker} and {'their ' if owner else ''}{who}"

    # "my partner and I", "Max and I": the speaker first, and a plural verb stays plural.
    text = re.sub(r"\b([Mm]y\s+)?((?<=[Mm]y )[a-z]+|[A-Z][a-z]+) and I\b(?!')", pair, text)
    adverbs = "|".join(sorted(_ADVERBS))
    token = re.compile(
        rf"\b(?P<subj>I'm|I've|I'll|I'd|I)\b(?P<sp>\s+)?(?P<adv>(?:(?:{adverbs}|[a-z]{{4,}}ly)"
        r"\s+)*)(?P<verb>[A-Za-z']+)?|\b(?P<we>we're|we've|we'll|we'd|we)\b|"
        r"\b(?P<own>my|our|me|us|mine|ours|myself|ourselves)\b|"
        r"(?P<lead>\b(?:if|when|before|after|that|and|but|because|so|until|unless|while|once)\s+)?"
        r"\b(?P<you>you're|you've|your|you)\b(?P<ysp>\s+)?(?P<yverb>[a-z]+)?", re.I)

    def subject(m: re.Match[str]) -> str:
        word, space, adv, verb = m.group("subj"), m.group("sp") or "", m.group("adv") or "", \
            m.group("verb") or ""
        low = word.lower()
        name = name_or_they()
        if name == "they":
            aux = {"i'm": "they are", "i've": "they have", "i'd": "they would",
                   "i'll": "they will"}.get(low)
            if aux:
                return f"{aux}{space}{adv}{verb}"
            verb = {"am": "are", "was": "were"}.get(verb.lower(), verb)
            return f"they{space}{adv}{verb}"
        if low in ("i'm", "i've", "i'll"):
            aux = {"i'm": "is", "i've": "has", "i'll": "will"}[low]
            return f"{name} {aux}{space}{adv}{verb}"
        if low == "i'd":
            had = re.match(r"(?:been|had|gone|done|never|already|seen|made|taken|got)$",
                           verb or adv.strip(), re.I)
            return f"{name} {'had' if had else 'would'}{space}{adv}{verb}"
        return f"{name}{space}{adv}{_third_singular(verb) if verb else ''}"

    def plural(word: str) -> str:
        low = word.lower()
        if group == "-" and not state["named"]:
            who = speaker
        elif group and not state["named"]:
            who = f"{speaker} and their {group}"
        else:
            who = "they" if state["named"] else f"{speaker} and others"
        state["named"] = True
        tail = {"we're": " are", "we've": " have", "we'll": " will", "we'd": " would"}.get(low, "")
        return who + tail

    def owner(word: str) -> str:
        low = word.lower()
        if low in ("my", "me") and (not state["named"] or crowded):
            state["named"] = True
            return f"{speaker}'s" if low == "my" else speaker
        if low in ("my", "our"):
            return "their"
        if low in ("me", "us"):
            return "them"
        return {"mine": "theirs", "ours": "theirs", "myself": "themselves",
                "ourselves": "themselves"}[low]

    def you(m: re.Match[str]) -> str:
        word, lead = m.group("you"), m.group("lead") or ""
        space, verb = m.group("ysp") or "", m.group("yverb") or ""
        if not other:
            return m.group(0)
        low = word.lower()
        if low != "you" or not verb:
            said = {"you're": f"{other} is", "you've": f"{other} has",
                    "your": f"{other}'s"}.get(low, other)
            return f"{lead}{said}{space}{verb}"
        # "before you get here": the other person as a subject takes a third-person verb.
        if lead or m.start() == 0:
            verb = {"are": "is", "were": "was"}.get(verb, _third_singular(verb)) \
                if verb not in _NOT_VERBS else verb
        return f"{lead}{other}{space}{verb}"

    def each(m: re.Match[str]) -> str:
        if m.group("subj"):
            out = subject(m)
        elif m.group("we"):
            out = plural(m.group("we"))
        elif m.group("own"):
            out = owner(m.group("own"))
        else:
            out = you(m)
        if m.start() == 0 or text[:m.start()].rstrip()[-1:] in ".!?":
            out = out[:1].upper() + out[1:]
        return out

    if SUBJECTLESS_RE.match(text) and not GERUND_SUBJECT_RE.match(text):
        # "Just got back from ...": the speaker is the subject.
        text = _subjectless(text, speaker)
        state["named"] = True
    text = token.sub(each, text)
    return text[:1].upper() + text[1:]


def _subjectless(text: str, speaker: str) -> str:
    first = text.split(" ", 1)[0].lower()
    rest = text.split(" ", 1)[1] if " " in text else ""
    if first == "been":
        return f"{speaker} has been {rest}"
    if first == "gonna":
        return f"{speaker} is going to {rest}"
    if first.endswith("ing") and first not in ("going",):
        return f"{speaker} is {text[:1].lower()}{text[1:]}"
    if first == "going":
        return f"{speaker} is {text[:1].lower()}{text[1:]}"
    return f"{speaker} {text[:1].lower()}{text[1:]}"


def third_person_zh(sentence: str, speaker: str, other: str = "") -> str:
    text = sentence.replace("我们", f"{speaker}他们").replace("咱们", f"{speaker}他们")
    text = text.replace("我", speaker)
    if other:
        text = text.replace("你们", f"{other}他们").replace("你", other)
    return text
