"""Edit-aware re-integration (SPEC §9.3): an edited note's new units against the units it gave
last time.

- A unit with the same id is the same statement: nothing to do.
- A new unit that restates an old one (the same subject: most of its words, numbers aside, or
  the same name) revises it: it goes to the node the old unit went into, never to a new node.
  When a fact differs (a number, a date, a name, a negation) the update is a CORRECT; when only
  the wording does, an ordinary update of that node.
- An old unit that nothing restates is a fact the note no longer states: reported (the node
  keeps it, nodes never lose content).
- Any other new unit integrates as usual.

Engine-independent on purpose: both engines get the same pairing, carried on the unit
(`Unit.revises`) to the integration prompt and checked by the guards.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from remelink.dream.records import UnitRecord
from remelink.dream.state import State
from remelink.facts import NUMBER_RE, facts, values
from remelink.units import Revision, Unit

PAIR_SIMILARITY = 0.5  # Jaccard of the words (numbers masked) above which two units restate

_WORD_RE = re.compile(r"[a-z]+|[\u3400-\u9fff]+", re.I)
_PREFIX_RE = re.compile(r"^[a-z]+(?:@\d+)?: ")  # a point's role (`text: `, `why@1: `)


@dataclass(frozen=True)
class Unstated:
    """A unit the edited note gave before and no longer states (its node keeps it)."""

    path: str
    unit: str
    name: str
    target: str | None


def _statements(unit: Unit) -> list[str]:
    return [unit.summary, *(_PREFIX_RE.sub("", p) for p in unit.points)]


def _words(text: str) -> set[str]:
    """Lower-case words and Han bigrams, numbers masked: what two statements share."""
    masked = NUMBER_RE.sub(" # ", text)
    out: set[str] = set()
    for token in _WORD_RE.findall(masked):
        if token.isascii():
            out.add(token.lower())
        else:
            out |= {token[i:i + 2] for i in range(max(1, len(token) - 1))}
    return out


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


def _similarity(new: Unit, old: Unit) -> float:
    if new.bucket == old.bucket and _words(new.name) == _words(old.name) and _words(new.name):
        return 1.0
    return _jaccard(_words(" ".join([new.name, *_statements(new)])),
                    _words(" ".join([old.name, *_statements(old)])))


def _revision(new: Unit, old: UnitRecord) -> Revision:
    """What changed between the old unit and its restatement: the pair of statements whose
    facts differ (the most alike such pair), else the summaries."""
    best: tuple[float, str, str] | None = None
    # A statement both units make changed nothing; a line the note gained is no correction of
    # one it still states (`A restore takes about 40 minutes.` added under a rule).
    olds, news = _statements(old.unit), _statements(new)
    for o in [o for o in olds if o not in news]:
        for n in [n for n in news if n not in olds]:
            if facts(o) != facts(n):
                score = _jaccard(_words(o), _words(n))
                if best is None or score > best[0]:
                    best = (score, o, n)
    if best is None:
        return Revision(target=old.target or "", old_unit=old.unit.id,
                        old_statement=old.unit.summary, new_statement=new.summary, changed=False)
    _, o, n = best
    # Stale: what the old sentence says and the new unit says nowhere (not even in its name).
    now = facts(" ".join([new.name, *_statements(new)]))
    return Revision(target=old.target or "", old_unit=old.unit.id, old_statement=o,
                    new_statement=n, changed=True, stale=values(facts(o) - now))


def pair(state: State, paths: Sequence[str], units: Sequence[Unit]
         ) -> tuple[list[Unit], list[Unstated]]:
    """The batch's units with `revises` set where they restate a landed unit of the same note,
    and the landed units nothing restates any more (one entry per note that lost it)."""
    new_ids = {u.id for u in units}
    old_by_path: dict[str, list[UnitRecord]] = {}
    for path in paths:
        record = state.inputs.get(path)
        if record is None:
            continue
        for uid in record.units:
            rec = state.units.get(uid)
            if rec is not None and rec.status == "done" and rec.target and uid not in new_ids:
                old_by_path.setdefault(path, []).append(rec)
    if not old_by_path:
        return list(units), []
    scored: list[tuple[float, int, str]] = []
    for i, unit in enumerate(units):
        if unit.id in state.units:
            continue  # known already: done, or pending from an earlier run
        for path in unit.paths:
            for old in old_by_path.get(path, ()):
                score = _similarity(unit, old.unit)
                if score >= PAIR_SIMILARITY:
                    scored.append((score, i, old.unit.id))
    scored.sort(key=lambda s: (-s[0], s[1], s[2]))
    out = list(units)
    taken_new: set[int] = set()
    taken_old: set[str] = set()
    for _, i, old_id in scored:
        if i in taken_new or old_id in taken_old:
            continue
        taken_new.add(i)
        taken_old.add(old_id)
        out[i] = replace(out[i], revises=_revision(out[i], state.units[old_id]))
    unstated = [Unstated(path, rec.unit.id, rec.unit.name, rec.target)
                for path, olds in old_by_path.items() for rec in olds
                if rec.unit.id not in taken_old]
    return out, unstated
