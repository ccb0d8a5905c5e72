"""Processed notes that are gone (SPEC §9.3): a renamed note moves its checkpoint entry and its
citations follow it, nothing extracted again; an edited rename is integrated as an edit; a
deleted note is reported with the nodes citing it, forgotten by the checkpoint, and its
citations stay, marked, so that lint-links warns instead of failing a commit."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from dream_support import DEMO, notes_bytes, run, settings_of, state_of
from hypothesis import given, settings
from hypothesis import strategies as st

from remelink.dream import citations as cite
from remelink.dream import sketch
from remelink.dream.run import status
from remelink.dream.state import State
from remelink.lint import lint_links
from remelink.render import dream_text, status_text
from remelink.vault import links as wl
from remelink.vault.marks import deleted_marks, mark_line
from remelink.vault.notes import parse_text

RETRY = "daily/2026-06-01/payments-retry.md"
RETRY_NEW = "daily/2026-06-01/retries-and-idempotency.md"
PDF = "daily/2026-06-20/pdf-export-timeout.md"
PDF_NEW = "daily/2026-06-20/pdf-timeouts.md"
DASHBOARD = "daily/2026-06-19/dashboard-review.md"
LATER = "2026-06-26"


@pytest.fixture(scope="module")
def _dreamt_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo vault after its first run, made once per module (a run of the local engine
    costs more than the rest of most tests here): each test gets a copy."""
    vault = tmp_path_factory.mktemp("dreamt") / "vault"
    shutil.copytree(DEMO, vault)
    report = run(vault)
    assert report.ok, report.errors
    return vault


