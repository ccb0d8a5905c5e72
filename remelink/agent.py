"""The bounded tool loop (SPEC §7.1, STYLE habits 6-7).

Driven by `tool_calls`, never by `finish_reason`. A turn with tool calls runs them and appends
their results; a turn without is a final answer, handed to `judge`, which either accepts it or
returns feedback that goes back to the model as a user message (a repair turn). Unknown tools,
malformed JSON, schema errors and tool errors are all fed back as `Error: ...` tool results.
Infrastructure failures (ModelError from the backend) propagate and end the unit.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from remelink.errors import RemelinkError
from remelink.models.base import ChatModel, Message, Usage
from remelink.tools.base import ToolBox, ToolOutcome

T = TypeVar("T")
# More calls than this in one turn is a confused or hostile model; the rest get an error result
# (every call still needs a tool message, or the next request is malformed).
MAX_CALLS_PER_TURN = 16


class LoopError(RemelinkError):
    """The agent did not produce an acceptable answer within its budget. Carries the
    transcript, so a failed unit's tokens, turns and model time are still counted."""

    def __init__(self, message: str, transcript: Transcript) -> None:
        super().__init__(message)
        self.transcript = transcript


@dataclass(frozen=True)
class Accept(Generic[T]):
    value: T


@dataclass(frozen=True)
class Feedback:
    message: str
    summary: str = ""  # one line for the unit's error if the repair budget runs out


@dataclass
class Transcript:
    messages: list[Message]
    tool_outcomes: list[ToolOutcome] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    steps: int = 0
    repairs: int = 0
    model_seconds: float = 0.0


def run_loop(model: ChatModel, messages: list[Message], tools: ToolBox,
             judge: Callable[[str], Accept[T] | Feedback], *, max_steps: int,
             max_repairs: int, transcript: Transcript | None = None) -> tuple[T, Transcript]:
    """Run the conversation until `judge` accepts a final answer; raise LoopError otherwise.

    A caller that passes its own `transcript` sees the usage so far whatever ends the loop,
    a ModelError from the backend included."""
    if transcript is None:
        transcript = Transcript(messages=messages)
    transcript.messages = messages
    specs = tools.specs()
    while transcript.steps < max_steps:
        transcript.steps += 1
        started = time.perf_counter()
        turn = model.complete(messages, specs)
        transcript.model_seconds += time.perf_counter() - started
        transcript.usage = transcript.usage + turn.usage
        messages.append(turn.as_message())
        if turn.tool_calls:
            for i, call in enumerate(turn.tool_calls):
                if i < MAX_CALLS_PER_TURN:
                    outcome = tools.call(call)
                else:
                    outcome = ToolOutcome(call.name, None,
                                          f"Error: not run: more than {MAX_CALLS_PER_TURN} tool "
                                          "calls in one turn; send fewer calls per turn")
                transcript.tool_outcomes.append(outcome)
                messages.append({"role": "tool", "tool_call_id": call.id, "name": call.name,
                                 "content": outcome.result})
            continue
        verdict = judge(turn.text or "")
        if isinstance(verdict, Accept):
            return verdict.value, transcript
        if transcript.repairs >= max_repairs:
            reason = verdict.summary or " ".join(verdict.message.split())
            raise LoopError(f"answer not accepted after {max_repairs} repair turn(s): "
                            f"{reason[:500]}", transcript)
        transcript.repairs += 1
        messages.append({"role": "user", "content": verdict.message})
    raise LoopError(f"step limit reached ({max_steps} model turns) without an accepted answer"
                    f"{_last_error(transcript)}", transcript)


def _last_error(transcript: Transcript) -> str:
    """Why the last turns went nowhere: the last tool refusal, so a unit that ran out of steps
    names its cause ("the write was refused: ...") instead of only the limit."""
    for outcome in reversed(transcript.tool_outcomes[-8:]):
        if not outcome.ok:
            first = outcome.result.split("\n", 1)[0]
            return f"; the last refused call: {outcome.name}: {first[:300]}"
    return ""


_FENCE_RE = re.compile(r"```[ \t]*([A-Za-z]*)[ \t]*\n(.*?)```", re.S)
_BRACES_RE = re.compile(r"\{.*\}", re.S)


def _json_objects(text: str) -> list[str]:
    """Every balanced JSON object embedded in prose, in order (`{` positions tried one by one,
    so braces in the prose before or after the receipt do not hide it)."""
    decoder = json.JSONDecoder()
    out: list[str] = []
    pos = text.find("{")
    while pos != -1 and len(out) < 20:
        try:
            _, end = decoder.raw_decode(text, pos)
        except (ValueError, RecursionError):  # RecursionError: a hostile `[[[[...`
            pos = text.find("{", pos + 1)
            continue
        out.append(text[pos:end])
        pos = text.find("{", end)
    return out


def parse_object(text: str, required: Sequence[str] = ()) -> dict[str, Any] | None:
    """The first mapping in a model's answer: the whole text as JSON/YAML, a fenced block, or a
    `{...}` span; tolerant of prose around it. With `required`, the mapping must hold those keys."""
    import yaml

    from remelink.decoding import json_loads, yaml_load

    candidates: list[str] = [text]
    candidates += [m.group(2) for m in _FENCE_RE.finditer(text)]
    candidates += _json_objects(text)
    braces = _BRACES_RE.search(text)
    if braces:
        candidates.append(braces.group(0))
    for candidate in candidates:
        data: Any = None
        stripped = candidate.strip()
        if not stripped:
            continue
        try:
            data = json_loads(stripped)
        except (ValueError, RecursionError):
            try:
                data = yaml_load(stripped)
            except (yaml.YAMLError, RecursionError, ValueError, TypeError):
                continue
        if isinstance(data, dict) and all(k in data for k in required):
            return {str(k): v for k, v in data.items()}
    return None


_LINE_FIELD_RE = re.compile(r"^[^\w\n]*(action|target_path|note)[^\w\n]*[:=][ \t]*(.+?)[ \t]*$",
                            re.M | re.I)  # within one line: `\W*` crossed newlines


def parse_receipt(text: str) -> dict[str, Any] | None:
    """`{action, target_path, note}` from the final answer, or None."""
    data = parse_object(text, ("action",))
    if data is None:
        fields = {m.group(1).lower(): m.group(2).strip().strip("\"'`,") for m in
                  _LINE_FIELD_RE.finditer(text)}
        data = dict(fields) if "action" in fields else None
    if data is None:
        return None
    if "target" in data and "target_path" not in data:
        data["target_path"] = data.pop("target")
    return data
