"""Text helpers of the local engine, for English and Chinese: sentences, cue words, titles,
and the facts a merge must agree on (numbers with units, dates, negation, named entities).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from remelink import mdblocks
from remelink.models.local import fenced

CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_CJK_RE = re.compile(f"[{CJK}]")
_SENT_END_RE = re.compile(r"(?<=[.!?。！？；;])\s+|(?<=[。！？；])")
_ABBREV = ("e.g.", "i.e.", "etc.", "vs.", "cf.", "approx.", "no.", "fig.")


def word_set(words: str) -> frozenset[str]:
    """A word list written as running text (one long string reads better than a literal)."""
    return frozenset(words.split())


# An identifier opening a text (`execution_timeout=...`, `max_queue_delay_us`, `p99`,
# `catalog_v8`): written in lower case on purpose, it keeps its case at a title's start. A
# hyphenated word (`on-call`, `os-catalog`) may be English: it is capitalised as before.
_IDENT_START_RE = re.compile(r"[a-z][a-z0-9-]*(?:[_./=][\w.=/-]*|\d[\w-]*)(?![\w])")


def capitalised(text: str) -> str:
    """The text with its first letter in upper case, unless it opens with an identifier or a
    name with a capital inside (`macOS`, `iPhone`: `MacOS` is no one's spelling)."""
    if not text or _IDENT_START_RE.match(text) or re.match(r"[a-z]+[A-Z]", text):
        return text
    return text[:1].upper() + text[1:]


_FENCED_RE = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n]*\n(.*?)^[ \t]*\1", re.M | re.S)


_COMPOUND_PARTS = word_set("""on in off up out by to of over down back at re pre non self well
long short all one two sign roll check follow built""")


def note_case(title: str, body: str) -> str:
    """`title` with its first word spelled as the note spells it: a tool or a service the note
    writes in lower case (`hexdump`, `scp`, `journal-svc`) stays so at a title's start, where
    capitalising made a name no one writes (`Hexdump`, `Scp`, `Journal-svc`). The note writes
    it so when it runs it as code (an inline span or a fenced block's word) or opens a heading
    with it, in lower case, hyphenated (`# payout-runner OOMKilled`); and never capitalises it
    inside a sentence or at a heading's start (`... with Python` keeps `Python ...`)."""
    m = re.match(r"([A-Z])([a-z0-9]+(?:-[a-z0-9]+)*)(?![\w.'’])", title)
    if not m or is_cjk_text(title):
        return title
    word = m.group(0)
    low = word[:1].lower() + word[1:]
    # The program a command runs: an inline span or a fenced line that opens with the word.
    lines = [*_CODE_SPAN_RE.findall(body),
             *(line for b in _FENCED_RE.finditer(body) for line in b.group(2).splitlines())]
    run = any(re.match(rf"\s*(?:[$%>]\s+)?{re.escape(low)}(?![\w.-])", line) for line in lines)
    # `on-call`, `follow-up`, `self-serve`: English compounds, capitalised as words are; a
    # gerund or a participle (`Running ...`, `Combined ...`) is English too.
    english = any(part in _COMPOUND_PARTS for part in low.split("-")) or \
        low.endswith(("ing", "ed")) or low in _STOP_TAIL or low in _LEAD_INS
    heading = rf"^#+[ \t]+(?:[^:\n]{{1,30}}:[ \t]+)?{re.escape(low)}(?![\w-])"
    written = (run and not english) or (
        "-" in low and not english and re.search(heading, body, re.M) is not None)
    prose = _FENCED_RE.sub(" ", _CODE_SPAN_RE.sub(" ", body))
    # The author capitalises it inside a sentence or at a heading's start (`# Subtests in ...`).
    capital = re.search(rf"[a-z,][ \t]+{re.escape(word)}(?![\w-])|^#+[ \t]+{re.escape(word)}"
                        r"(?![\w-])", prose, re.M)
    return low + title[len(word):] if written and not capital else title


# Common Chinese surnames: a two- or three-character word before 希望 / 喜欢 / 说 is a person's
# name only when it starts with one (团队, 用户, 客服 are not people).
CJK_SURNAMES = ("王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余"
                "杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史"
                "陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤欧阳司上官诸葛小老阿")


_ASCII_LETTER_RE = re.compile(r"[A-Za-z]")


def is_cjk_name(word: str) -> bool:
    return 2 <= len(word) <= 3 and word[0] in CJK_SURNAMES and is_cjk_text(word)


def is_cjk_text(text: str) -> bool:
    cjk = len(_CJK_RE.findall(text))
    if not cjk:
        return False  # most text: no Latin letter needs counting (a loop per character did)
    latin = len(_ASCII_LETTER_RE.findall(text))
    return cjk * 5 >= cjk + latin


_FULL_END_RE = re.compile(r"(?<=[.!?。！？])\s+|(?<=[。！？])")


_INITIALISM_RE = re.compile(r"(?:^|[\s(])(?:[A-Za-z]\.){2,}$")
_HOLD, _HELD = "\ue020", "\ue021"  # private use, apart from fenced.py's
_HELD_RE = re.compile(f"{_HOLD}(\\d+){_HELD}")  # a piece of code held out of the split


def around_code(text: str, prose: Callable[[str], str], code: Callable[[str], str]) -> str:
    """`text` with `prose` applied to its words and `code` to each piece of code in it (an
    inline span, CommonMark's way, or a folded fenced block), in order."""
    ranges = [(m.start(), m.end()) for m in fenced.TOKEN_RE.finditer(text)]
    plain = fenced.TOKEN_RE.sub(lambda m: "\0" * len(m.group(0)), text) if ranges else text
    ranges += [(start, end) for start, end, _ in mdblocks.code_spans(plain)]
    pieces, pos = [], 0
    for start, end in sorted(ranges):
        if start < pos:
            continue  # inside a piece already taken
        pieces += [prose(text[pos:start]), code(text[start:end])]
        pos = end
    return "".join([*pieces, prose(text[pos:])])


def sentences(text: str, *, clauses: bool = True) -> list[str]:
    """Split prose into sentences; keeps abbreviations and decimals together. With `clauses`
    a semicolon ends a piece too (comparisons want the smallest claims); without it, "Never
    use KEYS; use SCAN" stays one sentence, as written. Code is never split: an inline span
    (`Container killed. 14.2 GB used.`) or a folded fenced block is one piece, whatever its full
    stops."""
    text = " ".join(text.split())
    if not text:
        return []
    text, held = _hold_code(text)
    parts = (_SENT_END_RE if clauses else _FULL_END_RE).split(text)
    out: list[str] = []
    for part in parts:
        part = part.strip()
        if not part:
            continue
        if out and (out[-1].lower().endswith(_ABBREV) or
                    (_INITIALISM_RE.search(out[-1]) and part[:1].isascii() and
                     part[:1].islower())):
            # An abbreviation's dot ends no sentence: a known one, or letters with dots that a
            # lowercase word follows ("big-endian v.s. little-endian", "at 9 a.m. sharp"). A
            # lowercase word alone starts many a sentence ("codecov.io then reports ...").
            out[-1] = f"{out[-1]} {part}"
        else:
            out.append(part)
    return _restore_code(out, held)


def _hold_code(text: str) -> tuple[str, list[str]]:
    """`text` with each piece of code (an inline span, a folded fenced block) replaced by a
    placeholder no splitter cuts, and the pieces in order."""
    held: list[str] = []
    if ("`" not in text and fenced.START not in text) or _HOLD in text:
        return text, held

    def hold(code: str) -> str:
        held.append(code)
        return f"{_HOLD}{len(held) - 1}{_HELD}"

    return around_code(text, lambda prose: prose, hold), held


def _restore_code(parts: list[str], held: list[str]) -> list[str]:
    if not held:
        return parts
    return [_HELD_RE.sub(lambda m: held[int(m.group(1))], part) for part in parts]


# -- cues (lowercased substrings for English, plain substrings for Chinese) ----------------------
PREFERENCE_CUES = ("prefers", "prefer ", "preference", "likes ", "dislikes", "doesn't like",
                   "does not like", "hates", "wants ", "would rather", "asked for", "asked to",
                   "favours", "favors", "interested in", "happy with", "感兴趣", "偏好", "喜欢",
                   "不喜欢", "更喜欢", "希望", "讨厌", "习惯", "倾向")
DECISION_CUES = ("decided", "decision", "we will ", "we'll ", "agreed", "we chose", "chose to",
                 "going forward", "from now on", "settled on", "approved", "决定", "约定", "统一",
                 "改为", "今后", "以后都", "同意", "批准",
                 # who owns what is decided too (`Ines takes over the migration`, `mentor 由她来当`)
                 " takes over ", " owns ", " will own ", "in charge of", "接手", "来当", "来负责")
RULE_CUES = ("must ", "must not", "need to", "needs to", "需要", "should ", "should not",
             "always ", "never ", "required",
             "mandatory", "not allowed", "no more than", "at most", "at least", "only ",
             "必须", "应该", "应当", "总是", "不要", "禁止", "不得", "务必", "不超过", "至少",
             "只能",
             # A line that calls itself a rule states one ("New rule from the postmortems: ...",
             # "按规定要 shadow 满两轮").
             "new rule", " rule:", "the rule is", "规定", "规则是")
