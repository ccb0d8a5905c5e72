"""Writing for the local engine: bucket-shaped node bodies, Sources sentences, related links in
prose, and additive updates (SPEC §7.1), in the language of the unit. Every sentence comes from
the unit's own statements or from fixed connective phrases; nothing is invented.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from remelink.models.local import text as tx

KIND_BY_BUCKET = {"procedure": "procedure", "personal": "preference", "wiki": "concept"}

_SOURCE_ROLE = {
    "en": {
        "procedure": "The steps were recorded in",
        "failure": "The failure modes were recorded in",
        "preference": "This preference was stated in",
        "decision": "The decision was recorded in",
        "rule": "The rule was recorded in",
        "lesson": "The observation comes from",
        "definition": "The definition comes from",
        "finding": "The finding was recorded in",
        "fact": "This was recorded in",
        "corroborate": "It was stated again in",
        "refine": "The added detail comes from",
        "correct": "The correction is based on",
    },
    "zh": {
        "procedure": "操作步骤记录于",
        "failure": "失败方式记录于",
        "preference": "这一偏好记录于",
        "decision": "该决定记录于",
        "rule": "该规则记录于",
        "lesson": "这一经验来自",
        "definition": "定义来自",
        "finding": "这一发现记录于",
        "fact": "此内容记录于",
        "corroborate": "再次出现于",
        "refine": "补充内容来自",
        "correct": "更正依据",
    },
}


@dataclass(frozen=True)
class SourceInfo:
    path: str
    title: str


def _end(text: str, lang: str) -> str:
    text = text.strip()
    if not text:
        return text
    if text[-1] in ".!?。！？;；:：":
        return text
    return text + ("。" if lang == "zh" else ".")


def source_sentence(src: SourceInfo, role: str, lang: str) -> str:
    phrase = _SOURCE_ROLE[lang].get(role, _SOURCE_ROLE[lang]["fact"])
    title = src.title.strip()
    if lang == "zh":
        suffix = f"（“{title}”）" if title else ""
        return f"{phrase} [[{src.path}]]{suffix}。"
    suffix = f" (\u201c{title}\u201d)" if title else ""
    return f"{phrase} [[{src.path}]]{suffix}."


class Related(tuple[str, str]):
    """A related node to link: unpacks as (path, name) like a plain pair, and carries why it is
    related (relate.REASONS: mention, source, term, similar, crosslang)."""

    reason: str

    def __new__(cls, path: str, name: str, reason: str = "similar") -> Related:
        obj = super().__new__(cls, (path, name))
        obj.reason = reason
        return obj


# How a node of one bucket relates to a node of another, by why they are linked. `{}` is the
# link. English and Chinese; each pair is one sentence, never a list of links.
_RELATION = {
    "en": {
        ("procedure", "wiki", "uses"): "It relies on {}.",
        ("procedure", "wiki", "about"): "This is the runbook for {}.",
        ("procedure", "personal", ""): "Apply {} while doing it.",
        ("procedure", "procedure", ""): "A neighbouring runbook is {}.",
        ("personal", "procedure", ""): "The steps to follow it are in {}.",
        ("wiki", "procedure", ""): "The steps are in {}.",
        ("personal", "personal", ""): "A related preference is {}.",
        ("wiki", "personal", ""): "A related preference is {}.",
        ("personal", "wiki", "uses"): "It concerns {}.",
        ("personal", "wiki", "about"): "The decision it goes with is {}.",
        ("wiki", "wiki", "uses"): "It refers to {}.",
        ("wiki", "wiki", "about"): "It goes together with {}.",
        ("", "", "source"): "The same note also records {}.",
    },
    "zh": {
        ("procedure", "wiki", "uses"): "它用到 {}。",
        ("procedure", "wiki", "about"): "这是 {} 的操作步骤。",
        ("procedure", "personal", ""): "执行时遵循 {}。",
        ("procedure", "procedure", ""): "相邻的操作见 {}。",
        ("personal", "procedure", ""): "这条规则的做法见 {}。",
        ("wiki", "procedure", ""): "具体做法见 {}。",
        ("personal", "personal", ""): "相关的偏好见 {}。",
        ("wiki", "personal", ""): "相关的偏好见 {}。",
        ("personal", "wiki", "uses"): "它涉及 {}。",
        ("personal", "wiki", "about"): "与之对应的决定见 {}。",
        ("wiki", "wiki", "uses"): "它涉及 {}。",
        ("wiki", "wiki", "about"): "与之相关的还有 {}。",
        ("", "", "source"): "同一笔记还记录了 {}。",
    },
}


def _relation(lang: str, bucket: str, target: str, reason: str) -> str:
    table = _RELATION[lang]
    sense = "uses" if reason in ("mention", "term") else "about"
    for key in ((bucket, target, sense), (bucket, target, "")):
        if key in table:
            phrase = table[key]
            break
    else:
        phrase = table[("wiki", "wiki", sense)]
    if reason == "source" and bucket == target:
        return table[("", "", "source")]
    return phrase


def related_sentence(related: Sequence[tuple[str, str]], lang: str, bucket: str = "") -> str:
    """One sentence per kind of relation, saying how this node (of `bucket`) relates to each
    linked node: "This is the runbook for [[...]].", "这条规则的做法见 [[...]]。". `related`
    holds (path, name) pairs, or `Related` pairs that also carry why they are linked."""
    groups: dict[str, list[str]] = {}
    for item in related:
        path, name = item[0], item[1]
        parts = path.split("/")
        target = parts[-2] if len(parts) >= 2 else ""
        phrase = _relation(lang, bucket, target, getattr(item, "reason", "similar"))
        shown = tx.clean_statement(name).rstrip(".。") or path
        groups.setdefault(phrase, []).append(f"[[{path}|{shown}]]")
    out = []
    for phrase, links in groups.items():
        if lang == "zh":
            joined = "、".join(links[:-1]) + ("和" if len(links) > 1 else "") + links[-1]
        else:
            joined = links[0] if len(links) == 1 else ", ".join(links[:-1]) + " and " + links[-1]
        sentence = phrase.format(joined)
        out.append(sentence[:1].upper() + sentence[1:] if lang == "en" else sentence)
    return ("" if lang == "zh" else " ").join(out)


def _new_points(points: Sequence[str], summary: str) -> list[str]:
    """The points that say something the summary does not (restatements left out)."""
    from remelink.models.local import decide

    seen = summary
    out = []
    for p in points:
        if decide.novel([tx.main_clause(p)], seen, decide.default_idf):
            out.append(p)
            seen += " " + p
    return out


def _points_by_role(points: Sequence[str]) -> dict[str, list[str]]:
    """Extraction tags points as `role: text` (step, failure, why, point)."""
    out: dict[str, list[str]] = {}
    for raw in points:
        role, sep, rest = raw.partition(": ")
        if not sep or role not in ("step", "failure", "why", "point", "input"):
            role, rest = "point", raw
        out.setdefault(role, []).append(rest.strip())
    return out


def node_body(bucket: str, name: str, summary: str, points: Sequence[str], lang: str,
              related: Sequence[tuple[str, str]], sources: Sequence[tuple[SourceInfo, str]]) -> str:
    """A new node's body in the bucket's shape, with related links and the Sources section."""
    roles = _points_by_role(points)
    statement = condense(summary, lang)
    parts: list[str] = []
    if bucket == "procedure":
        steps = roles.get("step") or [s for s in roles.get("point", [])]
        if lang == "zh":
            when = f"适用场景：需要{tx.clean_statement(name)}时。"
        else:
            when = f"Use this when you need to {lower_first(tx.clean_statement(name))}."
        if steps:
            # The summary is the unit's claim (`exports over 30 s run as queued jobs`): the
            # runbook keeps it next to the steps, or the node would lose what the unit said.
            said = bool(statement) and bool(_new_points([statement], " ".join([name, *steps])))
            parts.append(f"{when}{'' if lang == 'zh' else ' '}{statement}" if said else when)
            parts.append("\n".join(f"{i}. {_end(s, lang)}" for i, s in enumerate(steps, 1)))
        else:
            parts += [when, statement]
        if roles.get("input"):
            label = "输入：" if lang == "zh" else "Inputs:"
            parts.append(label + "\n" + "\n".join(f"- {_end(s, lang)}" for s in roles["input"]))
        if roles.get("failure"):
            label = "失败方式：" if lang == "zh" else "Failure modes:"
            parts.append(label + "\n" + "\n".join(f"- {_end(s, lang)}" for s in roles["failure"]))
    elif bucket == "personal":
        parts.append(statement)
        why = roles.get("why")
        if lang == "zh":
            parts.append("原因：" + (_end(why[0], lang) if why else
                                    "来源笔记把它记录为明确的偏好或约定，没有给出更多理由。"))
            parts.append("如何应用：遇到它所说的情形时照此执行；下面的来源记录了它的出处。")
        else:
            parts.append("Why: " + (_end(why[0], lang) if why else
                                    "the notes record it as a stated preference or convention and "
                                    "give no further reason."))
            parts.append("How to apply: follow it whenever the situation it names comes up; the "
                         "sources below record where it was stated.")
        extra = _new_points(roles.get("point", []), summary)
        if extra:
            parts.append(" ".join(_end(p, lang) for p in extra[:4]))
    else:
        parts.append(statement)
        extra = _new_points(roles.get("point", []) + roles.get("failure", []), summary)
        if extra:
            parts.append(condense(("" if lang == "zh" else " ").join(_end(p, lang)
                                                                      for p in extra[:5]), lang))
        why = _new_points(roles.get("why", []), summary)
        if why:
            parts.append(("原因：" if lang == "zh" else "Why: ") + _end(why[0], lang))
    rest = list(related)
    if related:
        woven, rest = weave("\n\n".join(parts), related)
        parts = [woven]
    if rest:
        parts.append(related_sentence(rest, lang, bucket))
    parts.append("## Sources")
    parts.append("\n".join(source_sentence(src, role, lang) for src, role in sources))
    return "\n\n".join(parts) + "\n"


MAX_WORDS = 160  # a node is an abstraction (SPEC 7.1: about 50-200 words), not a copy


def condense(text: str, lang: str, limit: int = MAX_WORDS) -> str:
    """The leading sentences of `text` up to about `limit` words (CJK: 2.5 characters a word):
    a long summary is cut at a sentence end, never rewritten."""
    out: list[str] = []
    size = 0.0
    for sentence in tx.sentences(tx.clean_statement(text)):
        cost = len(sentence) / 2.5 if tx.is_cjk_text(sentence) else len(sentence.split())
        if out and size + cost > limit:
            break
        out.append(sentence)
        size += cost
    joined = ("" if lang == "zh" else " ").join(out)
    return _end(joined, lang) if joined else ""


def weave(body: str, links: Sequence[tuple[str, str]]) -> tuple[str, list[tuple[str, str]]]:
    """Turn the first plain mention of each (path, name) in the prose (before Sources, outside
    links and code) into `[[path|as written]]`; return the body and the links not woven."""
    span = _sources_span(body)
    limit = span[0] if span else len(body)
    head, tail = body[:limit], body[limit:]
    rest: list[tuple[str, str]] = []
    for link in links:
        path, name = link[0], link[1]
        pattern = tx.mention_pattern(name, woven=True)
        m = pattern.search(_masked(head)) if pattern is not None else None
        if m is None:
            rest.append(link)  # as given: a `Related` keeps its reason
            continue
        shown = head[m.start():m.end()]
        head = f"{head[:m.start()]}[[{path}|{shown}]]{head[m.end():]}"
    return head + tail, rest


def _masked(text: str) -> str:
    """`text` with wikilinks, inline code and headings blanked (same length), so that a mention
    is only found in plain prose."""
    def blank(m: re.Match[str]) -> str:
        return " " * len(m.group(0))

    text = re.sub(r"!?\[\[[^\]]*\]\]|`[^`\n]*`|^#.*$", blank, text, flags=re.M)
    return text


def lower_first(text: str) -> str:
    if len(text) > 1 and text[0].isupper() and not text[1].isupper():
        return text[0].lower() + text[1:]
    return text


# -- additive updates ------------------------------------------------------------------------------
_SOURCES_RE = re.compile(r"^##[ \t]+sources[ \t]*:?[ \t]*\r?$", re.I | re.M)
_NEXT_H12_RE = re.compile(r"^#{1,2}[ \t]+\S", re.M)


def _sources_span(body: str) -> tuple[int, int] | None:
    m = _SOURCES_RE.search(body)
    if not m:
        return None
    nxt = _NEXT_H12_RE.search(body, m.end())
    return m.start(), nxt.start() if nxt else len(body)


def add_sources(body: str, sentences: Sequence[str]) -> str:
    """Append Sources sentences at the end of the Sources section (list items if it is a list)."""
    if not sentences:
        return body
    span = _sources_span(body)
    if span is None:
        sep = "" if body.endswith("\n") else "\n"
        return body + sep + "\n## Sources\n\n" + "\n".join(sentences) + "\n"
    start, end = span
    section = body[start:end].rstrip()
    last = section.splitlines()[-1] if section else ""
    listy = bool(re.match(r"\s*[-*+]\s", last))
    addition = "\n".join(("- " + s) if listy else s for s in sentences)
    joiner = "\n" if listy else "\n\n"
    tail = body[end:]
    if tail:
        return body[:start] + section + joiner + addition + "\n\n" + tail
    # Keep the body's own final-newline state (a `read` result has none).
    return body[:start] + section + joiner + addition + ("\n" if body.endswith("\n") else "")


def insert_before_sources(body: str, paragraph: str) -> str:
    span = _sources_span(body)
    if span is None:
        return body.rstrip("\n") + "\n\n" + paragraph + "\n"
    start = span[0]
    head = body[:start].rstrip("\n")
    return (head + "\n\n" if head else "") + paragraph + "\n\n" + body[start:]


def insert_after_sentence(body: str, sentence: str, line: str) -> str:
    """Insert `line` as its own paragraph after the paragraph holding `sentence` (kept as is)."""
    probe = sentence.strip()[:40]
    idx = body.find(probe) if probe else -1
    span = _sources_span(body)
    if idx == -1 or (span is not None and idx >= span[0]):
        return insert_before_sources(body, line)
    end = body.find("\n\n", idx)
    if end == -1:
        return body.rstrip("\n") + "\n\n" + line + "\n"
    return body[:end] + "\n\n" + line + body[end:]


def append_steps(body: str, steps: Sequence[str], lang: str) -> str | None:
    """Continue the node's last numbered list with new steps; None if it has none."""
    span = _sources_span(body)
    limit = span[0] if span else len(body)
    matches = list(re.finditer(r"^(\s*)(\d+)[.)][ \t]+.*$", body[:limit], re.M))
    if not matches:
        return None
    last = matches[-1]
    indent, number = last.group(1), int(last.group(2))
    new_lines = "".join(f"\n{indent}{number + i}. {_end(s, lang)}" for i, s in enumerate(steps, 1))
    return body[:last.end()] + new_lines + body[last.end():]


