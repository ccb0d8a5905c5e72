"""The checkpoint `.remelink/state.json` (SPEC §9.3).

Versioned JSON, written atomically. Per input note: the content hash at extraction time, its
status and the units it produced. Per unit: its fields, status (`pending | committing | done |
failed`), attempts, last error, and the action and target once done.

Exactly-once integration uses a write-ahead record: before a node is replaced, the unit is saved
as `committing` with the target and the sha256 of the bytes about to be written. On the next run,
`recover()` settles every `committing` unit: a target already holding those bytes means done;
anything else means the write never happened, and the unit is pending again.

A state file from a newer version, or one that cannot be read, stops the run with a clear message
and is never overwritten.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from remelink.errors import StateError
from remelink.units import Unit
from remelink.vault.fsio import atomic_write

VERSION = 1
STATE_FILE = ".remelink/state.json"
MAX_RUNS_KEPT = 30


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class InputRecord:
    hash: str
    status: str = "pending"  # pending | processed | failed | invalid
    units: list[str] = field(default_factory=list)
    error: str | None = None
    run: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"hash": self.hash, "status": self.status, "units": self.units,
                "error": self.error, "run": self.run}


@dataclass
class UnitRecord:
    unit: Unit
    status: str = "pending"  # pending | committing | done | failed
    attempts: int = 0
    error: str | None = None
    action: str | None = None
    target: str | None = None
    commit_hash: str | None = None
    run: str | None = None

    def to_json(self) -> dict[str, Any]:
        data = self.unit.as_dict()
        data.update({"status": self.status, "attempts": self.attempts, "error": self.error,
                     "action": self.action, "target": self.target,
                     "commit_hash": self.commit_hash, "run": self.run})
        return data


@dataclass
class State:
    path: Path
    inputs: dict[str, InputRecord] = field(default_factory=dict)
    units: dict[str, UnitRecord] = field(default_factory=dict)
    runs: list[dict[str, Any]] = field(default_factory=list)
    # Nodes written by integration that auto_tag_step has not tagged yet (survives a crash).
    pending_tags: list[str] = field(default_factory=list)

    # -- persistence -------------------------------------------------------------------------
    @classmethod
    def load(cls, vault: Path) -> State:
        path = vault / STATE_FILE
        if not path.exists():
            return cls(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise StateError(f"cannot read the checkpoint: {exc}", path=STATE_FILE,
                             hint="restore it from version control, or move it away to start "
                                  "over (every note is then processed again)") from None
        if not isinstance(data, dict) or not isinstance(data.get("version"), int):
            raise StateError("the checkpoint has no version; it is not a remelink state file",
                             path=STATE_FILE, hint="move it away to start over")
        if data["version"] > VERSION:
            raise StateError(f"the checkpoint is version {data['version']}, newer than this "
                             f"remelink understands ({VERSION})", path=STATE_FILE,
                             hint="upgrade remelink; the file was left untouched")
        state = cls(path)
        try:
            for rel, rec in (data.get("inputs") or {}).items():
                state.inputs[rel] = InputRecord(
                    hash=str(rec["hash"]), status=str(rec.get("status", "pending")),
                    units=[str(u) for u in rec.get("units") or []], error=rec.get("error"),
                    run=rec.get("run"))
            for uid, rec in (data.get("units") or {}).items():
                unit = Unit(name=str(rec["name"]), bucket=str(rec["bucket"]),
                            summary=str(rec["summary"]), paths=tuple(rec["paths"]), id=uid,
                            points=tuple(rec.get("points") or ()), kind=str(rec.get("kind") or ""))
                state.units[uid] = UnitRecord(
                    unit=unit, status=str(rec.get("status", "pending")),
                    attempts=int(rec.get("attempts", 0)), error=rec.get("error"),
                    action=rec.get("action"), target=rec.get("target"),
                    commit_hash=rec.get("commit_hash"), run=rec.get("run"))
            state.runs = [r for r in data.get("runs") or [] if isinstance(r, dict)]
            state.pending_tags = [str(p) for p in data.get("pending_tags") or []]
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise StateError(f"the checkpoint is malformed ({type(exc).__name__}: {exc})",
                             path=STATE_FILE, hint="restore it from version control, or move it "
                                                   "away to start over") from None
        return state

    def to_json(self) -> dict[str, Any]:
        return {
            "version": VERSION,
            "updated": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "inputs": {k: self.inputs[k].to_json() for k in sorted(self.inputs)},
            "units": {k: v.to_json() for k, v in self.units.items()},
            "runs": self.runs[-MAX_RUNS_KEPT:],
            "pending_tags": self.pending_tags,
        }

    def save(self) -> None:
        text = json.dumps(self.to_json(), ensure_ascii=False, indent=1) + "\n"
        atomic_write(self.path, text)

    # -- transitions -------------------------------------------------------------------------
    def add_units(self, units: Iterable[Unit], run: str) -> list[str]:
        ids = []
        for unit in units:
            if unit.id not in self.units:
                self.units[unit.id] = UnitRecord(unit=unit, run=run)
            ids.append(unit.id)
        return ids

    def recover(self, vault: Path) -> list[str]:
        """Settle units left `committing` by a killed run. Returns one line per settled unit."""
        notes = []
        for uid, rec in self.units.items():
            if rec.status != "committing":
                continue
            target = vault / (rec.target or "")
            on_disk = sha256(target.read_bytes()) if rec.target and target.is_file() else None
            if on_disk is not None and on_disk == rec.commit_hash:
                rec.status = "done"
                rec.error = None
                rec.attempts += 1
                self.note_written(rec.target or "")
                notes.append(f"recovered {uid}: {rec.target} was written before the interruption")
            else:
                rec.status = "pending"
                rec.action = None
                notes.append(f"recovered {uid}: the write to {rec.target} never happened; retrying")
        return notes

    def note_written(self, target: str) -> None:
        if target and target not in self.pending_tags:
            self.pending_tags.append(target)

    def input_status(self, rel: str, max_attempts: int) -> str:
        """processed when every unit of the input is done; failed when one is out of attempts."""
        rec = self.inputs[rel]
        if rec.status == "invalid":
            return "invalid"
        statuses = [self.units[u] for u in rec.units if u in self.units]
        if any(u.status == "failed" and u.attempts >= max_attempts for u in statuses):
            return "failed"
        if all(u.status == "done" for u in statuses):
            return "processed"
        return "pending"
