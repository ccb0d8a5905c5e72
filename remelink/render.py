"""Rendering of run and status reports for the CLI: the human summary and the `--json`
envelope `{ok, command, duration_ms, counts, data, errors}` (SPEC §9.4). Pure functions."""

from __future__ import annotations

import json
from typing import Any

from remelink.dream.context import RunReport
from remelink.dream.run import StatusReport


def dream_json(report: RunReport, seconds: float) -> str:
    errors = list(report.errors)
    errors += [f"{p}: {i.get('error')}" for p, i in sorted(report.inputs.items())
               if i.get("status") in ("invalid", "failed") and i.get("error")]
    errors += [f"unit {u.name!r}: {u.error}" for u in report.units if u.status == "failed"]
    data: dict[str, Any] = {
        "run_id": report.run_id, "date": report.date, "window": report.window,
        "dry_run": report.dry_run,
        "inputs": {p: report.inputs[p] for p in sorted(report.inputs)},
        "units": [u.to_json() for u in report.units],
        "created": report.created, "updated": report.updated,
        "checkpointed": report.checkpointed, "tags": report.tags,
        "topics": {"path": report.topics_path, "titles": report.topics},
        "warnings": report.warnings,
    }
    if report.dry_run:
        data["diffs"] = report.diffs
    envelope = {"ok": report.ok, "command": "dream run", "duration_ms": round(seconds * 1000),
                "counts": report.counts(), "data": data, "errors": errors}
    return json.dumps(envelope, ensure_ascii=False, indent=2)


def dream_text(report: RunReport, seconds: float) -> str:
    c = report.counts()
    lines = []
    head = "dream run (dry run: nothing written)" if report.dry_run else "dream run"
    window = f" for {report.window[0]}..{report.window[-1]}" if report.window else ""
    lines.append(f"{head}{window}: {c['files_scanned']} note(s) scanned, {c['files_changed']} "
                 f"changed, {c['files_unchanged']} unchanged, {c['inputs_invalid']} invalid")
    actions = ", ".join(f"{k} {v}" for k, v in sorted(c["actions"].items()))
    lines.append(f"units: {c['units_extracted']} extracted, {c['units_integrated']} integrated"
                 f"{f' ({actions})' if actions else ''}, {c['units_failed']} failed")
    lines.append(f"nodes: {c['nodes_created']} created, {c['nodes_updated']} updated; "
                 f"{c['inputs_checkpointed']} input(s) checkpointed"
                 + (f"; tokens {c['tokens_in']} in / {c['tokens_out']} out"
                    if c["tokens_in"] or c["tokens_out"] else "")
                 + f" ({seconds:.1f} s)")
    for u in report.units:
        if u.status == "done":
            lines.append(f"  {u.action:<11} {u.target}")
    if report.tags:
        tagged = sum(1 for t in report.tags.values() if t)
        lines.append(f"tags: {tagged} node(s) tagged")
    if report.topics_path:
        lines.append(f"topics: {', '.join(report.topics) or '(none)'} -> {report.topics_path}")
    problems = [f"{p}: {i.get('error')}" for p, i in sorted(report.inputs.items())
                if i.get("status") in ("invalid", "failed") and i.get("error")]
    problems += [f"unit {u.name!r} failed (attempt {u.attempts}): {u.error}"
                 for u in report.units if u.status == "failed"]
    problems += report.errors
    if problems:
        lines.append("problems:")
        lines += [f"  {p}" for p in problems]
    if report.warnings:
        lines.append("warnings:")
        lines += [f"  {w}" for w in report.warnings[:20]]
        if len(report.warnings) > 20:
            lines.append(f"  ... and {len(report.warnings) - 20} more (see --json)")
    text = "\n".join(lines) + "\n"
    if report.dry_run and report.diffs:
        text += "".join(report.diffs[p] for p in sorted(report.diffs))
    return text


def status_json(report: StatusReport) -> str:
    return json.dumps({"ok": not report.failed and not report.invalid, "command": "status",
                       "counts": {"inputs": report.inputs, "units": report.units,
                                  "pending_tags": report.pending_tags},
                       "data": {"failed": report.failed, "invalid": report.invalid,
                                "pending": report.pending, "runs": report.runs},
                       "errors": [f"{f['name']}: {f['error']}" for f in report.failed]},
                      ensure_ascii=False, indent=2)


def status_text(report: StatusReport) -> str:
    def fmt(counts: dict[str, int]) -> str:
        return ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) or "none"

    lines = [f"inputs: {fmt(report.inputs)}", f"units: {fmt(report.units)}"]
    if report.pending:
        lines.append(f"pending ({len(report.pending)}):")
        lines += [f"  {p['name']} <- {', '.join(p['paths'])}" for p in report.pending[:20]]
    if report.failed:
        lines.append(f"failed ({len(report.failed)}):")
        for f in report.failed:
            gave_up = " (gave up; rerun with --retry-failed)" if f["gave_up"] else ""
            lines.append(f"  {f['name']}: attempt {f['attempts']}{gave_up}: {f['error']}")
    if report.invalid:
        lines.append(f"invalid notes ({len(report.invalid)}):")
        lines += [f"  {i['path']}: {i['error']}" for i in report.invalid]
    if report.runs:
        lines.append("last runs:")
        for r in report.runs:
            counts = r.get("counts", {})
            lines.append(f"  {r.get('id')}: {'ok' if r.get('ok') else 'problems'}, "
                         f"{counts.get('units_integrated', 0)} integrated, "
                         f"{counts.get('units_failed', 0)} failed")
    return "\n".join(lines) + "\n"
