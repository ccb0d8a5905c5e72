"""One node per project (issue 21, SPEC §7.1): status lines of one workstream, said across a
sync, a weekly status, a standup and a Chinese meeting, become one node per workstream key with
a dated status list, not one node per line; a decision about the project, a debugging log on
the same system and a speaker's line (`Tomasz:`) stay their own."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from local_support import dream

from remelink.models.local import extract, status
from remelink.vault.notes import parse_text

NOTES = {
    "daily/2026-04-06/platform-sync.md": """# Platform sync 6 Apr

Present: Priya, Omar, Tomasz

## Search reindex
- Reindex of the catalogue started on Monday, 30 % of shards done.
- Agreed: the reindex runs only between 22:00 and 06:00 UTC, never in business hours.

## Ledger export
- Export API design accepted, implementation started this sprint.

## Status updates
- Priya wants the weekly status in #search-status every Friday, one paragraph per workstream.
""",
    "daily/2026-04-10/weekly-status.md": """# Weekly status w/e 10 Apr

**Search reindex** (Priya): 70 % of shards done, no query errors. Cut-over planned for 20 Apr.

**Ledger export** (Omar): first CSV export merged, PDF export in progress.

Omar is out Friday.
""",
    "daily/2026-04-13/standup.md": """standup mon 13 apr

- Tomasz: reindex of shard 9 deployed to staging, looks fine.
- Priya: cut-over checklist, nothing blocking
""",
    "daily/2026-04-14/reindex-lag.md": """# Reindex lag on shard 4

**Symptom**: the reindex of shard 4 stalled at 40 %, lag alerts on the search cluster.

**Cause**: the bulk queue was full and the reindex job retried without backoff.

**Fix**: set `bulk.queue_size: 500` and restarted the reindex job for shard 4.

**Lesson**: a bulk reindex needs backoff on rejected batches.
""",
    "daily/2026-04-15/周会.md": """# 上海周会 4/15

## Search reindex
- 重建索引已经完成 90%，切换计划在 4 月 20 日上线。

## 进展
- 对账报表的导出已经上线，目前没有差异。
""",
    "daily/2026-04-08/对账周报.md": """# 对账周报 4/8

**对账服务迁移**（陈静）：新对账服务已经上线灰度，目前 10% 流量。
""",
    "daily/2026-04-16/周五同步.md": """# 周五同步 4/16

- 对账服务迁移：灰度扩大到 50% 流量，下周完成全部切换。
""",
}
# A later note, dated between two lines the node holds: it joins the list in date order.
LATE = {"daily/2026-04-08/sync.md": """# Sync 8 Apr

## Search reindex
- Reindex blocked by the catalogue freeze until 9 Apr, 45 % of shards done.
"""}


def _projects(digest: dict[str, str]) -> dict[str, str]:
    """Project key -> path of each node that keeps a workstream's status."""
    out: dict[str, str] = {}
    for path, text in digest.items():
        m = re.search(r"^project: (.+)$", text, re.M)
        if m:
            assert m.group(1) not in out, f"two nodes for {m.group(1)}"
            out[m.group(1)] = path
    return out


def _status_lines(text: str) -> list[str]:
    return re.findall(r"^- (\d{4}-\d{2}-\d{2}): ", text, re.M)


def test_one_node_per_project_with_dated_lines_in_both_languages(tmp_path: Path) -> None:
    digest = dream(tmp_path, NOTES)
    projects = _projects(digest)
    assert sorted(projects) == ["Ledger export", "Search reindex", "对账服务迁移"]
    reindex = digest[projects["Search reindex"]]
    assert "name: Search reindex status" in reindex
    # Each line keeps its note's date; the Chinese line of the English-keyed project joins it.
    assert _status_lines(reindex) == ["2026-04-06", "2026-04-10", "2026-04-15"]
    assert "- 2026-04-10: 70 % of shards done, no query errors. Cut-over planned for 20 Apr." \
        in reindex
    assert "- 2026-04-15: 重建索引已经完成 90%，切换计划在 4 月 20 日上线。" in reindex
    ledger = digest[projects["Ledger export"]]
    assert _status_lines(ledger) == ["2026-04-06", "2026-04-10"]
    recon = digest[projects["对账服务迁移"]]
    assert "name: 对账服务迁移进展" in recon and "进展：" in recon
    assert _status_lines(recon) == ["2026-04-08", "2026-04-16"]
    # Its Sources cite every note a line came from.
    sources = reindex.split("## Sources", 1)[1]
    for note in ("daily/2026-04-06/platform-sync.md", "daily/2026-04-10/weekly-status.md",
                 "daily/2026-04-15/周会.md"):
        assert f"[[{note}]]" in sources
    # No other node holds a status line of a project.
    for path, text in digest.items():
        if path not in projects.values():
            assert "30 % of shards done" not in text and "10% 流量" not in text, path


