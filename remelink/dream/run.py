"""`remelink dream run`: the steps from config under the vault lock (SPEC §9), and
`remelink status` (§9.5).

Order of a run: check the configured steps (an unknown one is a configuration error before
anything runs), take the lock (wait up to `--wait`, then exit 3), load the checkpoint (a newer or
unreadable one stops the run untouched), settle units a killed run left open, record the run as
started, bring the node index up to date, run each step, record the run as finished.

A dry run writes nothing at all: it takes a shared lock without creating the lock file, keeps
the checkpoint in memory, and searches a throw-away copy of the node index.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from remelink.config import Settings
from remelink.dream.autotag import auto_tag_step
from remelink.dream.context import AuditLog, Reporter, RunContext, RunReport, SilentReporter
from remelink.dream.extract import extract_step
from remelink.dream.inputs import Window, check_write_folders
from remelink.dream.state import RUNS_DIR, Recovery, State
from remelink.dream.steps import finish_step, integrate_step
from remelink.dream.topics import topics_step
from remelink.errors import ConfigError, RemelinkError, UsageError
from remelink.models.base import ChatModel
from remelink.vault import own
from remelink.vault.fsio import TMP_PREFIX, file_lock, lock_is_held, shared_lock, sweep_temp_files
from remelink.vault.paths import disk_path
from remelink.vault.scratch import scratch_copy

Step = Callable[[RunContext], None]
STEPS: dict[str, Step] = {
    "dream_extract_step": extract_step,
    "dream_integrate_step": integrate_step,
    "dream_finish_step": finish_step,
    "auto_tag_step": auto_tag_step,
    "dream_topics_step": topics_step,
}
LOCK_FILE = ".remelink/lock"
MAX_MOVES_KEPT = 50  # renamed and deleted notes a run's record in state.json lists


def check_steps(steps: Sequence[str]) -> list[Step]:
    unknown = [s for s in steps if s not in STEPS]
    if unknown:
        raise ConfigError(f"unknown dream step(s): {', '.join(unknown)}",
                          path=".remelink/config.yaml (auto_dream.steps)",
                          hint=f"known steps: {', '.join(STEPS)}")
    if not steps:
        raise ConfigError("auto_dream.steps is empty", path=".remelink/config.yaml",
                          hint=f"known steps: {', '.join(STEPS)}")
    return [STEPS[s] for s in steps]


class LockedIndex:
    """The node index as the dream steps use it: parallel units take turns, and an unexpected
    failure inside the index (derived data) reopens it once before giving up."""

    def __init__(self, index: Any) -> None:
        self.index = index
        self._lock = threading.RLock()

    def _retry(self, call: Callable[[], Any], *, again: bool = True) -> Any:
        with self._lock:
            try:
                return call()
            except (RemelinkError, KeyboardInterrupt):
                raise
            except Exception:
                # The index is derived: an unexpected failure inside it (seen: whoosh3 3.54
                # raising TypeError when refreshing the searcher of an index built from an
                # empty digest, so that every update of a new vault's first run failed) is no
                # reason to stop a run. Rebuild it from the digest (which includes whatever
                # the failed update was about) and go on.
                self.index.close()
                self.index.rebuild()
                return call() if again else None

    def refresh(self) -> Any:
        return self._retry(self.index.refresh)

    def search(self, query: str, *, limit: int = 20, bucket: str | None = None,
               refresh: bool = True) -> list[Any]:
        return list(self._retry(lambda: self.index.search(query, limit=limit, bucket=bucket,
                                                          refresh=refresh)))

    def update(self, paths: Any) -> None:
        rels = list(paths)
        self._retry(lambda: self.index.update(rels), again=False)

    def idf(self, term: str) -> float:
        return float(self._retry(lambda: self.index.idf(term)))

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
    today: str | None = None  # the run's date (corrections are dated); default: the clock


def new_run_id() -> str:
    """Sortable by start time, unique across processes and within one."""
    return time.strftime("%Y%m%dT%H%M%S") + f"-{os.getpid()}-{secrets.token_hex(2)}"


def tree_diffs(vault: Path, scratch: Path, tops: Sequence[str]) -> tuple[dict[str, str], int]:
    """A unified diff per file the scratch run created or changed under `tops`. A file the run
    did not write is still the vault's own (hard-linked: same inode) and is not read; the
    vault's side of a written file is read through the vault boundary."""
    import difflib

    from remelink.errors import RemelinkError
    from remelink.vault.boundary import read_file, vault_real

    root_real = vault_real(vault)
    diffs: dict[str, str] = {}
    for top in tops:
        base = scratch / top
        for path in sorted(base.rglob("*")) if base.is_dir() else []:
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if not stat.S_ISREG(st.st_mode) or path.name.startswith(TMP_PREFIX):
                continue  # a run never writes a link or a special file: nothing to diff
            rel = path.relative_to(scratch).as_posix()
            original = vault / rel
            with contextlib.suppress(OSError):
                seen = os.lstat(original)
                if (seen.st_dev, seen.st_ino) == (st.st_dev, st.st_ino):
                    continue  # the hard link the copy made: not written by the run
            try:
                before = read_file(original, root_real=root_real, limit=1 << 30, rel=rel).data
            except (OSError, RemelinkError):
                before = None
            after = path.read_bytes()
            if before == after:
                continue
            diffs[rel] = "".join(difflib.unified_diff(
                (before or b"").decode("utf-8", "replace").splitlines(keepends=True),
                after.decode("utf-8", "replace").splitlines(keepends=True),
                fromfile="/dev/null" if before is None else f"a/{rel}", tofile=f"b/{rel}"))
    return diffs, len(diffs)


