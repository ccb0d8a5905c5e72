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
from remelink.errors import RunModelError
from remelink.integrate import (
    DISK_FAILURE,
    RUN_FAILURE,
    TRANSIENT_FAILURE,
    IntegrationContext,
    UnitResult,
    integrate_unit,
)
from remelink.models.base import Usage
from remelink.units import Unit, quiet
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


def _audit_entry(ctx: RunContext, result: UnitResult, attempts: int,
                 usage: Usage) -> dict[str, Any]:
    unit = result.unit
    dream = ctx.settings.auto_dream
    return {
        "run": ctx.report.run_id, "unit": unit.id, "name": unit.name, "bucket": unit.bucket,
        "paths": list(unit.paths), "status": result.status, "action": result.action,
        "target": result.target, "changed": result.changed, "note": result.note,
        "error": result.error, "failure": result.failure,
        "candidates": [{"path": p, "score": round(s, 4)} for p, s in result.candidates],
        "classification": dict(result.classification), "related": list(result.related),
        "classified_by_model": list(result.labelled),
        "model": result.model, "tokens_in": usage.prompt_tokens,
        "tokens_out": usage.completion_tokens, "steps": result.steps,
        "repairs": result.repairs, "duration_ms": round(result.seconds * 1000),
        "budget": {"unit_tokens": dream.unit_tokens, "max_steps": dream.max_steps,
                   "repair_turns": dream.repair_turns, "over": result.over_budget},
        "attempts": attempts, "content_hash": result.content_hash,
        "warnings": list(result.warnings), "dry_run": ctx.dry_run,
    }


