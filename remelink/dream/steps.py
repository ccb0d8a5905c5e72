"""The dream steps: extract, integrate (auto-link), finish (checkpoint) (SPEC §8, §9).

Each step is a function of the shared `RunContext`. State transitions are saved as they happen,
so a run killed at any instant resumes without re-extracting and without integrating a unit twice.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from remelink import prompts
from remelink.agent import Accept, Feedback, LoopError, parse_object, run_loop
from remelink.dream.context import RunContext, UnitOutcome
from remelink.dream.inputs import scan_inputs
from remelink.dream.state import InputRecord, sha256
from remelink.errors import ModelError, NoteError, RemelinkError
from remelink.evidence import detect_language
from remelink.integrate import IntegrationContext, UnitResult, integrate_unit
from remelink.tools.vault_tools import toolbox
from remelink.units import Unit, parse_unit
from remelink.vault import frontmatter
from remelink.vault.notes import Note, decode, is_blank
from remelink.vault.resolve import VaultFiles
from remelink.workspace import UnitWorkspace

PER_NOTE_CHARS = 20_000


# -- extract ------------------------------------------------------------------------------------
def _changed_inputs(ctx: RunContext) -> Iterator[tuple[str, Note, str]]:
    """(path, note, hash) for every input whose content changed since it was processed.

    Unchanged inputs are skipped; invalid ones are reported every run until they are fixed."""
    state, report = ctx.state, ctx.report
    paths = scan_inputs(ctx.vault, ctx.settings, ctx.window)
    report.files_scanned = len(paths)
    for rel in paths:
        try:
            data = (ctx.vault / rel).read_bytes()
        except OSError as exc:
            report.inputs[rel] = {"status": "invalid", "error": f"cannot read: {exc.strerror}"}
            continue
        digest = sha256(data)
        known = state.inputs.get(rel)
        if known is not None and known.hash == digest:
            if known.status == "invalid":
                report.inputs[rel] = {"status": "invalid", "error": known.error}
            else:
                report.files_unchanged += 1
                report.inputs[rel] = {"status": "skipped"}
            continue
        error = None
        try:
            note = decode(rel, data, max_bytes=ctx.settings.max_note_bytes)
            if is_blank(note):
                raise NoteError("empty note: nothing to extract", path=rel)
            if note.frontmatter_text is not None:
                frontmatter.load(note)
        except NoteError as exc:
            error = str(exc)
        if error is not None:
            report.inputs[rel] = {"status": "invalid", "error": error}
            if not ctx.dry_run:
                with ctx.state_lock:
                    state.inputs[rel] = InputRecord(hash=digest, status="invalid", error=error,
                                                    run=report.run_id)
            continue
        report.files_changed += 1
        yield rel, note, digest


def _material(note: Note) -> str:
    text = note.text
    if len(text) > PER_NOTE_CHARS:
        text = text[:PER_NOTE_CHARS] + f"\n[... truncated at {PER_NOTE_CHARS} characters; call read " \
                                       "for the rest]"
    return f"### {note.path}\n{text}"


def _batches(items: list[tuple[str, Note, str]], budget: int) -> Iterator[list[tuple[str, Note, str]]]:
    batch: list[tuple[str, Note, str]] = []
    size = 0
    for item in items:
        length = min(len(item[1].text), PER_NOTE_CHARS)
        if batch and size + length > budget:
            yield batch
            batch, size = [], 0
        batch.append(item)
        size += length
    if batch:
        yield batch


def _extract_batch(ctx: RunContext, batch: list[tuple[str, Note, str]]) -> list[Unit]:
    paths = [rel for rel, _, _ in batch]
    material = "\n\n".join(_material(note) for _, note, _ in batch)
    language = ctx.settings.language if ctx.settings.language != "auto" else \
        detect_language(material[:20_000])
    messages = prompts.extract_messages(
        date=ctx.window.date if ctx.window else ctx.today,
        window=list(ctx.window.days) if ctx.window else [], hint=ctx.hint,
        max_units=ctx.max_units, changed_paths=paths, material=material, language=language)
    ws = UnitWorkspace(ctx.vault, ctx.settings, None, lambda q, n, b: [])
    folders = ctx.settings.folders
    allowed = set(paths)

    def judge(text: str) -> Accept[list[Unit]] | Feedback:
        data = parse_object(text, ("units",)) or parse_object(text, ("memory_units",))
        if data is None:
            return Feedback('Answer with one JSON object {"units": [...]} and nothing else.')
        raw = data.get("units", data.get("memory_units"))
        if not isinstance(raw, list):
            return Feedback('"units" must be a list of {name, bucket, summary, paths}.')
        units: list[Unit] = []
        for item in raw:
            unit, warnings = parse_unit(item, source_prefixes=(folders.daily + "/",
                                                               folders.resource + "/"),
                                        allowed_paths=allowed)
            ctx.report.warnings.extend(warnings)
            if unit is not None and unit.id not in {u.id for u in units}:
                units.append(unit)
        if ctx.max_units and len(units) > ctx.max_units:
            ctx.report.warnings.append(f"extraction returned {len(units)} units; kept the first "
                                       f"{ctx.max_units}")
            units = units[:ctx.max_units]
        return Accept(units)

    units, transcript = run_loop(ctx.model, messages, toolbox(ws, read_only=True), judge,
                                 max_steps=ctx.settings.auto_dream.max_steps, max_repairs=1)
    ctx.report.tokens_in += transcript.usage.prompt_tokens
    ctx.report.tokens_out += transcript.usage.completion_tokens
    return units


def extract_step(ctx: RunContext) -> None:
    """`dream_extract_step`: changed inputs -> units, recorded as pending in the checkpoint."""
    changed = list(_changed_inputs(ctx))
    ctx.reporter.start("extract", len(changed))
    for batch in _batches(changed, ctx.settings.auto_dream.batch_chars):
        try:
            units = _extract_batch(ctx, batch)
        except (LoopError, ModelError, RemelinkError) as exc:
            for rel, _, _ in batch:
                ctx.report.inputs[rel] = {"status": "failed", "error": f"extraction: {exc}"}
                ctx.reporter.advance("extract", rel)
            ctx.report.errors.append(f"extraction failed for {len(batch)} note(s): {exc}")
            continue
        with ctx.state_lock:
            ids = ctx.state.add_units(units, ctx.report.run_id)
            by_path: dict[str, list[str]] = {}
            for unit, uid in zip(units, ids, strict=True):
                for p in unit.paths:
                    by_path.setdefault(p, []).append(uid)
            for rel, _, digest in batch:
                unit_ids = by_path.get(rel, [])
                ctx.state.inputs[rel] = InputRecord(hash=digest, status="pending", units=unit_ids,
                                                    run=ctx.report.run_id)
                ctx.report.inputs[rel] = {"status": "extracted", "units": unit_ids}
                ctx.reporter.advance("extract", rel)
            ctx.report.units_extracted += len(units)
        ctx.save_state()


# -- integrate ----------------------------------------------------------------------------------
def _units_to_integrate(ctx: RunContext) -> list[Unit]:
    """Pending units, plus failed ones that still have attempts left (or all with
    --retry-failed), in extraction order."""
    max_attempts = ctx.settings.auto_dream.max_attempts
    out = []
    for rec in ctx.state.units.values():
        if rec.status == "pending":
            out.append(rec.unit)
        elif rec.status == "failed":
            if ctx.retry_failed:
                rec.attempts = 0
                out.append(rec.unit)
            elif rec.attempts < max_attempts:
                out.append(rec.unit)
    return out


def _audit_entry(ctx: RunContext, result: UnitResult) -> dict[str, Any]:
    unit = result.unit
    return {
        "run": ctx.report.run_id, "unit": unit.id, "name": unit.name, "bucket": unit.bucket,
        "paths": list(unit.paths), "status": result.status, "action": result.action,
        "target": result.target, "note": result.note, "error": result.error,
        "candidates": [{"path": p, "score": round(s, 4)} for p, s in result.candidates],
        "classification": dict(result.classification), "related": list(result.related),
        "model": result.model, "tokens_in": result.usage.prompt_tokens,
        "tokens_out": result.usage.completion_tokens, "steps": result.steps,
        "repairs": result.repairs, "duration_ms": round(result.seconds * 1000),
        "dry_run": ctx.dry_run,
    }


def integrate_step(ctx: RunContext) -> None:
    """`dream_integrate_step`: each pending unit lands in exactly one node (auto-link)."""
    units = _units_to_integrate(ctx)
    ctx.reporter.start("integrate", len(units))
    if not units:
        return
    state = ctx.state

    def on_commit(unit: Unit, target: str, digest: str) -> None:
        # Write-ahead: the checkpoint names the bytes before they replace the node.
        with ctx.state_lock:
            rec = state.units[unit.id]
            rec.status, rec.target, rec.commit_hash = "committing", target, digest
            ctx.save_state()

    ictx = IntegrationContext(vault=ctx.vault, settings=ctx.settings, model=ctx.model,
                              index=ctx.index, files=VaultFiles.scan(ctx.vault), today=ctx.today,
                              on_commit=None if ctx.dry_run else on_commit)

    def one(unit: Unit) -> UnitResult:
        return integrate_unit(ictx, unit, dry_run=ctx.dry_run)

    def settle(result: UnitResult) -> None:
        with ctx.state_lock:
            rec = state.units[result.unit.id]
            rec.attempts += 1
            rec.run = ctx.report.run_id
            if result.ok:
                rec.status, rec.action, rec.target, rec.error = \
                    "done", result.action, result.target, None
                rec.commit_hash = result.content_hash
                if result.changed and result.target and "auto_tag_step" in \
                        ctx.settings.auto_dream.steps:
                    state.note_written(result.target)
                if result.changed and result.target:
                    bucket = ctx.report.created if result.action == "CREATE" else ctx.report.updated
                    if result.target not in ctx.report.created + ctx.report.updated:
                        bucket.append(result.target)
                    if result.diff:
                        ctx.report.diffs[result.target] = ctx.report.diffs.get(result.target, "") \
                            + result.diff
            else:
                rec.status, rec.error = "failed", result.error
            ctx.report.units.append(UnitOutcome(
                id=result.unit.id, name=result.unit.name, bucket=result.unit.bucket,
                paths=list(result.unit.paths), status=result.status, action=result.action,
                target=result.target, note=result.note, error=result.error,
                attempts=rec.attempts))
            ctx.report.tokens_in += result.usage.prompt_tokens
            ctx.report.tokens_out += result.usage.completion_tokens
            ctx.save_state()
        ctx.audit.record(_audit_entry(ctx, result))
        label = f"{result.action or 'FAILED'} {result.target or result.unit.name}"
        ctx.reporter.advance("integrate", label)

    workers = max(1, ctx.settings.auto_dream.concurrency)
    if workers == 1 or ctx.dry_run:
        for unit in units:
            settle(one(unit))
    else:
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="unit") as pool:
            for result in pool.map(one, units):
                settle(result)


# -- finish -------------------------------------------------------------------------------------
def finish_step(ctx: RunContext) -> None:
    """`dream_finish_step`: checkpoint inputs whose units are all done; failed ones stay open so
    the next run retries them (up to max_attempts), and are reported by `remelink status`."""
    max_attempts = ctx.settings.auto_dream.max_attempts
    with ctx.state_lock:
        for rel, rec in ctx.state.inputs.items():
            before = rec.status
            status = ctx.state.input_status(rel, max_attempts)
            if status == before and rel not in ctx.report.inputs:
                continue
            if not ctx.dry_run:
                rec.status = status
            if status == "processed" and before != "processed":
                ctx.report.checkpointed.append(rel)
            entry = ctx.report.inputs.get(rel)
            if entry is not None and entry.get("status") in ("invalid",):
                continue
            if entry is not None and entry.get("status") == "skipped" and status == before:
                continue
            if entry is not None or status != before:
                entry = ctx.report.inputs.setdefault(rel, {})
                entry["status"] = {"processed": "processed", "failed": "failed"}.get(
                    status, "pending")
        ctx.state.runs.append({
            "id": ctx.report.run_id, "date": ctx.today, "finished": time.strftime(
                "%Y-%m-%dT%H:%M:%S%z"), "counts": ctx.report.counts(),
            "ok": ctx.report.ok})
    ctx.save_state()
