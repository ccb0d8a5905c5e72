"""Additive edits of a node body for the local engine's updates (SPEC §7.2): Sources sentences
appended, paragraphs inserted before Sources or after a sentence, steps and list items
continued, and the smallest `edit` span that turns one body into another. Nothing here removes
a line; a corrected line is struck through in place, its text kept (`strike_superseded`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from remelink.models.local import fenced
from remelink.models.local import text as tx


def end(text: str, lang: str, *, more: bool = False) -> str:
    """`text` ended as a sentence, unless its author ended it. `more`: more text follows on the
    same line, so a sentence that ends in code or a URL is ended all the same."""
    text = text.strip()
    if not text or fenced.ends_with_block(text):
        return text
    closed = text.rstrip("\"'”’)）」』")  # `... commercial use."`, `(... gap!)`: ended inside
    if closed[-1:] in tuple(".!?。！？;；:：,，、") or (
            not more and _ENDS_IN_CODE_RE.search(text)):
        # Ends as its author ended it: a list item ending "...," gets no ",." added, and a
        # line ending in a code span or a bare URL no "." (a path listed as "- `/tmp/x.zip`."
        # reads as ending in a dot; an address "https://x.org/a." is copied with it).
        return text
    return text + ("。" if lang == "zh" else ".")


_ENDS_IN_CODE_RE = re.compile(r"`\s*$|(?:^|\s)https?://\S*[^\s)]$")


# -- additive updates ------------------------------------------------------------------------------
_SOURCES_RE = re.compile(r"^##[ \t]+sources[ \t]*:?[ \t]*\r?$", re.I | re.M)
_NEXT_H12_RE = re.compile(r"^#{1,2}[ \t]+\S", re.M)


def _sources_span(body: str) -> tuple[int, int] | None:
    m = _SOURCES_RE.search(body)
    if not m:
        return None
    nxt = _NEXT_H12_RE.search(body, m.end())
    return m.start(), nxt.start() if nxt else len(body)


def without_sources(body: str) -> str:
    """The body without its Sources section: what the node says itself."""
    span = _sources_span(body)
    return body if span is None else body[:span[0]] + body[span[1]:]


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


# A corrected line, marked where it stands: `~~<its text>~~ (superseded on <date>, see below)`
# for a paragraph line, `<its text> (superseded on <date>, see below)` for a list item.
SUPERSEDED = {"en": " (superseded on {date}, see below)", "zh": "（{date} 已更正，见下）"}
_SUPERSEDED_LINE_RE = re.compile(
    r"^.*(?:\(superseded on [^)\n]*\)|（[^）\n]*已更正，见下）)[ \t]*$", re.M)
# Markup a strikethrough would hide (a link is then no edge) or break (html, math, comments).
_MARKUP_RE = re.compile(r"[\[\]~<$%\\]|`{3}")
_ITEM_RE = re.compile(r"^([ \t]*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)?)(\S.*?)[ \t]*$", re.M)
_STOPS = ".。!！"


def strike_superseded(body: str, sentence: str, when: str, lang: str, quote: str) -> str:
    """`body` with the line that is `sentence` alone (before Sources) marked superseded on
    `when`, so that a reader skimming the node sees at that line that it no longer holds, and
    can still read it: a paragraph line is struck through, a list item (a step of a runbook)
    keeps its text and mark and gets the note after it. Every old line stays, character for
    character. Unchanged when no line is that sentence alone, or when it holds markup a
    strikethrough would hide (a link), when `quote` (the correction) does not quote it as
    it stands (its full stop aside), or when the body says it more than once: the correction
    below it then says it alone."""
    target = sentence.strip().rstrip(_STOPS)
    if not target:
        return body
    # Said once outside the correction quotes: the guards then know which line it was.
    if sum(target in x for x in body.split("\n") if not x.lstrip().startswith(">")) != 1:
        return body
    span = _sources_span(body)
    limit = span[0] if span else len(body)
    for m in _ITEM_RE.finditer(body, 0, limit):
        text = m.group(2)
        if text.rstrip(_STOPS) != target or text.startswith(("#", ">", "|")) or \
                _MARKUP_RE.search(text) or text.rstrip(_STOPS) not in quote:
            continue
        mark = SUPERSEDED.get(lang, SUPERSEDED["en"]).format(date=when)
        shown = text if m.group(1).strip() else f"~~{text}~~"
        return f"{body[:m.start(2)]}{shown}{mark}{body[m.end(2):]}"
    return body


def without_superseded(text: str) -> str:
    """`text` without the lines marked superseded by a correction: withdrawn, not claims."""
    return _SUPERSEDED_LINE_RE.sub("", text)


def append_steps(body: str, steps: Sequence[str], lang: str) -> str | None:
    """Continue the node's last numbered list with new steps; None if it has none."""
    span = _sources_span(body)
    limit = span[0] if span else len(body)
    matches = list(re.finditer(r"^([ \t]*)(\d+)[.)][ \t]+.*$", body[:limit], re.M))
    if not matches:
        return None
    last = matches[-1]
    indent, number = last.group(1), int(last.group(2))
    new_lines = "".join(f"\n{indent}{number + i}. {end(s, lang)}" for i, s in enumerate(steps, 1))
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
    stop = m.end(1)
    block = body[m.start(1):stop]
    sep = "" if block.endswith("\n") else "\n"
    added = "".join(f"- {end(tx.clean_statement(i), lang)}\n" for i in items)
    return body[:stop] + sep + added + body[stop:] if sep == "" else \
        body[:stop] + sep + added.rstrip("\n") + body[stop:]


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
