"""The checkpoint `.remelink/state.json` (SPEC §9.3): round trip, refusal of newer or unreadable
files, and the recovery rules that make integration exactly-once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from remelink.dream.records import InputRecord, render_json, sha256
from remelink.dream.state import STATE_FILE, VERSION, State
from remelink.errors import StateError
from remelink.units import Unit

NODE = "digest/wiki/x.md"


def unit(name: str = "X", paths: tuple[str, ...] = ("daily/2026-06-01/a.md",)) -> Unit:
    return Unit(name=name, bucket="wiki", summary=f"{name} holds.", paths=paths)


def vault_with(tmp_path: Path, *units: Unit) -> tuple[Path, State]:
    vault = tmp_path / "v"
    (vault / ".remelink").mkdir(parents=True)
    state = State.load(vault)
    state.add_units(units, "r0")
    return vault, state


def test_round_trip_keeps_every_field(tmp_path: Path) -> None:
    u = Unit(name="Ünïcode 名字", bucket="personal", summary="s", paths=("daily/a.md",),
             points=("step: one",), kind="preference")
    vault, state = vault_with(tmp_path, u)
    state.inputs["daily/a.md"] = InputRecord(hash="h", status="pending", units=[u.id], run="r0")
    rec = state.units[u.id]
    rec.status, rec.attempts, rec.error, rec.action, rec.target = "failed", 2, "boom", None, NODE
    state.pending_tags = [NODE]  # pending tags name existing nodes (dream/untrusted.py)
    (vault / NODE).parent.mkdir(parents=True)
    (vault / NODE).write_text("---\nname: X\ndescription: x\n---\nx\n", encoding="utf-8")
    state.start_run("r1", "2026-06-25")
    state.save()
    text = (vault / STATE_FILE).read_text(encoding="utf-8")
    assert json.loads(text)["version"] == VERSION and "Ünïcode 名字" in text  # UTF-8, not \\u
    again = State.load(vault)
    assert again.units[u.id].to_json() == rec.to_json()
    assert again.units[u.id].unit == u
    assert again.inputs == state.inputs and again.pending_tags == [NODE]
    assert again.runs[0]["id"] == "r1" and again.runs[0]["finished"] is None


def test_render_json_is_json_with_one_record_per_line() -> None:
    data = {"version": 1, "inputs": {"a": {"hash": "h"}, "b": {"hash": "i"}}, "units": {},
            "runs": [{"id": "r"}], "pending_tags": []}
    text = render_json(data)
    assert json.loads(text) == data
    assert '  "a": {"hash": "h"},\n  "b": {"hash": "i"}\n' in text


@pytest.mark.parametrize("content,needle", [
    (b'{"version": 3}', "version 3, newer than this remelink understands (2)"),
    (b"\xff\xfe garbage", "cannot read the checkpoint"),
    (b'{"version": 1, "inputs": {"a": {"hash": "h", "status": "exploded"}}}', "malformed"),
    (b'{"version": true}', "has no version"),
    (b"[1, 2]", "has no version"),
])
def test_unusable_files_are_refused_and_never_written(tmp_path: Path, content: bytes,
                                                      needle: str) -> None:
    vault = tmp_path / "v"
    (vault / ".remelink").mkdir(parents=True)
    (vault / STATE_FILE).write_bytes(content)
    with pytest.raises(StateError) as info:
        State.load(vault)
    assert needle in str(info.value) and info.value.exit_code == 2
    assert "\n" not in str(info.value)
    assert (vault / STATE_FILE).read_bytes() == content


def test_recover_committing_unit_whose_bytes_landed_is_done(tmp_path: Path) -> None:
    u = unit()
    vault, state = vault_with(tmp_path, u)
    data = b"---\nname: X\n---\nbody\n"
    state.mark_committing(u.id, NODE, sha256(data), "r1", created=True)
    (vault / NODE).parent.mkdir(parents=True)
    (vault / NODE).write_bytes(data)

    (r,) = state.recover(vault)

    assert r.done and r.target == NODE and not r.from_audit
    rec = state.units[u.id]
    assert (rec.status, rec.action, rec.attempts) == ("done", "CREATE", 1)
    assert state.pending_tags == [NODE]


def test_recover_committing_unit_whose_write_never_happened_is_pending(tmp_path: Path) -> None:
    u = unit()
    vault, state = vault_with(tmp_path, u)
    state.mark_committing(u.id, NODE, sha256(b"new bytes"), "r1", created=False)
    (vault / NODE).parent.mkdir(parents=True)
    (vault / NODE).write_bytes(b"old bytes")

    (r,) = state.recover(vault)

    assert not r.done and "never happened" in r.message
    assert state.units[u.id].status == "pending" and state.units[u.id].commit_hash is None
    assert state.pending_tags == []


def test_recover_trusts_the_audit_line_of_an_interrupted_run(tmp_path: Path) -> None:
    """A run killed after a unit's audit line but before its state was saved: the unit is done
    (even one that changed nothing, so it never was `committing`)."""
    a, b, c = unit("A"), unit("B"), unit("C")
    vault, state = vault_with(tmp_path, a, b, c)
    state.start_run("r1", None)  # never finished: the run was killed
    runs = vault / ".remelink" / "runs"
    runs.mkdir()
    (vault / NODE).parent.mkdir(parents=True)  # an audit line is trusted for existing nodes only
    (vault / NODE).write_bytes(b"---\nname: X\ndescription: x\n---\nx\n")
    lines = [{"run": "r1", "unit": a.id, "status": "done", "action": "CORROBORATE",
              "target": NODE, "changed": False, "attempts": 1},
             {"run": "r1", "unit": b.id, "status": "failed", "error": "x"}]
    (runs / "r1.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines)
                                   + '{"run": "r1", "unit": "' + c.id + '", "sta',
                                   encoding="utf-8")  # a line cut by the kill

    recoveries = state.recover(vault)

    assert [(r.unit, r.done, r.from_audit) for r in recoveries] == [(a.id, True, True)]
    assert (state.units[a.id].status, state.units[a.id].action) == ("done", "CORROBORATE")
    assert state.units[b.id].status == "pending" and state.units[c.id].status == "pending"
    assert state.runs[0]["interrupted"] is True and state.runs[0]["finished"]
    assert state.interrupted_runs() == []


def test_parallel_commits_settle_the_earlier_unit(tmp_path: Path) -> None:
    """Unit A committed node T, then unit B (parallel, settled first) is about to replace T:
    A's bytes are on disk, so A has landed and must not be integrated again after a crash."""
    a, b = unit("A"), unit("B")
    _, state = vault_with(tmp_path, a, b)
    first = b"first version\n"
    state.mark_committing(a.id, NODE, sha256(first), "r1", created=True)
    state.settle_landed(NODE, sha256(first), except_unit=b.id)
    state.mark_committing(b.id, NODE, sha256(b"second"), "r1", created=False)
    assert state.units[a.id].status == "done"
    assert state.units[b.id].status == "committing"


