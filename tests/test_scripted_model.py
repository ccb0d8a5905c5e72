"""The strict scripted model (STYLE habit 7): it records every call, fails on an unexpected call,
an unmet `expect` or an unused step, and loads scripts from YAML with one-line errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from remelink.config import Settings
from remelink.errors import ModelError, UsageError
from remelink.models import make_model
from remelink.models.base import AssistantTurn, ToolCall, Usage
from remelink.models.scripted import ScriptedModel

MSGS = [{"role": "system", "content": "s"}, {"role": "user", "content": "unit: queue exports"}]


def test_steps_are_replayed_in_order_and_recorded() -> None:
    model = ScriptedModel([
        {"tool_calls": [{"name": "read", "arguments": {"path": "digest/wiki/a.md"}},
                        {"id": "mine", "name": "node_search", "arguments": '{"query": "q"}'}],
         "usage": {"prompt_tokens": 7, "completion_tokens": 1}},
        {"text": {"action": "CREATE", "target_path": "digest/wiki/a.md"}},
    ], name="demo")
    first = model.complete(MSGS, [{"type": "function"}])
    assert first == AssistantTurn(text=None, tool_calls=(
        ToolCall("call_1_1", "read", '{"path": "digest/wiki/a.md"}'),
        ToolCall("mine", "node_search", '{"query": "q"}')), usage=Usage(7, 1))
    second = model.complete(MSGS, [])
    assert second.text == '{"action": "CREATE", "target_path": "digest/wiki/a.md"}'
    assert [len(tools) for _, tools in model.calls] == [1, 0]
    assert model.unused == 0
    model.assert_done()


def test_recorded_messages_are_copies() -> None:
    model = ScriptedModel([{"text": "a"}])
    messages = [dict(m) for m in MSGS]
    model.complete(messages, [])
    messages[1]["content"] = "changed"
    assert model.calls[0][0][1]["content"] == "unit: queue exports"


def test_unexpected_call_is_a_model_error() -> None:
    model = ScriptedModel([{"text": "a"}], source="s.yaml")
    model.complete(MSGS, [])
    with pytest.raises(ModelError, match=r"^s\.yaml: scripted model: unexpected call #2 \(the "
                                         r"script has 1 step\(s\)\)$"):
        model.complete(MSGS, [])


def test_unused_steps_fail_assert_done() -> None:
    model = ScriptedModel([{"text": "a"}, {"text": "b"}])
    model.complete(MSGS, [])
    assert model.unused == 1
    with pytest.raises(ModelError, match="1 step\\(s\\) never used"):
        model.assert_done()


def test_expect_checks_the_last_message() -> None:
    model = ScriptedModel([{"expect": ["queue", "exports"], "text": "ok"},
                           {"expect": "missing words", "text": "never"}])
    assert model.complete(MSGS, []).text == "ok"
    with pytest.raises(ModelError, match="step 2 expected the last message to contain "
                                         "'missing words'; it was 'unit: queue exports'"):
        model.complete(MSGS, [])


def test_from_file_accepts_a_list_or_a_steps_mapping(tmp_path: Path) -> None:
    listed = tmp_path / "list.yaml"
    listed.write_text("- text: hello\n")
    mapped = tmp_path / "mapped.yaml"
    mapped.write_text("unit: {name: x}\nsteps:\n  - tool_calls: [{name: read, arguments: "
                      "{path: a}}]\n")
    assert ScriptedModel.from_file(listed).steps[0].text == "hello"
    model = ScriptedModel.from_file(mapped)
    assert model.name == "scripted:mapped.yaml"
    assert model.steps[0].tool_calls[0].arguments == '{"path": "a"}'


@pytest.mark.parametrize(("content", "message"), [
    ("text: hello\n", "a script is a list of steps (or {steps: [...]})"),
    ("- [1, 2]\n", "step 1 is not a mapping"),
    ("- tool_calls: [{arguments: {}}]\n", "step 1, call 1: needs a name"),
    ("- text: [unclosed\n", "cannot read script:"),
])
def test_bad_scripts_are_usage_errors(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(content)
    with pytest.raises(UsageError) as info:
        ScriptedModel.from_file(path)
    assert message in str(info.value)
    assert info.value.exit_code == 2


def test_missing_script_file(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="cannot read script"):
        ScriptedModel.from_file(tmp_path / "nope.yaml")


def test_make_model_picks_the_scripted_backend(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("- text: hi\n")
    model = make_model(Settings(), f"scripted:{path}")
    assert isinstance(model, ScriptedModel) and model.name == "scripted:s.yaml"


def test_make_model_litellm_id_does_not_import_litellm() -> None:
    import sys

    already = "litellm" in sys.modules
    model = make_model(Settings(), "openai/gpt-4.1-mini")
    assert model.name == "openai/gpt-4.1-mini"
    assert type(model).__name__ == "LiteLLMModel"
    assert ("litellm" in sys.modules) == already  # imported on the first call, not here
