"""The console entry point (`remelink`) without Typer.

`remelink node-search` is what scripts and editors call in a loop, so its start-up counts: Typer,
click and pydantic cost more to import (about 80 ms here) than the search itself. `main` runs a
`node-search` whose arguments are plain (a query and the documented options, each once) here,
at the error edge (`command.py`) through the same function the Typer command calls
(`nodesearch.py`); anything else (`--help`, an unknown or repeated option, a bad value) goes to
the Typer app (`cli.py`), which prints its usual message. This module is the top of the
package: nothing imports it.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from remelink.command import run_command
from remelink.nodesearch import LIMIT_MAX, LIMIT_MIN, node_search


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


def parse_mcp_args(args: list[str]) -> tuple[Path | None, bool] | None:
    """(vault, debug) of a plain `mcp` (`--vault PATH` and `--debug`, each at most once), or
    None for anything the Typer app should answer (help, an unknown option). The server's
    start-up counts (an agent waits for it): Typer, click and rich are not needed to serve."""
    vault: Path | None = None
    debug = False
    i = 0
    while i < len(args):
        word = args[i]
        if word == "--debug" and not debug:
            debug = True
        elif word.split("=", 1)[0] == "--vault" and vault is None:
            _, eq, value = word.partition("=")
            if not eq:
                if i + 1 >= len(args):
                    return None
                i += 1
                value = args[i]
            if not value or value.startswith("-"):
                return None
            vault = Path(value)
        else:
            return None
        i += 1
    return vault, debug


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
    if args[:1] == ["mcp"]:
        served = parse_mcp_args(args[1:])
        if served is not None:
            vault, debug = served

            def serve() -> int:
                from remelink.mcp.server import run

                return run(vault)

            sys.exit(run_command("mcp", serve, json_out=False, debug=debug, vault=vault))
    from remelink.cli import main as typer_main

    typer_main(args if argv is not None else None)
