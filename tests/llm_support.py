"""The loopback OpenAI-compatible server the litellm tests drive: http.server in a thread on
127.0.0.1, answering POST /v1/chat/completions. Replies come from a queue (`replies`: scripted
status, body and headers) or, when the queue is empty and `policy` is set, from the policy: a
function of the request body, which plays a model (tests/test_litellm_realistic.py). Every
request is recorded with the prompt tokens the server charged for it.
"""

from __future__ import annotations

import json
import threading
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Policy = Callable[[dict[str, Any]], dict[str, Any]]


class FakeOpenAI(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.replies: list[tuple[int, dict[str, Any], dict[str, str]]] = []
        self.requests: list[dict[str, Any]] = []
        self.policy: Policy | None = None
        self.errors: list[str] = []
        self.lock = threading.Lock()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    @property
    def prompt_tokens(self) -> int:
        """What the server charged in all: the figure a run's accounting must match."""
        return sum(r["prompt_tokens"] for r in self.requests)


def charge(body: dict[str, Any]) -> int:
    """Prompt tokens of a request as this server counts them: about 4 characters a token."""
    return max(1, len(json.dumps([body.get("messages"), body.get("tools")],
                                 ensure_ascii=False)) // 4)


class _Handler(BaseHTTPRequestHandler):
    server: FakeOpenAI

    def do_POST(self) -> None:  # http.server's naming
        length = int(self.headers.get("content-length", "0"))
        body = json.loads(self.rfile.read(length) or b"{}")
        with self.server.lock:
            if self.server.replies:
                status, payload, headers = self.server.replies.pop(0)
            elif self.server.policy is not None:
                try:
                    status, payload, headers = 200, self.server.policy(body), {}
                except Exception:  # a bug in the test's policy: fail the test, not the unit
                    self.server.errors.append(traceback.format_exc())
                    status, payload, headers = 400, error_body("policy failed", "test"), {}
            else:
                status, payload, headers = 500, error_body("script exhausted"), {}
            if status == 200 and self.server.policy is not None:
                payload["usage"] = {"prompt_tokens": charge(body), "completion_tokens": 20,
                                    "total_tokens": charge(body) + 20}
            tokens = int(payload.get("usage", {}).get("prompt_tokens", 0)) if status == 200 \
                else 0
            self.server.requests.append({
                "path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()},
                "body": body, "prompt_tokens": tokens})
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def serving() -> Iterator[FakeOpenAI]:
    from fake_llm import running

    with running(FakeOpenAI()) as srv:
        yield srv


def completion(*, tool_calls: list[tuple[str, str, dict[str, Any]]] | None = None,
               content: str | None = None, prompt: int = 100,
               completion_tokens: int = 10) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = [
            {"id": cid, "type": "function",
             "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}
            for cid, name, args in tool_calls]
    return {"id": "chatcmpl-test", "object": "chat.completion", "created": 1767225600,
            "model": "test-model",
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if tool_calls else "stop"}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion_tokens,
                      "total_tokens": prompt + completion_tokens}}


def error_body(message: str, kind: str = "server_error") -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "code": None, "param": None}}
