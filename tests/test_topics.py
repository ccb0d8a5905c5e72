"""`dream_topics_step` (SPEC §10.1): opt-in through `auto_dream.steps`; interests.yaml for the
target date with at most `topic_count` topics, no repeats within `topic_diversity_days`, an
invalid existing file reported and left untouched, an unchanged result not rewritten. The local
engine and the scripted model (the LLM path)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import yaml
from dream_support import copy_fixture, run

from remelink.dream.context import AuditLog, RunContext, RunReport, SilentReporter
from remelink.dream.inputs import Window
from remelink.dream.state import State
from remelink.dream.topics import fold_title, topics_step
from remelink.models.scripted import ScriptedModel
from remelink.units import Unit

DATE = "2026-06-21"
FILE = f"daily/{DATE}/interests.yaml"
STEPS = ("auto_dream:\n  steps: [dream_extract_step, dream_integrate_step, dream_topics_step, "
         "dream_finish_step]\n")


def topics_vault(tmp_path: Path) -> Path:
    vault = copy_fixture(tmp_path, "en")
    config = vault / ".remelink" / "config.yaml"
    config.write_text(config.read_text(encoding="utf-8") + STEPS, encoding="utf-8")
    return vault


def test_not_run_unless_configured(tmp_path: Path) -> None:
    vault = copy_fixture(tmp_path, "en")
    report = run(vault, date=DATE)
    assert report.ok and report.topics_path is None
    assert not (vault / FILE).exists()


def test_local_engine_writes_the_days_topics_once(tmp_path: Path) -> None:
    vault = topics_vault(tmp_path)
    report = run(vault, date=DATE)
    assert report.ok and report.topics_path == FILE
    data = yaml.safe_load((vault / FILE).read_text(encoding="utf-8"))
    topics = data["topics"]
    assert data["date"] == DATE and 1 <= len(topics) <= 3
    for t in topics:
        assert set(t) == {"title", "reason", "evidence", "keywords", "paths"}
        assert t["paths"] and all(p.startswith(f"daily/{DATE}/") for p in t["paths"])
        assert t["evidence"] in t["paths"]
    assert len({fold_title(t["title"]) for t in topics}) == len(topics)
    assert report.topics == [t["title"] for t in topics]

    stamp = os.stat(vault / FILE).st_mtime_ns
    before = (vault / FILE).read_bytes()
    again = run(vault, date=DATE)  # nothing new: same result, file not rewritten
    assert again.ok and again.topics == report.topics
    assert (vault / FILE).read_bytes() == before
    assert os.stat(vault / FILE).st_mtime_ns == stamp


def test_recent_topics_are_not_repeated(tmp_path: Path) -> None:
    vault = topics_vault(tmp_path)
    first = run(vault, date=DATE)
    taken = first.topics[0]
    # The same topic, differently punctuated and cased, appeared two days earlier.
    earlier = vault / "daily/2026-06-19/interests.yaml"
    earlier.write_text(yaml.safe_dump({"topics": [{"title": f"  {taken.upper()}!! ",
                                                   "reason": "seen before"}]}),
                       encoding="utf-8")
    (vault / FILE).unlink()
    again = run(vault, date=DATE)
    assert taken not in again.topics and again.topics  # the other candidates remain
    # Eight days earlier is outside topic_diversity_days (7): no longer a repeat.
    (vault / "daily/2026-06-13").mkdir(parents=True)
    earlier.rename(vault / "daily/2026-06-13/interests.yaml")
    (vault / FILE).unlink()
    assert taken in run(vault, date=DATE).topics


def test_an_invalid_existing_file_is_reported_and_left_untouched(tmp_path: Path) -> None:
    vault = topics_vault(tmp_path)
    (vault / FILE).parent.mkdir(parents=True, exist_ok=True)
    bad = b"topics: [unclosed\n  - title: x\n"
    (vault / FILE).write_bytes(bad)
    report = run(vault, date=DATE)
    assert not report.ok
    assert [e for e in report.errors if e.startswith(f"{FILE}: invalid YAML")]
    assert (vault / FILE).read_bytes() == bad
    assert all(u.status == "done" for u in report.units)  # the rest of the run went on


def topics_context(tmp_path: Path, model: ScriptedModel) -> RunContext:
    from remelink.config import Settings

    vault = tmp_path / "v"
    (vault / ".remelink").mkdir(parents=True)
    state = State.load(vault)
    units = [Unit(name="Rotate keys daily", bucket="procedure", summary="Rotate every 24 h.",
                  paths=(f"daily/{DATE}/soc2.md",)),
             Unit(name="Automate rotation", bucket="wiki", summary="Manual rotation fails audit.",
                  paths=(f"daily/{DATE}/soc2.md", "daily/2026-06-01/x.md")),
             Unit(name="Elsewhere", bucket="wiki", summary="Another day.",
                  paths=("daily/2026-06-01/x.md",))]
    state.add_units(units, "r")
    for rec in state.units.values():
        rec.status = "done"
    return RunContext(vault=vault, settings=Settings(), model=model, state=state, index=None,
                      window=Window.of(DATE, 1), report=RunReport("r", DATE, [DATE], False),
                      audit=AuditLog(vault, "r", enabled=False), reporter=SilentReporter(),
                      today="2026-06-25")


def test_scripted_model_topics_are_cleaned_and_merged(tmp_path: Path) -> None:
    answer = {"topics": [
        {"title": "Key rotation cadence", "reason": "The audit asks for 24 h.",
         "keywords": ["rotation", 7, " audit "], "paths": [f"daily/{DATE}/soc2.md", "../x.md"]},
        {"title": "key ROTATION cadence!", "reason": "duplicate, folded"},
        {"title": "Automation", "reason": "Manual rotation is not a control.",
         "paths": [f"daily/{DATE}/soc2.md"]},
        {"title": "", "reason": "no title: dropped"},
        {"title": "Extra", "reason": "beyond the count"}]}
    model = ScriptedModel([{"expect": '"task": "topics"', "text": json.dumps(answer)}])
    ctx = topics_context(tmp_path, model)
    earlier = ctx.vault / "daily/2026-06-15/interests.yaml"  # within 7 days
    earlier.parent.mkdir(parents=True)
    earlier.write_text("topics:\n- {title: Automation, reason: old}\n", encoding="utf-8")
    ctx.settings = type(ctx.settings)(auto_dream=type(ctx.settings.auto_dream)(topic_count=2))

    topics_step(ctx)

    model.assert_done()
    task = json.loads(model.calls[0][0][1]["content"].split("```json\n")[1].split("```")[0])
    assert [c["title"] for c in task["candidates"]] == ["Rotate keys daily", "Automate rotation"]
    assert task["recent"] == ["Automation"]
    data = yaml.safe_load((ctx.vault / FILE).read_text(encoding="utf-8"))
    assert [t["title"] for t in data["topics"]] == ["Key rotation cadence", "Extra"]
    first = data["topics"][0]
    assert first["paths"] == [f"daily/{DATE}/soc2.md"]  # a path not among the candidates: out
    assert first["keywords"] == ["rotation", "audit"]
    assert first["evidence"] == f"daily/{DATE}/soc2.md"
