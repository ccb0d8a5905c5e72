"""A line inside a document-like note (a review, a meeting, a postmortem) that changes another
note's value or says its point again (issue 21): besides the document's own node, the line is
a unit of its own that may CORRECT or CORROBORATE the other note's node, and that creates
nothing when no node of another note holds the point."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from local_support import dream

from remelink.config import Settings
from remelink.dream.run import DreamOptions, run_dream
from remelink.models.local import LocalModel, extract, structure
from remelink.vault.notes import parse_text

ONE_ON_ONE = """# 1:1 Dana

Dana wants design docs to be at most four pages. Anything longer means the scope is too big,
split it. The appendix doesn't count.
"""

REVIEW = """# Design review: ledger export API

Felix presented the ledger export design. Tomasz, Ines and Dana reviewed it.

## The design

Export is async: `POST /v1/ledger-exports` returns `202` and an export id, the client polls
`GET /v1/ledger-exports/{id}`. Files land in S3 as Parquet, signed URLs valid for 24 hours.

## Feedback on the design itself

- Amounts in the Parquet files: `amount_minor` as int64 plus `currency`, as everywhere else.
- Max export range is 31 days per request.
- The doc was nine pages. Dana pushed back, then said six pages is fine for cross-team """ \
    """designs. So: design docs can be up to six pages now.
"""

POLICY_ZH = """# 结算平台发布规范

适用于 journal-svc、payout-runner 以及所有跟资金相关的服务。

- 常规发布窗口：每周二、周四 10:00–16:00。
- 每个月月结前封版两天，封版期间只修 P0。
- 灰度顺序 5% → 25% → 100%，每一步至少观察 30 分钟。
"""

MEETING_ZH = """# 发布周会 3/17

赵敏主持。

1. 3 月月结的教训：封版两天不够，月结前一天还有人在改 fee 配置。
   **决定：从 4 月开始，月结前封版四天。** 封版期间只修 P0，改配置也算变更。
2. 发布单模板加一栏「是否影响对账」，赵敏来改模板。
"""




def citing(digest: dict[str, str], note: str) -> list[str]:
    return [p for p, text in digest.items() if f"[[{note}" in text]


def test_a_review_line_that_changes_a_value_corrects_the_earlier_notes_node(
        tmp_path: Path) -> None:
    digest = dream(tmp_path, {"daily/2026-02-04/1on1-dana.md": ONE_ON_ONE,
                              "daily/2026-03-10/design-review.md": REVIEW})
    earlier = citing(digest, "daily/2026-02-04/1on1-dana.md")
    assert len(earlier) == 1
    node = digest[earlier[0]]
    # CORRECT: the old line struck through, the new value quoted, the review cited as the
    # correction; the node stays Dana's (its name says the new value: it named the old one).
    assert "~~Dana wants design docs to be at most four pages." in node and "six pages" in node
    assert re.search(r"^name: Dana wants design docs to be at most six pages$", node, re.M)
    assert "[[daily/2026-03-10/design-review.md" in node
    # The review keeps its own node.
    review = [p for p in citing(digest, "daily/2026-03-10/design-review.md")
              if p != earlier[0]]
    assert any("`POST /v1/ledger-exports`" in digest[p] for p in review)


def test_a_meeting_line_deep_in_a_chinese_policy_corrects_the_policy_node(
        tmp_path: Path) -> None:
    digest = dream(tmp_path, {"resource/2026-02-02/发布规范.md": POLICY_ZH,
                              "daily/2026-03-17/发布周会.md": MEETING_ZH})
    policy = citing(digest, "resource/2026-02-02/发布规范.md")
    assert len(policy) == 1
    node = digest[policy[0]]
    assert "封版两天，封版期间只修 P0。（2026-03-17 已更正" in node
    assert "更正：从 4 月开始，月结前封版四天" in node
    assert "[[daily/2026-03-17/发布周会.md" in node
    assert re.search(r"^name: 结算平台发布规范", node, re.M)


def test_with_no_earlier_node_the_line_adds_no_node(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    with_lines = dream(tmp_path / "a", {"daily/2026-03-10/design-review.md": REVIEW})
    monkeypatch.setattr(extract, "echo_lines", lambda note, cands, index, leads=None: [])
    without = dream(tmp_path / "b", {"daily/2026-03-10/design-review.md": REVIEW})
    assert with_lines == without


def test_a_line_that_changes_nothing_is_no_action_of_the_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 21e: the line's unit ends in no node of another note: the run report, its counts,
    the checkpoint and the audit trail are those of a run without line units."""
    import json

    def run(root: Path) -> tuple[dict[str, object], list[str], list[str]]:
        note = root / "daily/2026-03-10/design-review.md"
        note.parent.mkdir(parents=True)
        note.write_text(REVIEW, encoding="utf-8")
        (root / "digest").mkdir()
        settings = replace(Settings(), embedder="none")
        report = run_dream(root, settings, LocalModel(settings), DreamOptions())
        assert report.ok  # type: ignore[attr-defined]
        state = json.loads((root / ".remelink/state.json").read_text(encoding="utf-8"))
        audit = [json.loads(line)["name"] for f in (root / ".remelink/runs").glob("*.jsonl")
                 for line in f.read_text(encoding="utf-8").splitlines()]
        units = [f"{u.name} {u.action} {u.target}" for u in report.units]  # type: ignore
        counts = {k: v for k, v in report.counts().items()  # type: ignore[attr-defined]
                  if not k.startswith("tokens")}
        return {"counts": counts, "inputs": state["inputs"][note.relative_to(root).as_posix()]
                ["units"], "state": sorted(state["units"])}, units, audit

    assert extract.echo_lines(parse_text("daily/2026-03-10/design-review.md", REVIEW),
                              structure.note_candidates(parse_text(
                                  "daily/2026-03-10/design-review.md", REVIEW), {}, 0)[0], 0)
    with_lines = run(tmp_path / "a")
    monkeypatch.setattr(extract, "echo_lines", lambda note, cands, index, leads=None: [])
    assert with_lines == run(tmp_path / "b")


