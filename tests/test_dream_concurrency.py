"""`auto_dream.concurrency: N` (SPEC §12): units integrated in parallel threads, with a slow
model so that they really overlap, never race to create the same node nor edit one node at
once, and lose nothing a serial run keeps."""

from __future__ import annotations

import re
from pathlib import Path

from dream_support import (
    Wrapped,
    audit_lines,
    copy_fixture,
    run,
    settings_of,
    state_of,
)

SAME = ("Every POST that creates money movement must carry an idempotency key; the server "
        "stores the key with the response for 24 hours and replays the stored response.")
NEW = "We decided that every export job must record its requester and its start time."


def busy_vault(tmp_path: Path, name: str) -> tuple[Path, list[str]]:
    vault = copy_fixture(tmp_path / name, "en")
    config = vault / ".remelink" / "config.yaml"
    config.write_text(config.read_text(encoding="utf-8") + "auto_dream:\n  batch_chars: 400\n",
                      encoding="utf-8")
    notes = []
    for i in range(5):  # five notes restating the node's rule: five updates of one node
        rel = f"daily/2026-06-2{i}/retry-{i}.md"
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(f"# Payments retry {i}\n\n## Decision\n- {SAME}\n",
                                 encoding="utf-8")
        notes.append(rel)
    for i in range(2):  # two notes with one new statement: both want to create the same node
        rel = f"daily/2026-06-2{i}/export-{i}.md"
        (vault / rel).write_text(f"# Export review {i}\n\n## Decision\n- {NEW}\n",
                                 encoding="utf-8")
        notes.append(rel)
    return vault, notes


def sources_of(text: str) -> list[str]:
    section = re.split(r"^## Sources\s*$", text, flags=re.M)[1]
    return re.findall(r"\[\[([^\]|#]+)", section)


def test_parallel_units_do_not_race_and_end_like_a_serial_run(tmp_path: Path) -> None:
    vault, notes = busy_vault(tmp_path, "parallel")
    settings = settings_of(vault, concurrency=4)
    model = Wrapped(settings, delay=0.03)

    report = run(vault, model, settings)

    assert model.max_active > 1  # the units really ran at the same time
    assert report.ok, [u.error for u in report.units if u.error]
    assert all(u.status == "done" for u in report.units)
    targets = [u.target for u in report.units]
    hot = max(set(targets), key=targets.count)
    assert targets.count(hot) >= 3  # several units updated one node: contention happened
    cited = {p.relative_to(vault).as_posix(): sources_of(p.read_text(encoding="utf-8"))
             for p in (vault / "digest").rglob("*.md")}
    for rel in notes:  # every unit landed, in one node, once: none lost, none twice
        citing = {node: links.count(rel) for node, links in cited.items() if rel in links}
        assert list(citing.values()) == [1], (rel, citing)
    exports = {node for node, links in cited.items()
               if any(re.search(r"/export-\d\.md$", x) for x in links)}
    assert len(exports) == 1  # the two units that wanted to create it did not both do so
    names = [p.name for p in (vault / "digest").rglob("*.md")]
    assert not [n for n in names if re.search(r"-\d\.md$", n)], names
    done = [line["unit"] for line in audit_lines(vault) if line["status"] == "done"]
    assert sorted(done) == sorted({u.id for u in report.units})
    assert {u["status"] for u in state_of(vault)["units"].values()} == {"done"}

    # A serial run may decide some units differently (in parallel a unit does not see the node
    # its neighbour is writing), but it cites the same raw notes, each in one node.
    serial_vault, _ = busy_vault(tmp_path, "serial")
    serial = run(serial_vault, Wrapped(settings_of(serial_vault)), settings_of(serial_vault))
    assert serial.ok

    def cited_notes(root: Path) -> set[str]:
        return {link for p in (root / "digest").rglob("*.md")
                for link in sources_of(p.read_text(encoding="utf-8"))}

    assert cited_notes(serial_vault) == cited_notes(vault)


def test_a_broken_backend_stops_parallel_units_too(tmp_path: Path) -> None:
    vault, _ = busy_vault(tmp_path, "broken")
    settings = settings_of(vault, concurrency=3)
    report = run(vault, Wrapped(settings, broken=True, delay=0.02), settings)
    statuses = [u.status for u in report.units]
    # Three failures in a row trip the outage; the units already running at that moment
    # (at most `concurrency`) fail too; the rest are not attempted.
    assert "done" not in statuses and statuses.count("failed") <= 3 + 3
    assert "skipped" in statuses and not report.ok
    assert all(u["attempts"] == 0 for u in state_of(vault)["units"].values())


def test_a_unit_failing_in_the_parallel_phase_for_itself_is_not_tried_again(
        tmp_path: Path) -> None:
    """A failure that is the unit's own (no other unit changed what it looked at) is not tried
    again in the same run: a second try would pay again for the same answer. One attempt, one
    audit line; the next run retries it (max_attempts)."""
    vault, _ = busy_vault(tmp_path, "retry")
    settings = settings_of(vault, concurrency=3)
    target = "Alice prefers to see concrete progress"
    report = run(vault, Wrapped(settings, garble=[target], delay=0.01), settings)
    failed = [u for u in report.units if u.status == "failed"]
    assert [(u.name, u.attempts) for u in failed] == [(target, 1)]
    assert [line["attempts"] for line in audit_lines(vault)
            if line["name"] == target] == [1]
    assert [u.id for u in report.units] == list(state_of(vault)["units"])  # extraction order


def test_concurrency_keeps_the_nodes_and_links_of_a_serial_run(tmp_path: Path) -> None:
    """Units run side by side but commit in extraction order, and a unit that missed a node an
    earlier unit created meanwhile runs again, as one at a time: concurrency costs no link and
    makes no duplicate (issue 23: on the demo vault, before, 10 links serially, 6 at 8). Each
    unit decides on the term statistics of the vault it starts on (the local engine binds them
    per unit, per thread), so the links and the bytes are those of a serial run (before: 11
    links at 8, one more than serially, from statistics memoised by whichever thread looked a
    term up first)."""
    import shutil

    demo = Path(__file__).resolve().parent.parent / "fixtures" / "demo-vault"
    link_re = re.compile(r"(?<!!)\[\[(digest/[^\]|#]+)")

    def links(vault: Path) -> set[tuple[str, str]]:
        return {(p.relative_to(vault).as_posix(), t) for p in (vault / "digest").rglob("*.md")
                for t in link_re.findall(p.read_text(encoding="utf-8"))}

    out = {}
    for workers in (1, 8):
        vault = tmp_path / f"c{workers}"
        shutil.copytree(demo, vault)
        settings = settings_of(vault, concurrency=workers)
        model = Wrapped(settings, delay=0.01)
        report = run(vault, model, settings)
        assert report.ok, report.errors
        out[workers] = (links(vault), {p.relative_to(vault).as_posix(): p.read_bytes()
                                       for p in (vault / "digest").rglob("*.md")}, model)
    assert out[8][2].max_active > 1  # they really ran side by side
    assert sorted(out[8][1]) == sorted(out[1][1])  # the same nodes, no duplicate
    assert out[1][0] == out[8][0], (sorted(out[1][0] - out[8][0]), sorted(out[8][0] - out[1][0]))
    assert out[8][1] == out[1][1]  # and the same bytes
