"""The litellm backend: the only module that imports litellm, lazily, offline-safe.

Before the import the cost-map fetch and litellm's other network look-ups are switched off
(`LITELLM_LOCAL_MODEL_COST_MAP`, `LITELLM_OFFLINE_MODE`): otherwise every process that imports
it reaches for raw.githubusercontent.com, which costs up to ~5 s on a silent network. Retries
are ours (litellm's `num_retries=0`), with exponential backoff and jitter on rate limits,
timeouts, connection and server errors; auth and request errors fail at once with one line.
A missing or refused key is an auth error whatever class litellm gives it (a missing OpenAI key
arrives as an InternalServerError) and names the variable to set. `model_options` from the
config (temperature, max_tokens, Ollama's num_ctx) go with every call.
"""

from __future__ import annotations

import os
import random
import re
import time
from collections.abc import Callable, Sequence
from typing import Any

from remelink.config import Settings
from remelink.errors import ConfigError, ModelError
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


_OLLAMA = ("ollama/", "ollama_chat/")
# What a missing or refused key looks like in the message, whatever the exception class.
_AUTH_RE = re.compile(r"missing credentials|api[_ ]key|invalid (?:x-)?api|incorrect api|"
                      r"unauthori[sz]ed|authentication|permission denied|\b401\b|\b403\b", re.I)


class LiteLLMModel:
    def __init__(self, model: str, settings: Settings, *,
                 sleep: Callable[[float], None] = time.sleep,
                 extra: dict[str, Any] | None = None) -> None:
        self.name = model
        self.settings = settings
        self.sleep = sleep
        options = dict(settings.model_options)
        if "num_ctx" in options and not model.startswith(_OLLAMA):
            raise ConfigError(
                "model_options.num_ctx is Ollama's context size and applies to ollama/ and "
                f"ollama_chat/ models only, not {model}",
                hint="for llama.cpp set the context when starting the server (llama-server "
                     "--ctx-size 16384); hosted models have theirs")
        self.extra = {**options, **(extra or {})}

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
                if _is_auth(exc):  # no retry: the key will not appear by waiting
                    raise ModelError(f"{self.name}: authentication failed: {_short(exc)}",
                                     hint=_key_hint(litellm, self.name)) from None
                if attempt >= attempts:
                    raise ModelError(f"{self.name}: {type(exc).__name__} after {attempt} "
                                     f"attempt(s): {_short(exc)}") from None
                self.sleep(_backoff(attempt, exc))
            except Exception as exc:
                if _is_auth(exc):
                    raise ModelError(f"{self.name}: authentication failed: {_short(exc)}",
                                     hint=_key_hint(litellm, self.name)) from None
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


def _is_auth(exc: BaseException) -> bool:
    name = type(exc).__name__
    if "Authentication" in name or "PermissionDenied" in name:
        return True
    if getattr(exc, "status_code", None) in (401, 403):
        return True
    # Rate limits and context errors mention keys and tokens too; they are not auth errors.
    if "RateLimit" in name or "ContextWindow" in name:
        return False
    return bool(_AUTH_RE.search(str(exc)))


def _key_hint(litellm: Any, model: str) -> str:
    """Which environment variable to set, as litellm knows it for the model's provider."""
    try:
        missing = litellm.validate_environment(model).get("missing_keys") or []
    except Exception:  # an unknown provider: the generic advice below
        missing = []
    keys = [k for k in missing if re.search(r"(KEY|TOKEN)$", str(k))]
    if keys:
        return f"set {' or '.join(keys)} in the environment (API keys are never read from the " \
               "config)"
    if model.startswith(_OLLAMA):
        return "Ollama needs no key: check api_base"
    return "the provider refused the key that is set: check it, or its variable (e.g. " \
           "OPENAI_API_KEY for openai/ models)"


def _hint(exc: BaseException) -> str | None:
    name = type(exc).__name__
    if "ContextWindow" in name:
        return "the conversation no longer fits the model's context window; use a model with a " \
               "larger one (for Ollama raise model_options.num_ctx), or lower " \
               "auto_dream.max_steps"
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
