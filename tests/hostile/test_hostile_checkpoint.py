"""Everything read from `.remelink/` is untrusted (a crafted commit of state.json or runs/):
every path field of state.json, the journal and runs/<id>.jsonl, run ids, and the files
themselves (symlinks out, FIFOs, hard links). Each entry is one line naming the file and the
entry, ignored, never followed; nothing outside the vault or under daily/ is written."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest
from harness import TIMEOUT, World, world

from remelink.dream.state import State
from remelink.units import Unit

pytestmark = pytest.mark.timeout(TIMEOUT)
RAW = "daily/2026-06-01/payments-retry.md"
RAW_ZH = "daily/2026-06-22/周会.md"
NODE = "digest/wiki/idempotency-keys.md"


def unit(paths: tuple[str, ...] = (RAW,), name: str = "Retries need keys") -> Unit:
    return Unit(name=name, bucket="wiki", summary="Every money-moving POST needs a key.",
                paths=paths)


def state_json(w: World, **parts: Any) -> None:
    data = {"version": 1, "inputs": {}, "units": {}, "runs": [], "pending_tags": []}
    data.update(parts)
    (w.vault / ".remelink" / "state.json").write_text(json.dumps(data, ensure_ascii=False),
                                                      encoding="utf-8")


def unit_record(u: Unit, **fields: Any) -> dict[str, Any]:
    rec = u.as_dict()
    rec.update({"status": "pending", "attempts": 0, "error": None, "action": None,
                "target": None, "commit_hash": None, "run": "r0"})
    rec.update(fields)
    return rec


def outside_paths(w: World, name: str = "victim.md") -> list[str]:
    """The ways a crafted entry names a file outside the vault."""
    rel = os.path.relpath(w.outside / name, w.vault)
    return [rel, str(w.outside / name), f"digest/wiki/../../../outside/{name}",
            f"digest/wiki/{rel}"]


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- state.json ---------------------------------------------------------------------------------
def test_pending_tags_naming_raw_notes_and_files_outside(tmp_path: Path) -> None:
    """Issue case 1: `memory_tags: []` was written into the daily note and outside."""
    w = world(tmp_path)
    bad = [RAW, *outside_paths(w)]
    state_json(w, pending_tags=bad)
    w.seal()
    _report, out = w.run()
    for entry in bad:
        w.held(out, needle=f"pending_tags entry {entry!r}")
    assert "memory_tags" not in (w.outside / "victim.md").read_text(encoding="utf-8")


def test_inputs_keys_outside_the_raw_folders(tmp_path: Path) -> None:
    w = world(tmp_path)
    bad = [*outside_paths(w), "digest/wiki/idempotency-keys.md", "daily/../../x.md"]
    state_json(w, inputs={p: {"hash": "h", "status": "processed", "units": []} for p in bad})
    w.seal()
    _, out = w.run()
    for entry in bad:
        w.held(out, needle=f"inputs entry {entry!r}")
    assert not set(bad) & set(State.load(w.vault).inputs)


def test_unit_paths_outside_are_never_read_as_evidence(tmp_path: Path) -> None:
    """A pending unit citing a file outside: integrating it would read that file."""
    w = world(tmp_path)
    for path in outside_paths(w, "secret.md"):
        u = unit((path,), name=f"Deploy password {len(path)}")
        state_json(w, units={u.id: unit_record(u)})
        w.seal()
        _, out = w.run()
        w.held(out, needle=f"unit {u.id} path")


def test_unit_target_outside_committing_with_the_outside_files_hash(tmp_path: Path) -> None:
    """A `committing` unit whose target is outside and whose hash matches the outside file:
    recovery would call it landed and queue the outside file for tags."""
    w = world(tmp_path)
    victim = w.outside / "victim.md"
    for target in outside_paths(w):
        u = unit(name=f"Landed {len(target)}")
        state_json(w, units={u.id: unit_record(u, status="committing", target=target,
                                               commit_hash=sha(victim))},
                   runs=[{"id": "r0", "started": "x", "finished": None}])
        w.seal()
        report, out = w.run()
        w.held(out, needle=f"unit {u.id} target")
        assert not any(target in r for r in report.recovered)


def test_unit_target_naming_a_raw_note(tmp_path: Path) -> None:
    w = world(tmp_path)
    u = unit()
    state_json(w, units={u.id: unit_record(u, status="committing", target=RAW_ZH,
                                           commit_hash=sha(w.vault / RAW_ZH))},
               runs=[{"id": "r0", "started": "x", "finished": None}])
    w.seal()
    _, out = w.run()
    w.held(out, needle=f"unit {u.id} target")


def test_run_ids_that_climb_out_are_never_opened(tmp_path: Path) -> None:
    w = world(tmp_path)
    (w.outside / "evil.jsonl").write_text(json.dumps({"status": "done", "unit": "u",
                                                      "target": "x"}) + "\n", encoding="utf-8")
    ids = ["../../../outside/evil", str(w.outside / "evil"), "a/b", ""]
    state_json(w, runs=[{"id": i, "started": "x", "finished": None} for i in ids])
    w.seal()
    _, out = w.run()
    for i in ids:
        w.held(out, needle=f"run id {i!r}")


# -- runs/<id>.jsonl -----------------------------------------------------------------------------
@pytest.mark.parametrize("target", [RAW_ZH, "OUTSIDE", "ABSOLUTE", "digest/wiki/missing.md"])
def test_audit_line_of_a_fake_unfinished_run(tmp_path: Path, target: str) -> None:
    """Issue case 1b: a fake unfinished run plus a `done` audit line naming a daily note (it
    was rewritten) or a file outside: not trusted, one line, the unit stays pending."""
    w = world(tmp_path)
    target = {"OUTSIDE": outside_paths(w)[0], "ABSOLUTE": outside_paths(w)[1]}.get(target,
                                                                                   target)
    u = unit()
    state_json(w, units={u.id: unit_record(u)},
               runs=[{"id": "20260101T000000-1-abcd", "started": "x", "finished": None}])
    runs = w.vault / ".remelink" / "runs"
    runs.mkdir()
    (runs / "20260101T000000-1-abcd.jsonl").write_text(json.dumps(
        {"status": "done", "unit": u.id, "target": target, "changed": True,
         "action": "CORROBORATE"}, ensure_ascii=False) + "\n", encoding="utf-8")
    w.seal()
    report, out = w.run()
    w.held(out, needle="20260101T000000-1-abcd.jsonl line 1")
    assert not report.recovered


def test_audit_file_symlinked_outside_is_not_read(tmp_path: Path) -> None:
    w = world(tmp_path)
    state_json(w, runs=[{"id": "r1", "started": "x", "finished": None}])
    runs = w.vault / ".remelink" / "runs"
    runs.mkdir()
    os.symlink(w.outside / "secret.md", runs / "r1.jsonl")
    w.seal()
    _, out = w.run()
    w.held(out, needle="runs/r1.jsonl")


def test_runs_folder_symlinked_outside_gets_no_audit_line(tmp_path: Path) -> None:
    w = world(tmp_path)
    os.symlink(w.outside / "day", w.vault / ".remelink" / "runs")
    w.seal()
    result = w.cli_here("dream", "run")
    w.held(result.stdout + result.stderr, needle=".remelink/runs is a symlink")
    assert result.exit_code == 2  # the vault's own state was tampered with: nothing runs


# -- the journal -------------------------------------------------------------------------------
def journal(w: World, *entries: dict[str, Any]) -> None:
    (w.vault / ".remelink" / "state.journal").write_text(
        "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries), encoding="utf-8")


def test_journal_meta_line_with_pending_tags_outside(tmp_path: Path) -> None:
    w = world(tmp_path)
    bad = [RAW, *outside_paths(w)]
    journal(w, {"t": "meta", "r": {"runs": [], "pending_tags": bad}})
    w.seal()
    _, out = w.run()
    for entry in bad:
        w.held(out, needle=f"state.journal: pending_tags entry {entry!r}")


def test_journal_unit_and_input_lines_outside(tmp_path: Path) -> None:
    w = world(tmp_path)
    u = unit()
    victim = w.outside / "victim.md"
    target = outside_paths(w)[0]
    journal(w, {"t": "unit", "id": u.id,
                "r": unit_record(u, status="committing", target=target,
                                 commit_hash=sha(victim))},
            {"t": "input", "id": outside_paths(w)[1],
             "r": {"hash": "h", "status": "processed", "units": [u.id]}},
            {"t": "meta", "r": {"runs": [{"id": "../x", "finished": None}],
                                "pending_tags": []}})
    w.seal()
    _, out = w.run()
    w.held(out, needle=f"state.journal: unit {u.id} target")
    w.held(out, needle=f"state.journal: inputs entry {outside_paths(w)[1]!r}")
    w.held(out, needle="state.journal: run id '../x'")


# -- the files of .remelink/ themselves ------------------------------------------------------------
def test_state_json_symlinked_outside_stops_the_run_untouched(tmp_path: Path) -> None:
    w = world(tmp_path)
    os.symlink(w.outside / "victim.md", w.vault / ".remelink" / "state.json")
    w.seal()
    result = w.cli_here("dream", "run")
    w.held(result.stdout + result.stderr, needle=".remelink/state.json")
    assert result.exit_code == 2 and "is a symlink" in result.stderr


def test_state_json_fifo_does_not_hang(tmp_path: Path) -> None:
    w = world(tmp_path)
    os.mkfifo(w.vault / ".remelink" / "state.json")
    w.seal()
    for command in (("dream", "run"), ("status",)):
        result = w.cli(*command)
        w.held(result.stdout + result.stderr, needle=".remelink/state.json")
        assert result.returncode == 2 and "FIFO" in result.stderr


def test_journal_symlinked_to_dev_zero(tmp_path: Path) -> None:
    w = world(tmp_path)
    os.symlink("/dev/zero", w.vault / ".remelink" / "state.journal")
    w.seal()
    result = w.cli("dream", "run")
    w.held(result.stdout + result.stderr, needle=".remelink/state.journal")
    assert result.returncode == 2


def test_remelink_folder_symlinked_outside(tmp_path: Path) -> None:
    w = world(tmp_path)
    (w.outside / "state").mkdir()
    (w.vault / ".remelink" / "config.yaml").rename(w.root / "config.yaml")
    os.rmdir(w.vault / ".remelink")
    os.symlink(w.outside / "state", w.vault / ".remelink")
    w.seal()
    result = w.cli_here("dream", "run")
    w.held(result.stdout + result.stderr, needle=".remelink is a symlink")
    assert result.exit_code == 2 and not os.listdir(w.outside / "state")


@pytest.mark.parametrize("kind", ["symlink", "fifo"])
def test_config_yaml_symlinked_outside_or_a_fifo(tmp_path: Path, kind: str) -> None:
    w = world(tmp_path)
    config = w.vault / ".remelink" / "config.yaml"
    config.unlink()
    if kind == "symlink":
        os.symlink(w.outside / "secret.md", config)
    else:
        os.mkfifo(config)
    w.seal()
    result = w.cli("status")
    w.held(result.stdout + result.stderr, needle="config.yaml")
    assert result.returncode == 2


def test_a_cleaned_checkpoint_is_saved_clean(tmp_path: Path) -> None:
    """After one run the crafted entries are gone from state.json: reported once."""
    w = world(tmp_path)
    state_json(w, pending_tags=outside_paths(w))
    w.seal()
    w.run()
    text = (w.vault / ".remelink" / "state.json").read_text(encoding="utf-8")
    assert "victim.md" not in text
    _, out = w.run()
    assert "pending_tags entry" not in out
    w.held(out)


# -- crafted values (issue 20, case 12): one line and exit 2, never "unexpected error"--------------
def _crafted_cases(w: World) -> dict[str, str]:
    u = unit()
    good = unit_record(u)
    run = {"id": "r0", "started": "x", "finished": "y", "ok": True}

    def state(**parts: Any) -> str:
        data = {"version": 2, "inputs": {}, "units": {}, "runs": [], "pending_tags": []}
        data.update(parts)
        return json.dumps(data)

    return {
        "attempts Infinity": state(units={u.id: {**good, "attempts": 0}}).replace(
            '"attempts": 0', '"attempts": Infinity'),
        "attempts NaN": state(units={u.id: {**good, "attempts": 0}}).replace(
            '"attempts": 0', '"attempts": NaN'),
        "attempts huge": state(units={u.id: {**good, "attempts": 10 ** 40}}),
        "attempts lots": state(units={u.id: {**good, "attempts": "lots"}}),
        "attempts float": state(units={u.id: {**good, "attempts": 2.5}}),
        "extract_attempts -1": state(inputs={RAW: {"hash": "h", "status": "failed",
                                                   "extract_hash": "h",
                                                   "extract_attempts": -1}}),
        "counts x": state(runs=[{**run, "counts": "x"}]),
        "counts value x": state(runs=[{**run, "counts": {"units_failed": "x"}}]),
        "counts actions x": state(runs=[{**run, "counts": {"actions": {"CREATE": "x"}}}]),
        "run ok string": state(runs=[{**run, "ok": "yes"}]),
        "run not a mapping": state(runs=["r0"]),
        "pending_tags string": state(pending_tags="digest/wiki/x.md"),
        "paths a mapping": state(units={u.id: {**good, "paths": {RAW: 1}}}),
        "error a list": state(units={u.id: {**good, "error": ["x"]}}),
    }


@pytest.mark.parametrize("case", list(_crafted_cases(World(Path("/x"), Path("/x"),
                                                             Path("/x")))))
@pytest.mark.parametrize("command", ["dream", "status"])
def test_crafted_numbers_and_types_in_state_json(tmp_path: Path, case: str,
                                                  command: str) -> None:
    w = world(tmp_path)
    (w.vault / ".remelink" / "state.json").write_text(_crafted_cases(w)[case],
                                                      encoding="utf-8")
    w.seal()
    result = w.cli_here(*(("dream", "run") if command == "dream" else ("status",)))
    out = result.stdout + result.stderr
    w.held(out, needle=".remelink/state.json")
    assert result.exit_code == 2, out
    assert "unexpected error" not in out and not list((w.vault / ".remelink").glob("crash-*"))


def test_crafted_numbers_in_the_journal(tmp_path: Path) -> None:
    w = world(tmp_path)
    u = unit()
    text = json.dumps({"t": "unit", "id": u.id, "r": unit_record(u, attempts=0)})
    journal_text = text.replace('"attempts": 0', '"attempts": Infinity') + "\n" + \
        json.dumps({"t": "meta", "r": {"runs": [], "pending_tags": []}}) + "\n"
    (w.vault / ".remelink" / "state.journal").write_text(journal_text, encoding="utf-8")
    w.seal()
    result = w.cli_here("dream", "run")
    w.held(result.stdout + result.stderr, needle=".remelink/state.journal")
    assert result.exit_code == 2 and "unexpected" not in result.stderr


@pytest.mark.parametrize("attempts", ['"lots"', "Infinity", "-3", "[1]"])
def test_crafted_attempts_in_an_audit_line(tmp_path: Path, attempts: str) -> None:
    """A run record (runs/<id>.jsonl) of an unfinished run, whose `done` line recovery reads."""
    w = world(tmp_path)
    indexed_node = NODE
    u = unit()
    state_json(w, units={u.id: unit_record(u)},
               runs=[{"id": "20260101T000000-1-abcd", "started": "x", "finished": None}])
    runs = w.vault / ".remelink" / "runs"
    runs.mkdir()
    line = json.dumps({"status": "done", "unit": u.id, "target": indexed_node, "changed": True,
                       "action": "CORROBORATE", "attempts": 0})
    (runs / "20260101T000000-1-abcd.jsonl").write_text(
        line.replace('"attempts": 0', f'"attempts": {attempts}') + "\n", encoding="utf-8")
    w.seal()
    result = w.cli_here("dream", "run")
    w.held(result.stdout + result.stderr, needle="20260101T000000-1-abcd.jsonl")
    assert result.exit_code == 2 and "unexpected" not in result.stderr


@pytest.mark.parametrize("flags", [("--scan-days", "999999999"), ("--scan-days", "0"),
                                   ("--date", "0001-01-02", "--scan-days", "30"),
                                   ("--wait", "nan"), ("--wait", "-1"), ("--wait", "inf")])
def test_crafted_flags(tmp_path: Path, flags: tuple[str, ...]) -> None:
    w = world(tmp_path)
    w.seal()
    result = w.cli("dream", "run", *flags, timeout=30)
    out = result.stdout + result.stderr
    w.held(out, needle=flags[-2])
    assert result.returncode == 2 and "unexpected" not in out and "Traceback" not in out


@pytest.mark.parametrize("text", ["timeout: .nan\n", "timeout: .inf\n", "retries: 1000000000000\n",
                                  "auto_dream: {max_units: 99999999999}\n",
                                  "auto_dream: {concurrency: 100000}\n",
                                  "limits: {max_note_bytes: 99999999999999}\n",
                                  "model_options: {temperature: .nan}\n"])
def test_crafted_numbers_in_config(tmp_path: Path, text: str) -> None:
    w = world(tmp_path)
    (w.vault / ".remelink" / "config.yaml").write_text(text, encoding="utf-8")
    w.seal()
    result = w.cli_here("status")
    key = text.split(":")[0] if "{" not in text else text.split("{")[1].split(":")[0]
    w.held(result.stdout + result.stderr, needle=key)
    assert result.exit_code == 2 and "unexpected" not in result.stderr
