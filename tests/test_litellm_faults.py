"""The LLM path under provider faults (SPEC §7.2 "Errors by kind"), through litellm's real
request path: `dream run` with LiteLLMModel against a loopback provider (tests/fake_llm.py
`serve_faults`) whose model is the careless one of the coverage tests, and whose transport
fails as a fault schedule says: rate limits (with and without Retry-After, and one above the
cap), 500/502/503, timeouts, dropped connections, answers without choices, bodies that are no
completion, empty answers, answers cut at the output limit, refusals, raw line breaks in tool
arguments, context-length, content-policy and invalid-request rejections; and, permanent for
the run, a refused key, an unknown model, an exhausted quota.

Each fault alone at 15 % of the calls, and mixed at 10-20 % as a property over seeded
schedules, on the demo vault (the careless model), on a generated vault of 48 raw notes (the
careless model) and on bench/genvault.py's vault of 44 raw notes and 36 digest nodes (English
and Chinese; the decent model of bench/llm_policy.py, which updates the nodes it recalls):
- every unit ends written (its node cites its notes) or failed with its attempt counted, or,
  when the provider looked down, not attempted with no attempt used; the rest of the vault
  goes on;
- nothing is lost: daily/ and resource/ are untouched, no node loses a line, no note is
  checkpointed without a verdict, and a run without faults afterwards ends with every note
  judged and every fact cited by a node;
- tokens are counted: the run reports exactly what the provider charged;
- a fault permanent for the run stops it at once: one line, exit 2, no retry.
Retries sleep through an injected no-op; timeouts are real (0.4 s). Which request a fault hits
is drawn from the seed and the request itself (not from the order requests arrive in), so a
seeded run meets the same faults every time, and a request the same fault whichever thread
sends it first.
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
    Mind,
    PolicyMind,
    serve_faults,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from remelink.config import Settings
from remelink.dream.context import RunReport
from remelink.errors import RunModelError
from remelink.guards import lost_lines
from remelink.vault.notes import parse_text

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
    elif which == "generated":
        generator().make_vault(vault, 48, seed=5)
    else:  # genvault: raw notes and the digest nodes they restate, in both languages
        sys.path.insert(0, str(ROOT))
        from bench.genvault import generate

        generate(vault, notes=80, seed=5)
        shutil.rmtree(vault / ".remelink", ignore_errors=True)
        raw = [p for top in ("daily", "resource") for p in (vault / top).rglob("*.md")]
        assert len(raw) >= 40 and any(re.search(r"[\u4e00-\u9fff]", p.read_text("utf-8"))
                                      for p in raw)
        PLANTED[vault] = lint_problems(vault)
    return vault


def mind_for(vault: Path) -> Mind:
    """The careless model of the coverage tests, or on genvault's vault the decent one."""
    if vault.name == "genvault":
        sys.path.insert(0, str(ROOT))
        from bench.llm_policy import Decent

        return PolicyMind(Decent())
    return CarelessMind(seed=3)


# The client's timeout where the schedule injects `timeout` faults (they answer after
# Faults.timeout_sleep, 0.6 s); elsewhere a generous one, so that a loaded machine's slow answer
# is no timeout the schedule did not draw (it would draw afresh on the retry: another schedule).
TIMEOUT = 0.4
PATIENT = 30.0


def timeout_for(faults: Faults) -> float:
    return TIMEOUT if "timeout" in (*faults.kinds, *faults.at.values()) else PATIENT


def llm_settings(vault: Path, base: str, timeout: float = TIMEOUT, **dream: Any) -> Settings:
    # Small pages and batches, so that extraction pages and batches (and their faults) happen.
    dream = {"max_units": 6, "batch_tokens": 600, **dream}
    return replace(settings_of(vault, **dream), model="openai/careless", api_base=base,
                   retries=4, timeout=timeout, retry_after_max=1.0)


def faulty_run(vault: Path, faults: Faults, timeout: float | None = None,
               **dream: Any) -> tuple[RunReport, Mind]:
    timeout = timeout_for(faults) if timeout is None else timeout
    mind = mind_for(vault)
    # An answer that took the server over half the client's timeout may have reached a client
    # that had given up (a loaded machine): its tokens are charged but may not be counted.
    faults.late_after = timeout / 2
    with serve_faults(mind, faults) as base:
        settings = llm_settings(vault, base, timeout, **dream)
        model = LiteLLMModel("openai/careless", settings, sleep=lambda s: None)
        report = run(vault, model, settings)
    return report, mind