LESSON_CUES = ("lesson", "learned", "root cause", "caused", "because", "fails", "failed",
               "failure", "breaks", "broke", "pitfall", "gotcha", "watch out", "beware",
               "教训", "原因", "导致", "失败", "踩坑", "注意", "坑")
DEFINITION_CUES = (" is a ", " is an ", " means ", " refers to ", " is the ", " are a ",
                   "是指", "指的是", "定义为", "是一种", "是一个")
# A decision or rule about how people work (a team convention) goes to `personal`; one about how
# a system behaves is a precedent or principle for `wiki`.
CONVENTION_CUES = ("convention", "no more than", "at most", "at least", "every time", "our team",
                   "the team", "each pr", "every pr", "code review", "in review", "约定", "规范",
                   "每个 pr", "每个pr", "每次", "团队", "不超过", "至少", "评审")
CHATTER_CUES = ("attendees", "attendee", "participants", "present:", "agenda", "thanks",
                "thank you", "will check", "next week", "tomorrow", "lunch", "参会", "出席",
                "议程", "谢谢", "下周", "明天", "午饭")
# Of those, the ones that only date a line: a line that also states a value (below) is not
# small talk for being about tomorrow ("发布：`values-prod.yaml`，明天上午窗口发").
WHEN_CUES = ("will check", "next week", "tomorrow", "下周", "明天")

# A value a note states: code, or a number with what it counts or measures (`10 minutes`,
# `40 %`, `€180/month`, `41.7M`, `400 行`, `两轮`). A bare number (`4th floor`, `~12`) or a date
# (`3 月`, `5 Mar`) is not one.
_UNIT_EN = ("ms|s|sec|secs|seconds?|min|mins|minutes?|h|hrs?|hours?|days?|weeks?|months?|"
            "years?|quarters?|working days?|business days?|%|percent|x|k|m|b|kb|mb|gb|tb|kib|"
            "mib|gib|tib|rps|qps|req/s|requests?|rows?|lines?|pages?|partitions?|replicas?|"
            "connections?|conns?|attempts?|retries|tries|times|steps?|rounds?|shards?|nodes?|"
            "instances?|pods?|cores?|threads?|workers?|postings?|messages?|events?|items?|"
            "users?|errors?|breaks?|incidents?|sev[0-9]?s?|prs?|producers?|mismatches|pct|pp")
_UNIT_ZH = ("秒|分钟|分|小时|天|周|个月|次|轮|行|页|步|个|条|台|倍|人|毫秒|%|万|亿|"
            "千|百|笔|张|份|层|位|片|核|副本|分区|连接|实例")
_NUM = r"(?<![\d.,])\d[\d.,]*+"  # a whole number, read once (no backtracking on `1111…`)
_ZH_DIGITS = "一二两三四五六七八九十百千"
_ZH_NUM = rf"(?<![{_ZH_DIGITS}])(?:[二两三四五六七八九十百千]|一(?=[{_ZH_DIGITS}]))[{_ZH_DIGITS}]*+"
VALUE_RE = re.compile(
    rf"`[^`\n]+`|[€$£¥]\s?\d|{_NUM}\s?(?:%|[kKMB]\b)|"
    rf"\b{_NUM}\s?(?:{_UNIT_EN})\b|"
    # (a lone 一 counts nothing: `最后一次`, `一个` are words, not values)
    rf"(?:{_NUM}|{_ZH_NUM})\s?(?:{_UNIT_ZH})|"
    r"\b\d{1,2}(?::\d{2})?\s?(?:am|pm)\b|\b\d{1,2}:\d{2}\b", re.I)


# A clause that asks (`有人想喝奶茶吗`, `Anyone free at 12?`): a request to the room, not a
# statement of the note, whatever it counts.
_ASKS_RE = re.compile(r"[?？]|吗\s*(?:[，,。.!！；;～~]|$)")


# An address in prose (`https://...`, `www....`), up to a space or a bracket that closes it.
URL_RE = re.compile(r"\b(?:https?://|www\.)[^\s<>()\[\]]+")


def asks(text: str) -> bool:
    """The statement asks something (a question mark, or a Chinese clause ending on 吗)."""
    return bool(_ASKS_RE.search(fenced.strip(text)))


def states_value(text: str) -> bool:
    """The text states a value (SPEC §8: a threshold, a number, code), as VALUE_RE reads it."""
    return bool(VALUE_RE.search(fenced.strip(text))) or fenced.has_block(text)

# A wish nobody committed to ("Someone should fix ...", "Lunch idea: we should ... again",
# "要不要再去爬一次山"): no one decided it, so it is no rule and no decision.
_WISH_RE = re.compile(
    r"^[^:：\n]{0,40}\b(?:idea|suggestion|wish)\s*[:：]|"
    r"^(?:someone|somebody|anyone|maybe we|we could|"
    r"it would be (?:nice|great|good)|would be (?:nice|great)|wouldn't it be|should we|"
    r"can someone|could someone|anybody)\b|"
    # "We should do the offsite again": a repeat nobody committed to, not a rule.
    r"^(?:we|let's|let us)\s+(?:should\s+)?(?:do|have|try|go|get|book|plan)\b[^.;]*\bagain\b|"
    r"要不要|有人应该|有人得|有没有人|谁有空|"
    r"(?:[^:：\n]{0,20}(?:想法|主意|提议)\s*[:：])", re.I)


# A question answered where it is asked (`何伟问 hotfix 要不要发布单：要，事后补`): the answer is
# what the line states.
_ANSWERED_RE = re.compile(r"^[^?？。！!]{0,60}(?:要不要|should we)[^?？。！!:：]*[:：]\s*\S", re.I)


_WISH_LABEL_RE = re.compile(r"^[^:：`\n]{1,30}[:：]\s*")


def is_wish(text: str) -> bool:
    """A suggestion or a wish without anyone deciding it (SPEC §8: never a node)."""
    plain = clean_statement(text).lstrip("-*+ ")
    # after a short label too (`Team lunch: someone should book for 12 people`)
    told = _WISH_LABEL_RE.sub("", plain, count=1)
    return bool(_WISH_RE.search(plain) or _WISH_RE.search(told)) and \
        not _ANSWERED_RE.match(plain)


# Section headings: what kind of material a section holds.
HEADING_KINDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("chatter", ("attendee", "participant", "agenda", "todo", "to-do", "action item",
                 "参会", "出席", "议程", "待办", "行动项")),
    ("followup", ("next step", "follow-up", "follow up", "followup", "open question", "revisit",
                  "后续", "遗留")),
    ("investigation", ("steps i took", "what i tried", "what we tried", "investigation",
                       "debugging", "timeline", "diagnosis", "排查", "定位过程")),
    ("procedure", ("how to", "how-to", "steps", "step by step", "runbook", "procedure", "recipe",
                   "setup", "set up", "install", "checklist", "操作", "步骤", "如何", "怎么",
                   "流程", "方法", "做法")),
    ("failure", ("failure mode", "failure", "caveat", "pitfall", "gotcha", "known issue",
                 "失败", "注意事项", "坑", "风险")),
    ("cause", ("root cause", "cause", "根因", "原因")),
    ("fix", ("fix", "resolution", "solution", "remediation", "workaround", "修复", "解决")),
    ("symptom", ("symptom", "what happened", "problem", "issue", "impact", "现象", "症状",
                 "问题", "经过")),
    ("context", ("context", "background", "situation", "背景", "现状")),
    ("why", ("why", "rationale", "reasoning", "reason", "理由", "为什么")),
    ("decision", ("decision", "decided", "agreed", "outcome", "conclusion",
                  "决定", "决策", "结论", "约定")),
    ("preference", ("preference", "likes", "style", "偏好", "喜好", "习惯")),
    ("lesson", ("lesson", "learned", "takeaway", "postmortem", "retro", "insight",
                "教训", "经验", "复盘")),
    ("definition", ("definition", "concept", "what is", "glossary", "principle", "定义", "概念",
                    "原理", "术语", "原则")),
    ("finding", ("finding", "observation", "result", "发现", "观察", "结果")),
)


def heading_kind(heading: str) -> str:
    """What kind of material a section holds, from a cue its heading writes: a Latin cue at the
    start of a word (`Lessons learned`, `Installing`; not the `todo` of `autodoc` or the `cause`
    of `because`), a Chinese one anywhere."""
    low = heading.lower()
    if _TO_DO_RE.match(low):
        return "chatter"  # `To do`, not the `to do` of `How to do it`
    for kind, cues in HEADING_KINDS:
        if _cue_re(cues).search(low):
            return kind
    return "neutral"


_TO_DO_RE = re.compile(r"\W*to do(?: list)?\W*$")


def has_cue(text: str, cues: tuple[str, ...]) -> bool:
    """A cue in `text`: a Latin cue from the start of a word (`never` is not in `whenever`,
    `only` not in `commonly`, `decided` not in `undecided`; `lesson` is in `lessons`), a cue
    that opens on a space (` is a `) or a Chinese one as written."""
    return _cue_re(cues).search(f" {text.lower()} ") is not None


@lru_cache(maxsize=64)
def _cue_re(cues: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(
        rf"(?<![a-z0-9_]){re.escape(c)}" if c[:1].isascii() and c[:1].isalnum()
        else re.escape(c) for c in cues if c))


