"""The command line: the only Typer module. Each command parses its arguments, calls one core
function, renders the result and returns an exit code (SPEC §13). Core modules are imported
inside the commands so that `remelink --help` and `remelink lint-links` stay fast, and only the
LLM path ever imports litellm.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from typer._click.exceptions import UsageError as ClickUsageError  # typer vendors click
from typer.core import TyperCommand

from remelink import __version__, command, nodesearch
from remelink.errors import EXIT_PROBLEMS


class _Command(TyperCommand):
    """A command whose argument errors (a bad flag value, a missing argument) still give a
    caller that asked for `--json` its one JSON document on stdout, before click's usage text
    on stderr and exit 2."""

    def make_context(self, info_name: str | None, args: list[str], parent: Any = None,
                     **extra: Any) -> Any:
        words = list(args)  # click consumes the list it parses
        words = words[: words.index("--")] if "--" in words else words
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except ClickUsageError as exc:
            if "--json" in words:
                from remelink.envelope import failure

                names = [info_name or self.name or ""]
                ctx = parent
                while ctx is not None and ctx.parent is not None:
                    names.insert(0, ctx.info_name or "")
                    ctx = ctx.parent
                typer.echo(failure(" ".join(names), 0.0, exc.format_message()))
            raise


app = typer.Typer(
    name="remelink",
    help="Long-term memory as a markdown vault: distil daily/ and resource/ notes into a linked "
         "digest/, and keep every wikilink and Sources section valid.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)
dream_app = typer.Typer(help="The dream pipeline: extract, integrate (auto-link), checkpoint, tag.",
                        short_help="Run the dream pipeline (dream run).",
                        no_args_is_help=True, rich_markup_mode=None)
index_app = typer.Typer(help="The node and passage indexes under .remelink/index/ (derived, safe "
                             "to delete).",
                        short_help="Rebuild the node and passage indexes (index rebuild).",
                        no_args_is_help=True, rich_markup_mode=None)
app.add_typer(dream_app, name="dream")
app.add_typer(index_app, name="index")

VaultOpt = Annotated[Path | None, typer.Option(
    "--vault", help="Vault root (default: nearest folder holding .remelink/, else the working "
                    "directory).", show_default=False)]
DebugOpt = Annotated[bool, typer.Option(
    "--debug", help="Show the traceback of an error (also REMELINK_DEBUG=1).")]
JsonOpt = Annotated[bool, typer.Option(
    "--json", help="Print one JSON document {ok, command, duration_ms, counts, data, errors} "
                   "on stdout.")]

F = TypeVar("F", bound=Callable[..., Any])

# The error edge and the helpers every command uses live in the Typer-free `command` module (so
# that `remelink node-search` can run without importing Typer); the names here are what the
# commands below call.
_CURRENT = command.CURRENT
_err = command.err
_elapsed = command.elapsed
_print_json = command.print_json
_open_vault = command.open_vault


def handles_errors(name: str) -> Callable[[F], F]:
    """Run the command `name` at the edge (`command.run_command`): errors become one line on
    stderr (and, with --json, a failed envelope on stdout) and an exit code; tracebacks only
    with --debug."""

    def decorate(func: F) -> F:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            code = command.run_command(name, lambda: func(*args, **kwargs),
                                       json_out=bool(kwargs.get("json_out")),
                                       debug=bool(kwargs.get("debug")),
                                       vault=kwargs.get("vault"), passthrough=(typer.Exit,))
            raise typer.Exit(code)

        return wrapper  # type: ignore[return-value]

    return decorate


def _version(value: bool) -> None:
    if value:
        typer.echo(f"remelink {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: Annotated[bool, typer.Option(
        "--version", callback=_version, is_eager=True,
        help="Show the version and exit.")] = False) -> None:
    """remelink: memory as a markdown vault."""


@app.command("init", cls=_Command,
             short_help="Create the vault folders and a commented configuration.")
@handles_errors("init")
def init_cmd(
    directory: Annotated[Path, typer.Argument(help="Folder to turn into a vault.")] = Path("."),
    json_out: JsonOpt = False,
    debug: DebugOpt = False,
) -> int:
    """Create daily/, resource/, digest/{procedure,personal,wiki}/, a commented
    .remelink/config.yaml and .remelink/.gitignore (existing files are never overwritten)."""
    from remelink.render import init_json
    from remelink.scaffold import init

    result = init(directory)
    if json_out:
        _print_json(init_json(result, _elapsed()))
    elif result.created or result.updated:
        for rel in result.created:
            typer.echo(f"created {rel}")
        for change in result.updated:
            typer.echo(f"updated {change}")
        if result.resolution == "obsidian":
            typer.echo(f"links are resolved the Obsidian way ({result.resolution_reason}): "
                       "links.resolution: obsidian")
    else:
        typer.echo(f"{result.root} is already a remelink vault; nothing to create")
    return 0


@app.command("lint-links", cls=_Command,
             short_help="Check every wikilink and every Sources section.")
@handles_errors("lint-links")
def lint_links_cmd(
    paths: Annotated[list[str] | None, typer.Argument(
        help="Markdown files to check (default: the whole vault), relative to the working "
             "directory as pre-commit passes them; each must lie inside the vault. Targets "
             "resolve against the whole vault.", show_default=False)] = None,
    vault: VaultOpt = None,
    json_out: JsonOpt = False,
    fmt: Annotated[str | None, typer.Option(
        "--format", help="text (default) or json: the bare list of problems, for tools that "
                         "want no envelope.", show_default=False)] = None,
    include_all: Annotated[bool, typer.Option(
        "--all",
        help="Also report links elsewhere that point at PATHS (renames, deletions).")] = False,
    staged: Annotated[bool, typer.Option(
        "--staged",
        help="In a git repository, check only what the commit changes: PATHS and the links "
             "to notes staged for deletion or renaming; never the whole vault.")] = False,
    resolution: Annotated[str | None, typer.Option(
        help="path or obsidian (overrides links.resolution).")] = None,
    debug: DebugOpt = False,
) -> int:
    """Validate every wikilink and every digest node's '## Sources' section (exit 1 on errors).

    Inside a git repository, with PATHS, the links that point at notes staged for deletion or
    renaming are checked too, so `git mv` and `git rm` are caught by the commit that breaks
    them."""
    from remelink.lint import run

    return run(paths or [], vault=str(vault) if vault else None, fmt=fmt, json_out=json_out,
               include_all=include_all, staged=staged, resolution=resolution,
               on_json=_print_json, on_warning=lambda w: _err(f"warning: {w}"))


@app.command("node-search", cls=_Command,
             short_help="Find digest nodes by name, description, tags and body.")
@handles_errors("node-search")
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
    return nodesearch.node_search(query, limit, bucket, json_out, vault)


@app.command("search", cls=_Command,
             short_help="Search every note by passage, with the links around each hit.")
@handles_errors("search")
def search_cmd(
    query: Annotated[str, typer.Argument(help="A question or plain words (never query syntax).")],
    limit: Annotated[int, typer.Option("--limit", min=1, max=50,
                                       help="How many notes (1..50), one passage each.")] = 5,
    since: Annotated[str | None, typer.Option(
        "--since", help="Only notes dated (in their path) on or after YYYY-MM-DD.",
        show_default=False)] = None,
    until: Annotated[str | None, typer.Option(
        "--until", help="Only notes dated (in their path) on or before YYYY-MM-DD.",
        show_default=False)] = None,
    folder: Annotated[str | None, typer.Option(
        "--in", help="Only daily, resource or digest notes.", show_default=False)] = None,
    no_links: Annotated[bool, typer.Option(
        "--no-links", help="Passages only, without link expansion.")] = False,
    json_out: JsonOpt = False,
    vault: VaultOpt = None,
    debug: DebugOpt = False,
) -> int:
    """Search every note (daily/, resource/, digest/) by passage, with each hit's links:
    what a digest node's Sources cite, and the notes it links to and from."""
    from remelink.errors import UsageError
    from remelink.render import memory_search_json
    from remelink.search import search
    from remelink.search.render import hits_text

    if not query.strip():
        raise UsageError("the query is empty", hint='give a question or words, e.g. '
                         'remelink search "how do I roll back ledger-api"')
    root, settings = _open_vault(vault)
    result = search(root, settings, query, limit=limit, since=since, until=until,
                    folder=folder, links=not no_links)
    for warning in result.warnings:
        _err(f"warning: {warning}")
    for notice in result.notices:
        _err(f"note: {notice}")
    if json_out:
        _print_json(memory_search_json(result, _elapsed()))
    elif not result.hits:
        _err(f"no note matches {query.strip()[:80]!r}")
    else:
        typer.echo(hits_text(result.hits), nl=False)
    return 0


