"""A strict scripted model: part of the product (STYLE habit 7), for tests and `--model
scripted:FILE`.

The script is a list of assistant turns. Each turn may carry `expect`: substrings the last
message the model receives (a tool result or a repair message) must contain, so a script
asserts what the loop fed back. Every call is recorded; a call beyond the script, or a script
step left unused (`assert_done`), is an error.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from remelink.errors import ModelError, UsageError
from remelink.models.base import AssistantTurn, Message, ToolCall, ToolSpec, Usage


@dataclass
class Step:
    text: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    expect: tuple[str, ...] = ()
    usage: Usage = field(default_factory=Usage)


def _step(data: Any, index: int, source: str) -> Step:
    if not isinstance(data, dict):
        raise UsageError(f"step {index} is not a mapping", path=source)
    calls = []
    for j, raw in enumerate(data.get("tool_calls") or (), 1):
        if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
            raise UsageError(f"step {index}, call {j}: needs a name", path=source)
        args = raw.get("arguments", {})
        arguments = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
        calls.append(ToolCall(id=str(raw.get("id") or f"call_{index}_{j}"), name=raw["name"],
                              arguments=arguments))
    expect = data.get("expect") or ()
    if isinstance(expect, str):
        expect = (expect,)
    text = data.get("text")
    if text is not None and not isinstance(text, str):
        text = json.dumps(text, ensure_ascii=False)
    usage = data.get("usage") or {}
    return Step(text=text, tool_calls=tuple(calls), expect=tuple(expect),
                usage=Usage(int(usage.get("prompt_tokens", 0)),
                            int(usage.get("completion_tokens", 0))))


class ScriptedModel:
    def __init__(self, steps: Sequence[Step | dict[str, Any]], *, name: str = "scripted",
                 source: str = "script") -> None:
        self.name = name
        self.steps = [s if isinstance(s, Step) else _step(s, i, source)
                      for i, s in enumerate(steps, 1)]
        self.calls: list[tuple[list[Message], list[ToolSpec]]] = []
        self.source = source

    @classmethod
    def from_file(cls, path: Path, *, vault: Path | None = None) -> ScriptedModel:
        """The script in `path`: a regular file of at most MAX_INPUT_BYTES (never a FIFO or
        a device). With `vault` (a script named by the vault's config.yaml) it must also lie
        inside the vault, no symlink leading out (the vault boundary)."""
        import yaml

        from remelink.decoding import yaml_load
        from remelink.errors import RemelinkError
        from remelink.vault.boundary import MAX_INPUT_BYTES, read_file, read_given, vault_real

        try:
            if vault is not None:
                got = read_file(path, root_real=vault_real(vault), limit=MAX_INPUT_BYTES,
                                rel=str(path))
                if got.data is None:
                    raise UsageError(f"is {got.size} bytes, over the {MAX_INPUT_BYTES >> 20} "
                                     "MiB limit for a script; not read", path=str(path))
                raw = got.data
            else:
                raw = read_given(path, what="script")
            data = yaml_load(raw.decode("utf-8-sig"))
        except (OSError, yaml.YAMLError, UnicodeDecodeError, RecursionError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else \
                (str(exc).splitlines() or [type(exc).__name__])[0]
            raise UsageError(f"cannot read script: {reason}", path=str(path)) from None
        except RemelinkError as exc:
            raise UsageError(f"cannot read script: {exc.args[0]}", path=str(path),
                             hint=exc.hint) from None
        if isinstance(data, dict):
            data = data.get("steps")
        if not isinstance(data, list):
            raise UsageError("a script is a list of steps (or {steps: [...]})", path=str(path))
        return cls(data, name=f"scripted:{path.name}", source=str(path))

    def complete(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> AssistantTurn:
        index = len(self.calls)
        self.calls.append(([dict(m) for m in messages], list(tools)))
        if index >= len(self.steps):
            raise ModelError(f"scripted model: unexpected call #{index + 1} (the script has "
                             f"{len(self.steps)} step(s))", path=self.source)
        step = self.steps[index]
        if step.expect:
            last = str(messages[-1].get("content", "")) if messages else ""
            for wanted in step.expect:
                if wanted not in last:
                    raise ModelError(f"scripted model: step {index + 1} expected the last message "
                                     f"to contain {wanted!r}; it was {last[:300]!r}",
                                     path=self.source)
        return AssistantTurn(text=step.text, tool_calls=step.tool_calls, usage=step.usage)

    @property
    def unused(self) -> int:
        return max(0, len(self.steps) - len(self.calls))

    def assert_done(self) -> None:
        if self.unused:
            raise ModelError(f"scripted model: {self.unused} step(s) never used", path=self.source)
