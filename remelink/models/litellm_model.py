"""The litellm backend: the only module that imports litellm, lazily, offline-safe.

Before the import the cost-map fetch and litellm's other network look-ups are switched off
(`LITELLM_LOCAL_MODEL_COST_MAP`, `LITELLM_OFFLINE_MODE`): otherwise every process that imports
it reaches for raw.githubusercontent.com, which costs up to ~5 s on a silent network. The
import itself (3-4 s of CPU) happens on the first call, never when the config is loaded, and
its time is kept (`import_seconds`).

Errors by kind (SPEC §7.2), decided in one place (`provider_errors.classify`): the loop and the
dream steps see only `ModelError` (transient), `UnitModelError` and `RunModelError`, never litellm's
classes. Transient failures (429, 5xx, timeouts, connection errors, an answer without choices
or without anything in it) are retried here (litellm's `num_retries=0`) with exponential
backoff and jitter, or after the provider's Retry-After when it gives one, up to
`retry_after_max`; a longer Retry-After fails the call at once with that reason. A missing or
refused key is an auth error whatever class litellm gives it (a missing OpenAI key arrives as an
InternalServerError) and names the variable to set. `model_options` from the config
(temperature, max_tokens, Ollama's num_ctx) go with every call.
"""

from __future__ import annotations

import json
import os
import random
import re
import time
from collections.abc import Callable, Sequence
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
from remelink.models.provider_errors import Failure, classify, retry_after, short

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
                wait = retry_after(exc)
                cap = self.settings.retry_after_max
                if wait is not None and wait > cap:
                    raise ModelError(
                        f"{self.name}: {failure.what}; the provider asked to wait {wait:g} s "
                        f"before a retry, longer than retry_after_max ({cap:g} s): "
                        f"{short(exc)}",
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
        return cls(f"{self.name}: {failure.what}{tries}: {short(exc)}", hint=hint,
                   prompt_tokens=spent.prompt_tokens, completion_tokens=spent.completion_tokens)


def _backoff(attempt: int) -> float:
    base = min(30.0, 0.5 * 2.0 ** (attempt - 1))
    return base * (0.5 + random.random() / 2)


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
