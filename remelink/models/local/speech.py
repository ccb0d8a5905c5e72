"""What one speaker's sentence says, for conversation transcripts (SPEC §8, §11): chatter or a
fact about the speaker (retell.py tells the fact in the third person, under their name).

A careful reader of a chat keeps what each person tells about themselves (what they did, plan,
like, own; their family, work and places) and drops greetings, thanks, questions, reactions to
the other person and small talk. The tests are lexical and deliberately plain: a sentence is a
fact when, once its interjections and vocatives are gone, it is a statement in the first person
(or a subjectless report, "Just got back from a road trip") that says at least a few content
words; it is a reaction when it is about the other person's news ("That sounds amazing",
"I'm so happy for you").
"""

from __future__ import annotations

import re

from remelink.models.local import text as tx

# -- chatter -------------------------------------------------------------------------------------
_INTERJECTION = (r"hey|hi|hiya|hello|heya|yo|wow+|woah|whoa|oh+|ooh+|aw+|aww+h*|yeah|yea|yes|yep|"
                 r"yup|no|nope|nah|ok|okay|sure|cool|nice|great|awesome|amazing|haha+|hah|lol|"
                 r"omg|yay+|woo+|woo+hoo+|wooh+|hooray|thanks(?: so much| a lot)?|thank you"
                 r"(?: so much)?|congrats|congratulations|well|so|um+|hmm+|ah+|right|totally|"
                 r"absolutely|definitely|exactly|honestly|gosh|man|dude|btw|anyway|anyways|"
                 r"indeed|true|agreed|sweet|awesome sauce|good (?:morning|evening|afternoon)|"
                 r"long time no (?:see|talk)|good to (?:see|hear from) you|yikes|ugh|phew|"
                 r"sorry(?: to hear that)?|of course|for sure|no way|ha|as for me|apart from that|"
                 r"by the way|on another note|speaking of (?:which|that)|in the meantime|"
                 r"other than that|besides that|also|plus|and|but|to be honest|tbh|in other news|"
                 r"guess what|funnily enough|funny enough|luckily|fortunately|unfortunately|"
                 r"sadly|anyhow|lately|recently|overall|otherwise|now|then|meanwhile|"
                 r"on the bright side|for me|personally|oh and|and yeah|yeah so|that said|"
                 r"it (?:really |sure |totally |definitely )?(?:is|was|does|did)|true that|"
                 r"i know|you know|i mean|see|look|listen")
_LEAD_RE = re.compile(rf"^(?:(?:{_INTERJECTION})(?:\s*[,!.~-]+\s*|\s+(?=[A-Z]))|"
                      r"(?:[A-Z][a-z]+)\s*[,!]+\s*)+", re.I)
_LEAD_ZH_RE = re.compile(r"^(?:(?:哈+|嗯+|哇+|啊+|哦+|噢+|嘿+|嗨|好的|好呀|好啊|是啊|是的|"
                         r"对啊|对呀|没错|谢谢你?|太好了|真棒|恭喜|加油|你好|早|晚安|拜拜|再见|好久不见|辛苦了|"
                         r"不客气|没问题)[，,！!。～~\s]*)+")