def cited_by_digest(vault: Path) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for node in (vault / "digest").rglob("*.md"):
        m = SOURCES_RE.search(node.read_text(encoding="utf-8"))
        out[node.relative_to(vault).as_posix()] = set(LINK_RE.findall(m.group(1))) if m else set()
    return out


# The lint problems a vault came with (genvault plants broken links and anchors in raw notes):
# a run may add none.
PLANTED: dict[Path, set[tuple[str, str, str]]] = {}


def lint_problems(vault: Path) -> set[tuple[str, str, str]]:
    from remelink.lint import run as lint

    out = io.StringIO()
    lint([], vault=str(vault), fmt="json", include_all=False, resolution=None, out=out,
         err=io.StringIO())
    return {(p["path"], p["code"], p["message"]) for p in json.loads(out.getvalue())
            if p["level"] == "error"}


def lint_clean(vault: Path) -> None:
    new = lint_problems(vault) - PLANTED.get(vault, set())
    assert not new, sorted(new)


def snapshot(vault: Path) -> dict[str, bytes]:
    """Every note of the vault, raw and digest."""
    return {p.relative_to(vault).as_posix(): p.read_bytes()
            for top in ("daily", "resource", "digest") for p in sorted((vault / top).rglob("*"))
            if p.is_file()}


def check_nothing_lost(vault: Path, before: dict[str, bytes]) -> None:
    """daily/ and resource/ byte for byte as they were; every node still there, with every
    line of its body (SPEC §7.2 conservation; no correction happens in these runs)."""
    after = snapshot(vault)
    for rel, data in before.items():
        if not rel.startswith("digest/"):
            assert after.get(rel) == data, f"{rel} changed"
            continue
        assert rel in after, f"node {rel} is gone"
        lost = lost_lines(parse_text(rel, data.decode("utf-8")),
                          parse_text(rel, after[rel].decode("utf-8")))
        assert lost == [], (rel, lost)
    assert not {r for r in after if not r.startswith("digest/")} - set(before)


def check_state(vault: Path) -> None:
    """The checkpoint after any run, stopped or not: a done unit's node cites its notes, a
    processed note has its verdict and its units are done, and the vault lints clean."""
    state = state_of(vault)
    nodes = cited_by_digest(vault)
    for uid, rec in state["units"].items():
        if rec["status"] == "done":
            assert rec["target"] in nodes, (uid, rec)
            assert set(rec["paths"]) <= nodes[rec["target"]], (uid, rec)
        elif rec["status"] == "failed":
            assert rec["attempts"] >= 1 and rec["error"], (uid, rec)
        else:
            assert rec["status"] == "pending", (uid, rec)
    for path, rec in state["inputs"].items():
        if rec["status"] == "processed":  # never done without a verdict
            assert rec.get("verdict") in ("units", "nothing"), (path, rec)
            if rec.get("verdict") == "units":
                assert all(state["units"][u]["status"] == "done" for u in rec["units"])
    lint_clean(vault)


def check_faulty_run(vault: Path, report: RunReport, faults: Faults,
                     before: dict[str, bytes]) -> None:
    """The invariants of a run that met transient, model and unit-level faults."""
    # Tokens: exactly what the provider charged (failed units, refused answers, answers
    # without choices and cut answers included).
    # (Exactly, unless an answer came so late that the client may have given up on it.)
    assert faults.charged - faults.late <= report.tokens_in <= faults.charged, \
        (report.tokens_in, faults.charged, faults.late, faults.hits)
    check_nothing_lost(vault, before)
    check_state(vault)
    outcomes = {u.id: u for u in report.units}
    for uid, rec in state_of(vault)["units"].items():
        outcome = outcomes.get(uid)
        if rec["status"] == "failed":
            # Its attempt counted (an outage gives it back and leaves it pending instead).
            assert outcome is not None and outcome.status == "failed"
        elif rec["status"] == "pending":
            # Never tried (not attempted, or the provider was down): no attempt used.
            assert rec["attempts"] == 0, (uid, rec)
            assert outcome is None or outcome.status in ("skipped", "failed"), (uid, outcome)
    for outcome in report.units:
        assert outcome.status in ("done", "failed", "skipped")
    # A run with failed or skipped units is not ok (exit 1), and says why.
    problems = [u for u in report.units if u.status != "done"]
    assert report.ok == (not problems and not any(
        i.get("status") in ("failed", "invalid") for i in report.inputs.values())
        and not report.errors)


