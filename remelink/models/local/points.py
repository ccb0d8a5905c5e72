"""The grammar of a unit's `points` between the local engine's extraction and its writing.

A point is `role: text` or `role@K: text`, where K (1-based) names the unit path the point
comes from when it is not the first one: `step: Freeze the pipeline.`, `why: ...`,
`point@2: Alice asked again ...`; `text: ...` is a line of a document kept as written, in
its order (a how-to's statements and the lines that carry its code). Prose roles are written
into the node; `said` is provenance only (who said it, on which day, in which turns: `said@2:
Joanna; 2022-01-23; D2:3, D2:5`) and never appears as prose; so is `again` (a later note's
words that say the unit's point again, `again@2: Dana repeated: status goes in ...`: its
Sources sentence quotes them, the body does not repeat them), and `under` (the lead-in of the
list a line is in, when it says the list is said again: `under: Agreed / reminders`), and
`link` (a markdown link of the note whose words the unit says, `link: the README<TAB>[the
README](https://...)`: weblinks.py puts it back on those words in the written prose), and
`section` (the heading of the document's section the `text:` lines after it sit under,
`section: Using this with pytest`, written as a heading before the first of them a node keeps;
`section: -` (NO_SECTION) where they sit under none).
`status@2: 70 % of shards done` is a later status line of a workstream (status.py), dated by
its note when written. Points without a known role are plain statements (an LLM's points).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

PROSE_ROLES = ("step", "failure", "why", "point", "input", "symptom", "cause", "outcome",
               "lesson", "context", "apply", "followup", "check", "text", "status")
META_ROLES = ("said", "again", "under", "link", "section")
NO_SECTION = "-"  # `section: -`: the lines after it sit under no heading a node shows
_POINT_RE = re.compile(r"^([a-z]+)(?:@(\d+))?: (.*)$", re.S)


@dataclass(frozen=True)
class Point:
    role: str
    source: int  # 0-based index into the unit's paths
    text: str

    def format(self) -> str:
        at = f"@{self.source + 1}" if self.source else ""
        return f"{self.role}{at}: {self.text}"


def parse(raw: str) -> Point:
    m = _POINT_RE.match(raw)
    if m and m.group(1) in PROSE_ROLES + META_ROLES:
        return Point(m.group(1), max(0, int(m.group(2) or 1) - 1), m.group(3).strip())
    return Point("point", 0, raw.strip())


def parse_all(raws: Iterable[str]) -> list[Point]:
    return [parse(r) for r in raws]


def text_of(raw: str) -> str:
    """What a point says (its role and source taken off); '' for provenance."""
    p = parse(raw)
    return "" if p.role in META_ROLES else p.text


def moved(raw: str, source: int) -> str:
    """The point re-attributed to unit path `source` (when its unit merges into another)."""
    p = parse(raw)
    return Point(p.role, source, p.text).format() if _POINT_RE.match(raw) else \
        Point("point", source, p.text).format()


@dataclass(frozen=True)
class Said:
    speaker: str
    day: str
    turns: tuple[str, ...]


def said(speaker: str, day: str, turns: Iterable[str], source: int = 0) -> str:
    return Point("said", source, f"{speaker}; {day}; {', '.join(turns)}").format()


def said_of(points: Iterable[str]) -> dict[int, Said]:
    """Provenance by unit path index."""
    out: dict[int, Said] = {}
    for raw in points:
        p = parse(raw)
        if p.role != "said":
            continue
        speaker, day, turns = ([*p.text.split(";"), "", ""])[:3]
        out[p.source] = Said(speaker.strip(), day.strip(),
                             tuple(t.strip() for t in turns.split(",") if t.strip()))
    return out
