"""The records of the checkpoint (SPEC §9.3): one per input note, one per unit, as state.json
holds them, and the JSON writer of the whole state. Values only: `state.State` loads, changes
and saves them. Everything read is untrusted input (dream/untrusted.py)."""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from typing import Any

from remelink.dream.sketch import parse as parse_sketch
from remelink.dream.untrusted import count, texts
from remelink.dream.untrusted import text as _text
from remelink.units import Revision, Unit

UNIT_STATUSES = ("pending", "committing", "done", "failed", "held")
INPUT_STATUSES = ("pending", "processed", "failed", "invalid")
VERDICTS = ("units", "nothing")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


@dataclass
class InputRecord:
    hash: str  # of the content last extracted ("" when no extraction has succeeded yet)
    status: str = "pending"  # pending | processed | failed | invalid
    units: list[str] = field(default_factory=list)
    error: str | None = None
    run: str | None = None
    # The last extraction of this input failed: the content it failed on, how many times in a
    # row, and why. Cleared when an extraction succeeds; an edit starts the count again.
    extract_hash: str | None = None
    extract_attempts: int = 0
    # The verdict of the extraction of `hash`: "units" (some unit cites the note) or "nothing"
    # (with `reason`); None: never judged, so never processed (SPEC §8).
    verdict: str | None = None
    reason: str | None = None
    # The content sketch of `hash` (dream/sketch.py): how a renamed note with a small edit is
    # recognised once this path is gone (SPEC §9.3). None: not computed yet.
    sketch: str | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"hash": self.hash, "status": self.status, "units": self.units,
                                "error": self.error, "run": self.run}
        if self.verdict is not None:
            data["verdict"] = self.verdict
            if self.reason:
                data["reason"] = self.reason
        if self.sketch is not None:
            data["sketch"] = self.sketch
        if self.extract_hash is not None:
            data.update(extract_hash=self.extract_hash, extract_attempts=self.extract_attempts)
        return data

    def extraction_failed(self, digest: str, error: str, run: str, *, fresh: bool) -> None:
        """Record a failed extraction of the content `digest` (`fresh`: count from one)."""
        same = self.extract_hash == digest and not fresh
        self.extract_attempts = self.extract_attempts + 1 if same else 1
        self.extract_hash, self.error, self.run, self.status = digest, error, run, "failed"

    def gave_up_extracting(self, digest: str, max_attempts: int) -> bool:
        return self.extract_hash == digest and self.extract_attempts >= max_attempts


@dataclass
class UnitRecord:
    unit: Unit
    status: str = "pending"  # pending | committing | done | failed | held (units.HELD_KIND)
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


def input_record(rel: str, rec: dict[str, Any]) -> InputRecord:
    status = str(rec.get("status", "pending"))
    if status not in INPUT_STATUSES:
        raise ValueError(f"input {rel}: unknown status {status!r}")
    extract_hash = rec.get("extract_hash")
    verdict = rec.get("verdict")
    if verdict is not None and verdict not in VERDICTS:
        raise ValueError(f"input {rel}: unknown verdict {verdict!r}")
    where = f"input {rel}:"
    return InputRecord(hash=_text(rec["hash"], f"{where} hash") or "", status=status,
                       units=texts(rec.get("units"), f"{where} units"),
                       error=_text(rec.get("error"), f"{where} error"),
                       run=_text(rec.get("run"), f"{where} run"),
                       extract_hash=_text(extract_hash, f"{where} extract_hash"),
                       extract_attempts=count(rec.get("extract_attempts"),
                                              f"{where} extract_attempts"),
                       verdict=verdict, reason=_text(rec.get("reason"), f"{where} reason"),
                       # untrusted input: anything but a sketch is dropped (it only serves to
                       # recognise an edited rename)
                       sketch=rec.get("sketch") if parse_sketch(rec.get("sketch")) else None)


def unit_record(uid: str, rec: dict[str, Any]) -> UnitRecord:
    status = str(rec.get("status", "pending"))
    if status not in UNIT_STATUSES:
        raise ValueError(f"unit {uid}: unknown status {status!r}")
    where = f"unit {uid}:"
    unit = Unit(name=str(rec["name"]), bucket=str(rec["bucket"]), summary=str(rec["summary"]),
                paths=tuple(texts(rec["paths"], f"{where} paths")), id=uid,
                points=tuple(texts(rec.get("points"), f"{where} points")),
                kind=str(rec.get("kind") or ""), revises=Revision.from_dict(rec.get("revises")))
    return UnitRecord(unit=unit, status=status,
                      attempts=count(rec.get("attempts"), f"{where} attempts"),
                      error=_text(rec.get("error"), f"{where} error"),
                      action=_text(rec.get("action"), f"{where} action"),
                      target=_text(rec.get("target"), f"{where} target"),
                      commit_hash=_text(rec.get("commit_hash"), f"{where} commit_hash"),
                      run=_text(rec.get("run"), f"{where} run"))


def render_json(data: dict[str, Any]) -> str:
    """The state as JSON with one record per line: readable and diffable like an indented
    file, but encoded by json's C encoder (an indented dump runs the pure-Python encoder,
    which made saving the state of a 1,000-unit run cost more than integrating it)."""

    def dumps(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False)

    parts = []
    for key, value in data.items():
        if isinstance(value, dict) and value:
            body = ",\n".join(f"  {dumps(k)}: {dumps(v)}" for k, v in value.items())
            parts.append(f" {dumps(key)}: {{\n{body}\n }}")
        elif isinstance(value, list) and value:
            body = ",\n".join(f"  {dumps(v)}" for v in value)
            parts.append(f" {dumps(key)}: [\n{body}\n ]")
        else:
            parts.append(f" {dumps(key)}: {dumps(value)}")
    return "{\n" + ",\n".join(parts) + "\n}\n"