@app.command("mcp", cls=_Command,
             short_help="Serve the vault's memory to an agent over MCP (stdio).")
@handles_errors("mcp")
def mcp_cmd(vault: VaultOpt = None, debug: DebugOpt = False) -> int:
    """Serve the vault's memory to an agent as an MCP server over stdio (tools: search,
    node_search, read, recent, remember). Needs the extra: pip install "remelink[mcp]"."""
    from remelink.mcp.server import run

    return run(vault)


@index_app.command("rebuild", cls=_Command,
                   short_help="Rebuild the node and passage indexes from the notes.")
@handles_errors("index rebuild")
def index_rebuild_cmd(vault: VaultOpt = None, json_out: JsonOpt = False,
                      debug: DebugOpt = False) -> int:
    """Rebuild .remelink/index/ (the node index of node-search and the passage index of
    search) from the notes (it is derived data, safe to delete)."""
    from remelink.index import INDEX_DIR, NodeIndex
    from remelink.render import rebuild_json
    from remelink.search import PassageIndex

    root, settings = _open_vault(vault)
    with NodeIndex(root, settings) as index:
        stats = index.rebuild()
    with PassageIndex(root, settings) as passages:
        pstats = passages.rebuild()
    for warning in (*stats.warnings, *pstats.warnings):
        _err(f"warning: {warning}")
    for notice in (*stats.notices, *pstats.notices):
        _err(f"note: {notice}")
    if json_out:
        _print_json(rebuild_json(stats, _elapsed(), passages=pstats))
        return 0
    skipped = f", {stats.skipped} skipped (see notes above)" if stats.skipped else ""
    typer.echo(f"rebuilt {INDEX_DIR}: {stats.added} digest node(s) indexed{skipped} "
               f"in {stats.seconds:.1f} s")
    pskipped = f", {pstats.skipped} skipped" if pstats.skipped else ""
    typer.echo(f"rebuilt the passage index: {pstats.added} note(s) searchable{pskipped} "
               f"in {pstats.seconds:.1f} s")
    return 0


