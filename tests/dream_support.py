"""Helpers shared by the dream tests: fixture vaults, golden trees, in-process runs, the CLI,
and small model doubles.

Golden files live under tests/golden/. They are compared byte for byte; to regenerate them on
purpose (after a deliberate change of the local engine's decisions, say) run

    REMELINK_UPDATE_GOLDEN=1 .venv/bin/pytest tests/test_dream_e2e.py tests/test_dream_cli.py

and review `git diff tests/golden/` like any other change. (The variable is read when this
module is imported: the autouse fixture in conftest.py scrubs REMELINK_* from each test.)
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shutil
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from remelink.config import Settings, load_settings
from remelink.dream.context import RunReport
from remelink.dream.run import DreamOptions, run_dream
from remelink.errors import ModelError
from remelink.models.base import AssistantTurn, ChatModel, Message, ToolSpec
from remelink.models.local import LocalModel

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures" / "dream"
GOLDEN = HERE / "golden"
DEMO = HERE.parent / "fixtures" / "demo-vault"
TODAY = "2026-06-25"
UPDATE = os.environ.get("REMELINK_UPDATE_GOLDEN") == "1"
TREES = ("daily", "resource", "digest")


def copy_fixture(tmp_path: Path, name: str) -> Path:
    source = DEMO if name == "demo" else FIXTURES / name
    root = tmp_path / f"vault-{name}"
    shutil.copytree(source, root)
    return root


def notes_bytes(root: Path, tops: Sequence[str] = TREES) -> dict[str, bytes]:
    """Every file under daily/, resource/ and digest/ with its bytes."""
    out = {}
    for top in tops:
        for path in sorted((root / top).rglob("*")) if (root / top).is_dir() else []:
            if path.is_file():
                out[path.relative_to(root).as_posix()] = path.read_bytes()
    return out


def all_bytes(root: Path) -> dict[str, bytes]:
    """Every file under the vault, .remelink/ included (index, lock, state, runs)."""
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


def settings_of(vault: Path, **dream: Any) -> Settings:
    from dataclasses import replace

    settings = load_settings(vault, env={})
    if dream:
        settings = replace(settings, auto_dream=replace(settings.auto_dream, **dream))
    return settings


def run(vault: Path, model: ChatModel | None = None, settings: Settings | None = None,
        **options: Any) -> RunReport:
    settings = settings or settings_of(vault)
    options.setdefault("today", TODAY)
    return run_dream(vault, settings, model or LocalModel(settings), DreamOptions(**options))


def state_of(vault: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((vault / ".remelink" / "state.json").read_bytes())
    return data


def audit_lines(vault: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for path in sorted((vault / ".remelink" / "runs").glob("*.jsonl")):
        out += [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return out


# -- golden files -------------------------------------------------------------------------------
def _show(name: str, want: bytes | None, got: bytes | None) -> str:
    if want is None or got is None:
        return f"{name}: {'missing from the result' if got is None else 'not in the golden tree'}"
    diff = difflib.unified_diff(want.decode("utf-8", "replace").splitlines(keepends=True),
                                got.decode("utf-8", "replace").splitlines(keepends=True),
                                fromfile=f"golden/{name}", tofile=f"actual/{name}")
    return "".join(list(diff)[:60])


def golden_tree(actual: dict[str, bytes], name: str) -> None:
    """Compare files with the golden tree tests/golden/NAME/ (REMELINK_UPDATE_GOLDEN=1 rewrites
    it: the review is `git diff tests/golden/`)."""
    base = GOLDEN / name
    if UPDATE:
        shutil.rmtree(base, ignore_errors=True)
        for rel, data in actual.items():
            (base / rel).parent.mkdir(parents=True, exist_ok=True)
            (base / rel).write_bytes(data)
    assert base.is_dir(), f"golden tree {base} missing: run with REMELINK_UPDATE_GOLDEN=1"
    want = {p.relative_to(base).as_posix(): p.read_bytes()
            for p in sorted(base.rglob("*")) if p.is_file()}
    if want != actual:
        names = sorted(set(want) | set(actual))
        diffs = [_show(n, want.get(n), actual.get(n)) for n in names
                 if want.get(n) != actual.get(n)]
        raise AssertionError(f"{len(diffs)} file(s) differ from tests/golden/{name}/ "
                             "(REMELINK_UPDATE_GOLDEN=1 to accept, then review the diff):\n"
                             + "\n".join(diffs[:5]))


def golden_text(actual: str, name: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8")
    assert path.exists(), f"golden file {path} missing: run with REMELINK_UPDATE_GOLDEN=1"
    want = path.read_text(encoding="utf-8")
    if want != actual:
        raise AssertionError(_show(name, want.encode(), actual.encode()))


def run_summary(vault: Path) -> bytes:
    """What a run decided, as stable JSON: per unit (extraction order) its name, bucket, paths,
    status, action and target; per input its status; nodes waiting for tags."""
    state = state_of(vault)
    units = [{k: rec.get(k) for k in ("name", "bucket", "paths", "status", "action", "target")}
             for rec in state["units"].values()]
    inputs = {p: r["status"] for p, r in state["inputs"].items()}
    text = json.dumps({"units": units, "inputs": inputs, "pending_tags": state["pending_tags"]},
                      ensure_ascii=False, indent=2)
    return (text + "\n").encode("utf-8")


# -- the CLI ------------------------------------------------------------------------------------
runner = CliRunner()


def cli(*args: str, input: str | None = None) -> Any:
    from remelink.cli import app

    return runner.invoke(app, list(args), input=input)


def normalise_envelope(text: str, vault: Path) -> str:
    """A --json envelope with the run's clock and identity taken out, for golden files."""
    data = json.loads(text)
    data["duration_ms"] = 0
    if isinstance(data.get("data"), dict):
        d = data["data"]
        if "run_id" in d:
            d["run_id"] = "RUN"
        for runrec in d.get("runs") or []:
            for key in ("id", "started", "finished"):
                if key in runrec:
                    runrec[key] = key.upper()
        for unit in d.get("units") or []:
            if isinstance(unit, dict) and "duration_ms" in unit:
                unit["duration_ms"] = 0  # a clock, like the envelope's
    out = json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    # Unit ids hash the extracted text: number them in order of appearance instead, so that a
    # reworded extraction shows up as the wording change it is, not as churn in every id.
    ids: dict[str, str] = {}
    out = re.sub(r"u-[0-9a-f]{12}", lambda m: ids.setdefault(m.group(0), f"u-{len(ids) + 1}"),
                 out)
    return out.replace(str(vault), "VAULT")


