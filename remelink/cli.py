"""The command line: the only Typer module. Each command parses its arguments, calls one core
function, renders the result and returns an exit code (SPEC §13). Core modules are imported
inside the commands so that `remelink --help` and `remelink lint-links` stay fast, and only the
LLM path ever imports litellm.
"""

from __future__ import annotations

import functools
import os
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from remelink import __version__
from remelink.errors import EXIT_INTERRUPTED, EXIT_PROBLEMS, RemelinkError

app = typer.Typer(
    name="remelink",
    help="Long-term memory as a markdown vault: distil daily/ and resource/ notes into a linked "
         "digest/, and keep every wikilink and Sources section valid.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)
dream_app = typer.Typer(help="The dream pipeline: extract, integrate (auto-link), checkpoint.",
                        no_args_is_help=True, rich_markup_mode=None)
index_app = typer.Typer(help="The node index under .remelink/index/ (derived, safe to delete).",
                        no_args_is_help=True, rich_markup_mode=None)
app.add_typer(dream_app, name="dream")
app.add_typer(index_app, name="index")

VaultOpt = Annotated[Path | None, typer.Option(
    "--vault", help="Vault root (default: nearest folder holding .remelink/, else the working "
                    "directory).", show_default=False)]
DebugOpt = Annotated[bool, typer.Option("--debug", help="Show tracebacks.", hidden=True)]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")]

F = TypeVar("F", bound=Callable[..., Any])


def _err(message: str) -> None:
    sys.stderr.write(f"remelink: {message}\n")


def _crash_log(exc: BaseException) -> Path | None:
    """Write the traceback of an unexpected error where the user can attach it to a report."""
    from remelink.vault.paths import find_vault_root

    text = "".join(traceback.format_exception(exc))
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for folder in (find_vault_root() / ".remelink", Path(os.environ.get("TMPDIR", "/tmp"))):
        try:
            if folder.is_dir():
                path = folder / f"crash-{stamp}-{os.getpid()}.log"
                path.write_text(f"remelink {__version__}\n{text}", encoding="utf-8")
                return path
        except OSError:
            continue
    return None


def handles_errors(func: F) -> F:
    """Translate errors into one line on stderr and an exit code; tracebacks only with --debug."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        debug = bool(kwargs.get("debug")) or os.environ.get("REMELINK_DEBUG") == "1"
        try:
            code = func(*args, **kwargs)
        except typer.Exit:
            raise
        except RemelinkError as exc:
            if debug:
                traceback.print_exc()
            _err(f"error: {exc}")
            raise typer.Exit(exc.exit_code) from None
        except KeyboardInterrupt:
            _err("interrupted")
            raise typer.Exit(EXIT_INTERRUPTED) from None
        except Exception as exc:
            if debug:
                raise
            log = _crash_log(exc)
            where = f"; details in {log}" if log else ""
            _err(f"unexpected error: {type(exc).__name__}: {exc}{where} (rerun with --debug)")
            raise typer.Exit(EXIT_PROBLEMS) from None
        raise typer.Exit(code or 0)

    return wrapper  # type: ignore[return-value]


def _version(value: bool) -> None:
    if value:
        typer.echo(f"remelink {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: Annotated[bool, typer.Option(
        "--version", callback=_version, is_eager=True,
        help="Show the version and exit.")] = False) -> None:
    """remelink: memory as a markdown vault."""


@app.command("init")
@handles_errors
def init_cmd(
    directory: Annotated[Path, typer.Argument(help="Folder to turn into a vault.")] = Path("."),
    debug: DebugOpt = False,
) -> int:
    """Create daily/, resource/, digest/{procedure,personal,wiki}/ and a commented config."""
    from remelink.scaffold import init

    result = init(directory)
    if result.created:
        for rel in result.created:
            typer.echo(f"created {rel}")
    else:
        typer.echo(f"{result.root} is already a remelink vault; nothing to create")
    return 0


@app.command("lint-links")
@handles_errors
def lint_links_cmd(
    paths: Annotated[list[str] | None, typer.Argument(
        help="Markdown files to check (default: the whole vault). Targets resolve against the "
             "whole vault.", show_default=False)] = None,
    vault: VaultOpt = None,
    fmt: Annotated[str, typer.Option("--format", help="text or json.")] = "text",
    include_all: Annotated[bool, typer.Option(
        "--all",
        help="Also report links elsewhere that point at PATHS (renames, deletions).")] = False,
    resolution: Annotated[str | None, typer.Option(
        help="path or obsidian (overrides links.resolution).")] = None,
    debug: DebugOpt = False,
) -> int:
    """Validate every wikilink and every digest node's '## Sources' section (exit 1 on errors)."""
    from remelink.errors import UsageError
    from remelink.lint import run

    if fmt not in ("text", "json"):
        raise UsageError(f"--format must be text or json, got {fmt!r}")
    if resolution not in (None, "path", "obsidian"):
        raise UsageError(f"--resolution must be path or obsidian, got {resolution!r}")
    return run(paths or [], vault=str(vault) if vault else None, fmt=fmt,
               include_all=include_all, resolution=resolution)


@app.command("node-search")
@handles_errors
def node_search_cmd(
    query: Annotated[str, typer.Argument(help="Plain words to look for (never query syntax).")],
    limit: Annotated[int, typer.Option("--limit", min=1, max=100,
                                       help="How many hits (1..100).")] = 20,
    bucket: Annotated[str | None, typer.Option(
        "--bucket", help="Only procedure, personal or wiki nodes.", show_default=False)] = None,
    json_out: JsonOpt = False,
    vault: VaultOpt = None,
    debug: DebugOpt = False,
) -> int:
    """Find digest nodes by name, description, tags and body (refreshes the index first)."""
    from remelink.config import load_settings
    from remelink.errors import UsageError
    from remelink.index import NodeIndex
    from remelink.index import render as rd
    from remelink.vault.paths import BUCKETS, find_vault_root

    if not query.strip():
        raise UsageError("the query is empty", hint='give the words to look for, e.g. '
                         'remelink node-search "retry budget"')
    if bucket is not None and bucket not in BUCKETS:
        raise UsageError(f"--bucket must be one of {', '.join(BUCKETS)}, got {bucket!r}")
    root = find_vault_root(vault)
    with NodeIndex(root, load_settings(root)) as index:
        for notice in index.refresh().notices:
            _err(f"note: {notice}")
        hits = index.search(query, limit=limit, bucket=bucket, refresh=False)
        for notice in index.notices:
            _err(f"note: {notice}")
    if json_out:
        typer.echo(rd.hits_json(hits))
    elif not hits:
        _err(f"no digest node matches {query.strip()[:80]!r}")
    elif rd.is_terminal(sys.stdout):
        rd.print_table(hits, sys.stdout)
    else:
        sys.stdout.write(rd.hits_plain(hits))
    return 0


@index_app.command("rebuild")
@handles_errors
def index_rebuild_cmd(vault: VaultOpt = None, debug: DebugOpt = False) -> int:
    """Rebuild .remelink/index/ from every digest node (it is derived data, safe to delete)."""
    from remelink.config import load_settings
    from remelink.index import INDEX_DIR, NodeIndex
    from remelink.vault.paths import find_vault_root

    root = find_vault_root(vault)
    with NodeIndex(root, load_settings(root)) as index:
        stats = index.rebuild()
    for notice in stats.notices:
        _err(f"note: {notice}")
    skipped = f", {stats.skipped} skipped (see notes above)" if stats.skipped else ""
    typer.echo(f"rebuilt {INDEX_DIR}: {stats.added} digest node(s) indexed{skipped} "
               f"in {stats.seconds:.1f} s")
    return 0


@app.command("integrate")
@handles_errors
def integrate_cmd(
    units_file: Annotated[str, typer.Argument(
        metavar="UNITS", help="JSON or YAML list of units {name, bucket, summary, paths}, or - "
                              "for stdin.")],
    vault: VaultOpt = None,
    model: Annotated[str | None, typer.Option(
        help="local (default), scripted:FILE, or any litellm model id.")] = None,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Print the unified diff of each change; write nothing.")] = False,
    json_out: JsonOpt = False,
    wait: Annotated[float, typer.Option(help="Seconds to wait for the vault lock.")] = 0.0,
    debug: DebugOpt = False,
) -> int:
    """Integrate memory units into the digest: one node created or updated per unit."""
    from remelink.config import load_settings
    from remelink.errors import UsageError
    from remelink.integrate import integrate
    from remelink.models import make_model
    from remelink.units import parse_units_document
    from remelink.vault.paths import find_vault_root

    root = find_vault_root(vault)
    settings = load_settings(root, overrides={"model": model} if model else None)
    if units_file == "-":
        text, source = sys.stdin.read(), "stdin"
    else:
        try:
            text, source = Path(units_file).read_text(encoding="utf-8"), units_file
        except OSError as exc:
            raise UsageError(f"cannot read units file: {exc.strerror or exc}",
                             path=units_file) from None
    units = parse_units_document(text, source=source)
    engine = make_model(settings)
    report = integrate(root, settings, units, engine, dry_run=dry_run, wait=wait)
    leftover = getattr(engine, "unused", 0)
    if json_out:
        import json

        payload = {
            "ok": report.failed == 0 and not leftover,
            "command": "integrate",
            "duration_ms": round(report.seconds * 1000),
            "counts": {"units": len(report.results), "failed": report.failed,
                       "actions": _action_counts(report.results)},
            "data": [_unit_json(r, include_diff=dry_run) for r in report.results],
            "errors": [f"{r.unit.name}: {r.error}" for r in report.results if not r.ok],
        }
        typer.echo(json.dumps(payload, ensure_ascii=False, indent=2))
    else:
        for r in report.results:
            if r.ok:
                typer.echo(f"{r.action:<11} {r.target}  {r.note}".rstrip())
                tokens = f"{r.usage.prompt_tokens}+{r.usage.completion_tokens} tokens"
                sys.stderr.write(f"  {r.unit.name}: {r.steps} step(s), {tokens}, "
                                 f"{r.seconds:.2f} s\n")
                if dry_run and r.diff:
                    typer.echo(r.diff, nl=False)
            else:
                typer.echo(f"{'FAILED':<11} {r.unit.name}: {r.error}")
            for warning in r.warnings:
                sys.stderr.write(f"  warning: {warning}\n")
    if leftover:
        _err(f"error: the scripted model has {leftover} unused step(s)")
    return 1 if report.failed or leftover else 0


@dream_app.command("run")
@handles_errors
def dream_run_cmd(
    vault: VaultOpt = None,
    date: Annotated[str | None, typer.Option(
        help="Window end date YYYY-MM-DD (with --scan-days).")] = None,
    scan_days: Annotated[int | None, typer.Option(
        "--scan-days",
        help="Days in the window ending at --date (default 1 when --date is given).")] = None,
    max_units: Annotated[int | None, typer.Option(
        "--max-units",
        help="Units per extraction answer; a model with more is asked to continue.")] = None,
    hint: Annotated[str | None, typer.Option(help="A hint passed to extraction.")] = None,
    model: Annotated[str | None, typer.Option(
        help="local (default), scripted:FILE, or any litellm model id.")] = None,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Do everything but write: print the diff of each node instead.")] = False,
    json_out: JsonOpt = False,
    wait: Annotated[float, typer.Option(
        help="Seconds to wait for another run's vault lock.")] = 0.0,
    retry_failed: Annotated[bool, typer.Option(
        "--retry-failed", help="Retry units that used up their attempts.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress output.")] = False,
    today: Annotated[str | None, typer.Option(
        help="Run as if on this date (YYYY-MM-DD): reproducible demos and tests.",
        hidden=True)] = None,
    debug: DebugOpt = False,
) -> int:
    """Distil changed daily/ and resource/ notes into the digest, auto-linking as it writes.

    Progress goes to stderr (bars on a terminal, plain lines under cron); stdout carries only
    the summary, or with --json one JSON document. Exit 0 when all went well, 1 when a note or
    a unit failed, 2 on a usage or configuration error, 3 when the vault is busy."""
    from remelink.config import load_settings
    from remelink.dream.run import DreamOptions, run_dream
    from remelink.models import make_model
    from remelink.progress import make_reporter
    from remelink.render import dream_json, dream_text, envelope
    from remelink.vault.paths import find_vault_root

    started = time.perf_counter()
    reporter: Any = None
    try:
        root = find_vault_root(vault)
        settings = load_settings(root, overrides={"model": model} if model else None)
        options = DreamOptions(date=date, scan_days=scan_days, max_units=max_units, hint=hint,
                               dry_run=dry_run, wait=wait, retry_failed=retry_failed, today=today)
        engine = make_model(settings)
        reporter = make_reporter(quiet or (json_out and not sys.stderr.isatty()))
        report = run_dream(root, settings, engine, options, reporter=reporter)
    except RemelinkError as exc:
        if json_out:  # the caller parses stdout: it still gets one document
            typer.echo(envelope("dream run", ok=False, seconds=time.perf_counter() - started,
                                counts={}, data=None, errors=[" ".join(str(exc).split())]))
        raise
    finally:
        close = getattr(reporter, "close", None)
        if callable(close):
            close()
    seconds = time.perf_counter() - started
    if json_out:
        typer.echo(dream_json(report, seconds))
    else:
        typer.echo(dream_text(report, seconds), nl=False)
    leftover = getattr(engine, "unused", 0)
    if leftover:
        _err(f"error: the scripted model has {leftover} unused step(s)")
    return 0 if report.ok and not leftover else EXIT_PROBLEMS


@app.command("status")
@handles_errors
def status_cmd(vault: VaultOpt = None, json_out: JsonOpt = False, debug: DebugOpt = False) -> int:
    """Summarise the checkpoint: pending and failed units (with errors), invalid notes, last
    runs. Exit 1 when a unit failed or a note is invalid."""
    from remelink.config import load_settings
    from remelink.dream.run import status
    from remelink.render import status_json, status_text
    from remelink.vault.paths import find_vault_root

    root = find_vault_root(vault)
    report = status(root, load_settings(root))
    typer.echo(status_json(report) if json_out else status_text(report), nl=json_out)
    return 0 if report.ok else EXIT_PROBLEMS


def _action_counts(results: Sequence[object]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for r in results:
        action = getattr(r, "action", None)
        if getattr(r, "ok", False) and action:
            counts[action] = counts.get(action, 0) + 1
    return counts


def _unit_json(r: object, *, include_diff: bool) -> dict[str, object]:
    from remelink.integrate import UnitResult

    assert isinstance(r, UnitResult)
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


def main() -> None:
    """Console entry point."""
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