def test_which_lines_of_a_note_get_a_unit_of_their_own() -> None:
    note = parse_text("daily/2026-03-10/design-review.md", REVIEW)
    cands, _ = structure.note_candidates(note, {}, 0)
    lines = [c.statement for c in extract.echo_lines(note, cands, 0)]
    assert any("six pages now" in x for x in lines)
    assert all(c.kind == extract.ECHO and c.paths == [note.path]
               for c in extract.echo_lines(note, cands, 0))
    assert not any("31 days" in x for x in lines)  # states a value, changes none
    # A note that gives no unit (a lunch plan said again) gives no line either.
    lunch = parse_text("daily/2026-03-06/lunch.md",
                       "# Lunch\n\nWe should do the dumpling place near the river again.\n")
    assert extract.echo_lines(lunch, [], 0) == []


GUIDE = """# API style guide (settlement APIs)

Every new endpoint of the settlement services follows this guide. Ask in #api-review.

- Resource names are plural nouns in kebab-case: `/v1/ledger-exports`.
- Money is always an object with `amount_minor` and `currency`, never a float.
- Pagination is cursor based: `page_token` and `page_size`; `page_size` max is 200.
- Errors use the problem+json shape with a stable `code`.
"""


def test_a_review_line_that_follows_the_guide_it_links_corroborates_the_guides_node(
        tmp_path: Path) -> None:
    line = ("- Tomasz (last review before FX): use `page_token` for the listing endpoint, "
            "per the [[resource/2026-02-01/api-style-guide.md]]. Felix had offset pagination.")
    review = REVIEW.replace("- Max export range is 31 days per request.", line)
    digest = dream(tmp_path, {"resource/2026-02-01/api-style-guide.md": GUIDE,
                              "daily/2026-03-10/design-review.md": review})
    guide = citing(digest, "resource/2026-02-01/api-style-guide.md")
    assert len(guide) == 1
    node = digest[guide[0]]
    assert re.search(r"\[\[daily/2026-03-10/design-review\.md\]\][^\n]* restates this: "
                     r"[^\n]*page_token", node)
    assert "Also:" not in node


def test_a_line_corrects_only_a_sentence_naming_what_it_names() -> None:
    """Issue 21e: a line that sets a measure of one thing does not CORRECT another thing's
    measure (the same statistic, another system); a name either side says is enough."""
    from remelink.models.local.engine import _names_shared

    assert not _names_shared("Since the upgrade the Redis cache p95 went to 45 ms.",
                             "The Postgres read replica answers with p95 40 ms.")
    assert _names_shared("Redis p95 is 45 ms now.", "The Redis cache has p95 40 ms.")
    assert _names_shared("The doc was nine pages. Dana pushed back, then said six pages is "
                         "fine.", "Dana wants design docs to be at most four pages.")
    assert _names_shared("决定：从 4 月开始，月结前封版四天。封版期间只修 P0。",
                         "每个月月结前封版两天，封版期间只修 P0。")
    assert not _names_shared("灰度改成 10% 起步。", "Feature flags start at 10% of traffic.")


_TOOLS_NOTE = """# Using a browser MCP server

Install it with `claude mcp add playwright npx @playwright/mcp@latest`, then run `/mcp`.

## Available tools

1. `browser_close` (read-only)
2. `browser_resize` (read-only)
3. `browser_click`
4. `browser_type`
"""
_STEPS_NOTE = """# Releasing a package

## Release

1. `git tag 1.2.0`
2. `git push --tags`
3. Publish with `twine upload dist/*`
"""


def test_a_numbered_list_of_names_alone_is_a_reference_not_steps() -> None:
    """A numbered list whose items are one name each (a tool's commands) is a list the note
    keeps, not a procedure of four steps; items that are command lines are steps."""
    tools, _ = structure.note_candidates(parse_text("resource/x/tools.md", _TOOLS_NOTE), {}, 0)
    assert not [c for c in tools if c.kind == "procedure"], [(c.kind, c.name) for c in tools]
    assert "browser_close" in " ".join(c.statement + " ".join(c.points) for c in tools)
    steps, _ = structure.note_candidates(parse_text("resource/x/rel.md", _STEPS_NOTE), {}, 0)
    assert [c for c in steps if c.kind == "procedure"], [(c.kind, c.name) for c in steps]