# -- model doubles ------------------------------------------------------------------------------
class Wrapped:
    """A ChatModel around the local engine that can misbehave on chosen units or tasks, or be
    slow, and counts how many calls run at once."""

    def __init__(self, settings: Settings, *, garble: Sequence[str] = (), broken: bool = False,
                 fail_tag: bool = False, garble_tag: bool = False, delay: float = 0.0,
                 garble_extract: Sequence[str] = (), extract_down: bool = False) -> None:
        self.inner = LocalModel(settings)
        self.name = "wrapped-local"
        self.garble = set(garble)
        self.garble_extract = set(garble_extract)  # paths whose extraction never succeeds
        self.extract_calls: list[list[str]] = []  # the notes of each extraction call
        self.extract_down = extract_down
        self.broken = broken
        self.fail_tag = fail_tag
        self.garble_tag = garble_tag
        self.tag_calls = 0
        self.delay = delay
        self.calls = 0
        self.active = 0
        self.max_active = 0
        self._lock = threading.Lock()

    def bind_index(self, index: Any) -> None:
        self.inner.bind_index(index)

    def complete(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> AssistantTurn:
        with self._lock:
            self.calls += 1
            self.active += 1
            self.max_active = max(self.max_active, self.active)
        try:
            first_user = next((str(m.get("content")) for m in messages
                               if m.get("role") == "user"), "")
            if self.delay:
                time.sleep(self.delay)
            if '"task": "extract"' in first_user or '"task": "tag"' in first_user:
                if '"task": "extract"' in first_user:
                    shown = sorted(set(re.findall(r"^### (\S+)$", first_user, re.M)))
                    self.extract_calls.append(shown)
                    if self.extract_down:
                        raise ModelError("extraction backend down (test)")
                    if self.garble_extract & set(shown):
                        return AssistantTurn(text="These notes say nothing I can use.")
                if '"task": "tag"' in first_user:
                    with self._lock:
                        self.tag_calls += 1
                    if self.fail_tag:
                        raise ModelError("tagging backend down (test)")
                    if self.garble_tag:
                        return AssistantTurn(text="These are people, I think.")
            else:
                if self.broken:
                    raise ModelError("backend down (test)")
                if any(f'"name": "{name}"' in first_user for name in self.garble):
                    return AssistantTurn(text="I am not sure what to do here.")
            return self.inner.complete(messages, tools)
        finally:
            with self._lock:
                self.active -= 1
