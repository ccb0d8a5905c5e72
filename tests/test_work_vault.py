"""`dream run` with the local engine on realistic work notes (fixtures/work-vault/): meetings
with labels and follow-ups, a debugging log, decisions that change, teammates' preferences
written with pronouns, a Slack export, English and Chinese. The digest is compared with the
golden tree tests/golden/work/ (REMELINK_UPDATE_GOLDEN=1 rewrites it), and each miss the
engine used to make is checked by name."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from dream_support import golden_tree, notes_bytes, run, run_summary

from remelink.config import Settings
from remelink.lint import lint_links

WORK = Path(__file__).resolve().parent.parent / "fixtures" / "work-vault"
TODAY = "2026-03-20"


@pytest.fixture(scope="module")
def digest(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    vault = tmp_path_factory.mktemp("work") / "vault"
    shutil.copytree(WORK, vault)
    raw = notes_bytes(vault, ("daily", "resource"))
    report = run(vault, today=TODAY)
    assert report.ok and all(u.status == "done" for u in report.units)
    assert notes_bytes(vault, ("daily", "resource")) == raw
    assert lint_links(vault, Settings()).errors == 0
    files = notes_bytes(vault, ("digest",))
    files["run-summary.json"] = run_summary(vault)
    golden_tree(files, "work")
    return {k: v.decode("utf-8") for k, v in files.items() if k.startswith("digest/")}


def _meta(text: str, key: str) -> str:
    m = re.search(rf"^{key}: (.*)$", text, re.M)
    return m.group(1).strip("'\"") if m else ""


def _prose(text: str) -> str:
    return text.split("\n---\n", 1)[1].split("## Sources")[0]


def test_matches_the_golden_tree(digest: dict[str, str]) -> None:
    assert len(digest) >= 12


def test_no_title_is_a_label_a_pronoun_or_a_fragment(digest: dict[str, str]) -> None:
    names = [_meta(t, "name") for t in digest.values()]
    for name in names:
        assert not re.match(r"(?i)^(?:we agreed|context|why|decisions?|notes?|steps i took|"
                            r"after the load test|revisit|she|he|they|it|背景|原因|决定)\b",
                            name), name
        assert not re.match(r"^[他她]", name), name
    assert "Priya prefers async status updates in #platform over a daily standup" in names
    assert "Checkout Redis timeouts" in names


def test_no_filler_sentence(digest: dict[str, str]) -> None:
    for path, text in digest.items():
        body = _prose(text)
        assert "give no further reason" not in body and "the sources below record" not in body
        assert "来源笔记把它记录为" not in body and "下面的来源记录了它的出处" not in body, path
        assert not re.search(r"How to apply:\s*$", body, re.M)
        assert "Use this when you need to on-call" not in body
        assert not re.search(r"How to (?:debugging|steps|on-call)", text), path


def test_the_debugging_log_is_a_runbook_with_its_lesson(digest: dict[str, str]) -> None:
    text = digest["digest/procedure/checkout-redis-timeouts.md"]
    body = _prose(text)
    for label in ("Symptom: Checkout requests timed out", "Cause: `KEYS` blocks Redis",
                  "Diagnosis:\n1. Checked the load balancer", "Fix:\n1. Disabled the cron",
                  "Result: p99 back to 120 ms within 5 minutes.",
                  "Lesson: Never use KEYS in production code; use SCAN with a small count."):
        assert label in body
    # What the fix achieved is its result, not a step.
    assert not re.search(r"^\d+\. p99 back to", body, re.M)
    assert "symptom, cause, diagnosis, fix, result and lesson were recorded in " \
           "[[daily/2026-03-04/checkout-redis-timeouts.md]]" in text.split("## Sources")[1]


def test_a_noun_phrase_title_gets_a_grammatical_runbook(digest: dict[str, str]) -> None:
    text = digest["digest/procedure/on-call-handover-checklist.md"]
    assert _meta(text, "description") == "On-call handover checklist, in 5 steps."
    assert _prose(text).lstrip().startswith("Run through this every Monday at 10:00")
    assert "Failure modes:\n- If the pager test fails" in text


def test_context_reason_and_follow_up_join_their_decision(digest: dict[str, str]) -> None:
    text = digest["digest/wiki/the-deploy-freeze-starts-on-thursday-at-18-00.md"]
    assert "Why: A Friday deploy leaves nobody around to watch the rollout" in text
    assert "Context: Two deploys last month went out on a Friday evening" in text
    assert "Follow-up: Revisit the freeze after the load test." in text
    zh = digest["digest/wiki/数据库迁移必须先于代码单独发布.md"]
    assert "背景：3 月 10 日晚上发布后" in zh


def test_a_changed_decision_corrects_the_old_one(digest: dict[str, str]) -> None:
    text = digest["digest/wiki/logs-of-the-payments-service-are-kept-for-30-days.md"]
    assert "> Corrected on 2026-03-16: Logs of the payments service are kept for 14 days" in text
    assert "Logs of the payments service are kept for 30 days, then deleted." in text


def test_pronoun_subjects_become_the_person_the_note_names(digest: dict[str, str]) -> None:
    priya = [t for t in digest.values() if _meta(t, "name").startswith("Priya ")]
    assert len(priya) == 4
    assert all("Priya" in t.split("memory_tags:")[1].split("---")[0] for t in priya)
    assert not any(_prose(t).lstrip().startswith("She ") for t in digest.values())


def test_tags_are_entities_only(digest: dict[str, str]) -> None:
    tags = set()
    for text in digest.values():
        block = text.split("\n---\n", 1)[0]
        tags |= set(re.findall(r"^- (.+)$", block.split("memory_tags:")[-1], re.M)) \
            if "memory_tags:\n" in block else set()
    assert tags <= {"Priya", "Marco", "Lena", "Redis", "PagerDuty", "Acme", "Jira", "Berlin",
                    "王芳", "李雷"}, tags
    assert {"Priya", "Redis"} <= tags


def test_the_chat_export_keeps_what_marco_did_with_dates(digest: dict[str, str]) -> None:
    marco = [t for t in digest.values() if "Marco traced it to the 30 s gateway timeout" in t]
    assert len(marco) == 1
    text = marco[0]
    assert "Acme escalated on 11 March 2026" in text  # "yesterday", said on 12 March
    assert "by Friday 13 March 2026" in text
    assert "Marco said this on 12 March 2026 in [[daily/2026-03-12/marco-escalation.md]] " \
           "(turns 10:01, 10:04, 10:06)." in text
    assert "Thanks" not in _prose(text) and "keep you posted" not in text