@lru_cache(maxsize=32)
def _word_cue_re(cues: tuple[str, ...]) -> re.Pattern[str]:
    latin = sorted({c.strip() for c in cues if c.isascii() and c.strip()}, key=len, reverse=True)
    other = [re.escape(c) for c in cues if not c.isascii()]
    parts = [rf"(?<![a-z0-9_'’-])(?:{'|'.join(map(re.escape, latin))})(?![a-z0-9_'’-])"] \
        if latin else []
    return re.compile("|".join(parts + other) or r"(?!)")


def has_word_cue(text: str, cues: tuple[str, ...]) -> bool:
    """`has_cue` for cues that are whole words or phrases: "again" is not in "against", "agreed"
    not in "disagreed", "still" not in "distill", "confirmed" not in "unconfirmed" (Chinese
    cues are matched as written)."""
    return _word_cue_re(cues).search(text.lower()) is not None


_WORD_RE = re.compile(r"[A-Za-z][A-Za-z'-]*|\d+(?:\.\d+)?|[" + CJK + r"]+")
_STOP_TAIL = {"a", "an", "the", "to", "of", "for", "and", "or", "in", "on", "at", "by", "with",
              "that", "which", "is", "are", "be", "any", "all", "its", "their", "this", "how",
              "what", "why", "when", "where", "who", "so", "but", "as", "if", "than", "very",
              "really", "some", "my", "our", "his", "her"}
_LEADING_CUE_RE = re.compile(
    r"^(?:(?:we|the team|team)\s+(?:have\s+)?(?:decided|agreed)\s+(?:to|that)\s+|"
    r"(?:[\w'-]+\s){0,3}?(?:pointed out|noted|said|found|observed|mentioned|reported|explained|"
    r"learned|realised|realized|confirmed|stressed)\s+that\s+|"
    r"(?:it\s+turns\s+out|turns\s+out)\s+(?:that\s+)?|"
    r"(?:from\s+now\s+on|going\s+forward|starting\s+(?:today|now))\s*,?\s+|"
    r"(?:decision|decided|agreed|note|rule|lesson|preference)s?\s*[:：]\s*|"
    r"(?:决定|约定|结论|规则|教训|偏好)[:：]?|"
    r"[\u4e00-\u9fff]{1,6}(?:指出|提到|强调|发现|认为)[，,]?)", re.I)


# Wikilinks and markdown links, linear: no part may contain the bracket that opens a link, so
# a line of `[[` repeated 8,000 times is one pass, not 8,000 scans to its end (it was 116 s).
_WIKILINK_RE = re.compile(r"!?\[\[([^\[\]|#\n]*)(?:#[^\[\]|\n]*)?(?:\|([^\[\]\n]*))?\]\]")
_MD_LINK_RE = re.compile(r"\[([^\[\]\n]+)\]\([^()\n]*\)")
_ITEM_MARK_RE = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_EMPHASIS_RE = re.compile(r"\*\*|__")
_CODE_SPAN_RE = re.compile(r"`([^`\n]*)`")


# Pure functions of a text that the local engine asks again and again about the same few hundred
# texts in a run (a unit's statement against every candidate node, in every decision rule): a
# 60-note vault made 8,202 calls of clean_statement on 458 texts and 4,389 of facts on 304.
# Remembered per process, bounded; what they return is immutable (a str, a frozen Facts).
TEXT_CACHE = 4096


@lru_cache(maxsize=TEXT_CACHE)
def clean_statement(text: str) -> str:
    """A statement with list markers, emphasis and trailing link noise removed. Inline code
    keeps its backticks: what people reuse reaches the node as code (SPEC §4)."""
    text = _ITEM_MARK_RE.sub("", text)
    if "`" in text:  # code keeps its `__init__` and `[x](y)`: only the prose is cleaned
        return " ".join(around_code(text, _clean_prose, lambda code: code).split()).strip()
    return " ".join(_clean_prose(text).split()).strip()


def _clean_prose(text: str) -> str:
    text = _EMPHASIS_RE.sub("", text)
    text = _WIKILINK_RE.sub(
        lambda m: m.group(2) or m.group(1).rsplit("/", 1)[-1].removesuffix(".md"), text)
    return _MD_LINK_RE.sub(r"\1", text)


# A bracketed span that may run over lines and holds no bracket: `[[x]]`, and the
# `${query[[\n  from ...\n]]}` of a SilverBullet note, which is no link until its lines are
# joined into one. Linear: the span stops at the first bracket.
_BRACKETS_RE = re.compile(r"!?\[\[([^\[\]]*)\]\]")


def unlinked(text: str) -> str:
    """`text` (a unit's words) with its wikilinks as their display text, as clean_statement
    gives them, code left as it is. The engine writes only the links it makes itself (related
    nodes, Sources): a link copied from the unit may name a page that does not exist (an
    aspiring page, a query written in brackets over several lines that becomes a link when
    the engine joins the lines), and the node would fail its own link check."""
    if "[[" not in text:
        return text

    def plain(prose: str) -> str:
        while True:
            out = _BRACKETS_RE.sub(_shown, prose)
            if out == prose:
                return out
            prose = out

    return around_code(text, plain, lambda code: code)


def _shown(m: re.Match[str]) -> str:
    inner = m.group(1)
    if "\n" in inner:
        return inner  # not a link where it was written: only its brackets go
    target, _, alias = inner.partition("|")
    return alias or target.split("#", 1)[0].rsplit("/", 1)[-1].removesuffix(".md")


def core_statement(text: str) -> str:
    """The statement without list markers and leading reporting words ("The auditor pointed out
    that X" -> "X"), first letter capitalised."""
    text = _LEADING_CUE_RE.sub("", clean_statement(text))
    return capitalised(text)


# A Chinese clause that only says when what follows starts ("从 4 月开始", "自下周起").
_ZH_FROM_RE = re.compile(r"^(?:从|自|由)[^，,。]{1,10}(?:开始|起)$")


# A clause that only says who agreed ("Dana 同意了", "刘洋也点头了", "Dana OK'd it"): it carries
# the decision's cue but says nothing of what was decided; the clause it agrees to is the topic.
_WHO_AGREED_RE = re.compile(
    r"^(?:[A-Z][\w'’-]*|[\u4e00-\u9fff]{2,3})\s*(?:那边|这边)?\s*(?:也|都|已经)?\s*"
    r"(?:同意|批准|拍板|点头|OK|ok|确认)了?(?:\s*(?:it|this|that))?$"
    r"|^(?:[A-Z][\w'’-]*)\s+(?:also\s+)?(?:agreed|approved|OK'd|signed off)"
    r"(?:\s+(?:it|this|that|on it))?$")


def _cue_clause(clauses: list[str]) -> str:
    """The first clause that carries a cue (what the statement is about), else the first. A
    clause that is the cue word alone ("决定：从 4 月开始，月结前封版四天") labels the clause
    after it (past a lead-in saying when it starts): that one is the statement."""
    for cues in (PREFERENCE_CUES, RULE_CUES, DECISION_CUES):
        words = {c.strip() for c in cues}
        for i, clause in enumerate(clauses):
            if has_cue(clause, cues) and not _WHO_AGREED_RE.match(clause.strip()):
                if clause.strip().lower() in words:
                    rest = [c for c in clauses[i + 1:] if not _ZH_FROM_RE.match(c)]
                    if rest:
                        return rest[0]
                    continue
                return clause
    return clauses[0] if clauses else ""


# A statement is *stated as a rule* only in the words of obligation: a modal that binds
# (`must`, `never`, `必须`, `禁止`), a limit with its number, or the word rule/policy itself.
# The softer RULE_CUES (`should`, `need to`, `at least`, `应该`, `只能`) also hedge, guess,
# wish or describe (`they should be back soon`, `at least not in the open source version`,
# `Hana 应该支持`), so a Sources sentence does not call a statement a rule on them (SPEC §8).
# Code is not words.
_RULE_WORDS_RE = re.compile(
    r"\b(?:must|never|always|required|mandatory|not allowed|forbidden|prohibited|rules?|"
    r"polic(?:y|ies))\b|必须|禁止|不得|务必|不允许|一律|规则|规定|原则上"
    # a limit with its number (`no more than 400 lines`, `至少 2 人`) binds; `at least not` does not
    r"|\b(?:no more than|no less than|at most|at least|up to)\s+\d"
    r"|(?:不超过|至少|最多|不少于)\s*\d",
    re.I)


def states_rule(text: str) -> bool:
    """Whether the statement words itself as a rule (see _RULE_WORDS_RE)."""
    return bool(_RULE_WORDS_RE.search(_CODE_SPAN_RE.sub(" ", fenced.strip(text))))


# A short sentence that leans on what came before it (`So you should use that instead.`, `This
# only happens if the folder exists.`, `I decided to try this out.`) says nothing on its own: its
# subject is a pro-form whose antecedent is in another sentence. It opens with one, or ends on
# one (`... try this out`); it names nothing (no code, no number, no name) that could carry it.
_PROFORM_OPEN = word_set("""this that it these those they so which here there as such
                            it's that's they're there's here's""")
_PROFORM_END = word_set("this that it these those them")
_PARTICLES = word_set("out up in on off again too instead first now anyway above below")
LEANING_WORDS = 9


