"""Extraction pages under failure (issue 23, SPEC §8): what an answered page cost is counted and
what it judged is kept when a later page fails; an answered page stays in the conversation only
as a summary, so the next page does not resend it.

The model answers extraction as bench/llm_policy.py's decent model does (pages of `max_units`
units, all units of a note on one page) and integrates with the local engine; every answer is
charged 100 prompt tokens."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dream_support import copy_fixture, run, settings_of, state_of

from remelink.errors import UnitModelError
from remelink.models.base import AssistantTurn, Message, ToolSpec, Usage
from remelink.models.local import LocalModel

ROOT = Path(__file__).resolve().parent.parent


def policy() -> Any:
    spec = importlib.util.spec_from_file_location("llm_policy", ROOT / "bench" / "llm_policy.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["llm_policy"] = module
    spec.loader.exec_module(module)
    return module


class PagingModel:
    """Extraction in note-complete pages; integration by the local engine. The extraction
    call numbered `fail_at` fails as the provider's refusal of the request (permanent for it)."""

    name = "paging"

    def __init__(self, settings: Any, fail_at: int | None = None) -> None:
        self.local = LocalModel(settings)
        self.fail_at = fail_at
        self.extract_requests: list[list[dict[str, Any]]] = []
        self.charged = 0
        self.policy = policy()

    def bind_index(self, index: Any) -> None:
        self.local.bind_index(index)

    def complete(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> AssistantTurn:
        first = next(str(m["content"]) for m in messages if m["role"] == "user")
        if '"task": "extract"' in first:
            self.extract_requests.append([dict(m) for m in messages])
            if len(self.extract_requests) == self.fail_at:
                self.charged += 33
                raise UnitModelError("paging: the conversation no longer fits", prompt_tokens=33)
            answer = self.policy.extract_answer([dict(m) for m in messages])
            text = answer["choices"][0]["message"]["content"]
            self.charged += 100
            return AssistantTurn(text=text, usage=Usage(100, 10))
        turn = self.local.complete(messages, tools)
        self.charged += 100
        return AssistantTurn(text=turn.text, tool_calls=turn.tool_calls, usage=Usage(100, 10))


def pages_vault(tmp_path: Path) -> Path:
    vault = copy_fixture(tmp_path, "en")
    return vault


def test_answered_pages_are_summarised_not_resent(tmp_path: Path) -> None:
    vault = pages_vault(tmp_path)
    settings = settings_of(vault, max_units=2, batch_tokens=100_000)
    model = PagingModel(settings)
    report = run(vault, model, settings)
    assert report.ok, report.errors
    assert len(model.extract_requests) >= 2  # it paged
    second = model.extract_requests[1]
    answers = [m for m in second if m["role"] == "assistant"]
    assert len(answers) == 1 and json.loads(answers[0]["content"])["shortened"]
    assert all("summary" not in u for u in json.loads(answers[0]["content"])["units"])
    assert report.tokens_in == model.charged


def test_a_failed_page_keeps_what_the_answered_pages_judged(tmp_path: Path) -> None:
    settings_vault = pages_vault(tmp_path / "whole")
    settings = settings_of(settings_vault, max_units=2, batch_tokens=100_000)
    whole = PagingModel(settings)
    expected = run(settings_vault, whole, settings)
    assert expected.ok
    first_page = json.loads(whole.policy.extract_answer(whole.extract_requests[0])["choices"][0]
                            ["message"]["content"])
    judged_first = {p for u in first_page["units"] for p in u["paths"]}

    vault = pages_vault(tmp_path / "failing")
    settings = settings_of(vault, max_units=2, batch_tokens=100_000)
    model = PagingModel(settings, fail_at=2)
    report = run(vault, model, settings)
    assert report.tokens_in == model.charged  # the answered page and the failed one counted
    state = state_of(vault)
    # The notes of the first page were checkpointed with its units, not asked again ...
    asked_again = {p for req in model.extract_requests[2:]
                   for p in json.loads(req[1]["content"].split("```json\n", 1)[1]
                                       .split("\n```", 1)[0])["changed_paths"]}
    assert judged_first and not judged_first & asked_again
    for path in judged_first:
        assert state["inputs"][path]["status"] == "processed"
    # ... the others were tried note by note, and nothing was lost.
    assert report.ok, report.errors
    assert {p: r["status"] for p, r in state["inputs"].items()} == \
        {p: r["status"] for p, r in state_of(settings_vault)["inputs"].items()}
    assert sorted(u.name for u in report.units) == sorted(u.name for u in expected.units)