def _sweep(vault: Path, settings: Settings) -> None:
    """Temp files of writers killed mid-write. Under the vault lock no other writer of these
    folders is running, so every one of ours is stale, whatever its age."""
    sweep_temp_files(vault / ".remelink", older_than=0)
    digest = vault / settings.folders.digest
    if digest.is_dir():
        for folder in {p.parent for p in digest.rglob(f"{TMP_PREFIX}*.tmp")}:
            sweep_temp_files(folder, older_than=0)


def _recovered_entry(run_id: str, state: State, r: Recovery) -> dict[str, Any]:
    rec = state.units[r.unit]
    return {"run": run_id, "unit": r.unit, "name": rec.unit.name, "bucket": rec.unit.bucket,
            "paths": list(rec.unit.paths), "status": "done", "action": rec.action,
            "target": rec.target, "changed": True, "content_hash": rec.commit_hash,
            "recovered": True, "note": r.message, "attempts": rec.attempts, "dry_run": False}


def set_up(vault: Path, settings: Settings, *, dry_run: bool = False) -> list[str]:
    """A first run in a vault without `.remelink/` creates what `remelink init` creates (the
    folders, a commented config.yaml with the vault's link resolution, the .gitignore of what
    is derived), so that nothing a newcomer skipped ends up committed. Returns what it created
    (nothing for a dry run, which writes nothing)."""
    if dry_run or os.path.lexists(vault / ".remelink"):
        return []
    from remelink.scaffold import init

    folders = settings.folders
    result = init(vault, daily=folders.daily, resource=folders.resource, digest=folders.digest)
    detected = [f"links.resolution: obsidian ({result.resolution_reason})"] \
        if result.resolution == "obsidian" else []
    return [*result.created, *detected]


def run_dream(vault: Path, settings: Settings, model: ChatModel, options: DreamOptions,
              reporter: Reporter | None = None) -> RunReport:
    """Run the configured dream steps once. Raises VaultBusy, StateError or ConfigError before
    anything is touched; everything else is reported in the returned RunReport.

    A dry run is the same run on a scratch copy of the vault (so each unit sees what the units
    before it would have written), followed by a diff of the copy against the vault."""
    steps = check_steps(settings.auto_dream.steps)
    window = Window.of(options.date, options.scan_days)
    if options.today is not None:
        Window.of(options.today, None)  # validates the date
    if options.max_units is not None and options.max_units < 1:
        raise UsageError(f"--max-units must be at least 1, got {options.max_units}")
    reporter = reporter or SilentReporter()
    if not options.dry_run:
        with file_lock(vault / LOCK_FILE, wait=options.wait, what="vault"):
            return _run(vault, settings, model, options, reporter, steps, window)
    with shared_lock(vault / LOCK_FILE, wait=options.wait):
        State.load(vault)  # a newer or unreadable checkpoint stops a dry run too
        with scratch_copy(vault, settings) as scratch:
            report = _run(scratch, settings, model, options, reporter, steps, window)
            folders = settings.folders
            report.diffs, _ = tree_diffs(vault, scratch, (folders.digest, folders.daily))
    report.dry_run = True
    return report


