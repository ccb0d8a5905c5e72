"""`remelink mcp`: the vault's memory as MCP tools over stdio (SPEC §5.2), on the official
Python SDK (`mcp`, the optional extra `remelink[mcp]`; pinned and hash-locked in
requirements/mcp.lock). This is the only module that imports `mcp`, and only in `serve`.

Every tool failure is a tool error (`is_error` with one line) that the model reads; nothing a
caller sends ends the server. Results are bounded (remelink.mcp.tools.MAX_CHARS) and say when
they are cut.
"""


import re
from pathlib import Path
from typing import Annotated, Any

from remelink.config import Settings
from remelink.errors import RemelinkError, UsageError
from remelink.mcp.tools import MAX_CHARS, Memory

INSTRUCTIONS = f"""\
This server is a person's or team's long-term memory: a folder of markdown notes. Raw notes
(meeting notes, session logs, documents) live in daily/ and resource/; digest/ holds distilled
knowledge nodes (procedure: runbooks; personal: preferences and facts about people and teams;
wiki: concepts and decisions), each citing the raw notes it came from.
Use `search` first for any question about past work, people's preferences, decisions or how
to do something; use `read` to see more of a note it found; `recent` for what changed
lately; `remember` to save something worth keeping. Results are at most {MAX_CHARS:,}
characters per call."""

SEARCH = """\
Search all notes (daily/, resource/, digest/) for a question or keywords, in English or
Chinese. Returns the best passage of each of the best notes (path:start-end, score, text) and
its links: for a digest node, the raw notes its Sources cite (with the cited lines when the
link points at lines or a heading); for every hit, the notes it links to (->) and from (<-),
with their names and descriptions. Use this for any question ("how do we roll back
ledger-api?", "what does Priya want in status updates?"). Prefer it over node_search, which
only lists digest nodes by name. Filters: since/until (YYYY-MM-DD, the date in a note's path:
only dated daily/ and resource/ notes pass), folder (daily | resource | digest)."""

NODE_SEARCH = """\
List digest nodes (the distilled knowledge only: runbooks, preferences, concepts) matching
some words, best first, as path, name and description, without text or links. Use it to see
which nodes exist on a topic or to find a node to read; for answering a question use
`search`, which also searches the raw notes and quotes the passages."""

READ = """\
Read a note of the vault by its workspace path (as search results show it, e.g.
digest/procedure/roll-back-ledger-api.md), whole or lines start_line..end_line (1-based,
inclusive). Long notes are cut with a line saying where to continue. Only notes inside the
vault can be read (no absolute paths, no '..', no .remelink/, no links that lead outside)."""

RECENT = """\
What the last dream runs changed in the digest: the nodes they created, updated and corrected,
with the run's date and the raw notes each came from. Use it to catch up on what was learnt
lately."""

REMEMBER = """\
Save something worth remembering as a new raw note in daily/<today>/ (a decision, a
preference, a fix that worked, a fact about the project). It never changes an existing note
or the digest: the next `remelink dream run` distils it into digest nodes, and search finds
it at once. Write it as a person would note it: a short title and a few plain sentences,
with commands and numbers exactly."""


_PYDANTIC_ERROR = re.compile(r"^(.*?)(\d+) validation errors? for \w+$")
_SHORT = 300
ERROR_CHARS = 2000  # a tool error's one line, at most
_INPUT_VALUE = re.compile(r"\[type=[^,\]]*(?:, input_value=(.*?))?(?:, input_type=\w+)?\]$")


def one_line(text: str) -> str:
    """A tool error as one line. Argument errors come from the SDK's schema check as
    pydantic's multi-line report (`1 validation error for search_toolArguments / limit /
    Input should be ...`); they become `invalid arguments: limit: Input should be ... (got
    0)`. Anything else has its whitespace folded."""
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    # pydantic's report is short; the patterns run only on short lines (a lazy `(.*?)` before
    # `(\d+)` is quadratic on a long run of digits, which a model may send as an argument
    # that an error message then echoes).
    m = _PYDANTIC_ERROR.match(lines[0]) if lines and len(lines[0]) <= _SHORT else None
    if m is None:
        folded = " ".join(text.split())
        return folded if len(folded) <= ERROR_CHARS else folded[:ERROR_CHARS] + " [cut]"
    parts = []
    rest = [line for line in lines[1:] if not line.strip().startswith("For further information")]
    for field, message in zip(rest[0::2], rest[1::2], strict=False):
        message = message.strip()[:_SHORT]
        got = _INPUT_VALUE.search(message)
        message = _INPUT_VALUE.sub("", message).strip()
        if got and got.group(1) is not None:
            message += f" (got {got.group(1)[:60]})"
        parts.append(f"{field.strip()}: {message}")
    return f"{m.group(1)}invalid arguments: {'; '.join(parts)}"


def _middleware(memory: Memory) -> Any:
    """Server middleware: after the first request is answered (the client's handshake or its
    list of tools), open and refresh the indexes in a thread, so that the first search does
    not pay for it and the start-up does not wait for it; and every failed tool call's text
    is one line (see `one_line`)."""
    import threading

    started: list[bool] = []

    async def middleware(ctx: Any, call_next: Any) -> Any:
        result = await call_next(ctx)
        if not started:
            started.append(True)
            threading.Thread(target=memory.warm, name="remelink-warm", daemon=True).start()
        return _one_line_result(ctx, result)

    return middleware


