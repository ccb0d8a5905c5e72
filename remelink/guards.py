"""The guarantees of SPEC §7.2 enforced in code, not left to the prompt.

- Additive: an update never removes a wikilink or a Sources sentence the node had.
- Valid output: the target passes the lint-links checks (an update: adds no lint error the node
  did not already have) and cites every path of the unit.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from remelink.config import Settings
from remelink.facts import stated
from remelink.lint import Problem, check_note, sources_section
from remelink.units import Unit
from remelink.vault import frontmatter
from remelink.vault import links as wl
from remelink.vault.notes import Note
from remelink.vault.resolve import Resolver, VaultFiles

_WS = re.compile(r"\s+")


def _norm(text: str) -> str:
    return _WS.sub(" ", text).strip()


def edge_set(note: Note) -> list[tuple[str, str | None]]:
    """The (target, anchor) edges of a note, first occurrence order."""
    return [(lk.target, lk.anchor) for lk in wl.dedupe(wl.parse_links(note.body, note.body_line))]


def source_sentences(note: Note) -> list[str]:
    """The paragraphs of the note's `## Sources` section (whitespace folded)."""
    result = wl.scan(note.body, note.body_line)
    section = sources_section(result.outline.headings)
    if section is None:
        return []
    start, end = section
    out = []
    for para in result.paragraphs:
        if start < para[0][0] < end:
            text = _norm(wl.paragraph_text(para))
            if text:
                out.append(text)
    return out


def conservation_problems(original: Note, new: Note) -> list[str]:
    """What `new` drops from `original`: wikilinks and Sources sentences, as readable items."""
    problems: list[str] = []
    after = set(edge_set(new))
    missing = [e for e in edge_set(original) if e not in after]
    if missing:
        shown = ", ".join(f"[[{t}{'#' + a if a is not None else ''}]]" for t, a in missing[:8])
        more = f" and {len(missing) - 8} more" if len(missing) > 8 else ""
        problems.append(f"it would remove wikilink(s) {shown}{more}")
    new_sources = " \n ".join(source_sentences(new))
    lost = [s for s in source_sentences(original) if s not in new_sources]
    if lost:
        # Shown whole (up to a bound): the model has to put the sentence back word for word.
        shown = "; ".join(repr(s if len(s) <= 300 else s[:297] + "...") for s in lost[:3])
        more = f" and {len(lost) - 3} more" if len(lost) > 3 else ""
        problems.append(f"it would remove Sources sentence(s) {shown}{more}")
    return problems


def cited_sources(files: VaultFiles, settings: Settings, note: Note) -> set[str]:
    """Resolved paths linked from the note's Sources section."""
    result = wl.scan(note.body, note.body_line)
    section = sources_section(result.outline.headings)
    if section is None:
        return set()
    resolver = Resolver(files, settings.resolution)
    out = set()
    for link in result.links:
        if section[0] < link.line < section[1]:
            res = resolver.resolve(link.target, note.path)
            if res.status == "ok" and res.path:
                out.add(res.path)
    return out


@dataclass(frozen=True)
class Validation:
    problems: list[str]   # why the node cannot be accepted yet (empty: it can)
    inherited: list[str]  # lint errors it keeps from the node as it was: accepted, worth a warning


def validate(files: VaultFiles, settings: Settings, unit: Unit, note: Note,
             original: Note | None = None) -> Validation:
    """Judge `note` as the unit's node.

    An update is judged on what it changes: a lint error the node `original` already had (a
    link to a note renamed since, say) is not the unit's, and the additive rule forbids
    removing the link, so demanding a clean node would fail every unit that touches it. Such
    errors are kept, and left to lint-links."""
    new, kept = _split_errors(files, settings, note, original)
    problems = [_show(p) for p in new]
    cited = cited_sources(files, settings, note)
    uncited = [p for p in unit.paths if p not in cited]
    if uncited:
        problems.append("## Sources does not cite " + ", ".join(f"[[{p}]]" for p in uncited) +
                        " - add a sentence saying what each supports")
    return Validation(problems, [_show(p) for p in kept])


def revision_problems(unit: Unit, action: str, target: str, note: Note | None) -> list[str]:
    """A unit that revises what its edited note said before updates the node its earlier unit
    went into, as a CORRECT when a fact changed, and leaves no stale value in the node's name or
    description (SPEC §9.3): node-search shows the current value."""
    r = unit.revises
    if r is None:
        return []
    if target != r.target:
        return [f"this unit revises {r.target} (its note was edited): update that node, not "
                f"{target}"]
    if r.changed and action != "CORRECT":
        return [f"a fact changed (the note said \"{r.old_statement}\", it now says "
                f"\"{r.new_statement}\"): the action is CORRECT, not {action}"]
    if not r.changed or note is None:
        return []
    try:
        meta = frontmatter.load(note)
    except Exception:  # the lint checks report an unreadable frontmatter
        return []
    problems = []
    for key in ("name", "description"):
        old = stated(str(meta.get(key) or ""), r.stale)
        if old:
            problems.append(f"the node's {key} still states {', '.join(old)}; set it to the "
                            "current value with frontmatter_update")
    return problems


def _show(problem: Problem) -> str:
    return f"line {problem.line}: {problem.code}: {problem.message}"


def _split_errors(files: VaultFiles, settings: Settings, note: Note, original: Note | None
                  ) -> tuple[list[Problem], list[Problem]]:
    """The lint errors of `note`: (new ones, ones `original` had too). Matched on code and
    message, as many times as `original` had each, since an edit moves lines."""
    errors = [p for p in check_note(files, settings, note) if p.level == "error"]
    if original is None or not errors:  # the common case costs one check
        return errors, []
    left = Counter((p.code, p.message) for p in check_note(files, settings, original)
                   if p.level == "error")
    new, kept = [], []
    for p in errors:
        key = (p.code, p.message)
        if left[key] > 0:
            left[key] -= 1
            kept.append(p)
        else:
            new.append(p)
    return new, kept
