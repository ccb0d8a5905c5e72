"""The extraction conversation for one batch of changed notes (SPEC §8).

The model (an LLM or the local engine) gets the batch's notes and answers pages of
`{units, verdicts, more}`. `auto_dream.max_units` is the size of a page, never a cap: a page
with `"more": true` is followed by a "continue" turn, and a page larger than asked for is
accepted whole. Each page is read at the boundary (`answer.read_page`); unusable units,
unknown buckets, paths that name no note of the batch and missing verdicts go back to the model
as repair turns (`auto_dream.repair_turns`). What is still wrong after them is left out and
reported; the notes it concerns have no verdict, so they stay pending and are retried alone.

What a page costs is counted whatever happens next. An accepted page stays in the conversation
only as a short summary (unit names and paths, verdicts), its repair turns dropped: the next
page's request resends the notes, not what the model already answered. When a later page fails,
the answered pages are not thrown away: `ExtractionFailed` carries them, and the notes they
judged are checkpointed with their units (the model is asked to give all units of a note on the
same page).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from remelink import prompts
from remelink.agent import (
    MAX_CALLS_PER_TURN,
    Accept,
    Feedback,
    LoopError,
    Transcript,
    json_problem,
    parse_object,
    quote,
    run_loop,
)
from remelink.dream.answer import Page, Verdict, judged, missing, read_page
from remelink.dream.context import RunContext
from remelink.errors import ModelError, RemelinkError
from remelink.evidence import detect_language
from remelink.models.base import Message
from remelink.tools.vault_tools import toolbox
from remelink.units import Unit
from remelink.vault.notes import Note
from remelink.workspace import UnitWorkspace

PER_NOTE_CHARS = 20_000
# A model that keeps saying "more" while adding units stops here; the notes it has not judged
# by then stay pending and are retried in smaller batches, so even this bound drops nothing.
MAX_PAGES = 200
ANSWER_KEYS = ("units", "memory_units", "verdicts")


@dataclass
class BatchResult:
    units: list[Unit]
    judged: dict[str, Verdict]  # the notes of the batch with a verdict
    unresolved: list[str] = field(default_factory=list)  # problems left after the repairs
    notices: list[str] = field(default_factory=list)
    pages: int = 0  # pages answered


class ExtractionFailed(RemelinkError):
    """A page of the batch failed (`cause`: a LoopError or ModelError) after `partial.pages`
    pages were answered: what those pages gave is in `partial`."""

    def __init__(self, cause: Exception, partial: BatchResult) -> None:
        super().__init__(str(cause))
        self.cause = cause
        self.partial = partial


def material(note: Note) -> str:
    text = note.text
    if len(text) > PER_NOTE_CHARS:
        text = text[:PER_NOTE_CHARS] + \
            f"\n[... truncated at {PER_NOTE_CHARS} characters; call read for the rest]"
    return f"### {note.path}\n{text}"


class _PageJudge:
    """Judges the answers of one page: a repair while turns are left, then what is usable."""

    def __init__(self, paths: list[str], units: dict[str, Unit], verdicts: dict[str, Verdict],
                 repair_turns: int, language: str, cited: list[str] | None = None) -> None:
        self.paths, self.units, self.verdicts = paths, units, verdicts
        self.cited = cited or paths  # the notes a unit may cite: the batch's, the held units
        self.repair_turns, self.language = repair_turns, language
        self.answers = 0
        self.left: list[str] = []

    def __call__(self, text: str) -> Accept[Page] | Feedback:
        self.answers += 1
        data = parse_object(text)
        if data is None or not any(k in data for k in ANSWER_KEYS):
            broken = json_problem(text)
            said = f"your answer was {quote(text)}" if text.strip() else "your answer was empty"
            why = f"; its JSON is invalid: {broken}" if broken else ""
            return Feedback(f'No extraction object found ({said}{why}). Answer with one JSON '
                            'object {"units": [...], "verdicts": [...], "more": false} and '
                            'nothing else.', f"no extraction object found ({said}{why})")
        page = read_page(data, self.cited)
        unjudged = [] if page.more else missing(
            self.paths, [*self.units.values(), *page.units], {**self.verdicts, **page.verdicts})
        problems = page.problems + unjudged
        if problems and self.answers <= self.repair_turns:
            return Feedback(prompts.extract_repair_message(problems, language=self.language),
                            "; ".join(problems[:3]))
        # What is still wrong: the units and verdicts left out (reported); the notes without a
        # verdict need no report here, they are retried.
        self.left = page.problems
        return Accept(page)


def extract_batch(ctx: RunContext, batch: list[tuple[str, Note, str]],
                  edited: dict[str, list[str]]) -> BatchResult:
    """Units and verdicts for `batch`. Raises LoopError when no page could be read at all,
    ModelError when the model failed on the first page, ExtractionFailed (with what the
    answered pages gave) when either happened on a later page."""
    paths = [rel for rel, _, _ in batch]
    text = "\n\n".join(material(note) for _, note, _ in batch)
    language = ctx.settings.language if ctx.settings.language != "auto" else \
        detect_language(text[:20_000])
    page_size = ctx.max_units
    # The units held for a later note (units.HELD_KIND), for an engine that asks for them: a
    # unit of this batch may take one up and cite its note.
    held: list[Unit] = []
    if getattr(ctx.model, "takes_held", False):
        with ctx.state_lock:
            held = ctx.state.held_units(but=paths)
    messages: list[Message] = list(prompts.extract_messages(
        date=ctx.window.date if ctx.window else ctx.today,
        window=list(ctx.window.days) if ctx.window else [], hint=ctx.hint,
        max_units=page_size, changed_paths=paths, material=text, language=language,
        edited=edited, held=[{"name": u.name, "summary": u.summary, "paths": list(u.paths),
                              "points": list(u.points)} for u in held]))
    cited = list(dict.fromkeys([*paths, *(p for u in held for p in u.paths)]))
    ws = UnitWorkspace(ctx.vault, ctx.settings, None, lambda q, n, b: [])
    tools = toolbox(ws, read_only=True)
    dream = ctx.settings.auto_dream
    units: dict[str, Unit] = {}
    verdicts: dict[str, Verdict] = {}
    result = BatchResult([], {})
    for page_no in range(MAX_PAGES):
        judge = _PageJudge(paths, units, verdicts, dream.repair_turns, language, cited)
        # The first page may read every note of the batch (a bounded number of reads a turn).
        reads = math.ceil(len(batch) / MAX_CALLS_PER_TURN) if page_no == 0 else 0
        base = len(messages)
        transcript = Transcript(messages=messages)
        try:
            page, transcript = run_loop(ctx.model, messages, tools, judge,
                                        max_steps=dream.max_steps + reads,
                                        max_repairs=dream.repair_turns, transcript=transcript)
        except (LoopError, ModelError) as exc:
            if not result.pages:
                raise
            result.units = list(units.values())
            result.judged = judged(paths, result.units, verdicts)
            raise ExtractionFailed(exc, result) from exc
        finally:  # what the page cost counts, whatever happens next
            with ctx.state_lock:
                ctx.report.tokens_in += transcript.usage.prompt_tokens
                ctx.report.tokens_out += transcript.usage.completion_tokens
                ctx.report.extract_tokens_in += transcript.usage.prompt_tokens
        fresh = [u for u in page.units if u.id not in units]
        units.update((u.id, u) for u in fresh)
        verdicts.update(page.verdicts)
        result.unresolved = judge.left
        result.pages += 1
        if not page.more or not page_size:
            break
        if not fresh:
            result.notices.append("extraction asked for another page but gave no new unit; "
                                  "stopped paging")
            break
        # The page stays as a summary: the tool turns (reads) and a short answer; its repair
        # turns and the full units go (they are in `units`, and cost every later page).
        kept = [m for m in messages[base:] if m.get("role") == "tool" or m.get("tool_calls")]
        messages[base:] = [*kept, {"role": "assistant", "content": prompts.extract_page_summary(
            [(u.name, list(u.paths)) for u in page.units],
            {p: v.verdict for p, v in page.verdicts.items()}, more=True)}]
        messages.append({"role": "user", "content": prompts.extract_continue_message(
            len(units), page_size, language=language)})
    else:
        result.notices.append(f"extraction still had more units after {MAX_PAGES} pages; the "
                              "notes without a verdict are retried alone")
    result.units = list(units.values())
    result.judged = judged(paths, result.units, verdicts)
    return result
