"""What the dream steps share: the run context, the report they fill, the progress reporter the
CLI supplies, and the audit trail (SPEC §9.4, §9.5)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from remelink.config import Settings
from remelink.dream.inputs import Window
from remelink.dream.state import State
from remelink.models.base import ChatModel
from remelink.outage import Outage
from remelink.vault.fsio import append


class Reporter(Protocol):
    """Progress for people: bars on a terminal, milestone lines under cron, nothing on stdout."""

    def start(self, phase: str, total: int) -> None: ...

    def advance(self, phase: str, label: str = "") -> None: ...

    def note(self, message: str) -> None: ...


class SilentReporter:
    def start(self, phase: str, total: int) -> None:
        pass

    def advance(self, phase: str, label: str = "") -> None:
        pass

    def note(self, message: str) -> None:
        pass


@dataclass
class UnitOutcome:
    id: str
    name: str
    bucket: str
    paths: list[str]
    status: str  # done | failed | skipped (not attempted: out of attempts, or the model is down)
    action: str | None = None
    target: str | None = None
    note: str = ""
    error: str | None = None
    attempts: int = 0
    # What integrating it cost, failed or not (a failed unit costs the most).
    tokens_in: int = 0
    tokens_out: int = 0
    steps: int = 0
    repairs: int = 0
    duration_ms: int = 0
    over_budget: bool = False  # stopped by auto_dream.unit_tokens
    raced: bool = False  # failed while another unit changed what it looked at (tried again)

    @property
    def gave_up(self) -> bool:
        """Skipped because it used up its attempts (not because the step stopped)."""
        return self.status == "skipped" and not (self.error or "").startswith("not attempted")

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "bucket": self.bucket, "paths": self.paths,
                "status": self.status, "action": self.action, "target": self.target,
                "note": self.note, "error": self.error, "attempts": self.attempts,
                "tokens_in": self.tokens_in, "tokens_out": self.tokens_out,
                "steps": self.steps, "repairs": self.repairs, "duration_ms": self.duration_ms,
                "over_budget": self.over_budget}


@dataclass
class RunReport:
    run_id: str
    date: str | None
    window: list[str]
    dry_run: bool
    files_scanned: int = 0
    files_changed: int = 0
    files_unchanged: int = 0
    units_extracted: int = 0
    inputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    units: list[UnitOutcome] = field(default_factory=list)
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    diffs: dict[str, str] = field(default_factory=dict)
    checkpointed: list[str] = field(default_factory=list)
    tags: dict[str, list[str]] = field(default_factory=dict)
    recovered: list[str] = field(default_factory=list)
    topics_path: str | None = None
    topics: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    tokens_in: int = 0
    tokens_out: int = 0
    extract_tokens_in: int = 0  # of tokens_in: extraction's share
    tag_calls: int = 0  # model calls the tagging step made
    revised: int = 0  # units that update the node of what their edited note said before
    # Units an edited note gave before and no longer states: {path, unit, name, target}.
    unstated: list[dict[str, Any]] = field(default_factory=list)
    # Processed notes that are gone (SPEC §9.3): renamed {from, to, similarity, nodes} (the
    # nodes whose citations now name the new path) and deleted {path, nodes} (the nodes that
    # cite it, each marked).
    renamed: list[dict[str, Any]] = field(default_factory=list)
    deleted: list[dict[str, Any]] = field(default_factory=list)
    # What a first run in a vault without .remelink/ created, as `remelink init` does.
    setup: list[str] = field(default_factory=list)
    # What one unit may spend (auto_dream.unit_tokens, max_steps, repair_turns).
    budget: dict[str, int] = field(default_factory=dict)

    def action_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for u in self.units:
            if u.status == "done" and u.action:
                counts[u.action] = counts.get(u.action, 0) + 1
        return dict(sorted(counts.items()))

    @property
    def failed_units(self) -> int:
        return sum(1 for u in self.units if u.status == "failed")

    @property
    def skipped_units(self) -> list[UnitOutcome]:
        return [u for u in self.units if u.status == "skipped"]

    @property
    def ok(self) -> bool:
        """Nothing failed, nothing was left out: a unit skipped (out of attempts, or not
        attempted because the step stopped) makes the run not ok (exit 1), so cron notices."""
        return not self.errors and not self.failed_units and not self.skipped_units and \
            not any(i.get("status") in ("failed", "invalid") for i in self.inputs.values())

    def counts(self) -> dict[str, Any]:
        return {
            "files_scanned": self.files_scanned, "files_changed": self.files_changed,
            "files_unchanged": self.files_unchanged, "units_extracted": self.units_extracted,
            "units_integrated": sum(1 for u in self.units if u.status == "done"),
            "units_failed": self.failed_units,
            "units_skipped": sum(1 for u in self.units if u.status == "skipped"),
            "units_gave_up": sum(1 for u in self.units if u.gave_up),
            "units_over_budget": sum(1 for u in self.units if u.over_budget),
            "units_recovered": len(self.recovered), "actions": self.action_counts(),
            "nodes_created": len(self.created), "nodes_updated": len(self.updated),
            "inputs_checkpointed": len(self.checkpointed),
            "inputs_judged": sum(1 for i in self.inputs.values() if i.get("verdict")),
            "inputs_nothing": sum(1 for i in self.inputs.values()
                                  if i.get("verdict") == "nothing"),
            "inputs_unjudged": sum(1 for i in self.inputs.values()
                                   if i.get("status") == "failed" and not i.get("verdict")),
            "inputs_invalid": sum(1 for i in self.inputs.values() if i.get("status") == "invalid"),
            "units_revised": self.revised, "facts_unstated": len(self.unstated),
            "inputs_renamed": len(self.renamed), "inputs_deleted": len(self.deleted),
            "tokens_in": self.tokens_in, "tokens_out": self.tokens_out,
            "tokens_in_extract": self.extract_tokens_in, "tag_calls": self.tag_calls,
            "tokens_in_failed": sum(u.tokens_in for u in self.units if u.status == "failed"),
            "tokens_out_failed": sum(u.tokens_out for u in self.units if u.status == "failed"),
        }


class AuditLog:
    """`.remelink/runs/<run-id>.jsonl`: one JSON line per unit decision, appended as it happens
    (a line is written with a single `write`, so a killed run leaves whole lines)."""

    def __init__(self, vault: Path, run_id: str, enabled: bool) -> None:
        self.vault = vault
        self.path = vault / ".remelink" / "runs" / f"{run_id}.jsonl"
        self.enabled = enabled
        self._lock = threading.Lock()

    def record(self, entry: dict[str, Any]) -> None:
        if not self.enabled:
            return
        line = (json.dumps(entry, ensure_ascii=False) + "\n").encode("utf-8")
        with self._lock:  # never through a symlinked runs/ folder or file (fsio.append)
            append(self.path, line, root=self.vault, sync=False)


@dataclass
class RunContext:
    vault: Path
    settings: Settings
    model: ChatModel
    state: State
    index: Any
    window: Window | None
    report: RunReport
    audit: AuditLog
    reporter: Reporter
    today: str
    hint: str | None = None
    dry_run: bool = False
    retry_failed: bool = False
    max_units: int = 20
    state_lock: threading.RLock = field(default_factory=threading.RLock)
    # Transient failures in a row, across the steps of the run (the provider may be down).
    outage: Outage = field(default_factory=Outage)

    def rebind_model(self) -> None:
        """Give the model a fresh view of the index's term statistics.

        The local engine memoises IDF values from the first lookup on; bound once per run, a
        unit's decisions would depend on what earlier steps and units happened to look up, so
        a run resumed after a crash would decide differently from one that never stopped.
        Bound per unit (and per step), a decision depends only on the vault at that moment."""
        bind = getattr(self.model, "bind_index", None)
        if callable(bind):
            bind(self.index)

    def save_state(self, *, units: Iterable[str] = (), inputs: Iterable[str] = (),
                   meta: bool = False) -> None:
        """Make the state durable. Naming what changed appends just those records to the
        journal (one fsynced line each); naming nothing rewrites the whole state."""
        if self.dry_run:
            return
        units, inputs = list(units), list(inputs)
        with self.state_lock:
            if units or inputs or meta:
                self.state.log(units=units, inputs=inputs, meta=meta)
            else:
                self.state.save()