def test_hard_negatives_stay_their_own_nodes(tmp_path: Path) -> None:
    digest = dream(tmp_path, NOTES)
    reindex = digest[_projects(digest)["Search reindex"]]
    # A decision about the project is a node of its own (it may link the project's node).
    decision = [p for p, t in digest.items() if "22:00 and 06:00 UTC" in t and p in digest
                and "project:" not in t]
    assert len(decision) == 1
    assert "22:00" not in reindex.split("## Sources", 1)[0].split("\n\n", 1)[0]
    # A debugging log on the same system is one runbook, not status.
    runbook = [p for p in digest if p.startswith("digest/procedure/")]
    assert len(runbook) == 1 and "bulk.queue_size" in digest[runbook[0]]
    assert "bulk" not in reindex and "reindex-lag" not in reindex.split("## Sources")[1]
    # A speaker's line is no workstream key: nothing is keyed `Tomasz` or `Priya`, and the
    # standup's line is in no project node.
    assert not any(re.search(r"^project: (?:Tomasz|Priya)", t, re.M) for t in digest.values())
    assert "shard 9" not in reindex
    # A genre heading (`## 进展`, `## Status updates`) keys nothing.
    assert not any(re.search(r"^project: (?:进展|Status updates)", t, re.M)
                   for t in digest.values())


def test_a_later_note_refines_the_project_node_in_date_order(tmp_path: Path) -> None:
    first = dream(tmp_path, NOTES)
    node = _projects(first)["Search reindex"]
    second = dream(tmp_path, {**NOTES, **LATE})
    assert _projects(second) == _projects(first)
    assert len(second) == len(first)
    text = second[node]
    assert _status_lines(text) == ["2026-04-06", "2026-04-08", "2026-04-10", "2026-04-15"]
    assert "- 2026-04-08: Reindex blocked by the catalogue freeze until 9 Apr, 45 % of shards " \
        "done." in text
    assert "[[daily/2026-04-08/sync.md]]" in text.split("## Sources", 1)[1]
    # Its description says where the project stands: the latest entry, before and after.
    assert re.search(r"^description: '?Search reindex, as of 2026-04-15: ", first[node], re.M)
    assert re.search(r"^description: '?Search reindex, as of 2026-04-15: ", text, re.M)
    # Every line it had is still there, in order (updates insert).
    old = first[node].split("---\n", 2)[2].splitlines()
    new = iter(text.split("---\n", 2)[2].splitlines())
    assert all(any(line == n for n in new) for line in old)


