"""Concurrency and links on the LLM path (issue 23, SPEC §7.2): `dream run` through litellm's real
request path against a loopback provider whose model is bench/llm_policy.py's decent one (it
links the recalled nodes that share words with its unit, and updates the node that says the
same). Units integrated side by side at concurrency 8 must end with the nodes and the
digest-to-digest links of a run at concurrency 1: a unit that missed a node another unit
created meanwhile runs again (before issue 23, 9 links became 5 on the demo, 403 became 374 on
48 notes).

On the demo vault and on bench/genvault.py's vault (44 raw notes, English and Chinese, 36
digest nodes recall finds). The model answers after a short delay so that the units really
overlap, and the test checks that they did.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from dream_support import run, settings_of
from fake_llm import PolicyMind, serve

if importlib.util.find_spec("litellm") is None:
    pytest.skip("litellm is not installed (make install-llm)", allow_module_level=True)
pytestmark = [pytest.mark.slow,
              pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")]

from remelink.models.litellm_model import LiteLLMModel  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "fixtures" / "demo-vault"
LINK_RE = re.compile(r"(?<!!)\[\[(digest/[^\]|#]+)")


@pytest.fixture(autouse=True)
def dummy_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dummy")


class Overlapping(PolicyMind):
    """The decent model, answering after `delay` seconds; counts requests in flight."""

    def __init__(self, delay: float) -> None:
        sys.path.insert(0, str(ROOT))
        from bench.llm_policy import Decent

        super().__init__(Decent())
        self.delay = delay
        self.active = self.most = 0
        self.guard = threading.Lock()

    def respond(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        with self.guard:
            self.active += 1
            self.most = max(self.most, self.active)
        try:
            time.sleep(self.delay)
            return super().respond(messages)
        finally:
            with self.guard:
                self.active -= 1


def make_vault(root: Path, which: str) -> Path:
    vault = root / which
    if which == "demo":
        shutil.copytree(DEMO, vault)
    else:
        sys.path.insert(0, str(ROOT))
        from bench.genvault import generate

        generate(vault, notes=80, seed=5)
        shutil.rmtree(vault / ".remelink", ignore_errors=True)
    return vault


def links(vault: Path) -> set[tuple[str, str]]:
    """Digest-to-digest links: (node, linked node)."""
    return {(p.relative_to(vault).as_posix(), t) for p in (vault / "digest").rglob("*.md")
            for t in LINK_RE.findall(p.read_text(encoding="utf-8"))}


def nodes(vault: Path) -> dict[str, bytes]:
    return {p.relative_to(vault).as_posix(): p.read_bytes()
            for p in sorted((vault / "digest").rglob("*.md"))}


@pytest.mark.parametrize("which", ["demo", "genvault"])
def test_concurrency_8_gives_the_links_of_concurrency_1(tmp_path: Path, which: str) -> None:
    out = {}
    for workers in (1, 8):
        vault = make_vault(tmp_path / f"c{workers}", which)
        before = links(vault)
        mind = Overlapping(delay=0.02)
        with serve(mind) as base:
            settings = replace(settings_of(vault, concurrency=workers), model="openai/decent",
                               api_base=base, retries=0, timeout=30.0)
            report = run(vault, LiteLLMModel("openai/decent", settings), settings)
        assert report.ok, [(u.name, u.error) for u in report.units if u.error]
        out[workers] = (links(vault), nodes(vault), mind.most, report, before, mind.calls)
    (l1, n1, _, r1, before, calls1), (l8, n8, most, r8, _, calls8) = out[1], out[8]
    assert most > 1  # the units really ran side by side
    assert len(r1.units) == len(r8.units) > 5
    assert l1 - before, "the serial run added no digest-to-digest link: nothing to compare"
    assert sorted(n8) == sorted(n1)  # the same nodes: no duplicate, none missing
    assert l8 == l1, (sorted(l1 - l8), sorted(l8 - l1))
    assert n8 == n1  # and the same bytes: the same decisions
    # ... without paying for most units twice: a unit whose candidates an earlier unit still
    # running was shown waits for it instead of running stale (before: 180 requests at 8 for
    # 107 at 1 on the bench's generated vault, +67 % prompt tokens). At most half the units
    # pay one request more: which unit waits, and for whom, depends on timing (the demo's 11
    # units took 15 requests at 1 and 19 at 8 in one CI run);
    # paying most units twice, as before, is far above it (+73 on 48 units).
    assert calls8 - calls1 <= len(r1.units) // 2, (calls1, calls8, len(r1.units))
