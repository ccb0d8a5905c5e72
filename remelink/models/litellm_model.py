"""The litellm backend: the only module that imports litellm, lazily, offline-safe.

Before the import the cost-map fetch and litellm's other network look-ups are switched off
(`LITELLM_LOCAL_MODEL_COST_MAP`, `LITELLM_OFFLINE_MODE`): otherwise every process that imports
it reaches for raw.githubusercontent.com, which costs up to ~5 s on a silent network. The
import itself (3-4 s of CPU) happens on the first call, never when the config is loaded, and
its time is kept (`import_seconds`).

Errors by kind (SPEC §7.2), decided here and nowhere else (`classify`): the loop and the dream
steps see only `ModelError` (transient), `UnitModelError` and `RunModelError`, never litellm's
classes. Transient failures (429, 5xx, timeouts, connection errors, an answer without choices
or without anything in it) are retried here (litellm's `num_retries=0`) with exponential
backoff and jitter, or after the provider's Retry-After when it gives one, up to
`retry_after_max`; a longer Retry-After fails the call at once with that reason. A missing or
refused key is an auth error whatever class litellm gives it (a missing OpenAI key arrives as an
InternalServerError) and names the variable to set. `model_options` from the config
(temperature, max_tokens, Ollama's num_ctx) go with every call.
"""

from __future__ import annotations

import email.utils
import json
import os
import random
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from remelink.config import Settings
from remelink.errors import (
    RUN,
    TRANSIENT,
    UNIT,
    ConfigError,
    ModelError,
    RunModelError,
    UnitModelError,
)
from remelink.models.base import AssistantTurn, Message, ToolCall, ToolSpec, Usage

_litellm: Any = None
import_seconds: float | None = None  # how long the first `import litellm` took (None: not yet)


def _import_litellm() -> Any:
    global _litellm, import_seconds
    if _litellm is None:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
        started = time.perf_counter()
        try:
            import litellm
        except ImportError:
            raise RunModelError("the LLM engine needs litellm: pip install 'remelink[llm]' "
                                "(or use model: local)") from None
        import_seconds = time.perf_counter() - started
        litellm.telemetry = False
        litellm.suppress_debug_info = True
        _litellm = litellm
    return _litellm


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
_QUOTA_RE = re.compile(r"insufficient[_ ]quota|exceeded your (?:current )?quota|"
                       r"billing|credit balance|out of credits|payment required", re.I)
_CONTEXT_RE = re.compile(r"context[_ ]length|context window|maximum context|too many tokens|"
                         r"prompt is too long", re.I)
_POLICY_RE = re.compile(r"content[_ ]policy|content management policy|safety system|"
                        r"content[_ ]filter", re.I)
_UNKNOWN_PROVIDER_RE = re.compile(r"LLM Provider NOT provided|Unmapped LLM provider", re.I)
# Names of litellm's (and openai's) exception classes that a retry may cure.
_TRANSIENT_NAMES = frozenset({
    "Timeout", "APITimeoutError", "APIConnectionError", "ServiceUnavailableError",
    "InternalServerError", "BadGatewayError", "MidStreamFallbackError", "APIError",
    "RateLimitError", "TimeoutError", "ConnectionError", "ReadTimeout", "ConnectTimeout",
    "RemoteProtocolError"})
_RUN_STATUSES = frozenset({401, 402, 403, 404})
_UNIT_STATUSES = frozenset({400, 413, 422})


@dataclass(frozen=True)
class Failure:
    """What a failed call means: its kind (errors.TRANSIENT, UNIT or RUN), a few words on what
    happened, and what the user can do."""

    kind: str
    what: str
    hint: str | None = None


