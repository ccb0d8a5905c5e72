"""The one seam between remelink and any model (STYLE: "One seam for the model").

The loop and the dream steps see only these types: OpenAI-style chat messages and tool specs in,
an `AssistantTurn` (text and/or tool calls, token usage) out. Backends (the built-in local
engine, litellm, the strict scripted model) are peers behind `ChatModel`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

Message = dict[str, Any]
ToolSpec = dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # raw JSON text, exactly as the model produced it (it may be invalid)


@dataclass(frozen=True, slots=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.prompt_tokens + other.prompt_tokens,
                     self.completion_tokens + other.completion_tokens)


@dataclass(frozen=True, slots=True)
class AssistantTurn:
    text: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=Usage)
    # The answer was cut at the output limit (`finish_reason: length`): its text or its tool
    # arguments are incomplete. The loop says so to the model instead of judging the pieces.
    truncated: bool = False
    # The model declined (OpenAI's `message.refusal`): its own words, shown when it is judged.
    refusal: str | None = None

    def as_message(self) -> Message:
        """The turn as an assistant message to append to the conversation."""
        msg: Message = {"role": "assistant", "content": self.text or self.refusal or ""}
        if self.tool_calls:
            msg["tool_calls"] = [
                {"id": c.id, "type": "function",
                 "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls
            ]
        return msg


@runtime_checkable
class ChatModel(Protocol):
    """A chat model that may call tools. `complete` raises ModelError on infrastructure failure
    (after its own retries); tool mistakes are the loop's business, not the model's."""

    name: str

    def complete(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> AssistantTurn:
        ...


def tool_spec(name: str, description: str, parameters: dict[str, Any]) -> ToolSpec:
    return {"type": "function",
            "function": {"name": name, "description": description, "parameters": parameters}}
