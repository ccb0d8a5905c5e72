"""Running one command at the edge (SPEC §13), without Typer: errors become one line on stderr
(and, with `--json`, a failed envelope on stdout) and an exit code; tracebacks only with
`--debug`; an unexpected error leaves a crash log. Both entry points use it: the Typer app
(`cli.py`, every command) and the console entry point (`edge.py`, a plain `node-search`).
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
