"""The coverage invariant as properties over generated vaults, both engines (SPEC §8, §9.3).

For N distinct-fact notes (N = 1, 17, 40, 600; some chatter among them):
- every note ends with a verdict: a fact note is cited by some digest node's Sources, a
  chatter note is "nothing worth keeping" with a reason;
- a note the model never judges is pending or failed, never processed;
- a rerun is a no-op (nothing integrated, the digest byte-identical).

The local engine runs as shipped, with page sizes and batch budgets drawn at random; the LLM
path is litellm talking to a careless model on a loopback server (tests/fake_llm.py) that omits
notes, returns too many units or pages, mangles paths and buckets.
"""

from __future__ import annotations

import importlib.util
import re
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from dream_support import notes_bytes, run, settings_of, state_of
from fake_llm import CarelessMind, serve
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from remelink.config import DEFAULT_BATCH_TOKENS, Settings
from remelink.dream.run import status
from remelink.models.local import LocalModel

BENCH = Path(__file__).resolve().parent.parent / "bench" / "coverage_notes.py"
SOURCES_RE = re.compile(r"^## Sources\s*$(.*)", re.S | re.M)
LINK_RE = re.compile(r"\[\[([^\]|#]+)")
HAVE_LITELLM = importlib.util.find_spec("litellm") is not None


def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("coverage_notes", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["coverage_notes"] = module
    spec.loader.exec_module(module)
    return module


def cited_by_digest(vault: Path) -> set[str]:
    cited: set[str] = set()
    for node in (vault / "digest").rglob("*.md"):
        m = SOURCES_RE.search(node.read_text(encoding="utf-8"))
        if m:
            cited |= set(LINK_RE.findall(m.group(1)))
    return cited


def check_coverage(vault: Path, notes: list[Any], settings: Settings,
                   stubborn: frozenset[str] = frozenset()) -> None:
    state = state_of(vault)
    cited = cited_by_digest(vault)
    for note in notes:
        rec = state["inputs"][note.path]
        if note.path in stubborn:
            # Never judged by the model: never done, and `status` says so.
            assert rec.get("verdict") is None and rec["status"] != "processed", rec
            continue
        assert rec["status"] == "processed", (note, rec)
        if note.fact:
            assert rec["verdict"] == "units" and rec["units"], (note, rec)
            assert note.path in cited, f"{note.path} ({note.kind}) is cited by no digest node"
        else:
            assert rec["verdict"] == "nothing" and rec["reason"], (note, rec)
    # Whatever the model did, the checkpoint never says done without a verdict.
    for path, rec in state["inputs"].items():
        if rec["status"] == "processed":
            assert rec.get("verdict") in ("units", "nothing"), (path, rec)
    report = status(vault, settings)
    waiting = {p for p, n in report.notes.items() if n["verdict"] is None}
    assert waiting == set(stubborn)
    assert report.ok == (not stubborn)


def check_rerun_is_a_no_op(vault: Path, model: Any, settings: Settings,
                           stubborn: frozenset[str] = frozenset()) -> None:
    before = notes_bytes(vault)
    again = run(vault, model, settings)
    assert not [u for u in again.units if u.status == "done"]
    assert again.files_changed <= len(stubborn)
    assert notes_bytes(vault) == before


def local_case(root: Path, n: int, seed: int, page: int, budget: int) -> None:
    gen = generator()
    vault = root / "v"
    notes = gen.make_vault(vault, n, seed=seed)
    settings = settings_of(vault, max_units=page, batch_tokens=budget)
    model = LocalModel(settings)
    report = run(vault, model, settings)
    assert report.ok, report.errors
    check_coverage(vault, notes, settings)
    check_rerun_is_a_no_op(vault, LocalModel(settings), settings)


LOCAL = settings(max_examples=3, deadline=None, derandomize=True,
                 suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("n", [1, 17])
@LOCAL
@given(seed=st.integers(0, 10_000), page=st.sampled_from([0, 1, 5, 20]),
       budget=st.sampled_from([1, 300, 15_000]))
def test_local_engine_every_note_gets_a_verdict(n: int, seed: int, page: int,
                                                budget: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        local_case(Path(tmp), n, seed, page, budget)


@pytest.mark.slow
@settings(max_examples=2, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), page=st.sampled_from([1, 20]))
def test_local_engine_every_note_gets_a_verdict_40(seed: int, page: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        local_case(Path(tmp), 40, seed, page, 15_000)


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_local_engine_every_note_gets_a_verdict_300(tmp_path: Path) -> None:
    """Hundreds of notes in batches of over a hundred, each answered in pages: 300 notes with a
    budget of 7,500 tokens are two batches (154 and 146 notes), as 600 notes with 15,000 were
    (301 and 299), at a third of the CPU; a page of one unit (many pages to an answer) and many
    small batches are the small cases' above."""
    local_case(tmp_path, 300, 600, 20, 7_500)


# -- the LLM path -------------------------------------------------------------------------------
def llm_case(root: Path, n: int, seed: int, stubborn_count: int,
             batch_tokens: int | None = None) -> CarelessMind:
    from remelink.models.litellm_model import LiteLLMModel

    gen = generator()
    vault = root / "v"
    notes = gen.make_vault(vault, n, seed=seed)
    facts = [nt.path for nt in notes if nt.fact]
    stubborn = frozenset(facts[:stubborn_count]) if len(facts) > stubborn_count else frozenset()
    mind = CarelessMind(seed=seed, stubborn=stubborn)
    with serve(mind) as base:
        dream = {"max_units": 5} if batch_tokens is None else \
            {"max_units": 5, "batch_tokens": batch_tokens}
        settings = replace(settings_of(vault, **dream), model="openai/careless",
                           api_base=base, retries=0, timeout=20.0)
        model = LiteLLMModel("openai/careless", settings)
        report = run(vault, model, settings)
        assert not report.failed_units, report.errors
        check_coverage(vault, notes, settings, stubborn)
        check_rerun_is_a_no_op(vault, model, settings, stubborn)
    return mind


llm = pytest.mark.skipif(not HAVE_LITELLM, reason="litellm is not installed (make install-llm)")
# The first `import litellm` costs ~4 s of CPU; pydantic warns about litellm's own types.
quiet = pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")


@pytest.fixture
def dummy_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dummy")


@llm
@quiet
@pytest.mark.slow
@pytest.mark.parametrize(("n", "seed", "stubborn"), [(1, 1, 0), (17, 2, 2), (40, 3, 3)])
@pytest.mark.usefixtures("dummy_key")
def test_llm_path_every_note_gets_a_verdict(tmp_path: Path, n: int, seed: int,
                                            stubborn: int) -> None:
    mind = llm_case(tmp_path, n, seed, stubborn)
    if n > 1:
        assert mind.repairs_seen  # the careless first answers were sent back


@llm
@pytest.mark.slow
@pytest.mark.timeout(1200)
@quiet
@pytest.mark.usefixtures("dummy_key")
def test_llm_path_every_note_gets_a_verdict_300(tmp_path: Path) -> None:
    """300 notes with half the default budget per batch are eight batches (22 to 44 notes), as
    600 notes with the default budget were (32 to 83 notes), by dream.batching.batches."""
    llm_case(tmp_path, 300, 600, 5, batch_tokens=DEFAULT_BATCH_TOKENS // 2)
