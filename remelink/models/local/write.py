"""Writing for the local engine: bucket-shaped node bodies, Sources sentences, related links in
prose, and additive updates (SPEC §7.1), in the language of the unit. Every sentence comes from
the unit's own statements or from fixed connective phrases; nothing is invented.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from remelink.models.local import fenced, shapes, sources
from remelink.models.local import points as pt
from remelink.models.local import text as tx
from remelink.models.local.edits import (
    _sources_span,
    add_sources,
    append_steps,
    append_to_list,
    edit_span,
    insert_after_sentence,
    insert_before_sources,
    strike_superseded,
    without_sources,
)
from remelink.models.local.edits import end as _end
from remelink.models.local.shapes import KIND_BY_BUCKET
from remelink.models.local.sources import (
    SourceInfo,
    restates_more,
    source_sentence,
    sources_of,
    update_roles,
)

# The engine's writing API (the additive edits live in edits.py, Sources sentences in sources.py).
__all__ = [
    "KIND_BY_BUCKET",
    "SourceInfo",
    "add_sources",
    "append_steps",
    "append_to_list",
    "condense",
    "correction_line",
    "edit_span",
    "insert_after_sentence",
    "insert_before_sources",
    "lower_first",
    "node_body",
    "refine_paragraph",
    "related_sentence",
    "restates_more",
    "source_sentence",
    "sources_of",
    "strike_superseded",
    "update_roles",
    "weave",
    "without_sources",
]

_LABELS = {
    "en": {"why": "Why: ", "apply": "How to apply: ", "context": "Context: ",
           "followup": "Follow-up: ", "symptom": "Symptom: ", "cause": "Cause: ",
           "fix": "Fix:", "check": "Diagnosis:", "outcome": "Result: ", "lesson": "Lesson: ",
           "inputs": "Inputs:", "failures": "Failure modes:"},
    "zh": {"why": "原因：", "apply": "如何应用：", "context": "背景：", "followup": "后续：",
           "symptom": "现象：", "cause": "原因：", "fix": "修复：", "check": "排查：",
           "outcome": "结果：", "lesson": "教训：", "inputs": "输入：", "failures": "失败方式："},
}


class Related(tuple[str, str]):
    """A related node to link: unpacks as (path, name) like a plain pair, and carries why it is
    related (relate.REASONS: mention, linked, source, named, term, similar, crosslang) and, for
    `named`, the identifier or name both write (`evidence`)."""

    reason: str
    evidence: str

    def __new__(cls, path: str, name: str, reason: str = "similar",
                evidence: str = "") -> Related:
        obj = super().__new__(cls, (path, name))
        obj.reason = reason
        obj.evidence = evidence
        return obj


# What a link says is what its reason evidences, and nothing more (issue 21: "This is the
# runbook for", "A neighbouring runbook is A, B and C" claimed relations nobody checked). `{}`
# is the link, `{e}` the shared identifier. English and Chinese; each is one sentence.
_RELATION = {
    "en": {
        "mention": "It refers to {}.",
        "source": "The same note also records {}.",
        "named": "{} also names {e}.",
        "named_many": "{} also name {e}.",  # "[[a]] and [[b]] also name X": plural agreement
        "see": "See also {}.",
    },
    "zh": {
        "mention": "文中提到 {}。",
        "source": "同一笔记还记录了 {}。",
        "named": "{} 也写到 {e}。",
        "see": "另见 {}。",
    },
}
# Sentences written before issue 21 (nodes in existing vaults still hold them): recognised as
# link sentences, never written again.
_OLD_RELATION = (
    "It relies on {}.", "This is the runbook for {}.", "Apply {} while doing it.",
    "A neighbouring runbook is {}.", "The steps to follow it are in {}.", "The steps are in {}.",
    "A related preference is {}.", "It concerns {}.", "The decision it goes with is {}.",
    "It refers to {}.", "It goes together with {}.",
    "它用到 {}。", "这是 {} 的操作步骤。", "执行时遵循 {}。", "相邻的操作见 {}。",
    "这条规则的做法见 {}。", "具体做法见 {}。", "与之相关的还有 {}。", "相关的偏好见 {}。",
    "它涉及 {}。", "与之对应的决定见 {}。",
)


def _relation_patterns() -> list[re.Pattern[str]]:
    out = []
    phrases = {p for table in _RELATION.values() for p in table.values()} | set(_OLD_RELATION)
    for phrase in phrases:
        head, _, tail = phrase.partition("{}")
        tail_re = ".+".join(re.escape(piece) for piece in tail.strip().split("{e}"))
        out.append(re.compile(re.escape(head.strip()) + r"\s*!?\[\[" + r".*" + tail_re + r"$",
                              re.I))
    return out


_RELATION_RES = _relation_patterns()
_WIKILINK_RE = re.compile(r"\[\[[^\[\]\n]*\]\]")


_HELD_LINK_RE = re.compile(r"\[\[\x00(\d+)\x00\]\]")


def _sentences_around_links(line: str) -> list[str]:
    """The sentences of a line, never cut at a dot inside a wikilink."""
    links = _WIKILINK_RE.findall(line)
    held = _WIKILINK_RE.sub(lambda m: f"[[\x00{links.index(m.group(0))}\x00]]", line)
    return [_HELD_LINK_RE.sub(lambda m: links[int(m.group(1))], part)
            for part in re.split(r"(?<=[.。])\s*(?=[A-Z\u4e00-\u9fff\[])", held)]


def without_related_sentences(body: str) -> str:
    """The body without the sentences `related_sentence` wrote: what the node states itself.
    Decisions compare a unit with this (a node's links name other nodes, whose words would make
    it look like them), never with the links it grew."""
    kept = []
    for line in body.split("\n"):
        # A dot inside a link's shown words (`[[...|Using io.BufferedReader ...]]`) ends no
        # sentence: the links are set aside while the line is cut into sentences.
        parts = _sentences_around_links(line.strip())
        if line.strip() and "[[" in line and all(any(r.match(p) for r in _RELATION_RES)
                                                  for p in parts if p):
            continue
        kept.append(line)
    return "\n".join(kept)


def _relation(lang: str, reason: str, evidence: str) -> str:
    """The sentence for a link of this reason: the note records both, the unit names it, both
    write the same identifier, or, for a link on the notes' own links or on similar words,
    no claim beyond "see also"."""
    table = _RELATION[lang]
    if reason == "named":  # names what both write; with nothing to name it claims no more
        if not evidence:
            return table["see"]
        head, _, tail = table["named"].partition("{}")
        return head + "{}" + tail.replace("{e}", evidence)
    return table.get(reason, table["see"])


def related_sentence(related: Sequence[tuple[str, str]], lang: str, bucket: str = "") -> str:
    """One sentence per kind of evidence: "The same note also records [[...]].", "[[...]] also
    names pgbouncer.", "See also [[...]]." `related` holds (path, name) pairs, or `Related`
    pairs that also carry why they are linked. `bucket` is kept for callers: what a link says
    no longer depends on the buckets it joins."""
    del bucket
    groups: dict[str, list[str]] = {}
    for item in related:
        path, name = item[0], item[1]
        phrase = _relation(lang, getattr(item, "reason", "similar"),
                           getattr(item, "evidence", ""))
        # A link's label is the other node's name, not code: code marks it carries (`mlk8s`)
        # would be code this node gains from no note of its unit (the code guard refuses it).
        shown = tx.without_code_marks(tx.clean_statement(name)).rstrip(".。") or path
        groups.setdefault(phrase, []).append(f"[[{path}|{shown}]]")
    out = []
    for phrase, links in groups.items():
        if lang == "zh":
            joined = "、".join(links[:-1]) + ("和" if len(links) > 1 else "") + links[-1]
        else:
            joined = links[0] if len(links) == 1 else ", ".join(links[:-1]) + " and " + links[-1]
        # Not str.format: the evidence is a note's own text, braces included (`{id}`).
        if lang == "en" and len(links) > 1 and phrase.startswith("{} also names "):
            phrase = phrase.replace("{} also names ", "{} also name ", 1)  # plural subject
        head, _, tail = phrase.partition("{}")
        sentence = head + joined + tail
        out.append(sentence[:1].upper() + sentence[1:] if lang == "en" and
                   not sentence.startswith("[[") else sentence)
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
            continue
        # A point that restates the claim and then adds to it: the clauses it adds.
        for clause in tx.clauses(p)[1:]:
            if decide.novel([clause], seen, decide.default_idf):
                out.append(clause)
                seen += " " + clause
    return out


def _points_by_role(points: Sequence[str]) -> dict[str, list[str]]:
    """Prose points by role (extraction writes `role: text` or `role@K: text`)."""
    out: dict[str, list[str]] = {}
    for p in pt.parse_all(points):
        if p.role not in pt.META_ROLES and p.text:
            out.setdefault(p.role, []).append(p.text)
    return out


def _join(items: Sequence[str], lang: str) -> str:
    return ("" if lang == "zh" else " ").join(_end(i, lang) for i in items)


def _labelled(role: str, items: Sequence[str], lang: str) -> str:
    return _LABELS[lang][role] + _join(items, lang)


def _listed(role: str, items: Sequence[str], lang: str, numbered: bool = False) -> str:
    lines = [f"{i}. {_end(s, lang)}" if numbered else f"- {_end(s, lang)}"
             for i, s in enumerate(items, 1)]
    return _LABELS[lang][role] + "\n" + "\n".join(lines)


def _procedure(name: str, statement: str, roles: dict[str, list[str]], lang: str,
               sections: Sequence[str] = ()) -> list[str]:
    steps = roles.get("step") or list(roles.get("point", []))
    debug = bool(roles.get("symptom") or roles.get("cause") or roles.get("lesson"))
    parts: list[str] = []
    if debug:
        # A debugging session: when it applies is its symptom; the fix is the steps; what was
        # measured after the fix is its result, not a step; the lesson stands on its own line.
        symptom = roles.get("symptom", [])
        parts.append(_labelled("symptom", symptom, lang) if symptom else
                     shapes.when_line(name, lang))
        if roles.get("context"):
            parts.append(_labelled("context", roles["context"], lang))
        if roles.get("cause"):
            parts.append(_labelled("cause", roles["cause"], lang))
        if roles.get("check"):
            parts.append(_listed("check", roles["check"], lang, numbered=True))
        if steps:
            parts.append(_listed("fix", steps, lang, numbered=True))
        if roles.get("outcome"):
            parts.append(_labelled("outcome", roles["outcome"], lang))
        if roles.get("lesson"):
            parts.append(_labelled("lesson", roles["lesson"], lang))
    else:
        # When to use it: the note's own words for it if it has them ("Run through this every
        # Monday when the rotation changes."), else a line built on the title.
        when = _end(roles["context"][0], lang) if roles.get("context") else \
            shapes.when_line(name, lang)
        # The summary is the unit's claim (`exports over 30 s run as queued jobs`): the
        # runbook keeps it next to the steps, or the node would lose what the unit said.
        said = bool(statement) and bool(_new_points([statement], " ".join([name, *steps, when])))
        parts.append(f"{when}{'' if lang == 'zh' else ' '}{statement}" if said else when)
        if steps:
            parts.append("\n".join(f"{i}. {_end(s, lang)}" for i, s in enumerate(steps, 1)))
        if roles.get("step"):
            # What the note writes after its steps (`Rollback: ...`, a caveat) stays with them,
            # each line as written; the author's story stays in the note.
            # A line of another section of a how-to keeps its heading (issue 21).
            lines = roles.get("point", [])
            heads = list(sections) if len(sections) == len(lines) else [""] * len(lines)
            kept, left = _taught(lines, heads)
            for line, head in zip(kept, _headings(kept, lines, heads), strict=True):
                parts += [f"### {head}"] if head else []
                parts.append(_end(line, lang))
            if left >= LEFT_WORDS:
                parts.append(_REST[lang][any(fenced.has_block(p) for p in kept)])
        if roles.get("outcome"):
            parts.append(_labelled("outcome", roles["outcome"], lang))
    if roles.get("input"):
        parts.append(_listed("inputs", roles["input"], lang))
    if roles.get("failure"):
        parts.append(_listed("failures", roles["failure"], lang))
    if roles.get("lesson") and not debug:
        parts.append(_labelled("lesson", roles["lesson"], lang))
    return parts


def _text_sections(points: Sequence[str], role: str = "text") -> list[str]:
    """The heading each `text:` line (or line of `role`) of the points sits under (its
    `section:` mark, "" for none), in the order of roles[role]; a line of another note sits
    under none of this note's headings."""
    out: list[str] = []
    heading, source = "", 0
    for p in pt.parse_all(points):
        if p.role == "section":
            heading, source = ("" if p.text == pt.NO_SECTION else p.text), p.source
        elif p.role == role and p.text:
            out.append(heading if p.source == source else "")
    return out


