"""A smaller run of bench/crash_dream.py: `remelink dream run` SIGKILLed at seeded random
instants, rerun to completion, checked after each kill and each rerun, and compared byte for
byte with an uninterrupted run (the full version: 50 kills on >= 200 units, see
docs/benchmarks.md)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench" / "crash_dream.py"


def crash_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("crash_dream", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["crash_dream"] = module
    spec.loader.exec_module(module)
    return module


def test_generated_notes_extract_to_four_units_each(tmp_path: Path) -> None:
    crash = crash_module()
    vault = crash.make_vault(tmp_path / "v", 3)
    from dream_support import run

    report = run(vault)
    assert report.ok and report.units_extracted == 12


def test_units_resumed_from_the_checkpoint_decide_as_in_one_run(tmp_path: Path) -> None:
    """A run that stops after extraction (killed, or configured so) and a next run that
    integrates the pending units must end where one uninterrupted run ends. (The local engine
    memoises term statistics; bound once per run, the IDF values looked up while extracting
    leaked into the integration decisions of that run only, and the two vaults differed.)"""
    crash = crash_module()
    from dream_support import notes_bytes, run

    whole = crash.make_vault(tmp_path / "whole", 6)
    assert run(whole).ok
    split = crash.make_vault(tmp_path / "split", 6)
    config = split / ".remelink" / "config.yaml"
    original = config.read_text(encoding="utf-8")
    config.write_text(original.replace("auto_dream:\n", "auto_dream:\n  steps: "
                                       "[dream_extract_step]\n"), encoding="utf-8")
    first = run(split)
    assert first.units_extracted == 24 and first.units == []
    config.write_text(original, encoding="utf-8")
    second = run(split)
    assert second.ok and second.files_changed == 0 and len(second.units) == 24
    assert notes_bytes(split) == notes_bytes(whole)


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_sigkill_at_random_instants_then_rerun(tmp_path: Path) -> None:
    crash = crash_module()
    out = crash.crash_test(tmp_path, kills=4, notes=10, seed=3, jobs=1, log=False)
    assert out["deterministic"], "two uninterrupted runs differ"
    assert out["units"] >= 40
    assert out["failures"] == []
    assert out["recovered_ok"] == out["trials"] == 4 and out["kills"] >= 3


def test_the_checks_catch_a_unit_integrated_twice(tmp_path: Path) -> None:
    """The crash checks themselves can fail: a doubled Sources sentence, a second `done` audit
    line and an extra node are each reported."""
    crash = crash_module()
    import json
    import shutil

    vault = crash.make_vault(tmp_path / "v", 2)
    code, _, _ = crash.run_to_completion(vault)
    assert code == 0
    reference = crash.snapshot(vault)
    assert crash.check(vault, reference, final=True) == []
    node = next(p for p in sorted((vault / "digest").rglob("*.md")))
    text = node.read_text(encoding="utf-8")
    source = crash._LINK_RE.findall(crash._SOURCES_RE.search(text).group(1))[0]
    node.write_text(text + f"\nAgain, per [[{source}]].\n", encoding="utf-8")
    shutil.copy(node, node.with_name(node.stem + "-2.md"))
    runs = vault / ".remelink" / "runs"
    first = sorted(runs.glob("*.jsonl"))[0]
    line = first.read_text(encoding="utf-8").splitlines()[0]
    first.write_text(first.read_text(encoding="utf-8") + line + "\n", encoding="utf-8")
    problems = "\n".join(crash.check(vault, reference, final=True))
    assert f"cites {source} 2 times" in problems
    assert "a node the uninterrupted run does not have" in problems
    assert f"unit {json.loads(line)['unit']}: 2 'done' lines" in problems
    assert "final vault differs from the uninterrupted run" in problems