def test_keys_come_from_the_notes_structure_only() -> None:
    note = parse_text("daily/2026-04-13/standup.md", NOTES["daily/2026-04-13/standup.md"])
    assert status.keyed_lines(note) == []  # `Tomasz:` and `Priya:` are speakers
    weekly = parse_text("daily/2026-04-10/weekly-status.md",
                        NOTES["daily/2026-04-10/weekly-status.md"])
    assert [k for k, _, _ in status.keyed_lines(weekly)] == ["Search reindex", "Ledger export"]
    sync = parse_text("daily/2026-04-06/platform-sync.md",
                      NOTES["daily/2026-04-06/platform-sync.md"])
    # The decision under the project's heading is no status line; the preference under
    # `## Status updates` has no key.
    assert [(k, e[:20]) for k, e, _ in status.keyed_lines(sync)] == [
        ("Search reindex", "Reindex of the catal"), ("Ledger export", "Export API design ac")]
    # A line naming the project in its words, with no heading or label, has no key.
    loose = parse_text("daily/2026-04-20/sync.md",
                       "# Sync\n\n- Search reindex cut-over done, all shards live.\n")
    assert status.keyed_lines(loose) == []
    # A noun naming rules reports progress on a document; a rule's cue words bind.
    rules = parse_text("daily/2026-04-17/weekly-status.md",
                       "# Weekly status\n\n**Recon** (陈静): rules doc in progress.\n\n"
                       "**Search reindex**: every reindex must finish before 06:00.\n")
    assert [(k, e) for k, e, _ in status.keyed_lines(rules)] == [
        ("Recon", "rules doc in progress.")]
    # A resource document is never status.
    doc = parse_text("resource/reindex-plan.md", "# Plan\n\n## Search reindex\n\n"
                     "- Reindex started on Monday, 30 % of shards done.\n")
    assert status.keyed_lines(doc) == []


@settings(max_examples=25, deadline=None)
@given(st.permutations(sorted(NOTES)), st.integers(min_value=1, max_value=len(NOTES)))
def test_every_note_gets_a_verdict_and_a_key_one_unit(order: list[str], n: int) -> None:
    notes = [(parse_text(p, NOTES[p]), {}) for p in order[:n]]
    units, skipped = extract.extract(notes)
    cited = {p for u in units for p in u["paths"]}  # type: ignore[attr-defined]
    assert all(p in cited or p in skipped for p, _ in ((nt.path, m) for nt, m in notes))
    keys = [status.normal_key(str(u["name"])) for u in units if u["kind"] == status.KIND]
    assert len(keys) == len(set(keys))


def test_a_node_holding_the_keys_file_name_is_left_alone(tmp_path: Path) -> None:
    other = ("---\nname: Search reindex\ndescription: How the search reindex works.\n---\n"
             "The reindex copies the catalogue into a new index, then swaps the alias.\n\n"
             "## Sources\n\nThis was recorded in [[daily/2026-04-06/platform-sync.md]].\n")
    first = dream(tmp_path, {**NOTES, "digest/wiki/search-reindex.md": other})
    assert first["digest/wiki/search-reindex.md"] == other
    node = _projects(first)["Search reindex"]
    assert node == "digest/wiki/search-reindex-2.md"
    second = dream(tmp_path, {**NOTES, **LATE})
    assert _projects(second)["Search reindex"] == node
    assert "2026-04-08" in _status_lines(second[node])
    assert second["digest/wiki/search-reindex.md"] == other


# A key one note alone reports under: a retro's problem heading, a one-off lead-in. No project.
ONCE = {"daily/2026-04-18/retro.md": """# Retro 18 Apr

## Cache warmup too slow
- Cache warmup started 40 minutes after the deploy, p99 latency hit 900 ms in the first hour.

## What went well
- The reindex cut-over checklist.
""", "daily/2026-04-19/notes.md": """# Notes 19 Apr

## Search tricks
- Found why queries stall on the live index:

```
GET /catalogue/_stats?level=shards
```
"""}


def test_a_key_of_one_note_is_no_project(tmp_path: Path) -> None:
    retro = parse_text("daily/2026-04-18/retro.md", ONCE["daily/2026-04-18/retro.md"])
    # The line is keyed (a heading, a progress cue), but one note alone reports on the key.
    assert [k for k, _, _ in status.keyed_lines(retro)] == ["Cache warmup too slow"]
    units, _ = extract.extract([(retro, {})])
    assert [u["kind"] for u in units if u["kind"] == status.KIND] == []
    assert any("Cache warmup started 40 minutes" in str(u["summary"]) or
               any("Cache warmup started 40" in str(p) for p in u["points"])  # type: ignore
               for u in units)
    # ... unless the vault keeps a status node for that key already.
    units, _ = extract.extract([(retro, {})], projects={"cache warmup too slow"})
    assert [u["name"] for u in units if u["kind"] == status.KIND] == ["Cache warmup too slow"]
    # A sentence ending in a colon leads into what follows it: no status line.
    tricks = parse_text("daily/2026-04-19/notes.md", ONCE["daily/2026-04-19/notes.md"])
    assert status.keyed_lines(tricks) == []
    # In a run: the projects of several notes get their nodes, the one-note keys none.
    digest = dream(tmp_path, {**NOTES, **ONCE})
    assert sorted(_projects(digest)) == ["Ledger export", "Search reindex", "对账服务迁移"]
    held = [p for p, t in digest.items() if "p99 latency hit 900 ms" in t]
    assert len(held) == 1 and "project:" not in digest[held[0]]


