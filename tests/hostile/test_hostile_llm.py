"""The LLM path: with a litellm model, whatever is read goes to a provider. The provider here is
an OpenAI-compatible server on 127.0.0.1 that records every request body and answers as the
local engine would (so the whole dream run happens: extraction, integration, tags). The marker
placed outside the vault must be in no request the server received."""

from __future__ import annotations

import importlib.util
import json
import os
import threading
from collections.abc import Iterator
from dataclasses import replace
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from fake_llm import JsonHandler
from harness import MARKER, TIMEOUT, World, world

from remelink.config import Settings
from remelink.dream.run import DreamOptions, run_dream
from remelink.models.local import LocalModel
from remelink.render import dream_text

if importlib.util.find_spec("litellm") is None:
    pytest.skip("litellm is not installed (make install-llm)", allow_module_level=True)
pytestmark = [pytest.mark.slow, pytest.mark.timeout(TIMEOUT * 2),
              pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")]


class Provider(ThreadingHTTPServer):
    """Answers /v1/chat/completions with the local engine's turn; keeps every request body."""

    daemon_threads = True

    def __init__(self, settings: Settings) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.engine = LocalModel(settings)
        self.bodies: list[str] = []
        self.lock = threading.Lock()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _Handler(JsonHandler):
    server: Provider

    def do_POST(self) -> None:  # http.server's naming
        raw, body = self.read_json()
        with self.server.lock:
            self.server.bodies.append(raw.decode("utf-8", "replace"))
            turn = self.server.engine.complete(body.get("messages") or [], body.get("tools") or [])
        message: dict[str, Any] = {"role": "assistant", "content": turn.text}
        if turn.tool_calls:
            message["tool_calls"] = [{"id": c.id, "type": "function",
                                      "function": {"name": c.name, "arguments": c.arguments}}
                                     for c in turn.tool_calls]
        self.send_json({"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                        "choices": [{"index": 0, "message": message,
                                     "finish_reason": "tool_calls" if turn.tool_calls
                                     else "stop"}],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1,
                                  "total_tokens": 2}})


@pytest.fixture(autouse=True)
def dummy_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dummy")


@pytest.fixture
def provider_world(tmp_path: Path) -> Iterator[tuple[World, Provider]]:
    w = world(tmp_path)
    srv = Provider(w.settings())
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.02},
                              daemon=True)
    thread.start()
    try:
        yield w, srv
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(timeout=5)


def llm_run(w: World, srv: Provider) -> tuple[Any, str]:
    from remelink.models.litellm_model import LiteLLMModel

    settings = replace(w.settings(), api_base=srv.base, retries=0, timeout=20.0)
    model = LiteLLMModel("openai/test-model", settings)
    report = run_dream(w.vault, settings, model, DreamOptions(today="2026-06-25"))
    return report, dream_text(report, 0.0)


def test_llm_run_never_sends_what_symlinks_lead_to(
        provider_world: tuple[World, Provider]) -> None:
    w, srv = provider_world
    day = w.vault / "daily" / "2026-06-24"
    day.mkdir(parents=True)
    os.symlink(w.outside / "secret.md", day / "passwd.md")
    os.symlink("/etc/passwd", day / "etc-passwd.md")
    os.symlink(w.outside / "day", w.vault / "daily" / "2026-06-23")
    os.symlink(w.outside / "digest" / "wiki" / "leak.md", w.vault / "digest" / "wiki" / "l.md")
    w.seal()
    report, out = llm_run(w, srv)
    assert srv.bodies and any('"task": "extract"' in b or "extract" in b for b in srv.bodies)
    assert report.units and all(u.status == "done" for u in report.units), out
    w.held(out, needle="/passwd.md:", extra_requests=srv.bodies)
    w.held(out, needle="daily/2026-06-23")
    assert not any("root:x:" in b for b in srv.bodies)


def test_llm_run_never_sends_a_crafted_unit_path(provider_world: tuple[World, Provider]) -> None:
    """A pending unit in state.json citing a file outside: integrating it would send that file
    to the provider as evidence."""
    from remelink.units import Unit

    w, srv = provider_world
    rel = os.path.relpath(w.outside / "secret.md", w.vault)
    u = Unit(name="Deploy password", bucket="wiki", summary="The deploy password.",
             paths=(rel,))
    rec = {**u.as_dict(), "status": "pending", "attempts": 0, "error": None, "action": None,
           "target": None, "commit_hash": None, "run": "r0"}
    (w.vault / ".remelink" / "state.json").write_text(json.dumps(
        {"version": 1, "inputs": {}, "units": {u.id: rec}, "runs": [], "pending_tags": []}),
        encoding="utf-8")
    w.seal()
    _report, out = llm_run(w, srv)
    w.held(out, needle=f"unit {u.id} path", extra_requests=srv.bodies)
    assert all(MARKER not in b for b in srv.bodies)
