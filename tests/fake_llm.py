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

import hashlib
import json
import random
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MATERIAL_RE = re.compile(r"^### (\S+)\n(.*?)(?=^### |\Z)", re.S | re.M)
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
            return {"content": json.dumps({"tags": []})}
        if "Unit to integrate:" in users[0] or "要整合的单元：" in users[0]:
            return self._integrate(messages, users[0])
        return {"content": "I do not know this task."}

    # -- extraction --------------------------------------------------------------------------
    def _unit(self, path: str, text: str, rng: random.Random, careless: bool) -> dict[str, Any]:
        body = [ln.strip() for ln in text.splitlines() if ln.strip()]
        title = body[0].lstrip("#- ").rstrip(".。")
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
        if not results:
            sources = " ".join(f"This is recorded in [[{p}]]." for p in unit["paths"])
            body = f"{unit['summary']}\n\n## Sources\n\n{sources}\n"
            call = {"id": "w1", "type": "function", "function": {"name": "write", "arguments":
                    json.dumps({"path": target, "name": unit["name"],
                                "description": unit["summary"][:200], "content": body},
                               ensure_ascii=False)}}
            return {"content": None, "tool_calls": [call]}
        return {"content": json.dumps({"action": "CREATE", "target_path": target,
                                       "note": "new node"})}


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


@contextmanager
def serve(mind: CarelessMind) -> Iterator[str]:
    """The mind on 127.0.0.1; yields the api_base."""
    server = _Server(mind)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
