"""Integration by the local engine through the real path (integrate_unit: loop, tools, guards,
commit) and the real node index, on a hand-made vault: every action, the refusal rules, and
the writing (bucket shapes, Sources sentences, related links, additive updates)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from remelink.config import Settings
from remelink.index import NodeIndex
from remelink.integrate import IntegrationContext, UnitResult, integrate_unit
from remelink.lint import lint_links
from remelink.models.local import LocalModel
from remelink.units import Unit
from remelink.vault.resolve import VaultFiles

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "local" / "vault"
TODAY = "2026-07-03"


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    shutil.copytree(FIXTURE, root)
    (root / ".remelink").mkdir()
    return root


@pytest.fixture
def ctx(vault: Path) -> Iterator[IntegrationContext]:
    settings = replace(Settings(), embedder="none")
    index = NodeIndex(vault, settings)
    index.refresh()
    model = LocalModel(settings)
    model.bind_index(index)
    yield IntegrationContext(vault=vault, settings=settings, model=model, index=index,
                             files=VaultFiles.scan(vault), today=TODAY)
    index.close()


def run(ctx: IntegrationContext, name: str, summary: str, paths: list[str], bucket: str = "wiki",
        points: tuple[str, ...] = (), note: str | None = None) -> UnitResult:
    for rel in paths:
        path = ctx.vault / rel
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(note or f"{summary}\n", encoding="utf-8")
            ctx.files.add(rel)
    result = integrate_unit(ctx, Unit(name=name, bucket=bucket, summary=summary,
                                      paths=tuple(paths), points=points))
    assert result.ok, result.error
    return result


def body(ctx: IntegrationContext, rel: str) -> str:
    return (ctx.vault / rel).read_text(encoding="utf-8")


def assert_clean(ctx: IntegrationContext) -> None:
    problems = [p for p in lint_links(ctx.vault, ctx.settings).problems if p.level == "error"]
    assert problems == []


def test_create_personal_in_english(ctx: IntegrationContext) -> None:
    r = run(ctx, "Dana prefers short standups",
            "Dana prefers standups shorter than ten minutes, because long ones eat focus time.",
            ["daily/2026-07-02/dana.md"], bucket="personal",
            points=("why: Long ones eat focus time",))
    assert r.action == "CREATE" and r.target == "digest/personal/dana-prefers-short-standups.md"
    text = body(ctx, r.target)
    assert "Why: Long ones eat focus time." in text
    assert "How to apply:" not in text  # the notes say nothing about it: no filler line
    assert "This preference was stated in [[daily/2026-07-02/dana.md]]" in text
    assert "kind: preference" in text
    assert_clean(ctx)


def test_create_procedure_in_chinese(ctx: IntegrationContext) -> None:
    r = run(ctx, "回滚发布", "回滚发布：冻结发布流水线。", ["daily/2026-07-02/回滚.md"],
            bucket="procedure",
            points=("step: 冻结发布流水线。", "step: 重新部署上一个版本。",
                    "failure: 缺少回滚脚本时从快照恢复。"))
    assert r.action == "CREATE" and r.target == "digest/procedure/回滚发布.md"
    text = body(ctx, r.target)
    assert "1. 冻结发布流水线。\n2. 重新部署上一个版本。" in text
    assert "失败方式：" in text and "操作步骤记录于 [[daily/2026-07-02/回滚.md]]" in text
    assert "description: 回滚发布的操作步骤（2 步）。" in text
    assert_clean(ctx)


def test_corroborate_adds_only_a_source_sentence(ctx: IntegrationContext) -> None:
    before = body(ctx, "digest/personal/pull-request-approval.md")
    r = run(ctx, "Reviewers must approve every pull request",
            "Reviewers must approve every pull request before it is merged.",
            ["daily/2026-07-02/review.md"], bucket="personal")
    assert (r.action, r.target) == ("CORROBORATE", "digest/personal/pull-request-approval.md")
    after = body(ctx, r.target)
    assert after.startswith(before.rstrip("\n"))
    assert after[len(before.rstrip("\n")):].strip() == \
        "[[daily/2026-07-02/review.md]] restates this: Reviewers must approve every pull " \
        "request before it is merged."
    assert_clean(ctx)


def test_corroborate_from_an_already_cited_note_changes_nothing(ctx: IntegrationContext) -> None:
    before = body(ctx, "digest/personal/pull-request-approval.md")
    r = run(ctx, "Reviewers must approve every pull request",
            "Reviewers must approve every pull request.", ["daily/2026-06-01/old.md"],
            bucket="personal")
    assert (r.action, r.changed) == ("CORROBORATE", False)
    assert body(ctx, "digest/personal/pull-request-approval.md") == before


def test_refine_inserts_the_new_point_before_sources(ctx: IntegrationContext) -> None:
    before = body(ctx, "digest/personal/pull-request-approval.md")
    r = run(ctx, "Reviewers must approve every pull request",
            "Reviewers must approve every pull request before it is merged.",
            ["daily/2026-07-02/billing.md"], bucket="personal",
            points=("point: Changes to the billing service need a second approval from finance.",))
    assert (r.action, r.target) == ("REFINE", "digest/personal/pull-request-approval.md")
    after = body(ctx, r.target)
    head, sources = after.split("## Sources")
    assert "second approval from finance" in head
    assert "The rule was stated in [[daily/2026-06-01/old.md]]." in sources  # kept
    assert "[[daily/2026-07-02/billing.md]] adds: Changes to the billing service need a second " \
        "approval from finance." in sources
    for line in before.splitlines():
        assert line in after  # additive
    assert_clean(ctx)


def test_correct_keeps_the_old_claim_visible(ctx: IntegrationContext) -> None:
    r = run(ctx, "Catalogue cache expiry",
            "Cache entries of the product catalogue expire after 5 minutes, not 10 minutes.",
            ["daily/2026-07-02/cache.md"])
    assert (r.action, r.target) == ("CORRECT", "digest/wiki/cache-expiry.md")
    text = body(ctx, r.target)
    assert "expire after 10 minutes, so that prices" in text  # the old claim stays
    assert "> Corrected on 2026-07-02: Cache entries of the product catalogue expire after 5 " \
           "minutes, not 10 minutes" in text
    assert "per [[daily/2026-07-02/cache.md]]" in text
    assert "The correction is based on [[daily/2026-07-02/cache.md]]." in text
    assert_clean(ctx)


def test_correct_in_chinese(ctx: IntegrationContext) -> None:
    r = run(ctx, "外部接口重试次数", "调用外部接口失败时最多重试 5 次，而不是 3 次。",
            ["daily/2026-07-02/重试.md"])
    assert (r.action, r.target) == ("CORRECT", "digest/wiki/外部接口重试.md")
    text = body(ctx, r.target)
    assert "调用外部接口失败时最多重试 3 次" in text
    assert "> 2026-07-02 更正：调用外部接口失败时最多重试 5 次" in text  # the evidence date
    assert "更正依据 [[daily/2026-07-02/重试.md]]" in text
    assert_clean(ctx)


def test_another_person_is_a_new_node_linked_to_the_other(ctx: IntegrationContext) -> None:
    r = run(ctx, "Alice prefers dark mode", "Alice prefers dark mode in every dashboard.",
            ["daily/2026-07-02/alice.md"], bucket="personal")
    assert r.action == "CREATE" and r.target == "digest/personal/alice-prefers-dark-mode.md"
    assert "digest/personal/bob-prefers-dark-mode.md" in r.related
    assert dict(r.classification)["digest/personal/bob-prefers-dark-mode.md"] == "related"
    assert_clean(ctx)


def test_a_different_number_without_a_correction_is_a_new_linked_node(
        ctx: IntegrationContext) -> None:
    r = run(ctx, "Search cache of the admin console",
            "The search cache of the admin console keeps its cache entries for 60 minutes.",
            ["daily/2026-07-02/admin.md"])
    assert r.action == "CREATE"
    assert "digest/wiki/cache-expiry.md" in r.related
    assert "Corrected" not in body(ctx, "digest/wiki/cache-expiry.md")


def test_a_named_node_is_linked_in_the_prose(ctx: IntegrationContext) -> None:
    r = run(ctx, "Dark dashboards for night shifts",
            "Night-shift dashboards follow Bob prefers dark mode and ship with the dark theme.",
            ["daily/2026-07-02/night.md"])
    text = body(ctx, r.target or "")
    assert "[[digest/personal/bob-prefers-dark-mode.md|Bob prefers dark mode]]" in text
    assert_clean(ctx)


def test_refine_a_runbook_appends_steps_and_failure_modes(ctx: IntegrationContext) -> None:
    first = run(ctx, "Restore a snapshot", "Restore a snapshot: stop the writers.",
                ["daily/2026-07-02/restore.md"], bucket="procedure",
                points=("step: Stop the writers.", "step: Restore the snapshot.",
                        "failure: If the snapshot is corrupt, use the previous one."))
    assert first.action == "CREATE"
    again = run(ctx, "Restore a snapshot", "Restore a snapshot: stop the writers.",
                ["daily/2026-07-03/restore.md"], bucket="procedure",
                points=("step: Stop the writers.", "step: Restore the snapshot.",
                        "step: Check the row counts against the primary.",
                        "failure: If the disk is full, the restore stops half-way."))
    assert (again.action, again.target) == ("REFINE", first.target)
    text = body(ctx, first.target or "")
    assert "2. Restore the snapshot.\n3. Check the row counts against the primary." in text
    assert "- If the snapshot is corrupt, use the previous one.\n- If the disk is full, the " \
           "restore stops half-way." in text
    assert_clean(ctx)