def _headings(kept: Sequence[str], lines: Sequence[str], heads: Sequence[str]) -> list[str]:
    """For each kept line (a subsequence of `lines`, each line under `heads`), the heading to
    write before it: its section's, before the first kept line of that section, each heading
    once; "" for none."""
    out: list[str] = []
    at = 0
    shown, written = "", set()
    for line in kept:
        while lines[at] is not line:
            at += 1
        head = heads[at]
        at += 1
        new = head != shown and bool(head) and head.casefold() not in written
        out.append(head if new else "")
        if new:
            written.add(head.casefold())
        shown = head
    return out


def _statement_parts(statement: str, summary: str, roles: dict[str, list[str]], lang: str,
                     *, labels: bool, sections: Sequence[str] = ()) -> list[str]:
    """A rule, preference, fact or concept: the statement, then only what the notes give
    (the reason, how to apply it, its context, further points, a follow-up)."""
    why = roles.get("why", [])
    if labels and why and tx.main_clause(summary) != tx.clean_statement(summary):
        # "X, because Y": the rule first, its reason on the Why line.
        statement = _end(tx.main_clause(statement), lang)
        summary = tx.main_clause(summary)
    parts = [statement]
    # A document's lines, as written and in its order (its statements, the lines that carry
    # its code), less the author's story: each its own paragraph, none condensed, so no
    # command is lost.
    texts = roles.get("text", [])
    heads = list(sections) if len(sections) == len(texts) else [""] * len(texts)
    pairs = [(line, head) for line, head in zip(texts, heads, strict=True)
             if tx.clean_statement(line).removeprefix("- ") not in tx.clean_statement(summary)]
    lines = [line for line, _ in pairs]
    kept, left = _taught(lines, [head for _, head in pairs])
    # A kept line keeps the heading of its section (issue 21): a level-3 heading before the
    # first line the node keeps of that section, each heading once (`## Sources` stays the
    # only level-2 section the engine writes).
    for line, head in zip(kept, _headings(kept, lines, [head for _, head in pairs]),
                          strict=True):
        if head:
            parts.append(f"### {head}")
        # An item of the note's list ends as its author ended it (`- [deno.zip](url)`, `-
        # Two laptop power supplies`): a "." would be added to a name, a link or a path.
        line = line.strip() if line.startswith("- ") else _end(line, lang)
        if line.startswith("- ") and parts[-1].startswith("- "):
            parts[-1] += "\n" + line  # the items of one list stay one list
        else:
            parts.append(line)
    extra = _new_points(roles.get("point", []) + roles.get("failure", []), summary)
    if extra:
        parts.append(condense(_join(extra[:6], lang), lang))
    for role in ("why", "apply", "context", "lesson", "followup"):
        items = _new_points(roles.get(role, []), summary)
        if items:
            parts.append(_labelled(role, items[:2], lang) if labels or role != "why" else
                         _labelled(role, items[:1], lang))
    if left >= LEFT_WORDS:
        # What was left out is the note's to tell: the Sources sentence links it.
        how_to = any(fenced.has_block(line) for line in kept)
        parts.append(_REST[lang][how_to])
    return parts