def check_healed(vault: Path) -> None:
    """Faults gone: the next runs finish the job, losing nothing. Every note judged, every
    fact cited."""
    for _ in range(2):
        before = snapshot(vault)
        report, _ = faulty_run(vault, Faults())
        check_nothing_lost(vault, before)
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


@pytest.mark.parametrize("which", ["demo", "genvault"])
@pytest.mark.parametrize("fault", ALONE)
def test_each_fault_alone(tmp_path: Path, fault: str, which: str) -> None:
    vault = make_vault(tmp_path, which)
    faults = Faults((fault,), 0.15, seed=11)
    before = snapshot(vault)
    report, _ = faulty_run(vault, faults)
    assert faults.hits.get(fault), f"the schedule never hit {fault}"
    check_faulty_run(vault, report, faults, before)
    done = [u for u in report.units if u.status == "done"]
    if fault in TRANSIENT_FAULTS or fault in MODEL_FAULTS:
        # Retried or repaired: at this rate, every unit gets through.
        assert report.units and len(done) == len(report.units), \
            [(u.name, u.error) for u in report.units if u.status != "done"]
    else:
        # A unit the provider refuses fails (one attempt) and the others go on.
        failed = [u for u in report.units if u.status == "failed"]
        assert done, "one bad unit stopped the vault"
        # One attempt each; or none, when three in a row made it look like an outage (a
        # provider that keeps asking for an hour's wait is one).
        assert all(u.attempts == 1 or (u.attempts == 0 and "an outage" in (u.error or ""))
                   for u in failed), [(u.name, u.attempts, u.error) for u in failed]
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


@pytest.mark.parametrize("which", ["demo", "generated", "genvault"])
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
        before = snapshot(vault)
        report, _ = faulty_run(vault, faults, concurrency=concurrency)
        check_faulty_run(vault, report, faults, before)
        assert report.units, "nothing was integrated"
        check_healed(vault)


def test_a_seeded_schedule_meets_the_same_faults_every_time(tmp_path: Path) -> None:
    """Deterministic: the same seed on the same vault, twice, hits the same requests with the
    same faults and ends with the same vault and the same checkpoint. (Every fault but the
    timeout, which is the clock's: with a client timeout far above any answer's time, a loaded
    machine cannot add a retry of its own to the schedule.)"""
    outcomes = []
    for i in range(2):
        vault = make_vault(tmp_path / str(i), "demo")
        faults = Faults(tuple(k for k in MIXED if k != "timeout"), 0.25, seed=7)
        report, _ = faulty_run(vault, faults)
        state = state_of(vault)
        outcomes.append((faults.log, faults.charged, report.tokens_in,
                         {u["name"]: (u["status"], u["attempts"]) for u in
                          state["units"].values()},
                         {rel: data for rel, data in snapshot(vault).items()}))
    assert sum(1 for _, f in outcomes[0][0] if f) >= 2  # faults did happen
    assert outcomes[0] == outcomes[1]


@pytest.mark.parametrize(("which", "fault", "at", "concurrency"), [
    ("demo", "auth", 12, 4), ("demo", "quota", 9, 1), ("genvault", "unknown_model", 40, 4)])
def test_a_run_fault_amid_other_faults_stops_the_run_and_loses_nothing(
        tmp_path: Path, which: str, fault: str, at: int, concurrency: int) -> None:
    """Mixed faults at 15 %, then one permanent for the run: it stops there (the units already
    in flight finish, no other unit starts), with nothing lost and the checkpoint consistent;
    the next run without faults finishes the job."""
    vault = make_vault(tmp_path, which)
    faults = Faults(MIXED, 0.15, seed=at, at={at: fault})
    before = snapshot(vault)
    with pytest.raises(RunModelError) as info:
        faulty_run(vault, faults, concurrency=concurrency)
    assert info.value.exit_code == 2
    assert faults.hits.get(fault) == 1 and len(faults.hits) > 1
    # No unit starts after it (but for one per other worker that was starting as it failed).
    started = [n for n in faults.firsts if n > faults.fault_at[fault][0]]
    assert len(started) <= concurrency - 1, (started, faults.fault_at)
    check_nothing_lost(vault, before)
    check_state(vault)
    last = state_of(vault)["runs"][-1]
    assert last["failed"]
    # Tokens counted, the stopped run's too: what the provider charged up to the stop.
    counted = last["counts"]["tokens_in"]
    assert faults.charged - faults.late <= counted <= faults.charged and counted > 0, \
        (last["counts"], faults.charged, faults.late)
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