def test_an_edited_note_drops_its_unlanded_units_only(tmp_path: Path) -> None:
    note, other = "daily/2026-06-01/a.md", "daily/2026-06-01/b.md"
    landed, stale, shared = unit("L", (note,)), unit("S", (note,)), unit("M", (note, other))
    _, state = vault_with(tmp_path, landed, stale, shared)
    state.units[landed.id].status = "done"
    state.units[stale.id].status = "failed"
    state.inputs[note] = InputRecord("h1", "pending", [landed.id, stale.id, shared.id])
    state.inputs[other] = InputRecord("h2", "pending", [shared.id])

    dropped = state.drop_stale_units(note, new_ids=["u-new"])

    assert dropped == [stale.id]
    assert set(state.units) == {landed.id, shared.id}  # done, or still needed by b.md


def test_input_status() -> None:
    state = State(Path("/nonexistent"))
    a, b = unit("A"), unit("B")
    state.add_units([a, b], "r")
    state.inputs["n"] = InputRecord("h", units=[a.id, b.id], verdict="units")
    assert state.input_status("n", 3) == "pending"
    state.units[a.id].status = state.units[b.id].status = "done"
    assert state.input_status("n", 3) == "processed"
    state.units[b.id].status, state.units[b.id].attempts = "failed", 2
    assert state.input_status("n", 3) == "pending"
    assert state.input_status("n", 2) == "failed"
    # No unit and no verdict: never judged, so never done (the defect of version 1).
    state.inputs["empty"] = InputRecord("h", units=[])
    assert state.input_status("empty", 3) == "pending"
    state.inputs["empty"] = InputRecord("h", units=[], verdict="nothing", reason="greetings only")
    assert state.input_status("empty", 3) == "processed"


