"""The checkpoint `.remelink/state.json` (SPEC §9.3).

Versioned JSON, written atomically. Per input note: the content hash at extraction time, its
status, the units it produced, and the attempts of an extraction that keeps failing. Per unit:
its fields, status (`pending | committing | done | failed`), attempts, last error, and the action
and target once done. Plus the last runs, and the nodes written but not yet tagged.

Exactly-once integration rests on two records written before the state says `done`:
- the write-ahead: before a node is replaced, the unit is saved as `committing` with the target
  and the sha256 of the bytes about to be written;
- the audit line (`.remelink/runs/<run-id>.jsonl`), written when the unit is settled.
A run is recorded as started before its first step and finished after its last, so the next run
knows when one was interrupted. `recover()` then settles every unit a killed run left open: an
audit line saying done means done; a `committing` target that holds the recorded bytes means
done; anything else never reached the vault, and the unit is pending again.

Saving is cheap during a run: a changed record is appended to `.remelink/state.journal` (one
JSON line, fsynced), so the write-ahead costs one small append, not a rewrite of a state that
grows with every unit. `load()` replays the journal over state.json (a torn last line, left by a
kill, is ignored); `save()` writes the whole state atomically and then drops the journal, which
is what the end of every run does. Replaying is idempotent, so a crash between the two is safe.

Version 2 adds the verdict of extraction per input (SPEC §8): `units` (some unit cites it) or
`nothing` with a reason; an input without one is never processed. A version-1 state is migrated
on load. Version 1 cut an extraction at `max_units` units and checkpointed every note of the
batch anyway, so any note may have lost units: every input's hash is cleared and the next run
extracts it once more. The units a note gave stay recorded (verdict `units`), so the new
extraction is paired with them as for an edit (revisions.py): the same units change nothing,
restated ones update their own node, and only what was cut is integrated as new.

A state file from a newer version, or one that cannot be read, stops the run with a clear message
and is never overwritten. The state is recoverable data: deleting it makes the next run process
every note again (integration is additive, so nothing is lost, but work is repeated).
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from remelink.decoding import json_loads
from remelink.dream.records import (
    InputRecord,
    UnitRecord,
    input_record,
    now,
    render_json,
    sha256,
    unit_record,
)
from remelink.dream.untrusted import (
    Kinds,
    audit_entries,
    count,
    problem_line,
    run_id_ok,
    run_record,
    texts,
)
from remelink.errors import NoteError, StateError
from remelink.units import HELD_KIND, Unit
from remelink.vault import own
from remelink.vault.boundary import read_file, vault_real
from remelink.vault.paths import disk_path

# How long a held unit waits for a later note on its workstream (State.expire_held): a quarter.
HELD_DAYS = 92

VERSION = 2
STATE_FILE = ".remelink/state.json"
JOURNAL_FILE = "state.journal"
JOURNAL_PATH = ".remelink/state.journal"
RUNS_DIR = ".remelink/runs"
MAX_RUNS_KEPT = 30
MAX_STATE_BYTES = 256 << 20  # read from .remelink/ at most (a crafted /dev/zero is refused)
@dataclass(frozen=True)
class Recovery:
    """One unit settled by `recover()`."""

    unit: str
    done: bool
    target: str | None
    message: str
    from_audit: bool = False


@dataclass
class State:
    path: Path
    inputs: dict[str, InputRecord] = field(default_factory=dict)
    units: dict[str, UnitRecord] = field(default_factory=dict)
    runs: list[dict[str, Any]] = field(default_factory=list)
    # Nodes written by integration that auto_tag_step has not tagged yet (survives a crash).
    pending_tags: list[str] = field(default_factory=list)
    # False when auto_tag_step is not configured: nothing would ever drain pending_tags.
    track_tags: bool = True
    # Entries of state.json, the journal or runs/ that named something they may not, dropped
    # when loading (dream/untrusted.py): one line each, for the run's report.
    problems: list[str] = field(default_factory=list)

    @property
    def vault(self) -> Path:
        return self.path.parent.parent

    # -- persistence -------------------------------------------------------------------------
    @classmethod
    def load(cls, vault: Path) -> State:
        path = vault / STATE_FILE
        hint = "restore it from version control, or move it away to start over (every note " \
               "is then processed again); the file was left untouched"
        if not os.path.lexists(path):
            fresh = cls(path)
            fresh._replay(hint)
            return fresh
        try:
            data = json_loads(_read_own(vault, STATE_FILE).decode("utf-8"))
        except (OSError, UnicodeDecodeError, ValueError, RecursionError, StateError) as exc:
            raise StateError(f"cannot read the checkpoint: {_reason(exc)}", path=STATE_FILE,
                             hint=hint) from None
        if not isinstance(data, dict) or isinstance(data.get("version"), bool) or \
                not isinstance(data.get("version"), int):
            raise StateError("the checkpoint has no version; it is not a remelink state file",
                             path=STATE_FILE, hint=hint)
        if data["version"] > VERSION:
            raise StateError(f"the checkpoint is version {data['version']}, newer than this "
                             f"remelink understands ({VERSION})", path=STATE_FILE,
                             hint="upgrade remelink; the file was left untouched")
        state = cls(path)
        try:
            for rel, rec in (data.get("inputs") or {}).items():
                state.inputs[rel] = input_record(rel, rec)
            for uid, rec in (data.get("units") or {}).items():
                state.units[uid] = unit_record(uid, rec)
            state.runs = [run_record(r) for r in data.get("runs") or []]
            state.pending_tags = texts(data.get("pending_tags"), "pending_tags")
        except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
            raise StateError(f"the checkpoint is malformed ({type(exc).__name__}: {exc})",
                             path=STATE_FILE, hint=hint) from None
        state.problems = clean_state(state, STATE_FILE)
        state._replay(hint)
        if data["version"] == 1:
            state._migrate_v1()
        return state

    def _migrate_v1(self) -> None:
        """Version 1 had no verdicts (see the module docstring)."""
        for rec in self.inputs.values():
            if rec.status == "invalid" or rec.verdict is not None:
                continue
            rec.hash = ""  # extracted again by the next run
            if rec.units:
                rec.verdict = "units"  # what it gave stays: re-extraction pairs with it
            elif rec.extract_hash is None:
                rec.status = "pending"  # judged by nobody

    def _replay(self, hint: str) -> None:
        """Apply the journal left by a run that did not finish (see the module docstring)."""
        try:
            raw = _read_own(self.vault, JOURNAL_PATH)
        except FileNotFoundError:
            return
        except (OSError, StateError) as exc:
            raise StateError(f"cannot read the checkpoint journal: {_reason(exc)}",
                             path=JOURNAL_PATH, hint=hint) from None
        lines = raw.split(b"\n")
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                entry = json_loads(line.decode("utf-8"))
                kind, key, rec = entry["t"], entry.get("id"), entry["r"]
                if kind == "unit":
                    if rec is None:
                        self.units.pop(str(key), None)
                    else:
                        self.units[str(key)] = unit_record(str(key), rec)
                elif kind == "input":
                    if rec is None:
                        self.inputs.pop(str(key), None)
                    else:
                        self.inputs[str(key)] = input_record(str(key), rec)
                elif kind == "meta":
                    self.runs = [run_record(r) for r in rec.get("runs") or []]
                    self.pending_tags = texts(rec.get("pending_tags"), "pending_tags")
                else:
                    raise ValueError(f"unknown record type {kind!r}")
            except (UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError,
                    RecursionError, OverflowError) as exc:
                if number == len(lines) or all(not rest.strip() for rest in lines[number:]):
                    break  # the last line, torn by a kill mid-append: it never took effect
                raise StateError(f"the checkpoint journal is damaged at line {number} "
                                 f"({type(exc).__name__}: {exc})", path=JOURNAL_PATH,
                                 hint=hint) from None
        self.problems += clean_state(self, JOURNAL_PATH)

    def to_json(self) -> dict[str, Any]:
        return {
            "version": VERSION,
            "updated": now(),
            "inputs": {k: self.inputs[k].to_json() for k in sorted(self.inputs)},
            "units": {k: v.to_json() for k, v in self.units.items()},
            "runs": self.runs[-MAX_RUNS_KEPT:],
            "pending_tags": self.pending_tags,
        }

    def save(self) -> None:
        """Write the whole state atomically, then drop the journal it now contains."""
        own.write(self.vault, STATE_FILE, render_json(self.to_json()))
        own.remove(self.vault, JOURNAL_PATH)

    def log(self, *, units: Iterable[str] = (), inputs: Iterable[str] = (),
            meta: bool = False) -> None:
        """Append these records to the journal and fsync it: a durable save of what changed."""
        lines = []
        for uid in units:
            rec = self.units.get(uid)
            lines.append({"t": "unit", "id": uid, "r": rec.to_json() if rec is not None else None})
        for rel in inputs:
            record = self.inputs.get(rel)
            lines.append({"t": "input", "id": rel,
                          "r": record.to_json() if record is not None else None})
        if meta:
            lines.append({"t": "meta", "r": {"runs": self.runs[-MAX_RUNS_KEPT:],
                                             "pending_tags": self.pending_tags}})
        if not lines:
            return
        data = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
        own.append(self.vault, JOURNAL_PATH, data.encode("utf-8"))

    # -- runs --------------------------------------------------------------------------------
    def start_run(self, run_id: str, date: str | None) -> None:
        self.runs.append({"id": run_id, "date": date, "started": now(), "finished": None})
        del self.runs[:-MAX_RUNS_KEPT]

    def finish_run(self, run_id: str, counts: dict[str, Any], ok: bool) -> None:
        for run in reversed(self.runs):
            if run.get("id") == run_id:
                run.update({"finished": now(), "counts": counts, "ok": ok})
                return

    def interrupted_runs(self) -> list[str]:
        return [str(r.get("id")) for r in self.runs if r.get("id") and not r.get("finished")]

    # -- transitions -------------------------------------------------------------------------
    def add_units(self, units: Iterable[Unit], run: str) -> list[str]:
        ids = []
        for unit in units:
            if unit.id not in self.units:
                self.units[unit.id] = UnitRecord(unit=unit, run=run)
            ids.append(unit.id)
        return ids

    def drop_stale_units(self, rel: str, new_ids: Iterable[str]) -> list[str]:
        """Forget the units `rel` produced before it was edited, when they never landed and no
        other note still needs them: the new extraction supersedes them."""
        old = self.inputs.get(rel)
        if old is None:
            return []
        keep = set(new_ids)
        others = {u for p, r in self.inputs.items() if p != rel for u in r.units}
        dropped = []
        for uid in old.units:
            rec = self.units.get(uid)
            if uid in keep or uid in others or rec is None or rec.status == "done":
                continue
            del self.units[uid]
            dropped.append(uid)
        return dropped

    def move_input(self, old: str, new: str) -> list[str]:
        """A renamed note (SPEC §9.3): its record moves from `old` to `new`, and every unit
        citing `old` cites `new` instead, under the id it would have had if it had been
        extracted from `new` (so extracting `new` again finds its units known). Returns the
        ids of the unit records changed (old and new ids, for the journal)."""
        record = self.inputs.pop(old)
        self.inputs[new] = record
        renamed: dict[str, str] = {}
        for uid, rec in list(self.units.items()):
            if old not in rec.unit.paths:
                continue
            unit = replace(rec.unit, paths=tuple(new if p == old else p for p in rec.unit.paths),
                           id="")
            del self.units[uid]
            if unit.id not in self.units:
                self.units[unit.id] = replace(rec, unit=unit)
            renamed[uid] = unit.id
        for entry in self.inputs.values():
            if any(u in renamed for u in entry.units):
                entry.units = list(dict.fromkeys(renamed.get(u, u) for u in entry.units))
        return [*renamed, *renamed.values()]

    def forget_input(self, rel: str) -> tuple[list[str], list[str]]:
        """A deleted note (SPEC §9.3): its record goes, with every unit no remaining note
        gives. A unit not yet integrated that also cites a note still there is dropped, and
        that note is extracted again (its units would otherwise cite a note that is gone).
        Returns (unit ids dropped, input paths changed)."""
        self.inputs.pop(rel, None)
        again: list[str] = []
        for rec in self.units.values():
            if rel in rec.unit.paths and rec.status != "done":
                for other in rec.unit.paths:
                    known = self.inputs.get(other)
                    if other != rel and known is not None and known.hash and other not in again:
                        known.hash, known.status = "", "pending"
                        again.append(other)
        referenced = {u for rec in self.inputs.values() for u in rec.units}
        dropped = [uid for uid, rec in self.units.items() if rel in rec.unit.paths
                   and (rec.status != "done" or uid not in referenced)]
        for uid in dropped:
            del self.units[uid]
        gone = set(dropped)
        changed = list(again)
        for other, record in self.inputs.items():
            if gone.intersection(record.units):
                record.units = [u for u in record.units if u not in gone]
                if other not in changed:
                    changed.append(other)
        return dropped, changed

    def mark_committing(self, uid: str, target: str, digest: str, run: str,
                        created: bool) -> None:
        rec = self.units[uid]
        rec.status, rec.target, rec.commit_hash, rec.run = "committing", target, digest, run
        rec.action = "CREATE" if created else None

    def settle_landed(self, target: str, on_disk: str, *, except_unit: str) -> list[str]:
        """Another unit is about to replace `target`: any unit still `committing` to it whose
        bytes are on disk has landed (parallel units settle out of order). Returns their ids."""
        landed = []
        for uid, rec in self.units.items():
            if uid != except_unit and rec.status == "committing" and rec.target == target \
                    and rec.commit_hash == on_disk:
                rec.status, rec.error = "done", None
                self.note_written(target)
                landed.append(uid)
        return landed

    def recover(self, vault: Path) -> list[Recovery]:
        """Settle units left open by killed runs (see the module docstring)."""
        audited = _audited_done(vault, self.interrupted_runs(), self.problems)
        out = []
        for uid, rec in self.units.items():
            if rec.status not in ("committing", "pending"):
                continue
            line = audited.get(uid)
            if line is not None:
                rec.status, rec.error = "done", None
                rec.action = line.get("action") or rec.action
                rec.target = line.get("target") or rec.target
                rec.attempts = max(rec.attempts, count(line.get("attempts"), "attempts"), 1)
                if line.get("changed") and rec.target:
                    self.note_written(rec.target)
                out.append(Recovery(uid, True, rec.target, f"recovered {uid}: integrated "
                                    f"into {rec.target} before the interruption", True))
                continue
            if rec.status != "committing":
                continue
            try:
                on_disk = sha256(_read_node(vault, rec.target)) if rec.target else None
            except (OSError, NoteError):
                on_disk = None
            if on_disk is not None and on_disk == rec.commit_hash:
                rec.status, rec.error = "done", None
                rec.attempts += 1
                self.note_written(rec.target or "")
                out.append(Recovery(uid, True, rec.target, f"recovered {uid}: {rec.target} "
                                    "was written before the interruption"))
            else:
                rec.status, rec.action, rec.commit_hash = "pending", None, None
                out.append(Recovery(uid, False, rec.target, f"recovered {uid}: the write to "
                                    f"{rec.target} never happened; it will be integrated again"))
        for run in self.runs:
            if not run.get("finished"):
                run.update({"finished": now(), "interrupted": True, "ok": False})
        return out

    def forget_unit(self, uid: str) -> list[str]:
        """Drop a unit that did nothing (a line's unit that changed nothing, units.quiet): its
        notes are checkpointed on their other units. Returns the inputs whose lists changed."""
        rec = self.units.pop(uid, None)
        touched = []
        for path in rec.unit.paths if rec is not None else ():
            record = self.inputs.get(path)
            if record is not None and uid in record.units:
                record.units = [u for u in record.units if u != uid]
                touched.append(path)
        return touched

    def held_units(self, but: Iterable[str] = ()) -> list[Unit]:
        """The units held for a later note (units.HELD_KIND), but those citing `but`."""
        skip = set(but)
        return [rec.unit for rec in self.units.values()
                if rec.status == "held" and not skip.intersection(rec.unit.paths)]

    def expire_held(self, today: str, days: int = HELD_DAYS) -> tuple[list[str], list[str]]:
        """Forget the units held (units.HELD_KIND) by a run more than `days` days before
        `today` (YYYY-MM-DD): a workstream no later note reported on in that time is no
        project, and the checkpoint stays bounded over years of nightly runs. Nothing of the
        digest goes: a held line stays in the node its own note gave. A unit whose run id is
        not dated (a hand-edited checkpoint) is kept. Returns (unit ids, inputs changed)."""
        try:
            now = dt.date.fromisoformat(today)
        except ValueError:
            return [], []
        gone: list[str] = []
        touched: list[str] = []
        for uid, rec in list(self.units.items()):
            if rec.status != "held" or not rec.run:
                continue
            try:
                held_on = dt.datetime.strptime(rec.run[:8], "%Y%m%d").date()
            except ValueError:
                continue
            if (now - held_on).days > days:
                gone.append(uid)
                touched += self.forget_unit(uid)
        return gone, list(dict.fromkeys(touched))

    def use_held(self, units: Iterable[Unit], batch: Iterable[str]
                 ) -> tuple[list[str], list[str]]:
        """Drop the held units that `units` (a batch's extraction, integrated from now on) took
        up: a unit citing a held unit's notes, none of them a note of the batch, under the held
        unit's name (case and spacing aside). The held notes' records list the unit instead.
        Returns (unit ids dropped, inputs whose records changed)."""
        own = set(batch)
        taking = [u for u in units if u.kind != HELD_KIND and set(u.paths) - own]
        dropped: list[str] = []
        touched: list[str] = []
        for uid, rec in list(self.units.items()):
            if rec.status != "held" or own.intersection(rec.unit.paths):
                continue
            by = next((u for u in taking if set(rec.unit.paths) <= set(u.paths) and
                       _name(u.name) == _name(rec.unit.name)), None)
            if by is None:
                continue
            dropped.append(uid)
            touched += self.forget_unit(uid)
            for path in rec.unit.paths:
                record = self.inputs.get(path)
                if record is not None and by.id not in record.units:
                    record.units.append(by.id)
                    touched.append(path)
        return dropped, list(dict.fromkeys(touched))

    def note_written(self, target: str) -> None:
        if self.track_tags and target and target not in self.pending_tags:
            self.pending_tags.append(target)

    def input_status(self, rel: str, max_attempts: int) -> str:
        """processed when every unit of the input is done; failed when one is out of attempts."""
        rec = self.inputs[rel]
        if rec.status == "invalid":
            return "invalid"
        if rec.extract_hash is not None:  # its current content has not been extracted
            return "failed"
        if rec.verdict is None:  # never judged: never done
            return "pending"
        statuses = [self.units[u] for u in rec.units if u in self.units]
        if any(u.status == "failed" and u.attempts >= max_attempts for u in statuses):
            return "failed"
        if all(u.status in ("done", "held") for u in statuses):
            return "processed"
        return "pending"


def _name(name: str) -> str:
    return " ".join(name.casefold().replace("-", " ").replace("_", " ").split())


def _read_own(vault: Path, rel: str) -> bytes:
    """A file of `.remelink/` through the boundary for remelink's own files (`vault/own.py`):
    never through a symlink, never a FIFO or a device, never over MAX_STATE_BYTES."""
    return own.read(vault, rel, limit=MAX_STATE_BYTES)


def _reason(exc: BaseException) -> str:
    """What went wrong, without the file name the caller's message names already."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    if isinstance(exc, StateError) and exc.args:
        return str(exc.args[0]).removeprefix(f"{exc.path}: ") if exc.path else str(exc.args[0])
    text = str(exc).splitlines()
    return text[0] if text and text[0] else type(exc).__name__


def _read_node(vault: Path, rel: str) -> bytes:
    """A digest node recovery compares with its write-ahead hash, through the vault boundary."""
    got = read_file(disk_path(vault, rel), root_real=vault_real(vault), limit=MAX_STATE_BYTES,
                    rel=rel)
    if got.data is None:
        raise NoteError(f"{got.size} bytes, over the {MAX_STATE_BYTES >> 20} MiB limit", path=rel)
    return got.data


def _audited_done(vault: Path, run_ids: list[str],
                  problems: list[str]) -> dict[str, dict[str, Any]]:
    """Units the audit trail of the interrupted runs records as done (a killed run may have
    written a unit's line but not yet saved its state). Only lines whose target is an existing
    digest node count (dream/untrusted.py); the others are problems."""
    done: dict[str, dict[str, Any]] = {}
    kinds = Kinds.of(vault)
    for run_id in run_ids:
        rel = f"{RUNS_DIR}/{run_id}.jsonl"
        try:
            lines = _read_own(vault, rel).decode("utf-8", "replace")
        except FileNotFoundError:
            continue
        except (OSError, StateError) as exc:
            problems.append(f"{rel}: not read: {' '.join(str(exc).split())}")
            continue
        done.update(audit_entries(lines.splitlines(), rel, kinds, problems))
    return done


def clean_state(state: State, source: str, kinds: Kinds | None = None) -> list[str]:
    """Drop (or, for a unit's target, clear) every entry of the loaded checkpoint that names
    something other than what it must (dream/untrusted.py); one problem line per entry,
    naming `source`."""
    kinds = kinds or Kinds.of(state.path.parent.parent)
    raw = f"{kinds.folders.daily}/ or {kinds.folders.resource}/"
    problems: list[str] = []
    for rel in list(state.inputs):
        if not kinds.raw_note(rel):
            problems.append(problem_line(source, "inputs entry", rel, f"is not a note under {raw}"))
            del state.inputs[rel]
    for uid, rec in list(state.units.items()):
        bad = next((p for p in rec.unit.paths if not kinds.raw_note(p)), None)
        if bad is not None:
            problems.append(problem_line(source, f"unit {uid} path", bad,
                                         f"is not a note under {raw}"))
            del state.units[uid]
            continue
        if rec.target is not None and not kinds.node_path(rec.target):
            problems.append(problem_line(source, f"unit {uid} target", rec.target,
                                         f"is not a {kinds.folders.digest}/<bucket>/ node"))
            rec.target, rec.commit_hash = None, None
            if rec.status == "committing":  # nothing can be checked: integrate it again
                rec.status = "pending"
    kept_runs = []
    for run in state.runs:
        if run_id_ok(run.get("id")):
            problems += _clean_moves(run, source, kinds)
            kept_runs.append(run)
        else:
            problems.append(problem_line(source, "run id", run.get("id"), "is not a run id"))
    state.runs = kept_runs
    tags = []
    for rel in state.pending_tags:
        if kinds.existing_node(rel):
            tags.append(rel)
        else:
            problems.append(problem_line(source, "pending_tags entry", rel,
                                         "is not an existing digest node"))
    state.pending_tags = tags
    return problems


def _clean_moves(run: dict[str, Any], source: str, kinds: Kinds) -> list[str]:
    """The renamed and deleted notes a run records (shown by `remelink status`): each path must
    be a raw note, each node a digest node path; anything else is dropped, one line each."""
    problems: list[str] = []
    for key, fields in (("renamed", ("from", "to")), ("deleted", ("path",))):
        entries = run.get(key)
        if entries is None:
            continue
        kept = []
        for entry in entries if isinstance(entries, list) else [entries]:
            nodes = entry.get("nodes") if isinstance(entry, dict) else None
            bad = [entry] if not isinstance(entry, dict) or not isinstance(nodes, list) else \
                [entry.get(f) for f in fields if not kinds.raw_note(entry.get(f))] + \
                [n for n in nodes if not kinds.node_path(n)]
            if not bad and key == "renamed" and not _similarity_ok(entry.get("similarity")):
                bad = [entry.get("similarity")]
            if bad:
                problems.append(problem_line(source, f"run {run.get('id')} {key} entry", bad[0],
                                             "is not a note path"))
            else:
                kept.append(entry)
        run[key] = kept
    return problems


def _similarity_ok(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1
