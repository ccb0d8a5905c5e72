"""The real LiteLLMModel through litellm's real request path, offline: an OpenAI-compatible
server on 127.0.0.1 (http.server in a thread) answers POST /v1/chat/completions with scripted
chat.completion bodies carrying tool calls, and `integrate_unit` runs the whole loop against it.

Also: a 429 then success (our retry with backoff, sleep injected), a 500 past the retry budget
(ModelError: the unit fails and the vault is unchanged), a 401 (fails at once, one line with a
hint). Every socket connection and name lookup is recorded: none may leave loopback.
"""

from __future__ import annotations

import importlib.util
import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import replace
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from conftest import tree_bytes
from fake_llm import JsonHandler
from integrate_support import TermIndex, context, copy_vault, golden_check
from llm_support import FakeOpenAI, completion, error_body, serving

from remelink.config import load_settings
from remelink.errors import ModelError, RunModelError, UnitModelError
from remelink.integrate import integrate, integrate_unit
from remelink.units import Unit

# Not pytest.importorskip: that would import litellm at collection time, before the autouse
# fixture switches its cost-map fetch off, and litellm would reach for raw.githubusercontent.com
# (this suite's network log caught exactly that). LiteLLMModel imports it lazily, offline.
if importlib.util.find_spec("litellm") is None:
    pytest.skip("litellm is not installed (make install-llm)", allow_module_level=True)
