"""The LLM path under provider faults (SPEC §7.2 "Errors by kind"), through litellm's real
request path: `dream run` with LiteLLMModel against a loopback provider (tests/fake_llm.py
`serve_faults`) whose model is the careless one of the coverage tests, and whose transport
fails as a fault schedule says: rate limits (with and without Retry-After, and one above the
cap), 500/502/503, timeouts, dropped connections, answers without choices, bodies that are no
completion, empty answers, answers cut at the output limit, refusals, raw line breaks in tool
arguments, context-length, content-policy and invalid-request rejections; and, permanent for
the run, a refused key, an unknown model, an exhausted quota.

Each fault alone at 15 % of the calls, and mixed at 10-20 % as a property over seeded
schedules, on the demo vault and on a generated vault of 48 notes (English and Chinese):
- every unit ends written (its node cites its notes) or failed with its attempt counted, or,
  when the provider looked down, not attempted with no attempt used; the rest of the vault
  goes on;
- nothing is lost: no note is checkpointed without a verdict, and a run without faults
  afterwards ends with every note judged and every fact cited by a node;
- tokens are counted: the run reports exactly what the provider charged;
- a fault permanent for the run stops it at once: one line, exit 2, no retry.
Retries sleep through an injected no-op; timeouts are real (0.4 s).
"""

from __future__ import annotations