def test_an_edited_status_line_updates_its_own_dated_entry(tmp_path: Path) -> None:
    first = dream(tmp_path, NOTES)
    node = _projects(first)["Search reindex"]
    weekly = "daily/2026-04-10/weekly-status.md"
    edited = {**NOTES, weekly: NOTES[weekly].replace("70 % of shards done", "75 % of shards done")}
    second = dream(tmp_path, edited)
    text = second[node]
    # The 10 Apr entry is updated where it stands: what it said is kept, what the note says
    # now follows it, with the edited note. No correction dated today, no second entry.
    assert "Corrected on" not in text and "> " not in text.split("## Sources")[0]
    assert _status_lines(text) == ["2026-04-06", "2026-04-10", "2026-04-15"]
    line = next(ln for ln in text.splitlines() if ln.startswith("- 2026-04-10"))
    assert line == ("- 2026-04-10: 70 % of shards done, no query errors. Cut-over planned for "
                    f"20 Apr. Edited in [[{weekly}]], it now says: 75 % of shards done, no query "
                    "errors. Cut-over planned for 20 Apr.")
    # Every other line is as it was; another run changes nothing.
    assert [ln for ln in text.splitlines() if ln != line] == \
        [ln for ln in first[node].splitlines() if not ln.startswith("- 2026-04-10")]
    assert dream(tmp_path, edited)[node] == text


def test_an_edit_updates_only_the_edited_notes_entry_of_its_date() -> None:
    body = ("Status:\n- 2026-04-10: 70 % of shards done.\n- 2026-04-10: Cut-over planned for "
            "20 Apr.\n- 2026-04-15: 90 % done.\n\n## Sources\n\nA status line was reported in "
            "[[daily/2026-04-10/weekly-status.md]] and [[daily/2026-04-10/standup.md]].\n")
    edited = "daily/2026-04-10/weekly-status.md"
    # Two notes of that date: only the entry that says what the edited note said is updated.
    new = status.revise_entries(body, [("2026-04-10", "75 % of shards done.")], "en", edited,
                                "70 % of shards done.")
    assert new is not None and new.splitlines()[1:4] == [
        f"- 2026-04-10: 70 % of shards done. Edited in [[{edited}]], it now says: 75 % of shards "
        "done.", "- 2026-04-10: Cut-over planned for 20 Apr.", "- 2026-04-15: 90 % done."]
    # Said again, it changes nothing; edited once more, the entry's latest words are replaced.
    assert status.revise_entries(new, [("2026-04-10", "75 % of shards done.")], "en", edited,
                                 "70 % of shards done.") == new
    again = status.revise_entries(new, [("2026-04-10", "80 % of shards done.")], "en", edited,
                                  "75 % of shards done.")
    assert again is not None and again.splitlines()[1].endswith(
        "it now says: 75 % of shards done. Edited in [[daily/2026-04-10/weekly-status.md]], it "
        "now says: 80 % of shards done.")


def test_looking_for_the_vaults_status_nodes_takes_two_turns_at_most() -> None:
    from remelink.config import Settings
    from remelink.models.local.engine import LocalModel
    from remelink.models.local.protocol import Call

    # 40 notes, each with a key of its own: 40 file names to look at, 16 a turn.
    notes = [(parse_text(f"daily/2026-05-{d:02d}/sync-{n}.md",
                         f"# Sync\n\n## Workstream {n}\n- Rollout started, 10 % of hosts done.\n"),
              {}) for n, d in zip(range(40), [1 + i % 28 for i in range(40)], strict=True)]
    model = LocalModel(Settings())
    calls: list[Call] = []
    turns = 0
    while True:
        known, probes = model._projects_known(notes, calls)
        if not probes:
            break
        turns += 1
        calls += [Call(f"p{len(calls)}-{i}", "frontmatter_read", {"path": p},
                       f"Error: {p} does not exist") for i, p in enumerate(probes[:16], 1)]
    assert turns == 2 and known == set() and len(calls) == 32
    # A key some note reports on with another is no question for the vault.
    twice = [(parse_text(f"daily/2026-05-0{d}/sync.md",
                         "# Sync\n\n## Search reindex\n- Reindex started, 10 % done.\n"), {})
             for d in (1, 2)]
    assert model._projects_known(twice, []) == (set(), [])


