"""One extraction answer `{units: [...], verdicts: [...], more: bool}` read at the boundary
(SPEC §8; the wire format both engines speak).

A note of the batch is judged when an accepted unit cites it, or when it has the verdict
`nothing` with a short reason. What a model means is accepted (paths and buckets as
`units.parse_unit` reads them; `verdicts` as a list of `{path, verdict, reason}` or a mapping
`{path: verdict}`); what it does not is a problem, sent back as a repair turn.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from remelink.units import Unit, match_source, parse_unit

UNITS_WORDS = frozenset({"units", "unit", "kept", "keep", "yes"})
NOTHING_WORDS = frozenset({"nothing", "none", "skip", "skipped", "no", "empty",
                           "nothing worth keeping"})


@dataclass(frozen=True)
class Verdict:
    verdict: str  # units | nothing
    reason: str = ""


@dataclass
class Page:
    """What one answer (one page) gave: usable units, verdicts, and the problems with the rest."""

    units: list[Unit] = field(default_factory=list)
    verdicts: dict[str, Verdict] = field(default_factory=dict)
    more: bool = False
    problems: list[str] = field(default_factory=list)


def _verdict_items(raw: Any) -> Iterable[tuple[Any, Any, Any]]:
    """(path, verdict, reason) from a list of mappings or a mapping of path -> verdict."""
    if isinstance(raw, Mapping):
        for path, value in raw.items():
            if isinstance(value, Mapping):
                yield path, value.get("verdict"), value.get("reason")
            elif isinstance(value, str) and ":" in value:
                word, _, reason = value.partition(":")
                yield path, word, reason
            else:
                yield path, value, None
        return
    for item in raw:
        if isinstance(item, Mapping):
            yield item.get("path"), item.get("verdict"), item.get("reason")
        else:
            yield item, None, None


def read_page(data: Mapping[str, Any], sources: Sequence[str]) -> Page:
    more = data.get("more")
    page = Page(more=more is True or (isinstance(more, str) and more.strip().lower() in
                                      ("true", "yes")))
    raw_units = data.get("units", data.get("memory_units", []))
    if raw_units is None:
        raw_units = []
    if not isinstance(raw_units, list):
        page.problems.append('"units" must be a list of {name, bucket, summary, paths}')
        raw_units = []
    seen: set[str] = set()
    for item in raw_units:
        parsed = parse_unit(item, sources=sources)
        if parsed.unit is None:
            page.problems += parsed.problems
        elif parsed.unit.id not in seen:
            seen.add(parsed.unit.id)
            page.units.append(parsed.unit)
    raw_verdicts = data.get("verdicts") or []
    if not isinstance(raw_verdicts, (list, Mapping)):
        page.problems.append('"verdicts" must be a list of {path, verdict, reason}')
        raw_verdicts = []
    for raw_path, raw_verdict, raw_reason in _verdict_items(raw_verdicts):
        if not isinstance(raw_path, str):
            page.problems.append(f"verdict {raw_path!r} has no path")
            continue
        path, why = match_source(raw_path, sources)
        if path is None:
            page.problems.append(f"verdict for {why}; give verdicts for the listed notes only")
            continue
        word = " ".join(str(raw_verdict or "").lower().split())
        reason = " ".join(str(raw_reason or "").split())
        if word in UNITS_WORDS:
            page.verdicts[path] = Verdict("units")
        elif word in NOTHING_WORDS:
            if not reason:
                page.problems.append(f"verdict for {path} is \"nothing\" without a reason; say "
                                     "in a few words why nothing in it is worth keeping")
                continue
            page.verdicts[path] = Verdict("nothing", reason[:300])
        else:
            page.problems.append(f"verdict for {path} is {raw_verdict!r}; use \"units\" or "
                                 "\"nothing\" (with a reason)")
    return page


def judged(sources: Sequence[str], units: Iterable[Unit], verdicts: Mapping[str, Verdict]
           ) -> dict[str, Verdict]:
    """The notes with a verdict: cited by a unit (`units`), or `nothing` with a reason."""
    cited = {p for u in units for p in u.paths}
    out: dict[str, Verdict] = {}
    for path in sources:
        given = verdicts.get(path)
        if path in cited:
            out[path] = Verdict("units")
        elif given is not None and given.verdict == "nothing" and given.reason:
            out[path] = given
    return out


def missing(sources: Sequence[str], units: Iterable[Unit], verdicts: Mapping[str, Verdict]
            ) -> list[str]:
    """One problem line per note without a verdict (for the repair turn)."""
    done = judged(sources, units, verdicts)
    out = []
    for path in sources:
        if path in done:
            continue
        if path in verdicts and verdicts[path].verdict == "units":
            out.append(f"{path}: verdict \"units\" but no unit cites it; add its units, or "
                       "give it the verdict \"nothing\" with a reason")
        else:
            out.append(f"{path}: no verdict; give its units, or the verdict \"nothing\" with a "
                       "reason")
    return out