def test_a_version_1_state_is_migrated_and_its_unjudged_notes_extracted_again(
        tmp_path: Path) -> None:
    vault = tmp_path / "v"
    (vault / ".remelink").mkdir(parents=True)
    kept = unit("K", ("daily/a.md",))
    v1 = {"version": 1, "inputs": {
        "daily/a.md": {"hash": "ha", "status": "processed", "units": [kept.id]},
        "daily/b.md": {"hash": "hb", "status": "processed", "units": []},
        "daily/c.md": {"hash": "hc", "status": "invalid", "units": [], "error": "binary"},
        "daily/d.md": {"hash": "", "status": "failed", "units": [], "extract_hash": "hd",
                       "extract_attempts": 2}},
        "units": {kept.id: {**kept.as_dict(), "status": "done", "target": "digest/wiki/k.md"}}}
    (vault / STATE_FILE).write_text(json.dumps(v1), encoding="utf-8")

    state = State.load(vault)

    a, b, c, d = (state.inputs[f"daily/{n}.md"] for n in "abcd")
    # Version 1 may have cut units from any note: every note is extracted again (its hash is
    # cleared); what it gave is kept, for the pairing that keeps re-extraction from duplicating.
    assert (a.verdict, a.hash, a.units, state.input_status("daily/a.md", 3)) == \
        ("units", "", [kept.id], "processed")
    # Checkpointed with no unit and no verdict: never judged, so pending.
    assert (b.verdict, b.hash, b.status) == (None, "", "pending")
    assert (c.status, c.hash) == ("invalid", "hc")
    assert (d.status, d.extract_attempts, d.verdict) == ("failed", 2, None)
    state.save()
    again = json.loads((vault / STATE_FILE).read_text(encoding="utf-8"))
    assert again["version"] == VERSION == 2
    assert again["inputs"]["daily/a.md"]["verdict"] == "units"
    assert "verdict" not in again["inputs"]["daily/b.md"]


# -- the journal ---------------------------------------------------------------------------------
def test_journal_records_survive_without_a_full_save(tmp_path: Path) -> None:
    a, b = unit("A"), unit("B", ("daily/2026-06-01/b.md",))
    vault, state = vault_with(tmp_path, a, b)
    state.save()
    state.inputs["daily/2026-06-01/a.md"] = InputRecord(hash="h1", units=[a.id])
    state.mark_committing(a.id, NODE, "abc", "r1", created=True)
    state.log(units=[a.id], inputs=["daily/2026-06-01/a.md"])
    (vault / NODE).parent.mkdir(parents=True)
    (vault / NODE).write_bytes(b"---\nname: X\ndescription: x\n---\nx\n")
    state.pending_tags.append(NODE)
    state.log(meta=True)
    journal = vault / ".remelink" / "state.journal"
    assert journal.is_file()
    again = State.load(vault)  # a killed run: state.json plus the journal
    assert again.units[a.id].status == "committing" and again.units[a.id].commit_hash == "abc"
    assert again.units[b.id].status == "pending"
    assert again.inputs["daily/2026-06-01/a.md"].hash == "h1"
    assert again.pending_tags == [NODE]
    again.save()  # the end of a run folds the journal in and drops it
    assert not journal.exists()
    assert State.load(vault).units[a.id].status == "committing"


def test_a_torn_last_journal_line_is_ignored(tmp_path: Path) -> None:
    a = unit("A")
    vault, state = vault_with(tmp_path, a)
    state.save()
    state.units[a.id].status = "done"
    state.log(units=[a.id])
    journal = vault / ".remelink" / "state.journal"
    with journal.open("ab") as fh:  # a kill in the middle of the next append
        fh.write(b'{"t": "unit", "id": "' + a.id.encode() + b'", "r": {"name": "A", "bu')
    assert State.load(vault).units[a.id].status == "done"


def test_a_damaged_journal_line_before_the_end_stops_the_run(tmp_path: Path) -> None:
    a = unit("A")
    vault, state = vault_with(tmp_path, a)
    state.save()
    journal = vault / ".remelink" / "state.journal"
    journal.write_bytes(b"not json\n" + json.dumps(
        {"t": "unit", "id": a.id, "r": state.units[a.id].to_json()}).encode() + b"\n")
    before = journal.read_bytes()
    with pytest.raises(StateError, match="journal is damaged at line 1"):
        State.load(vault)
    assert journal.read_bytes() == before


def test_journal_deletes_dropped_units_and_works_without_state_json(tmp_path: Path) -> None:
    a, b = unit("A"), unit("B", ("daily/2026-06-01/b.md",))
    vault, state = vault_with(tmp_path, a, b)
    state.log(units=[a.id, b.id])  # no state.json yet: the journal alone
    assert not (vault / STATE_FILE).exists()
    assert set(State.load(vault).units) == {a.id, b.id}
    del state.units[b.id]
    state.log(units=[b.id])
    assert set(State.load(vault).units) == {a.id}