@app.command("integrate", cls=_Command,
             short_help="Integrate memory units from a file, one node each.")
@handles_errors("integrate")
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
    from remelink.integrate import integrate
    from remelink.models import make_model
    from remelink.render import integrate_json
    from remelink.units import read_units

    root, settings = _open_vault(vault, overrides={"model": model} if model else None)
    units = read_units(units_file)
    engine = make_model(settings, vault=root)
    report = integrate(root, settings, units, engine, dry_run=dry_run, wait=wait)
    for notice in _notices(engine):
        _err(f"warning: {notice}")
    leftover = getattr(engine, "unused", 0)
    if json_out:
        _print_json(integrate_json(report, dry_run=dry_run, leftover=leftover))
    else:
        for r in report.results:
            if r.ok:
                typer.echo(f"{r.action:<11} {r.target}  {r.note}".rstrip())
                if dry_run and r.diff:
                    typer.echo(r.diff, nl=False)
            else:
                typer.echo(f"{'FAILED':<11} {r.unit.name}: {r.error}")
            # What the unit cost, failed or not (a failed unit often costs the most).
            tokens = f"{r.usage.prompt_tokens}+{r.usage.completion_tokens} tokens"
            sys.stderr.write(f"  {r.unit.name}: {r.steps} step(s), {tokens}, "
                             f"{r.seconds:.2f} s\n")
            for warning in r.warnings:
                sys.stderr.write(f"  warning: {warning}\n")
    if leftover:
        _err(f"error: the scripted model has {leftover} unused step(s)")
    return 1 if report.failed or leftover else 0


@dream_app.command("run", cls=_Command,
                   short_help="Distil changed raw notes into linked digest nodes.")
@handles_errors("dream run")
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
    from remelink.dream.run import DreamOptions, run_dream, set_up
    from remelink.models import make_model
    from remelink.progress import make_reporter
    from remelink.render import dream_json, dream_text

    reporter: Any = None
    overrides = {"model": model} if model else None
    try:
        root, settings = _open_vault(vault, overrides=overrides)
        setup = set_up(root, settings, dry_run=dry_run)
        if setup:  # the first run wrote the configuration: run with it
            root, settings = _open_vault(vault, overrides=overrides)
        options = DreamOptions(date=date, scan_days=scan_days, max_units=max_units, hint=hint,
                               dry_run=dry_run, wait=wait, retry_failed=retry_failed, today=today)
        engine = make_model(settings, vault=root)
        reporter = make_reporter(quiet or (json_out and not sys.stderr.isatty()))
        report = run_dream(root, settings, engine, options, reporter=reporter)
        report.warnings += _notices(engine)
        report.setup = setup
    finally:
        close = getattr(reporter, "close", None)
        if callable(close):
            close()
    seconds = _elapsed()
    leftover = getattr(engine, "unused", 0)
    if json_out:
        _print_json(dream_json(report, seconds, leftover=leftover))
    else:
        typer.echo(dream_text(report, seconds), nl=False)
    if leftover:
        _err(f"error: the scripted model has {leftover} unused step(s)")
    return 0 if report.ok and not leftover else EXIT_PROBLEMS


def _notices(engine: object) -> list[str]:
    """What the engine says the user must hear after a run (the local engine: an embedder
    that `embedder: auto` wanted but could not load)."""
    notices = getattr(engine, "notices", None)
    return [str(n) for n in notices()] if callable(notices) else []


@app.command("status", cls=_Command,
             short_help="Show what is pending, what failed and why, and the last runs.")
@handles_errors("status")
def status_cmd(vault: VaultOpt = None, json_out: JsonOpt = False, debug: DebugOpt = False) -> int:
    """Summarise the checkpoint: pending and failed units (with errors), invalid notes, last
    runs. Exit 1 when a unit failed or a note is invalid."""
    from remelink.dream.run import status
    from remelink.render import status_json, status_text

    root, settings = _open_vault(vault)
    report = status(root, settings)
    if json_out:
        _print_json(status_json(report, _elapsed()))
    else:
        typer.echo(status_text(report), nl=False)
    return 0 if report.ok else EXIT_PROBLEMS


def main(argv: list[str] | None = None) -> None:
    """The Typer app (the console entry point is `remelink.edge.main`, which sends a plain
    `node-search` past Typer and everything else here)."""
    app(args=argv)


if __name__ == "__main__":  # pragma: no cover
    main()
