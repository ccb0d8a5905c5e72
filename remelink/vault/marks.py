"""The mark a digest node carries for a source note that was deleted (SPEC §9.3).

A deleted note's citations stay in the nodes that cite it: they are the history of where the
knowledge came from, and the additive rule never removes a link. `dream run` adds one line
under the paragraph that cites it, for the person reading the node (in Obsidian or anywhere)
and for `lint-links`, which then reports the dangling link as `deleted-source` (a warning)
instead of `broken-link` (an error), without needing `.remelink/` (a pre-commit hook runs in
clones where the checkpoint is not committed):

    > Deleted on 2026-12-02: `daily/2026-11-30/lunch.md`, cited above, no longer exists; the
      citation is kept as history.                       (one line in the node)
    > 2026-12-02 删除：上文引用的 `daily/2026-11-30/午餐.md` 已不存在，引用保留为历史。

The path is a code span, not a link, so the mark adds no dangling link of its own. Only a whole
line of this shape is a mark; the date is the day of the run that found the note gone.
"""

from __future__ import annotations

import re

_MARK_RE = re.compile(
    r"^[ \t]*>[ \t]*(?:Deleted on (\d{4}-\d{2}-\d{2}):|(\d{4}-\d{2}-\d{2}) 删除：)"
    r"[^`\n]*?(`+)[ ]?([^\n]+?)[ ]?\3(?!`)", re.M)
NEEDLES = ("Deleted on ", " 删除：")  # a cheap test before the regex


def mark_line(path: str, date: str, lang: str) -> str:
    """The mark for `path`, deleted as found on `date` (YYYY-MM-DD), in English or Chinese."""
    longest = max((len(m) for m in re.findall(r"`+", path)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if path.startswith("`") or path.endswith("`") else ""
    code = f"{fence}{pad}{path}{pad}{fence}"
    if lang == "zh":
        return f"> {date} 删除：上文引用的 {code} 已不存在，引用保留为历史。"
    return (f"> Deleted on {date}: {code}, cited above, no longer exists; the citation is kept "
            "as history.")


def deleted_marks(text: str) -> dict[str, str]:
    """{path: date} for every deletion mark in a node's text (the first date of a path wins)."""
    if not any(needle in text for needle in NEEDLES):
        return {}
    out: dict[str, str] = {}
    for m in _MARK_RE.finditer(text):
        out.setdefault(m.group(4), m.group(1) or m.group(2))
    return out