LEFT_WORDS = 25  # narration left out that makes the node say the note has the rest
_REST = {"en": {True: "The note has the full walkthrough.", False: "The note tells the rest."},
         "zh": {True: "完整过程见原笔记。", False: "其余内容见原笔记。"}}


PROSE_WORDS = 150  # a document's prose a node keeps in full before keeping only what is reused
# A URL, a number (`15 minutes`, `3.11`, `64`), not a digit inside a name (`o3-mini`, `p99`).
_REUSED_RE = re.compile(r"https?://|\bwww\.|(?<![A-Za-z0-9_.-])\d")


def _taught(lines: Sequence[str], heads: Sequence[str] = ()) -> tuple[list[str], int]:
    """What a node keeps of a document's lines (SPEC 7.1: an abstraction, not a copy), in the
    note's order. What people reuse is always kept: a line with a block or with code (what it
    says of the code is the how-to: `... indicated `botocore...LimitExceededException` but
    that's not a class you can import`, even when the code itself is quoted elsewhere), a
    number, a URL, a rule or decision, an item of the document's lists. The rest is prose:
    kept up to about PROSE_WORDS words, the first lines first, except the author's story
    (tx.is_narration: "I wanted to ...", "So I tried X first", an aside in parentheses), which
    stays in the note. The author's notices about the note (tx.is_notice: `Update: ...`, `I was
    wrong`, every line under a heading that opens one, `heads` giving each line's heading) are
    statements of the note, always kept. Returns the kept lines and the words of what it
    teaches left out (the Sources sentence links the note that has them; the story left out
    counts for nothing)."""
    heads = list(heads) if len(heads) == len(lines) else [""] * len(lines)
    notices = [tx.is_notice(line) or (bool(head) and tx.is_notice_heading(head))
               for line, head in zip(lines, heads, strict=True)]
    story = [tx.is_narration(line) and not notice for line, notice in zip(lines, notices,
                                                                          strict=True)]
    reused = []
    for line, told, notice in zip(lines, story, notices, strict=True):
        names_code = any(m.strip() for m in re.findall(r"`([^`\n]*)`", fenced.strip(line)))
        plain = re.sub(r"`[^`\n]*`", " ", fenced.strip(line))
        reused.append(notice or fenced.has_block(line) or names_code or bool(
            _REUSED_RE.search(plain)) or (
            not told and (line.startswith("- ") or tx.states_rule(line) or
                          tx.has_cue(plain, tx.DECISION_CUES))))
    # A lead-in belongs with what it introduces (`... the shortlist:` before its list).
    for i in range(len(lines) - 2, -1, -1):
        if reused[i + 1] and fenced.strip(lines[i]).rstrip().endswith((":", "：")):
            reused[i] = True
    kept: list[str] = []
    left = 0
    prose = 0
    for line, told, keep in zip(lines, story, reused, strict=True):
        words = _prose_words(line)
        if keep or (not told and prose + words <= PROSE_WORDS):
            kept.append(line)
            prose += words
        elif not told:
            left += words  # the author's story left in the note is no part of what it teaches
    return kept, left