def leans_on_context(text: str) -> bool:
    """Whether an English statement is a fragment of its neighbour (see _PROFORM_OPEN)."""
    plain = fenced.strip(text)
    if "`" in plain or is_cjk_text(plain) or re.search(r"\d", plain):
        return False
    words = re.findall(r"[A-Za-z][A-Za-z'’-]*", plain.replace("’", "'"))
    if not words or len(words) > LEANING_WORDS:
        return False
    if any(w[:1].isupper() and w.lower() not in _PROFORM_OPEN and w != "I" for w in words[1:]):
        return False  # a name carries it
    low = [w.lower() for w in words]
    tail = low[:]
    while len(tail) > 1 and tail[-1] in _PARTICLES:
        tail.pop()
    return low[0] in _PROFORM_OPEN or tail[-1] in _PROFORM_END


def without_code_marks(text: str) -> str:
    """Plain text for a title or a description: inline code without its backticks (a name is
    words; the body keeps the code as code)."""
    return _CODE_SPAN_RE.sub(r"\1", fenced.strip(text)).replace("`", "")


def first_sentence(text: str) -> str:
    """The first whole sentence of `text`: it ends at `.`, `!` or `?` followed by a space or
    the end (a dot inside `journal.postings.v2`, `date.today()` or a URL ends nothing), or at
    a Chinese full stop, and never inside inline code or brackets."""
    depth = 0
    code = False
    for i, ch in enumerate(text):
        if ch == "`":
            code = not code
        elif code:
            continue
        elif ch in "([（【":
            depth += 1
        elif ch in ")]）】":
            depth = max(0, depth - 1)
        elif depth == 0 and (ch in "。！？" or (ch in ".!?" and (
                i + 1 == len(text) or text[i + 1].isspace()) and
                not text[:i + 1].lower().endswith(_ABBREV))):
            return text[:i + 1]
    return text


# Words a phrase cannot end on: they need what follows (`... fetched again from`, `... on PyPI
# we`). A title cut to a few words drops them.
# Where a long title may end: before one of these words the phrase before it is whole.
TITLE_CUT_BEFORE = word_set("""with for to at in on from about into by of and or as like over
through during across around near than that because unless so but""")
DANGLING = frozenset(_STOP_TAIL) | word_set("""from into onto over under about after before via per
was were been being we i you they it he she them us these those not no can could will would
should must may might has have had do does did because while then your whose whom since until
unless whether either neither both each every""")
# A named person's reporting frame before what they said ("Priya said it again", "Dana
# repeated", "陈静再次强调"): the claim is theirs, the frame is no topic.
REPORTED_RE = re.compile(r"[A-Z][a-z]+ (?:said|says|stressed|repeated|reiterated|insisted)"
                         r"(?: (?:it|this|that))?(?: again)?|[\u4e00-\u9fff]{2,3}(?:再次)?"
                         r"(?:强调|重申|说)")
_LABEL_RE = re.compile(r"^([^:：`\n]{1,30}?)\s*:\s+(\S.*)$")
_CJK_UNIT_RE = re.compile(r"[A-Za-z0-9_.=/+-]+|\s+|.", re.S)
_ZH_LABEL_RE = re.compile(rf"^[{CJK}]{{2,4}}[：:]\s*(\S.{{7,}})$")
# A question before a colon and the start of its answer: "何伟问 hotfix 要不要发布单：要，事后补".
_ZH_ASKED_RE = re.compile(r"^([^：:，,。]*(?:要不要|是不是|能不能|可不可以|是否|吗)"
                          r"[^：:，,。]*)[：:]\s*([^，,。；;！？!?]{1,12})")
# A finite verb: a label that has one is a clause ("Export is async: ..."), a rest that has
# one is a claim of its own.
FINITE_RE = re.compile(r"\b(?:is|are|was|were|must|should|will|can|cannot|can't|needs?|has|"
                       r"have|runs?|goes|takes|gets|fails?|breaks?|works?|uses?|prefers?|"
                       r"likes?|wants?)\b", re.I)


def _bare_list(text: str) -> bool:
    """`payouts, fees, refunds`: short items between commas, no verb among them."""
    items = [i.strip() for i in re.split(r",|\band\b", text.rstrip(" ."))]
    return len(items) >= 2 and all(0 < len(i.split()) <= 3 for i in items) and \
        not FINITE_RE.search(text)
_LEAD_INS = word_set("""again first second then next finally instead also so now here there
however note ok okay yes well anyway sadly unfortunately basically actually thankfully luckily
to if when since after before once in for with as by on otherwise meanwhile still later
today yesterday from starting until""")


def _is_lead_in(clause: str) -> bool:
    """A short clause that only leads in ("Again", "To use it", "Sadly"): four words at most,
    opening on an adverb, a conjunction or an infinitive."""
    words = clause.split()
    if not words or len(words) > 4:
        return False
    first = words[0].lower()
    return first in _LEAD_INS or (len(words) == 1 and first.endswith("ly"))


_ZH_BARE_PRONOUN_RE = re.compile(r"[他她](?!们)")


# A day named from the day the note was written (`today`, `this morning`, `昨天`): right in the
# note, which has a date, wrong in a title or a description read alone, later (SPEC §11). With
# the word that ties it to the clause (`since this morning`, `until tomorrow`); a leading one
# takes its comma.
_DAYS = (r"(?:today|tonight|yesterday|tomorrow|this (?:morning|afternoon|evening)|last night)"
         r"\b(?!['’-])")
_RELATIVE_DAY_RE = re.compile(
    rf"^(?:(?:starting|from|as of)\s+)?{_DAYS}\s*,?\s*|"
    rf"\s*(?<!\S)(?:(?:since|until|from|by|on|for|as of|starting|earlier|later)\s+)?{_DAYS}|"
    r"(?:从|到|直到|截至)?(?:今天早上|今天上午|今天下午|今天|昨天|明天|今早|今晚|昨晚)(?:起|开始)?[，,]?",
    re.I)
_QUOTED_RE = re.compile(r"[\"“「『][^\"“”「」『』\n]*[\"”」』]")


def without_relative_days(text: str) -> str:
    """`text` without the days it names relative to when it was written (`OpenAI announced new
    models today.` -> `OpenAI announced new models.`, `shadow mode 昨天上线` -> `shadow mode
    上线`), except inside quotation marks (「今天没空，明天看」 is what someone said) and in
    code."""
    def plain(part: str) -> str:
        pieces, pos = [], 0
        for q in _QUOTED_RE.finditer(part):
            pieces.append(_RELATIVE_DAY_RE.sub("", part[pos:q.start()]))
            pieces.append(q.group(0))
            pos = q.end()
        pieces.append(_RELATIVE_DAY_RE.sub("", part[pos:]))
        return "".join(pieces)
    if not _RELATIVE_DAY_RE.search(text):
        return text
    out = around_code(text, plain, lambda code: code) if "`" in text else plain(text)
    out = re.sub(r"\s+([.,;:!?])", r"\1", " ".join(out.split()))
    if out and text[:1].isupper() and out[:1].islower():
        out = out[:1].upper() + out[1:]
    return out.strip() or text


_ZH_WHEN_END_RE = re.compile(r"(?:之后|以后|之前|以前|的时候|期间|时|后|前)$")