@pytest.fixture
def dreamt(_dreamt_once: Path, tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    shutil.copytree(_dreamt_once, vault, symlinks=True)  # mtimes kept, as the run left them
    return vault


def move(vault: Path, old: str, new: str) -> None:
    (vault / new).parent.mkdir(parents=True, exist_ok=True)
    (vault / old).rename(vault / new)


def digest_text(vault: Path) -> str:
    return "\n".join(p.read_text(encoding="utf-8")
                     for p in sorted((vault / "digest").rglob("*.md")))


def citing(vault: Path, path: str) -> list[str]:
    return sorted(p.relative_to(vault).as_posix() for p in (vault / "digest").rglob("*.md")
                  if f"[[{path}" in p.read_text(encoding="utf-8"))


def test_a_pure_rename_moves_the_checkpoint_and_the_citations(dreamt: Path) -> None:
    before = citing(dreamt, RETRY)
    assert before
    move(dreamt, RETRY, RETRY_NEW)
    report = run(dreamt, today=LATER)
    assert report.ok, report.errors
    assert report.renamed == [{"from": RETRY, "to": RETRY_NEW, "similarity": 1.0,
                               "nodes": before}]
    assert report.deleted == []
    # Nothing extracted, integrated or created again.
    assert report.files_changed == 0 and report.units_extracted == 0 and not report.units
    assert citing(dreamt, RETRY) == [] and citing(dreamt, RETRY_NEW) == before
    state = state_of(dreamt)
    assert RETRY not in state["inputs"] and state["inputs"][RETRY_NEW]["status"] == "processed"
    assert all(RETRY not in u["paths"] for u in state["units"].values())
    assert all(uid in state["units"] for uid in state["inputs"][RETRY_NEW]["units"])
    assert lint_links(dreamt).problems == []
    assert "renamed (the citations follow the note):" in dream_text(report, 0.1)
    # And the next run has nothing to do.
    again = run(dreamt, today=LATER)
    assert again.renamed == [] and again.files_changed == 0 and not again.units


def test_the_relink_changes_only_the_link_targets(dreamt: Path) -> None:
    nodes = citing(dreamt, RETRY)
    before = {n: (dreamt / n).read_text(encoding="utf-8") for n in nodes}
    move(dreamt, RETRY, RETRY_NEW)
    run(dreamt, today=LATER)
    for node, text in before.items():
        assert (dreamt / node).read_text(encoding="utf-8") == text.replace(RETRY, RETRY_NEW)


def test_an_edited_rename_is_integrated_as_an_edit(dreamt: Path) -> None:
    nodes = citing(dreamt, PDF)
    text = (dreamt / PDF).read_text(encoding="utf-8")
    move(dreamt, PDF, PDF_NEW)
    (dreamt / PDF_NEW).write_text(text.replace("30 seconds", "45 seconds"), encoding="utf-8")
    report = run(dreamt, today=LATER)
    assert report.ok, report.errors
    [renamed] = report.renamed
    assert (renamed["from"], renamed["to"], renamed["nodes"]) == (PDF, PDF_NEW, nodes)
    assert sketch.SAME_NOTE <= renamed["similarity"] < 1.0
    assert report.files_changed == 1  # extracted again, as an edit of the note it was
    assert not report.created  # an edit never creates a second node for the same fact
    assert citing(dreamt, PDF) == [] and set(nodes) <= set(citing(dreamt, PDF_NEW))
    assert not [p for p in lint_links(dreamt).problems if p.level == "error"]


def test_a_different_note_in_place_of_a_deleted_one_is_no_rename(dreamt: Path) -> None:
    (dreamt / PDF).unlink()
    new = "daily/2026-06-20/standup.md"
    (dreamt / new).write_text("# Standup\n\nWe decided to hold the standup at 9:30 from now on "
                              "because half the team starts late.\n", encoding="utf-8")
    report = run(dreamt, today=LATER)
    assert report.renamed == []
    assert [d["path"] for d in report.deleted] == [PDF]
    assert report.files_changed == 1


def test_a_deleted_note_is_reported_forgotten_and_its_citations_marked(dreamt: Path) -> None:
    nodes = citing(dreamt, DASHBOARD)
    assert nodes
    (dreamt / DASHBOARD).unlink()
    settings = settings_of(dreamt)
    gone = status(dreamt, settings)
    assert gone.gone == [{"path": DASHBOARD, "nodes": nodes}]
    assert f"  {DASHBOARD}: cited by {', '.join(nodes)}" in status_text(gone)

    report = run(dreamt, today=LATER)
    assert report.ok, report.errors
    assert report.deleted == [{"path": DASHBOARD, "nodes": nodes}]
    assert f"  {DASHBOARD}: cited by {', '.join(nodes)}" in dream_text(report, 0.1)
    assert DASHBOARD not in state_of(dreamt)["inputs"]
    for node in nodes:  # the citation stays, under a mark a reader sees
        text = (dreamt / node).read_text(encoding="utf-8")
        assert f"[[{DASHBOARD}]]" in text
        assert deleted_marks(text) == {DASHBOARD: LATER}
    problems = lint_links(dreamt).problems
    assert {(p.path, p.level, p.code) for p in problems} == \
        {(n, "warning", "deleted-source") for n in nodes}
    assert all("deleted (2026-06-26" in p.message for p in problems)
    after = status(dreamt, settings)
    assert after.gone == [] and after.runs[-1]["deleted"] == [{"path": DASHBOARD,
                                                               "nodes": nodes}]
    # The next run marks nothing twice and reports nothing.
    snapshot = notes_bytes(dreamt)
    again = run(dreamt, today="2026-06-27")
    assert again.deleted == [] and notes_bytes(dreamt) == snapshot


def test_staged_deletion_of_a_marked_citation_is_a_warning(dreamt: Path) -> None:
    """The pre-commit path: the commit deletes the note; the node marks it; no error."""
    nodes = citing(dreamt, DASHBOARD)
    (dreamt / DASHBOARD).unlink()
    run(dreamt, today=LATER)
    report = lint_links(dreamt, paths=nodes, gone={DASHBOARD: None})
    assert report.errors == 0 and report.warnings == len(nodes)


def test_a_node_changed_meanwhile_keeps_the_note_in_the_checkpoint(
        dreamt: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Compare and swap: a node saved by a person while the run edits it wins; the rename is
    finished by the next run."""
    nodes = citing(dreamt, RETRY)
    move(dreamt, RETRY, RETRY_NEW)
    real = cite.relink

    def concurrent(found: cite.Citing, targets: object) -> object:
        path = dreamt / found.path
        path.write_text(path.read_text(encoding="utf-8") + "\nA line a person added.\n",
                        encoding="utf-8")
        return real(found, targets)  # type: ignore[arg-type]

    monkeypatch.setattr(cite, "relink", concurrent)
    report = run(dreamt, today=LATER)
    assert report.renamed == [] and RETRY in state_of(dreamt)["inputs"]
    assert any("changed on disk while it was being edited" in w for w in report.warnings)
    assert all("A line a person added." in (dreamt / n).read_text() for n in nodes)
    monkeypatch.setattr(cite, "relink", real)
    report = run(dreamt, today=LATER)
    assert [r["to"] for r in report.renamed] == [RETRY_NEW]
    assert citing(dreamt, RETRY) == [] and lint_links(dreamt).errors == 0


def test_a_dry_run_shows_the_relink_and_changes_nothing(dreamt: Path) -> None:
    move(dreamt, RETRY, RETRY_NEW)
    before = notes_bytes(dreamt)
    state = (dreamt / ".remelink" / "state.json").read_bytes()
    report = run(dreamt, today=LATER, dry_run=True)
    assert report.renamed and report.diffs
    assert any(f"+{''}" in d and RETRY_NEW in d for d in report.diffs.values())
    assert notes_bytes(dreamt) == before
    assert (dreamt / ".remelink" / "state.json").read_bytes() == state


def test_a_window_only_looks_at_its_days(dreamt: Path) -> None:
    (dreamt / DASHBOARD).unlink()
    report = run(dreamt, today=LATER, date="2026-06-21", scan_days=1)
    assert report.deleted == [] and DASHBOARD in state_of(dreamt)["inputs"]
    report = run(dreamt, today=LATER, date="2026-06-19", scan_days=1)
    assert [d["path"] for d in report.deleted] == [DASHBOARD]


def test_obsidian_short_links_keep_their_style(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    shutil.copytree(DEMO, vault)
    config = vault / ".remelink" / "config.yaml"
    config.write_text(config.read_text(encoding="utf-8") + "links: {resolution: obsidian}\n",
                      encoding="utf-8")
    assert run(vault).ok
    node = vault / "digest" / "wiki" / "person-notes.md"
    node.write_text("---\nname: Payment notes\ndescription: What the retry note said.\n---\n"
                    "Retries are idempotent.\n\n## Sources\n\nAs [[payments-retry]] and "
                    "[[payments-retry#Decision|the decision]] say.\n", encoding="utf-8")
    move(vault, RETRY, "daily/2026-06-01/retry-policy.md")
    report = run(vault, today=LATER)
    assert report.ok, report.errors
    text = node.read_text(encoding="utf-8")
    assert "As [[retry-policy]] and [[retry-policy#Decision|the decision]] say." in text
    assert "digest/wiki/person-notes.md" in report.renamed[0]["nodes"]


# -- the pieces ------------------------------------------------------------------------------

def _note(body: str) -> cite.Citing:
    text = f"---\nname: N\ndescription: D\n---\n{body}"
    note = parse_text("digest/wiki/n.md", text)
    return cite.Citing(note.path, text.encode(), note)


targets = st.text(alphabet="abcxyz/-_. 数据", min_size=1, max_size=12).map(
    lambda t: "daily/" + t.strip("/ .") + ".md").filter(lambda t: "//" not in t)


@settings(max_examples=80, deadline=None)
@given(st.lists(targets, min_size=1, max_size=4), targets, st.sampled_from(["", "#Decision",
                                                                              "#^b1"]),
       st.sampled_from(["", "|shown"]), st.booleans())
def test_relink_changes_exactly_the_targets(paths: list[str], new: str, anchor: str,
                                            alias: str, embed: bool) -> None:
    old = paths[0]
    bang = "!" if embed else ""
    body = "".join(f"- Said in {bang}[[{p}{anchor}{alias}]] and `[[{p}]]` in code.\n"
                   for p in paths) + f"\n## Sources\n\nSee [[{old}]].\n"
    found = _note(body)
    links = [lk for lk in wl.parse_links(found.note.body, found.note.body_line)
             if lk.target == old]
    result = cite.relink(found, {(lk.line, lk.col): new for lk in links})
    assert cite.relinked_only(found.note, result, {old: new}) == []
    after = [(lk.target, lk.anchor, lk.alias, lk.embed)
             for lk in wl.parse_links(result.body, result.body_line)]
    want = [(new if lk.target == old else lk.target, lk.anchor, lk.alias, lk.embed)
            for lk in wl.parse_links(found.note.body, found.note.body_line)]
    assert after == want
    assert result.text.count(f"`[[{old}]]`") == found.note.text.count(f"`[[{old}]]`")


def test_the_relink_guard_refuses_any_other_change() -> None:
    found = _note("Said in [[daily/a.md]].\n")
    other = found.note.with_text(found.note.text.replace("Said in [[daily/a.md]]",
                                                         "Stated in [[daily/b.md]]"))
    assert cite.relinked_only(found.note, other, {"daily/a.md": "daily/b.md"})
    fine = found.note.with_text(found.note.text.replace("daily/a.md", "daily/b.md"))
    assert cite.relinked_only(found.note, fine, {"daily/a.md": "daily/b.md"}) == []


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["Alpha.", "Said in [[daily/gone.md]].", "- item [[daily/gone.md]]",
                                 "", "## Sources", "说明 [[daily/gone.md]]。", "> quote"]),
                max_size=10), st.booleans(), st.sampled_from(["en", "zh"]))
def test_a_mark_only_inserts_and_reads_back(lines: list[str], crlf: bool, lang: str) -> None:
    from remelink.guards import conservation_problems

    nl = "\r\n" if crlf else "\n"
    body = nl.join(["Head line.", *lines, "Tail [[daily/gone.md]]."])
    found = _note(body.replace("\n", nl) if not crlf else body)
    found.links["daily/gone.md"] = [lk for lk in wl.parse_links(found.note.body,
                                                                  found.note.body_line)
                                    if lk.target == "daily/gone.md"]
    marked = cite.mark(found, ["daily/gone.md"], "2026-06-26", lang)
    assert conservation_problems(found.note, marked) == []
    assert deleted_marks(marked.text) == {"daily/gone.md": "2026-06-26"}
    assert marked.newline == found.note.newline
    assert ("\r\n" in marked.text) == crlf or "\n" not in marked.text
    again = cite.mark(cite.Citing(found.path, marked.render(), marked, found.links),
                      ["daily/gone.md"], "2026-06-27", lang)
    assert again.text == marked.text  # marked once


@given(st.text(alphabet="abc/ 数`-", min_size=1, max_size=20).map(lambda t: t.strip() or "x"),
       st.sampled_from(["en", "zh"]))
def test_every_mark_names_its_path(path: str, lang: str) -> None:
    line = mark_line(path, "2026-06-26", lang)
    assert "\n" not in line and deleted_marks(f"text\n{line}\n") == {path: "2026-06-26"}
    assert not wl.parse_links(line)  # the mark adds no link


def test_sketch_similarity() -> None:
    text = (DEMO / PDF).read_text(encoding="utf-8")
    a = sketch.hashes(text)
    assert sketch.similarity(a, a) == 1.0
    assert sketch.parse(sketch.sketch(text.encode())) == a
    edited = sketch.hashes(text.replace("30 seconds", "45 seconds"))
    assert sketch.SAME_NOTE <= sketch.similarity(a, edited) < 1.0
    other = sketch.hashes((DEMO / RETRY).read_text(encoding="utf-8"))
    assert sketch.similarity(a, other) < 0.2
    for bad in ("", "!!", "AAA", "A" * 400, 7, None):
        assert sketch.parse(bad) is None


def test_a_checkpoint_without_sketches_gets_them(dreamt: Path) -> None:
    path = dreamt / ".remelink" / "state.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    for rec in data["inputs"].values():
        rec.pop("sketch", None)
    path.write_text(json.dumps(data), encoding="utf-8")
    run(dreamt, today=LATER)
    assert all(rec.get("sketch") for rec in state_of(dreamt)["inputs"].values())


def test_forgetting_a_note_drops_its_pending_units_and_extracts_their_other_notes(
        tmp_path: Path) -> None:
    from remelink.dream.records import InputRecord
    from remelink.dream.state import State
    from remelink.units import Unit

    (tmp_path / ".remelink").mkdir()
    state = State.load(tmp_path)
    both = Unit(name="Both", bucket="wiki", summary="s", paths=("daily/a.md", "daily/b.md"))
    done = Unit(name="Done", bucket="wiki", summary="s", paths=("daily/a.md",))
    state.add_units([both, done], "r")
    state.units[done.id].status = "done"
    state.inputs["daily/a.md"] = InputRecord(hash="h1", units=[both.id, done.id])
    state.inputs["daily/b.md"] = InputRecord(hash="h2", units=[both.id], status="processed")
    dropped, changed = state.forget_input("daily/a.md")
    assert set(dropped) == {both.id, done.id} and changed == ["daily/b.md"]
    assert state.inputs["daily/b.md"].hash == "" and state.inputs["daily/b.md"].units == []
    assert state.units == {}


NOTES = [f"daily/2026-06-0{i}/n{i}.md" for i in range(1, 6)]


@st.composite
def checkpoints(draw: st.DrawFn) -> tuple[State, str, str]:
    """A state whose units cite some of five notes, with mixed statuses; a note that is in it,
    and a new path."""
    from remelink.dream.records import InputRecord
    from remelink.units import Unit

    state = State(Path("/nonexistent/.remelink/state.json"))
    for k in range(draw(st.integers(1, 6))):
        paths = tuple(draw(st.lists(st.sampled_from(NOTES), min_size=1, max_size=3,
                                    unique=True)))
        unit = Unit(name=f"unit {k}", bucket="wiki", summary=f"statement {k}", paths=paths)
        state.add_units([unit], "r")
        state.units[unit.id].status = draw(st.sampled_from(["pending", "done", "failed"]))
    for note in NOTES:
        state.inputs[note] = InputRecord(hash=f"h-{note}", status="processed",
                                         units=[u for u, r in state.units.items()
                                                if note in r.unit.paths])
    old = draw(st.sampled_from(NOTES))
    return state, old, "daily/2026-07-01/renamed.md"


def _consistent(state: State) -> None:
    from remelink.units import unit_id

    for uid, rec in state.units.items():
        assert uid == rec.unit.id == unit_id(rec.unit.name, rec.unit.bucket, rec.unit.paths,
                                             rec.unit.summary, rec.unit.points)
    for rel, record in state.inputs.items():
        for uid in record.units:
            assert uid in state.units and rel in state.units[uid].unit.paths


@settings(max_examples=100, deadline=None)
@given(checkpoints())
def test_a_move_keeps_the_checkpoint_consistent(case: tuple[State, str, str]) -> None:
    state, old, new = case
    units_before = len(state.units)
    record = state.inputs[old]
    state.move_input(old, new)
    assert old not in state.inputs and state.inputs[new] is record
    assert all(old not in r.unit.paths for r in state.units.values())
    assert len(state.units) == units_before
    _consistent(state)


@settings(max_examples=100, deadline=None)
@given(checkpoints())
def test_forgetting_keeps_the_checkpoint_consistent(case: tuple[State, str, str]) -> None:
    state, old, _ = case
    done_elsewhere = {u for u, r in state.units.items()
                      if r.status == "done" and any(p != old for p in r.unit.paths)}
    state.forget_input(old)
    assert old not in state.inputs
    # No unit still waiting for integration cites a note that is gone; a unit another note
    # still gives stays.
    assert all(old not in r.unit.paths or r.status == "done"
               for r in state.units.values())
    assert done_elsewhere <= set(state.units)
    _consistent(state)


def test_crafted_moves_in_a_run_record_are_dropped(dreamt: Path) -> None:
    path = dreamt / ".remelink" / "state.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["runs"][-1]["deleted"] = [{"path": "../../etc/passwd", "nodes": []},
                                   {"path": DASHBOARD, "nodes": ["digest/wiki/x.md"]}]
    data["runs"][-1]["renamed"] = [{"from": RETRY, "to": RETRY_NEW, "similarity": "1e9",
                                    "nodes": []}, "\x1b[31m"]
    path.write_text(json.dumps(data), encoding="utf-8")
    report = status(dreamt, settings_of(dreamt))
    assert report.runs[-1]["deleted"] == [{"path": DASHBOARD, "nodes": ["digest/wiki/x.md"]}]
    assert report.runs[-1]["renamed"] == []
    status_text(report)  # renders