def _one_line_result(ctx: Any, result: Any) -> Any:
    """A failed tool call's result with its text on one line. The result reaches middleware
    serialised (a dict), or as the result model."""
    if getattr(ctx, "method", None) != "tools/call":
        return result
    if isinstance(result, dict):
        if result.get("isError") or result.get("is_error"):
            result = dict(result)
            content = result.get("content") or []
            text = "".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
            result["content"] = [{"type": "text", "text": one_line(text)}]
    elif getattr(result, "is_error", False):
        from mcp.types import TextContent

        text = "".join(getattr(c, "text", "") for c in result.content)
        result = result.model_copy(update={"content": [TextContent(type="text",
                                                                   text=one_line(text))]})
    return result


def _tool_error(exc: BaseException, vault: Path) -> Exception:
    """The one-line error the model reads. An unexpected error also leaves its traceback in a
    crash log, named on stderr (the client's log of the server), as the CLI does."""
    import sys

    from mcp.server.mcpserver.exceptions import ToolError

    if isinstance(exc, RemelinkError):
        return ToolError(" ".join(str(exc).split()))
    message = f"unexpected error: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
    from remelink.command import crash_log

    log = crash_log(exc, vault)
    print(f"remelink mcp: {message}; details in {log}" if log else f"remelink mcp: {message}",
          file=sys.stderr, flush=True)
    return ToolError(message)


def _log_warnings(memory: Memory) -> None:
    """A person's warnings (a tampered index moved aside) to stderr, the server's log."""
    import sys

    while memory.warnings:
        print(f"remelink mcp: warning: {memory.warnings.pop(0)}", file=sys.stderr, flush=True)


def build_server(vault: Path, settings: Settings, memory: Memory | None = None) -> Any:
    """The MCPServer with the memory's tools (`remember` only when `mcp.remember` is on)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.types import ToolAnnotations
    from pydantic import Field

    from remelink import __version__

    mem = memory or Memory(vault, settings)
    server = MCPServer("remelink", version=__version__, instructions=INSTRUCTIONS,
                       log_level="WARNING", middleware=[_middleware(mem)])

    def guarded(fn: Any, *args: Any, **kwargs: Any) -> str:
        try:
            with mem.lock:
                result: str = fn(*args, **kwargs)
            return result
        except Exception as exc:  # every failure is a one-line tool error, never a crash
            raise _tool_error(exc, vault) from None
        finally:
            _log_warnings(mem)

    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)

    @server.tool(name="search", description=SEARCH, annotations=read_only)
    def search_tool(
        query: Annotated[str, Field(description="The question or words to look for.")],
        limit: Annotated[int, Field(description="How many notes (one passage each), 1-50.",
                                    ge=1)] = 5,
        since: Annotated[str | None, Field(description="Only notes dated on or after "
                                                       "YYYY-MM-DD.")] = None,
        until: Annotated[str | None, Field(description="Only notes dated on or before "
                                                       "YYYY-MM-DD.")] = None,
        folder: Annotated[str | None, Field(description="Only daily, resource or digest "
                                                        "notes.")] = None,
        links: Annotated[bool, Field(description="Include each hit's links (default "
                                                 "true).")] = True,
    ) -> str:
        return guarded(mem.search, query, limit, since, until, folder, links)

    @server.tool(name="node_search", description=NODE_SEARCH, annotations=read_only)
    def node_search_tool(
        query: Annotated[str, Field(description="Words to look for in digest nodes.")],
        limit: Annotated[int, Field(description="How many nodes, 1-100.", ge=1)] = 10,
        bucket: Annotated[str | None, Field(description="Only procedure, personal or wiki "
                                                        "nodes.")] = None,
    ) -> str:
        return guarded(mem.node_search, query, limit, bucket)

    @server.tool(name="read", description=READ, annotations=read_only)
    def read_tool(
        path: Annotated[str, Field(description="Workspace path of the note, e.g. "
                                               "daily/2026-06-01/sync.md.")],
        start_line: Annotated[int | None, Field(description="First line (1-based).")] = None,
        end_line: Annotated[int | None, Field(description="Last line (inclusive).")] = None,
    ) -> str:
        return guarded(mem.read, path, start_line, end_line)

    @server.tool(name="recent", description=RECENT, annotations=read_only)
    def recent_tool(
        runs: Annotated[int, Field(description="How many of the last runs (1-20).",
                                   ge=1)] = 3,
    ) -> str:
        return guarded(mem.recent, runs)

    if settings.mcp_remember:
        @server.tool(name="remember", description=REMEMBER,
                     annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False,
                                                 idempotent_hint=False,
                                                 open_world_hint=False))
        def remember_tool(
            title: Annotated[str, Field(description="A short title (becomes the file "
                                                    "name).")],
            text: Annotated[str, Field(description="What to remember, in plain sentences.")],
        ) -> str:
            return guarded(mem.remember, title, text)

    return server


def run(vault: Path | None) -> int:
    """`remelink mcp`: open the vault (refusing a folder that is not one), then serve."""
    from remelink.command import open_vault

    root, settings = open_vault(vault)
    serve(root, settings)
    return 0


def serve(vault: Path, settings: Settings) -> None:
    """Run the server on stdin/stdout until the client closes it."""
    try:
        import mcp.server.mcpserver  # noqa: F401 - only to say what is missing
    except ImportError:
        raise UsageError("the MCP SDK is not installed",
                         hint='install the extra: pip install "remelink[mcp]"') from None
    memory = Memory(vault, settings)
    server = build_server(vault, settings, memory)
    try:
        server.run("stdio")
    finally:
        memory.close()
