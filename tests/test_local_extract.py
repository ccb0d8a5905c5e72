"""Extraction by the local engine (SPEC 8, 11) on hand-made English and Chinese notes: what
becomes a unit, in which bucket, with which steps, and what is left out."""

from __future__ import annotations

from pathlib import Path

import pytest

from remelink.models.local import extract
from remelink.models.local import text as tx
from remelink.vault import frontmatter
from remelink.vault.notes import parse_text

VAULT = Path(__file__).resolve().parent / "fixtures" / "local" / "vault"


def units(*rels: str) -> list[dict[str, object]]:
    notes = []
    for rel in rels:
        note = parse_text(rel, (VAULT / rel).read_text(encoding="utf-8"))
        notes.append((note, dict(frontmatter.load(note))))
    found, _ = extract.extract(notes)
    return found


def by_bucket(found: list[dict[str, object]], bucket: str) -> list[dict[str, object]]:
    return [u for u in found if u["bucket"] == bucket]


def text_of(found: list[dict[str, object]]) -> str:
    return "\n".join(f"{u['name']} {u['summary']} {u.get('points')}" for u in found)


def test_english_note_units_and_buckets() -> None:
    found = units("daily/2026-07-01/deploy-retro.md")
    procedures = by_bucket(found, "procedure")
    assert [u["name"] for u in procedures] == ["Roll back a deploy"]
    steps = [p for p in procedures[0]["points"] if p.startswith("step: ")]  # type: ignore[union-attr]
    assert len(steps) == 4 and steps[0] == "step: Freeze the release pipeline."
    failures = [p for p in procedures[0]["points"] if p.startswith("failure: ")]  # type: ignore[union-attr]
    assert failures and "nightly snapshot" in failures[0]
    personal = by_bucket(found, "personal")
    assert len(personal) == 1 and personal[0]["name"].startswith("Carol prefers")  # type: ignore[union-attr]
    assert "why: She pastes them into the customer newsletter" in personal[0]["points"]  # type: ignore[operator]
    wiki = by_bucket(found, "wiki")
    assert any("maintenance window" in str(u["summary"]) for u in wiki)


@pytest.mark.parametrize("left_out", ["Attendees", "Dan will check", "Thanks everyone",
                                      "dashboard colours"])
def test_english_chatter_is_left_out(left_out: str) -> None:
    assert left_out not in text_of(units("daily/2026-07-01/deploy-retro.md"))


def test_chinese_note_units_and_buckets() -> None:
    found = units("daily/2026-07-01/周会.md")
    procedure = by_bucket(found, "procedure")
    assert [u["name"] for u in procedure] == ["发布新版本"]
    assert len([p for p in procedure[0]["points"] if p.startswith("step: ")]) == 3  # type: ignore[union-attr]
    personal = by_bucket(found, "personal")
    assert [u["name"] for u in personal] == ["小王喜欢把设计文档写成问答形式"]
    assert any("5 秒" in str(u["summary"]) for u in found)
    rule = next(u for u in found if "5 秒" in str(u["summary"]))
    assert "why: 方便排查问题" in rule["points"]  # type: ignore[operator]


@pytest.mark.parametrize("left_out", ["参会", "下周再讨论预算"])
def test_chinese_chatter_is_left_out(left_out: str) -> None:
    assert left_out not in text_of(units("daily/2026-07-01/周会.md"))


def test_same_statement_across_notes_is_one_unit_citing_both() -> None:
    found = units("daily/2026-07-01/deploy-retro.md", "daily/2026-07-02/standup.md")
    migration = [u for u in found if "maintenance window" in str(u["summary"])]
    assert len(migration) == 1
    assert migration[0]["paths"] == ["daily/2026-07-01/deploy-retro.md",
                                     "daily/2026-07-02/standup.md"]
    carol = [u for u in found if "Carol" in str(u["name"])]
    assert len(carol) == 1 and len(carol[0]["paths"]) == 2  # type: ignore[arg-type]
    assert "Lunch" not in text_of(found)


