"""litellm is imported only when a litellm model actually completes (SPEC §9.2, STYLE habit 3):
a fresh interpreter that imports the CLI, the integrate core and the loop, and runs a whole
scripted `remelink integrate`, never loads litellm (nor openai or tiktoken)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from integrate_support import SCRIPTS, copy_vault

PROGRAM = """
import json, sys
import remelink.agent, remelink.cli, remelink.integrate, remelink.models
from remelink.models.litellm_model import LiteLLMModel  # the module itself is cheap
from typer.testing import CliRunner
result = CliRunner().invoke(remelink.cli.app, ["integrate", sys.argv[1], "--vault", sys.argv[2],
                                               "--model", "scripted:" + sys.argv[3]])
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("litellm", "openai", "tiktoken"))
print(json.dumps({"exit": result.exit_code, "out": result.stdout, "heavy": heavy}))
"""


def test_scripted_integrate_never_imports_litellm(tmp_path: Path) -> None:
    vault = copy_vault(tmp_path)
    unit = yaml.safe_load((SCRIPTS / "create.yaml").read_text())["unit"]
    units = tmp_path / "units.yaml"
    units.write_text(yaml.safe_dump([unit]))
    env = {k: v for k, v in os.environ.items() if not k.startswith("REMELINK_")}
    proc = subprocess.run([sys.executable, "-c", PROGRAM, str(units), str(vault),
                           str(SCRIPTS / "create.yaml")], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["exit"] == 0, report
    assert report["out"].startswith("CREATE      digest/procedure/queue-long-exports.md")
    assert report["heavy"] == []


OFFLINE_PROGRAM = """
import json, os, socket, sys, time
seen = []
real = socket.getaddrinfo
def lookup(host, *args, **kwargs):
    seen.append(str(host))
    raise OSError("no network in this test")
socket.getaddrinfo = lookup
from remelink.models.litellm_model import _import_litellm
litellm = _import_litellm()
time.sleep(1.0)  # a background cost-map fetch would have started by now
print(json.dumps({"seen": seen, "env": [os.environ.get("LITELLM_LOCAL_MODEL_COST_MAP"),
                                        os.environ.get("LITELLM_OFFLINE_MODE")]}))
"""


@pytest.mark.slow
def test_litellm_is_imported_offline_whatever_the_environment(tmp_path: Path) -> None:
    """remelink switches litellm's cost-map fetch off itself: the user's shell need not."""
    if importlib.util.find_spec("litellm") is None:
        pytest.skip("litellm is not installed")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LITELLM_", "REMELINK_"))}
    proc = subprocess.run([sys.executable, "-c", OFFLINE_PROGRAM], capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report == {"seen": [], "env": ["True", "true"]}
    assert "raw.githubusercontent.com" not in proc.stderr


NOTHING_PROGRAM = """
import json, sys
import remelink.cli
from typer.testing import CliRunner
result = CliRunner().invoke(remelink.cli.app, ["dream", "run", "--vault", sys.argv[1], "--json"])
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("litellm", "openai", "tiktoken"))
print(json.dumps({"exit": result.exit_code, "heavy": heavy}))
"""


def test_a_run_with_nothing_to_do_never_imports_litellm(tmp_path: Path) -> None:
    """litellm is imported when a model call is about to be made, not when the config names a
    litellm model: a cron run that finds nothing changed stays fast."""
    vault = tmp_path / "v"
    (vault / "daily").mkdir(parents=True)
    (vault / ".remelink").mkdir()
    (vault / ".remelink" / "config.yaml").write_text("model: openai/gpt-4.1-mini\n",
                                                      encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("REMELINK_")}
    proc = subprocess.run([sys.executable, "-c", NOTHING_PROGRAM, str(vault)],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report == {"exit": 0, "heavy": []}
