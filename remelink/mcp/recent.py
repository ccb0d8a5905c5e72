"""What the last dream runs did, for the MCP server's `recent` tool (SPEC §5.2, §9.5).

Read from the audit trail `.remelink/runs/<run-id>.jsonl` (the newest runs by id, which
starts with the run's UTC time), through the vault boundary and treated as untrusted input:
a run id must be a plain file name, each record a JSON object whose target is a digest path,
every value of the type it must have; anything else is skipped.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from remelink.config import Settings
from remelink.vault.paths import MARKER_DIR, normalize_relpath

RUNS_DIR = f"{MARKER_DIR}/runs"
RUN_BYTES = 20 * 1024 * 1024  # a run file larger than this is not read
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
    return " ".join(value.split())[:limit] if isinstance(value, str) else ""


def recent_runs(vault: Path, settings: Settings, count: int) -> list[Run]:
    from remelink.vault.boundary import read_file, vault_real

    folder = vault / RUNS_DIR
    try:
        names = sorted((e.name for e in folder.iterdir() if e.name.endswith(".jsonl")),
                       reverse=True)
    except OSError:
        return []
    out: list[Run] = []
    root_real = vault_real(vault)
    digest = settings.folders.digest + "/"
    for name in names:
        run_id = name[: -len(".jsonl")]
        m = _RUN_ID.match(run_id)
        if m is None:
            continue
        d, t = m.group(1), m.group(2)
        run = Run(run_id, f"{d[:4]}-{d[4:6]}-{d[6:]} {t[:2]}:{t[2:4]} UTC")
        try:
            got = read_file(folder / name, root_real=root_real, limit=RUN_BYTES,
                            rel=f"{RUNS_DIR}/{name}")
        except Exception:
            continue
        if got.data is None:
            continue
        for line in got.data.decode("utf-8", errors="replace").splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                run.skipped_records += 1
                continue
            if not isinstance(rec, dict) or rec.get("dry_run") is True:
                continue
            if rec.get("status") == "failed":
                run.failed += 1
                continue
            kind = KINDS.get(str(rec.get("action")))
            if rec.get("status") != "done" or kind is None or rec.get("changed") is False:
                continue
            try:
                target = normalize_relpath(str(rec.get("target") or ""))
            except Exception:
                run.skipped_records += 1
                continue
            if not target.startswith(digest) or not target.endswith(".md"):
                run.skipped_records += 1
                continue
            raw = rec.get("paths")
            sources = [p for p in raw if isinstance(p, str)][:5] if isinstance(raw, list) \
                else []
            run.changes.setdefault(kind, []).append(
                Change(target, _text(rec.get("name")), _text(rec.get("note")), sources))
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
