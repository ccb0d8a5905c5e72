"""Sources sentences of the local engine (SPEC §4): each says what its source supports.

On a new node the first source supports the node's statement, so its role says which kind of
claim that is (the steps, the decision, the preference, what a person said on which day and in
which turns). A further source, and every source an update adds, names the point it restates
or adds ("... restates this: Alice again asked to see progress while the export runs."), never
a bare "stated again" when only one point was restated.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date

from remelink.models.local import points as pt
from remelink.models.local import text as tx
from remelink.models.local import when

_ROLE = {
    "en": {
        "procedure": "The steps were recorded in",
        "failure": "The failure modes were recorded in",
        "debug": "The {parts} were recorded in",
        "preference": "This preference was stated in",
        "decision": "The decision was recorded in",
        "rule": "The rule was recorded in",
        "lesson": "The lesson comes from",
        "definition": "The definition comes from",
        "finding": "The finding was recorded in",
        "fact": "This was recorded in",
        "topic": "This is drawn from",
        "corroborate": "It was stated again in",
        "refine": "The added detail comes from",
        "correct": "The correction is based on",
        "status": "A status line was reported in",
    },
    "zh": {
        "procedure": "操作步骤记录于",
        "failure": "失败方式记录于",
        "debug": "{parts}记录于",
        "preference": "这一偏好记录于",
        "decision": "该决定记录于",
        "rule": "该规则记录于",
        "lesson": "这一教训来自",
        "definition": "定义来自",
        "finding": "这一发现记录于",
        "fact": "此内容记录于",
        "topic": "内容整理自",
        "corroborate": "再次出现于",
        "refine": "补充内容来自",
        "correct": "更正依据",
        "status": "进展记录于",
    },
}
CLAIM_WORDS = 16


@dataclass(frozen=True)
class SourceInfo:
    path: str
    title: str
    said: pt.Said | None = None  # who said it, when, in which turns (conversations)
    claim: str = ""              # the point this source supports, when it is not the statement
    parts: tuple[str, ...] = ()  # what a debugging log gave: symptom, cause, steps, lesson


def sources_of(paths: Sequence[str], titles: dict[str, str], points: Sequence[str]
               ) -> list[SourceInfo]:
    """SourceInfo per unit path: its heading, its provenance, and for a path after the first
    the first point extraction took from it."""
    said = pt.said_of(points)
    claims: dict[int, str] = {}
    for p in pt.parse_all(points):
        if (p.role not in pt.META_ROLES or p.role == "again") and p.source and \
                p.source not in claims:
            claims[p.source] = p.text
    roles = {p.role for p in pt.parse_all(points) if p.source == 0}
    parts = tuple(r for r in ("symptom", "cause", "check", "step", "outcome", "lesson")
                  if r in roles)
    return [SourceInfo(path, titles.get(path, ""), said.get(i), claims.get(i, ""),
                       parts if i == 0 else ())
            for i, path in enumerate(paths)]


_PART_NAMES = {"en": {"symptom": "symptom", "cause": "cause", "check": "diagnosis",
                      "step": "fix", "outcome": "result", "lesson": "lesson"},
               "zh": {"symptom": "现象", "cause": "原因", "check": "排查", "step": "修复",
                      "outcome": "结果", "lesson": "教训"}}


def _parts(parts: Sequence[str], lang: str) -> str:
    names = [_PART_NAMES[lang][p] for p in parts] or (["debugging notes"] if lang == "en"
                                                       else ["排查记录"])
    if lang == "zh":
        return "、".join(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


# A label that announces the claim as said again or corrected ("Priya said it again:", "Dana
# repeated:", "Reminder:", "再次强调：", "重申：", "更正：") is the note's framing, not the claim:
# the Sources sentence says "restates this" or "the correction" itself.
_ANNOUNCED_RE = re.compile(
    r"^(?:(?:[\w'.-]+\s+){0,3}?(?:said|says|asked|asks|repeated|repeats|reiterated|restated|"
    r"stressed|stated|mentioned|reminded(?:\s+us)?)(?:\s+(?:it|this|that))?"
    r"(?:\s+(?:again|once more|once again))?\s*[:：—–]\s*|"
    r"(?:reminder|again|once more|correction|update)\s*[:：]\s*|"
    r"[\u4e00-\u9fff]{0,4}?(?:再次|又一次|再一次)?(?:强调|重申|提醒|更正|纠正)[:：]\s*)", re.I)


def short(claim: str, lang: str) -> str:
    """A claim short enough for a Sources sentence: whole when short, else its main clause."""
    text = tx.without_code_marks(tx.clean_statement(claim)).rstrip("。.!！")
    text = _ANNOUNCED_RE.sub("", text) or text
    text = text[:1].upper() + text[1:] if lang == "en" else text
    if lang == "zh":
        # Measured in characters, a Latin word (`shadow`, `on-call`) counting as one.
        size = len(re.sub(r"[A-Za-z0-9_.\-/]+", "x", re.sub(r"\s+", "", text)))
        return text if size <= 40 else tx.title_from(text, max_cjk=40)
    if len(text.split()) <= CLAIM_WORDS:
        return text
    return tx.title_from(text, max_words=CLAIM_WORDS, cut_words=CLAIM_WORDS - 2)


def day_text(iso: str, lang: str) -> str:
    try:
        d = date.fromisoformat(iso)
    except ValueError:
        return ""
    return when.chinese(d) if lang == "zh" else when.english(d)


def _turns(said: pt.Said, lang: str) -> str:
    if not said.turns:
        return ""
    if lang == "zh":
        return f"（第 {'、'.join(said.turns)} 轮）"
    return f" ({'turns' if len(said.turns) > 1 else 'turn'} {', '.join(said.turns)})"


def _said_sentence(src: SourceInfo, role: str, lang: str) -> str:
    said = src.said
    assert said is not None
    day = day_text(said.day, lang)
    claim = _quoted(src.claim, lang) if src.claim and role != "fact" else ""
    if lang == "zh":
        on = f"在{day}的对话中" if day else "在对话中"
        if claim:
            return f"{said.speaker}{on}补充了：{claim}，见 [[{src.path}]]{_turns(said, lang)}。"
        again = "再次" if role == "corroborate" else ""
        return f"{said.speaker}{on}{again}说过这件事，见 [[{src.path}]]{_turns(said, lang)}。"
    on = f" on {day}" if day else ""
    if claim:
        return (f"{said.speaker} said{on}, in [[{src.path}]]{_turns(said, lang)}, that "
                f"{_clause(claim)}.")
    again = " again" if role == "corroborate" else ""
    return f"{said.speaker} said this{again}{on} in [[{src.path}]]{_turns(said, lang)}."


def _clause(claim: str) -> str:
    """A claim after "that": a leading article or pronoun is lowercased, a name is not."""
    first = claim.split(" ", 1)[0]
    common = ("The", "A", "An", "It", "This", "That", "There", "These", "Those", "Every",
              "Each", "All", "Some", "Our", "Their", "They", "After", "Before", "When", "Since",
              "While", "On", "In", "At", "For", "From", "With", "Last", "Next", "Now", "Then",
              "Once", "Sometimes", "Recently", "Lately", "Both", "Everyone", "Everything")
    return tx.lower_first(claim) if first in common or first.startswith(("It'", "That'",
                                                                            "There'")) else claim


def _quoted(claim: str, lang: str) -> str:
    """The claim a sentence in `lang` quotes, shortened by its own language; in quotation
    marks when that is the other one (`restates this: “金额一律用整数分加币种”.`)."""
    own = "zh" if tx.is_cjk_text(claim) else "en"
    text = short(claim, own)
    return text if own == lang else f"\u201c{text}\u201d"


def source_sentence(src: SourceInfo, role: str, lang: str) -> str:
    if src.said is not None and src.said.speaker:
        return _said_sentence(src, role, lang)
    title = src.title.strip()
    claim = _quoted(src.claim, lang) if src.claim else ""
    if lang == "zh":
        suffix = f"（“{title}”）" if title else ""
        if claim and role in ("corroborate", "refine"):
            verb = "再次说明了" if role == "corroborate" else "补充了"
            return f"[[{src.path}]]{suffix}{verb}这一点：{claim}。"
        phrase = _ROLE["zh"].get(role, _ROLE["zh"]["fact"]).format(parts=_parts(src.parts, "zh"))
        return f"{phrase} [[{src.path}]]{suffix}。"
    suffix = f" (\u201c{title}\u201d)" if title else ""
    if claim and role in ("corroborate", "refine"):
        verb = "restates this" if role == "corroborate" else "adds"
        return f"[[{src.path}]]{suffix} {verb}: {claim}."
    phrase = _ROLE["en"].get(role, _ROLE["en"]["fact"]).format(parts=_parts(src.parts, "en"))
    phrase = phrase[:1].upper() + phrase[1:]
    return f"{phrase} [[{src.path}]]{suffix}."


_RESTATES = (" restates this: ", "再次说明了这一点：")


def restates_more(body: str, path: str, claim: str) -> bool:
    """The node's Sources cite `path` as restating one of its lines (" restates this: A."), and
    none of its sentences quotes `claim`: the note says another line of the node again, which
    a Sources sentence of its own quotes (a node update only inserts)."""
    m = re.search(r"^##[ \t]+sources\b.*$", body, re.I | re.M)
    if not m:
        return False
    lines = [line for line in body[m.end():].split("\n") if line.startswith(f"[[{path}]]")]
    if not any(verb in line for line in lines for verb in _RESTATES):
        return False
    quotes = {short(claim, lang).casefold() for lang in ("en", "zh")}
    return not any(q and q in line.casefold() for line in lines for q in quotes)


def update_roles(sources: Sequence[SourceInfo], new_sources: Sequence[SourceInfo],
                  summary: str, points: Sequence[str], novel: Sequence[pt.Point]
                  ) -> list[tuple[SourceInfo, str]]:
    """The role of each source an update adds, with the point it supports: the first new point
    it contributes (`refine`), else what it restates (`corroborate`)."""
    index = {s.path: i for i, s in enumerate(sources)}
    said: dict[int, list[str]] = {0: [summary]}
    for p in pt.parse_all(points):
        if p.role not in pt.META_ROLES or p.role == "again":
            said.setdefault(p.source, []).append(p.text)
    added: dict[int, str] = {}
    for p in novel:
        added.setdefault(p.source, p.text)
    out = []
    for src in new_sources:
        i = index.get(src.path, 0)
        if i in added:
            out.append((replace(src, claim=added[i]), "refine"))
        else:
            restated = (said.get(i) or [summary])[0]
            out.append((replace(src, claim=restated), "corroborate"))
    return out