import importlib.util
import io
import json
import re
import shutil
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from dream_support import cli, run, settings_of, state_of
from fake_llm import (
    MODEL_FAULTS,
    RETRY_AFTER_OVER_CAP,
    RUN_FAULTS,
    TRANSIENT_FAULTS,
    UNIT_FAULTS,
    CarelessMind,
    Faults,
    serve_faults,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from remelink.config import Settings
from remelink.dream.context import RunReport
from remelink.errors import RunModelError

if importlib.util.find_spec("litellm") is None:
    pytest.skip("litellm is not installed (make install-llm)", allow_module_level=True)
pytestmark = [pytest.mark.slow,
              pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")]

from remelink.models.litellm_model import LiteLLMModel  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "fixtures" / "demo-vault"
SOURCES_RE = re.compile(r"^## Sources\s*$(.*)", re.S | re.M)
LINK_RE = re.compile(r"\[\[([^\]|#]+)")


@pytest.fixture(autouse=True)
def dummy_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dummy")


def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("coverage_notes",
                                                  ROOT / "bench" / "coverage_notes.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["coverage_notes"] = module
    spec.loader.exec_module(module)
    return module


def make_vault(root: Path, which: str) -> Path:
    vault = root / which
    if which == "demo":
        shutil.copytree(DEMO, vault)
    else:
        generator().make_vault(vault, 48, seed=5)
    return vault


def llm_settings(vault: Path, base: str, **dream: Any) -> Settings:
    # Small pages and batches, so that extraction pages and batches (and their faults) happen.
    dream = {"max_units": 6, "batch_tokens": 600, **dream}
    return replace(settings_of(vault, **dream), model="openai/careless", api_base=base,
                   retries=4, timeout=0.4, retry_after_max=1.0)


def faulty_run(vault: Path, faults: Faults, **dream: Any) -> tuple[RunReport, CarelessMind]:
    mind = CarelessMind(seed=3)
    with serve_faults(mind, faults) as base:
        settings = llm_settings(vault, base, **dream)
        model = LiteLLMModel("openai/careless", settings, sleep=lambda s: None)
        report = run(vault, model, settings)
    return report, mind


def cited_by_digest(vault: Path) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for node in (vault / "digest").rglob("*.md"):
        m = SOURCES_RE.search(node.read_text(encoding="utf-8"))
        out[node.relative_to(vault).as_posix()] = set(LINK_RE.findall(m.group(1))) if m else set()
    return out


def lint_clean(vault: Path) -> None:
    from remelink.lint import run as lint

    out = io.StringIO()
    assert lint([], vault=str(vault), fmt="json", include_all=False, resolution=None, out=out,
                err=io.StringIO()) == 0, out.getvalue()


def check_faulty_run(vault: Path, report: RunReport, faults: Faults) -> None:
    """The invariants of a run that met transient, model and unit-level faults."""
    # Tokens: exactly what the provider charged (failed units, refused answers, answers
    # without choices and cut answers included).
    assert report.tokens_in == faults.charged, (report.tokens_in, faults.charged, faults.hits)
    state = state_of(vault)
    nodes = cited_by_digest(vault)
    outcomes = {u.id: u for u in report.units}
    for uid, rec in state["units"].items():
        outcome = outcomes.get(uid)
        if rec["status"] == "done":
            assert rec["target"] in nodes, (uid, rec)
            assert set(rec["paths"]) <= nodes[rec["target"]], (uid, rec)
        elif rec["status"] == "failed":
            # Its attempt counted (an outage gives it back and leaves it pending instead).
            assert rec["attempts"] >= 1 and rec["error"], (uid, rec)
            assert outcome is not None and outcome.status == "failed"
        else:
            assert rec["status"] == "pending", (uid, rec)
            # Never tried (not attempted, or the provider was down): no attempt used.
            assert rec["attempts"] == 0, (uid, rec)
            assert outcome is None or outcome.status in ("skipped", "failed"), (uid, outcome)
    for outcome in report.units:
        assert outcome.status in ("done", "failed", "skipped")
    for path, rec in state["inputs"].items():
        if rec["status"] == "processed":  # never done without a verdict
            assert rec.get("verdict") in ("units", "nothing"), (path, rec)
            if rec.get("verdict") == "units":
                assert all(state["units"][u]["status"] == "done" for u in rec["units"])
    # A run with failed or skipped units is not ok (exit 1), and says why.
    problems = [u for u in report.units if u.status != "done"]
    assert report.ok == (not problems and not any(
        i.get("status") in ("failed", "invalid") for i in report.inputs.values())
        and not report.errors)
    lint_clean(vault)


def check_healed(vault: Path) -> None:
    """Faults gone: the next runs finish the job. Every note judged, every fact cited."""
    for _ in range(2):
        report, _ = faulty_run(vault, Faults())
        if report.ok:
            break
    assert report.ok, (report.errors, [u.error for u in report.units if u.error])
    state = state_of(vault)
    cited = set().union(*cited_by_digest(vault).values())
    for path, rec in state["inputs"].items():
        assert rec["status"] == "processed" and rec.get("verdict"), (path, rec)
        if rec["verdict"] == "units":
            assert path in cited, path
    assert {u["status"] for u in state["units"].values()} == {"done"}
    lint_clean(vault)


# -- each fault alone --------------------------------------------------------------------------

ALONE = (*TRANSIENT_FAULTS, *MODEL_FAULTS, *UNIT_FAULTS, RETRY_AFTER_OVER_CAP)


@pytest.mark.parametrize("fault", ALONE)
def test_each_fault_alone_on_the_demo(tmp_path: Path, fault: str) -> None:
    vault = make_vault(tmp_path, "demo")
    faults = Faults((fault,), 0.15, seed=11)
    report, _ = faulty_run(vault, faults)
    assert faults.hits.get(fault), f"the schedule never hit {fault}"
    check_faulty_run(vault, report, faults)
    done = [u for u in report.units if u.status == "done"]
    if fault in TRANSIENT_FAULTS or fault in MODEL_FAULTS:
        # Retried or repaired: at this rate, every unit gets through.
        assert report.units and len(done) == len(report.units), \
            [(u.name, u.error) for u in report.units if u.status != "done"]
    else:
        # A unit the provider refuses fails (one attempt) and the others go on.
        failed = [u for u in report.units if u.status == "failed"]
        assert done, "one bad unit stopped the vault"
        assert all(u.attempts == 1 for u in failed)
        if fault in UNIT_FAULTS:
            assert all(u.steps >= 1 for u in failed)
    check_healed(vault)


def test_a_retry_after_above_the_cap_fails_the_call_at_once(tmp_path: Path) -> None:
    """Not hammered: the provider asks for an hour, the call fails at once (the batch is then
    tried note by note, as for any failure of a batch), and the run goes on."""
    vault = make_vault(tmp_path, "demo")
    faults = Faults(at={1: RETRY_AFTER_OVER_CAP})
    report, _ = faulty_run(vault, faults)
    assert [f for _, f in faults.log].count(RETRY_AFTER_OVER_CAP) == 1
    assert faults.log[1] == ("extract", None)  # the next request was a new one
    assert report.ok and report.units


def test_an_outage_stops_the_step_and_costs_no_attempt(tmp_path: Path) -> None:
    """Every call fails past its retries: after three in a row the step stops asking."""
    vault = make_vault(tmp_path, "demo")
    faults = Faults(("server_error",), 1.0, seed=1)
    report, _ = faulty_run(vault, faults)
    # Extraction: the batch, then two notes alone: three failures, five requests each.
    assert faults.requests == 3 * 5
    assert not report.ok and report.units == []
    assert all(i["status"] in ("failed", "invalid") for i in report.inputs.values())
    assert not any(rec.get("extract_attempts") for rec in state_of(vault)["inputs"].values())
    check_healed(vault)


# -- mixed, as a property over fault schedules --------------------------------------------------

MIXED = (*TRANSIENT_FAULTS, *MODEL_FAULTS, *UNIT_FAULTS)
SCHEDULES = settings(max_examples=3, deadline=None, derandomize=True,
                     suppress_health_check=[HealthCheck.too_slow,
                                            HealthCheck.function_scoped_fixture])


@pytest.mark.parametrize("which", ["demo", "generated"])
@SCHEDULES
@given(seed=st.integers(0, 10_000), rate=st.sampled_from([0.1, 0.15, 0.2]),
       kinds=st.lists(st.sampled_from(MIXED), min_size=3, max_size=8, unique=True),
       concurrency=st.sampled_from([1, 4]))
def test_mixed_faults_lose_nothing_and_count_every_token(which: str, seed: int, rate: float,
                                                         kinds: list[str],
                                                         concurrency: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        vault = make_vault(Path(tmp), which)
        faults = Faults(tuple(kinds), rate, seed=seed)
        report, _ = faulty_run(vault, faults, concurrency=concurrency)
        check_faulty_run(vault, report, faults)
        assert report.units, "nothing was integrated"
        check_healed(vault)


# -- permanent for the run ----------------------------------------------------------------------

RUN_MESSAGES = {
    "auth": "authentication failed: Incorrect API key provided",
    "unknown_model": "unknown model or endpoint: The model `gpt-9` does not exist",
    "quota": "the account's quota is exhausted: You exceeded your current quota",
}


@pytest.mark.parametrize("fault", RUN_FAULTS)
@pytest.mark.parametrize("at", [1, 4])  # extraction's first call, or a unit's
def test_a_fault_permanent_for_the_run_stops_it_with_one_line(tmp_path: Path, fault: str,
                                                              at: int) -> None:
    vault = make_vault(tmp_path, "demo")
    faults = Faults(at={at: fault})
    mind = CarelessMind(seed=3)
    with serve_faults(mind, faults) as base:
        config = (f"model: openai/careless\napi_base: {base}\nretries: 4\n"
                  "auto_dream:\n  max_units: 6\n  batch_tokens: 600\n")
        (vault / ".remelink").mkdir(exist_ok=True)
        (vault / ".remelink" / "config.yaml").write_text(config, encoding="utf-8")
        result = cli("dream", "run", "--vault", str(vault), "--quiet", "--json",
                     "--today", "2026-06-25")
    assert result.exit_code == 2, result.output
    assert faults.requests == at  # no retry, nothing after it
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"remelink: error: openai/careless: {RUN_MESSAGES[fault]}")
    envelope = json.loads(result.stdout)
    assert not envelope["ok"] and len(envelope["errors"]) == 1
    assert state_of(vault)["runs"][-1]["failed"]  # the run says it failed
    # Nothing was charged an attempt for it.
    assert not any(u["attempts"] for u in state_of(vault)["units"].values())


def test_a_run_fault_in_a_direct_run_is_a_run_model_error(tmp_path: Path) -> None:
    vault = make_vault(tmp_path, "demo")
    with pytest.raises(RunModelError) as info:
        faulty_run(vault, Faults(at={2: "auth"}))
    assert info.value.exit_code == 2


# -- tagging -------------------------------------------------------------------------------------

def test_tagging_takes_one_call_per_eight_nodes_and_writes_the_tags(tmp_path: Path) -> None:
    vault = make_vault(tmp_path, "generated")
    faults = Faults()
    report, _ = faulty_run(vault, faults, concurrency=4)
    assert report.ok
    written = set(report.created + report.updated)
    calls = [task for task, _ in faults.log if task == "tag"]
    assert len(written) > 16 and len(calls) == -(-len(written) // 8) == report.tag_calls
    demo = make_vault(tmp_path, "demo")
    report, _ = faulty_run(demo, Faults())
    alice = [rel for rel, tags in report.tags.items() if "Alice" in tags]
    assert alice and all("memory_tags: [Alice]" in (demo / rel).read_text(encoding="utf-8")
                         or "- Alice" in (demo / rel).read_text(encoding="utf-8")
                         for rel in alice)


def test_a_tagging_outage_leaves_the_nodes_for_the_next_run(tmp_path: Path) -> None:
    """The provider fails every tagging call: three calls (five tries each), then the pass
    stops; the run is still ok (tags never undo the checkpoint) and the next run tags them."""
    vault = make_vault(tmp_path, "generated")
    faults = Faults(("server_error",), 1.0, only="tag")
    first, _ = faulty_run(vault, faults)
    written = set(first.created + first.updated)
    assert first.ok and len(written) > 24 and not first.tags
    assert [t for t, f in faults.log if t == "tag"] == ["tag"] * (3 * 5)
    assert any(w.startswith("tagging stopped") for w in first.warnings)
    assert set(state_of(vault)["pending_tags"]) == written
    second, _ = faulty_run(vault, Faults())
    assert second.units == [] and set(second.tags) == written
    assert not state_of(vault)["pending_tags"]