def _prose_words(text: str) -> int:
    plain = re.sub(r"`[^`\n]*`", " ", fenced.strip(text))
    return round(len(plain) / 2.5) if tx.is_cjk_text(plain) else len(plain.split())


def _told_parts(statement: str, points: Sequence[str], said: dict[int, pt.Said], lang: str
                ) -> list[str]:
    """What a person told, over one or several conversations: the first account, then what
    each later conversation added, dated."""
    first = [statement]
    later: list[str] = []
    for p in pt.parse_all(points):
        if p.role in pt.META_ROLES or not p.text:
            continue
        if p.source == 0:
            first.append(_end(p.text, lang))
            continue
        day = sources.day_text(said[p.source].day, lang) if p.source in said else ""
        text = _end(p.text, lang).rstrip("。.")
        if day and day in text:
            day = ""  # the fact already says its date
        when = (f"（{day}）。" if lang == "zh" else f" ({day}).") if day else _end("", lang) or \
            ("。" if lang == "zh" else ".")
        later.append(f"- {text}{when}")
    parts = [_join(first, lang)]
    if later:
        parts.append("\n".join(later))
    return parts


def node_body(bucket: str, name: str, summary: str, points: Sequence[str], lang: str,
              related: Sequence[tuple[str, str]], sources: Sequence[tuple[SourceInfo, str]]) -> str:
    """A new node's body in the bucket's shape, with related links and the Sources section.
    Every line carries content from the notes: a label line (`Why:`, `How to apply:`) is
    written only when the notes give its content."""
    roles = _points_by_role(points)
    statement = condense(summary, lang)
    said = pt.said_of(points)
    if said:
        parts = _told_parts(statement, points, said, lang)
    elif bucket == "procedure":
        parts = _procedure(name, statement, roles, lang, _text_sections(points, "point"))
    else:
        parts = _statement_parts(statement, summary, roles, lang, labels=bucket == "personal",
                                 sections=_text_sections(points))
    rest = list(related)
    if related:
        woven, rest = weave("\n\n".join(parts), related)
        parts = [woven]
    if rest:
        parts.append(related_sentence(rest, lang, bucket))
    parts.append("## Sources")
    parts.append("\n".join(source_sentence(src, role, lang) for src, role in sources))
    return fenced.unfold("\n\n".join(parts)) + "\n"


