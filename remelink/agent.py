"""The bounded tool loop (SPEC §7.1, §7.2 "Bounded", STYLE habits 6-7).

Driven by `tool_calls`, never by `finish_reason`. A turn with tool calls runs them and appends
their results; a turn without is a final answer, handed to `judge`, which either accepts it or
returns feedback that goes back to the model as a user message (a repair turn). Unknown tools,
malformed JSON, schema errors and tool errors are all fed back as `Error: ...` tool results.

Bounded three ways: `max_steps` model turns, `max_repairs` repairs (a refused final answer, a
refused tool call sent again unchanged, an answer cut at the output limit), and an optional
budget of prompt tokens, checked before each request against what the last one cost (the
conversation only grows). Infrastructure failures (ModelError from the backend) propagate and
end the unit, with the tokens they were charged counted.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from remelink.errors import ModelError, RemelinkError
from remelink.models.base import AssistantTurn, ChatModel, Message, ToolCall, Usage
from remelink.tools.base import ToolBox, ToolOutcome

T = TypeVar("T")
# More calls than this in one turn is a confused or hostile model; the rest get an error result
# (every call still needs a tool message, or the next request is malformed).
MAX_CALLS_PER_TURN = 16


class LoopError(RemelinkError):
    """The agent did not produce an acceptable answer within its budget. Carries the
    transcript, so a failed unit's tokens, turns and model time are still counted."""

    def __init__(self, message: str, transcript: Transcript, *, budget: bool = False) -> None:
        super().__init__(message)
        self.transcript = transcript
        self.budget = budget  # stopped by the token budget (reported as such)


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
    repeats: int = 0  # refused tool calls sent again unchanged (each also a repair)


def cut_message(turn: AssistantTurn, *, call: bool) -> str:
    """What the model is told when its answer stopped at the output limit."""
    at = f"{turn.usage.completion_tokens} tokens" if turn.usage.completion_tokens else \
        "the output limit"
    if call:
        return (f"Error: not run: your output was cut at {at} (the model's output limit), so "
                "these arguments are incomplete. Send a shorter write, or edit instead: an edit "
                "sends only the span it changes.")
    return (f"Your answer was cut at {at} (the model's output limit). Answer again, shorter: "
            "only what is asked, with no text around it.")


def _call_key(call: ToolCall) -> tuple[str, str]:
    try:
        args = json.dumps(json.loads(call.arguments), sort_keys=True, ensure_ascii=False)
    except (ValueError, TypeError, RecursionError):
        args = call.arguments
    return call.name, args


REPEATED = ("\n(You sent this exact call before and it was refused the same way; it counts as "
            "a repair. Change it as the message says, or do something else.)")


