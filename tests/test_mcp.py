"""`remelink mcp` (SPEC §5.2) started as a subprocess and driven through the MCP SDK's own
stdio client: the tools, their errors, the vault boundary, bounded results, and an agent's
note going through `dream run` into search."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Awaitable, Callable
from datetime import date
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import VaultFactory

pytest.importorskip("mcp", reason="the MCP SDK is the optional extra remelink[mcp]")

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from remelink.mcp.tools import MAX_CHARS

EXE = Path(sys.executable).parent / "remelink"
FILES: dict[str, str | bytes] = {
    "daily/2026-06-01/ledger.md": "# Ledger API rollback\n\n## Rollback\n"
                                  "1. Run `kubectl rollout undo deploy/ledger-api`.\n",
    "daily/2026-06-02/滚动.md": "# 回滚\n\n回滚 ledger-api 之前先通知值班的人。\n",
    "digest/procedure/roll-back-ledger-api.md":
        "---\nname: Roll back ledger-api\ndescription: Undo a bad ledger-api deploy.\n---\n"
        "Run the rollout undo.\n\n## Sources\n- From [[daily/2026-06-01/ledger.md#L3-L4]].\n",
}


def call(vault: Path, body: Callable[[Client], Awaitable[Any]],
         env: dict[str, str] | None = None) -> Any:
    params = StdioServerParameters(command=str(EXE), args=["mcp", "--vault", str(vault)],
                                   env={"REMELINK_DEBUG": "0", **(env or {})})

    async def main() -> Any:
        async with Client(params, read_timeout_seconds=60) as client:
            return await body(client)

    return anyio.run(main)


def text_of(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


@pytest.fixture
def vault(make_vault: VaultFactory) -> Path:
    return make_vault(FILES)


def test_tools_are_listed_with_descriptions_for_a_model(vault: Path) -> None:
    async def body(client: Client) -> Any:
        return (await client.list_tools()).tools

    tools = {t.name: t for t in call(vault, body)}
    assert set(tools) == {"search", "node_search", "read", "recent", "remember"}
    assert "Prefer it over node_search" in (tools["search"].description or "")
    assert "for answering a question use\n`search`" in (tools["node_search"].description or "")
    assert set(tools["search"].input_schema["properties"]) == {
        "query", "limit", "since", "until", "folder", "links"}
    assert tools["search"].input_schema["required"] == ["query"]


def test_each_tool_answers(vault: Path) -> None:
    async def body(client: Client) -> dict[str, Any]:
        out = {}
        out["search"] = await client.call_tool("search", {"query": "how do I roll back "
                                                                   "ledger-api"})
        out["zh"] = await client.call_tool("search", {"query": "回滚之前通知谁"})
        out["node_search"] = await client.call_tool("node_search", {"query": "ledger rollback"})
        out["read"] = await client.call_tool("read", {"path": "daily/2026-06-01/ledger.md",
                                                      "start_line": 3, "end_line": 4})
        out["recent"] = await client.call_tool("recent", {})
        return out

    got = call(vault, body)
    assert not any(r.is_error for r in got.values()), {k: text_of(v) for k, v in got.items()}
    search = text_of(got["search"])
    assert search.startswith("digest/procedure/roll-back-ledger-api.md:5-5  [")
    assert "daily/2026-06-01/ledger.md#L3-L4: From daily/2026-06-01/ledger.md." in search
    assert "      > ## Rollback\n      > 1. Run `kubectl rollout undo" in search
    assert text_of(got["zh"]).startswith("daily/2026-06-02/滚动.md:")
    assert "digest/procedure/roll-back-ledger-api.md\n  name: Roll back ledger-api" in \
        text_of(got["node_search"])
    assert text_of(got["read"]) == ("daily/2026-06-01/ledger.md (lines 3-4 of 4)\n## Rollback\n"
                                    "1. Run `kubectl rollout undo deploy/ledger-api`.\n")
    assert text_of(got["recent"]).startswith("No dream run has changed the digest yet")


def test_bad_calls_are_one_line_tool_errors_and_the_server_lives(vault: Path,
                                                                 tmp_path: Path) -> None:
    outside = tmp_path / "secret.md"
    outside.write_text("top secret\n")
    (vault / "daily/2026-06-01/link.md").symlink_to(outside)
    os.mkfifo(vault / "daily/2026-06-01/pipe.md")

    async def body(client: Client) -> list[tuple[bool, str]]:
        calls = [
            ("read", {"path": "daily/nope.md"}),
            ("read", {"path": "../secret.md"}),
            ("read", {"path": str(outside)}),
            ("read", {"path": "daily/2026-06-01/link.md"}),
            ("read", {"path": "daily/2026-06-01/pipe.md"}),
            ("read", {"path": ".remelink/config.yaml"}),
            ("read", {"path": "daily/2026-06-01/ledger.md", "start_line": 9}),
            ("search", {"query": "x", "since": "last week"}),
            ("search", {"query": "x", "folder": "notes"}),
            ("search", {"query": ""}),
            ("node_search", {"query": "x", "bucket": "recipes"}),
            ("nonexistent", {}),
            ("search", {"query": "x", "limit": 0}),
            ("search", {}),
            ("read", {"path": "daily/2026-06-01/ledger.md", "start_line": "abc"}),
            ("search", {"query": "ledger", "limit": 1000000}),
        ]
        out = []
        for name, args in calls:
            r = await client.call_tool(name, args)
            out.append((bool(r.is_error), text_of(r)))
        return out

    got = call(vault, body)
    errors = [t for e, t in got[:-1]]
    assert all(e for e, _ in got[:-1]), got
    for message in errors:
        assert "\n" not in message and "Traceback" not in message, message
    assert "file not found" in errors[0]
    assert "climbs out" in errors[1]
    assert "absolute path" in errors[2]
    assert "outside the vault" in errors[3] and "top secret" not in errors[3]
    assert "FIFO" in errors[4]
    assert ".remelink/ and hidden files are not notes" in errors[5]
    assert "past the end" in errors[6]
    assert "since must be a date YYYY-MM-DD" in errors[7]
    assert "in must be one of daily, resource, digest" in errors[8]
    assert "query is empty" in errors[9]
    assert "bucket must be one of" in errors[10]
    assert errors[12] == ("Error executing tool search: invalid arguments: limit: Input should "
                          "be greater than or equal to 1 (got 0)")
    assert errors[13].endswith("invalid arguments: query: Field required (got {})")
    assert "invalid arguments: start_line: Input should be a valid integer" in errors[14]
    huge_error, huge = got[-1]
    assert not huge_error and len(huge) <= MAX_CHARS + 200
    assert huge.startswith("(limit 1000000 is over the maximum; showing at most 50)")


def test_results_are_bounded_and_say_so(make_vault: VaultFactory) -> None:
    big = "\n\n".join(f"## Part {i}\n" + " ".join(["capybara fact"] * 200) for i in range(60))
    files: dict[str, str | bytes] = {f"daily/2026-06-{d:02d}/n{d}.md": big
                                     for d in range(1, 29)}
    vault = make_vault(files)

    async def body(client: Client) -> list[str]:
        a = await client.call_tool("search", {"query": "capybara", "limit": 50})
        b = await client.call_tool("read", {"path": "daily/2026-06-01/n1.md"})
        return [text_of(a), text_of(b)]

    search, read = call(vault, body)
    assert len(search) <= MAX_CHARS + 200
    assert "more hit(s) not shown to stay under 20,000 characters" in search
    assert len(read) <= MAX_CHARS + 400
    assert "read again with start_line=" in read


def test_remember_then_dream_then_search(vault: Path) -> None:
    today = date.today().isoformat()

    async def remember(client: Client) -> str:
        r = await client.call_tool("remember", {
            "title": "Numbat deploy freeze",
            "text": "We decided to freeze numbat deploys on Fridays after the outage; "
                    "deploys resume on Monday."})
        assert not r.is_error, text_of(r)
        again = await client.call_tool("remember", {"title": "Numbat deploy freeze",
                                                    "text": "A second note."})
        assert not again.is_error
        return text_of(r) + "\n" + text_of(again)

    said = call(vault, remember)
    rel = f"daily/{today}/numbat-deploy-freeze.md"
    assert f"Saved {rel}." in said and f"Saved daily/{today}/numbat-deploy-freeze-2.md." in said
    assert "freeze numbat deploys on Fridays" in (vault / rel).read_text()
    import subprocess

    proc = subprocess.run([str(EXE), "dream", "run", "--vault", str(vault), "--json"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    created = json.loads(proc.stdout)

    async def after(client: Client) -> tuple[str, str]:
        found = await client.call_tool("search", {"query": "numbat deploys Friday",
                                                  "folder": "digest"})
        recent = await client.call_tool("recent", {})
        return text_of(found), text_of(recent)

    found, recent = call(vault, after)
    assert found.startswith("digest/"), (found, created)
    assert rel in found  # the node's Sources cite the agent's note
    assert "created: digest/" in recent and rel in recent


def test_remember_can_be_switched_off(vault: Path) -> None:
    (vault / ".remelink/config.yaml").write_text("mcp:\n  remember: false\n")

    async def body(client: Client) -> tuple[set[str], Any]:
        names = {t.name for t in (await client.list_tools()).tools}
        r = await client.call_tool("remember", {"title": "x", "text": "y"})
        return names, r

    names, r = call(vault, body)
    assert "remember" not in names
    assert r.is_error
    assert not (vault / "daily" / date.today().isoformat()).exists()


def test_a_folder_that_is_not_a_vault_is_refused(tmp_path: Path) -> None:
    import subprocess

    proc = subprocess.run([str(EXE), "mcp", "--vault", str(tmp_path)], capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, check=False, timeout=60)
    assert proc.returncode == 2
    assert "not a remelink vault" in proc.stderr or "not a vault" in proc.stderr


def test_plain_mcp_arguments_skip_typer() -> None:
    from remelink.edge import parse_mcp_args

    assert parse_mcp_args([]) == (None, False)
    assert parse_mcp_args(["--vault", "v", "--debug"]) == (Path("v"), True)
    assert parse_mcp_args(["--vault=v"]) == (Path("v"), False)
    for args in (["--help"], ["--vault"], ["--vault", "a", "--vault", "b"], ["--json"], ["x"]):
        assert parse_mcp_args(args) is None, args  # Typer answers these
    import subprocess

    out = subprocess.run([str(EXE), "mcp", "--help"], capture_output=True, text=True,
                         check=False)
    assert out.returncode == 0 and "MCP server over stdio" in out.stdout


def _in_process(vault: Path, memory: Any, body: Callable[[Client], Awaitable[Any]]) -> Any:
    """Drive the server object itself (the SDK's in-memory transport), not a subprocess."""
    from remelink.config import load_settings
    from remelink.mcp.server import build_server

    server = build_server(vault, load_settings(vault), memory)

    async def main() -> Any:
        async with Client(server, read_timeout_seconds=60) as client:
            return await body(client)

    return anyio.run(main)


def test_an_unexpected_error_is_one_line_for_the_model_and_a_crash_log_for_a_person(
        vault: Path, capfd: pytest.CaptureFixture[str]) -> None:
    from remelink.config import load_settings
    from remelink.mcp.tools import Memory

    memory = Memory(vault, load_settings(vault))

    def broken(*_args: Any) -> str:
        raise TypeError("'NoneType' object\nis not subscriptable")

    memory.search = broken  # type: ignore[method-assign]
    result = _in_process(vault, memory, lambda c: c.call_tool("search", {"query": "ledger"}))
    memory.close()
    assert result.is_error
    assert text_of(result).endswith(
        "unexpected error: TypeError: 'NoneType' object is not subscriptable")
    logs = list((vault / ".remelink").glob("crash-*.log"))
    assert len(logs) == 1
    log = logs[0].read_text()
    assert "Traceback" in log and "in broken" in log
    assert f"details in {logs[0]}" in capfd.readouterr().err


def test_a_call_waits_for_the_start_up_warm_up_instead_of_racing_it(vault: Path) -> None:
    """The warm-up refreshes the node index in a thread; a node_search arriving meanwhile
    must not refresh the same index at the same time (it is not thread-safe)."""
    import threading

    from remelink.config import load_settings
    from remelink.mcp.tools import Memory

    memory = Memory(vault, load_settings(vault))
    entered, release = threading.Event(), threading.Event()
    refresh = memory.nodes.refresh
    overlapping: list[bool] = []
    inside = threading.Lock()

    def slow_refresh() -> Any:
        if not inside.acquire(blocking=False):
            overlapping.append(True)  # two refreshes at once
            return refresh()
        try:
            entered.set()
            release.wait(10)
            return refresh()
        finally:
            inside.release()

    memory.nodes.refresh = slow_refresh  # type: ignore[method-assign]
    warm = threading.Thread(target=memory.warm)
    warm.start()
    assert entered.wait(10)
    answers: list[Any] = []
    caller = threading.Thread(target=lambda: answers.append(_in_process(
        vault, memory, lambda c: c.call_tool("node_search", {"query": "ledger rollback"}))))
    caller.start()
    caller.join(0.5)
    assert caller.is_alive() and not answers  # waiting for the warm-up, not racing it
    release.set()
    caller.join(60)
    warm.join(10)
    memory.close()
    assert not overlapping
    assert not answers[0].is_error
    assert "name: Roll back ledger-api" in text_of(answers[0])