_REACTION_RE = re.compile(
    r"^(?:(?:that|this|which)(?:'s| is| was| sounds| looks| seems| must(?: have)? be(?:en)?|"
    r" would be| will be| feels| means)|it(?:'s| is| was| sounds| looks| seems| must(?: have)? "
    r"be(?:en)?| would be| will be| feels)\s+(?:(?:so|really|such|pretty|very|super|just|"
    r"totally|truly|always|definitely)\s+)*(?:an?\s+)?(?:great|awesome|amazing|cool|nice|"
    r"wonderful|fantastic|incredible|fun|good|lovely|beautiful|sweet|adorable|cute|exciting|"
    r"inspiring|impressive|crazy|wild|important|worth|the best|true|"
    r"understandable|a blast|a bummer|okay|ok)\b|sounds|looks like|seems like|what an?\b|"
    r"how (?:cool|fun|nice|great|sweet|awesome|amazing|wonderful|exciting|lovely|beautiful)|"
    r"you|your|good luck|"
    r"best of luck|take care|keep (?:it up|up|going|me posted|pushing|doing)|hope (?:you|it|"
    r"that|so|to)|can't wait|talk (?:soon|later|to you)|see you|catch you|bye|cheers|love "
    r"(?:that|it|this)|same here|me too|agreed|i know(?: what| how| right|,|$)|i agree|"
    r"i understand|i can (?:imagine|tell|see)|i bet|i hear you|i feel you|i get (?:it|that)|"
    r"i(?:'m| am) (?:so |really |very |super |truly )?(?:glad|happy|proud|sorry|thrilled|"
    r"excited) (?:for|to hear|that you|you)|i(?:'m| am) sure|i appreciate|i'd love to (?:hear|see)|"
    r"let me know|glad|happy to hear|nice to|great to|good to|thanks|thank you|congrat|"
    r"here's (?:to|hoping)|fingers crossed|all the best|no problem|anytime|enjoy\b|have fun|"
    r"stay (?:safe|strong)|wish me luck|i wish you|i get (?:how|why|what|it|that)|let's|"
    r"let us|i(?:'ll| will) (?:\w+ )?(?:keep you|let you know|remember|check (?:it|that|them) "
    r"out|think about it|give it a (?:try|shot|go)|try (?:it|that|them)|look into it)|"
    r"here(?:'s| is| are| ya go| you go)\b|check (?:this|it) out|"
    r"check (?:it|this|that) out|just remember|remember to|don't forget|i couldn't agree|"
    r"i (?:can|could)n't agree|i hear (?:you|that|ya)|i have no doubt|no doubt|i'm sure|"
    r"(?:tell|show|send|give|let) (?:me|us)\b|(?:check|look|come|go) (?:out|see|at|on)\b|"
    r"(?:have|take|try|enjoy|keep|stay|imagine|guess|wish) (?:a|an|the|it|this|that|some|"
    r"care|fun|me)\b)", re.I)
# Catching-up talk: "Been a busy week since we talked."
_CATCHING_UP_RE = re.compile(
    r"\s*\bsince (?:(?:we|i) (?:last )?|last (?:we|i) )(?:talked|spoke|chatted|caught up|"
    r"saw each other)\b|"
    r"\bfill you in\b|\bcatch(?:ing)? up\b|"
    r"\b(?:crazy|cool|big|awesome|exciting|amazing) (?:things?|news|stuff) "
    r"(?:happened|to share)\b|"
    r"\bsomething (?:cool|crazy|exciting|awesome|amazing|big) (?:happened|to share)|"
    r"\bit's been (?:a while|ages|so long)|"
    r"\b(?:been|it's been) (?:a )?(?:crazy|busy|wild|hectic|rough|long|good) "
    r"(?:week|few weeks|month|time|while|day)s?\b", re.I)
# "Playing video games helps me unwind": a gerund that is the subject of a later verb.
GERUND_SUBJECT_RE = re.compile(r"^[A-Za-z]+ing\b[^,.;]*?\b(?:is|are|was|were|helps?|makes?|"
                                r"gives?|keeps?|brings?|can|has|means|feels)\b", re.I)
_ADVICE_RE = re.compile(r"\byou(?:r|rself|'re|'ve|'ll)?\b", re.I)
# "We"/"us"/"our" alone is often everyone ("Nature has a way of leaving us speechless"): such a
# sentence is about the speaker only when it also says something concrete.
_SINGULAR_SELF_RE = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself)\b", re.I)
_CONCRETE_RE = re.compile(r"\b(?:\w+ed|went|got|made|took|saw|found|bought|met|had|did|won|ran|"
                          r"gave|left|came|wrote|ate|began|became|built|drove|flew|sold|"
                          r"last|next|ago|yesterday|tomorrow|tonight|weekend|\d+)\b", re.I)
_REACTION_ZH_RE = re.compile(r"^(?:你|听起来|看起来|真(?:好|棒|不错)|太(?:好|棒)了|祝|希望你|"
                             r"加油|恭喜|谢谢|感谢|辛苦|好厉害|厉害|羡慕|哈哈|没关系|不客气)")