MAX_WORDS = 160  # a node is an abstraction (SPEC 7.1: about 50-200 words), not a copy


def condense(text: str, lang: str, limit: int = MAX_WORDS) -> str:
    """The leading sentences of `text` up to about `limit` words (CJK: 2.5 characters a word):
    a long summary is cut at a sentence end, never rewritten."""
    out: list[str] = []
    size = 0.0
    for sentence in tx.sentences(tx.clean_statement(text), clauses=False):
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
    """`text` with wikilinks, inline code, code blocks (folded or written out) and headings
    blanked (same length), so that a mention is only found in plain prose: a link woven into
    code would change the code (`"[[...|System]]: Reload"`), which the code guard refuses."""
    def blank(m: re.Match[str]) -> str:
        return " " * len(m.group(0))

    lines = fenced.TOKEN_RE.sub(blank, text).split("\n")
    fence = ""
    for i, line in enumerate(lines):
        opening = _FENCE_LINE_RE.match(line)
        if fence or opening:
            lines[i] = " " * len(line)
        if opening and not fence:
            fence = opening.group(1)[0] * len(opening.group(1))
        elif fence and line.strip().startswith(fence) and not line.strip().strip(fence[0]):
            fence = ""
    # (Fences first: the inline-code pattern would take a fence's first two backticks.)
    return re.sub(r"!?\[\[[^\[\]\n]*\]\]|`[^`\n]*`|^#.*$", blank, "\n".join(lines),
                  flags=re.M)  # linear