# A nightly run sees one new note: a key reported by notes of different runs is a project all
# the same. The one-note key (`Cache warmup too slow`) is held in the checkpoint, never a node.
NIGHTLY = [
    ("daily/2026-04-06/platform-sync.md", NOTES["daily/2026-04-06/platform-sync.md"] + """
## Cache warmup too slow
- Cache warmup started 40 minutes after the deploy, p99 latency hit 900 ms in the first hour.
"""),
    ("daily/2026-04-10/weekly-status.md", NOTES["daily/2026-04-10/weekly-status.md"]),
    ("daily/2026-04-15/sync.md", """# Sync 15 Apr

## Search reindex
- Reindex 90 % done, cut-over planned for 20 Apr.
"""),
]


def _nightly(root: Path, nights: int) -> dict[str, str]:
    return dream(root, dict(NIGHTLY[:nights]))


def test_a_project_forms_across_nightly_runs_of_one_note_each(tmp_path: Path) -> None:
    import json

    from remelink.lint import main as lint_links

    first = _nightly(tmp_path, 1)
    assert _projects(first) == {}  # each key is one note's so far
    line = "Reindex of the catalogue started on Monday, 30 % of shards done."
    holder = [p for p, t in first.items() if line in t]
    assert len(holder) == 1
    second = _nightly(tmp_path, 2)
    projects = _projects(second)
    assert sorted(projects) == ["Ledger export", "Search reindex"]
    reindex = second[projects["Search reindex"]]
    assert _status_lines(reindex) == ["2026-04-06", "2026-04-10"]
    assert f"- 2026-04-06: {line}" in reindex
    sources = reindex.split("## Sources", 1)[1]
    assert "[[daily/2026-04-06/platform-sync.md]]" in sources
    assert "[[daily/2026-04-10/weekly-status.md]]" in sources
    assert _status_lines(second[projects["Ledger export"]]) == ["2026-04-06", "2026-04-10"]
    # The earlier line's own node keeps it (nodes never lose lines).
    assert line in second[holder[0]]
    third = _nightly(tmp_path, 3)
    assert _projects(third) == projects
    reindex = third[projects["Search reindex"]]
    assert _status_lines(reindex) == ["2026-04-06", "2026-04-10", "2026-04-15"]
    # The description follows where the project stands: the latest entry of each run.
    assert re.search(r"^description: '?Search reindex, as of 2026-04-10: ",
                     second[projects["Search reindex"]], re.M)
    assert re.search(r"^description: '?Search reindex[ ,（].{0,8}2026-04-15", reindex, re.M)
    assert "[[daily/2026-04-15/sync.md]]" in reindex.split("## Sources", 1)[1]
    # The one-note key is no project in any run, and its line is where it was.
    for digest in (first, second, third):
        assert not any("project: Cache warmup" in t for t in digest.values())
    assert sum("p99 latency hit 900 ms" in t for t in third.values()) == 1
    # Every note has its verdict and is processed; the links are clean.
    state = json.loads((tmp_path / ".remelink/state.json").read_text(encoding="utf-8"))
    assert sorted(state["inputs"]) == sorted(p for p, _ in NIGHTLY)
    assert all(r["verdict"] in ("units", "nothing") and r["status"] == "processed"
               for r in state["inputs"].values())
    assert lint_links(["--vault", str(tmp_path)]) == 0