def title_from(statement: str, *, max_words: int = 12, cut_words: int = 8,
               max_cjk: int = 24) -> str:
    """A short node title from a statement: its main clause, leading reporting words dropped."""
    text = without_code_marks(clean_statement(statement))
    text = _LEADING_CUE_RE.sub("", text)
    text = without_relative_days(drop_parentheticals(text).strip())
    if is_cjk_text(text):
        # "代码评审：大家同意 PR 尽量控制在 400 行以内": a short label names the line, not its
        # topic; the claim after it is the title.
        label = _ZH_LABEL_RE.match(text)
        if label:
            text = label.group(1)
        # A colon or comma between digits is part of a number ("01:10", "1,000"), not a break.
        clauses = [c.strip() for c in re.split(r"[，。；;：！？!?]|(?<!\d)[,:]|[,:](?!\d)", text)
                   if c.strip()]
        # A clause saying when ("导出任务改为异步队列后", "发布的时候") states nothing alone: it
        # scopes the clause after it, and goes with it into the title.
        for i in range(len(clauses) - 2, -1, -1):
            if _ZH_WHEN_END_RE.search(clauses[i]):
                clauses[i:i + 2] = [f"{clauses[i]}，{clauses[i + 1]}"]
        # What a clause saying only who agreed ("..., Dana 同意了") agrees to is all that came
        # before it: one clause of the title.
        agreed = next((i for i, c in enumerate(clauses) if i and _WHO_AGREED_RE.match(c)), 0)
        if agreed:
            clauses[:agreed + 1] = ["，".join(clauses[:agreed])]
        # A clause that names its person beats one that says 她/他 (SPEC §11: a title is
        # never about a bare pronoun): "recon 重构陈静很想做，Dana 那边也同意让她一起".
        named = [c for c in clauses if not _ZH_BARE_PRONOUN_RE.search(c)]
        clause = _cue_clause(named if named and len(named) < len(clauses) else clauses) \
            if clauses else text
        asked = _ZH_ASKED_RE.match(text)
        if asked and clause == clauses[0]:
            # "何伟问 hotfix 要不要发布单：要，事后补": a question is no title without its answer.
            clause = f"{asked.group(1).strip()}：{asked.group(2).strip()}"
        # A Chinese title is measured in what a reader reads: a character, or a Latin word,
        # identifier or number as one ("陈静希望 code review 在 24 小时内给第一轮反馈" is 17,
        # not 31 letters: counting letters cut it at "在 24 小时"). Never cut inside a word.
        end = units = 0
        for m in _CJK_UNIT_RE.finditer(clause):
            units += 0 if m.group(0).isspace() else 1
            if units > max_cjk:
                break
            end = m.end()
        if end < len(clause):
            clause = clause[:end].rstrip(".-").rstrip("的了和与及 ")
        return clause or text[:max_cjk]
    # "Tomasz: shadow mode ...", "Rule of thumb: every new service ...": a short label before a
    # colon names the line, not its topic.
    # "Olu is stretched: the sharding prototype + ...": a clause before the colon is the
    # statement, what follows it the detail. "Remaining producers to flip: payouts, fees,
    # refunds": a label over a bare list says nothing without it; the line is the title.
    label = _LABEL_RE.match(text)
    listed = False
    if label and REPORTED_RE.fullmatch(label.group(1)):
        text = label.group(2)
    elif label and FINITE_RE.search(label.group(1)):
        text = label.group(1)
    elif label and len(label.group(1).split()) <= 6:
        rest = first_sentence(label.group(2))
        if FINITE_RE.search(rest) or (len(label.group(1).split()) <= 3 and not _bare_list(rest)):
            text = label.group(2)
        elif _bare_list(rest) and len(f"{label.group(1)} {rest}".split()) <= max_words:
            text, listed = f"{label.group(1)}: {rest}", True
    clauses = [text.rstrip(" .")] if listed else \
        [c.strip() for c in re.split(r"[,;:.!?](?:\s|$)|\s[-–—]\s", text) if c.strip()]
    # "Again, ...", "To use it, ...": a lead-in clause is no topic; the clause after it is.
    while len(clauses) > 1 and _is_lead_in(clauses[0]):
        clauses.pop(0)
    clause = clauses[0] if clauses else text
    if len(clauses) > 1 and len(clauses[1].split()) <= 2 and text.startswith(f"{clause}:") \
            and not FINITE_RE.search(clause):
        # "Shanghai-hours secondary on-call: approved, ...": a label's verdict is its point.
        clause = f"{clause}: {clauses[1]}"
    if len(clauses) > 1 and re.fullmatch(r"[A-Za-z]+ (?:#?\d+|[A-Z])", clause):
        # "Option 4, outbox + Debezium": a numbered reference names nothing without the
        # apposition that says what it is.
        clause = f"{clause}, {clauses[1]}"
    words = clause.split()
    if len(words) > max_words:
        # Cut at `cut_words`, less the words there that need what follows; a cut inside a
        # phrase ("Felix would rather get review comments as GitHub | suggestions than as
        # Slack messages") runs on to where the phrase ends, before the next preposition or
        # conjunction within `max_words`.
        cut = cut_words
        if words[cut - 1].lower().strip("'’") not in DANGLING and \
                words[cut].lower() not in TITLE_CUT_BEFORE:
            cut = next((i for i, w in enumerate(words[:max_words + 1])
                        if i > cut_words and w.lower() in TITLE_CUT_BEFORE), cut_words)
        words = words[:cut]
        while len(words) > 1 and words[-1].lower().strip("'’") in DANGLING:
            words.pop()
    title = " ".join(words).strip(" .,:;")
    return capitalised(title) if title else text[:60]


_OPENER_RE = re.compile(r"[(（]")
_CLOSER_RE = re.compile(r"[)）]")


def drop_parentheticals(text: str) -> str:
    """`text` without its parenthetical remarks (from an opening bracket to the next closing
    one, with the space before): one pass. (The regex `\\s*[(（][^)）]*[)）]` scanned from every
    `(` of a run of them to the end of the text: quadratic.)"""
    out: list[str] = []
    pos = 0
    while (opened := _OPENER_RE.search(text, pos)) is not None:
        closed = _CLOSER_RE.search(text, opened.end())
        if closed is None:
            break  # no closing bracket after this one, so none after any later one either
        out.append(text[pos:opened.start()].rstrip())
        pos = closed.end()
    out.append(text[pos:])
    return "".join(out)


# What kind of note it is, before a colon (`Runbook: planned switchover of journaldb`, `Reading:
# "You cannot have exactly-once delivery"`, `TIL: ...`, `读书笔记：...`): the node's kind says
# that; its name is what the note is about. (`Incident: ...` is a debugging log's, see
# debuglog.runbook_title; `ADR-007: ...` names the record and stays.)
_GENRE_LABEL_RE = re.compile(r"^(?:runbook|playbook|reading(?: notes?)?|notes?|til|how-?to|"
                             r"recipe|cheat ?sheet|读书笔记|笔记|手册)\s*(?::\s+|：\s*)(?=\S)",
                             re.I)


def without_genre_label(title: str) -> str:
    """`Runbook: planned switchover of journaldb (Patroni)` -> `Planned switchover of journaldb
    (Patroni)` (see _GENRE_LABEL_RE)."""
    rest = _GENRE_LABEL_RE.sub("", title, count=1)
    return capitalised(rest) if rest != title else title


# A heading's bare demonstrative, the thing the note is about (`Running this in GitHub Actions`
# under `Building Mastodon bots with GitHub Actions and toot`): before a preposition or at the
# end, not a determiner (`this repo`).
_BARE_THIS_RE = re.compile(r"\b(?:this|it)\b(?=\s+(?:in|on|with|to|from|for|at|by|via|using|"
                           r"inside|under|behind)\b|\s*$)", re.I)


def _note_object(note_title: str) -> str:
    """What a how-to title is about: the words after its verb up to the first preposition
    (`Building Mastodon bots with GitHub Actions` -> `Mastodon bots`); empty when its first
    word is no verb or nothing is left."""
    words = clean_statement(note_title).split()
    if len(words) < 2 or not (words[0].lower().endswith("ing") or words[0].lower() in
                              ("build", "run", "deploy", "use", "install", "write", "set")):
        return ""
    obj: list[str] = []
    for w in words[1:]:
        if w.lower() in TITLE_CUT_BEFORE or w.lower() in ("and", "or", "—", "-"):
            break
        obj.append(w)
    while obj and obj[0].lower() in ("a", "an", "the", "your", "my", "our"):
        obj.pop(0)
    return " ".join(obj) if 0 < len(obj) <= 4 else ""


def resolve_this(heading: str, note_title: str) -> str:
    """`Running this in GitHub Actions` -> `Running Mastodon bots in GitHub Actions` (see
    _BARE_THIS_RE): a section's title never leans on the note's."""
    m = _BARE_THIS_RE.search(heading)
    obj = _note_object(note_title) if m and not is_cjk_text(heading) else ""
    return heading[:m.start()] + obj + heading[m.end():] if m and obj else heading


def procedure_title(heading: str, note_title: str) -> str:
    """`How to queue a long export` -> `Queue a long export`; generic headings take the note's."""
    heading, note_title = without_genre_label(heading), without_genre_label(note_title)
    heading = resolve_this(heading, note_title)
    text = clean_statement(heading).strip("# ").strip()
    text = re.sub(r"^(?:how\s+to|how-to)\s+", "", text, flags=re.I)
    text = re.sub(r"^(?:如何|怎么|怎样)", "", text)
    generic = {"steps", "procedure", "runbook", "checklist", "recipe", "setup", "操作步骤", "步骤",
               "流程", "方法", "做法", "操作"}
    base = clean_statement(note_title).strip("# ").strip()
    if not text or text.lower() in generic:
        return base if is_cjk_text(base) else capitalised(base)
    if base and base.lower() != text.lower() and _is_label_heading(text):
        # "Rollout", "What I checked", "她的建议": a label of the section, named with what the
        # note is about.
        if is_cjk_text(base) or is_cjk_text(text):
            return f"{base}：{text}"
        return f"{capitalised(base)}: {text[:1].lower() + text[1:]}"
    return capitalised(text)


def _is_label_heading(heading: str) -> bool:
    """A section heading that labels its part instead of saying what is done: one word, a
    short Chinese noun phrase, or "What I / we ..."."""
    if is_cjk_text(heading):
        return len(re.findall(f"[{CJK}]", heading)) <= 4
    words = heading.split()
    return len(words) == 1 or bool(re.match(r"what (?:i|we)\b", heading, re.I))


# -- facts a merge must agree on -----------------------------------------------------------------
_UNIT_WORDS = {
    "s": "s", "sec": "s", "secs": "s", "second": "s", "seconds": "s", "秒": "s",
    "ms": "ms", "millisecond": "ms", "milliseconds": "ms", "毫秒": "ms",
    "m": "min", "min": "min", "mins": "min", "minute": "min", "minutes": "min", "分钟": "min",
    "h": "h", "hr": "h", "hrs": "h", "hour": "h", "hours": "h", "小时": "h",
    "d": "d", "day": "d", "days": "d", "天": "d", "日": "d",
    "w": "w", "week": "w", "weeks": "w", "周": "w", "星期": "w",
    "month": "mo", "months": "mo", "个月": "mo", "月": "mo",
    "year": "y", "years": "y", "年": "y",
    "%": "%", "percent": "%", "kb": "kb", "mb": "mb", "gb": "gb", "tb": "tb",
    "行": "line", "line": "line", "lines": "line", "page": "page", "pages": "page", "页": "page",
    "time": "x", "times": "x", "次": "x", "位": "digit", "digits": "digit", "digit": "digit",
}
# A number is not part of a Latin word or identifier (`v2`, `p99`, `x.25`), but it may follow a
# Chinese character: "中国2起交通事故造成47人死亡", "封版3天" state 2, 47 and 3 (CJK is `\w`,
# and a `\w` lookbehind saw no number there).
NUMBER_START = r"(?<![A-Za-z0-9_.])"
_NUM_RE = re.compile(
    NUMBER_START + r"(\d+(?:[.,]\d+)?)\s*(?:-|\s)?\s*"
    r"(%|[A-Za-z]+|个月|分钟|小时|毫秒|秒|天|日|周|星期|月|年|行|页|次|位|轮|条|台|倍|项|名|人|份|遍)?")
