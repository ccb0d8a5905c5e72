"""Shared fixtures. Every test runs with a scrubbed environment: no REMELINK_* settings, no
provider keys, litellm forced offline, and no network."""

from __future__ import annotations

import gc
import os
import socket
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from remelink.models.local import embed

# The sentence encoder runs on one BLAS thread under `remelink`, set before numpy loads
# OpenBLAS, which reads it once. A test process may load numpy earlier: set it here, so that
# tests compute the floats, and so the links, the command line does.
embed._one_blas_thread()

# Cyclic garbage collection in a test process. A worker's heap holds every module its tests
# imported (litellm and pydantic alone are some 400,000 objects), and each full collection
# walks all of it: about a ninth of the CPU of an LLM-path dream test went to the collector
# (gc.callbacks, `test_each_fault_alone[*-genvault]` + test_dream_e2e.py: 2.2 s of 19.5).
# So a test process collects less often (10,000 new objects, not 700, start a young
# collection) and, once new modules have been imported, collects fully and freezes what
# survived (gc.freeze: kept out of later collections) before the next test: 0.85 s of GC
# there. Only when garbage is found changes, never what a test computes.
gc.set_threshold(10_000, 10, 10)
_FROZEN_AT = [0]  # len(sys.modules) at the last freeze


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    if len(sys.modules) >= _FROZEN_AT[0] + 20:
        gc.collect()
        gc.freeze()
        _FROZEN_AT[0] = len(sys.modules)


FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"

_KEY_VARS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "AZURE_API_KEY",
             "MISTRAL_API_KEY", "GROQ_API_KEY", "OPENROUTER_API_KEY", "DEEPSEEK_API_KEY")


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("REMELINK_") or name in _KEY_VARS:
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.setenv("LITELLM_OFFLINE_MODE", "true")


@pytest.fixture(autouse=True)
def _no_embedder(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Most tests run the lexical engine (`local.embedder: none`): their golden files are
    lexical, and the sentence embedder costs a second to load. Tests marked `shipped`
    (tests/test_shipped.py, `make test-shipped`) run the default configuration as installed
    instead: `embedder: auto` with the embedder loaded."""
    if request.node.get_closest_marker("shipped") is not None:
        return
    monkeypatch.setenv("REMELINK_LOCAL__EMBEDDER", "none")  # for remelink subprocesses
    from remelink.models.local import embed

    monkeypatch.setattr(embed, "available", lambda setting="auto": False)


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only loopback connections are allowed (the litellm test server lives there)."""
    real_connect = socket.socket.connect

    def guarded(self: socket.socket, address: object) -> object:
        host = address[0] if isinstance(address, tuple) else address
        if isinstance(host, str) and host not in ("127.0.0.1", "localhost", "::1") and \
                self.family in (socket.AF_INET, socket.AF_INET6):
            raise OSError(f"test tried to reach the network: {address!r}")
        return real_connect(self, address)  # type: ignore[arg-type]

    monkeypatch.setattr(socket.socket, "connect", guarded)


# The slow tier: `make test` (CI) runs every test; `make test-fast` (the edit loop) leaves out
# the tests marked `slow`. Besides the tests marked in their own file (the long crash,
# differential, loopback-LLM and offline pre-commit runs), these are slow by file or by test:
# each costs a second or more of CPU (a dream run per case, a subprocess per case, hypothesis
# over whole segments) and none is what an edit to one module usually breaks.
SLOW_TIER = (
    "hostile/",                    # ~150 hostile vaults, a dream run or a lint each
    "test_index_segment.py",       # full segments compared byte for byte with Whoosh's writer
    "test_index_build.py",         # build worker processes started, killed and refused
    "test_index_threads.py",       # threads searching while another writes
    "test_coverage.py",            # hundreds of notes, every one with a verdict
    "test_coverage_properties.py",
    "test_dream_concurrency.py",
    "test_dream_crash.py",
    "test_precommit.py",           # pre-commit in a real git repository
    "test_shipped.py",             # the embedder loaded (also `make test-shipped`): a fifth of
                                   # the rest's CPU, in seven tests
    "test_edge.py::test_entry_point_answers_as_the_typer_app",  # two processes per case
    "test_dream_cli.py::test_progress_bars_on_a_terminal",
    "test_dream_cli.py::test_plain_milestones_on_stderr_when_not_a_terminal",
    "test_dream_cli.py::test_a_lock_left_by_a_killed_process_does_not_block",
    "test_frontmatter.py::test_update_then_load_equals_the_intended_mapping",
    "test_frontmatter.py::test_render_new_then_load_round_trips",
    "test_lint_real.py::test_simple_frontmatter_agrees_with_pyyaml",
)
_TESTS = Path(__file__).resolve().parent


def pytest_report_header() -> str:
    from depth import DEEP

    return ("long runs: the deep counts (REMELINK_DEEP=1)" if DEEP else
            "long runs: the default counts (REMELINK_DEEP=1 or `make test-deep` for the deep ones)")


# The dearest tests (CPU seconds, bench/pytest_cputime.py), run first: pytest-xdist's worksteal
# deals the collection out in order and the idle worker takes from the other's end, so a long
# test met last would keep one worker busy alone. None of these files has a module fixture that
# moving a test would set up twice.
FIRST = (
    "test_coverage_properties.py::test_local_engine_every_note_gets_a_verdict_300",
    "test_dream_crash.py::test_sigkill_at_random_instants_then_rerun",
    "test_links_differential.py::test_targets_match_commonmark_long_run",
    "test_coverage_properties.py::test_llm_path_every_note_gets_a_verdict_300",
    "test_litellm_faults.py::test_mixed_faults_lose_nothing_and_count_every_token",
    "test_precommit.py::test_the_remote_python_hook_works_offline_from_a_wheelhouse",
    "test_shipped.py::test_real_notes_at_the_default_configuration",
    "test_vault_life.py::test_a_vault_lives_in_git_through_the_hook",
    "test_fuzz_text.py::test_every_adversarial_note_is_bounded",
    "test_litellm_concurrency.py::test_concurrency_8_gives_the_links_of_concurrency_1",
    "test_index_build.py::test_a_parallel_build_killed_leaves_the_previous_index",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank: dict[int, int] = {}
    for item in items:
        rel = item.path.resolve().relative_to(_TESTS).as_posix()
        test = f"{rel}::{item.name.split('[', 1)[0]}"
        if any(test == entry or rel == entry or (entry.endswith("/") and rel.startswith(entry))
               for entry in SLOW_TIER):
            item.add_marker(pytest.mark.slow)
        rank[id(item)] = FIRST.index(test) if test in FIRST else len(FIRST)
    items.sort(key=lambda item: rank[id(item)])  # stable: the rest keep their order


VaultFactory = Callable[[dict[str, str | bytes]], Path]


@pytest.fixture
def make_vault(tmp_path: Path) -> Iterator[VaultFactory]:
    """Build a vault from {relative path: text or bytes}; text is dedented."""

    def build(files: dict[str, str | bytes], *, marker: bool = True) -> Path:
        root = tmp_path / "vault"
        root.mkdir(exist_ok=True)
        if marker:
            (root / ".remelink").mkdir(exist_ok=True)
        for rel, content in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(textwrap.dedent(content).lstrip("\n"), encoding="utf-8")
        return root

    yield build


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Every file under root (except the derived index) with its bytes: for 'vault unchanged'."""
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and ".remelink/index" not in path.as_posix():
            out[path.relative_to(root).as_posix()] = path.read_bytes()
    return out
