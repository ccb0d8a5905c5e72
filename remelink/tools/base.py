"""Tool plumbing: one definition per tool (a pydantic argument model, a description, a handler),
JSON schemas derived from it, and a dispatcher whose every failure is a text result starting
`Error:` that goes back to the model, never an exception that ends the run (SPEC §6).
"""

from __future__ import annotations

import copy
import functools
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from remelink.decoding import json_loads
from remelink.errors import RemelinkError
from remelink.models.base import ToolCall, ToolSpec, tool_spec

A = TypeVar("A", bound=BaseModel)
MAX_ARGUMENT_CHARS = 200_000
# Nesting deeper than this is no frontmatter anyone writes; it is bounded before parsing, so a
# hostile `[[[[...` cannot reach a RecursionError in the JSON decoder, pydantic or PyYAML.
MAX_ARGUMENT_DEPTH = 32


MAX_ITEMS = 12            # items of one refusal shown, each whole
REFUSAL_CHARS = 8_000     # and at most this many characters of them (one item always shows)


class ToolError(RemelinkError):
    """A tool refused or failed; the message is shown to the model after `Error: `.

    A refusal about several things (lost lines, lint problems) carries them as `items`: each
    is shown whole, one per line, up to MAX_ITEMS / REFUSAL_CHARS, never cut mid-sentence; the
    rest are counted, with a pointer to `read` for the node (`path`) when there are more."""

    def __init__(self, message: str, *, items: Sequence[str] = (), tail: str = "",
                 path: str | None = None, hint: str | None = None) -> None:
        super().__init__(message, path=None, hint=hint)
        self.items = tuple(items)
        self.tail = tail
        self.read_path = path

    def render(self) -> str:
        return refusal(str(self), self.items, self.tail, read_path=self.read_path)


def refusal(message: str, items: Sequence[str], tail: str = "", *,
            read_path: str | None = None) -> str:
    """A message and its items, complete: every shown item whole, the rest counted."""
    lines = [one_line(message, 2000)]
    used = shown = 0
    for item in items:
        text = " ".join(item.split())
        if shown and (shown >= MAX_ITEMS or used + len(text) > REFUSAL_CHARS):
            break
        lines.append(f"- {text}")
        used += len(text)
        shown += 1
    rest = len(items) - shown
    if rest:
        where = f"call read on {read_path}" if read_path else "call read on the node"
        lines.append(f"- and {rest} more of the same kind not shown: fix these first, or "
                     f"{where} to see its current text")
    if tail:
        lines.append(one_line(tail, 2000))
    return "\n".join(lines)


@dataclass(frozen=True)
class Tool(Generic[A]):
    name: str
    description: str
    args: type[A]
    handler: Callable[[A], str]

    def spec(self) -> ToolSpec:
        """The tool's JSON schema for the model (derived once per argument model: pydantic's
        schema generation costs milliseconds, and every unit builds a fresh tool box)."""
        return copy.deepcopy(_spec(self.name, self.description, self.args))


# Schema keywords a model does not use to write its call: the bounds are checked when the call
# is validated (and a violation comes back as an error it can act on), and every request would
# otherwise pay for them (SPEC §7.2 "Bounded": about a third of the schemas' tokens).
_UNSENT = ("title", "maxLength", "minLength", "maximum", "minimum", "default",
           "additionalProperties", "minProperties")


@functools.lru_cache(maxsize=64)
def _spec(name: str, description: str, args: type[BaseModel]) -> ToolSpec:
    schema = args.model_json_schema()
    schema.pop("title", None)  # `additionalProperties: false` stays: extra keys are refused
    for key, prop in list(schema.get("properties", {}).items()):
        options = prop.get("anyOf")
        if isinstance(options, list):  # Optional[X]: X (absent means null)
            kept = [o for o in options if o.get("type") != "null"]
            if len(kept) == 1:
                prop = {**{k: v for k, v in prop.items() if k != "anyOf"}, **kept[0]}
        schema["properties"][key] = {k: v for k, v in prop.items() if k not in _UNSENT}
    return tool_spec(name, description, schema)


@dataclass(frozen=True)
class ToolOutcome:
    name: str
    arguments: dict[str, Any] | None
    result: str

    @property
    def ok(self) -> bool:
        return not self.result.startswith("Error:")


