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


def test_the_answer_beside_an_answering_call_is_judged_once_it_ran() -> None:
    """Issue 23: the receipt sent with the write (a tool named in `answer_with`) ends the loop
    in one turn when every call succeeded and the judge accepts it; the judge sees the call's
    effect."""
    seen: list[str] = []

    def judge(text: str) -> Accept[dict[str, Any]] | Feedback:
        assert seen == ["node"]  # judged after the call ran
        return judge_json(text)

    model = ScriptedModel([{"text": '{"action": "CREATE"}', "tool_calls": [echo("node")]}])
    value, transcript = run_loop(model, system(), echo_box(seen), judge, max_steps=5,
                                 max_repairs=0, answer_with=frozenset({"echo"}))
    model.assert_done()
    assert value == {"action": "CREATE"}
    assert (transcript.steps, transcript.repairs) == (1, 0)


def test_an_answer_beside_calls_not_accepted_is_no_mistake() -> None:
    """A text the judge refuses (a plan, a receipt not right yet) or one beside a call that
    failed costs no repair: the model sees the results and answers as usual."""
    seen: list[str] = []
    model = ScriptedModel([
        {"text": "I will now echo.", "tool_calls": [echo("a")]},
        {"expect": "echo: a", "text": '{"action": "CREATE"}',
         "tool_calls": [{"name": "echo", "arguments": {"wrong": 1}}]},
        {"expect": "Error", "text": '{"action": "REFINE"}'},
    ])
    value, transcript = run_loop(model, system(), echo_box(seen), judge_json, max_steps=5,
                                 max_repairs=0, answer_with=frozenset({"echo"}))
    model.assert_done()
    assert value == {"action": "REFINE"} and seen == ["a"]
    assert (transcript.steps, transcript.repairs) == (3, 0)


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


# -- SPEC §7.2 "Bounded": repeated refusals, the token budget, cut answers, model errors ------

class TurnModel:
    """A model that answers from a list of AssistantTurns (the scripted model has no way to
    say that an answer was cut at the output limit)."""

    name = "turns"

    def __init__(self, turns: list[Any]) -> None:
        self.turns = list(turns)
        self.seen: list[list[dict[str, Any]]] = []

    def complete(self, messages: Any, tools: Any) -> Any:
        self.seen.append([dict(m) for m in messages])
        turn = self.turns.pop(0)
        if isinstance(turn, Exception):
            raise turn
        return turn


def refusing_box() -> ToolBox:
    from remelink.tools.base import ToolError

    def refuse(args: EchoArgs) -> str:
        raise ToolError(f"refused: {args.text} is not allowed")
    return ToolBox([Tool("echo", "Echo the text.", EchoArgs, refuse)])


def call_turn(text: str, *, prompt: int = 100, truncated: bool = False,
              raw: str | None = None) -> Any:
    from remelink.models.base import AssistantTurn, ToolCall, Usage

    args = raw if raw is not None else json.dumps({"text": text})
    return AssistantTurn(tool_calls=(ToolCall(f"c-{text}", "echo", args),),
                         usage=Usage(prompt, 5), truncated=truncated)


def text_turn(text: str, *, prompt: int = 100, truncated: bool = False,
              refusal: str | None = None) -> Any:
    from remelink.models.base import AssistantTurn, Usage

    return AssistantTurn(text=text, usage=Usage(prompt, 5), truncated=truncated,
                         refusal=refusal)


def test_a_refused_call_sent_again_unchanged_is_a_repair() -> None:
    """The issue's stubborn model: the same refused call, turn after turn. Each repeat is a
    repair (and the model is told it repeated itself): the unit stops after the repair budget,
    not after 30 turns."""
    model = TurnModel([call_turn("x")] * 10)
    with pytest.raises(LoopError) as info:
        run_loop(model, system(), refusing_box(), judge_json, max_steps=30, max_repairs=3)
    transcript = info.value.transcript
    assert transcript.steps == 5 and transcript.repeats == 4 and transcript.repairs == 4
    assert str(info.value).startswith("repair budget (3) used up: the model sent a refused "
                                      "call again unchanged (echo: Error: refused: x is not")
    told = [m["content"] for m in model.seen[-1] if m["role"] == "tool"]
    assert "refused" in told[0] and "sent this exact call before" not in told[0]
    assert all("You sent this exact call before" in t for t in told[1:])


