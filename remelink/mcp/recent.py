"""What the last dream runs did, for the MCP server's `recent` tool (SPEC §5.2, §9.5).

Read from the audit trail `.remelink/runs/<run-id>.jsonl` (the newest runs by id, which
starts with the run's UTC time), through the vault boundary and treated as untrusted input:
a run id must be a plain file name, each record a JSON object whose target is a digest path,
every value of the type it must have; anything else is skipped.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from remelink.config import Settings
from remelink.decoding import scrub_text
from remelink.errors import RemelinkError
from remelink.vault.paths import MARKER_DIR, normalize_relpath

RUNS_DIR = f"{MARKER_DIR}/runs"
RUN_BYTES = 20 * 1024 * 1024  # a run file larger than this is not read
MAX_FILES = 200  # run files looked at, newest first (runs that changed nothing are skipped)
READ_BUDGET = 64 * 1024 * 1024  # bytes read per call, all run files together
LINE_CHARS = 1 << 20  # a record longer than this is not parsed
PATH_CHARS = 1000
PER_KIND = 25  # entries listed per kind and run
_RUN_ID = re.compile(r"^(\d{8})T(\d{6})[A-Za-z0-9._-]{0,80}$")
KINDS = {"CREATE": "created", "CORRECT": "corrected", "REFINE": "updated",
         "CORROBORATE": "updated", "UPDATED": "updated"}


@dataclass
class Change:
    target: str
    name: str
    note: str
    sources: list[str]


@dataclass
class Run:
    id: str
    when: str  # YYYY-MM-DD HH:MM UTC
    changes: dict[str, list[Change]] = field(default_factory=dict)
    failed: int = 0
    skipped_records: int = 0


def _text(value: object, limit: int = 300) -> str:
    return " ".join(scrub_text(value).split())[:limit] if isinstance(value, str) else ""


def _run_files(vault: Path) -> list[str]:
    """The names of the run files, newest first: listed from the real folder `.remelink/runs`
    (reached without following a link; a link or a file there is a one-line refusal), at
    most MAX_FILES of them."""
    from remelink.vault import own

    try:
        with own.folder(vault, RUNS_DIR) as dfd:
            names = os.listdir(dfd)
    except FileNotFoundError:
        return []
    except own.Unsafe as exc:
        raise own.refusal(exc) from None
    except OSError:
        return []
    runs = sorted((n for n in names if n.endswith(".jsonl") and _RUN_ID.match(n[:-6])),
                  reverse=True)
    return runs[:MAX_FILES]


def _records(vault: Path, name: str, budget: list[int]) -> list[object] | None:
    """The records of one run file (None: not read), each line parsed as JSON; a line that is
    not JSON, too deep or too long is None. Through the boundary: a link, FIFO or device
    is never opened, at most RUN_BYTES are read, and at most `budget[0]` bytes (what is
    left of READ_BUDGET for the call, spent here)."""
    from remelink.vault import own

    limit = min(RUN_BYTES, budget[0])
    try:
        with own.folder(vault, RUNS_DIR) as dfd:
            fd = own.open_regular(dfd, name, rel=f"{RUNS_DIR}/{name}")
            try:
                # Sized before any read: a file over the limit costs nothing.
                got = None if os.fstat(fd).st_size > limit else own.read_fd(fd, limit)
            finally:
                os.close(fd)
    except (OSError, RemelinkError):
        return None
    if got is None:
        return None
    data = got
    budget[0] -= len(data)
    out: list[object] = []
    for line in data.decode("utf-8", errors="replace").splitlines():
        if len(line) > LINE_CHARS:
            out.append(None)
            continue
        try:
            out.append(json.loads(line))
        except (ValueError, RecursionError):
            out.append(None)
    return out


def recent_runs(vault: Path, settings: Settings, count: int) -> list[Run]:
    out: list[Run] = []
    digest = settings.folders.digest + "/"
    budget = [READ_BUDGET]
    for name in _run_files(vault):
        if budget[0] <= 0:
            break
        run_id = name[: -len(".jsonl")]
        m = _RUN_ID.match(run_id)
        if m is None:
            continue
        d, t = m.group(1), m.group(2)
        run = Run(run_id, f"{d[:4]}-{d[4:6]}-{d[6:]} {t[:2]}:{t[2:4]} UTC")
        records = _records(vault, name, budget)
        if records is None:
            continue
        for rec in records:
            if rec is None:
                run.skipped_records += 1
                continue
            if not isinstance(rec, dict) or rec.get("dry_run") is True:
                continue
            if rec.get("status") == "failed":
                run.failed += 1
                continue
            action = rec.get("action")
            kind = KINDS.get(action) if isinstance(action, str) else None
            if rec.get("status") != "done" or kind is None or rec.get("changed") is False:
                continue
            raw_target = rec.get("target")
            try:
                if not isinstance(raw_target, str) or len(raw_target) > PATH_CHARS:
                    raise ValueError(raw_target)
                target = normalize_relpath(scrub_text(raw_target))
            except (ValueError, RemelinkError):
                run.skipped_records += 1
                continue
            if not target.startswith(digest) or not target.endswith(".md") or \
                    any(p.startswith(".") for p in target.split("/")):
                run.skipped_records += 1
                continue
            raw = rec.get("paths")
            sources = [_text(p, PATH_CHARS) for p in raw[:5] if isinstance(p, str)] \
                if isinstance(raw, list) else []
            run.changes.setdefault(kind, []).append(
                Change(target, _text(rec.get("name")), _text(rec.get("note")),
                       [p for p in sources if p]))
        if run.changes or run.failed:
            out.append(run)
        if len(out) >= count:
            break
    return out


def recent_text(runs: list[Run]) -> str:
    if not runs:
        return ("No dream run has changed the digest yet (nothing in .remelink/runs/). "
                "Run `remelink dream run` to distil the raw notes.")
    lines: list[str] = []
    for run in runs:
        counts = ", ".join(f"{len(v)} {k}" for k, v in sorted(run.changes.items()))
        failed = f", {run.failed} unit(s) failed" if run.failed else ""
        lines.append(f"Run {run.id} ({run.when}): {counts or 'no change'}{failed}")
        for kind in ("created", "updated", "corrected"):
            items = run.changes.get(kind, [])
            for c in items[:PER_KIND]:
                src = f" (from {', '.join(c.sources)})" if c.sources else ""
                lines.append(f"  {kind}: {c.target}  {c.name}{src}")
                if kind == "corrected" and c.note:
                    lines.append(f"    {c.note}")
            if len(items) > PER_KIND:
                lines.append(f"  ... {len(items) - PER_KIND} more {kind}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"