def test_chinese_statements_merge_across_notes() -> None:
    found = units("daily/2026-07-01/周会.md", "daily/2026-07-02/复盘.md")
    timeout = [u for u in found if "5 秒" in str(u["summary"])]
    assert len(timeout) == 1 and len(timeout[0]["paths"]) == 2  # type: ignore[arg-type]
    wang = [u for u in found if "小王" in str(u["name"])]
    assert len(wang) == 1 and len(wang[0]["paths"]) == 2  # type: ignore[arg-type]


def test_a_correction_is_not_merged_into_what_it_corrects(tmp_path: Path) -> None:
    old = parse_text("daily/a.md", "## Decision\n- We agreed to rotate the signing keys every "
                                   "30 days.\n")
    new = parse_text("daily/b.md", "## Decision\n- We agreed to rotate the signing keys every "
                                   "24 hours, not every 30 days.\n")
    found, skipped = extract.extract([(old, {}), (new, {})])
    assert len(found) == 2 and skipped == {}


def test_nothing_is_capped_and_every_note_without_a_unit_has_its_own_reason() -> None:
    many = [parse_text(f"daily/2026-07-01/n{i}.md", f"We decided to set the timeout of "
                       f"service-{i} to {i}0 seconds because batch job {i} kept failing.\n")
            for i in range(60)]
    chatter = parse_text("daily/2026-07-01/hello.md", "# Standup\n\nThanks everyone, see you "
                         "tomorrow.\n\nAttendees: Ana, Bo\n")
    found, skipped = extract.extract([(n, {}) for n in many] + [(chatter, {})])
    assert len(found) == 60
    assert {p for u in found for p in u["paths"]} == {n.path for n in many}  # type: ignore
    assert set(skipped) == {chatter.path}
    assert "Standup" in skipped[chatter.path] and "greetings" in skipped[chatter.path]


TOPICS = ["billing", "search", "exports", "login", "payments", "invoices", "uploads", "reports",
          "alerts", "webhooks", "backups", "imports", "emails", "sessions", "caching", "queues",
          "metrics", "logging", "tokens", "quotas", "sitemaps", "thumbnails", "audits", "refunds",
          "coupons"]


def test_nothing_is_capped_and_every_note_has_a_verdict() -> None:
    rels = ["daily/2026-07-01/deploy-retro.md", "daily/2026-07-02/standup.md",
            "daily/2026-07-01/周会.md", "daily/2026-07-02/复盘.md"]
    notes = [(parse_text(r, (VAULT / r).read_text(encoding="utf-8")), {}) for r in rels]
    many = [(parse_text(f"daily/2026-08-01/{t}.md", f"## Decision\n- We decided that the {t} "
                        f"service must be owned by the {t} team from now on.\n"), {})
            for t in TOPICS]
    empty = [(parse_text("daily/2026-08-02/empty.md", "# Call\n\nThanks everyone!\n"), {})]
    found, skipped = extract.extract(notes + many + empty)
    cited = {p for u in found for p in u["paths"]}  # type: ignore[attr-defined]
    assert all(f"daily/2026-08-01/{t}.md" in cited for t in TOPICS)  # 25 and more: no cap
    assert all(n.path in cited or skipped.get(n.path) for n, _ in notes + many + empty)
    assert skipped["daily/2026-08-02/empty.md"]


@pytest.mark.parametrize(("statement", "title"), [
    ("The auditor pointed out that API signing keys must be rotated every 24 hours, not every "
     "30 days.", "API signing keys must be rotated every 24 hours"),
    ("We decided to move long exports out of the request path: the API enqueues a job.",
     "Move long exports out of the request path"),
    ("小王指出，所有写入日志的手机号和身份证号必须先脱敏，只保留后四位。",
     "所有写入日志的手机号和身份证号必须先脱敏"),
])
def test_titles_are_short_and_meaningful(statement: str, title: str) -> None:
    assert tx.title_from(statement) == title
