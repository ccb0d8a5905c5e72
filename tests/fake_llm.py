"""A careless LLM behind an OpenAI-compatible loopback server, for the coverage properties of
the LLM path (SPEC §8) driven through litellm's real request path.

It answers from the request alone (stateless, like a real API): extraction from the notes in
the prompt, integration by writing one node that cites the unit's notes, tagging with no tags.
On the first answer of an extraction conversation it misbehaves, as models do: it leaves out
some notes (no unit, no verdict), mangles paths (`2026-06-20/x.md`, `./daily/...`, a leading
`/`, no `.md`), uses bucket words that are not buckets (`preference`, `procedures`, `howto`,
`knowledge`, `concept`, and `recipes`, which must come back as a repair), and ignores the page
size (all units at once) or pages properly, at random. Answering a repair turn, it fixes what it
did wrong, except for "stubborn" notes, which it never judges: those must stay pending.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import random
import re
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol, TypeVar

MATERIAL_RE = re.compile(r"^### (\S+)\n(.*?)(?=^### |\Z)", re.S | re.M)
NAMES = ("Alice", "Priya", "Stripe")  # what the careless model tags, when a node names it
CHATTER_RE = re.compile(r"^(thanks|attendees|good morning)", re.I)
SYNONYMS = {"procedure": ["procedures", "howto", "procedure"],
            "personal": ["preference", "preferences", "personal"],
            "wiki": ["knowledge", "concept", "wiki"]}


def _json_block(text: str) -> dict[str, Any]:
    m = re.search(r"```json\s*\n", text)
    if not m:
        return {}
    try:
        data, _ = json.JSONDecoder().raw_decode(text, m.end())
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _mangle(path: str, rng: random.Random) -> str:
    choice = rng.randrange(5)
    if choice == 0:
        return path.removeprefix("daily/")            # 2026-06-20/x.md
    if choice == 1:
        return "./" + path
    if choice == 2:
        return "/" + path
    if choice == 3:
        return path.removesuffix(".md")
    return path


class Mind(Protocol):
    def respond(self, messages: list[dict[str, Any]]) -> dict[str, Any]: ...


class CarelessMind:
    def __init__(self, *, seed: int = 0, stubborn: frozenset[str] = frozenset(),
                 omit: float = 0.3) -> None:
        self.seed, self.stubborn, self.omit = seed, stubborn, omit
        self.calls = 0
        self.repairs_seen = 0
        self.continues_seen = 0
        self.lock = threading.Lock()

    # -- the seam ----------------------------------------------------------------------------
    def respond(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        with self.lock:
            self.calls += 1
        users = [str(m.get("content") or "") for m in messages if m.get("role") == "user"]
        task = _json_block(users[0]) if users else {}
        if task.get("task") == "extract":
            return self._extract(task, users)
        if task.get("task") == "tag":
            if "paths" in task:  # several nodes in one request (LLM tagging): known names
                texts = {m.group(1): m.group(2) for m in MATERIAL_RE.finditer(users[0])}
                return {"content": json.dumps({"tags": {
                    p: [n for n in NAMES if n in texts.get(p, "")] for p in task["paths"]}})}
            return {"content": json.dumps({"tags": []})}
        if "Unit to integrate:" in users[0] or "要整合的单元：" in users[0]:
            return self._integrate(messages, users[0])
        return {"content": "I do not know this task."}

    # -- extraction --------------------------------------------------------------------------
    def _unit(self, path: str, text: str, rng: random.Random, careless: bool) -> dict[str, Any]:
        text = re.sub(r"\A---\n.*?\n---\n", "", text, flags=re.S)  # frontmatter is no title
        body = [ln.strip() for ln in text.splitlines() if ln.strip()] or [path]
        title = body[0].lstrip("#- ").rstrip(".。") or path
        if title.lower().startswith("how to") or "1. " in text:
            bucket = "procedure"
        elif "prefers" in text:
            bucket = "personal"
        else:
            bucket = "wiki"
        word = rng.choice(SYNONYMS[bucket]) if careless else bucket
        steps = [ln[3:] for ln in body if re.match(r"\d\. ", ln)]
        unit: dict[str, Any] = {"name": title[:80], "bucket": word,
                                "summary": " ".join(b.lstrip("#- ") for b in body)[:400],
                                "paths": [_mangle(path, rng) if careless else path]}
        if steps:
            unit["points"] = [f"step: {s}" for s in steps]
        return unit

    def _extract(self, task: dict[str, Any], users: list[str]) -> dict[str, Any]:
        paths = [str(p) for p in task.get("changed_paths") or []]
        texts = {m.group(1): m.group(2) for m in MATERIAL_RE.finditer(users[0])}
        # Every later user message is a continue turn or a repair turn (in either language).
        repaired = any('"continue"' not in u for u in users[1:])
        after = 0
        for text in users[1:]:
            m = re.search(r'"continue":\s*\{\s*"after":\s*(\d+)', text)
            if m:
                after = int(m.group(1))
        with self.lock:
            self.repairs_seen += int(len(users) > 1 and '"continue"' not in users[-1])
            self.continues_seen += int(bool(re.search(r'"continue"', users[-1])) and
                                       len(users) > 1)
        key = hashlib.sha256(f"{self.seed}:{':'.join(paths)}".encode()).digest()
        rng = random.Random(key)
        careless = not repaired
        units, verdicts = [], []
        for path in paths:
            if path in self.stubborn or (careless and rng.random() < self.omit):
                continue
            text = texts.get(path, "")
            if CHATTER_RE.match(text.strip()):
                verdicts.append({"path": _mangle(path, rng) if careless else path,
                                 "verdict": "nothing", "reason": "greetings or attendance only"})
                continue
            units.append(self._unit(path, text, rng, careless))
            verdicts.append({"path": path, "verdict": "units"})
        if careless and units:
            units[rng.randrange(len(units))]["bucket"] = "recipes"  # must come back as a repair
        page = int(task.get("max_units") or 0)
        paged = page and rng.random() < 0.5  # else: too many units in one answer
        if paged:
            shown, more = units[after:after + page], after + page < len(units)
        else:
            shown, more = units[after:], False
        return {"content": json.dumps({"units": shown, "verdicts": verdicts, "more": more},
                                      ensure_ascii=False)}

    # -- integration -------------------------------------------------------------------------
    def _integrate(self, messages: list[dict[str, Any]], first: str) -> dict[str, Any]:
        unit = _json_block(first)
        results = [m for m in messages if m.get("role") == "tool"]
        digest = hashlib.sha256(json.dumps(unit, sort_keys=True).encode()).hexdigest()[:10]
        target = f"digest/{unit['bucket']}/node-{digest}.md"
        refused = bool(results) and str(results[-1].get("content") or "").startswith("Error:")
        told = messages[-1].get("role") == "user" and len(messages) > 2 and \
            not any(str(r.get("content") or "").startswith("Staged") for r in results)
        if not results or refused or told:  # first turn, or its write did not land: write
            sources = " ".join(f"This is recorded in [[{p}]]." for p in unit["paths"])
            body = f"{unit['summary']}\n\n## Sources\n\n{sources}\n"
            call = {"id": "w1", "type": "function", "function": {"name": "write", "arguments":
                    json.dumps({"path": target, "name": unit["name"],
                                "description": unit["summary"][:200], "content": body},
                               ensure_ascii=False)}}
            return {"content": None, "tool_calls": [call]}
        return {"content": json.dumps({"action": "CREATE", "target_path": target,
                                       "note": "new node"})}


class PolicyMind:
    """A policy that answers whole request bodies with a chat.completion (bench/llm_policy.py's
    decent model: it also updates the nodes it recalls, with an edit) as a mind for the fault
    server."""

    def __init__(self, policy: Any) -> None:
        self.policy = policy
        self.calls = 0
        self.lock = threading.Lock()

    def respond(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        with self.lock:
            self.calls += 1
        answer = self.policy({"messages": messages})
        message = dict(answer["choices"][0]["message"])
        message.pop("role", None)
        return message


def _completion(message: dict[str, Any]) -> dict[str, Any]:
    message = {"role": "assistant", **message}
    return {"id": "chatcmpl-fake", "object": "chat.completion", "created": 1767225600,
            "model": "fake", "usage": {"prompt_tokens": 10, "completion_tokens": 5,
                                       "total_tokens": 15},
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}]}


class JsonHandler(BaseHTTPRequestHandler):
    """A quiet loopback handler that reads a JSON request body and answers with JSON (the
    base of every fake provider in the tests)."""

    def read_json(self) -> tuple[bytes, Any]:
        """The request body, raw and parsed (`{}` when empty)."""
        raw = self.rfile.read(int(self.headers.get("content-length", "0")))
        return raw, json.loads(raw or b"{}")

    def send_json(self, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


class _Handler(JsonHandler):
    server: _Server

    def do_POST(self) -> None:  # http.server's naming
        _, body = self.read_json()
        self.send_json(_completion(self.server.mind.respond(body["messages"])))


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, mind: CarelessMind) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.mind = mind



S = TypeVar("S", bound=ThreadingHTTPServer)

@contextmanager
def running(server: S) -> Iterator[S]:
    """`server` answering on its own thread until the block ends (every loopback provider of the
    tests starts and stops this way)."""
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02},
                              daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@contextmanager
def serve(mind: CarelessMind) -> Iterator[str]:
    """The mind on 127.0.0.1; yields the api_base."""
    server = _Server(mind)
    with running(server):
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"


# -- provider faults ---------------------------------------------------------------------------
def charge(body: dict[str, Any]) -> int:
    """Prompt tokens of a request as the fault server counts them: about 4 characters each."""
    return max(1, len(json.dumps([body.get("messages"), body.get("tools")],
                                 ensure_ascii=False)) // 4)


def _error(message: str, kind: str, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "code": code, "param": None}}


# Each fault: what the provider does instead of (or to) the model's answer.
TRANSIENT_FAULTS = ("rate_limit", "rate_limit_wait", "server_error", "bad_gateway", "overloaded",
                    "timeout", "reset", "no_choices", "no_answer", "empty_answer")
MODEL_FAULTS = ("length", "refusal", "control_char")   # the model's answer goes wrong
UNIT_FAULTS = ("context_length", "content_policy", "invalid_request")
RUN_FAULTS = ("auth", "unknown_model", "quota")
ALL_FAULTS = TRANSIENT_FAULTS + MODEL_FAULTS + UNIT_FAULTS + RUN_FAULTS
RETRY_AFTER_OVER_CAP = "rate_limit_long"  # Retry-After above retry_after_max: fails the call


class Faults:
    """A fault schedule: each request draws whether a fault hits it (`rate`) and which one
    (`kinds`); `at` forces a fault on given request numbers (1-based). Records every request
    with what the server charged for it.

    The draw is seeded by the request itself (the seed, its messages and tools, and how many
    times the same request came before), not by its arrival order: units that run side by side
    meet the same faults whichever thread asks first, and a retry draws afresh."""

    def __init__(self, kinds: tuple[str, ...] = (), rate: float = 0.0, *, seed: int = 0,
                 at: dict[int, str] | None = None, timeout_sleep: float = 0.6,
                 only: str | None = None) -> None:
        self.kinds, self.rate, self.at = kinds, rate, dict(at or {})
        self.only = only  # faults hit only requests of this task (extract, integrate, tag)
        self.seed = seed
        self.seen: dict[str, int] = {}  # request digest -> times asked
        self.timeout_sleep = timeout_sleep
        self.requests = 0
        self.charged = 0          # prompt tokens of every answer the server sent with a usage
        # Of those, the answers sent later than `late_after` seconds after the request came in:
        # on a loaded machine the client may have timed out on them (and retried), so it never
        # read their usage. None: no client timeout to fear.
        self.late_after: float | None = None
        self.late = 0
        self.hits: dict[str, int] = {}
        self.log: list[tuple[str, str | None]] = []  # (task, fault) per request
        self.fault_at: dict[str, list[int]] = {}  # fault -> the request numbers it hit
        self.firsts: list[int] = []  # request numbers that open a unit's conversation
        self.opened: set[str] = set()  # the units opened so far (see _unit_key)
        self.lock = threading.Lock()

    def draw(self, task: str = "", body: dict[str, Any] | None = None) -> str | None:
        digest = hashlib.sha256(json.dumps(
            [(body or {}).get("messages"), (body or {}).get("tools")], sort_keys=True,
            ensure_ascii=False).encode()).hexdigest()
        with self.lock:
            self.requests += 1
            self.seen[digest] = times = self.seen.get(digest, 0) + 1
            # A unit's opening request, the first time that unit is opened: a retry of it
            # (after a timeout or a 5xx) or a second conversation (a unit that ran stale runs
            # once more, with new candidates) starts no new unit.
            messages = (body or {}).get("messages") or []
            if task == "integrate" and not any(m.get("role") == "assistant" for m in messages):
                unit = _unit_key(messages)
                if unit not in self.opened:
                    self.opened.add(unit)
                    self.firsts.append(self.requests)
            fault = self.at.get(self.requests)
            if self.only is not None and task != self.only:
                return None
            rng = random.Random(f"{self.seed}:{digest}:{times}")
            if fault is None and self.kinds and rng.random() < self.rate:
                fault = rng.choice(self.kinds)
            if fault is not None:
                self.hits[fault] = self.hits.get(fault, 0) + 1
                self.fault_at.setdefault(fault, []).append(self.requests)
            return fault

    def add(self, tokens: int, elapsed: float = 0.0) -> None:
        with self.lock:
            self.charged += tokens
            if self.late_after is not None and elapsed > self.late_after:
                self.late += tokens


_UNIT_FIELDS_RE = re.compile(r'"(?:name|paths)": (?:"(?:[^"\\]|\\.)*"|\[[^\]]*\])')


def _unit_key(messages: list[dict[str, Any]]) -> str:
    """Which unit a conversation integrates: its name and paths as the user message gives them
    (the candidates around them change between a unit's conversations)."""
    users = [str(m.get("content") or "") for m in messages if m.get("role") == "user"]
    found = _UNIT_FIELDS_RE.findall(users[0]) if users else []
    name = next((f for f in found if f.startswith('"name"')), "")
    paths = next((f for f in found if f.startswith('"paths"')), "")
    return f"{name} {paths}"


def _task_of(messages: list[dict[str, Any]]) -> str:
    users = [str(m.get("content") or "") for m in messages if m.get("role") == "user"]
    first = users[0] if users else ""
    for name in ("extract", "tag"):
        if f'"task": "{name}"' in first:
            return name
    return "integrate"


class _FaultyHandler(JsonHandler):
    server: _FaultyServer

    def do_POST(self) -> None:  # http.server's naming
        started = time.monotonic()
        _, body = self.read_json()
        faults = self.server.faults
        task = _task_of(body["messages"])
        fault = faults.draw(task, body)
        with faults.lock:
            faults.log.append((task, fault))
        tokens = charge(body)
        if fault == "timeout":
            time.sleep(faults.timeout_sleep)  # the client gave up before this
            return self._drop()
        if fault == "reset":
            return self._drop()
        status, payload, headers = self._fault(fault, body, tokens)
        if status == 200 and "usage" in payload:
            faults.add(int(payload["usage"]["prompt_tokens"]), time.monotonic() - started)
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _drop(self) -> None:
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def _answer(self, body: dict[str, Any], tokens: int) -> dict[str, Any]:
        answer = _completion(self.server.mind.respond(body["messages"]))
        answer["usage"] = {"prompt_tokens": tokens, "completion_tokens": 20,
                           "total_tokens": tokens + 20}
        return answer

    def _fault(self, fault: str | None, body: dict[str, Any], tokens: int
               ) -> tuple[int, dict[str, Any], dict[str, str]]:
        usage = {"prompt_tokens": tokens, "completion_tokens": 0, "total_tokens": tokens}
        if fault is None:
            return 200, self._answer(body, tokens), {}
        if fault == "rate_limit":
            return 429, _error("Rate limit reached for requests", "requests"), {}
        if fault == "rate_limit_wait":
            return 429, _error("Rate limit reached for requests", "requests"), \
                {"retry-after": "0.01"}
        if fault == RETRY_AFTER_OVER_CAP:
            return 429, _error("Rate limit reached for requests", "requests"), \
                {"retry-after": "3600"}
        if fault == "server_error":
            return 500, _error("The server had an error", "server_error"), {}
        if fault == "bad_gateway":
            return 502, _error("Bad gateway", "server_error"), {}
        if fault == "overloaded":
            return 503, _error("The engine is currently overloaded", "server_error"), \
                {"retry-after": "0"}
        if fault == "no_choices":
            return 200, {"id": "x", "object": "chat.completion", "created": 1, "model": "m",
                         "choices": [], "usage": usage}, {}
        if fault == "no_answer":  # a body that is no completion at all
            return 200, {"hello": "world"}, {}
        if fault == "empty_answer":
            return 200, {**_completion({"content": ""}), "usage": usage}, {}
        if fault == "length":
            answer = self._answer(body, tokens)
            message = answer["choices"][0]["message"]
            for call in message.get("tool_calls") or []:
                args = call["function"]["arguments"]
                call["function"]["arguments"] = args[:max(1, len(args) // 2)]
            if message.get("content"):
                message["content"] = message["content"][:max(1, len(message["content"]) // 2)]
            answer["choices"][0]["finish_reason"] = "length"
            return 200, answer, {}
        if fault == "refusal":
            answer = _completion({"content": None, "refusal": "I can't help with that request."})
            answer["usage"] = usage
            return 200, answer, {}
        if fault == "control_char":
            answer = self._answer(body, tokens)
            message = answer["choices"][0]["message"]
            for call in message.get("tool_calls") or []:
                call["function"]["arguments"] = call["function"]["arguments"].replace(
                    "\\n", "\n")
            if message.get("content"):
                message["content"] = message["content"].replace("\\n", "\n")
            return 200, answer, {}
        if fault == "context_length":
            return 400, _error("This model's maximum context length is 8192 tokens. However, "
                               "your messages resulted in 9000 tokens.", "invalid_request_error",
                               "context_length_exceeded"), {}
        if fault == "content_policy":
            return 400, _error("Your request was rejected as a result of our safety system.",
                               "invalid_request_error", "content_policy_violation"), {}
        if fault == "invalid_request":
            return 400, _error("Invalid 'messages[2].content': string too long.",
                               "invalid_request_error"), {}
        if fault == "auth":
            return 401, _error("Incorrect API key provided: sk-test***. You can find your API "
                               "key at https://platform.openai.com/account/api-keys.",
                               "invalid_request_error", "invalid_api_key"), {}
        if fault == "unknown_model":
            return 404, _error("The model `gpt-9` does not exist or you do not have access to "
                               "it.", "invalid_request_error", "model_not_found"), {}
        if fault == "quota":
            return 429, _error("You exceeded your current quota, please check your plan and "
                               "billing details.", "insufficient_quota", "insufficient_quota"), {}
        raise AssertionError(f"unknown fault {fault}")


class _FaultyServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, mind: Mind, faults: Faults) -> None:
        super().__init__(("127.0.0.1", 0), _FaultyHandler)
        self.mind, self.faults = mind, faults

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that gave up (a timeout) leaves a broken pipe behind: expected


@contextmanager
def serve_faults(mind: Mind, faults: Faults) -> Iterator[str]:
    """The mind on 127.0.0.1 behind a provider that fails as `faults` says; yields api_base."""
    server = _FaultyServer(mind, faults)
    with running(server):
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
