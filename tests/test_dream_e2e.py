"""`dream run` end to end on fixture vaults (SPEC §8-§10): the local engine and the strict
scripted model, golden digest trees, idempotent reruns, edited notes, retries and attempts,
the date window, bad input, and the audit trail."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from dream_support import (
    FIXTURES,
    TODAY,
    Wrapped,
    all_bytes,
    audit_lines,
    copy_fixture,
    golden_tree,
    notes_bytes,
    run,
    run_summary,
    settings_of,
    state_of,
)

from remelink.dream.run import status
from remelink.models.scripted import ScriptedModel
from remelink.render import status_text


def digest_and_summary(vault: Path) -> dict[str, bytes]:
    files = notes_bytes(vault, ("digest",))
    files["run-summary.json"] = run_summary(vault)
    return files


@pytest.mark.parametrize("name", ["en", "zh"])
def test_local_engine_run_matches_the_golden_tree(tmp_path: Path, name: str) -> None:
    vault = copy_fixture(tmp_path, name)
    raw_before = notes_bytes(vault, ("daily", "resource"))

    report = run(vault)

    assert report.ok, report.errors + [u.error for u in report.units if u.error]
    assert report.units_extracted == len(report.units) > 0
    assert all(u.status == "done" for u in report.units)
    assert notes_bytes(vault, ("daily", "resource")) == raw_before  # raw notes never rewritten
    golden_tree(digest_and_summary(vault), f"dream/{name}")
    # Every node the run wrote passes lint-links (Sources, links, frontmatter).
    import io

    from remelink.lint import run as lint

    out = io.StringIO()
    assert lint([], vault=str(vault), fmt="json", include_all=False, resolution=None, out=out,
                err=io.StringIO()) == 0, out.getvalue()


def test_a_second_run_changes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = copy_fixture(tmp_path, "en")
    first = run(vault)
    assert first.ok and first.units
    notes, state = notes_bytes(vault), state_of(vault)

    second = run(vault)

    assert second.ok
    assert (second.files_changed, second.units_extracted, second.units) == (0, 0, [])
    assert second.files_unchanged == second.files_scanned == len(first.inputs)
    assert {i["status"] for i in second.inputs.values()} == {"skipped"}
    assert notes_bytes(vault) == notes
    after = state_of(vault)
    for key in ("runs", "updated"):
        state.pop(key), after.pop(key)
    assert after == state  # only the run history moved
    assert [r["id"] for r in state_of(vault)["runs"]] == [first.run_id, second.run_id]
    assert not any(line["run"] == second.run_id for line in audit_lines(vault))


def test_an_edited_note_is_processed_again(tmp_path: Path) -> None:
    vault = copy_fixture(tmp_path, "en")
    first = run(vault)
    assert first.ok
    done_before = {uid for uid, u in state_of(vault)["units"].items() if u["status"] == "done"}
    note = vault / "daily/2026-06-19/dashboard-review.md"
    note.write_text(note.read_text(encoding="utf-8") + "\n## Decision\n- We decided that every "
                    "chart on the analytics dashboard must show its data freshness timestamp.\n",
                    encoding="utf-8")

    second = run(vault)

    assert second.ok
    assert (second.files_changed, second.files_unchanged) == (1, len(first.inputs) - 1)
    assert second.inputs["daily/2026-06-19/dashboard-review.md"]["status"] == "processed"
    # The unchanged preference of that note keeps its id and is not integrated again; only the
    # new statement is.
    integrated = [u for u in second.units if u.status == "done"]
    assert integrated and all(u.id not in done_before for u in integrated)
    assert any("freshness" in u.name.lower() or "freshness" in (u.target or "")
               for u in integrated)
    lines = [a for a in audit_lines(vault) if a["status"] == "done"]
    assert len(lines) == len({a["unit"] for a in lines})  # no unit integrated twice


def test_a_failed_unit_is_retried_then_skipped_until_retry_failed(tmp_path: Path) -> None:
    vault = copy_fixture(tmp_path, "en")
    settings = settings_of(vault, max_attempts=2)
    target = "Alice prefers to see concrete progress"
    flaky = Wrapped(settings, garble=[target])

    first = run(vault, flaky, settings)
    failed = [u for u in first.units if u.status == "failed"]
    assert [u.name for u in failed] == [target] and failed[0].attempts == 1
    assert not first.ok and "answer not accepted" in (failed[0].error or "")
    note = "daily/2026-06-19/dashboard-review.md"
    assert first.inputs[note]["status"] == "failed"
    assert note not in first.checkpointed and state_of(vault)["inputs"][note]["status"] == \
        "pending"

    second = run(vault, flaky, settings)  # attempt 2 of 2: fails again
    assert [(u.name, u.status, u.attempts) for u in second.units] == [(target, "failed", 2)]
    assert state_of(vault)["inputs"][note]["status"] == "failed"

    calls = flaky.calls
    third = run(vault, flaky, settings)  # out of attempts: skipped, the model is not asked
    assert [(u.name, u.status) for u in third.units] == [(target, "skipped")]
    assert "rerun with --retry-failed" in (third.units[0].error or "")
    # Not ok (exit 1): a unit that gave up is not a success, or cron would never notice.
    assert flaky.calls == calls and not third.ok

    fourth = run(vault, Wrapped(settings), settings, retry_failed=True)
    assert [(u.name, u.status) for u in fourth.units] == [(target, "done")]
    # Every note the unit came from waited for it, and is checkpointed now.
    assert note in failed[0].paths
    assert sorted(fourth.checkpointed) == sorted(failed[0].paths) and fourth.ok
    assert {u["status"] for u in state_of(vault)["units"].values()} == {"done"}


def test_a_broken_backend_stops_the_step_without_using_attempts(tmp_path: Path) -> None:
    """Three transient failures in a row: the provider is down. The rest of the step is not
    attempted, and the three get their attempt back (an outage costs no attempt)."""
    vault = copy_fixture(tmp_path, "en")
    settings = settings_of(vault)
    report = run(vault, Wrapped(settings, broken=True), settings)
    statuses = [u.status for u in report.units]
    assert statuses[:3] == ["failed"] * 3 and set(statuses[3:]) == {"skipped"}
    assert (report.units[3].error or "").startswith(
        "not attempted: the model failed 3 time(s) in a row, so the provider looks down "
        "(last error: backend down (test))")
    assert not report.ok
    units = state_of(vault)["units"]
    assert all(u["attempts"] == 0 for u in units.values())  # an outage costs no attempt
    assert {u["status"] for u in units.values()} == {"pending"}
    healed = run(vault, Wrapped(settings), settings)
    # Every unit is reported but the line units that changed nothing, which are forgotten.
    assert healed.ok and len(healed.units) == len(state_of(vault)["units"]) < len(units)


def test_a_note_whose_extraction_fails_is_tried_alone_retried_then_given_up(
        tmp_path: Path) -> None:
    vault = copy_fixture(tmp_path, "en")
    settings = settings_of(vault, max_attempts=2)
    poison = "daily/2026-06-19/dashboard-review.md"
    model = Wrapped(settings, garble_extract=[poison])

    first = run(vault, model, settings)
    # The batch it was in failed, then each note went alone: only the poison note is lost.
    assert any(poison in call and len(call) > 1 for call in model.extract_calls)
    assert [poison] in model.extract_calls
    assert first.inputs[poison]["status"] == "failed" and first.inputs[poison]["attempts"] == 1
    assert "extraction" in first.inputs[poison]["error"] and not first.ok
    others = {p: i["status"] for p, i in first.inputs.items() if p != poison}
    assert others and set(others.values()) == {"processed"}
    assert first.units and all(poison not in u.paths for u in first.units)
    recorded = state_of(vault)["inputs"][poison]
    assert (recorded["status"], recorded["extract_attempts"]) == ("failed", 1)

    model.extract_calls.clear()
    second = run(vault, model, settings)  # attempt 2 of 2, the poison note alone
    assert model.extract_calls and all(call == [poison] for call in model.extract_calls)
    assert second.inputs[poison]["attempts"] == 2 and second.units == []

    calls = model.calls
    third = run(vault, model, settings)  # out of attempts: reported, the model is not asked
    assert model.calls == calls
    assert "gave up after 2 attempt(s)" in third.inputs[poison]["error"]
    assert "--retry-failed" in third.inputs[poison]["error"]
    report = status(vault, settings)
    assert [(i["path"], i["attempts"], i["gave_up"]) for i in report.unextracted] == \
        [(poison, 2, True)] and not report.ok
    assert "notes whose extraction failed (1)" in status_text(report)

    # An edit starts the count again.
    with (vault / poison).open("a", encoding="utf-8") as f:
        f.write("\nOne more line.\n")
    edited = run(vault, model, settings)
    assert edited.inputs[poison]["attempts"] == 1

    healed = run(vault, Wrapped(settings), settings)
    assert healed.inputs[poison]["status"] == "processed", healed.inputs[poison]
    assert healed.ok and any(poison in u.paths for u in healed.units)
    assert "extract_hash" not in state_of(vault)["inputs"][poison]
    assert status(vault, settings).unextracted == []


def test_retry_failed_tries_a_given_up_extraction_again(tmp_path: Path) -> None:
    vault = copy_fixture(tmp_path, "en")
    settings = settings_of(vault, max_attempts=1)
    poison = "daily/2026-06-19/dashboard-review.md"
    run(vault, Wrapped(settings, garble_extract=[poison]), settings)
    model = Wrapped(settings)
    skipped = run(vault, model, settings)
    assert model.extract_calls == [] and "gave up" in skipped.inputs[poison]["error"]
    retried = run(vault, model, settings, retry_failed=True)
    assert model.extract_calls and all(call == [poison] for call in model.extract_calls)
    assert retried.ok and retried.inputs[poison]["status"] == "processed"


def test_an_outage_during_extraction_stops_it_and_costs_no_attempt(tmp_path: Path) -> None:
    vault = copy_fixture(tmp_path, "en")
    settings = settings_of(vault, max_attempts=1)
    down = Wrapped(settings, extract_down=True)
    report = run(vault, down, settings)
    # The batch failed, then two notes alone: three in a row, the provider is down.
    assert len(down.extract_calls) == 3 and len(down.extract_calls[0]) > 1
    assert all(len(call) == 1 for call in down.extract_calls[1:])
    assert not report.ok
    assert {i["status"] for i in report.inputs.values()} == {"failed"}
    assert any("not attempted" in i["error"] for i in report.inputs.values())
    assert all("backend down" in i["error"] or "not attempted" in i["error"]
               for i in report.inputs.values())
    assert status(vault, settings).unextracted == []  # no attempt used, nothing recorded
    healed = run(vault, Wrapped(settings), settings)
    assert healed.ok and {i["status"] for i in healed.inputs.values()} == {"processed"}


# -- the scripted model (the LLM path) -------------------------------------------------------
ZH_NOTE = "daily/2026-06-23/发布复盘.md"
ZH_UNIT = {"name": "数据库迁移先于代码单独发布", "bucket": "wiki",
           "summary": "数据库迁移必须先于代码单独发布，并在低峰期执行，否则锁表会拖垮支付接口。",
           "paths": [ZH_NOTE]}
ZH_NODE = "digest/wiki/数据库迁移先于代码单独发布.md"
ZH_BODY = ("数据库迁移必须先于代码单独发布，并在低峰期执行。\n\n"
           "迁移和代码一起上线时，迁移锁表会让支付接口超时。\n\n## Sources\n\n"
           f"这条教训来自 [[{ZH_NOTE}]] 记录的周二发布事故。\n")


def integrate_turns(expect_name: str) -> list[dict[str, Any]]:
    return [
        {"expect": expect_name,
         "tool_calls": [{"name": "node_search", "arguments": {"query": "数据库迁移 发布 锁表"}}]},
        {"tool_calls": [{"name": "write", "arguments": {
            "path": ZH_NODE, "name": ZH_UNIT["name"], "description": ZH_UNIT["summary"],
            "content": ZH_BODY, "metadata": {"kind": "observation"}}}]},
        {"expect": "Staged", "text": json.dumps({"action": "CREATE", "target_path": ZH_NODE,
                                                 "note": "新建节点"}, ensure_ascii=False)},
    ]


def tag_turns() -> list[dict[str, Any]]:
    return [{"expect": "Tag the node", "tool_calls": [{"name": "read",
                                                       "arguments": {"path": ZH_NODE}}]},
            {"text": '{"tags": ["支付 接口", "#支付_接口", "Payments API"]}'}]


def scripted_vault(tmp_path: Path) -> Path:
    vault = tmp_path / "scripted"
    (vault / ".remelink").mkdir(parents=True)
    (vault / ZH_NOTE).parent.mkdir(parents=True)
    (vault / ZH_NOTE).write_bytes((FIXTURES / "zh" / ZH_NOTE).read_bytes())
    return vault


def test_scripted_model_run_matches_the_golden_tree(tmp_path: Path) -> None:
    vault = scripted_vault(tmp_path)
    model = ScriptedModel([
        {"expect": '"task": "extract"', "text": json.dumps({"units": [ZH_UNIT]},
                                                           ensure_ascii=False)},
        *integrate_turns(ZH_UNIT["name"]), *tag_turns()])

    report = run(vault, model)

    model.assert_done()
    assert report.ok, report.errors
    assert [(u.action, u.target) for u in report.units] == [("CREATE", ZH_NODE)]
    # Tags normalised: whitespace to _, '#' dropped, case-insensitive duplicates dropped.
    assert report.tags == {ZH_NODE: ["支付_接口", "Payments_API"]}
    golden_tree(digest_and_summary(vault), "dream/scripted")
    line, = audit_lines(vault)
    assert line["model"] == "scripted" and line["candidates"] == []


def test_scripted_unit_that_errors_once_is_retried_and_succeeds(tmp_path: Path) -> None:
    vault = scripted_vault(tmp_path)
    garbage = [{"text": "not a receipt"}] * 4  # the first answer and three repair turns
    first_model = ScriptedModel([
        {"text": json.dumps({"units": [ZH_UNIT]}, ensure_ascii=False)},
        {"tool_calls": [{"name": "node_search", "arguments": {"query": "数据库迁移"}}]},
        *garbage])

    first = run(vault, first_model)

    first_model.assert_done()
    assert [(u.status, u.attempts) for u in first.units] == [("failed", 1)]
    assert "answer not accepted after 3 repair turn(s)" in (first.units[0].error or "")
    assert not (vault / ZH_NODE).exists() and not first.ok
    assert state_of(vault)["units"][first.units[0].id]["status"] == "failed"

    second_model = ScriptedModel([*integrate_turns(ZH_UNIT["name"]), *tag_turns()])
    second = run(vault, second_model)  # no extraction call: the note was not re-extracted

    second_model.assert_done()
    assert second.ok and second.files_changed == 0
    assert [(u.status, u.action, u.attempts) for u in second.units] == [("done", "CREATE", 2)]
    assert second.checkpointed == [ZH_NOTE]
    assert (vault / ZH_NODE).read_text(encoding="utf-8").endswith(ZH_BODY)


# -- window, bad input, audit -----------------------------------------------------------------
def test_date_window_restricts_the_inputs(tmp_path: Path) -> None:
    vault = copy_fixture(tmp_path, "en")
    report = run(vault, date="2026-06-21", scan_days=2)
    assert report.window == ["2026-06-20", "2026-06-21"]
    assert sorted(report.inputs) == ["daily/2026-06-20/pdf-export-timeout.md",
                                     "daily/2026-06-21/soc2-review.md",
                                     "resource/2026-06-20/export-queue-design.md"]
    assert sorted(state_of(vault)["inputs"]) == sorted(report.inputs)
    # The rest is picked up by a run without a window.
    rest = run(vault)
    assert rest.files_changed == 3 and rest.files_unchanged == 3


BAD = {
    "daily/2026-06-22/bad-yaml.md": b"---\nname: [unclosed\n---\n# Body\n\nWe decided things.\n",
    "daily/2026-06-22/binary.md": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)),
    "daily/2026-06-22/latin1.md": "# Café\n\nWe decided to serve crème brûlée.\n".encode("latin-1"),
    "daily/2026-06-22/empty.md": b"",
    "resource/2026-06-22/huge.md": b"# Huge\n\n" + b"We decided to keep this. " * 200,
}


def test_bad_input_is_reported_one_line_each_and_never_touched(tmp_path: Path) -> None:
    from dream_support import cli

    vault = copy_fixture(tmp_path, "en")
    config = vault / ".remelink/config.yaml"
    config.write_text(config.read_text(encoding="utf-8") + "limits:\n  max_note_bytes: 4000\n",
                      encoding="utf-8")
    for rel, data in BAD.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_bytes(data)

    result = cli("dream", "run", "--vault", str(vault), "--quiet", "--today", TODAY)

    assert result.exit_code == 1, result.output
    problems = result.stdout.split("problems:\n", 1)[1].split("warnings:", 1)[0].splitlines()
    assert len(problems) == len(BAD), problems
    assert all(p.strip().split(": ", 1)[0] in BAD for p in problems)
    text = "\n".join(problems)
    for needle in ("invalid YAML", "binary file", "not valid UTF-8", "empty note",
                   "over the 0.00381 MiB limit"):
        assert needle in text or needle.split()[0] in text, (needle, text)
    for rel, data in BAD.items():
        assert (vault / rel).read_bytes() == data  # never rewritten, never lost
    state = state_of(vault)
    assert {rel: state["inputs"][rel]["status"] for rel in BAD} == dict.fromkeys(BAD, "invalid")
    good = [r for r, i in state["inputs"].items() if r not in BAD]
    assert good and all(state["inputs"][r]["status"] == "processed" for r in good)

    again = cli("dream", "run", "--vault", str(vault), "--quiet", "--today", TODAY)
    assert again.exit_code == 1 and again.stdout.count("\n  ") >= len(BAD)
    (vault / "daily/2026-06-22/empty.md").write_text("# Fixed\n\nWe decided to always write "
                                                     "a summary line first.\n", encoding="utf-8")
    fixed = cli("dream", "run", "--vault", str(vault), "--quiet", "--today", TODAY, "--json")
    data = json.loads(fixed.stdout)
    assert data["data"]["inputs"]["daily/2026-06-22/empty.md"]["status"] == "processed"
    assert len(data["errors"]) == len(BAD) - 1


def test_audit_trail_has_one_line_per_unit_decision(tmp_path: Path) -> None:
    vault = copy_fixture(tmp_path, "en")
    report = run(vault)
    lines = audit_lines(vault)
    assert [line["unit"] for line in lines] == [u.id for u in report.units]
    assert (vault / ".remelink" / "runs" / f"{report.run_id}.jsonl").is_file()
    for line in lines:
        assert {"candidates", "classification", "action", "target", "note", "model",
                "tokens_in", "tokens_out", "duration_ms", "error"} <= set(line)
        assert line["model"] == "local" and line["status"] == "done"
        assert isinstance(line["duration_ms"], int) and line["duration_ms"] >= 0
    updates = [line for line in lines if line["action"] != "CREATE"]
    assert updates and all(line["candidates"] for line in updates)
    for line in updates:
        assert line["classification"][line["target"]] == "same_abstraction"
        scores = [c["score"] for c in line["candidates"]]
        assert scores == sorted(scores, reverse=True)


def test_nothing_outside_the_run_changes_when_there_is_nothing_to_do(tmp_path: Path) -> None:
    vault = tmp_path / "empty"
    (vault / ".remelink").mkdir(parents=True)
    report = run(vault)
    assert report.ok and report.files_scanned == 0
    files = set(all_bytes(vault))
    assert ".remelink/state.json" in files and not any(f.startswith("digest/") for f in files)


def test_an_unexpected_index_failure_rebuilds_the_index_and_goes_on() -> None:
    from remelink.dream.run import LockedIndex
    from remelink.errors import VaultBusy

    class Flaky:
        def __init__(self) -> None:
            self.calls: list[str] = []
            self.fail = True

        def update(self, paths: list[str]) -> None:
            self.calls.append(f"update {paths}")
            if self.fail:
                self.fail = False
                raise TypeError("'NoneType' object is not iterable")

        def search(self, query: str, **kwargs: Any) -> list[str]:
            self.calls.append("search")
            if query == "busy":
                raise VaultBusy("index busy")
            return ["hit"]

        def close(self) -> None:
            self.calls.append("close")

        def rebuild(self) -> None:
            self.calls.append("rebuild")

    inner = Flaky()
    index = LockedIndex(inner)
    index.update(["digest/wiki/a.md"])  # the rebuild read the node: no second update
    assert inner.calls == ["update ['digest/wiki/a.md']", "close", "rebuild"]
    assert index.search("q") == ["hit"]
    with pytest.raises(VaultBusy):  # our own errors are not swallowed
        index.search("busy")


class Costly:
    """The local engine, charged 5,000 prompt tokens a turn (a unit takes two turns or more)."""

    name = "costly"

    def __init__(self, settings: Any) -> None:
        from remelink.models.local import LocalModel

        self.inner = LocalModel(settings)

    def bind_index(self, index: Any) -> None:
        self.inner.bind_index(index)

    def complete(self, messages: Any, tools: Any) -> Any:
        from dataclasses import replace

        from remelink.models.base import Usage

        return replace(self.inner.complete(messages, tools), usage=Usage(5000, 10))


def test_a_unit_over_its_token_budget_fails_cleanly_and_says_so(tmp_path: Path) -> None:
    """SPEC §7.2 "Bounded": the budget is reported in the envelope, the audit and status."""
    from remelink.render import dream_json

    vault = copy_fixture(tmp_path, "en")
    settings = settings_of(vault, unit_tokens=8000)
    before = notes_bytes(vault, ("digest",))
    report = run(vault, Costly(settings), settings)
    over = [u for u in report.units if u.over_budget]
    assert over and all(u.status == "failed" and u.attempts == 1 for u in over)
    assert all(u.tokens_in <= 8000 for u in report.units)
    assert (over[0].error or "").startswith("token budget reached: 5,000 prompt tokens in 1 "
                                            "turn(s), and the next request would take about "
                                            "5,000 more, over auto_dream.unit_tokens (8,000)")
    assert not report.ok
    envelope = json.loads(dream_json(report, 0.0))
    assert envelope["counts"]["units_over_budget"] == len(over)
    assert envelope["data"]["budget"] == {"unit_tokens": 8000, "max_steps": 30,
                                          "repair_turns": 3}
    lines = [a for a in audit_lines(vault) if a.get("budget", {}).get("over")]
    assert {a["unit"] for a in lines} == {u.id for u in over}
    text = status_text(status(vault, settings))
    assert "token budget reached" in text
    # A unit that failed wrote nothing; the others went on.
    done = [u for u in report.units if u.status == "done"]
    assert all(u.target for u in done)
    changed = {p for p, b in notes_bytes(vault, ("digest",)).items() if before.get(p) != b}
    assert changed == {u.target for u in done if u.target}
