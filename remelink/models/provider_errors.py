"""What a failed call to a model provider means (SPEC §7.2 "Errors by kind"), in one place.

litellm raises its own classes (mostly OpenAI's, with provider quirks: a 403 or a 402 arrives
as a bare `APIError`, a content-policy refusal from OpenAI as a plain `BadRequestError` with the
provider's code `content_policy_violation`, a missing key as an `InternalServerError`). `classify`
reads the class name, the HTTP status and the provider's error code, in that order of trust, and
says what the failure stops: TRANSIENT (retried, then the unit fails), UNIT (the unit fails at
once) or RUN (the run stops). It imports nothing of litellm: the classes are known by name, so the
loop, the dream steps and these rules stay importable and testable without it.
"""

from __future__ import annotations

import email.utils
import re
import time
from dataclasses import dataclass

from remelink.errors import RUN, TRANSIENT, UNIT

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
    if is_auth(exc):
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


def retry_after(exc: BaseException) -> float | None:
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


_NOISE_RE = re.compile(r"\blitellm\.\w+:\s*|\b\w+(?:Error|Exception)(?::| -)\s*")


def short(exc: BaseException) -> str:
    """The provider's message without litellm's class-name prefixes, on one line."""
    text = " ".join(_NOISE_RE.sub("", str(exc)).split()) or type(exc).__name__
    return text[:300] + ("..." if len(text) > 300 else "")


def is_auth(exc: BaseException) -> bool:
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