# A first-person sentence about the other person's news ("I hope you ...", "I think you're ...").
_TOWARD_OTHER_RE = re.compile(
    r"\bi(?:'m| am)?\s+(?:\w+\s+){0,2}?(?:hope|think|bet|guess|know|feel|glad|happy|proud|"
    r"sorry|sure|appreciate|admire|wish|agree|understand|imagine|believe|love|miss|mean|can't "
    r"wait|trust|respect|thankful|grateful)\b[^.!?]*\byou(?:r|'re|'ve|'ll)?\b", re.I)

_FIRST_PERSON_RE = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself|we|we're|we've|we'll|"
                              r"we'd|us|our|ours|ourselves)\b", re.I)
# Subjectless reports open with a verb: "Just got back from...", "Been busy with...".
SUBJECTLESS_RE = re.compile(
    r"^(?:just|been|got|went|started|finished|had|made|took|found|bought|visited|joined|tried|"
    r"spent|gonna|going|working|trying|thinking|planning|learning|reading|watching|doing|"
    r"getting|taking|finally|recently|currently|still|also|signed|moved|adopted|picked|"
    r"booked|met|saw|attended|won|lost|ran|painted|wrote|baked|cooked|played|launched|"
    r"completed|hosted|organized|organised|volunteered|hiked|traveled|travelled|enrolled|"
    r"graduated|started|worked|used|had|hoping|feeling|thinking|scared|excited|stoked|was|"
    r"[a-z]+ed(?= (?:to|a|an|the|my|our|some|up|out|with|on|in|for|at|by)\b))\b", re.I)
_QUESTION_ZH_RE = re.compile(r"[？?]\s*$|(?:吗|呢|吧)[。！!]?\s*$")

_PHATIC_WORDS = tx.word_set("""
awesome amazing great cool nice wonderful fantastic incredible fun happy glad excited exciting
sweet lovely super really so very pretty totally definitely absolutely truly actually just
thanks thank congrats congratulations hope hoping hopefully wish love loved lovely like
sure yeah yes wow oh hey hi hello good bad best better feel feeling felt think thought know
knew mean means meant sound sounds look looks seem seems thing things stuff lot lots much many
always never ever still also even too thing way kind sort bit little big huge tons ton
glad proud sorry thrilled stoked blessed grateful thankful appreciate appreciated support
supportive time times day days moment life world people someone something everything anything
nothing definitely true right keep going get got getting go going went make made making take
want wanted need needed let lets sure maybe probably kinda gonna wanna yeah okay ok
one thing experience important special awesome blast joy happiness
""")
_STOP = tx.word_set("""
a an the and or but if then so to of in on at by for with from as into about over after before
is are was were be been being am have has had do does did will would can could should may
might must shall it its it's this that these those there here what which who whom whose when
where why how i me my mine myself we us our ours you your yours he him his she her they them
their theirs i'm i've i'd i'll we're we've you're you've he's she's they're that's there's
not no yes all any some every each both either neither very up out off down again further
once only own same than too s t just now don't didn't can't won't isn't wasn't aren't
""")
_WORD_RE = re.compile(r"[A-Za-z][A-Za-z'-]*|\d+")


def strip_chatter(sentence: str, names: tuple[str, ...] = ()) -> str:
    """The sentence without leading interjections and vocatives ("Wow, Nate!") or a trailing
    vocative (", Nate!")."""
    text = sentence.strip()
    if tx.is_cjk_text(text):
        return _LEAD_ZH_RE.sub("", text).strip()
    previous = None
    while previous != text:
        previous = text
        text = _LEAD_RE.sub("", text).strip()
        for name in names:
            text = re.sub(rf"^{re.escape(name)}\s*[,!:]+\s*", "", text).strip()
    for name in names:
        text = re.sub(rf",?\s*\b{re.escape(name)}\s*([.!]*)$", r"\1", text).strip()
    return text


def is_question(sentence: str) -> bool:
    return bool(_QUESTION_ZH_RE.search(sentence.strip()))


