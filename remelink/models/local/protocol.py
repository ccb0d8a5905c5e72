"""The tool-calling protocol as the local engine reads it: its task (the JSON block of the
first user message), the tool calls made so far and their results, node_search hits, and the
turns it answers with. The engine keeps no state of its own: everything is derived from here."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from remelink.models.base import AssistantTurn, Message, ToolCall
from remelink.models.local import text as tx

JSON_START_RE = re.compile(r"```json\s*\n")
_HIT_RE = re.compile(r"^\d+\.\s+\[(-?[\d.]+)\]\s+(\S.*?)\s*$")
CONTINUE_RE = re.compile(r"call read with start_line=(\d+) to continue\]\s*$")
_TRAILER_RE = re.compile(r"\n\[(?:\.\.\. truncated|lines \d+-\d+ of \d+)[^\n]*\]\s*$")


@dataclass(frozen=True)
class HitInfo:
    path: str
    score: float
    name: str
    description: str


@dataclass
class Call:
    id: str
    name: str
    args: dict[str, Any]
    result: str | None


def task_of(messages: Sequence[Message]) -> dict[str, Any]:
    """The JSON block of the first user message. Decoded from its opening fence, not up to the
    next fence: a unit's text may itself contain ``` fences."""
    for message in messages:
        if message.get("role") == "user":
            content = str(message.get("content", ""))
            m = JSON_START_RE.search(content)
            if not m:
                return {}
            try:
                data, _ = json.JSONDecoder().raw_decode(content, m.end())
            except ValueError:
                return {}
            return data if isinstance(data, dict) else {}
    return {}


def calls_of(messages: Sequence[Message]) -> list[Call]:
    calls: dict[str, Call] = {}
    order: list[str] = []
    for message in messages:
        if message.get("role") == "assistant":
            for raw in message.get("tool_calls") or []:
                fn = raw.get("function", {})
                try:
                    args = json.loads(fn.get("arguments") or "{}")
                except ValueError:
                    args = {}
                calls[raw["id"]] = Call(raw["id"], fn.get("name", ""), args, None)
                order.append(raw["id"])
        elif message.get("role") == "tool" and message.get("tool_call_id") in calls:
            calls[message["tool_call_id"]].result = str(message.get("content", ""))
    return [calls[i] for i in order]


def parse_hits(result: str) -> list[HitInfo]:
    hits: list[HitInfo] = []
    path = name = description = ""
    score = 0.0
    for line in result.splitlines():
        m = _HIT_RE.match(line)
        if m:
            if path:
                hits.append(HitInfo(path, score, name, description))
            score, path, name, description = float(m.group(1)), m.group(2), "", ""
        elif line.strip().startswith("name:"):
            name = line.split(":", 1)[1].strip()
        elif line.strip().startswith("description:"):
            description = line.split(":", 1)[1].strip()
    if path:
        hits.append(HitInfo(path, score, name, description))
    return hits


def turn(calls: list[tuple[str, dict[str, Any]]], prefix: str) -> AssistantTurn:
    return AssistantTurn(tool_calls=tuple(
        ToolCall(id=f"{prefix}{i}", name=name, arguments=json.dumps(args, ensure_ascii=False))
        for i, (name, args) in enumerate(calls, 1)))


def answer(data: dict[str, Any]) -> AssistantTurn:
    return AssistantTurn(text=json.dumps(data, ensure_ascii=False))


def strip_trailer(text: str) -> str:
    return _TRAILER_RE.sub("", text)



_TODAY_RE = re.compile(r"^(?:Today|今天)[:：]\s*(\d{4}-\d{2}-\d{2})", re.M)
# A source excerpt of the prompt (evidence.py): `### <path>` then the note. A path may hold
# spaces (`resource/Ledger Event Design.md`, as Obsidian names notes); a note's own `### Steps`
# heading is no excerpt of its own.
_SOURCE_PATH = r"[^\n]+?\.(?:md|markdown|txt)"
_EVIDENCE_RE = re.compile(rf"^### ({_SOURCE_PATH})\n(.*?)(?=^### {_SOURCE_PATH}\n|\Z)",
                          re.S | re.M)


def first_user(messages: Sequence[Message]) -> str:
    return next((str(m.get("content", "")) for m in messages if m.get("role") == "user"), "")


def stated_language(messages: Sequence[Message]) -> str | None:
    """The language the integration prompt's system message tells the node to be written in
    (prompts.stated_language), or None when there is no such message."""
    from remelink.prompts import stated_language as stated

    return next((lang for m in messages if m.get("role") == "system"
                 for lang in [stated(str(m.get("content", "")))] if lang is not None), None)


def today_of(messages: Sequence[Message]) -> str:
    m = _TODAY_RE.search(first_user(messages))
    if m:
        return m.group(1)
    import time

    return time.strftime("%Y-%m-%d")


def evidence_titles(messages: Sequence[Message]) -> dict[str, str]:
    """The first heading of each source excerpt in the prompt: what the source is about."""
    titles: dict[str, str] = {}
    for m in _EVIDENCE_RE.finditer(first_user(messages)):
        heading = re.search(r"^#\s+(.+?)\s*$", m.group(2), re.M)
        if heading:
            titles[m.group(1)] = tx.clean_statement(heading.group(1))
    return titles