def _status(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def _body_codes(exc: BaseException) -> set[str]:
    """The provider's own error code and type, when it sent a JSON error body."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        body = body["error"]
    codes = set()
    if isinstance(body, dict):
        codes = {str(body.get(k)).lower() for k in ("code", "type") if body.get(k)}
    code = getattr(exc, "code", None)
    if isinstance(code, str):
        codes.add(code.lower())
    return codes


def classify(exc: BaseException) -> Failure:
    """The kind of a failed call, from litellm's exception class, the HTTP status and the
    provider's error code, in that order of trust (SPEC §7.2 "Errors by kind")."""
    name = type(exc).__name__
    status = _status(exc)
    codes = _body_codes(exc)
    text = str(exc)
    if _is_auth(exc):
        return Failure(RUN, "authentication failed")
    if name == "ContextWindowExceededError" or "context_length_exceeded" in codes or (
            status in _UNIT_STATUSES and _CONTEXT_RE.search(text)):
        return Failure(UNIT, "the conversation no longer fits the model's context window",
                       "use a model with a larger one (for Ollama raise model_options.num_ctx), "
                       "or lower auto_dream.max_steps")
    if name == "ContentPolicyViolationError" or codes & {"content_policy_violation",
                                                         "content_filter"} or (
            status in _UNIT_STATUSES and _POLICY_RE.search(text)):
        return Failure(UNIT, "the provider's content policy refused the request")
    if status == 429 or name == "RateLimitError":
        if codes & {"insufficient_quota", "billing_hard_limit_reached"} or \
                _QUOTA_RE.search(text):
            return Failure(RUN, "the account's quota is exhausted",
                           "check the provider account's plan and billing, then rerun")
        return Failure(TRANSIENT, "rate limited")
    if status == 402 or name in ("PaymentRequiredError", "BudgetExceededError"):
        return Failure(RUN, "the account's quota is exhausted",
                       "check the provider account's plan and billing, then rerun")
    if status == 404 or name == "NotFoundError":
        return Failure(RUN, "unknown model or endpoint", "check the model id and api_base")
    if name == "LiteLLMUnknownProvider" or _UNKNOWN_PROVIDER_RE.search(text):
        return Failure(RUN, "unknown model provider",
                       "a litellm model id names its provider: openai/..., anthropic/..., "
                       "ollama_chat/... (see https://docs.litellm.ai/docs/providers)")
    if name == "UnsupportedParamsError":
        return Failure(RUN, "the model does not accept a parameter",
                       "remove it from model_options")
    if status in _RUN_STATUSES:
        return Failure(RUN, f"the provider refused the request ({status})")
    if status in _UNIT_STATUSES or name in ("BadRequestError", "UnprocessableEntityError",
                                            "InvalidRequestError"):
        return Failure(UNIT, "the provider rejected the request as invalid")
    if name in _TRANSIENT_NAMES or status is None or status >= 500 or status in (408, 409, 425):
        return Failure(TRANSIENT, _transient_what(name, status))
    return Failure(UNIT, f"the provider refused the request ({status})")


def _transient_what(name: str, status: int | None) -> str:
    if "Timeout" in name or status == 408:
        return "timed out"
    if "Connection" in name:
        return "connection failed"
    if "ServiceUnavailable" in name or status in (503, 529):
        return "overloaded"
    return f"server error ({status})" if status else f"failed ({name})"


class LiteLLMModel:
    # Tagging: nodes per request, their text in the prompt (one turn for eight nodes instead
    # of a read and an answer for each).
    tag_batch = 8

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
        spent = Usage()  # answers that were no answer still cost what the provider charged
        for attempt in range(1, attempts + 1):
            try:
                response = litellm.completion(**kwargs)
            except Exception as exc:
                failure = classify(exc)
                if failure.kind != TRANSIENT or attempt >= attempts:
                    raise self._error(litellm, failure, exc, attempt, spent) from None
                wait = _retry_after(exc)
                cap = self.settings.retry_after_max
                if wait is not None and wait > cap:
                    raise ModelError(
                        f"{self.name}: {failure.what}; the provider asked to wait {wait:g} s "
                        f"before a retry, longer than retry_after_max ({cap:g} s): "
                        f"{_short(exc)}",
                        hint="rerun later, or raise retry_after_max",
                        prompt_tokens=spent.prompt_tokens,
                        completion_tokens=spent.completion_tokens) from None
                self.sleep(wait if wait is not None else _backoff(attempt))
                continue
            turn, problem = _to_turn(response)
            spent = spent + turn.usage
            if problem == "content_filter":
                raise UnitModelError(
                    f"{self.name}: the provider's content filter stopped the answer",
                    prompt_tokens=spent.prompt_tokens, completion_tokens=spent.completion_tokens)
            if problem is None:
                return AssistantTurn(text=turn.text, tool_calls=turn.tool_calls, usage=spent,
                                     truncated=turn.truncated, refusal=turn.refusal)
            if attempt >= attempts:
                raise ModelError(f"{self.name}: {problem} after {attempt} attempt(s)",
                                 prompt_tokens=spent.prompt_tokens,
                                 completion_tokens=spent.completion_tokens)
            self.sleep(_backoff(attempt))
        raise ModelError(f"{self.name}: no response")  # pragma: no cover - loop always returns

    def _error(self, litellm: Any, failure: Failure, exc: BaseException, attempt: int,
               spent: Usage) -> ModelError:
        """The failure as the error of its kind, one line, naming what to do."""
        cls = {RUN: RunModelError, UNIT: UnitModelError}.get(failure.kind, ModelError)
        hint = failure.hint
        if failure.what == "authentication failed":
            hint = _key_hint(litellm, self.name)
        tries = f" after {attempt} attempt(s)" if failure.kind == TRANSIENT else ""
        return cls(f"{self.name}: {failure.what}{tries}: {_short(exc)}", hint=hint,
                   prompt_tokens=spent.prompt_tokens, completion_tokens=spent.completion_tokens)


def _retry_after(exc: BaseException) -> float | None:
    """The provider's Retry-After in seconds (`retry-after-ms`, `retry-after` as seconds or an
    HTTP date), or None when it gave none."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        headers = getattr(exc, "headers", None)
    if headers is None:
        return None
    try:
        millis = headers.get("retry-after-ms")
        if millis is not None:
            return max(0.0, float(millis) / 1000)
        value = headers.get("retry-after")
    except (AttributeError, TypeError, ValueError):
        return None
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except (TypeError, ValueError):
        pass
    try:
        when = email.utils.parsedate_to_datetime(str(value))
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, float(when.timestamp()) - time.time())


def _backoff(attempt: int) -> float:
    base = min(30.0, 0.5 * 2.0 ** (attempt - 1))
    return base * (0.5 + random.random() / 2)


_NOISE_RE = re.compile(r"\blitellm\.\w+:\s*|\b\w+(?:Error|Exception)(?::| -)\s*")


def _short(exc: BaseException) -> str:
    """The provider's message without litellm's class-name prefixes, on one line."""
    text = " ".join(_NOISE_RE.sub("", str(exc)).split()) or type(exc).__name__
    return text[:300] + ("..." if len(text) > 300 else "")


def _is_auth(exc: BaseException) -> bool:
    name = type(exc).__name__
    if "Authentication" in name or "PermissionDenied" in name:
        return True
    status = _status(exc)
    if status in (401, 403):
        return True
    # Rate limits and context errors mention keys and tokens too; they are not auth errors.
    # Nor is anything the provider answered with a status of its own.
    if "RateLimit" in name or "ContextWindow" in name or \
            (status is not None and status not in (500,)):
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


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)


def _to_turn(response: Any) -> tuple[AssistantTurn, str | None]:
    """The response as a turn, and what makes it no answer at all (None when it is one):
    no choices, no message, nothing in the message, or the provider's content filter."""
    usage = _get(response, "usage")
    spent = Usage(int(_get(usage, "prompt_tokens") or 0),
                  int(_get(usage, "completion_tokens") or 0)) if usage else Usage()
    choices = _get(response, "choices") or []
    if not choices:
        return AssistantTurn(usage=spent), "the provider answered without choices"
    message = _get(choices[0], "message")
    finish = _get(choices[0], "finish_reason")
    if message is None:
        return AssistantTurn(usage=spent), "the provider answered without a message"
    text = _get(message, "content")
    refusal = _get(message, "refusal")
    calls = []
    for i, call in enumerate(_get(message, "tool_calls") or []):
        fn = _get(call, "function")
        args = _get(fn, "arguments")
        if not isinstance(args, str):
            args = json.dumps(args if args is not None else {}, ensure_ascii=False)
        calls.append(ToolCall(id=str(_get(call, "id") or f"call_{i}"),
                              name=str(_get(fn, "name") or ""), arguments=args))
    turn = AssistantTurn(
        text=text if isinstance(text, str) else None, tool_calls=tuple(calls), usage=spent,
        truncated=finish == "length",
        refusal=refusal if isinstance(refusal, str) and refusal.strip() else None)
    if finish == "content_filter" and not calls and not (turn.text or "").strip():
        return turn, "content_filter"
    if not calls and not (turn.text or "").strip() and turn.refusal is None and \
            not turn.truncated:
        return turn, "the model gave an empty answer"
    return turn, None
