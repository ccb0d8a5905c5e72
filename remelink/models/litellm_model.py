"""The litellm backend: the only module that imports litellm, lazily, offline-safe.

Before the import the cost-map fetch and litellm's other network look-ups are switched off
(`LITELLM_LOCAL_MODEL_COST_MAP`, `LITELLM_OFFLINE_MODE`): otherwise every process that imports
it reaches for raw.githubusercontent.com, which costs up to ~5 s on a silent network. Retries
are ours (litellm's `num_retries=0`), with exponential backoff and jitter on rate limits,
timeouts, connection and server errors; auth and request errors fail at once with one line.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable, Sequence
from typing import Any

from remelink.config import Settings
from remelink.errors import ModelError
from remelink.models.base import AssistantTurn, Message, ToolCall, ToolSpec, Usage

_litellm: Any = None


def _import_litellm() -> Any:
    global _litellm
    if _litellm is None:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
        try:
            import litellm
        except ImportError:
            raise ModelError("the LLM engine needs litellm: pip install 'remelink[llm]' "
                             "(or use model: local)") from None
        litellm.telemetry = False
        litellm.suppress_debug_info = True
        _litellm = litellm
    return _litellm


def _retryable(litellm: Any) -> tuple[type[BaseException], ...]:
    names = ("RateLimitError", "APIConnectionError", "Timeout", "ServiceUnavailableError",
             "InternalServerError", "APIError")
    return tuple(getattr(litellm, n) for n in names if isinstance(getattr(litellm, n, None), type))


def _wire_messages(messages: Sequence[Message]) -> list[Message]:
    out = []
    for m in messages:
        msg = dict(m)
        if msg.get("role") == "tool":
            msg.pop("name", None)  # not part of the OpenAI tool message; some servers reject it
        out.append(msg)
    return out


class LiteLLMModel:
    def __init__(self, model: str, settings: Settings, *,
                 sleep: Callable[[float], None] = time.sleep,
                 extra: dict[str, Any] | None = None) -> None:
        self.name = model
        self.settings = settings
        self.sleep = sleep
        self.extra = dict(extra or {})

    def complete(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> AssistantTurn:
        litellm = _import_litellm()
        retryable = _retryable(litellm)
        kwargs: dict[str, Any] = {
            "model": self.name,
            "messages": _wire_messages(messages),
            "timeout": self.settings.timeout,
            "num_retries": 0,
            **self.extra,
        }
        if tools:
            kwargs["tools"] = list(tools)
            kwargs["tool_choice"] = "auto"
        if self.settings.api_base:
            kwargs["api_base"] = self.settings.api_base
        attempts = self.settings.retries + 1
        for attempt in range(1, attempts + 1):
            try:
                response = litellm.completion(**kwargs)
                return _to_turn(response)
            except retryable as exc:
                if attempt >= attempts:
                    raise ModelError(f"{self.name}: {type(exc).__name__} after {attempt} "
                                     f"attempt(s): {_short(exc)}") from None
                self.sleep(_backoff(attempt, exc))
            except Exception as exc:
                raise ModelError(f"{self.name}: {type(exc).__name__}: {_short(exc)}",
                                 hint=_hint(exc)) from None
        raise ModelError(f"{self.name}: no response")  # pragma: no cover - loop always returns


def _backoff(attempt: int, exc: BaseException) -> float:
    retry_after = None
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is not None:
        try:
            retry_after = float(headers.get("retry-after"))
        except (TypeError, ValueError):
            retry_after = None
    base = min(30.0, 0.5 * 2 ** (attempt - 1))
    return retry_after if retry_after is not None and 0 <= retry_after <= 60 else \
        base * (0.5 + random.random() / 2)


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:300] + ("..." if len(text) > 300 else "")


def _hint(exc: BaseException) -> str | None:
    name = type(exc).__name__
    if "ContextWindow" in name:
        return "the conversation no longer fits the model's context window; use a model with a " \
               "larger one, or lower auto_dream.max_steps"
    if "Authentication" in name:
        return "set the provider's API key in its own environment variable (e.g. OPENAI_API_KEY)"
    if "NotFound" in name or "BadRequest" in name:
        return "check the model id and api_base"
    return None


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)


def _to_turn(response: Any) -> AssistantTurn:
    choices = _get(response, "choices") or []
    if not choices:
        raise ModelError("model returned no choices")
    message = _get(choices[0], "message")
    text = _get(message, "content")
    calls = []
    for i, call in enumerate(_get(message, "tool_calls") or []):
        fn = _get(call, "function")
        args = _get(fn, "arguments")
        if not isinstance(args, str):
            import json

            args = json.dumps(args if args is not None else {}, ensure_ascii=False)
        calls.append(ToolCall(id=str(_get(call, "id") or f"call_{i}"),
                              name=str(_get(fn, "name") or ""), arguments=args))
    usage = _get(response, "usage")
    return AssistantTurn(
        text=text if isinstance(text, str) else None,
        tool_calls=tuple(calls),
        usage=Usage(int(_get(usage, "prompt_tokens") or 0),
                    int(_get(usage, "completion_tokens") or 0)) if usage else Usage(),
    )
