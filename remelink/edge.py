"""The command line's edge without Typer: the console entry point, the error edge every command
runs at (SPEC §13: one line, a JSON envelope when asked, an exit code), and `node-search`.

`remelink node-search` is what scripts and editors call in a loop, so its start-up counts: Typer,
click and pydantic cost more to import (about 80 ms here) than the search itself. `main` runs a
`node-search` whose arguments are plain (a query and the documented options, each once) here,
through the same function the Typer command calls; anything else (`--help`, an unknown or
repeated option, a bad value) goes to the Typer app, which prints its usual message.
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from remelink import __version__
from remelink.errors import EXIT_INTERRUPTED, EXIT_PROBLEMS, RemelinkError, filesystem_error

if TYPE_CHECKING:
    from remelink.config import Settings


@dataclass
class Invocation:
    """The command being run, for the error edge: its name, whether the caller wants JSON,
    when it started, and whether its envelope is already out."""

    command: str
    json: bool
    started: float
    printed: bool = False


CURRENT: ContextVar[Invocation | None] = ContextVar("remelink_invocation", default=None)


def err(message: str) -> None:
    sys.stderr.write(f"remelink: {message}\n")


def elapsed() -> float:
    run = CURRENT.get()
    return time.perf_counter() - run.started if run else 0.0


def print_json(text: str) -> None:
    """Print the command's envelope (once)."""
    run = CURRENT.get()
    if run is not None:
        run.printed = True
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def fail_json(message: str) -> None:
    """A caller that asked for --json gets its one document even when the command failed
    before it had a result; the exit status stays the error's."""
    run = CURRENT.get()
    if run is not None and run.json and not run.printed:
        from remelink.envelope import failure

        print_json(failure(run.command, elapsed(), message))


def open_vault(vault: Path | None,
               overrides: Mapping[str, Any] | None = None) -> tuple[Path, Settings]:
    """The vault root and settings (refusing a folder that is not a vault, exit 2); warnings
    from loading the settings (an unknown REMELINK_* variable) go to stderr."""
    from remelink.vault.root import open_vault as open_root

    root, settings = open_root(vault, overrides=overrides)
    for warning in settings.warnings:
        err(f"warning: {warning}")
    return root, settings


def crash_log(exc: BaseException, vault: Path | None = None) -> Path | None:
    """Write the traceback of an unexpected error where the user can attach it to a report:
    the `.remelink/` of the vault the command ran on (`--vault`, else the one around the working
    directory) when it is a real folder, else the temporary folder. The log is a new file
    (created exclusively, never through a symlink: `vault/own.py`)."""
    import secrets
    import stat
    import tempfile

    from remelink.vault import own
    from remelink.vault.paths import MARKER_DIR, find_vault_root

    data = f"remelink {__version__}\n{''.join(traceback.format_exception(exc))}".encode()
    name = f"crash-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}-{secrets.token_hex(2)}.log"
    try:
        root = find_vault_root(vault)
        if stat.S_ISDIR(os.lstat(root / MARKER_DIR).st_mode):
            own.create(root, f"{MARKER_DIR}/{name}", data, mode=0o600)
            return root / MARKER_DIR / name
    except (OSError, RemelinkError):
        pass
    try:
        fd, path = tempfile.mkstemp(prefix="remelink-crash-", suffix=".log")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        return Path(path)
    except OSError:
        return None


def run_command(command: str, func: Callable[[], int | None], *, json_out: bool, debug: bool,
                vault: Path | None, passthrough: tuple[type[BaseException], ...] = ()) -> int:
    """Run `func` at the edge and return its exit code: errors become one line on stderr (and,
    with --json, a failed envelope on stdout); tracebacks only with --debug. Exceptions in
    `passthrough` (Typer's own exit) go through untouched."""
    debug = debug or os.environ.get("REMELINK_DEBUG") == "1"
    token = CURRENT.set(Invocation(command, json_out, time.perf_counter()))
    try:
        return func() or 0
    except passthrough:
        raise
    except RemelinkError as exc:
        if debug:
            traceback.print_exc()
        fail_json(str(exc))
        err(f"error: {exc}")
        return exc.exit_code
    except KeyboardInterrupt:
        fail_json("interrupted")
        err("interrupted")
        return EXIT_INTERRUPTED
    except Exception as exc:
        if debug:
            raise
        refused = filesystem_error(exc, root=vault or Path.cwd())
        if refused is not None:  # permission, disk full, read-only: one line, no log
            fail_json(str(refused))
            err(f"error: {refused}")
            return refused.exit_code
        log = crash_log(exc, vault)
        where = f"; details in {log}" if log else ""
        message = f"unexpected error: {type(exc).__name__}: {exc}{where}"
        fail_json(message)
        err(f"{message} (rerun with --debug)")
        return EXIT_PROBLEMS
    finally:
        CURRENT.reset(token)


