"""The whole dream run with the local engine (SPEC 9, 11): the demo vault's known cases, the
hand-made bilingual vault, and a second run over the same input that changes no file."""

from __future__ import annotations

import hashlib
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from remelink.config import Settings
from remelink.dream.run import DreamOptions, run_dream
from remelink.lint import lint_links
from remelink.models.local import LocalModel

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "fixtures" / "demo-vault"
LOCAL = Path(__file__).resolve().parent / "fixtures" / "local" / "vault"


def snapshot(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and ".remelink" not in p.parts}


def dream(root: Path) -> object:
    settings = replace(Settings(), embedder="none")
    return run_dream(root, settings, LocalModel(settings), DreamOptions())


@pytest.fixture(params=["demo", "local"])
def vault(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    shutil.copytree(DEMO if request.param == "demo" else LOCAL, root)
    return root


def test_second_run_changes_no_file(vault: Path) -> None:
    first = dream(vault)
    assert first.ok  # type: ignore[attr-defined]
    assert lint_links(vault, Settings()).errors == 0
    after_first = snapshot(vault)
    second = dream(vault)
    assert second.ok  # type: ignore[attr-defined]
    assert snapshot(vault) == after_first


def test_raw_notes_are_never_rewritten(vault: Path) -> None:
    before = {k: v for k, v in snapshot(vault).items() if not k.startswith("digest/")}
    dream(vault)
    after = {k: v for k, v in snapshot(vault).items() if not k.startswith("digest/")}
    assert after == before


def _outcomes(report: object) -> list[tuple[str, str | None, str | None]]:
    return [(u.name, u.action, u.target) for u in report.units]  # type: ignore[attr-defined]


def test_demo_vault_decisions(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    shutil.copytree(DEMO, root)
    idempotency = (root / "digest/wiki/idempotency-keys.md").read_bytes()
    report = dream(root)
    outcomes = _outcomes(report)
    # The SOC2 finding corrects the 30-day runbook, keeping the old claim visible.
    runbook = (root / "digest/procedure/rotate-api-keys.md").read_text(encoding="utf-8")
    assert any(a == "CORRECT" and t == "digest/procedure/rotate-api-keys.md"
               for _, a, t in outcomes)
    assert "The rotation period is 30 days." in runbook
    assert "> Corrected on " in runbook and "24 hours" in runbook
    assert "[[daily/2026-06-21/soc2-review.md]]" in runbook.split("## Sources")[1]
    # The payments note already fed idempotency-keys.md: corroborated, nothing written.
    assert any(a == "CORROBORATE" and t == "digest/wiki/idempotency-keys.md"
               for _, a, t in outcomes)
    assert (root / "digest/wiki/idempotency-keys.md").read_bytes() == idempotency
    assert not any("money-movement" in (t or "") for _, _, t in outcomes)
    # Alice's two requests are one preference citing both notes.
    alice = [t for n, _, t in outcomes if "Alice" in n]
    assert len(alice) == 1
    text = (root / (alice[0] or "")).read_text(encoding="utf-8")
    assert "[[daily/2026-06-19/dashboard-review.md]]" in text
    assert "[[daily/2026-06-20/pdf-export-timeout.md]]" in text
    # Chinese notes give Chinese nodes.
    zh = [t for n, a, t in outcomes if a == "CREATE" and "脱敏" in n]
    assert zh and all("脱敏" in (t or "") for t in zh)
    assert lint_links(root, Settings()).errors == 0