def one_line(text: str, limit: int = 600) -> str:
    """A tool result error is one line (the model reads it; logs keep it greppable). Text
    longer than `limit` is cut at a word boundary and says so; refusals about several things
    carry them as ToolError items instead, which are never cut."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit - 12]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut) + " [...cut]"


def _first_validation_errors(exc: ValidationError, limit: int = 4) -> str:
    parts = []
    for err in exc.errors()[:limit]:
        where = ".".join(str(p) for p in err.get("loc", ())) or "arguments"
        parts.append(f"{where}: {err.get('msg', 'invalid')}")
    more = len(exc.errors()) - limit
    if more > 0:
        parts.append(f"and {more} more")
    return "; ".join(parts)


class ToolBox:
    """The tools one agent may use, by name."""

    def __init__(self, tools: Iterable[Tool[Any]]) -> None:
        self.tools: dict[str, Tool[Any]] = {t.name: t for t in tools}

    def specs(self) -> list[ToolSpec]:
        return [t.spec() for t in self.tools.values()]

    def call(self, call: ToolCall) -> ToolOutcome:
        tool = self.tools.get(call.name)
        if tool is None:
            names = ", ".join(self.tools)
            return ToolOutcome(call.name, None,
                               f"Error: unknown tool {call.name!r}; available tools: {names}")
        raw = call.arguments if call.arguments is not None else ""
        if len(raw) > MAX_ARGUMENT_CHARS:
            return ToolOutcome(call.name, None,
                               f"Error: arguments are {len(raw)} characters; the limit is "
                               f"{MAX_ARGUMENT_CHARS}")
        depth = nesting_depth(raw, MAX_ARGUMENT_DEPTH)
        if depth > MAX_ARGUMENT_DEPTH:
            return ToolOutcome(call.name, None,
                               f"Error: arguments nest more than {MAX_ARGUMENT_DEPTH} levels "
                               "deep; send flat values (strings, numbers, short lists)")
        try:
            data = json_loads(raw) if raw.strip() else {}
        except json.JSONDecodeError as exc:
            # The usual cause: a raw line break inside a string (a `content` written as text).
            escape = " (a line break or tab inside a JSON string must be written \\n or \\t)" \
                if "control character" in exc.msg else ""
            what = exc.msg.removesuffix(" at")  # "Invalid control character at"
            return ToolOutcome(call.name, None,
                               f"Error: arguments are not valid JSON ({what} at character "
                               f"{exc.pos}{escape}); send a JSON object")
        if not isinstance(data, dict):
            return ToolOutcome(call.name, None,
                               f"Error: arguments must be a JSON object, got {type(data).__name__}")
        try:
            args = tool.args.model_validate(data)
        except ValidationError as exc:
            return ToolOutcome(call.name, data,
                               f"Error: invalid arguments for {call.name}: "
                               f"{_first_validation_errors(exc)}")
        try:
            result = tool.handler(args)
        except ToolError as exc:
            return ToolOutcome(call.name, data, f"Error: {exc.render()}")
        except RemelinkError as exc:
            return ToolOutcome(call.name, data, f"Error: {one_line(str(exc), 2000)}")
        except Exception as exc:
            # The filesystem or a parser refused something the checks above let through (a
            # name too long for the filesystem, an undecodable path, a value PyYAML cannot
            # represent): the model's input all the same, so it is a message to the model, not
            # the end of the run (SPEC §6). Interrupts (KeyboardInterrupt) still end it.
            return ToolOutcome(call.name, data,
                               f"Error: {call.name} failed: {type(exc).__name__}: "
                               f"{one_line(str(exc), 300)}")
        return ToolOutcome(call.name, data, result)


_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_BRACKETS = re.compile(r"[\[\]{}]")


def nesting_depth(raw: str, limit: int) -> int:
    """How deep `[` and `{` nest in JSON text, outside strings; stops counting past `limit`.
    No recursion: this is what keeps a hostile argument from recursing anywhere."""
    depth = deepest = 0
    for m in _BRACKETS.finditer(_JSON_STRING.sub('""', raw)):
        if m.group(0) in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    break
        else:
            depth -= 1
    return deepest