_FENCE_LINE_RE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")


lower_first = tx.lower_first


# The unit's own label of a correction ("Correction: ...", "Update:", "更正：") opens the claim
# it corrects with: the line says "Corrected on <date>:" already.
_CORRECTION_LABEL_RE = re.compile(
    r"^(?:(?:correction|corrected|update|updated|change|erratum)\s*[:：]\s*|"
    r"(?:actually|in fact)\s*[:：,，]\s*|"
    r"(?:[\w'.-]+\s+){0,3}?changed\s+(?:his|her|their|my|our)\s+mind\s*[:：,—–]\s*|"
    r"(?:更正|纠正|修正|更新|勘误)\s*[:：]\s*|(?:其实|实际上)\s*[:：,，]?\s*|"
    r"[\u4e00-\u9fff]{0,4}?(?:改主意了|改变主意了|改了主意)\s*[:：,，]\s*)+", re.I)


def correction_line(new_claim: str, old_claim: str, source: str, today: str, lang: str) -> str:
    new_claim = tx.core_statement(_CORRECTION_LABEL_RE.sub("", tx.clean_statement(new_claim)))
    new_claim = new_claim.rstrip("。.")
    old_claim = tx.clean_statement(old_claim).rstrip("。.")
    if lang == "zh":
        return f"> {today} 更正：{new_claim}；原先的说法是“{old_claim}”。依据 [[{source}]]。"
    return (f"> Corrected on {today}: {new_claim}; the earlier claim was \u201c{old_claim}\u201d, "
            f"per [[{source}]].")


def refine_paragraph(points: Sequence[str], lang: str) -> str:
    label = "补充：" if lang == "zh" else "Also: "
    return label + ("" if lang == "zh" else " ").join(_end(tx.clean_statement(p), lang)
                                                     for p in points)


