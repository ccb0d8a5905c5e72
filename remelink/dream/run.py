"""`remelink dream run`: the steps from config under the vault lock (SPEC §9), and
`remelink status` (§9.5).

Order of a run: take the lock (wait up to `--wait`, then exit 3), load the checkpoint (a newer or
unreadable one stops the run untouched), settle units a killed run left mid-commit, bring the
node index up to date, then run each configured step. Unknown steps are a configuration error
before anything runs.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from remelink.config import Settings
from remelink.dream.autotag import auto_tag_step
from remelink.dream.context import AuditLog, Reporter, RunContext, RunReport, SilentReporter
from remelink.dream.inputs import Window
from remelink.dream.state import State
from remelink.dream.steps import extract_step, finish_step, integrate_step
from remelink.dream.topics import topics_step
from remelink.errors import ConfigError
from remelink.models.base import ChatModel
from remelink.vault.fsio import file_lock, sweep_temp_files

Step = Callable[[RunContext], None]
STEPS: dict[str, Step] = {
    "dream_extract_step": extract_step,
    "dream_integrate_step": integrate_step,
    "dream_finish_step": finish_step,
    "auto_tag_step": auto_tag_step,
    "dream_topics_step": topics_step,
}
LOCK_FILE = ".remelink/lock"


def check_steps(steps: Sequence[str]) -> list[Step]:
    unknown = [s for s in steps if s not in STEPS]
    if unknown:
        raise ConfigError(f"unknown dream step(s): {', '.join(unknown)}", path=".remelink/config.yaml",
                          hint=f"known steps: {', '.join(STEPS)}")
    if not steps:
        raise ConfigError("auto_dream.steps is empty", path=".remelink/config.yaml")
    return [STEPS[s] for s in steps]


class LockedIndex:
    """The node index shared by parallel units: searches and updates take turns."""

    def __init__(self, index: Any) -> None:
        self.index = index
        self._lock = threading.RLock()

    def search(self, query: str, *, limit: int = 20, bucket: str | None = None,
               refresh: bool = True) -> list[Any]:
        with self._lock:
            return list(self.index.search(query, limit=limit, bucket=bucket, refresh=refresh))

    def update(self, paths: Any) -> None:
        with self._lock:
            self.index.update(list(paths))

    def idf(self, term: str) -> float:
        with self._lock:
            return float(self.index.idf(term))

    def close(self) -> None:
        self.index.close()


@dataclass(frozen=True)
class DreamOptions:
    date: str | None = None
    scan_days: int | None = None
    max_units: int | None = None
    hint: str | None = None
    dry_run: bool = False
    wait: float = 0.0
    retry_failed: bool = False


def new_run_id() -> str:
    return time.strftime("%Y%m%dT%H%M%S") + f"-{os.getpid()}"


def run_dream(vault: Path, settings: Settings, model: ChatModel, options: DreamOptions,
              reporter: Reporter | None = None) -> RunReport:
    """Run the configured dream steps once. Raises VaultBusy, StateError or ConfigError before
    anything is touched; everything else is reported in the returned RunReport."""
    steps = check_steps(settings.auto_dream.steps)
    window = Window.of(options.date, options.scan_days)
    reporter = reporter or SilentReporter()
    run_id = new_run_id()
    with file_lock(vault / LOCK_FILE, wait=options.wait, what="vault"):
        state = State.load(vault)
        sweep_temp_files(vault / ".remelink")
        report = RunReport(run_id=run_id, date=window.date if window else None,
                           window=list(window.days) if window else [], dry_run=options.dry_run)
        if not options.dry_run:
            for line in state.recover(vault):
                report.warnings.append(line)
                reporter.note(line)
            if report.warnings:
                state.save()
        from remelink.index import NodeIndex

        raw_index = NodeIndex(vault, settings)
        try:
            if options.dry_run:
                # A dry run leaves the index as it is; searches still see the current digest.
                stats = raw_index.refresh() if not (vault / ".remelink" / "index").exists() \
                    else None
            else:
                stats = raw_index.refresh()
            for notice in getattr(stats, "notices", []) or []:
                report.warnings.append(str(notice))
                reporter.note(str(notice))
            index = LockedIndex(raw_index)
            bind = getattr(model, "bind_index", None)
            if callable(bind):
                bind(index)
            ctx = RunContext(
                vault=vault, settings=settings, model=model, state=state, index=index,
                window=window, report=report,
                audit=AuditLog(vault, run_id, enabled=not options.dry_run), reporter=reporter,
                today=time.strftime("%Y-%m-%d"), hint=options.hint, dry_run=options.dry_run,
                retry_failed=options.retry_failed,
                max_units=settings.auto_dream.max_units if options.max_units is None
                else options.max_units)
            for step in steps:
                step(ctx)
        finally:
            raw_index.close()
    return report


@dataclass
class StatusReport:
    inputs: dict[str, int]
    units: dict[str, int]
    failed: list[dict[str, Any]]
    invalid: list[dict[str, Any]]
    pending: list[dict[str, Any]]
    runs: list[dict[str, Any]]
    pending_tags: int


def status(vault: Path, settings: Settings) -> StatusReport:
    """Summary of the checkpoint: what is pending, what failed and why, the last runs."""
    state = State.load(vault)
    max_attempts = settings.auto_dream.max_attempts
    inputs: dict[str, int] = {}
    for rec in state.inputs.values():
        inputs[rec.status] = inputs.get(rec.status, 0) + 1
    units: dict[str, int] = {}
    failed, pending = [], []
    for uid, rec in state.units.items():
        units[rec.status] = units.get(rec.status, 0) + 1
        if rec.status == "failed":
            failed.append({"id": uid, "name": rec.unit.name, "attempts": rec.attempts,
                           "error": rec.error, "paths": list(rec.unit.paths),
                           "gave_up": rec.attempts >= max_attempts})
        elif rec.status in ("pending", "committing"):
            pending.append({"id": uid, "name": rec.unit.name, "paths": list(rec.unit.paths)})
    invalid = [{"path": p, "error": r.error} for p, r in sorted(state.inputs.items())
               if r.status == "invalid"]
    return StatusReport(inputs=inputs, units=units, failed=failed, invalid=invalid,
                        pending=pending, runs=state.runs[-5:],
                        pending_tags=len(state.pending_tags))