def integrate_step(ctx: RunContext) -> None:
    """`dream_integrate_step`: each pending unit lands in exactly one node (auto-link).

    With `auto_dream.concurrency` > 1 units run in parallel threads but commit in extraction
    order; integrate.py serialises units that touch the same node (target claims, a commit
    check), and runs again a unit that missed a node an earlier unit created meanwhile, as it
    would have one at a time (so concurrency does not cost links or make duplicates).

    Failures by kind (SPEC §7.2): a unit-level failure costs the unit an attempt and the run
    goes on; a transient one too, unless the provider turns out to be down (integrate's
    `Outage`: several in a row), then those units get their attempt back and the rest are not
    attempted; a failure permanent for the run (auth, unknown model, quota) stops it with one
    line (RunModelError, exit 2); a disk that refuses writes stops the step."""
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
    stopped: list[str] = []  # why the step stopped asking the model (first reason)
    run_errors: list[str] = []
    stop = threading.Event()
    outage = ctx.outage
    outage.next_step()
    order = {u.id: i for i, u in enumerate(units)}
    charged: list[str] = []  # units charged an attempt for a transient failure in this step

    workers = max(1, ctx.settings.auto_dream.concurrency)
    ctx.rebind_model()

    def halt(why: str) -> None:
        if not stopped:
            stopped.append(why)
        stop.set()

    def one(unit: Unit) -> UnitResult | None:
        rank = order.get(unit.id, 0)
        try:
            if stop.is_set():
                return None
            ctx.rebind_model()  # see RunContext.rebind_model: decisions independent of history
            result = integrate_unit(ictx, unit, dry_run=ctx.dry_run, rank=rank)
            # Decided here, in the worker, not when the result is settled: a worker that is
            # free picks the next unit at once, and must find the step stopped.
            if result.failure == RUN_FAILURE:
                halt(result.error or "the model failed")
            elif result.failure == DISK_FAILURE:
                halt(result.error or "the disk refused a write")
            elif outage.record(result.failure == TRANSIENT_FAILURE, unit.id, result.error or ""):
                halt(outage.reason())
            return result
        finally:
            ictx.settle(rank)  # the units after it may commit now

    def skipped(unit: Unit) -> None:
        why = stopped[0] if stopped else "the step stopped"
        ctx.report.units.append(UnitOutcome(
            id=unit.id, name=unit.name, bucket=unit.bucket, paths=list(unit.paths),
            status="skipped", error=f"not attempted: {why}",
            attempts=state.units[unit.id].attempts))
        ctx.reporter.advance("integrate", f"SKIPPED {unit.name}")

    def refund() -> None:
        """The provider is down: the transient failures that showed it cost no attempt."""
        ids = [uid for uid in outage.streak if uid in charged]
        with ctx.state_lock:
            for uid in ids:
                charged.remove(uid)
                rec = state.units[uid]
                rec.attempts -= 1
                if rec.attempts <= 0 and rec.status == "failed":
                    rec.status, rec.error = "pending", None  # as if never tried
                elif rec.error:
                    rec.error = f"{rec.error} (an outage: no attempt used)"
                for outcome in ctx.report.units:
                    if outcome.id == uid and outcome.status == "failed":
                        outcome.attempts -= 1
                        outcome.error = f"{outcome.error} (an outage: no attempt used)"
            if ids:
                ctx.save_state(units=ids)

    def settle(unit: Unit, result: UnitResult | None) -> None:
        if result is None:
            skipped(unit)
            return
        usage = result.usage
        transient = result.failure == TRANSIENT_FAILURE
        if result.failure == RUN_FAILURE:
            run_errors.append(result.error or "the model failed")
        charge = result.failure not in (RUN_FAILURE, DISK_FAILURE) and \
            not (transient and outage.tripped)
        with ctx.state_lock:
            rec = state.units[unit.id]
            attempts = rec.attempts + (1 if charge else 0)
        # A line's unit that changed nothing did nothing: no decision of the run (no audit
        # line, no outcome, not counted), and the checkpoint forgets it.
        silent = quiet(unit.kind, result.ok, result.changed)
        # The audit line goes first: once it says done, recovery counts the unit as done even
        # if the run dies before the state below is saved.
        if not silent:
            ctx.audit.record(_audit_entry(ctx, result, attempts, usage))
        with ctx.state_lock:
            rec.attempts = attempts
            rec.run = run_id
            forgot: list[str] = []
            if silent:
                # Its note is checkpointed on its other units (killed before this is saved,
                # it is pending: integrated again, it changes nothing again).
                forgot = state.forget_unit(unit.id)
            elif result.ok:
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
            elif (transient or result.failure == RUN_FAILURE) and not charge:
                # An outage, or a run the provider refused: as if never tried.
                rec.status, rec.error = "pending", None
            else:
                rec.status, rec.error = "failed", result.error
            error = result.error
            if transient and not charge:
                error = f"{error} (an outage: no attempt used)"
            if silent:
                for entry in ctx.report.inputs.values():
                    if unit.id in (entry.get("units") or []):  # extracted by this run
                        entry["units"] = [u for u in entry["units"] if u != unit.id]
                        ctx.report.units_extracted -= 1
                        break
            else:
                ctx.report.units.append(UnitOutcome(
                    id=unit.id, name=unit.name, bucket=unit.bucket, paths=list(unit.paths),
                    status=result.status, action=result.action, target=result.target,
                    note=result.note, error=error, attempts=attempts,
                    tokens_in=usage.prompt_tokens, tokens_out=usage.completion_tokens,
                    steps=result.steps, repairs=result.repairs,
                    duration_ms=round(result.seconds * 1000), over_budget=result.over_budget,
                    raced=result.raced))
            ctx.report.tokens_in += result.usage.prompt_tokens
            ctx.report.tokens_out += result.usage.completion_tokens
            if transient and charge:
                charged.append(unit.id)
            ctx.save_state(units=[unit.id], inputs=forgot, meta=bool(result.ok and result.changed))
        if outage.tripped:
            refund()  # the transient failures that showed the outage cost no attempt
        ctx.reporter.advance("integrate", f"{result.action or 'FAILED'} "
                                          f"{result.target or unit.name}" if not silent else
                             f"{unit.name}: nothing to update")

    def finish() -> None:
        if run_errors:
            raise RunModelError(run_errors[0])

    if workers == 1 or ctx.dry_run or len(units) == 1:
        for unit in units:
            settle(unit, one(unit))
        finish()
        return
    first = len(ctx.report.units)
    by_id = {u.id: u for u in units}
    ictx.ordered = True
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="unit") as pool:
        futures: dict[Future[UnitResult | None], Unit] = {pool.submit(one, u): u for u in units}
        try:
            # Settle as each unit finishes: the shorter the time between a commit and its
            # checkpoint, the less a crash leaves to recovery.
            for future in as_completed(futures):
                settle(futures[future], future.result())
        except BaseException:
            halt("interrupted")
            for future in futures:
                future.cancel()
            raise
    ictx.ordered = False
    # Alone now, in extraction order, with the vault as the others left it: the units that
    # lost a race (they found their target changed at commit). A race costs its first try an
    # attempt, which stays in the audit trail.
    raced = {o.id for o in ctx.report.units[first:]
             if o.status == "failed" and o.id in by_id and o.raced}
    again = sorted(raced, key=lambda uid: order[uid])
    ctx.report.units[first:] = [o for o in ctx.report.units[first:] if o.id not in raced]
    for uid in again:
        settle(by_id[uid], one(by_id[uid]))
    ctx.report.units[first:] = sorted(ctx.report.units[first:],
                                      key=lambda o: order.get(o.id, len(order)))
    finish()


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