def _run(vault: Path, settings: Settings, model: ChatModel, options: DreamOptions,
         reporter: Reporter, steps: list[Step], window: Window | None) -> RunReport:
    """One run under the vault lock (on the vault itself, or on a dry run's scratch copy)."""
    check_write_folders(vault, settings)  # a symlinked digest/: one line, before anything
    own.check_folder(vault, RUNS_DIR)  # a symlinked .remelink/runs: one line (exit 2)
    run_id = new_run_id()
    state = State.load(vault)
    state.track_tags = "auto_tag_step" in settings.auto_dream.steps
    dream = settings.auto_dream
    report = RunReport(run_id=run_id, date=window.date if window else None,
                       window=list(window.days) if window else [], dry_run=False,
                       budget={"unit_tokens": dream.unit_tokens, "max_steps": dream.max_steps,
                               "repair_turns": dream.repair_turns})
    audit = AuditLog(vault, run_id, enabled=True)
    for r in state.recover(vault):
        report.recovered.append(r.message)
        reporter.note(r.message)
        if r.done and not r.from_audit:
            audit.record(_recovered_entry(run_id, state, r))
    report.warnings += state.problems  # checkpoint entries naming what they may not (ignored)
    _sweep(vault, settings)
    state.start_run(run_id, report.date)
    state.save()
    try:
        _steps(vault, settings, model, options, reporter, steps, window, state, report, audit)
    except BaseException as exc:
        _mark_failed(state, run_id, report, exc)
        raise
    state.finish_run(run_id, report.counts(), report.ok)
    for run in reversed(state.runs):  # what became of gone notes, for `remelink status`
        if run.get("id") == run_id:
            if report.renamed:
                run["renamed"] = report.renamed[:MAX_MOVES_KEPT]
            if report.deleted:
                run["deleted"] = report.deleted[:MAX_MOVES_KEPT]
            break
    state.save()
    return report


def _mark_failed(state: State, run_id: str, report: RunReport, exc: BaseException) -> None:
    """A run that dies says so in state.json (`status` must never show it as running). Best
    effort: when the failure is the disk itself, the next run's recovery marks it instead."""
    state.finish_run(run_id, report.counts(), False)
    for run in reversed(state.runs):
        if run.get("id") == run_id:
            if isinstance(exc, KeyboardInterrupt):
                run["interrupted"] = True
            else:
                run["failed"] = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
            break
    with contextlib.suppress(Exception):
        state.save()


def _steps(vault: Path, settings: Settings, model: ChatModel, options: DreamOptions,
           reporter: Reporter, steps: list[Step], window: Window | None, state: State,
           report: RunReport, audit: AuditLog) -> None:
    with _live_index(vault, settings) as raw_index:
        index = LockedIndex(raw_index)
        stats = index.refresh()
        report.warnings += list(getattr(stats, "warnings", ()) or ())
        for notice in getattr(stats, "notices", ()) or ():
            if "rebuilt it from" in str(notice):
                reporter.note(str(notice))  # a first run: expected, not a warning
            else:
                report.warnings.append(str(notice))
        bind = getattr(model, "bind_index", None)
        if callable(bind):
            bind(index)
        ctx = RunContext(
            vault=vault, settings=settings, model=model, state=state, index=index,
            window=window, report=report, audit=audit, reporter=reporter,
            today=options.today or time.strftime("%Y-%m-%d"), hint=options.hint,
            dry_run=False, retry_failed=options.retry_failed,
            max_units=settings.auto_dream.max_units if options.max_units is None
            else options.max_units)
        for step in steps:
            step(ctx)


@contextlib.contextmanager
def _live_index(vault: Path, settings: Settings) -> Iterator[Any]:
    from remelink.index import NodeIndex

    index = NodeIndex(vault, settings)
    try:
        yield index
    finally:
        index.close()