def content_words(sentence: str, names: tuple[str, ...] = ()) -> list[str]:
    skip = {n.lower() for n in names}
    return [w for w in (m.group(0).lower() for m in _WORD_RE.finditer(sentence))
            if w not in _STOP and w not in _PHATIC_WORDS and w not in skip and len(w) > 1]


def about_self(sentence: str) -> bool:
    """A statement in the first person, or a subjectless report of what the speaker did."""
    if tx.is_cjk_text(sentence):
        return "我" in sentence
    return bool(_FIRST_PERSON_RE.search(sentence) or SUBJECTLESS_RE.match(sentence))


def is_reaction(sentence: str) -> bool:
    """About the other person's news, not the speaker's own: "That sounds amazing!",
    "I'm so happy for you", "I hope you have a great time"."""
    if tx.is_cjk_text(sentence):
        return bool(_REACTION_ZH_RE.match(sentence))
    return bool(_REACTION_RE.match(sentence) or _TOWARD_OTHER_RE.search(sentence))


def fact_sentence(sentence: str, names: tuple[str, ...] = (), *, min_words: int = 3) -> str | None:
    """The sentence as a fact about its speaker (chatter stripped), or None for chatter."""
    text = strip_chatter(sentence, names)
    if not text or is_question(text):
        return None
    if tx.is_cjk_text(text):
        core = re.sub(r"[我你他她们的了是在也都就很太真还吧呢啊呀哦嗯，,。！!？?、\s]", "", text)
        if is_reaction(text) or not about_self(text) or len(core) < 5:
            return None
        return text
    # "Something cool happened since we last talked - I got to go to a workshop": the
    # catching-up words go, what follows them stays.
    text = re.sub(r"\s+([,;:.!])", r"\1", _CATCHING_UP_RE.sub("", text)).strip(" ,;:-—–")
    text = text[:1].upper() + text[1:]
    if not text or is_reaction(text) or not about_self(text):
        return None
    if _ADVICE_RE.search(text) and not _SINGULAR_SELF_RE.search(text):
        return None  # advice to the other person ("Taking time for yourself ... helps")
    if not _SINGULAR_SELF_RE.search(text) and not SUBJECTLESS_RE.match(text) and \
            not _CONCRETE_RE.search(text):
        return None
    # A number or a name says something on its own ("Been doing it for 3 years").
    concrete = len(re.findall(r"\b\d+\b|(?<!^)(?<![.!?] )\b[A-Z][a-z]+", text))
    if len(content_words(text, names)) + min(concrete, 1) < min_words:
        return None
    return text


def detail_sentence(sentence: str, names: tuple[str, ...] = (), *, min_words: int = 3
                    ) -> str | None:
    """A sentence that is not about the speaker but says something concrete next to what
    they tell ("It has an almond flour crust, chocolate ganache and fresh raspberries."), or
    None for chatter, questions, reactions and remarks about the other person."""
    text = strip_chatter(sentence, names)
    if not text or is_question(text) or is_reaction(text) or _CATCHING_UP_RE.search(text):
        return None
    if tx.is_cjk_text(text):
        core = re.sub(r"[我你他她们的了是在也都就很太真还吧呢啊呀哦嗯，,。！!？?、\s]", "", text)
        return text if len(core) >= 8 and "你" not in text else None
    if re.search(r"\byou(?:r|'re|'ve|'ll)?\b", text, re.I):
        return None
    if len(content_words(text, names)) < min_words:
        return None
    return text


_CAPTION_RE = re.compile(r"^(?:a |an )?(?:photo|photography|picture|image|snapshot)s? of\s+", re.I)


def photo_sentence(caption: str, speaker: str, lang: str) -> str:
    """A shared photo as a sentence ("a photo of a chocolate raspberry tart" -> "Joanna shared a
    photo of a chocolate raspberry tart.")."""
    text = _CAPTION_RE.sub("", caption.strip()).rstrip(".。")
    if lang == "zh":
        return f"{speaker}分享了一张照片：{text}。"
    return f"{speaker} shared a photo of {text}."


def is_stop(word: str) -> bool:
    """A word that says nothing on its own: a stop word or a word of chatter."""
    return word in _STOP or word in _PHATIC_WORDS
