"""The dream steps after extraction: integrate (auto-link) and finish (checkpoint) (SPEC §9).

Each step is a function of the shared `RunContext`. State transitions are saved as they happen,
so a run killed at any instant resumes without integrating a unit twice (see `state.py` for the
write-ahead and the recovery rules). Extraction is in `extract.py`, tagging in `autotag.py`.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from typing import Any

from remelink.dream.context import RunContext, UnitOutcome
from remelink.dream.records import UnitRecord, sha256
from remelink.integrate import IntegrationContext, UnitResult, integrate_unit
from remelink.units import Unit
from remelink.vault.paths import disk_path
from remelink.vault.resolve import VaultFiles


# -- integrate ----------------------------------------------------------------------------------
def _units_to_integrate(ctx: RunContext) -> tuple[list[Unit], list[UnitRecord]]:
    """(units to integrate, units out of attempts): pending units, plus failed ones that still
    have attempts left (all of them with --retry-failed), in extraction order."""
    max_attempts = ctx.settings.auto_dream.max_attempts
    todo: list[Unit] = []
    gave_up: list[UnitRecord] = []
    for rec in ctx.state.units.values():
        if rec.status == "pending":
            todo.append(rec.unit)
        elif rec.status == "failed":
            if ctx.retry_failed:
                rec.attempts = 0
                todo.append(rec.unit)
            elif rec.attempts < max_attempts:
                todo.append(rec.unit)
            else:
                gave_up.append(rec)
    return todo, gave_up


def _audit_entry(ctx: RunContext, result: UnitResult, attempts: int) -> dict[str, Any]:
    unit = result.unit
    return {
        "run": ctx.report.run_id, "unit": unit.id, "name": unit.name, "bucket": unit.bucket,
        "paths": list(unit.paths), "status": result.status, "action": result.action,
        "target": result.target, "changed": result.changed, "note": result.note,
        "error": result.error,
        "candidates": [{"path": p, "score": round(s, 4)} for p, s in result.candidates],
        "classification": dict(result.classification), "related": list(result.related),
        "classified_by_model": list(result.labelled),
        "model": result.model, "tokens_in": result.usage.prompt_tokens,
        "tokens_out": result.usage.completion_tokens, "steps": result.steps,
        "repairs": result.repairs, "duration_ms": round(result.seconds * 1000),
        "attempts": attempts, "content_hash": result.content_hash,
        "warnings": list(result.warnings), "dry_run": ctx.dry_run,
    }


def integrate_step(ctx: RunContext) -> None:
    """`dream_integrate_step`: each pending unit lands in exactly one node (auto-link).

    With `auto_dream.concurrency` > 1 units run in parallel threads; integrate.py serialises
    units that touch the same node (target claims, a commit check). A model that fails as a
    backend (ModelError: no key, outage) stops the step: the remaining units are skipped
    without using up an attempt."""
    units, gave_up = _units_to_integrate(ctx)
    max_attempts = ctx.settings.auto_dream.max_attempts
    for rec in gave_up:
        ctx.report.units.append(UnitOutcome(
            id=rec.unit.id, name=rec.unit.name, bucket=rec.unit.bucket,
            paths=list(rec.unit.paths), status="skipped", attempts=rec.attempts,
            error=f"gave up after {rec.attempts} of {max_attempts} attempt(s) (last error: "
                  f"{rec.error}); rerun with --retry-failed"))
    ctx.reporter.start("integrate", len(units))
    if not units:
        return
    state = ctx.state
    run_id = ctx.report.run_id

    def on_commit(unit: Unit, target: str, digest: str) -> None:
        # Write-ahead: the checkpoint names the bytes before they replace the node. Called
        # under integrate's commit lock, so the node on disk is stable while we look at it.
        path = disk_path(ctx.vault, target)  # an NFD node is written under its own name
        with ctx.state_lock:
            exists = path.is_file()
            landed = state.settle_landed(target, sha256(path.read_bytes()),
                                         except_unit=unit.id) if exists else []
            state.mark_committing(unit.id, target, digest, run_id, created=not exists)
            ctx.save_state(units=[unit.id, *landed], meta=bool(landed))

    ictx = IntegrationContext(vault=ctx.vault, settings=ctx.settings, model=ctx.model,
                              index=ctx.index, files=VaultFiles.scan(ctx.vault), today=ctx.today,
                              on_commit=None if ctx.dry_run else on_commit)
    broken: list[str] = []
    stop = threading.Event()

    workers = max(1, ctx.settings.auto_dream.concurrency)
    ctx.rebind_model()

    def one(unit: Unit) -> tuple[UnitResult, bool]:
        if stop.is_set():
            return UnitResult(unit=unit, status="failed", model=ctx.model.name,
                              infrastructure=True,
                              error=f"not attempted: the model failed on unit {broken[0]!r}"), False
        if workers == 1:
            ctx.rebind_model()  # see RunContext.rebind_model: decisions independent of history
        result = integrate_unit(ictx, unit, dry_run=ctx.dry_run)
        if result.infrastructure and not stop.is_set():
            broken.append(unit.name)
            stop.set()
        return result, True

    def settle(result: UnitResult, attempted: bool) -> None:
        unit = result.unit
        if not attempted:
            ctx.report.units.append(UnitOutcome(
                id=unit.id, name=unit.name, bucket=unit.bucket, paths=list(unit.paths),
                status="skipped", error=result.error, attempts=state.units[unit.id].attempts))
            ctx.reporter.advance("integrate", f"SKIPPED {unit.name}")
            return
        with ctx.state_lock:
            rec = state.units[unit.id]
            # An outage (ModelError: no key, server down) is no fault of the unit: it costs no
            # attempt, so a unit never gives up because the backend was away for a few runs.
            attempts = rec.attempts + (0 if result.infrastructure else 1)
        # The audit line goes first: once it says done, recovery counts the unit as done even
        # if the run dies before the state below is saved.
        ctx.audit.record(_audit_entry(ctx, result, attempts))
        with ctx.state_lock:
            rec.attempts = attempts
            rec.run = run_id
            if result.ok:
                rec.status, rec.action, rec.target, rec.error = \
                    "done", result.action, result.target, None
                rec.commit_hash = result.content_hash
                if result.changed and result.target:
                    state.note_written(result.target)
                    created = result.action == "CREATE"
                    if result.target not in ctx.report.created + ctx.report.updated:
                        (ctx.report.created if created else ctx.report.updated).append(
                            result.target)
                    if result.diff:
                        ctx.report.diffs[result.target] = \
                            ctx.report.diffs.get(result.target, "") + result.diff
                ctx.report.warnings.extend(f"{result.target}: {w}" for w in result.warnings)
            else:
                rec.status, rec.error = "failed", result.error
            ctx.report.units.append(UnitOutcome(
                id=unit.id, name=unit.name, bucket=unit.bucket, paths=list(unit.paths),
                status=result.status, action=result.action, target=result.target,
                note=result.note, error=result.error, attempts=attempts,
                tokens_in=result.usage.prompt_tokens, tokens_out=result.usage.completion_tokens,
                steps=result.steps, repairs=result.repairs,
                duration_ms=round(result.seconds * 1000)))
            ctx.report.tokens_in += result.usage.prompt_tokens
            ctx.report.tokens_out += result.usage.completion_tokens
            ctx.save_state(units=[unit.id], meta=bool(result.ok and result.changed))
        ctx.reporter.advance("integrate", f"{result.action or 'FAILED'} "
                                          f"{result.target or unit.name}")

    if workers == 1 or ctx.dry_run or len(units) == 1:
        for unit in units:
            settle(*one(unit))
        return
    first = len(ctx.report.units)
    order = {u.id: i for i, u in enumerate(units)}
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="unit") as pool:
        futures: list[Future[tuple[UnitResult, bool]]] = [pool.submit(one, u) for u in units]
        try:
            # Settle as each unit finishes: the shorter the time between a commit and its
            # checkpoint, the less a crash leaves to recovery.
            for future in as_completed(futures):
                settle(*future.result())
        except BaseException:
            stop.set()
            broken.append("(interrupted)")
            for future in futures:
                future.cancel()
            raise
    # A unit that lost a race (it decided to create a node another unit created first, or
    # found its target changed at commit) gets one more try now, alone, with the vault as the
    # others left it. Its first try counted as an attempt and stays in the audit trail.
    retry = [o for o in ctx.report.units[first:] if o.status == "failed"]
    if retry and not stop.is_set():
        by_id = {u.id: u for u in units}
        ctx.report.units[first:] = [o for o in ctx.report.units[first:] if o.status != "failed"]
        for outcome in retry:
            settle(*one(by_id[outcome.id]))
    ctx.report.units[first:] = sorted(ctx.report.units[first:],
                                      key=lambda o: order.get(o.id, len(order)))


# -- finish -------------------------------------------------------------------------------------
def finish_step(ctx: RunContext) -> None:
    """`dream_finish_step`: checkpoint inputs whose units are all done; failed ones stay open so
    the next run retries them (up to max_attempts), and are reported by `remelink status`."""
    max_attempts = ctx.settings.auto_dream.max_attempts
    attempted = {u.id for u in ctx.report.units if u.status in ("done", "failed")}
    failed_now = {u.id for u in ctx.report.units if u.status == "failed"}
    with ctx.state_lock:
        for rel, rec in ctx.state.inputs.items():
            before = rec.status
            status = ctx.state.input_status(rel, max_attempts)
            rec.status = status  # in a dry run the state is never saved
            if status == "processed" and before != "processed":
                ctx.report.checkpointed.append(rel)
            entry = ctx.report.inputs.get(rel)
            touched = (entry is not None and entry.get("status") == "extracted") or \
                any(u in attempted for u in rec.units)
            if not touched or status == "invalid":
                continue
            shown = "failed" if status == "failed" or any(u in failed_now for u in rec.units) \
                else "processed" if status == "processed" else "pending"
            entry = ctx.report.inputs.setdefault(rel, {})
            entry["status"] = shown
            entry["units"] = list(rec.units)
    ctx.save_state()