# The first `import litellm` costs ~4 s of CPU; pydantic warns about litellm's own types.
pytestmark = [pytest.mark.slow,
              pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")]

from remelink.models.litellm_model import LiteLLMModel  # noqa: E402

NODE = "digest/wiki/idempotency-keys.md"
NEW_PATH = "daily/2026-06-23/checkout-retries.md"
UNIT = Unit(name="Idempotency keys on every charge", bucket="wiki",
            summary="A second duplicate charge shows every money-moving POST needs a key.",
            paths=(NEW_PATH,))
LOOPBACK = {"127.0.0.1", "::1", "localhost"}


GOOD_TURNS = [
    completion(tool_calls=[("call_search", "node_search",
                            {"query": "idempotency key duplicate charge", "limit": 20})]),
    completion(tool_calls=[("call_read", "read", {"path": NODE, "start_line": 13})]),
    completion(tool_calls=[("call_edit", "edit", {
        "path": NODE, "old": "[[daily/2026-06-01/payments-retry.md]].",
        "new": "[[daily/2026-06-01/payments-retry.md]]. The checkout incident in "
               f"[[{NEW_PATH}]] confirms the rule."})]),
    completion(content=json.dumps({"action": "CORROBORATE", "target_path": NODE,
                                   "note": "corroborated"}), completion_tokens=20),
]


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with serving() as srv:
        yield srv


@pytest.fixture
def network_log(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every host this process connects to or resolves (on top of conftest's guard)."""
    seen: list[str] = []
    guarded_connect = socket.socket.connect
    real_getaddrinfo = socket.getaddrinfo

    def connect(self: socket.socket, address: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6):
            seen.append(str(address[0]))
        return guarded_connect(self, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(str(host))
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    yield seen
    assert set(seen) <= LOOPBACK, f"non-loopback connection attempted: {sorted(set(seen))}"


@pytest.fixture(autouse=True)
def dummy_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dummy")


def make(vault: Path, server: FakeOpenAI, *, retries: int = 2,
         sleeps: list[float] | None = None) -> LiteLLMModel:
    settings = replace(load_settings(vault, env={}), api_base=server.base, retries=retries,
                       timeout=10.0)
    record = sleeps if sleeps is not None else []
    return LiteLLMModel("openai/test-model", settings, sleep=record.append)


def test_integrate_unit_through_litellm_and_a_loopback_server(
        tmp_path: Path, server: FakeOpenAI, network_log: list[str]) -> None:
    vault = copy_vault(tmp_path)
    server.replies = [(200, body, {}) for body in GOOD_TURNS]
    model = make(vault, server)
    index = TermIndex(vault)

    result = integrate_unit(context(vault, model, index=index), UNIT)

    assert result.ok, result.error
    assert (result.action, result.target, result.steps) == ("CORROBORATE", NODE, 4)
    assert (result.usage.prompt_tokens, result.usage.completion_tokens) == (400, 50)
    golden_check((vault / NODE).read_bytes(), "corroborate_min.md")
    assert index.updates == [[NODE]]
    assert network_log and set(network_log) <= LOOPBACK

    # What litellm put on the wire.
    assert len(server.requests) == 4
    first = server.requests[0]
    assert first["path"] == "/v1/chat/completions"
    assert first["headers"]["authorization"] == "Bearer sk-test-dummy"
    body = first["body"]
    assert body["model"] == "test-model"  # the provider prefix is stripped
    assert body["tool_choice"] == "auto"
    assert [t["function"]["name"] for t in body["tools"]] == [
        "node_search", "read", "frontmatter_read", "write", "edit", "frontmatter_update"]
    assert body["tools"][3]["function"]["parameters"]["required"] == [
        "path", "name", "description", "content"]
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    # Each tool result goes back with the id of the call it answers, in order.
    last = server.requests[3]["body"]["messages"]
    assert [m["role"] for m in last] == ["system", "user"] + ["assistant", "tool"] * 3
    tools = [m for m in last if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tools] == ["call_search", "call_read", "call_edit"]
    assert all("name" not in m for m in tools)
    assert tools[0]["content"].startswith("3 node(s), best first:\n1. [")
    assert tools[1]["content"].startswith("## Sources\n")
    assert tools[2]["content"] == (f"Staged edit of {NODE} (1 replacement). Checked: it passes "
                                   "every check. Unless you want to change more, answer now with "
                                   "only the receipt JSON.")
    # The first message carries the recall for the unit: the candidates, short bodies included.
    user = body["messages"][1]["content"]
    assert f"Candidates (node_search, best first):\n1. {NODE}\n" in user
    assert "The server stores the key with the first response for 24 hours" in user
    assistant = last[2]
    assert assistant["tool_calls"][0]["id"] == "call_search"
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"])["limit"] == 20


def test_rate_limit_then_success_retries_with_backoff(
        tmp_path: Path, server: FakeOpenAI, network_log: list[str]) -> None:
    vault = copy_vault(tmp_path)
    server.replies = [(429, error_body("slow down", "rate_limit_error"), {"retry-after": "3"}),
                      (429, error_body("slow down", "rate_limit_error"), {})]
    server.replies += [(200, body, {}) for body in GOOD_TURNS]
    sleeps: list[float] = []
    result = integrate_unit(context(vault, make(vault, server, sleeps=sleeps)), UNIT)
    assert result.ok, result.error
    assert len(server.requests) == 6
    # The server's Retry-After is honoured; without one, jittered exponential backoff.
    assert sleeps[0] == 3.0
    assert 0.5 <= sleeps[1] <= 1.0 and len(sleeps) == 2


def test_a_retry_after_above_the_cap_fails_at_once_with_the_reason(
        tmp_path: Path, server: FakeOpenAI, network_log: list[str]) -> None:
    vault = copy_vault(tmp_path)
    server.replies = [(429, error_body("slow down", "rate_limit_error"), {"retry-after": "600"})]
    sleeps: list[float] = []
    with pytest.raises(ModelError) as info:
        make(vault, server, sleeps=sleeps).complete([{"role": "user", "content": "hi"}], [])
    assert info.value.kind == "transient"
    assert str(info.value) == (
        "openai/test-model: rate limited; the provider asked to wait 600 s before a retry, "
        "longer than retry_after_max (120 s): slow down (rerun later, or raise retry_after_max)")
    assert len(server.requests) == 1 and sleeps == []


def test_retry_after_as_a_date_or_in_milliseconds_is_honoured(
        tmp_path: Path, server: FakeOpenAI, network_log: list[str]) -> None:
    import email.utils
    import time

    vault = copy_vault(tmp_path)
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    server.replies = [(429, error_body("slow down", "rate_limit_error"), {"retry-after": later}),
                      (503, error_body("overloaded"), {"retry-after-ms": "1500"}),
                      (200, completion(content="ok"), {})]
    sleeps: list[float] = []
    turn = make(vault, server, sleeps=sleeps).complete([{"role": "user", "content": "hi"}], [])
    assert turn.text == "ok" and len(server.requests) == 3
    assert 25 <= sleeps[0] <= 31 and sleeps[1] == 1.5


def test_server_errors_past_the_retry_budget_fail_the_unit(
        tmp_path: Path, server: FakeOpenAI, network_log: list[str]) -> None:
    vault = copy_vault(tmp_path)
    before = tree_bytes(vault)
    server.replies = [(200, GOOD_TURNS[0], {}), (200, GOOD_TURNS[1], {}),
                      (200, GOOD_TURNS[2], {})]
    server.replies += [(500, error_body("boom"), {})] * 3
    sleeps: list[float] = []
    index = TermIndex(vault)
    result = integrate_unit(context(vault, make(vault, server, retries=2, sleeps=sleeps),
                                    index=index), UNIT)
    assert result.status == "failed" and result.failure == "transient"
    assert result.error == "openai/test-model: server error (500) after 3 attempt(s): boom"
    assert "\n" not in result.error
    assert len(server.requests) == 6 and len(sleeps) == 2
    # The edit was staged when the model went away: nothing reached the vault.
    assert tree_bytes(vault) == before and index.updates == []


def test_unauthorised_fails_at_once_with_a_hint(
        tmp_path: Path, server: FakeOpenAI, network_log: list[str]) -> None:
    vault = copy_vault(tmp_path)
    server.replies = [(401, error_body("Incorrect API key provided", "invalid_request_error"),
                       {})]
    sleeps: list[float] = []
    model = make(vault, server, sleeps=sleeps)
    with pytest.raises(ModelError) as info:
        model.complete([{"role": "user", "content": "hi"}], [])
    message = str(info.value)
    assert message.startswith("openai/test-model: authentication failed: ")
    # A key is set (the dummy), so the provider refused it.
    assert message.endswith("(the provider refused the key that is set: check it, or its "
                            "variable (e.g. OPENAI_API_KEY for openai/ models))")
    assert "Incorrect API key provided" in message and "\n" not in message
    assert len(server.requests) == 1 and sleeps == []


def test_a_missing_key_fails_at_once_naming_the_variable(
        tmp_path: Path, server: FakeOpenAI, network_log: list[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """litellm reports a missing OpenAI key as an InternalServerError; it used to be retried
    five times (11 s) and then named as a server error."""
    monkeypatch.delenv("OPENAI_API_KEY")
    vault = copy_vault(tmp_path)
    sleeps: list[float] = []
    with pytest.raises(ModelError) as info:
        make(vault, server, retries=4, sleeps=sleeps).complete(
            [{"role": "user", "content": "hi"}], [])
    message = str(info.value)
    assert message.startswith("openai/test-model: authentication failed: ")
    assert message.endswith("(set OPENAI_API_KEY in the environment (API keys are never read "
                            "from the config))")
    assert sleeps == [] and server.requests == []  # nothing sent, nothing retried


def test_model_options_go_on_the_wire(tmp_path: Path, server: FakeOpenAI,
                                      network_log: list[str]) -> None:
    vault = copy_vault(tmp_path)
    (vault / ".remelink").mkdir(exist_ok=True)
    (vault / ".remelink" / "config.yaml").write_text(
        "model_options: {temperature: 0.2, max_tokens: 800, seed: 7}\n", encoding="utf-8")
    settings = replace(load_settings(vault, env={}), api_base=server.base, timeout=10.0)
    server.replies = [(200, completion(content="ok"), {})]
    LiteLLMModel("openai/test-model", settings).complete([{"role": "user", "content": "hi"}], [])
    body = server.requests[0]["body"]
    assert (body["temperature"], body["max_tokens"], body["seed"]) == (0.2, 800, 7)


def test_num_ctx_is_for_ollama_only(tmp_path: Path) -> None:
    from remelink.errors import ConfigError

    settings = replace(load_settings(tmp_path, env={}), model_options={"num_ctx": 16384})
    with pytest.raises(ConfigError, match="applies to ollama/ and ollama_chat/ models only"):
        LiteLLMModel("openai/test-model", settings)


class FakeOllama(ThreadingHTTPServer):
    """POST /api/chat, Ollama's own API (what litellm's ollama_chat/ provider speaks)."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _OllamaHandler)
        self.requests: list[dict[str, Any]] = []


class _OllamaHandler(JsonHandler):
    server: FakeOllama

    def do_POST(self) -> None:  # http.server's naming
        self.server.requests.append({"path": self.path, "body": self.read_json()[1]})
        self.send_json({"model": "qwen3", "created_at": "2026-06-25T00:00:00Z",
                        "message": {"role": "assistant", "content": "ok"}, "done": True,
                        "done_reason": "stop", "prompt_eval_count": 11, "eval_count": 2})


def test_ollama_gets_num_ctx_in_its_options(tmp_path: Path, network_log: list[str]) -> None:
    srv = FakeOllama()
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.02},
                              daemon=True)
    thread.start()
    try:
        settings = replace(load_settings(tmp_path, env={}),
                           api_base=f"http://127.0.0.1:{srv.server_address[1]}", timeout=10.0,
                           model_options={"num_ctx": 16384, "temperature": 0.1})
        turn = LiteLLMModel("ollama_chat/qwen3", settings).complete(
            [{"role": "user", "content": "hi"}], [])
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(timeout=5)
    assert turn.text == "ok" and turn.usage.prompt_tokens == 11
    assert srv.requests[0]["path"] == "/api/chat"
    options = srv.requests[0]["body"]["options"]
    assert (options["num_ctx"], options["temperature"]) == (16384, 0.1)


def test_a_refused_key_stops_the_run(tmp_path: Path, server: FakeOpenAI,
                                     network_log: list[str]) -> None:
    """Permanent for the run: the remaining units are not sent to a backend that refused the
    key; one line, exit 2."""
    vault = copy_vault(tmp_path)
    before = tree_bytes(vault)
    server.replies = [(401, error_body("Incorrect API key provided"), {})]
    other = Unit(name="Another", bucket="wiki", summary="s", paths=(NEW_PATH,))
    with pytest.raises(RunModelError) as info:
        integrate(vault, load_settings(vault, env={}), [UNIT, other], make(vault, server),
                  index=TermIndex(vault))
    assert info.value.exit_code == 2 and "\n" not in str(info.value)
    assert str(info.value).startswith("openai/test-model: authentication failed: Incorrect API "
                                      "key provided (the provider refused the key")
    assert len(server.requests) == 1
    assert {k: v for k, v in tree_bytes(vault).items() if k != ".remelink/lock"} == before


def test_context_window_exceeded_fails_at_once_with_its_own_hint(
        tmp_path: Path, server: FakeOpenAI, network_log: list[str]) -> None:
    vault = copy_vault(tmp_path)
    body = {"error": {"message": "This model's maximum context length is 8192 tokens. However, "
                                 "your messages resulted in 9000 tokens.",
                      "type": "invalid_request_error", "code": "context_length_exceeded",
                      "param": "messages"}}
    server.replies = [(400, body, {})]
    sleeps: list[float] = []
    with pytest.raises(UnitModelError) as info:
        make(vault, server, sleeps=sleeps).complete([{"role": "user", "content": "hi"}], [])
    message = str(info.value)
    assert message.startswith("openai/test-model: the conversation no longer fits the model's "
                              "context window: This model's maximum context length is 8192")
    assert message.endswith("(use a model with a larger one (for Ollama raise "
                            "model_options.num_ctx), or lower auto_dream.max_steps)")
    assert len(server.requests) == 1 and sleeps == []


# -- answers that are no answer, cut answers, refusals (issue 23) -------------------------------

def empty_choices(prompt: int) -> dict[str, Any]:
    return {"id": "x", "object": "chat.completion", "created": 1, "model": "m", "choices": [],
            "usage": {"prompt_tokens": prompt, "completion_tokens": 0, "total_tokens": prompt}}


def test_an_answer_without_choices_is_retried_and_its_tokens_counted(
        tmp_path: Path, server: FakeOpenAI, network_log: list[str]) -> None:
    vault = copy_vault(tmp_path)
    server.replies = [(200, empty_choices(11), {})] + [(200, body, {}) for body in GOOD_TURNS]
    sleeps: list[float] = []
    result = integrate_unit(context(vault, make(vault, server, sleeps=sleeps)), UNIT)
    assert result.ok, result.error
    assert len(sleeps) == 1 and len(server.requests) == 5
    assert result.usage.prompt_tokens == 400 + 11  # the empty answer was charged, and counted


def test_answers_without_choices_past_the_retries_fail_the_unit_counted(
        tmp_path: Path, server: FakeOpenAI, network_log: list[str]) -> None:
    vault = copy_vault(tmp_path)
    server.replies = [(200, empty_choices(7), {})] * 3
    result = integrate_unit(context(vault, make(vault, server, retries=2)), UNIT)
    assert result.failure == "transient" and result.usage.prompt_tokens == 21
    assert result.error == ("openai/test-model: the provider answered without choices after 3 "
                            "attempt(s)")


def test_a_content_filter_stop_fails_the_unit_at_once(
        tmp_path: Path, server: FakeOpenAI, network_log: list[str]) -> None:
    vault = copy_vault(tmp_path)
    body = completion(content=None)
    body["choices"][0]["finish_reason"] = "content_filter"
    server.replies = [(200, body, {})]
    result = integrate_unit(context(vault, make(vault, server)), UNIT)
    assert result.failure == "unit" and len(server.requests) == 1
    assert result.error == "openai/test-model: the provider's content filter stopped the answer"
    assert result.usage.prompt_tokens == 100


def test_a_refusal_is_quoted_back_and_the_unit_goes_on(
        tmp_path: Path, server: FakeOpenAI, network_log: list[str]) -> None:
    vault = copy_vault(tmp_path)
    refusal = completion(content=None)
    refusal["choices"][0]["message"]["refusal"] = "I can't help with that request."
    server.replies = [(200, refusal, {})] + [(200, body, {}) for body in GOOD_TURNS]
    result = integrate_unit(context(vault, make(vault, server)), UNIT)
    assert result.ok, result.error
    told = server.requests[1]["body"]["messages"][-1]
    assert told["role"] == "user"
    assert 'no receipt found (your answer was "I can\'t help with that request.")' in \
        told["content"]


def test_a_cut_write_is_answered_as_cut(tmp_path: Path, server: FakeOpenAI,
                                        network_log: list[str]) -> None:
    vault = copy_vault(tmp_path)
    cut = completion(tool_calls=[("call_edit", "edit", {"path": NODE, "old": "x", "new": "y"})],
                     completion_tokens=800)
    call = cut["choices"][0]["message"]["tool_calls"][0]["function"]
    call["arguments"] = call["arguments"][:20]
    cut["choices"][0]["finish_reason"] = "length"
    server.replies = [(200, cut, {})] + [(200, body, {}) for body in GOOD_TURNS[2:]]
    result = integrate_unit(context(vault, make(vault, server)), UNIT)
    assert result.ok, result.error
    said = server.requests[1]["body"]["messages"][-1]
    assert said["role"] == "tool" and said["content"].startswith(
        "Error: not run: your output was cut at 800 tokens (the model's output limit)")


# -- every class litellm raises, by what it stops (SPEC §7.2 "Errors by kind") ------------------

def _err(message: str, kind: str = "invalid_request_error",
         code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "code": code, "param": None}}


# (status, body, what litellm raises for it, the kind, the words of the one line)
FAULTS = [
    (429, _err("Rate limit reached", "requests"), "RateLimitError", "transient", "rate limited"),
    (500, _err("boom", "server_error"), "InternalServerError", "transient", "server error (500)"),
    (502, _err("bad gateway"), "BadGatewayError", "transient", "server error (502)"),
    (503, _err("overloaded"), "ServiceUnavailableError", "transient", "overloaded"),
    (529, _err("overloaded"), "APIError", "transient", "overloaded"),
    (200, {"hello": "world"}, "InternalServerError", "transient", "server error (500)"),
    (400, _err("This model's maximum context length is 8192 tokens.",
               code="context_length_exceeded"), "ContextWindowExceededError", "unit",
     "the conversation no longer fits the model's context window"),
    (400, _err("Your request was rejected as a result of our safety system.",
               code="content_policy_violation"), "BadRequestError", "unit",
     "the provider's content policy refused the request"),
    (400, _err("Invalid value for 'tool_choice'."), "BadRequestError", "unit",
     "the provider rejected the request as invalid"),
    (422, _err("unprocessable"), "BadRequestError", "unit",
     "the provider rejected the request as invalid"),
    (401, _err("Incorrect API key provided"), "AuthenticationError", "run",
     "authentication failed"),
    (403, _err("Project does not have access to model", "permission_error"), "APIError", "run",
     "authentication failed"),
    (404, _err("The model `gpt-9` does not exist", code="model_not_found"), "NotFoundError",
     "run", "unknown model or endpoint"),
    (429, _err("You exceeded your current quota, please check your plan and billing details.",
               "insufficient_quota", "insufficient_quota"), "RateLimitError", "run",
     "the account's quota is exhausted"),
    (402, _err("payment required", "billing"), "APIError", "run",
     "the account's quota is exhausted"),
]


@pytest.mark.parametrize(("status", "body", "raised", "kind", "words"), FAULTS,
                         ids=[f"{f[0]}-{f[2]}-{f[3]}" for f in FAULTS])
def test_each_class_litellm_raises_has_its_kind(
        tmp_path: Path, server: FakeOpenAI, network_log: list[str], status: int,
        body: dict[str, Any], raised: str, kind: str, words: str) -> None:
    from remelink.models import litellm_model
    from remelink.models.provider_errors import classify

    vault = copy_vault(tmp_path)
    server.replies = [(status, body, {})] * 3
    sleeps: list[float] = []
    with pytest.raises(ModelError) as info:
        make(vault, server, retries=2, sleeps=sleeps).complete(
            [{"role": "user", "content": "hi"}], [])
    assert info.value.kind == kind
    assert str(info.value).startswith(f"openai/test-model: {words}"), str(info.value)
    assert "\n" not in str(info.value)
    # Retried only when a retry may help; RUN errors are exit 2.
    assert len(server.requests) == (3 if kind == "transient" else 1)
    assert info.value.exit_code == (2 if kind == "run" else 1)
    # The class litellm raised (the table says which; read from a direct call).
    litellm = litellm_model._import_litellm()
    server.replies = [(status, body, {})]
    try:
        litellm.completion(model="openai/test-model", api_base=server.base, num_retries=0,
                           messages=[{"role": "user", "content": "hi"}], timeout=10)
    except Exception as exc:
        assert type(exc).__name__ == raised
        assert classify(exc).kind == kind


def test_the_classes_without_an_http_status(tmp_path: Path, network_log: list[str]) -> None:
    """Timeouts, refused connections and an unknown provider, through litellm's request path."""
    import socket

    from remelink.models import litellm_model
    from remelink.models.provider_errors import classify

    litellm = litellm_model._import_litellm()
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)  # accepts, never answers
    port = listener.getsockname()[1]
    cases = {"timeout": f"http://127.0.0.1:{port}/v1"}
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    cases["refused"] = f"http://127.0.0.1:{closed.getsockname()[1]}/v1"
    closed.close()
    got = {}
    for name, base in cases.items():
        try:
            litellm.completion(model="openai/test-model", api_base=base, num_retries=0,
                               messages=[{"role": "user", "content": "hi"}], timeout=0.3)
        except Exception as exc:
            got[name] = (type(exc).__name__, classify(exc).kind)
    listener.close()
    try:
        litellm.completion(model="nosuchprovider/m", num_retries=0,
                           messages=[{"role": "user", "content": "hi"}])
    except Exception as exc:
        got["provider"] = (type(exc).__name__, classify(exc).kind)
    assert got == {"timeout": ("Timeout", "transient"),
                   "refused": ("InternalServerError", "transient"),
                   "provider": ("BadRequestError", "run")}