@dataclass
class StatusReport:
    inputs: dict[str, int]
    units: dict[str, int]
    failed: list[dict[str, Any]]
    invalid: list[dict[str, Any]]
    pending: list[dict[str, Any]]
    runs: list[dict[str, Any]]
    pending_tags: int
    exists: bool = True
    unextracted: list[dict[str, Any]] = field(default_factory=list)  # extraction keeps failing
    # Processed notes no longer on disk, with the nodes their units went into: the next run
    # finds each renamed or deleted (SPEC §9.3).
    gone: list[dict[str, Any]] = field(default_factory=list)
    # Per note: its status and verdict (units, nothing with its reason, or none yet).
    notes: dict[str, dict[str, Any]] = field(default_factory=dict)
    verdicts: dict[str, int] = field(default_factory=dict)  # units | nothing | none

    @property
    def ok(self) -> bool:
        return not self.failed and not self.invalid and not self.unextracted


def _settled(vault: Path, runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The runs as status shows them: an unfinished run while no process holds the vault lock
    died (killed, or failed when not even its failure could be saved): interrupted."""
    if all(r.get("finished") for r in runs) or lock_is_held(vault / LOCK_FILE):
        return runs
    return [r if r.get("finished") else {**r, "interrupted": True} for r in runs]


def status(vault: Path, settings: Settings) -> StatusReport:
    """Summary of the checkpoint: what is pending, what failed and why, the last runs. Reads
    only; a newer or unreadable checkpoint is a StateError (exit 2), as for a run."""
    state = State.load(vault)
    max_attempts = settings.auto_dream.max_attempts
    inputs: dict[str, int] = {}
    for record in state.inputs.values():
        inputs[record.status] = inputs.get(record.status, 0) + 1
    units: dict[str, int] = {}
    failed, pending = [], []
    for uid, rec in state.units.items():
        units[rec.status] = units.get(rec.status, 0) + 1
        if rec.status == "failed":
            failed.append({"id": uid, "name": rec.unit.name, "attempts": rec.attempts,
                           "max_attempts": max_attempts, "error": rec.error,
                           "paths": list(rec.unit.paths),
                           "gave_up": rec.attempts >= max_attempts})
        elif rec.status in ("pending", "committing"):
            pending.append({"id": uid, "name": rec.unit.name, "paths": list(rec.unit.paths),
                            "status": rec.status})
    invalid = [{"path": p, "error": r.error} for p, r in sorted(state.inputs.items())
               if r.status == "invalid"]
    unextracted = [{"path": p, "attempts": r.extract_attempts, "max_attempts": max_attempts,
                    "error": r.error, "gave_up": r.extract_attempts >= max_attempts}
                   for p, r in sorted(state.inputs.items()) if r.extract_hash is not None]
    notes: dict[str, dict[str, Any]] = {}
    verdicts = {"units": 0, "nothing": 0, "none": 0}
    for path, r in sorted(state.inputs.items()):
        if r.status == "invalid":
            notes[path] = {"status": "invalid", "verdict": None, "error": r.error}
            continue
        note: dict[str, Any] = {"status": state.input_status(path, max_attempts),
                                "verdict": r.verdict, "units": list(r.units)}
        if r.reason:
            note["reason"] = r.reason
        if r.extract_hash is not None:
            # Its current content has no verdict yet, whatever the last one was.
            note.update(verdict=None, attempts=r.extract_attempts, error=r.error)
        verdicts[note["verdict"] or "none"] += 1
        notes[path] = note
    gone = _gone(vault, settings, state)
    return StatusReport(inputs=inputs, units=units, failed=failed, invalid=invalid,
                        pending=pending, runs=_settled(vault, state.runs[-5:]),
                        pending_tags=len(state.pending_tags), exists=state.path.exists(),
                        unextracted=unextracted, notes=notes, verdicts=verdicts, gone=gone)


def _gone(vault: Path, settings: Settings, state: State) -> list[dict[str, Any]]:
    """Processed notes no longer on disk, each with the digest nodes that cite it."""
    paths = [p for p in sorted(state.inputs) if not os.path.lexists(disk_path(vault, p))]
    if not paths:
        return []
    from remelink.dream.citations import citing_nodes
    from remelink.vault.resolve import VaultFiles

    citing, _ = citing_nodes(vault, settings, VaultFiles.scan(vault), paths)
    return [{"path": p, "nodes": sorted(r for r, c in citing.items() if p in c.links)}
            for p in paths]