def _held(root: Path) -> list[tuple[str, list[str]]]:
    import json

    state = json.loads((root / ".remelink/state.json").read_text(encoding="utf-8"))
    return sorted((r["name"], r["paths"]) for r in state["units"].values()
                  if r["status"] == "held")


def test_a_held_line_follows_its_note(tmp_path: Path) -> None:
    first = _nightly(tmp_path, 1)
    sync = "daily/2026-04-06/platform-sync.md"
    assert _held(tmp_path) == [("Cache warmup too slow", [sync]),
                               ("Ledger export", [sync]), ("Search reindex", [sync])]
    # Edited, the note's held lines are what it says now (none kept twice).
    edited = NIGHTLY[0][1].replace("40 minutes", "45 minutes")
    dream(tmp_path, {sync: edited})
    held = _held(tmp_path)
    assert [n for n, _ in held] == ["Cache warmup too slow", "Ledger export", "Search reindex"]
    # Deleted, they go with it; the digest keeps what it had.
    (tmp_path / sync).unlink()
    after = dream(tmp_path, {})
    assert _held(tmp_path) == []
    assert set(first) <= set(after)


def test_a_held_line_waits_a_quarter_for_a_later_note(tmp_path: Path) -> None:
    import datetime as dt
    import json

    from remelink.dream.state import HELD_DAYS

    first = _nightly(tmp_path, 1)
    held = _held(tmp_path)
    assert len(held) == 3
    day = dt.date.today()
    # Within the quarter the lines wait; a run after it forgets them (the checkpoint stays
    # bounded over years of nightly runs) and the digest keeps every line it had.
    assert dream(tmp_path, {}, today=(day + dt.timedelta(days=HELD_DAYS)).isoformat()) == first
    assert _held(tmp_path) == held
    late = (day + dt.timedelta(days=HELD_DAYS + 1)).isoformat()
    assert dream(tmp_path, {}, today=late) == first
    assert _held(tmp_path) == []
    state = json.loads((tmp_path / ".remelink/state.json").read_text(encoding="utf-8"))
    record = state["inputs"][NIGHTLY[0][0]]
    assert record["status"] == "processed" and record["verdict"] == "units"
    assert all(uid in state["units"] for uid in record["units"])
    # A note on one of those workstreams after that starts afresh: no project from a line
    # the vault forgot waiting for.
    later = dream(tmp_path, dict(NIGHTLY[:2]), today=late)
    assert _projects(later) == {}


@settings(max_examples=6, deadline=None)
@given(st.permutations(range(len(NIGHTLY))))
def test_nightly_runs_in_any_order_give_verdicts_clean_links_and_no_lone_project(
        order: list[int]) -> None:
    import json
    import tempfile

    from remelink.lint import main as lint_links

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        notes: dict[str, str] = {}
        for i in order:
            notes.update([NIGHTLY[i]])
            digest = dream(root, notes)
        state = json.loads((root / ".remelink/state.json").read_text(encoding="utf-8"))
        assert all(r["status"] == "processed" and r["verdict"] in ("units", "nothing")
                   for r in state["inputs"].values()) and len(state["inputs"]) == len(NIGHTLY)
        assert lint_links(["--vault", str(root)]) == 0
        projects = _projects(digest)
        # The keys two notes report on are projects whatever the order; a one-note key never.
        assert sorted(projects) == ["Ledger export", "Search reindex"]
        assert _status_lines(digest[projects["Search reindex"]]) == \
            ["2026-04-06", "2026-04-10", "2026-04-15"]
        assert [n for n, _ in _held(root)] == ["Cache warmup too slow"]


def test_the_earlier_note_edited_updates_its_entry_of_the_project(tmp_path: Path) -> None:
    node = _projects(_nightly(tmp_path, 2))["Search reindex"]
    sync, text = NIGHTLY[0]
    after = dream(tmp_path, {sync: text.replace("30 % of shards done", "35 % of shards done")})
    # The note whose held line formed the project lists the project's unit: its edit updates
    # its own dated entry there (no second 04-06 entry).
    assert _status_lines(after[node]) == ["2026-04-06", "2026-04-10"]
    assert f"Edited in [[{sync}]], it now says: Reindex of the catalogue started on Monday, " \
        "35 % of shards done." in after[node]
