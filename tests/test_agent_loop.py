"""The bounded tool loop (remelink.agent) and receipt parsing, with a strict scripted model and
a one-tool ToolBox: no vault needed."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from remelink.agent import (
    MAX_CALLS_PER_TURN,
    Accept,
    Feedback,
    LoopError,
    parse_object,
    parse_receipt,
    run_loop,
)
from remelink.errors import ModelError
from remelink.models.scripted import ScriptedModel
from remelink.tools.base import Tool, ToolBox


class EchoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str


def echo_box(seen: list[str]) -> ToolBox:
    def echo(args: EchoArgs) -> str:
        seen.append(args.text)
        return f"echo: {args.text}"
    return ToolBox([Tool("echo", "Echo the text.", EchoArgs, echo)])


def judge_json(text: str) -> Accept[dict[str, Any]] | Feedback:
    data = parse_receipt(text)
    if data is None:
        return Feedback("no receipt found", summary="no receipt")
    return Accept(data)


def echo(text: str, call_id: str | None = None) -> dict[str, Any]:
    call: dict[str, Any] = {"name": "echo", "arguments": {"text": text}}
    if call_id:
        call["id"] = call_id
    return call


def system() -> list[dict[str, Any]]:
    return [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]


def test_loop_runs_tools_feeds_results_back_and_accepts() -> None:
    seen: list[str] = []
    model = ScriptedModel([
        {"tool_calls": [echo("a", "c1"), echo("b", "c2")], "usage": {"prompt_tokens": 10,
                                                                   "completion_tokens": 2}},
        {"expect": "echo: b", "text": '{"action": "CREATE"}',
         "usage": {"prompt_tokens": 20, "completion_tokens": 3}},
    ])
    value, transcript = run_loop(model, system(), echo_box(seen), judge_json, max_steps=5,
                                 max_repairs=1)
    model.assert_done()
    assert value == {"action": "CREATE"} and seen == ["a", "b"]
    assert (transcript.steps, transcript.repairs) == (2, 0)
    assert (transcript.usage.prompt_tokens, transcript.usage.completion_tokens) == (30, 5)
    assert transcript.model_seconds >= 0
    tool_messages = [m for m in transcript.messages if m["role"] == "tool"]
    assert [(m["tool_call_id"], m["content"]) for m in tool_messages] == [
        ("c1", "echo: a"), ("c2", "echo: b")]
    assistant = transcript.messages[2]
    assert assistant["tool_calls"][0] == {"id": "c1", "type": "function", "function": {
        "name": "echo", "arguments": '{"text": "a"}'}}


def test_a_turn_with_text_and_tool_calls_is_not_a_final_answer() -> None:
    """Drive the loop off tool_calls, never off the text (or a finish_reason)."""
    seen: list[str] = []
    model = ScriptedModel([
        {"text": '{"action": "CREATE"}', "tool_calls": [echo("first")]},
        {"expect": "echo: first", "text": '{"action": "REFINE"}'},
    ])
    value, _ = run_loop(model, system(), echo_box(seen), judge_json, max_steps=5, max_repairs=0)
    model.assert_done()
    assert value == {"action": "REFINE"} and seen == ["first"]


def test_too_many_calls_in_one_turn_are_answered_with_errors() -> None:
    seen: list[str] = []
    calls = [echo(str(i), f"c{i}") for i in range(MAX_CALLS_PER_TURN + 4)]
    model = ScriptedModel([
        {"tool_calls": calls},
        {"expect": "Error: not run: more than 16 tool calls in one turn; send fewer calls per "
                   "turn", "text": '{"action": "CREATE"}'},
    ])
    _, transcript = run_loop(model, system(), echo_box(seen), judge_json, max_steps=3,
                             max_repairs=0)
    model.assert_done()
    assert len(seen) == MAX_CALLS_PER_TURN
    tool_ids = [m["tool_call_id"] for m in transcript.messages if m["role"] == "tool"]
    assert tool_ids == [f"c{i}" for i in range(MAX_CALLS_PER_TURN + 4)]


def test_feedback_then_acceptance_counts_a_repair() -> None:
    model = ScriptedModel([
        {"text": "I am done."},
        {"expect": "no receipt found", "text": "action: CORRECT\ntarget_path: x.md\n"},
    ])
    value, transcript = run_loop(model, system(), echo_box([]), judge_json, max_steps=5,
                                 max_repairs=1)
    model.assert_done()
    assert value == {"action": "CORRECT", "target_path": "x.md"}
    assert transcript.repairs == 1
    assert transcript.messages[-2] == {"role": "user", "content": "no receipt found"}


def test_repair_budget_exhausted_names_the_problem() -> None:
    model = ScriptedModel([{"text": "done"}, {"expect": "no receipt found", "text": "done"}])
    with pytest.raises(LoopError, match=r"^answer not accepted after 1 repair turn\(s\): "
                                        r"no receipt$"):
        run_loop(model, system(), echo_box([]), judge_json, max_steps=5, max_repairs=1)
    model.assert_done()


def test_step_limit() -> None:
    model = ScriptedModel([{"tool_calls": [echo("x")]}] * 3)
    with pytest.raises(LoopError, match=r"step limit reached \(3 model turns\)"):
        run_loop(model, system(), echo_box([]), judge_json, max_steps=3, max_repairs=5)
    model.assert_done()


def test_model_errors_end_the_loop() -> None:
    model = ScriptedModel([{"tool_calls": [echo("x")]}])
    with pytest.raises(ModelError, match="unexpected call #2"):
        run_loop(model, system(), echo_box([]), judge_json, max_steps=5, max_repairs=1)


# -- receipts --------------------------------------------------------------------------------

RECEIPT = {"action": "CREATE", "target_path": "digest/wiki/a.md", "note": "new"}


@pytest.mark.parametrize("text", [
    json.dumps(RECEIPT),
    "```json\n" + json.dumps(RECEIPT, indent=2) + "\n```",
    "```\n" + json.dumps(RECEIPT) + "\n```",
    "action: CREATE\ntarget_path: digest/wiki/a.md\nnote: new\n",
    "```yaml\naction: CREATE\ntarget_path: digest/wiki/a.md\nnote: new\n```",
    "Done! Here is the receipt:\n" + json.dumps(RECEIPT) + "\nLet me know.",
    "I used {braces} in prose. " + json.dumps(RECEIPT) + " And {more} after.",
    "- **action**: CREATE\n- **target_path**: `digest/wiki/a.md`\n- **note**: new",
    json.dumps({"action": "CREATE", "target": "digest/wiki/a.md", "note": "new"}),
])
def test_receipt_formats(text: str) -> None:
    assert parse_receipt(text) == RECEIPT


def test_receipt_yaml_with_colons_in_the_note_falls_back_to_lines() -> None:
    text = "action: REFINE\ntarget_path: digest/wiki/a.md\nnote: scope: per account"
    assert parse_receipt(text) == {"action": "REFINE", "target_path": "digest/wiki/a.md",
                                   "note": "scope: per account"}


@pytest.mark.parametrize("text", ["", "I integrated the unit.", '{"target_path": "x"}',
                                  "[1, 2, 3]", "```json\n{broken\n```"])
def test_no_receipt(text: str) -> None:
    assert parse_receipt(text) is None


def test_parse_object_prefers_a_mapping_with_the_required_keys() -> None:
    text = 'Options: {"a": 1} then {"units": [{"name": "x"}]}'
    assert parse_object(text, ("units",)) == {"units": [{"name": "x"}]}
    assert parse_object(text) == {"a": 1}
    # Prose with a colon is a YAML mapping too; the required keys keep it from passing.
    assert parse_object("Here is the plan: done", ("units",)) is None
