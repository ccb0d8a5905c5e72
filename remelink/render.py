"""Rendering of command results for the CLI: the human summary and the `--json` envelope
`{ok, command, duration_ms, counts, data, errors}` (SPEC §9.4, `remelink.envelope`). Pure
functions; the report types are imported for annotations only, so rendering a search result
loads nothing of the dream pipeline."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from remelink.envelope import envelope

if TYPE_CHECKING:
    from remelink.dream.context import RunReport
    from remelink.dream.run import StatusReport
    from remelink.index.core import Hit
    from remelink.index.store import RefreshStats
    from remelink.integrate import IntegrateReport, UnitResult
    from remelink.scaffold import InitResult
    from remelink.search.api import SearchResult

__all__ = ["dream_json", "dream_text", "envelope", "init_json", "integrate_json",
           "memory_search_json", "rebuild_json", "search_json", "status_json", "status_text"]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _problems(report: RunReport) -> list[str]:
    """One line per problem: invalid or failed input, failed unit, run-level error."""
    lines = [f"{p}: {i.get('error')}" for p, i in sorted(report.inputs.items())
             if i.get("status") in ("invalid", "failed") and i.get("error")]
    lines += [f"unit {u.name!r} failed (attempt {u.attempts}): {u.error}"
              for u in report.units if u.status == "failed"]
    lines += [f"unit {u.name!r} skipped: {u.error}" for u in report.units if u.gave_up]
    # Units the step did not attempt (the provider is down, the disk refused a write): one
    # line per reason, not one per unit.
    reasons: dict[str, int] = {}
    for u in report.units:
        if u.status == "skipped" and not u.gave_up:
            reasons[u.error or "not attempted"] = reasons.get(u.error or "not attempted", 0) + 1
    lines += [f"{_plural(n, 'unit')} {why}" for why, n in reasons.items()]
    lines += report.errors
    return lines


def dream_json(report: RunReport, seconds: float, *, leftover: int = 0) -> str:
    data: dict[str, Any] = {
        "run_id": report.run_id, "date": report.date, "window": report.window,
        "dry_run": report.dry_run,
        "inputs": {p: report.inputs[p] for p in sorted(report.inputs)},
        "units": [u.to_json() for u in report.units],
        "created": report.created, "updated": report.updated,
        "checkpointed": report.checkpointed, "tags": report.tags,
        "topics": {"path": report.topics_path, "titles": report.topics},
        "recovered": report.recovered, "warnings": report.warnings,
        "unstated": report.unstated, "renamed": report.renamed, "deleted": report.deleted,
        "setup": report.setup, "budget": report.budget,
    }
    if report.dry_run:
        data["diffs"] = report.diffs
    errors = _problems(report)
    if leftover:  # a scripted model with steps left over: the run did not go as scripted
        errors.append(f"the scripted model has {leftover} unused step(s)")
    return envelope("dream run", ok=report.ok and not leftover, seconds=seconds,
                    counts=report.counts(), data=data, errors=errors)


def dream_text(report: RunReport, seconds: float) -> str:
    c = report.counts()
    lines = []
    if report.setup:
        lines.append("set up the vault as `remelink init` does (first run): created "
                     + ", ".join(report.setup))
    head = "dream run (dry run: nothing written)" if report.dry_run else "dream run"
    window = f" for {report.window[0]}..{report.window[-1]}" if report.window else ""
    lines.append(f"{head}{window}: {_plural(c['files_scanned'], 'note')} scanned, "
                 f"{c['files_changed']} changed, {c['files_unchanged']} unchanged, "
                 f"{c['inputs_invalid']} invalid")
    if c["inputs_judged"] or c["inputs_unjudged"]:
        nothing = c["inputs_nothing"]
        unjudged = f"; {c['inputs_unjudged']} without a verdict (pending, retried next run)" \
            if c["inputs_unjudged"] else ""
        lines.append(f"verdicts: {_plural(c['inputs_judged'], 'note')} judged "
                     f"({c['inputs_judged'] - nothing} with units, {nothing} nothing worth "
                     f"keeping){unjudged}")
    actions = ", ".join(f"{k} {v}" for k, v in sorted(c["actions"].items()))
    skipped = f", {c['units_skipped']} skipped" if c["units_skipped"] else ""
    revised = f" ({c['units_revised']} revising edited notes)" if c["units_revised"] else ""
    lines.append(f"units: {c['units_extracted']} extracted{revised}, "
                 f"{c['units_integrated']} integrated"
                 f"{f' ({actions})' if actions else ''}, {c['units_failed']} failed{skipped}")
    lines.append(f"nodes: {c['nodes_created']} created, {c['nodes_updated']} updated; "
                 f"{_plural(c['inputs_checkpointed'], 'input')} checkpointed"
                 + (f"; tokens {c['tokens_in']} in / {c['tokens_out']} out"
                    + (f" ({c['tokens_in_failed']} in on failed units)"
                       if c.get("tokens_in_failed") else "")
                    if c["tokens_in"] or c["tokens_out"] else "")
                 + f" ({seconds:.1f} s)")
    for u in report.units:
        if u.status == "done":
            lines.append(f"  {u.action:<11} {u.target}")
    if report.tags:
        tagged = sum(1 for t in report.tags.values() if t)
        lines.append(f"tags: {_plural(tagged, 'node')} tagged")
    if report.topics_path:
        lines.append(f"topics: {', '.join(report.topics) or '(none)'} -> {report.topics_path}")
    nothing = [(p, i.get("reason")) for p, i in sorted(report.inputs.items())
               if i.get("verdict") == "nothing"]
    if nothing:
        lines.append("nothing worth keeping:")
        lines += [f"  {p}: {reason}" for p, reason in nothing[:10]]
        if len(nothing) > 10:
            lines.append(f"  ... and {len(nothing) - 10} more (see `remelink status --json`)")
    if report.unstated:
        lines.append("no longer stated by their edited notes (the digest keeps them):")
        lines += [f"  {u['path']}: {u['name']!r} in {u['target']}" for u in report.unstated]
    lines += moves_text(report.renamed, report.deleted)
    if report.recovered:
        lines.append("recovered from an interrupted run:")
        lines += [f"  {r}" for r in report.recovered]
    problems = _problems(report)
    if problems:
        lines.append("problems:")
        lines += [f"  {p}" for p in problems]
    gave_up = [u for u in report.units if u.gave_up]
    notes = [f"{_plural(len(gave_up), 'unit')} out of attempts skipped; see `remelink status`, "
             "rerun with --retry-failed"] if gave_up else []
    warnings = notes + report.warnings
    if warnings:
        lines.append("warnings:")
        lines += [f"  {w}" for w in warnings[:20]]
        if len(warnings) > 20:
            lines.append(f"  ... and {len(warnings) - 20} more (see --json)")
    text = "\n".join(lines) + "\n"
    if report.dry_run and report.diffs:
        text += "".join(report.diffs[p] for p in sorted(report.diffs))
    return text


def moves_text(renamed: Sequence[dict[str, Any]], deleted: Sequence[dict[str, Any]],
               *, indent: str = "  ") -> list[str]:
    """Processed notes that are gone (SPEC §9.3): what became of them and of their citations."""
    lines = []
    if renamed:
        lines.append("renamed (the citations follow the note):")
        for r in renamed:
            how = "" if r.get("similarity", 1.0) >= 1.0 else \
                f", edited ({r['similarity']:.0%} of its text kept): extracted as an edit"
            cited = f"{_plural(len(r['nodes']), 'node')} relinked" if r["nodes"] else \
                "cited by no node"
            lines.append(f"{indent}{r['from']} -> {r['to']} ({cited}{how})")
    if deleted:
        lines.append("deleted (the citations stay, marked as history):")
        for d in deleted:
            cited = f"cited by {', '.join(d['nodes'])}" if d["nodes"] else "cited by no node"
            lines.append(f"{indent}{d['path']}: {cited}")
    return lines


def status_json(report: StatusReport, seconds: float = 0.0) -> str:
    return envelope(
        "status", ok=report.ok, seconds=seconds,
        counts={"inputs": report.inputs, "units": report.units, "verdicts": report.verdicts,
                "pending_tags": report.pending_tags},
        data={"checkpoint": report.exists, "failed": report.failed, "invalid": report.invalid,
              "unextracted": report.unextracted, "pending": report.pending,
              "notes": report.notes, "gone": report.gone, "runs": report.runs},
        errors=[f"unit {f['name']!r}: {f['error']}" for f in report.failed]
        + [f"{i['path']}: {i['error']}" for i in report.invalid]
        + [f"{i['path']}: {i['error']}" for i in report.unextracted])


def status_text(report: StatusReport) -> str:
    if not report.exists:
        return "no checkpoint yet: `remelink dream run` has not run in this vault\n"

    def fmt(counts: dict[str, int]) -> str:
        return ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) or "none"

    v = report.verdicts
    lines = [f"inputs: {fmt(report.inputs)}", f"units: {fmt(report.units)}",
             f"verdicts: {v.get('units', 0)} with units, {v.get('nothing', 0)} nothing worth "
             f"keeping, {v.get('none', 0)} without a verdict"]
    nothing = [(p, n.get("reason")) for p, n in report.notes.items()
               if n.get("verdict") == "nothing"]
    if nothing:
        lines.append(f"nothing worth keeping ({len(nothing)}):")
        lines += [f"  {p}: {reason}" for p, reason in nothing[:20]]
        if len(nothing) > 20:
            lines.append(f"  ... and {len(nothing) - 20} more (see --json)")
    waiting = [p for p, n in report.notes.items()
               if n.get("verdict") is None and n.get("status") == "pending"]
    if waiting:
        lines.append(f"notes waiting for a verdict ({len(waiting)}): the next run extracts them")
        lines += [f"  {p}" for p in waiting[:20]]
        if len(waiting) > 20:
            lines.append(f"  ... and {len(waiting) - 20} more (see --json)")
    if report.pending_tags:
        lines.append(f"nodes waiting for tags: {report.pending_tags}")
    if report.pending:
        lines.append(f"pending ({len(report.pending)}):")
        lines += [f"  {p['name']} <- {', '.join(p['paths'])}" for p in report.pending[:20]]
        if len(report.pending) > 20:
            lines.append(f"  ... and {len(report.pending) - 20} more (see --json)")
    if report.failed:
        lines.append(f"failed ({len(report.failed)}):")
        for f in report.failed:
            gave_up = " (gave up; rerun with --retry-failed)" if f["gave_up"] else ""
            lines.append(f"  {f['name']}: attempt {f['attempts']} of {f['max_attempts']}"
                         f"{gave_up}: {f['error']}")
    if report.unextracted:
        lines.append(f"notes whose extraction failed ({len(report.unextracted)}):")
        for i in report.unextracted:
            gave_up = " (gave up; edit the note or rerun with --retry-failed)" \
                if i["gave_up"] else ""
            lines.append(f"  {i['path']}: attempt {i['attempts']} of {i['max_attempts']}"
                         f"{gave_up}: {i['error']}")
    if report.invalid:
        lines.append(f"invalid notes ({len(report.invalid)}):")
        lines += [f"  {i['path']}: {i['error']}" for i in report.invalid]
    if report.gone:
        lines.append(f"gone since they were processed ({len(report.gone)}): the next run finds "
                     "them renamed (the citations follow) or deleted (the citations are marked)")
        for g in report.gone:
            cited = f"cited by {', '.join(g['nodes'])}" if g["nodes"] else "cited by no node"
            lines.append(f"  {g['path']}: {cited}")
    if report.runs:
        lines.append("last runs:")
        for r in report.runs:
            counts = r.get("counts") or {}
            if r.get("interrupted"):
                state = "interrupted"
            elif not r.get("finished"):
                state = "running"
            else:
                state = "ok" if r.get("ok") else "problems"
            tokens = ""
            if counts.get("tokens_in") or counts.get("tokens_out"):
                failed = counts.get("tokens_in_failed") or 0
                tokens = (f", tokens {counts.get('tokens_in', 0)} in"
                          + (f" ({failed} on failed units)" if failed else "")
                          + f" / {counts.get('tokens_out', 0)} out")
            lines.append(f"  {r.get('id')}: {state}, {counts.get('units_integrated', 0)} "
                         f"integrated, {counts.get('units_failed', 0)} failed{tokens}")
            lines += moves_text(r.get("renamed") or [], r.get("deleted") or [],
                                indent="      ")
    return "\n".join(lines) + "\n"


def _action_counts(results: Sequence[UnitResult]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for r in results:
        if r.ok and r.action:
            counts[r.action] = counts.get(r.action, 0) + 1
    return counts


def _unit_json(r: UnitResult, *, include_diff: bool) -> dict[str, object]:
    data: dict[str, object] = {
        "unit": r.unit.name, "id": r.unit.id, "status": r.status, "action": r.action,
        "target": r.target, "note": r.note, "error": r.error,
        "tokens": {"prompt": r.usage.prompt_tokens, "completion": r.usage.completion_tokens},
        "steps": r.steps, "repairs": r.repairs, "changed": r.changed,
        "warnings": list(r.warnings), "duration_ms": round(r.seconds * 1000),
    }
    if include_diff:
        data["diff"] = r.diff
    return data


def integrate_json(report: IntegrateReport, *, dry_run: bool, leftover: int) -> str:
    errors = [f"{r.unit.name}: {r.error}" for r in report.results if not r.ok]
    if leftover:
        errors.append(f"the scripted model has {leftover} unused step(s)")
    return envelope(
        "integrate", ok=report.failed == 0 and not leftover, seconds=report.seconds,
        counts={"units": len(report.results), "failed": report.failed,
                "actions": _action_counts(report.results),
                "tokens_in": sum(r.usage.prompt_tokens for r in report.results),
                "tokens_out": sum(r.usage.completion_tokens for r in report.results)},
        data=[_unit_json(r, include_diff=dry_run) for r in report.results], errors=errors)


def search_json(hits: Sequence[Hit], seconds: float) -> str:
    """node-search: the hits under `data`, best first (index notices go to stderr)."""
    return envelope("node-search", ok=True, seconds=seconds, counts={"hits": len(hits)},
                    data=[h.to_json() for h in hits], errors=[])


def init_json(result: InitResult, seconds: float) -> str:
    return envelope("init", ok=True, seconds=seconds, counts={"created": len(result.created)},
                    data={"root": str(result.root), "created": list(result.created),
                          "updated": list(result.updated), "resolution": result.resolution},
                    errors=[])


def rebuild_json(stats: RefreshStats, seconds: float,
                 passages: RefreshStats | None = None) -> str:
    counts: dict[str, int] = {"indexed": stats.added, "skipped": stats.skipped}
    notices = list(stats.notices)
    if passages is not None:
        counts |= {"notes_indexed": passages.added, "notes_skipped": passages.skipped}
        notices += passages.notices
    return envelope("index rebuild", ok=True, seconds=seconds, counts=counts,
                    data={"notices": notices}, errors=[])


def memory_search_json(result: SearchResult, seconds: float) -> str:
    """search: the query and its hits under `data` (index notices go to stderr)."""
    return envelope("search", ok=True, seconds=seconds, counts={"hits": len(result.hits)},
                    data=result.to_json(), errors=[])