_WORD_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                 "eight": 8, "nine": 9, "ten": 10, "twelve": 12, "twenty": 20, "thirty": 30,
                 "hundred": 100, "thousand": 1000, "一": 1, "两": 2, "二": 2, "三": 3, "四": 4,
                 "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}
_CJK_MEASURES = "个位次天周年月小分秒行页轮条台倍项名人份遍"
_UNITS_EN = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
_TEENS_EN = ("ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
             "seventeen", "eighteen", "nineteen")
_TENS_EN = ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
_WORD_NUMBERS.update({w: i for i, w in enumerate(_UNITS_EN, 1)})
_WORD_NUMBERS.update({w: i for i, w in enumerate(_TEENS_EN, 10)})
_WORD_NUMBERS.update({w: 10 * i for i, w in enumerate(_TENS_EN, 2)})
# A number written in words is one number: "twenty-four hours" is 24 h (not 20 and 4 h), "十四天"
# 14 days (not 4), "两百条" 200.
# "one hundred", "a hundred", "two thousand": the scale multiplies the word before it.
_WORD_NUM_RE = re.compile(
    rf"\b((?:(?:{'|'.join(_UNITS_EN)}|a)\s+)?(?:hundred|thousand)|"
    rf"(?:{'|'.join(_TENS_EN)})(?:[- ](?:{'|'.join(_UNITS_EN)}))?|"
    rf"{'|'.join(_TEENS_EN)}|{'|'.join(_UNITS_EN)})\b|"
    rf"([零一两二三四五六七八九十百千]+)(?=[{_CJK_MEASURES}])", re.I)
_EN_SCALES = {"hundred": 100, "thousand": 1000}
_ZH_DIGIT_VALUES = {"零": 0, "一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
              "八": 8, "九": 9}
_ZH_POWER_VALUES = {"十": 10, "百": 100, "千": 1000}


def word_number(word: str) -> float | None:
    """The value of a number written in words ("twenty-four", "十四", "两百"); a run of
    Chinese digits without a power ("三四天": three or four days) is read by its last digit."""
    word = word.lower()
    if word in _WORD_NUMBERS:
        return float(_WORD_NUMBERS[word])
    parts = re.split(r"[- ]+", word)
    if len(parts) == 2 and parts[1] in _EN_SCALES and (parts[0] == "a" or
                                                       parts[0] in _UNITS_EN):
        return float((1 if parts[0] == "a" else _WORD_NUMBERS[parts[0]]) * _EN_SCALES[parts[1]])
    if len(parts) == 2 and parts[0] in _TENS_EN and parts[1] in _UNITS_EN:
        return float(_WORD_NUMBERS[parts[0]] + _WORD_NUMBERS[parts[1]])
    if not word or any(c not in _ZH_DIGIT_VALUES and c not in _ZH_POWER_VALUES for c in word):
        return None
    if not any(c in _ZH_POWER_VALUES for c in word):
        return float(_ZH_DIGIT_VALUES[word[-1]])
    total = current = 0
    for c in word:
        if c in _ZH_POWER_VALUES:
            total += (current or 1) * _ZH_POWER_VALUES[c]
            current = 0
        else:
            current = _ZH_DIGIT_VALUES[c]
    return float(total + current)


_DATE_RE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b|(\d{4})\s?年\s?(\d{1,2})\s?月\s?(\d{1,2})\s?日")
# A date with its month named: "July 4, 2012", "May 30 2012", "4 July 2012" (a year, so that it
# names one day).
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december")
_MONTH_DATE_RE = re.compile(
    r"\b(?:(?P<m1>january|february|march|april|may|june|july|august|september|october|"
    r"november|december)\s+(?P<d1>\d{1,2})(?:st|nd|rd|th)?,?|(?P<d2>\d{1,2})(?:st|nd|rd|th)?\s+"
    r"(?P<m2>january|february|march|april|may|june|july|august|september|october|november|"
    r"december),?)\s+(?P<y>\d{4})\b", re.I)
_WEEKDAY_RE = re.compile(r"\b(?:on|from|until|till|by|every|each|starts?|ends?|not|than|of)\s+"
                         r"(monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?\b|"
                         r"(?:每)?(周[一二三四五六日天]|星期[一二三四五六日天])", re.I)
_NEGATION_RE = re.compile(
    r"\b(?:not|no|never|none|nobody|nothing|neither|nor|without|cannot|can't|won't|don't|"
    r"doesn't|didn't|isn't|aren't|wasn't|weren't|shouldn't|mustn't|avoid|stop)\b|n't|"
    # A Chinese negation is one character, but not inside the common words it does not negate
    # in: 非常 (very), 未来 (future), 无论 (whatever), 不过 / 不断 / 不少 / 不仅 / 不久 (but,
    # on and on, quite a few, not only, soon), 级别 / 区别 / 特别 / 分别 / 识别 ... (level,
    # difference, especially, each, recognise), 别人 / 别的 (others).
    r"不(?![过断少仅久])|没|无(?!论)|非(?!常)|(?<![级区类特分识差告个性派辨鉴])别(?![人的处])|"
    r"勿|未(?!来)|莫|禁止|避免", re.I)
# A capitalised Latin word, not glued to a Latin letter or digit before it (a Chinese character
# may come right before it: "从现在起Kestrel Lantern 项目").
_ENTITY_RE = re.compile(r"(?<![A-Za-z0-9_\u00c0-\u024f-])"
                        r"([A-Z][a-z]+(?:[A-Z][a-z]+)+|[A-Z]{2,}[a-z]*|[A-Z][a-z]{2,})")
# "小王", "老李", "阿强", "王总": a name; not "小时", "小于", "小组", "老化", the common words
# these characters open (general Chinese usage, not a fixture's words).
_CJK_NAME_RE = re.compile(r"[小老阿](?![时于组心数型写说师板化旧式])[\u4e00-\u9fff]|"
                          r"[\u4e00-\u9fff](?:总|经理|老师)")
_COMMON_CAPS = {"The", "This", "That", "These", "Those", "When", "Where", "What", "Why", "How",
                "If", "It", "Its", "We", "Our", "They", "Their", "He", "She", "His", "Her", "You",
                "Your", "And", "But", "Or", "For", "With", "Use", "Run", "Step", "Steps", "Every",
                "Each", "All", "Any", "Some", "After", "Before", "Then", "Also", "Only", "See",
                "Sources", "Source", "Note", "Notes", "Decision", "Rule", "Always",
                "Never", "Do", "Don", "Not", "No", "Yes", "Large", "Long", "New", "Old", "First",
                "Last", "Next", "Once", "Accept", "Return", "Enqueue", "Switch", "Generate",
                "Publish", "Correct", "Corrected", "Mon", "Monday", "Tuesday", "Wednesday",
                "Thursday", "Friday", "Saturday", "Sunday", "January", "February", "March",
                "April", "May", "June", "July", "August", "September", "October", "November",
                "December", "API", "UI", "PR", "PRs", "OK", "ID", "URL", "PDF", "HTTP", "JSON",
                "YAML", "SQL", "CLI", "CSV", "Users", "User", "People", "Everyone", "Someone",
                "Nobody", "Team", "Customers", "Customer", "Clients", "Client", "Developers",
                "Engineers", "Reviewers", "Management", "Somebody", "Anyone", "Most", "Many",
                "Both", "None", "Neither", "Either", "There", "Here", "Everybody", "Today",
                "Yesterday", "Tomorrow", "Now", "Later", "Please", "Remember", "Don't",
                "POST", "GET", "PUT", "DELETE", "PATCH", "HEAD", "UTC", "TODO", "FAQ", "CI",
                "Inputs", "Failure"}


@dataclass(frozen=True)
class Facts:
    quantities: frozenset[tuple[str, float]]  # (unit, value); unit "" for bare numbers
    dates: frozenset[str]
    negated: bool
    entities: frozenset[str]