def run_loop(model: ChatModel, messages: list[Message], tools: ToolBox,
             judge: Callable[[str], Accept[T] | Feedback], *, max_steps: int,
             max_repairs: int, transcript: Transcript | None = None,
             max_tokens: int | None = None,
             answer_with: frozenset[str] = frozenset()) -> tuple[T, Transcript]:
    """Run the conversation until `judge` accepts a final answer; raise LoopError otherwise.

    A caller that passes its own `transcript` sees the usage so far whatever ends the loop,
    a ModelError from the backend included. `max_tokens` bounds the prompt tokens of the whole
    conversation: a request that would take it past the budget is not sent.

    A turn's text beside its tool calls is no final answer, except with a call of a tool named
    in `answer_with` (integration: write, edit, frontmatter_update): when every call of that
    turn succeeded, the text is judged once they ran, and accepted it ends the loop (the
    receipt sent with the write, one turn less); not accepted, it is no mistake and costs no
    repair: the model sees the results and answers as usual."""
    if transcript is None:
        transcript = Transcript(messages=messages)
    transcript.messages = messages
    specs = tools.specs()
    refused: set[tuple[str, str]] = set()
    last_prompt = 0
    while transcript.steps < max_steps:
        used = transcript.usage.prompt_tokens
        if max_tokens is not None and transcript.steps and used + last_prompt > max_tokens:
            raise LoopError(
                f"token budget reached: {used:,} prompt tokens in {transcript.steps} turn(s), "
                f"and the next request would take about {last_prompt:,} more, over "
                f"auto_dream.unit_tokens ({max_tokens:,}){_last_error(transcript)}",
                transcript, budget=True)
        transcript.steps += 1
        started = time.perf_counter()
        try:
            turn = model.complete(messages, specs)
        except ModelError as exc:
            transcript.model_seconds += time.perf_counter() - started
            transcript.usage = transcript.usage + Usage(exc.prompt_tokens, exc.completion_tokens)
            raise
        transcript.model_seconds += time.perf_counter() - started
        transcript.usage = transcript.usage + turn.usage
        last_prompt = turn.usage.prompt_tokens
        messages.append(turn.as_message())
        if turn.tool_calls:
            repeated = ""
            answered = any(call.name in answer_with for call in turn.tool_calls)
            for i, call in enumerate(turn.tool_calls):
                if turn.truncated:
                    outcome = ToolOutcome(call.name, None, cut_message(turn, call=True))
                elif i < MAX_CALLS_PER_TURN:
                    outcome = tools.call(call)
                else:
                    outcome = ToolOutcome(call.name, None,
                                          f"Error: not run: more than {MAX_CALLS_PER_TURN} tool "
                                          "calls in one turn; send fewer calls per turn")
                if not outcome.ok and not turn.truncated:
                    key = _call_key(call)
                    if key in refused:
                        transcript.repeats += 1
                        transcript.repairs += 1
                        repeated = f"{call.name}: {outcome.result.split(chr(10), 1)[0][:300]}"
                        outcome = ToolOutcome(outcome.name, outcome.arguments,
                                              outcome.result + REPEATED)
                    refused.add(key)
                answered = answered and outcome.ok
                transcript.tool_outcomes.append(outcome)
                messages.append({"role": "tool", "tool_call_id": call.id, "name": call.name,
                                 "content": outcome.result})
            if answered and not turn.truncated and (turn.text or "").strip():
                verdict = judge(turn.text or "")
                if isinstance(verdict, Accept):
                    return verdict.value, transcript
            if turn.truncated:
                transcript.repairs += 1
            if transcript.repairs > max_repairs:
                why = f"the model sent a refused call again unchanged ({repeated})" if repeated \
                    else "its output was cut at the output limit again"
                raise LoopError(f"repair budget ({max_repairs}) used up: {why}", transcript)
            continue
        if turn.truncated:
            if transcript.repairs >= max_repairs:
                raise LoopError(f"answer not accepted after {max_repairs} repair turn(s): "
                                "its answer was cut at the output limit", transcript)
            transcript.repairs += 1
            messages.append({"role": "user", "content": cut_message(turn, call=False)})
            continue
        text = turn.text or ""
        verdict = judge(text if text.strip() else (turn.refusal or text))
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


def quote(text: str, limit: int = 200) -> str:
    """A model's own words, on one line and bounded, for a message that must show them."""
    words = " ".join(text.split())
    return json.dumps(words[:limit] + ("..." if len(words) > limit else ""), ensure_ascii=False)


def json_problem(text: str) -> str | None:
    """Why the `{...}` in a model's answer is not JSON, with what to do when the cause is a
    raw line break or tab inside a string (JSON wants them escaped)."""
    start = text.find("{")
    if start < 0:
        return None
    try:
        json.JSONDecoder().raw_decode(text, start)
    except ValueError as exc:
        msg = str(getattr(exc, "msg", exc)).removesuffix(" at")  # "Invalid control character at"
        where = f" at character {getattr(exc, 'pos', 0) - start}"
        if "control character" in msg:
            return (f"{msg}{where}: a line break or tab inside a JSON string must be escaped "
                    "as \\n or \\t")
        return f"{msg}{where}"
    except RecursionError:
        return "the JSON nests too deep"
    return None


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
