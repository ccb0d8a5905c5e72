"""The first request of a clean unit stays under 2,500 prompt tokens (issue 23), counted the way
the LLM-path benchmark counts them: cl100k over the system and user messages and the tool
schemas (litellm.token_counter with the encoding litellm bundles, offline).

Every raw note of a generated vault (bench/genvault.py: English, Chinese and mixed notes, many
linking each other) becomes the unit the benchmark's model extracts from it (its title, first
sentences and list items, bench/llm_policy.py), integrated as the pipeline does: annotated with
the notes it links and is linked from, its evidence, the recall of the vault's digest nodes.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from integrate_support import TermIndex

from remelink.config import load_settings
from remelink.integrate import IntegrationContext, integrate_unit
from remelink.models.scripted import ScriptedModel
from remelink.notelinks import LazyNoteLinks
from remelink.prompts import LINKED_TOKENS, integrate_messages, linked_rows
from remelink.tokens import estimate_tokens
from remelink.units import LinkedNote, Unit
from remelink.vault.resolve import VaultFiles

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.genvault import generate

if importlib.util.find_spec("litellm") is None:
    pytest.skip("litellm is not installed (make install-llm)", allow_module_level=True)
pytestmark = [pytest.mark.slow,
              pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")]

FIRST_REQUEST_MAX = 2500
_ITEM_RE = re.compile(r"^\s*(?:[-*]|\d+\.)\s+(.+)$")
_SENT_RE = re.compile(r"[^.!?。！？\n]+[.!?。！？]")


def cl100k(messages: list[dict[str, Any]], tools: list[Any]) -> int:
    import litellm

    return int(litellm.token_counter(model="gpt-3.5-turbo", messages=messages, tools=tools))


def unit_of(rel: str, text: str) -> Unit:
    """What the benchmark's model extracts from a note: title, first sentences, list items."""
    body = re.sub(r"\A---\n.*?\n---\n", "", text, flags=re.S)
    lines = body.splitlines()
    title = next((line[2:].strip() for line in lines if line.startswith("# ")), rel)
    prose = " ".join(line for line in lines
                     if line.strip() and not line.lstrip().startswith(("#", "-", ">", "~")))
    summary = " ".join(_SENT_RE.findall(prose)[:2]) or title
    points = list(dict.fromkeys(m.group(1).strip() for line in lines
                                if (m := _ITEM_RE.match(line))))[:6]
    return Unit(name=title, bucket="wiki", summary=summary, paths=(rel,), points=tuple(points))


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("gen") / "vault"
    generate(root, notes=88, seed=7)
    return root


def test_the_first_request_stays_under_its_bound_on_a_generated_vault(generated: Path) -> None:
    settings = load_settings(generated, env={})
    files = VaultFiles.scan(generated)
    links = LazyNoteLinks(files, settings)
    index = TermIndex(generated)
    sizes: dict[str, list[int]] = {"en": [], "zh": []}
    worst = {"en": (0, ""), "zh": (0, "")}
    many_links = 0
    for rel in sorted(files.markdown()):
        if not rel.startswith(("daily/", "resource/")):
            continue
        unit = unit_of(rel, (generated / rel).read_text(encoding="utf-8"))
        model = ScriptedModel([])  # records the first request, then has nothing to answer
        ctx = IntegrationContext(vault=generated, settings=settings, model=model, index=index,
                                 files=files, today="2026-06-25", note_links=links)
        result = integrate_unit(ctx, unit, dry_run=True)
        assert not result.ok and len(model.calls) == 1, result
        messages, tools = model.calls[0]
        language = "zh" if re.search(r"[\u4e00-\u9fff]", str(messages[0]["content"])) else "en"
        many_links += len(links.annotate(unit).linked_notes) >= 6
        size = cl100k(messages, tools)
        sizes[language].append(size)
        worst[language] = max(worst[language], (size, rel))
    assert max(worst.values())[0] < FIRST_REQUEST_MAX, worst
    # The vault holds what the bound is about: both languages, units with many linked notes.
    assert len(sizes["en"]) >= 10 and len(sizes["zh"]) >= 10, sizes
    assert many_links >= 5, many_links


@pytest.mark.parametrize("language", ["en", "zh"])
def test_linked_note_rows_fit_their_budget_most_relevant_first(language: str) -> None:
    """A dozen linked notes with long linking lines: the rows shown are the first ones (the
    most relevant, NoteLinks.linked's order), within LINKED_TOKENS together, each line cut;
    the prompt says how many were left out."""
    line = ("决定: 重试三次的预算来自这份手册，测量在预发布集群上完成。" * 8 if language == "zh"
            else "Decision: the retry budget of three attempts comes from this manual. " * 8)
    linked = tuple(LinkedNote(f"daily/2025-01-{i:02d}/note-{i}.md", "out" if i % 2 else "in",
                              line) for i in range(1, 13))
    unit = Unit(name="Retry budget", bucket="wiki", summary="Retry three times at most.",
                paths=("daily/2025-01-20/a.md",), linked_notes=linked)
    rows, left_out = linked_rows(unit)
    assert 1 <= len(rows) < len(linked) and left_out == len(linked) - len(rows)
    assert [r[1] for r in rows] == [n.path for n in linked[:len(rows)]]
    assert sum(estimate_tokens(str(r)) for r in rows) <= LINKED_TOKENS + 4 * len(rows)
    assert all(r[2].endswith("...") and len(r[2]) < len(line) for r in rows)
    user = integrate_messages(unit, "", language=language, today="2026-06-25")[1]["content"]
    assert (f"另有 {left_out} 条未列出" if language == "zh" else f"{left_out} more not shown") \
        in user
    for note in linked[len(rows):]:
        assert note.path not in user
    # A few short rows all fit, and nothing is said to be left out.
    few = Unit(name="Retry budget", bucket="wiki", summary="Retry three times at most.",
               paths=("daily/2025-01-20/a.md",), linked_notes=linked[:1])
    assert linked_rows(few)[1] == 0
    assert "not shown" not in integrate_messages(few, "", language="en", today="2026-06-25")[1][
        "content"].split("```", 2)[2]


def test_the_rows_shown_are_the_most_relevant_and_the_local_engine_sees_all() -> None:
    """Under the budget, the notes whose linking line is about the unit come first whatever
    their number; the local engine (no token cost, prompt_budget False) gets every row as it
    is, in the unit's order, so its searches and links do not change."""
    from remelink.models.local.engine import LocalModel

    off_topic = tuple(LinkedNote(f"daily/2025-01-{i:02d}/lunch.md", "out",
                                 "Lunch: the cafe was closed again " * 6) for i in range(1, 6))
    on_topic = LinkedNote("daily/2025-02-01/retries.md", "in",
                          "Retries: the retry budget is three attempts")
    unit = Unit(name="Retry budget", bucket="wiki", summary="The retry budget is three attempts.",
                paths=("daily/2025-01-20/a.md",), linked_notes=(*off_topic, on_topic))
    rows, left_out = linked_rows(unit)
    assert rows[0][1] == on_topic.path and left_out > 0
    assert linked_rows(unit, budget=False) == ([n.as_row() for n in unit.linked_notes], 0)
    assert LocalModel.prompt_budget is False
    user = integrate_messages(unit, "", language="en", today="2026-06-25",
                              budget=False)[1]["content"]
    assert all(n.path in user for n in unit.linked_notes) and "not shown" not in user
