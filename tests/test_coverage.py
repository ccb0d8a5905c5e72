"""Every note accounted for (SPEC §8, §9.3): the cases of issue 10, each reproduced first.

- 40 one-line notes, local engine: 16 units and 24 notes checkpointed with `"units": []`
  (a batch kept `max_units` units, the loop ran 16 reads a turn).
- LLM answers with unit paths without `daily/`, buckets `preference` / `procedures`, 22 units
  for a page of 20: units dropped or re-bucketed silently, notes checkpointed anyway.
- Notes the model leaves out: checkpointed as processed with no unit.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from dream_support import TODAY, cli, run, settings_of, state_of

from remelink.config import load_settings
from remelink.dream.batching import batches, estimate_tokens
from remelink.dream.run import status
from remelink.errors import ModelError, UsageError
from remelink.integrate import integrate
from remelink.models.base import AssistantTurn, Message, ToolSpec
from remelink.models.local import LocalModel
from remelink.render import dream_text, status_text
from remelink.units import parse_units_document


def one_line_notes(vault: Path, n: int) -> list[str]:
    (vault / ".remelink").mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(1, n + 1):
        rel = f"daily/2026-06-{i % 28 + 1:02d}/n{i}.md"
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(f"We decided to set the timeout of service-{i} to {i}0 seconds "
                                 f"because the batch job number {i} kept failing.\n",
                                 encoding="utf-8")
        paths.append(rel)
    return paths


class Recorder:
    """The local engine, recording every extraction turn (calls per turn, continue turns)."""

    def __init__(self, settings: Any) -> None:
        self.inner = LocalModel(settings)
        self.name = "local"
        self.extract_turns: list[AssistantTurn] = []
        self.continues = 0

    def bind_index(self, index: Any) -> None:
        self.inner.bind_index(index)

    def complete(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> AssistantTurn:
        turn = self.inner.complete(messages, tools)
        first = next(str(m.get("content")) for m in messages if m.get("role") == "user")
        if '"task": "extract"' in first:
            self.extract_turns.append(turn)
            self.continues += '"continue"' in str(messages[-1].get("content"))
        return turn


def test_forty_one_line_notes_each_give_a_unit_and_none_is_lost(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    paths = one_line_notes(vault, 40)
    settings = settings_of(vault)  # default: max_units 20, one batch for all 40
    model = Recorder(settings)

    report = run(vault, model, settings)

    assert report.ok, report.errors
    assert report.units_extracted == 40 and len(report.checkpointed) == 40
    # 40 reads in turns of at most 16 calls (the loop runs no more than that a turn), then
    # the units in pages of 20: the second page after one continue turn.
    sizes = [len(t.tool_calls) for t in model.extract_turns if t.tool_calls]
    assert sizes == [16, 16, 8] and model.continues == 1
    state = state_of(vault)
    for rel in paths:
        rec = state["inputs"][rel]
        assert (rec["status"], rec["verdict"], len(rec["units"])) == ("processed", "units", 1)
    assert status(vault, settings).ok
    again = run(vault, model, settings)
    assert (again.files_changed, again.units_extracted) == (0, 0)


def test_max_units_pages_the_answer_and_never_cuts(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    one_line_notes(vault, 17)
    settings = settings_of(vault, max_units=3)
    model = Recorder(settings)

    report = run(vault, model, settings)

    assert report.ok and report.units_extracted == 17
    assert model.continues == 5  # pages of 3: 3+3+3+3+3+2


class ExtractThen:
    """Scripted answers for the extraction turns (in order; each may name substrings the last
    message must contain, as the strict scripted model does); the local engine for the rest."""

    def __init__(self, settings: Any, answers: list[tuple[Any, tuple[str, ...]]]) -> None:
        self.inner = LocalModel(settings)
        self.name = "extract-then-local"
        self.answers = list(answers)
        self.received: list[str] = []

    def bind_index(self, index: Any) -> None:
        self.inner.bind_index(index)

    def complete(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> AssistantTurn:
        first = next(str(m.get("content")) for m in messages if m.get("role") == "user")
        if '"task": "extract"' not in first:
            return self.inner.complete(messages, tools)
        last = str(messages[-1].get("content"))
        self.received.append(last)
        if not self.answers:
            raise ModelError(f"unexpected extraction call #{len(self.received)}")
        answer, expect = self.answers.pop(0)
        for wanted in expect:
            assert wanted in last, f"expected {wanted!r} in {last[:400]!r}"
        return AssistantTurn(text=answer if isinstance(answer, str) else
                             json.dumps(answer, ensure_ascii=False))


NOTES = {
    "daily/2026-06-20/a.md": "Alice prefers short written rollout plans for database changes.\n",
    "daily/2026-06-20/b.md": "# How to rotate keys\n\n1. Create a key.\n2. Deploy it.\n",
    "daily/2026-06-20/c.md": "We decided to use idempotency keys on every payment POST.\n",
    "daily/2026-06-21/d.md": "Thanks everyone, see you tomorrow.\n",
}


def notes_vault(tmp_path: Path, notes: dict[str, str] = NOTES) -> Path:
    vault = tmp_path / "v"
    (vault / ".remelink").mkdir(parents=True)
    for rel, text in notes.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    return vault


def unit(name: str, bucket: str, *paths: str) -> dict[str, Any]:
    return {"name": name, "bucket": bucket, "summary": f"{name}.", "paths": list(paths)}


def test_what_a_model_means_is_accepted(tmp_path: Path) -> None:
    vault = notes_vault(tmp_path)
    answer = {"units": [
        unit("Alice prefers short rollout plans", "preference", "2026-06-20/a.md"),
        unit("Rotate keys", "procedures", "./daily/2026-06-20/b.md"),
        unit("Idempotency keys on payments", "knowledge", "/daily/2026-06-20/c"),
        unit("Alice's rollout plans are written", "Preferences", "[[daily/2026-06-20/a.md]]"),
        unit("Keys are rotated by a runbook", "howto", "daily/2026-06-20/b.md"),
        unit("Idempotency", "concept", "c.md"),
    ], "verdicts": [{"path": "2026-06-21/d.md", "verdict": "nothing",
                     "reason": "a greeting only"}]}
    model = ExtractThen(settings_of(vault), [(answer, ())])

    report = run(vault, model)

    assert report.ok, (report.errors, report.warnings)
    got = sorted((u["bucket"], tuple(u["paths"])) for u in state_of(vault)["units"].values())
    assert got == [("personal", ("daily/2026-06-20/a.md",))] * 2 + \
        [("procedure", ("daily/2026-06-20/b.md",))] * 2 + \
        [("wiki", ("daily/2026-06-20/c.md",))] * 2
    d = state_of(vault)["inputs"]["daily/2026-06-21/d.md"]
    assert (d["status"], d["verdict"], d["reason"]) == ("processed", "nothing", "a greeting only")
    assert not report.warnings


def test_what_a_model_does_not_mean_goes_back_as_a_repair(tmp_path: Path) -> None:
    vault = notes_vault(tmp_path)
    bad = {"units": [unit("Alice prefers short rollout plans", "recipes", "a.md"),
                     unit("Rotate keys", "procedure", "daily/2026-06-19/b.md"),
                     unit("Idempotency keys on payments", "wiki", "daily/2026-06-20/c.md")],
           "verdicts": [{"path": "daily/2026-06-21/d.md", "verdict": "nothing"}]}
    good = {"units": [unit("Alice prefers short rollout plans", "personal", "a.md"),
                      unit("Rotate keys", "procedure", "b.md"),
                      unit("Idempotency keys on payments", "wiki", "daily/2026-06-20/c.md")],
            "verdicts": [{"path": "daily/2026-06-21/d.md", "verdict": "nothing",
                          "reason": "greetings"}]}
    model = ExtractThen(settings_of(vault), [
        (bad, ()),
        (good, ("'recipes' is not a bucket; use procedure, personal or wiki",
                "'daily/2026-06-19/b.md' names none of the notes",
                "daily/2026-06-21/d.md is \"nothing\" without a reason"))])

    report = run(vault, model)

    assert report.ok and not model.answers
    buckets = {u["name"]: u["bucket"] for u in state_of(vault)["units"].values()}
    assert buckets["Alice prefers short rollout plans"] == "personal"
    assert {r["status"] for r in state_of(vault)["inputs"].values()} == {"processed"}


def test_a_unit_still_wrong_after_the_repairs_leaves_its_note_pending(tmp_path: Path) -> None:
    """Never silently dropped: the unit is reported, its note has no verdict, so it is tried
    alone, costs an attempt, and is reported by status; it is never checkpointed as done."""
    vault = notes_vault(tmp_path, {k: NOTES[k] for k in list(NOTES)[:2]})
    a, b = list(NOTES)[:2]
    wrong = {"units": [unit("Alice prefers short rollout plans", "recipes", a),
                       unit("Rotate keys", "procedure", b)]}
    # The batch: the first answer and 3 repair turns; then a.md alone: 4 answers again.
    model = ExtractThen(settings_of(vault), [(wrong, ())] * 4 + [
        ({"units": [unit("Alice prefers short rollout plans", "recipes", a)]}, ())] * 4)

    report = run(vault, model)

    assert not model.answers and not report.ok
    assert report.inputs[b]["status"] == "processed"
    assert report.inputs[a]["status"] == "failed" and report.inputs[a]["attempts"] == 1
    assert "no verdict" in report.inputs[a]["error"]
    assert any("'recipes' is not a bucket" in w and "left out" in w for w in report.warnings)
    assert report.checkpointed == [b]
    text = dream_text(report, 1.0)
    assert "1 input checkpointed" in text and "1 without a verdict" in text
    state = state_of(vault)["inputs"][a]
    assert (state["status"], state.get("verdict")) == ("failed", None)
    st = status(vault, settings_of(vault))
    assert not st.ok and st.notes[a]["verdict"] is None and st.verdicts["none"] == 1
    assert "notes whose extraction failed (1)" in status_text(st)


def test_a_note_left_out_is_asked_for_then_retried_alone(tmp_path: Path) -> None:
    vault = notes_vault(tmp_path, {k: NOTES[k] for k in list(NOTES)[:3]})
    a, b, c = list(NOTES)[:3]
    partial = {"units": [unit("Alice prefers short rollout plans", "personal", a),
                         unit("Rotate keys", "procedure", b)],
               "verdicts": [{"path": a, "verdict": "units"}, {"path": b, "verdict": "units"},
                            {"path": c, "verdict": "units"}]}
    alone = {"units": [unit("Idempotency keys on payments", "wiki", c)]}
    model = ExtractThen(settings_of(vault), [
        (partial, ()),
        *[(partial, (f"{c}: verdict \"units\" but no unit cites it",))] * 3,
        (alone, ())])

    report = run(vault, model)

    assert report.ok and not model.answers
    assert [u.paths for u in report.units if u.status == "done"][-1] == [c]


def test_more_units_than_a_page_are_all_kept(tmp_path: Path) -> None:
    notes = {f"daily/2026-06-20/n{i}.md": f"We decided that service-{i} keeps a {i}0 second "
             f"timeout because job {i} failed.\n" for i in range(22)}
    vault = notes_vault(tmp_path, notes)
    units = [unit(f"Service-{i} keeps a {i}0 second timeout", "wiki", p)
             for i, p in enumerate(notes)]
    # 22 units for a page of 20: accepted whole, none cut ("kept the first 20" before).
    model = ExtractThen(settings_of(vault), [({"units": units}, ())])
    report = run(vault, model)
    assert report.ok and report.units_extracted == 22 and len(report.checkpointed) == 22

    # Paged: 20 and "more", then the continue turn asks for the rest.
    vault2 = notes_vault(tmp_path / "2", notes)
    paged = ExtractThen(settings_of(vault2), [
        ({"units": units[:20], "more": True}, ()),
        ({"units": units[20:]}, ('"continue": {"after": 20}', "at most 20"))])
    report = run(vault2, paged)
    assert report.ok and report.units_extracted == 22 and not paged.answers


# -- batches by estimated tokens ------------------------------------------------------------------
def test_tokens_are_estimated_per_script() -> None:
    english = "The export job retries three times before it gives up. " * 20
    chinese = "导出任务在放弃之前会重试三次，然后通知值班人员。" * 20
    assert 0.2 < estimate_tokens(english) / len(english) < 0.3
    assert estimate_tokens(chinese) >= len(chinese) * 0.9
    assert estimate_tokens("café naïve") == 3  # 8 ASCII characters (2), 2 accented (1)
    # The same number of characters makes about four times smaller batches in Chinese.
    notes = [english[:300]] * 100, [chinese[:300]] * 100
    sizes = [len(list(batches(n, [estimate_tokens(t) for t in n], 3000))) for n in notes]
    assert sizes[1] >= 3 * sizes[0]
    assert [len(b) for b in batches(["x"] * 3, [10_000] * 3, 1)] == [1, 1, 1]  # never empty


def test_batch_chars_still_works_as_a_deprecated_alias(tmp_path: Path) -> None:
    vault = notes_vault(tmp_path)
    (vault / ".remelink" / "config.yaml").write_text("auto_dream:\n  batch_chars: 4000\n",
                                                     encoding="utf-8")
    settings = load_settings(vault, env={})
    assert (settings.auto_dream.batch_tokens, settings.auto_dream.batch_chars) == (1000, 4000)
    report = run(vault, LocalModel(settings), settings)
    assert report.ok
    assert any("batch_chars is deprecated" in w and "batch_tokens: 1000" in w
               for w in report.warnings)
    both = load_settings(vault, env={"REMELINK_AUTO_DREAM__BATCH_TOKENS": "77"})
    assert both.auto_dream.batch_tokens == 77


# -- units files ----------------------------------------------------------------------------------
def test_units_files_follow_the_same_rules(tmp_path: Path) -> None:
    doc = ("- {name: A, bucket: recipes, summary: s, paths: [daily/x.md]}\n"
           "- {name: B, bucket: preferences, summary: s, paths: [daily/x.md]}\n"
           "- {name: C, bucket: wiki, summary: s, paths: ['../etc/passwd']}\n")
    with pytest.raises(UsageError) as info:
        parse_units_document(doc)
    message = str(info.value)
    assert "unit #1: unit 'A': 'recipes' is not a bucket" in message
    assert "unit #3: unit 'C'" in message and "unit #2" not in message
    [b] = parse_units_document(doc.splitlines()[1] + "\n")
    assert b.bucket == "personal"

    vault = notes_vault(tmp_path, {"daily/2026-06-20/keys.md": "Rotate keys every 30 days.\n"})
    units = parse_units_document("- {name: Rotate keys monthly, bucket: howto, summary: Rotate "
                                 "the signing keys every 30 days., paths: [2026-06-20/keys]}\n")
    settings = settings_of(vault)
    report = integrate(vault, settings, units, LocalModel(settings), today=TODAY)
    [result] = report.results
    assert result.ok, result.error
    assert result.unit.paths == ("daily/2026-06-20/keys.md",)
    node = (vault / str(result.target)).read_text(encoding="utf-8")
    assert "[[daily/2026-06-20/keys.md]]" in node and result.target.startswith(
        "digest/procedure/")


def test_status_json_lists_every_note_with_its_verdict(tmp_path: Path) -> None:
    vault = notes_vault(tmp_path)
    run(vault)
    result = cli("status", "--vault", str(vault), "--json")
    data = json.loads(result.stdout)
    notes = data["data"]["notes"]
    assert set(notes) == set(NOTES)
    assert notes["daily/2026-06-21/d.md"]["verdict"] == "nothing"
    assert notes["daily/2026-06-21/d.md"]["reason"]
    assert all(n["verdict"] == "units" for p, n in notes.items() if p != "daily/2026-06-21/d.md")
    assert data["counts"]["verdicts"] == {"units": 3, "nothing": 1, "none": 0}


def test_a_version_1_checkpoint_gets_back_the_notes_it_lost(tmp_path: Path) -> None:
    """What version 1 left after 40 one-line notes: 16 notes with a unit, 24 checkpointed with
    `"units": []`. Migrated, the next run extracts every note again: the lost ones are
    integrated, the others change nothing (no node twice, no `-2.md`)."""
    import hashlib
    import shutil

    vault = tmp_path / "v"
    paths = one_line_notes(vault, 40)
    lost = paths[16:]
    aside = tmp_path / "aside"
    for rel in lost:  # version 1 integrated only the first 16 units
        (aside / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.move(vault / rel, aside / rel)
    assert run(vault).ok
    for rel in lost:
        shutil.move(aside / rel, vault / rel)
    state = state_of(vault)
    state["version"] = 1
    for rec in state["inputs"].values():
        rec.pop("verdict", None)
    for rel in lost:
        digest = hashlib.sha256((vault / rel).read_bytes()).hexdigest()
        state["inputs"][rel] = {"hash": digest, "status": "processed", "units": []}
    (vault / ".remelink" / "state.json").write_text(json.dumps(state), encoding="utf-8")
    nodes_before = {p.relative_to(vault).as_posix(): p.read_bytes()
                    for p in (vault / "digest").rglob("*.md")}

    report = run(vault)

    assert report.ok and report.files_changed == 40
    done = [u for u in report.units if u.status == "done"]
    assert sorted(p for u in done for p in u.paths) == sorted(lost)
    nodes = {p.relative_to(vault).as_posix(): p.read_bytes()
             for p in (vault / "digest").rglob("*.md")}
    assert len(nodes) == 40 and not [p for p in nodes if p.endswith("-2.md")]
    assert {p: nodes[p] for p in nodes_before} == nodes_before
    assert state_of(vault)["version"] == 2
    assert all(r["verdict"] == "units" for r in state_of(vault)["inputs"].values())
