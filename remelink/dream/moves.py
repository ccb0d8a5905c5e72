"""Processed notes that are gone (SPEC §9.3): renamed or deleted.

At the start of extraction, a note the checkpoint knows that is no longer on disk is either

- **renamed**: a note the checkpoint does not know yet has its content hash (a pure rename,
  `git mv`), or, failing that, shares at least `sketch.SAME_NOTE` of its text with it (a rename
  with a small edit; each gone note pairs with at most one new note, the most alike first).
  Every digest node citing the old path is relinked to the new one (the same sentence, a new
  target), then the checkpoint entry moves with its units (`State.move_input`). A pure rename
  is then unchanged and nothing is extracted; an edited one is extracted as an edit of the note
  it was (its units paired with the old ones, revisions.py);
- **deleted**: the nodes citing it keep their citations (the history of where the knowledge
  came from) and get a deletion mark under each (vault/marks.py); the checkpoint forgets it
  (`State.forget_input`).

Nodes are edited before the checkpoint changes, and a note whose nodes could not all be edited
(a node changed on disk meanwhile, or refused by a guard) stays in the checkpoint: the next run
finds it gone again and finishes the job; edits already made are not made twice (a relinked
link resolves, a marked path is not marked again).

With `--date/--scan-days`, only notes inside the window are looked at: a note outside it is
neither looked for nor counted as gone.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from remelink.dream import citations as cite
from remelink.dream import sketch
from remelink.dream.context import RunContext
from remelink.errors import RemelinkError
from remelink.guards import body_language, conservation_problems, new_errors
from remelink.vault.notes import Note
from remelink.vault.paths import disk_path
from remelink.vault.resolve import VaultFiles


@dataclass(frozen=True)
class Seen:
    """A note found by this run's scan: its content hash and, for a note the checkpoint does
    not know, its bytes (to compare with the gone notes)."""

    digest: str
    data: bytes | None


@dataclass(frozen=True)
class Rename:
    old: str
    new: str
    similarity: float  # 1.0: the same content


def gone_inputs(ctx: RunContext, present: Sequence[str]) -> list[str]:
    """Checkpointed notes that are no longer on disk (inside the run's window)."""
    here = set(present)
    folders = ctx.settings.folders
    out = []
    for rel in sorted(ctx.state.inputs):
        if rel in here:
            continue
        if ctx.window is not None and not ctx.window.contains(rel, folders.daily,
                                                              folders.resource):
            continue
        if not os.path.lexists(disk_path(ctx.vault, rel)):  # refused but there: not gone
            out.append(rel)
    return out


def pair(ctx: RunContext, gone: Sequence[str], seen: Mapping[str, Seen]) -> list[Rename]:
    """The renames among the gone notes: the same content first, then the same note with a
    small edit (see the module docstring)."""
    inputs = ctx.state.inputs
    fresh = [rel for rel in sorted(seen) if rel not in inputs]
    left = list(gone)
    out: list[Rename] = []
    by_hash: dict[str, list[str]] = {}
    for rel in left:
        h = inputs[rel].hash
        if h and not h.startswith("stat:"):
            by_hash.setdefault(h, []).append(rel)
    unmatched = []
    for rel in fresh:
        olds = by_hash.get(seen[rel].digest)
        if olds:
            old = min(olds, key=lambda o: (_name(o) != _name(rel), o))  # same name first
            olds.remove(old)
            left.remove(old)
            out.append(Rename(old, rel, 1.0))
        else:
            unmatched.append(rel)
    sketches = {rel: sk for rel in left
                if (sk := sketch.parse(inputs[rel].sketch)) is not None}
    if not sketches or not unmatched:
        return out
    scored: list[tuple[float, str, str]] = []
    for rel in unmatched:
        data = seen[rel].data
        if data is None:
            continue
        mine = sketch.hashes(data.decode("utf-8", "replace"))
        for old, theirs in sketches.items():
            score = sketch.similarity(mine, theirs)
            if score >= sketch.SAME_NOTE:
                scored.append((score, old, rel))
    taken: set[str] = set()
    for score, old, rel in sorted(scored, key=lambda s: (-s[0], s[1], s[2])):
        if old in taken or rel in taken:
            continue
        taken |= {old, rel}
        out.append(Rename(old, rel, round(score, 3)))
    return out


def _name(rel: str) -> str:
    return rel.rsplit("/", 1)[-1]


def settle(ctx: RunContext, present: Sequence[str], seen: Mapping[str, Seen]) -> set[str]:
    """Find the gone notes, relink the renamed ones, mark the deleted ones (see the module
    docstring); the report says what was done. Returns the new paths of renames that could
    not be finished: they wait for the next run, which finishes the rename (extracted now,
    they would become new notes, and their old citations stay broken)."""
    gone = gone_inputs(ctx, present)
    if not gone:
        return set()
    renames = pair(ctx, gone, seen)
    renamed = {r.old for r in renames}
    deleted = [rel for rel in gone if rel not in renamed]
    files = VaultFiles.scan(ctx.vault)
    citing, problems = cite.citing_nodes(ctx.vault, ctx.settings, files, gone)
    ctx.report.warnings += problems
    edited: list[str] = []
    blocked: set[str] = set()  # gone notes some node of which could not be edited
    for rel in sorted(citing):
        node = citing[rel]
        try:
            new = _relinked(ctx, node, renames, files)
            new = _marked(ctx, node, new, deleted, files)
            if new.text != node.note.text:
                cite.write_if_unchanged(ctx.vault, ctx.settings, node, new)
                edited.append(rel)
        except RemelinkError as exc:
            blocked |= set(node.links)
            what = "relinked or marked" if renames and deleted else \
                "relinked" if renames else "marked"
            ctx.report.warnings.append(
                f"{' '.join(str(exc).split())} (not {what}; the notes it cites stay in the "
                "checkpoint and the next run tries again)")
    if edited:
        try:
            ctx.index.update(edited)
        except RemelinkError as exc:
            ctx.report.warnings.append(f"node index not updated after relinking: {exc}")
    nodes_of = {g: sorted(r for r, c in citing.items() if g in c.links) for g in gone}
    _record(ctx, [r for r in renames if r.old not in blocked],
            [d for d in deleted if d not in blocked], nodes_of)
    return {r.new for r in renames if r.old in blocked}


def _relinked(ctx: RunContext, node: cite.Citing, renames: Sequence[Rename],
              files: VaultFiles) -> Note:
    targets: dict[tuple[int, int], str] = {}
    mapping: dict[str, str] = {}
    mode = ctx.settings.resolution
    for r in renames:
        for link in node.links.get(r.old, ()):
            target = cite.new_target(link, r.old, r.new, files, mode, node.path)
            targets[(link.line, link.col)] = target
            mapping[link.target] = target
    if not targets:
        return node.note
    new = cite.relink(node, targets)
    problems = cite.relinked_only(node.note, new, mapping)
    problems += new_errors(files, ctx.settings, new, node.note)
    if problems:
        raise cite.EditRefused("the relink was refused: " + "; ".join(problems),
                               path=node.path)
    return new


def _marked(ctx: RunContext, node: cite.Citing, current: Note,
            deleted: Sequence[str], files: VaultFiles) -> Note:
    paths = [d for d in deleted if d in node.links]
    if not paths:
        return current
    # Relinked first or not, the lines are where they were: the links found still place marks.
    base = cite.Citing(node.path, node.data, current, {p: node.links[p] for p in paths})
    new = cite.mark(base, paths, ctx.today, body_language(current) or "en")
    problems = conservation_problems(current, new)
    problems += new_errors(files, ctx.settings, new, current)
    if problems:
        raise cite.EditRefused("the deletion mark was refused: " + "; ".join(problems),
                               path=node.path)
    return new


def _record(ctx: RunContext, renames: Sequence[Rename], deleted: Sequence[str],
            nodes_of: Mapping[str, list[str]]) -> None:
    """Move and forget in the checkpoint, audit and report it."""
    report, state = ctx.report, ctx.state
    units: list[str] = []
    inputs: list[str] = []
    with ctx.state_lock:
        for r in renames:
            units += state.move_input(r.old, r.new)
            inputs += [r.old, r.new]
            entry = {"from": r.old, "to": r.new, "similarity": r.similarity,
                     "nodes": nodes_of.get(r.old, [])}
            report.renamed.append(entry)
            ctx.audit.record({"run": report.run_id, "status": "renamed", **entry,
                              "dry_run": ctx.dry_run})
        for rel in deleted:
            dropped, changed = state.forget_input(rel)
            units += dropped
            inputs += [rel, *changed]
            entry = {"path": rel, "nodes": nodes_of.get(rel, [])}
            report.deleted.append(entry)
            ctx.audit.record({"run": report.run_id, "status": "deleted", **entry,
                              "dry_run": ctx.dry_run})
        ctx.save_state(units=list(dict.fromkeys(units)), inputs=list(dict.fromkeys(inputs)))