def append_to_list(body: str, label_en: str, label_zh: str, items: Sequence[str],
                   lang: str) -> str | None:
    """Append items to the bullet list under a `Failure modes:`-style label; None if the node
    has no such list before its Sources."""
    span = _sources_span(body)
    limit = span[0] if span else len(body)
    label = f"(?:{re.escape(label_en)}|{re.escape(label_zh)})"
    m = re.search(rf"^{label}\s*\n((?:[ \t]*[-*+][ \t].*\n?)+)", body[:limit], re.M)
    if m is None:
        return None
    end = m.end(1)
    block = body[m.start(1):end]
    sep = "" if block.endswith("\n") else "\n"
    added = "".join(f"- {_end(tx.clean_statement(i), lang)}\n" for i in items)
    return body[:end] + sep + added + body[end:] if sep == "" else \
        body[:end] + sep + added.rstrip("\n") + body[end:]


def correction_line(new_claim: str, old_claim: str, source: str, today: str, lang: str) -> str:
    new_claim = tx.core_statement(new_claim).rstrip("。.")
    old_claim = tx.clean_statement(old_claim).rstrip("。.")
    if lang == "zh":
        return f"> {today} 更正：{new_claim}；原先的说法是“{old_claim}”。依据 [[{source}]]。"
    return (f"> Corrected on {today}: {new_claim}; the earlier claim was \u201c{old_claim}\u201d, "
            f"per [[{source}]].")