def test_refused_calls_that_change_are_not_repairs() -> None:
    model = TurnModel([call_turn(str(i)) for i in range(6)] + [text_turn('{"action": "A"}')])
    value, transcript = run_loop(model, system(), refusing_box(), judge_json, max_steps=30,
                                 max_repairs=3)
    assert value == {"action": "A"} and transcript.repairs == 0 and transcript.repeats == 0


def test_a_unit_stops_before_its_token_budget() -> None:
    """The next request would take the conversation past the budget: it is not sent."""
    model = TurnModel([call_turn(str(i), prompt=1000 + 100 * i) for i in range(10)])
    with pytest.raises(LoopError) as info:
        run_loop(model, system(), refusing_box(), judge_json, max_steps=30, max_repairs=3,
                 max_tokens=4000)
    transcript = info.value.transcript
    assert info.value.budget
    assert transcript.usage.prompt_tokens == 1000 + 1100 + 1200 <= 4000
    assert len(model.seen) == 3
    assert str(info.value).startswith(
        "token budget reached: 3,300 prompt tokens in 3 turn(s), and the next request would "
        "take about 1,200 more, over auto_dream.unit_tokens (4,000); the last refused call: "
        "echo: Error: refused: 2 is not allowed")


def test_an_answer_cut_at_the_output_limit_is_answered_as_such() -> None:
    """`finish_reason: length`: the cut tool call is not run (its arguments are incomplete),
    and a cut final answer is not judged as if it were whole."""
    seen: list[str] = []
    model = TurnModel([call_turn("long", truncated=True, raw='{"text": "lo'),
                       call_turn("short"),
                       text_turn('{"action": "CRE', truncated=True),
                       text_turn('{"action": "CREATE"}')])
    value, transcript = run_loop(model, system(), echo_box(seen), judge_json, max_steps=10,
                                 max_repairs=3)
    assert value == {"action": "CREATE"} and seen == ["short"] and transcript.repairs == 2
    tool_says = next(m["content"] for m in model.seen[1] if m["role"] == "tool")
    assert tool_says == ("Error: not run: your output was cut at 5 tokens (the model's output "
                         "limit), so these arguments are incomplete. Send a shorter write, or "
                         "edit instead: an edit sends only the span it changes.")
    assert model.seen[3][-1] == {"role": "user", "content": (
        "Your answer was cut at 5 tokens (the model's output limit). Answer again, shorter: "
        "only what is asked, with no text around it.")}


def test_a_refusal_is_judged_with_its_own_words() -> None:
    said: list[str] = []

    def judge(text: str) -> Accept[str] | Feedback:
        said.append(text)
        return Feedback("no") if len(said) == 1 else Accept(text)

    model = TurnModel([text_turn("", refusal="I can't help with that."), text_turn("ok")])
    run_loop(model, system(), echo_box([]), judge, max_steps=5, max_repairs=1)
    assert said == ["I can't help with that.", "ok"]
    assert model.seen[1][2] == {"role": "assistant", "content": "I can't help with that."}


def test_a_model_error_keeps_what_the_failed_calls_cost() -> None:
    from remelink.agent import Transcript

    failure = ModelError("down", prompt_tokens=11, completion_tokens=0)
    model = TurnModel([call_turn("a", prompt=100), failure])
    transcript = Transcript(messages=[])
    with pytest.raises(ModelError):
        run_loop(model, system(), echo_box([]), judge_json, max_steps=5, max_repairs=1,
                 transcript=transcript)
    assert transcript.usage.prompt_tokens == 111 and transcript.steps == 2


def test_a_raw_line_break_in_arguments_gets_a_hint() -> None:
    box = echo_box([])
    from remelink.models.base import ToolCall

    outcome = box.call(ToolCall("c1", "echo", '{"text": "two\nlines"}'))
    assert outcome.result == ("Error: arguments are not valid JSON (Invalid control character "
                              "at character 13 (a line break or tab inside a JSON string must be "
                              "written \\n or \\t)); send a JSON object")
    from remelink.agent import json_problem

    assert json_problem('{"action": "CREATE", "note": "a\nb"}') == (
        "Invalid control character at character 31: a line break or tab inside a JSON "
        "string must be escaped as \\n or \\t")