@lru_cache(maxsize=TEXT_CACHE)
def facts(text: str) -> Facts:
    text = clean_statement(text)
    quantities: set[tuple[str, float]] = set()
    # One form for a day however it is written (2026-03-02, 2026年3月2日, March 2, 2026).
    dates = {"{}-{:02d}-{:02d}".format(*(int(g) for g in m.groups() if g))
             for m in _DATE_RE.finditer(text)}
    dates |= {f"{m['y']}-{_MONTHS.index((m['m1'] or m['m2']).lower()) + 1:02d}-"
              f"{int(m['d1'] or m['d2']):02d}" for m in _MONTH_DATE_RE.finditer(text)}
    # A weekday a schedule names is a date it states ("starts on Thursday" vs "on Wednesday").
    dates |= {(m.group(1) or m.group(2)).lower() for m in _WEEKDAY_RE.finditer(text)}
    scrubbed = _MONTH_DATE_RE.sub(" ", _DATE_RE.sub(" ", text))
    for m in _NUM_RE.finditer(scrubbed):
        raw, unit = m.group(1), (m.group(2) or "")
        try:
            value = float(raw.replace(",", ""))
        except ValueError:
            continue
        unit_key = _unit_key(unit)
        quantities.add((unit_key, value))
    for m in _WORD_NUM_RE.finditer(scrubbed):
        number = word_number(m.group(1) or m.group(2) or "")
        if number is not None:
            quantities.add((_unit_after(scrubbed, m.end(), bool(m.group(2))), number))
    negated = bool(_NEGATION_RE.search(text))
    # Chinese has no capitals: a capitalised Latin word in Chinese text is a name even where
    # it opens the sentence ("Delta Lantern 项目的...").
    cjk = is_cjk_text(text)
    entities = {m.group(1) for m in _ENTITY_RE.finditer(text)
                if m.group(1) not in _COMMON_CAPS
                and (cjk or not _is_sentence_start(text, m.start())
                     or _actor_follows(text, m.end()))}
    entities |= set(_CJK_NAME_RE.findall(text))
    return Facts(frozenset(quantities), frozenset(dates), negated, frozenset(entities))


_CJK_UNITS = sorted((w for w in _UNIT_WORDS if not w.isascii()), key=len, reverse=True)


# Words after a number that say what it relates to, not what it counts ("above 50 for 2
# minutes", "more than 4 of them").
_NOT_UNITS = frozenset(("for", "of", "to", "in", "on", "at", "by", "and", "or", "than", "more",
                        "less", "the", "a", "an", "per", "each", "every", "from", "with", "is",
                        "are", "was", "were", "if", "when", "after", "before", "as", "so", "it",
                        "this", "that", "we", "they", "but", "not", "no",
                        # an auxiliary cut at its apostrophe: "5 wasn't enough"
                        "wasn", "isn", "aren", "weren", "don", "doesn", "didn", "won", "hasn",
                        "haven", "hadn", "shouldn", "couldn", "wouldn"))


def _unit_key(unit: str) -> str:
    """What a number counts: a known unit (`days` -> d), else the word after it, singular
    (`4 GPUs` -> gpu, `两轮` -> 轮), none for a function word."""
    word = unit.lower()
    if word in _UNIT_WORDS:
        return _UNIT_WORDS[word]
    if not word or word in _NOT_UNITS:
        return ""
    if word.isascii() and word.isalpha():
        return word[:-1] if len(word) > 3 and word.endswith("s") and \
            not word.endswith("ss") else word
    return word


def _unit_after(text: str, end: int, cjk: bool) -> str:
    """The unit of a number written as a word: the next word ("two weeks." -> w), or for a
    Chinese numeral the unit characters right after it ("两周" -> w, "一天" -> d)."""
    if cjk:
        rest = text[end:end + 3]
        known = next((_UNIT_WORDS[u] for u in _CJK_UNITS if rest.startswith(u)), "")
        return known or (rest[:1] if rest[:1] in _CJK_MEASURES else "")
    words = re.findall(r"[a-z]+", text[end:end + 16].lower())
    return _unit_key(words[0]) if words else ""


_ACTOR_VERBS = frozenset([
    "prefers", "likes", "dislikes", "hates", "wants", "asked", "asks", "said", "says", "found",
    "finds", "noted", "notes", "thinks", "thought", "again", "also", "still", "reported",
    "pointed", "mentioned", "suggested", "insisted", "agreed", "decided", "wrote", "writes",
    "needs", "expects", "requested", "requests", "reiterated", "repeated", "stressed", "explained",
    "confirmed", "will", "would", "always", "never"
])


def _actor_follows(text: str, end: int) -> bool:
    """A capitalised word that opens a sentence is a name when a verb of saying or wanting
    follows it ("Alice prefers...", "Bob asked..."): common nouns rarely open such clauses."""
    m = re.match(r"\s+([a-z]+)", text[end:end + 24])
    return bool(m and m.group(1) in _ACTOR_VERBS)


def _is_sentence_start(text: str, pos: int) -> bool:
    """Whether the word at `pos` opens a sentence, a line, a heading or a list item."""
    line = text[text.rfind("\n", 0, pos) + 1:pos]
    if not line.strip(" \t#>*+-0123456789.)"):
        return True
    before = text[:pos].rstrip()
    return not before or before[-1] in ".!?:;。！？：；\"'("


def numbers_conflict(a: Facts, b: Facts) -> tuple[str, str] | None:
    """(a's value, b's value) when both state a quantity of the same unit with different values."""
    by_unit_a: dict[str, set[float]] = {}
    by_unit_b: dict[str, set[float]] = {}
    for unit, value in a.quantities:
        by_unit_a.setdefault(unit, set()).add(value)
    for unit, value in b.quantities:
        by_unit_b.setdefault(unit, set()).add(value)
    for unit in by_unit_a.keys() & by_unit_b.keys():
        if unit and by_unit_a[unit].isdisjoint(by_unit_b[unit]):
            return (_fmt(sorted(by_unit_a[unit])[0], unit), _fmt(sorted(by_unit_b[unit])[0], unit))
    # Time units are comparable with each other: "24 h" vs "30 days" disagree.
    seconds = {"ms": 0.001, "s": 1, "min": 60, "h": 3600, "d": 86400, "w": 604800,
               "mo": 2592000, "y": 31536000}
    ta = {v * seconds[u] for u, v in a.quantities if u in seconds}
    tb = {v * seconds[u] for u, v in b.quantities if u in seconds}
    if ta and tb and ta.isdisjoint(tb):
        ua = next((u, v) for u, v in a.quantities if u in seconds)
        ub = next((u, v) for u, v in b.quantities if u in seconds)
        return _fmt(ua[1], ua[0]), _fmt(ub[1], ub[0])
    # The same value of two different things ("两轮" / "两周", "3 GB" / "3 TB"): another fact.
    for value in {v for _, v in a.quantities} & {v for _, v in b.quantities}:
        units_a = {u for u, v in a.quantities if v == value and u}
        units_b = {u for u, v in b.quantities if v == value and u}
        if units_a and units_b and units_a.isdisjoint(units_b) and \
                not (units_a <= seconds.keys() and units_b <= seconds.keys()):
            return _fmt(value, sorted(units_a)[0]), _fmt(value, sorted(units_b)[0])
    bare_a = by_unit_a.get("", set())
    bare_b = by_unit_b.get("", set())
    # Bare numbers of their own ("above 50 for 2 minutes" / "above 500 for 2 minutes"): the
    # quantities with units may agree, the bare ones still say another value.
    if bare_a and bare_b and bare_a.isdisjoint(bare_b) and len(bare_a) == len(bare_b):
        return _fmt(sorted(bare_a)[0], ""), _fmt(sorted(bare_b)[0], "")
    return None


def _fmt(value: float, unit: str) -> str:
    number = f"{value:g}"
    return f"{number} {unit}".strip()


_STOP_KW = {"the", "and", "for", "with", "that", "this", "from", "into", "when", "what", "which",
            "were", "was", "are", "is", "be", "been", "have", "has", "had", "will", "would",
            "should", "must", "also", "than", "then", "them", "they", "their", "there"}


def clauses(text: str) -> list[str]:
    """The clauses of a statement: its sentences, and in Chinese the parts "，" joins (where
    English would end a sentence). Fragments under six characters are left out. Code is never
    split (`Y00. --memory=16g`), as in `sentences`."""
    held_text, held = _hold_code(text.strip())
    parts = re.split(r"(?<=[。！？；;])\s*|(?<=[.!?])\s+|(?<=，)", held_text)
    out = _restore_code([p.strip().rstrip("，,;；") for p in parts], held)
    return [p for p in out if len(p) >= 6]


def keywords(text: str, limit: int = 5) -> list[str]:
    words = re.findall(r"[A-Za-z][A-Za-z-]{3,}|[\u4e00-\u9fff]{2,4}", text)
    out: list[str] = []
    for w in words:
        if w.lower() in _STOP_KW or w.lower() in (o.lower() for o in out):
            continue
        out.append(w)
    return out[:limit]


# -- names written in a text ---------------------------------------------------------------------
_PHRASE_RE = re.compile(
    r"(?<![\w-])(?:[A-Za-z][^\W_]*(?:[-_][A-Za-z0-9]+)+|[A-Z][a-z]+[A-Z]\w*|"
    r"[A-Z][\w]+(?:\s+[A-Z][\w]+)+)(?![\w-])")


def name_phrases(text: str, limit: int = 24) -> list[str]:
    """Hyphenated words, CamelCase words and runs of capitalised words: what a text uses as
    names of things (`block-anchors`, `SilverBullet`, `Space Script`)."""
    out: list[str] = []
    for m in _PHRASE_RE.finditer(clean_statement(text)):
        words = m.group(0).split()
        while words and words[0] in _COMMON_CAPS:
            words = words[1:]
        phrase = " ".join(words)
        if not phrase or (len(words) == 1 and phrase.isalpha() and phrase[1:].islower()):
            continue
        if phrase not in out:
            out.append(phrase)
        if len(out) >= limit:
            break
    return out