# -- node-search -----------------------------------------------------------------------------

LIMIT_MIN, LIMIT_MAX = 1, 100


def node_search(query: str, limit: int, bucket: str | None, json_out: bool,
                vault: Path | None) -> int:
    """`remelink node-search`: refresh the index, search, print hits (or the envelope)."""
    from remelink.errors import UsageError
    from remelink.index import NodeIndex
    from remelink.index import render as rd
    from remelink.render import search_json
    from remelink.vault.paths import BUCKETS

    if not query.strip():
        raise UsageError("the query is empty", hint='give the words to look for, e.g. '
                         'remelink node-search "retry budget"')
    if bucket is not None and bucket not in BUCKETS:
        raise UsageError(f"--bucket must be one of {', '.join(BUCKETS)}, got {bucket!r}")
    root, settings = open_vault(vault)
    with NodeIndex(root, settings) as index:
        stats = index.refresh()
        for warning in stats.warnings:
            err(f"warning: {warning}")
        for notice in stats.notices:
            err(f"note: {notice}")
        hits = index.search(query, limit=limit, bucket=bucket, refresh=False)
        for warning in index.warnings:
            err(f"warning: {warning}")
        for notice in index.notices:
            err(f"note: {notice}")
    if json_out:
        print_json(search_json(hits, elapsed()))
    elif not hits:
        err(f"no digest node matches {query.strip()[:80]!r}")
    elif rd.is_terminal(sys.stdout):
        rd.print_table(hits, sys.stdout)
    else:
        sys.stdout.write(rd.hits_plain(hits))
    return 0


@dataclass
class SearchArgs:
    query: str
    limit: int = 20
    bucket: str | None = None
    json_out: bool = False
    vault: Path | None = None
    debug: bool = False


_FLAGS = {"--json": "json_out", "--debug": "debug"}
_VALUED = ("--limit", "--bucket", "--vault")


def parse_search_args(args: list[str]) -> SearchArgs | None:
    """The arguments of a plain `node-search` (what follows the command name), or None when
    they are anything the Typer app should answer instead (help, an unknown or repeated
    option, a missing or extra query, a value it would refuse)."""
    values: dict[str, str] = {}
    flags: set[str] = set()
    positional: list[str] = []
    i = 0
    while i < len(args):
        word = args[i]
        if word == "--":
            positional += args[i + 1:]
            break
        if word in _FLAGS:
            if word in flags:
                return None
            flags.add(word)
        elif word.split("=", 1)[0] in _VALUED:
            name, eq, value = word.partition("=")
            if not eq:
                if i + 1 >= len(args):
                    return None
                i += 1
                value = args[i]
            if name in values or not value or value.startswith("-"):
                return None
            values[name] = value
        elif word.startswith("-") and word != "-":
            return None
        else:
            positional.append(word)
        i += 1
    if len(positional) != 1:
        return None
    out = SearchArgs(query=positional[0], json_out="--json" in flags, debug="--debug" in flags)
    if "--limit" in values:
        try:
            out.limit = int(values["--limit"])
        except ValueError:
            return None
        if not LIMIT_MIN <= out.limit <= LIMIT_MAX:
            return None
    out.bucket = values.get("--bucket")
    if "--vault" in values:
        out.vault = Path(values["--vault"])
    return out


def main(argv: list[str] | None = None) -> None:
    """Console entry point (`remelink`)."""
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["node-search"]:
        parsed = parse_search_args(args[1:])
        if parsed is not None:
            p = parsed
            sys.exit(run_command(
                "node-search", lambda: node_search(p.query, p.limit, p.bucket, p.json_out,
                                                   p.vault),
                json_out=p.json_out, debug=p.debug, vault=p.vault))
    from remelink.cli import main as typer_main

    typer_main(args if argv is not None else None)