def refine_paragraph(points: Sequence[str], lang: str) -> str:
    label = "补充：" if lang == "zh" else "Also: "
    return label + ("" if lang == "zh" else " ").join(_end(tx.clean_statement(p), lang)
                                                     for p in points)


def edit_span(old_body: str, new_body: str) -> tuple[str, str]:
    """The smallest (old, new) replacement, widened to whole lines until `old` is unique in the
    body, that turns `old_body` into `new_body` (what an `edit` call sends)."""
    if old_body == new_body:
        raise ValueError("nothing to change")
    prefix = 0
    limit = min(len(old_body), len(new_body))
    while prefix < limit and old_body[prefix] == new_body[prefix]:
        prefix += 1
    suffix = 0
    while (suffix < limit - prefix and old_body[-1 - suffix] == new_body[-1 - suffix]):
        suffix += 1
    start = old_body.rfind("\n", 0, prefix) + 1
    end_old = len(old_body) - suffix
    end_new = len(new_body) - suffix
    nl = old_body.find("\n", end_old)
    stop = len(old_body) if nl == -1 else nl
    while True:
        old = old_body[start:stop]
        if old.strip() and old_body.count(old) == 1:
            break
        if start == 0 and stop == len(old_body):
            break
        if start > 0:
            start = old_body.rfind("\n", 0, start - 1) + 1
        elif stop < len(old_body):
            nl = old_body.find("\n", stop + 1)
            stop = len(old_body) if nl == -1 else nl
    new = new_body[start:end_new + (stop - end_old)]
    return old_body[start:stop], new