def _fold(text: str) -> str:
    return " ".join(re.sub(r"[-_/]+", " ", text).split())


@lru_cache(maxsize=TEXT_CACHE)  # a pure function of its arguments: node titles recur
def mention_pattern(name: str, *, woven: bool = False) -> re.Pattern[str] | None:
    """How a node title is written in prose, or None when the title is too plain to count:
    several words, or one word with a capital, a hyphen or an underscore (`Space Script`,
    `block-anchors`), or a CJK title of four or more characters; single plain words (`index`,
    `recipes`) are too common. Never inside a longer word; a path written out
    (`ADR/007 Core Logic`) mentions its last part.

    With `woven`, the match is where to put a link already chosen: never right after `[`, `|`
    or `/` nor right before `]`, and the last word of a title of several words may be singular
    or plural (`idempotency key` carries the link to `Idempotency keys`). Deciding whether to
    link at all takes the title as written: on the SilverBullet and Foam docs the plural variant
    found about one true link for every two false ones (bench/quality/links.py)."""
    name = name.strip()
    if not name:
        return None
    if is_cjk_text(name):
        return re.compile(re.escape(name)) if len(name) >= 4 else None
    folded = _fold(name)
    words = folded.split()
    if len(folded) < 4 or not any(ch.isalpha() for ch in folded):
        return None
    if not (len(words) > 1 or name != name.lower() or any(c in name for c in "-_")):
        return None
    parts = [re.escape(w) for w in words]
    last = words[-1]
    if woven and len(words) > 1 and last.isalpha() and len(last) > 3:
        if last.endswith("s") and not last.endswith("ss"):
            last = last[:-2] if last.endswith("es") and last[-3] in "sxz" else last[:-1]
        parts[-1] = re.escape(last) + r"(?:e?s)?"
    before, after = (r"(?<![\w\[|/])", r"(?![\w\]])") if woven else (r"(?<![\w])", r"(?![\w])")
    flags = 0 if len(words) == 1 and name != name.lower() else re.I
    return re.compile(before + r"[\s_-]+".join(parts) + after, flags)


def mentions(text: str, name: str) -> bool:
    """The text writes this node title (see `mention_pattern`)."""
    pattern = mention_pattern(name)
    return pattern is not None and pattern.search(text) is not None


_REASON_RE = re.compile(
    r"(?:,|;|:|\s)\s*(because|since|so that|so|in order to|to avoid|to keep|otherwise)\s+(.+)$|"
    r"[，,；;]\s*(?:因为|由于|为了|以便|方便|以免|避免|否则)(.+)$", re.I)


def reason(statement: str) -> str | None:
    """The reason a statement gives for itself ("..., because X", "……，方便评审"), if any."""
    text = clean_statement(statement)
    m = _REASON_RE.search(text)
    if not m:
        return None
    connective = (m.group(1) or "").lower()
    clause = (m.group(2) or m.group(3) or "").strip().rstrip("。.!！")
    if connective and connective not in ("because", "since"):
        clause = f"{connective} {clause}"
    if len(clause) < (2 if is_cjk_text(clause) else 4):
        return None
    if is_cjk_text(clause):
        word = re.match(r"[，,；;]\s*(因为|由于|为了|以便|方便|以免|避免|否则)", text[m.start():])
        return (word.group(1) if word else "") + clause
    return clause[:1].upper() + clause[1:]


def main_clause(statement: str) -> str:
    """The statement without the reason it gives for itself: what is being stated."""
    text = clean_statement(statement)
    m = _REASON_RE.search(text)
    return text[: m.start()].rstrip(" ,;:，；：") if m and m.start() > 0 else text


def lower_first(text: str) -> str:
    """`Queue a long export` -> `queue a long export`; acronyms and names keep their case."""
    if len(text) > 1 and text[0].isupper() and not text[1].isupper():
        return text[0].lower() + text[1:]
    return text


# -- narration: the author's own story around what a note teaches (issue 21) ----------------------
# A how-to is told as a story ("I wanted to ...", "So I tried X first", "My fluency isn't
# great", "(I added that line after ...)"); a node keeps what the note teaches and leaves the
# story to the note. Narration is a sentence told in the first person singular, after any
# connective, or a whole sentence in parentheses. `We` is not narration: a team's "we agreed"
# is a decision.
NARRATION_LEAD = (r"(?:so|then|and|but|first|finally|now|eventually|next|initially|today|"
                   r"later|after that|at first|in the end|this time|once again|again|ok|okay|"
                   r"anyway|sadly|luckily|thankfully|unfortunately|fortunately|apparently|"
                   r"here's how|here is how|this is how|that's how|that is how)")
_NARRATION_EN_RE = re.compile(
    rf"^(?:{NARRATION_LEAD}\b[,\s-]*)*(?:I(?:'m|'ve|'d|'ll|’m|’ve|’d|’ll)?|my|me)\b(?!\.)", re.I)
# After `I`: a verb that hedges the claim that follows (`I believe this only works if ...`,
# `I think the cache is per region`), not a step of the author's story.
_HEDGE_RE = re.compile(r"\s+(?:believe|think|suspect|assume|guess|reckon|expect)\s+"
                       r"(?:that\s+)?(?!I\b|I'|my\b|me\b)\w", re.I)
# Chinese puts a topic first (`这个问题我折腾了一下午`): the speaker is `我` in the first clause.
_NARRATION_ZH_RE = re.compile(r"^[^，,；;：:。]{0,12}?(?:我(?![们司方])|本人)")
_ASIDE_RE = re.compile(r"^[(（][^()（）]*[)）][.。!?！？]?$")
# The author's own rule (`I always pin the version`, `我从不在周五发布`): a rule, not a story.
_OWN_RULE_RE = re.compile(r"\b(?:must|never|always|rules?|polic(?:y|ies))\b|必须|禁止|不得|务必|"
                          r"一律|从不|总是|规则|规定", re.I)


def is_own_rule(text: str) -> bool:
    """Whether a sentence words itself as a rule (`I always pin the version`), whoever says it."""
    return bool(_OWN_RULE_RE.search(_CODE_SPAN_RE.sub(" ", text)))


def is_narration(text: str) -> bool:
    """Whether a sentence is the author's story rather than what the note teaches (see
    NARRATION_LEAD): first person singular, or an aside in parentheses. A sentence that words
    itself as a rule (`I always pin the version`) is kept as a rule, never narration."""
    plain = fenced.strip(clean_statement(text)).strip().lstrip("-*+ ").strip()
    if not plain or _OWN_RULE_RE.search(_CODE_SPAN_RE.sub(" ", plain)):
        return False
    if _ASIDE_RE.match(plain):
        return True
    if is_cjk_text(plain):
        return bool(_NARRATION_ZH_RE.match(plain))
    m = _NARRATION_EN_RE.match(plain)
    if m is not None and _HEDGE_RE.match(plain[m.end():]):
        return False  # `I believe this only works over HTTPS`: a claim the author hedges
    # `I` as a name of a thing (`I/O`, `I.e.`) is no speaker.
    return m is not None and not re.match(r"^I[/.]", plain[m.end() - 1:])


# A notice the author adds to their own note (issue 21): a label of its own at the start of a
# paragraph (`Update:`, `**UPDATE:**`, `Update 17th January 2024:`, `Note:`, `Warning:`,
# `更新：`), a date allowed between the label and its colon, nothing else; or a sentence that
# takes back what the note said (`I was entirely wrong`, `My bug fix was incorrect`).
_NOTICE_RE = re.compile(
    r"^[\W_]*(?:updated?|update\s+\d+|note|nb|warning|caution|important|heads[- ]up|"
    r"correction|erratum|edit(?:ed)?|更新|注意|警告|更正|勘误)"
    r"(?:[\s,]+(?:on\s+)?(?=[^:：\n]{0,30}\d)[^:：\n]{1,30})?[\W_]{0,3}[:：]\s*\S", re.I)
_RETRACTS_RE = re.compile(
    r"\bI\s+was\s+(?:\w+\s+)?(?:wrong|mistaken)\b|\bmy\s+(?:\w+\s+){0,3}was\s+(?:\w+\s+)?"
    r"(?:incorrect|wrong)\b|\bscratch that\b|我(?:之前)?(?:说|写)?错了", re.I)


def is_notice(text: str) -> bool:
    """A notice of the note's author about their own note: an update, a note or warning
    label, or a retraction. It is a statement of the note, kept with its label in its place."""
    plain = " ".join(fenced.strip(text).split())
    return bool(_NOTICE_RE.match(plain) or _RETRACTS_RE.search(plain))


def is_notice_heading(heading: str) -> bool:
    """A heading that opens a notice (`## Update`, `## Correction, 3 May`, `## I was wrong`)."""
    plain = " ".join(heading.strip(" #*").split())
    return bool(_NOTICE_HEADING_RE.match(plain) or _RETRACTS_RE.search(plain))


_NOTICE_HEADING_RE = re.compile(r"(?:updated?|correction|erratum|edit|warning|更新|更正|勘误)"
                                r"(?:\s*$|\s*[:：,(]|\s+(?:on\s+)?\d)", re.I)
