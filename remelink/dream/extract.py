"""`dream_extract_step` (SPEC §8): the raw notes whose content changed since they were last
processed become memory units, recorded as pending in the checkpoint.

Notes are read here and nowhere else in the pipeline's first step: an unreadable note (invalid
frontmatter, binary, not UTF-8, empty, over `limits.max_note_bytes`) is reported, recorded as
invalid with its hash (so it is reported again until it changes) and never rewritten. Changed
notes go to the model in batches of `auto_dream.batch_tokens` estimated tokens (batching.py),
one conversation each (pages.py).

Every note needs a verdict (SPEC §8): a unit citing it, or "nothing worth keeping" with a
reason. A note of a batch left without one is tried again alone; alone and still without one,
it costs an attempt and stays pending (reported by `status`, retried by the next runs up to
`max_attempts`), never checkpointed as done. An edited note's units are paired with the units
it gave before (revisions.py): a restated unit updates its old node, a fact no longer stated
is reported.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from dataclasses import replace

from remelink.agent import LoopError
from remelink.config import DEFAULT_BATCH_TOKENS
from remelink.dream import moves, revisions
from remelink.dream.batching import batches, estimate_tokens
from remelink.dream.context import RunContext
from remelink.dream.inputs import read_input, scan
from remelink.dream.pages import PER_NOTE_CHARS, BatchResult, ExtractionFailed, extract_batch
from remelink.dream.records import InputRecord, sha256
from remelink.dream.sketch import sketch
from remelink.errors import TRANSIENT, ModelError, NoteError, RemelinkError, RunModelError
from remelink.units import HELD_KIND
from remelink.vault import frontmatter
from remelink.vault.boundary import FileBytes, vault_real
from remelink.vault.notes import Note, decode, is_blank


def problem(exc: BaseException, rel: str) -> str:
    """An error as one line without the path in front (the report puts it there)."""
    text = " ".join(str(exc).split())
    return text.removeprefix(f"{rel}: ")


Changed = tuple[str, Note, str]  # (path, note, content hash)


_DAY_RE = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")


def _written(item: Changed) -> tuple[str, str]:
    """The day a note was written, as its path (`daily/2026-03-16/...`, `resource/2026-02-05/
    ...`) or its frontmatter `date` gives it, ISO; a note without one ("" sorts first) is a
    standing document, taken before the dated notes that refer to it. Then the path."""
    rel, note, _ = item
    found = _DAY_RE.search(rel)
    if found is None:
        try:
            value = frontmatter.load(note).get("date")
        except Exception:  # an unreadable header is reported by the step that reads it
            value = None
        found = _DAY_RE.search(str(value or ""))
    return ("-".join(found.groups()) if found else "", rel)


def _changed_inputs(ctx: RunContext) -> Iterator[Changed]:
    """(path, note, hash) for every input whose content changed since it was processed.

    Unchanged inputs are skipped; invalid ones are reported every run until they are fixed, and
    never rewritten (nothing here writes to the vault)."""
    state, report = ctx.state, ctx.report
    found = scan(ctx.vault, ctx.settings, ctx.window)
    paths = found.inputs
    sketched: list[str] = []
    # What cannot be an input (a symlink out of the vault, a FIFO, a name no link can carry) is
    # reported every run, one line each, and never checkpointed.
    report.inputs.update({rel: {"status": "invalid", "error": why}
                          for rel, why in found.refused.items()})
    report.warnings += found.notices
    report.files_scanned = len(paths) + len(found.refused)
    limit = ctx.settings.max_note_bytes
    max_attempts = ctx.settings.auto_dream.max_attempts
    root_real = vault_real(ctx.vault)
    reads: dict[str, tuple[FileBytes, str] | str] = {}  # the file and its hash, or why not
    for rel in paths:
        try:
            got = read_input(ctx.vault, rel, limit=limit, root_real=root_real)
        except (OSError, NoteError) as exc:
            why = problem(exc, rel) if isinstance(exc, NoteError) else exc.strerror or exc
            reads[rel] = f"cannot read: {why}"
            continue
        # Not read at all: a 50 MB file costs a stat, and its "hash" is its stat.
        digest = sha256(got.data) if got.data is not None else f"stat:{got.size}:{got.mtime_ns}"
        known = state.inputs.get(rel)
        if known is not None and known.hash == digest:
            if known.sketch is None and got.data is not None:  # a checkpoint from before
                known.sketch = sketch(got.data)
                sketched.append(rel)
            got = FileBytes(None, got.size, got.mtime_ns)  # unchanged: its bytes are not needed
        reads[rel] = (got, digest)
    # Processed notes that are gone: renamed (their checkpoint moves), or deleted (SPEC §9.3).
    held = moves.settle(ctx, paths, {rel: moves.Seen(r[1], r[0].data)
                                     for rel, r in reads.items() if not isinstance(r, str)})
    with ctx.state_lock:
        expired, changed = state.expire_held(ctx.today)
    if sketched or expired:
        ctx.save_state(units=expired, inputs=[*sketched, *changed])
    for rel in paths:
        read = reads[rel]
        if rel in held:
            report.inputs[rel] = {"status": "pending", "note": "a renamed note whose citations "
                                  "could not all be relinked yet (see warnings); the next run "
                                  "finishes the rename"}
            continue
        if isinstance(read, str):
            report.inputs[rel] = {"status": "invalid", "error": read}
            continue
        got, digest = read
        data = got.data
        known = state.inputs.get(rel)
        if known is not None and known.hash == digest:
            if known.extract_hash is not None:  # edited back to the content last extracted
                with ctx.state_lock:
                    known.extract_hash, known.extract_attempts, known.error = None, 0, None
                    known.status = "pending"  # finish_step settles it from its units
            if known.status == "invalid":
                report.inputs[rel] = {"status": "invalid", "error": known.error}
            else:
                report.files_unchanged += 1
                report.inputs[rel] = {"status": "skipped"}
            continue
        if known is not None and not ctx.retry_failed and \
                known.gave_up_extracting(digest, max_attempts):
            report.inputs[rel] = {
                "status": "failed", "attempts": known.extract_attempts,
                "error": f"extraction gave up after {known.extract_attempts} attempt(s) "
                         f"(last error: {known.error}); edit the note or rerun with "
                         f"--retry-failed"}
            continue
        error = None
        try:
            if data is None:
                raise NoteError(f"file is {got.size / 1048576:.1f} MiB, over the "
                                f"{limit / 1048576:g} MiB limit for notes", path=rel,
                                hint="split it, or raise limits.max_note_bytes")
            note = decode(rel, data, max_bytes=limit)
            if is_blank(note):
                raise NoteError("empty note: nothing to extract", path=rel)
            if note.frontmatter_text is not None or note.text.startswith("---"):
                frontmatter.load(note)
        except NoteError as exc:
            error = problem(exc, rel)
        if error is not None:
            report.inputs[rel] = {"status": "invalid", "error": error}
            with ctx.state_lock:
                state.inputs[rel] = InputRecord(hash=digest, status="invalid", error=error,
                                                run=report.run_id)
            continue
        report.files_changed += 1
        yield rel, note, digest


def _extraction_failed(ctx: RunContext, item: Changed, exc: Exception | str) -> None:
    rel, _, digest = item
    error = exc if isinstance(exc, str) else f"extraction: {exc}"
    with ctx.state_lock:
        record = ctx.state.inputs.get(rel) or InputRecord(hash="")
        record.extraction_failed(digest, error, ctx.report.run_id, fresh=ctx.retry_failed)
        ctx.state.inputs[rel] = record
        ctx.report.inputs[rel] = {"status": "failed", "error": error,
                                  "attempts": record.extract_attempts}
        ctx.reporter.advance("extract", rel)
        ctx.save_state(inputs=[rel])


def _batches(ctx: RunContext, items: list[Changed]) -> list[list[Changed]]:
    costs = [estimate_tokens(note.text[:PER_NOTE_CHARS]) for _, note, _ in items]
    return list(batches(items, costs, batch_budget(ctx)))


def batch_budget(ctx: RunContext) -> int:
    """Estimated tokens per extraction call: the configured budget, else the engine's own (an
    engine without a context window, the local one, says so with `extraction_budget = 0`:
    every changed note in one pass, so evidence merges across all of them)."""
    configured = ctx.settings.auto_dream.batch_tokens
    if configured is not None:
        return configured
    own = getattr(ctx.model, "extraction_budget", DEFAULT_BATCH_TOKENS)
    return own if isinstance(own, int) and own > 0 else sys.maxsize


def _edited(ctx: RunContext, paths: list[str]) -> dict[str, list[str]]:
    """What each edited note of the batch gave last time (landed units), for the prompt."""
    out: dict[str, list[str]] = {}
    for rel in paths:
        record = ctx.state.inputs.get(rel)
        for uid in record.units if record is not None else ():
            rec = ctx.state.units.get(uid)
            if rec is not None and rec.status == "done":
                out.setdefault(rel, []).append(rec.unit.name)
    return out


def _no_verdict(rel: str, unresolved: list[str]) -> str:
    about = [p for p in unresolved if rel in p]
    why = f" ({'; '.join(about[:3])})" if about else ""
    return f"extraction gave no verdict for this note{why}; it stays pending"


def _record(ctx: RunContext, batch: list[Changed], result: BatchResult) -> None:
    """Checkpoint the judged notes of a batch, their units pending, edits paired."""
    report = ctx.report
    judged = [item for item in batch if item[0] in result.judged]
    with ctx.state_lock:
        state = ctx.state
        rels = [rel for rel, _, _ in judged]
        # A held unit (units.HELD_KIND) waits in the checkpoint for a later note: never
        # integrated, never paired with what an edited note gave before.
        held = [u for u in result.units if u.kind == HELD_KIND]
        units, unstated = revisions.pair(state, rels,
                                         [u for u in result.units if u.kind != HELD_KIND])
        ids = state.add_units(units, report.run_id)
        held_ids = state.add_units(held, report.run_id)
        for uid in held_ids:
            if state.units[uid].status == "pending":
                state.units[uid].status = "held"
        ids += held_ids
        units = [*units, *held]
        dropped, used = state.use_held(units, rels)
        by_path: dict[str, list[str]] = {}
        for unit, uid in zip(units, ids, strict=True):
            for p in unit.paths:
                by_path.setdefault(p, []).append(uid)
        touched = [*ids, *dropped]
        for gone in unstated:
            # Audited before the state is saved: a kill in between reports it again, never
            # loses it.
            line = {"run": report.run_id, "status": "unstated", "path": gone.path,
                    "unit": gone.unit, "name": gone.name, "target": gone.target,
                    "note": "the edited note no longer states this; the node keeps it",
                    "dry_run": ctx.dry_run}
            ctx.audit.record(line)
            report.unstated.append({k: line[k] for k in ("path", "unit", "name", "target")})
        for rel, note, digest in judged:
            verdict = result.judged[rel]
            unit_ids = by_path.get(rel, [])
            touched += state.drop_stale_units(rel, unit_ids)
            state.inputs[rel] = InputRecord(hash=digest, status="pending", units=unit_ids,
                                            run=report.run_id, verdict=verdict.verdict,
                                            reason=verdict.reason or None,
                                            sketch=sketch(note.render()))
            entry: dict[str, object] = {"status": "extracted", "verdict": verdict.verdict,
                                        "units": unit_ids}
            if verdict.reason:
                entry["reason"] = verdict.reason
            report.inputs[rel] = entry
            ctx.reporter.advance("extract", rel)
        report.units_extracted += len(units) - len(held)
        report.revised += sum(1 for u in units if u.revises is not None)
        ctx.save_state(units=touched, inputs=list(dict.fromkeys([*rels, *used])))


def _salvage(ctx: RunContext, items: list[Changed], partial: BatchResult,
             edited: dict[str, list[str]]) -> set[str]:
    """Checkpoint what the answered pages of a failed batch judged, so that it is not paid for
    again: the notes judged there (not the edited ones, whose revisions pair over the whole
    extraction), with the units that cite only such notes. Returns the notes recorded."""
    salvage = {rel for rel in partial.judged if rel not in edited}
    kept = [u for u in partial.units if set(u.paths) <= salvage]
    cited = {p for u in kept for p in u.paths}
    judged = {rel: v for rel, v in partial.judged.items()
              if rel in salvage and (v.verdict == "nothing" or rel in cited)}
    if not judged:
        return set()
    _record(ctx, items, BatchResult(kept, judged, notices=list(partial.notices)))
    return set(judged)


def extract_step(ctx: RunContext) -> None:
    """`dream_extract_step`: changed inputs -> units, recorded as pending in the checkpoint.

    Failures by kind (SPEC §7.2). A batch whose answer cannot be used (the repair budget ran
    out) or that the provider refuses for itself (context length, content policy) is tried
    again note by note, so that one note the model cannot judge does not hold back the notes
    batched with it; a note that still fails is recorded with its attempts and retried on the
    next runs up to `max_attempts` (an edit, or --retry-failed, starts again). A transient
    failure past the retries splits the batch too; alone, it costs the note an attempt, unless
    the provider turns out to be down (several in a row: `Outage`), when the rest of the step
    is not attempted and those notes get their attempt back. A failure permanent for the run
    (auth, unknown model, quota) stops it (RunModelError). Pages answered before a failure are
    kept (`_salvage`)."""
    dream = ctx.settings.auto_dream
    if dream.batch_chars is not None:
        ctx.report.warnings.append(
            f"auto_dream.batch_chars is deprecated (characters are 4x more tokens in Chinese "
            f"than in English): read as batch_tokens: {batch_budget(ctx)}; set "
            "auto_dream.batch_tokens instead")
    # In the order the notes were written: a later note then meets the nodes of the earlier
    # ones, and restates or corrects them (a policy under resource/ dated February comes before
    # the March meeting that changes it, though "daily/" sorts before "resource/").
    changed = sorted(_changed_inputs(ctx), key=_written)
    ctx.reporter.start("extract", len(changed))
    queue = _batches(ctx, changed)
    outage = ctx.outage
    outage.next_step()
    charged: dict[str, Changed] = {}  # notes charged an attempt for a transient failure

    before: dict[str, InputRecord | None] = {}  # a note's record before a transient failure

    def refund() -> None:
        """The provider is down: the notes whose failures showed it are as if never tried."""
        for rel in [r for r in outage.streak if r in charged]:
            charged.pop(rel)
            with ctx.state_lock:
                old = before.pop(rel, None)
                if old is None:
                    ctx.state.inputs.pop(rel, None)
                else:
                    ctx.state.inputs[rel] = old
                ctx.report.inputs[rel]["attempts"] = old.extract_attempts if old else 0
                ctx.report.inputs[rel]["error"] += " (the provider looks down: no attempt used)"
                ctx.save_state()

    while queue:
        batch = queue.pop(0)
        if outage.tripped:
            for rel, _, _ in batch:
                ctx.report.inputs[rel] = {"status": "failed",
                                          "error": f"extraction not attempted: "
                                                   f"{outage.reason()}"}
                ctx.reporter.advance("extract", rel)
            continue
        ctx.rebind_model()
        edited = _edited(ctx, [rel for rel, _, _ in batch])
        items = batch
        try:
            result = extract_batch(ctx, batch, edited)
        except ExtractionFailed as exc:
            done = _salvage(ctx, batch, exc.partial, edited)
            items = [item for item in batch if item[0] not in done]
            cause: Exception = exc.cause
        except (LoopError, ModelError, RemelinkError) as exc:
            cause = exc
        else:
            outage.record(False)
            ctx.report.warnings += [f"extraction: {n}" for n in result.notices]
            ctx.report.warnings += [f"extraction: {p} (still wrong after the repair turns; "
                                    "left out)" for p in result.unresolved]
            _record(ctx, batch, result)
            unjudged = [item for item in batch if item[0] not in result.judged]
            if len(batch) > 1:
                queue[:0] = [[item] for item in unjudged]  # alone, each gets attention
            elif unjudged:
                _extraction_failed(ctx, unjudged[0],
                                   _no_verdict(unjudged[0][0], result.unresolved))
            continue
        if isinstance(cause, RunModelError):
            raise cause  # auth, unknown model, quota: one line, exit 2
        transient = isinstance(cause, ModelError) and cause.kind == TRANSIENT
        label = items[0][0] if len(items) == 1 else f"batch of {len(items)}"
        tripped = outage.record(transient, label, str(cause))
        if not items:
            continue
        if len(items) > 1 and not tripped:
            queue[:0] = [[item] for item in items]
            continue
        if tripped:
            refund()
            for rel, _, _ in items:
                ctx.report.inputs[rel] = {"status": "failed",
                                          "error": f"extraction: {cause} (the provider looks "
                                                   "down: no attempt used)"}
                ctx.reporter.advance("extract", rel)
            continue
        if transient:
            rel = items[0][0]
            charged[rel] = items[0]
            record = ctx.state.inputs.get(rel)
            before[rel] = None if record is None else replace(record, units=list(record.units))
        _extraction_failed(ctx, items[0], cause)
