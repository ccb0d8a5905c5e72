"""`remelink dream run` and `remelink status` at the command line (SPEC §9.4, §13): the --json
envelope (golden), the text summary, exit codes 2 and 3, --dry-run writing nothing at all, the
vault lock, and progress output on a terminal and under cron."""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from dream_support import (
    TODAY,
    Wrapped,
    all_bytes,
    cli,
    copy_fixture,
    golden_text,
    normalise_envelope,
    notes_bytes,
    run,
    settings_of,
    state_of,
)

from remelink.vault.fsio import file_lock

REMELINK = str(Path(sys.executable).with_name("remelink"))


def dream(vault: Path, *args: str) -> object:
    return cli("dream", "run", "--vault", str(vault), "--today", TODAY, *args)


def test_json_envelope_matches_the_golden_file(tmp_path: Path) -> None:
    vault = copy_fixture(tmp_path, "en")
    result = dream(vault, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)  # one document, nothing else on stdout
    assert list(data) == ["ok", "command", "duration_ms", "counts", "data", "errors"]
    assert data["ok"] is True and data["command"] == "dream run" and data["errors"] == []
    assert all(i["status"] == "processed" for i in data["data"]["inputs"].values())
    assert {u["status"] for u in data["data"]["units"]} == {"done"}
    golden_text(normalise_envelope(result.stdout, vault), "dream/cli_envelope.json")

    again = json.loads(dream(vault, "--json").stdout)
    assert {i["status"] for i in again["data"]["inputs"].values()} == {"skipped"}
    assert again["counts"]["units_extracted"] == 0 and again["data"]["units"] == []


def test_text_summary_counts(tmp_path: Path) -> None:
    vault = copy_fixture(tmp_path, "en")
    result = dream(vault, "--quiet")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "dream run: 6 notes scanned, 6 changed, 0 unchanged, 0 invalid"
    assert lines[1] == "verdicts: 6 notes judged (6 with units, 0 nothing worth keeping)"
    assert lines[2].startswith("units: ") and " integrated (CORRECT " in lines[2]
    assert lines[2].endswith(", 0 failed")
    assert " 1 updated; 6 inputs checkpointed (" in lines[3]
    assert "nothing worth keeping:" not in lines
    assert result.stderr == ""  # --quiet: no progress


def test_status_text_and_json(tmp_path: Path) -> None:
    vault = copy_fixture(tmp_path, "en")
    assert cli("status", "--vault", str(vault)).stdout == (
        "no checkpoint yet: `remelink dream run` has not run in this vault\n")
    config = vault / ".remelink" / "config.yaml"
    config.write_text(config.read_text(encoding="utf-8") + "auto_dream:\n  max_attempts: 1\n",
                      encoding="utf-8")
    settings = settings_of(vault)
    target = "Alice prefers to see concrete progress"
    run(vault, Wrapped(settings, garble=[target]), settings)

    text = cli("status", "--vault", str(vault))
    assert text.exit_code == 1  # a failed unit is a problem to look at
    out = text.stdout
    assert out.startswith("inputs: 2 failed, 4 processed\nunits: 8 done, 1 failed\n"), out
    assert f"failed (1):\n  {target}: attempt 1 of 1 (gave up; rerun with --retry-failed): " \
           "answer not accepted" in out
    assert "last runs:\n  " in out and ": problems, 8 integrated, 1 failed" in out

    data = json.loads(cli("status", "--vault", str(vault), "--json").stdout)
    assert data["ok"] is False and data["command"] == "status"
    assert data["counts"]["units"] == {"done": 8, "failed": 1}
    failed, = data["data"]["failed"]
    assert failed["name"] == target and failed["gave_up"] is True and failed["attempts"] == 1
    assert data["errors"] == [f"unit {target!r}: {failed['error']}"]


@pytest.mark.parametrize("content,needle", [
    ('{"version": 99, "inputs": {}}', "version 99, newer than this remelink understands"),
    ("{not json", "cannot read the checkpoint"),
    ('{"inputs": {}}', "has no version"),
    ('{"version": 1, "units": {"u-1": {"name": "x"}}}', "malformed"),
])
def test_unusable_state_exits_2_and_is_left_untouched(tmp_path: Path, content: str,
                                                     needle: str) -> None:
    vault = copy_fixture(tmp_path, "en")
    state = vault / ".remelink" / "state.json"
    state.write_text(content, encoding="utf-8")
    before = notes_bytes(vault)
    for args in (["dream", "run", "--vault", str(vault)], ["status", "--vault", str(vault)]):
        result = cli(*args)
        assert result.exit_code == 2, result.output
        assert result.stderr.count("\n") == 1 and needle in result.stderr
        assert "Traceback" not in result.stderr
        assert state.read_text(encoding="utf-8") == content
    assert notes_bytes(vault) == before
    # --json still gives one document.
    data = json.loads(cli("dream", "run", "--vault", str(vault), "--json").stdout)
    assert data["ok"] is False and needle in data["errors"][0]


def test_unknown_step_is_a_configuration_error_before_anything_runs(tmp_path: Path) -> None:
    vault = copy_fixture(tmp_path, "en")
    config = vault / ".remelink" / "config.yaml"
    config.write_text(config.read_text(encoding="utf-8") + "auto_dream:\n  steps: "
                      "[dream_extract_step, dream_integrate_step, dream_dance_step]\n",
                      encoding="utf-8")
    before = all_bytes(vault)
    result = cli("dream", "run", "--vault", str(vault))
    assert result.exit_code == 2
    assert "unknown dream step(s): dream_dance_step" in result.stderr
    assert "known steps: dream_extract_step" in result.stderr
    assert all_bytes(vault) == before  # not even a lock file


def test_dry_run_writes_nothing_at_all_and_prints_diffs(tmp_path: Path) -> None:
    vault = copy_fixture(tmp_path, "en")
    (vault / "daily/2026-06-21/soc2-review.md").rename(tmp_path / "held-back.md")
    assert dream(vault, "--quiet").exit_code == 0  # a real run first: index, state, runs, lock
    (tmp_path / "held-back.md").rename(vault / "daily/2026-06-21/soc2-review.md")
    before = all_bytes(vault)
    stamps = {p: os.stat(vault / p).st_mtime_ns for p in before}

    result = dream(vault, "--dry-run")

    assert result.exit_code == 0, result.output
    assert all_bytes(vault) == before  # .remelink/ included: index, state, runs, lock
    assert {p: os.stat(vault / p).st_mtime_ns for p in before} == stamps
    out = result.stdout
    assert out.startswith("dream run (dry run: nothing written): 6 notes scanned, 1 changed")
    assert "--- a/digest/procedure/rotate-api-keys.md\n+++ b/digest/procedure/rotate-api-keys.md" \
        in out
    assert "\n+> Corrected on 2026-06-25" in out or "\n+--- /dev/null" in out or "+++ b/" in out

    # The real run then does what the dry run showed.
    real = dream(vault, "--json")
    data = json.loads(real.stdout)
    shown = json.loads(dream_json_of(tmp_path, before, vault))
    assert [(u["action"], u["target"]) for u in data["data"]["units"]] == \
        [(u["action"], u["target"]) for u in shown["data"]["units"]]


def dream_json_of(tmp_path: Path, files: dict[str, bytes], vault: Path) -> str:
    """The --dry-run --json output for a vault holding `files` (a copy, so `vault` is kept)."""
    copy = tmp_path / "copy"
    for rel, data in files.items():
        (copy / rel).parent.mkdir(parents=True, exist_ok=True)
        (copy / rel).write_bytes(data)
    result = dream(copy, "--dry-run", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["data"]["dry_run"] is True and data["data"]["diffs"]
    return str(result.stdout)


def test_dry_run_on_a_fresh_vault_creates_nothing(tmp_path: Path) -> None:
    vault = copy_fixture(tmp_path, "zh")
    before = all_bytes(vault)
    result = dream(vault, "--dry-run", "--quiet")
    assert result.exit_code == 0, result.output
    assert "+++ b/digest/" in result.stdout
    assert all_bytes(vault) == before
    assert sorted(p.name for p in (vault / ".remelink").iterdir()) == ["config.yaml"]


# -- locking ------------------------------------------------------------------------------------
def test_a_held_lock_makes_the_run_wait_then_exit_3(tmp_path: Path) -> None:
    vault = copy_fixture(tmp_path, "en")
    before = notes_bytes(vault)
    with file_lock(vault / ".remelink" / "lock"):
        started = time.monotonic()
        result = dream(vault, "--wait", "0.4")
        waited = time.monotonic() - started
        dry = dream(vault, "--dry-run", "--wait", "0")
    assert result.exit_code == 3 and waited >= 0.4
    assert result.stderr.startswith("remelink: error: vault busy: another remelink process")
    assert "pass --wait SECONDS (waited 0.4 s)" in result.stderr
    assert dry.exit_code == 3  # a dry run does not read a vault that is being written
    assert notes_bytes(vault) == before and not (vault / ".remelink" / "state.json").exists()


def test_a_lock_left_by_a_killed_process_does_not_block(tmp_path: Path) -> None:
    vault = copy_fixture(tmp_path, "en")
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from pathlib import Path; "
         "from remelink.vault.fsio import file_lock\n"
         f"with file_lock(Path({str(vault / '.remelink' / 'lock')!r})):\n"
         "    print('held', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        assert dream(vault, "--quiet").exit_code == 3
        holder.send_signal(signal.SIGKILL)
        holder.wait(10)
        assert (vault / ".remelink" / "lock").exists()  # the file stays; the lock does not
        result = dream(vault, "--quiet")
        assert result.exit_code == 0, result.output
    finally:
        if holder.poll() is None:
            holder.kill()


@pytest.mark.slow
def test_two_concurrent_runs(tmp_path: Path) -> None:
    """Two real `dream run` processes: the second exits 3 while the first holds the vault;
    with --wait it runs after the first and finds nothing left to do. No corruption."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
    from crash_dream import make_vault

    vault = make_vault(tmp_path / "vault", 12)
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    cmd = [REMELINK, "dream", "run", "--vault", str(vault), "--json", "--today", TODAY]
    first = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                             text=True)
    lock = vault / ".remelink" / "lock"
    deadline = time.monotonic() + 30
    while not (lock.exists() and lock.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    busy = subprocess.run([*cmd, "--wait", "0.5"], capture_output=True, text=True, env=env,
                          check=False)
    waiting = subprocess.Popen([*cmd, "--wait", "600"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=env, text=True)
    out1, _ = first.communicate(timeout=600)
    out3, _ = waiting.communicate(timeout=600)
    assert busy.returncode == 3 and "vault busy" in busy.stderr, busy.stderr
    assert json.loads(busy.stdout)["ok"] is False
    assert first.returncode == 0 and waiting.returncode == 0
    one, three = json.loads(out1), json.loads(out3)
    assert one["counts"]["units_integrated"] >= 40
    assert three["counts"]["units_extracted"] == 0 and three["data"]["units"] == []
    state = state_of(vault)
    assert {u["status"] for u in state["units"].values()} == {"done"}
    assert [r["ok"] for r in state["runs"]] == [True, True]


# -- progress -----------------------------------------------------------------------------------
def test_plain_milestones_on_stderr_when_not_a_terminal(tmp_path: Path) -> None:
    vault = copy_fixture(tmp_path, "en")
    proc = subprocess.run([REMELINK, "dream", "run", "--vault", str(vault), "--today", TODAY],
                          capture_output=True, text=True, check=False,
                          env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("dream run: 6 notes scanned")
    lines = proc.stderr.splitlines()
    assert lines and all(line.startswith("[") and "s] " in line for line in lines)
    body = [line.split("s] ", 1)[1] for line in lines]
    # 9 units and 3 line units (kind echo), which change nothing here: progress counts them.
    assert "extract: 6 to do" in body and "integrate: 12 to do" in body
    assert any(b.startswith("integrate: 12/12 (") for b in body)
    assert "\x1b" not in proc.stderr and "\r" not in proc.stderr  # cron mail stays plain


def test_progress_bars_on_a_terminal(tmp_path: Path) -> None:
    vault = copy_fixture(tmp_path, "en")
    master, slave = pty.openpty()
    proc = subprocess.Popen([REMELINK, "dream", "run", "--vault", str(vault), "--today", TODAY],
                            stdout=subprocess.PIPE, stderr=slave, text=True,
                            env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True",
                                 "TERM": "xterm-256color", "COLUMNS": "120"})
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    out, _ = proc.communicate(timeout=120)
    os.close(master)
    screen = b"".join(chunks).decode("utf-8", "replace")
    assert proc.returncode == 0
    assert "\x1b[" in screen and "━" in screen and "integrate" in screen  # rich bars
    assert out.startswith("dream run: 6 notes scanned")  # stdout: the result only
    assert "━" not in out and "\x1b" not in out


def test_rich_reporter_forced() -> None:
    import io

    from rich.console import Console

    from remelink.progress import PlainReporter, RichReporter, make_reporter

    buffer = io.StringIO()
    reporter = RichReporter(Console(file=buffer, force_terminal=True, width=100))
    reporter.start("integrate", 3)
    for i in range(3):
        reporter.advance("integrate", f"CREATE digest/wiki/n{i}.md")
    reporter.note("recovered u-1")
    reporter.close()
    assert "recovered u-1" in buffer.getvalue() and "integrate" in buffer.getvalue()

    plain = io.StringIO()
    assert isinstance(make_reporter(stream=plain), PlainReporter)
    reporter2 = make_reporter(stream=plain)
    reporter2.start("tag", 2)
    reporter2.advance("tag", "a")
    reporter2.advance("tag", "b")
    assert [line.split("s] ")[1] for line in plain.getvalue().splitlines()] == [
        "tag: 2 to do", "tag: 2/2 (b)"]


# -- the README ---------------------------------------------------------------------------------
ROOT = Path(__file__).resolve().parent.parent


def test_readme_first_command_is_the_demo_dream_run() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first_block = readme.split("```sh\n", 1)[1].split("```", 1)[0]
    assert first_block.splitlines()[0].startswith("make demo")
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    demo = makefile.split("\ndemo:", 1)[1].split("\n\n", 1)[0]
    assert "DEMO_DIR ?= /tmp/remelink-demo" in makefile
    assert "cp -r fixtures/demo-vault $(DEMO_DIR)" in demo
    assert "$(BIN)/remelink dream run --vault $(DEMO_DIR)\n" in demo
    # The demo vault runs on the local engine, offline.
    config = (ROOT / "fixtures/demo-vault/.remelink/config.yaml").read_text(encoding="utf-8")
    assert "model: local" in config


def test_readme_cron_line_and_hooks_are_real() -> None:
    import yaml

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    cron = readme.split("```cron\n", 1)[1].split("```", 1)[0]
    line = next(x for x in cron.splitlines() if not x.startswith("#"))
    flags = [w for w in line.split() if w.startswith("--")]
    help_text = cli("dream", "run", "--help").stdout
    assert flags and all(f in help_text for f in flags), flags
    manifest = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    hooks = {h["id"] for h in manifest}
    blocks = [yaml.safe_load(b.split("```", 1)[0]) for b in readme.split("```yaml\n")[1:]]
    blocks = [b for b in blocks if isinstance(b, dict) and "repos" in b]  # pre-commit configs
    used = {h["id"] for b in blocks for repo in b["repos"] for h in repo["hooks"]}
    assert used and used <= hooks | {"remelink-lint-links"}
    local = [h for b in blocks for repo in b["repos"] if repo["repo"] == "local"
             for h in repo["hooks"]]
    # The local hook runs what the published one runs, by the console script's absolute path
    # (it must work without the environment on PATH).
    published = next(h["entry"] for h in manifest if h["id"] == "remelink-lint-links")
    for hook in local:
        executable, _, args = hook["entry"].partition(" ")
        assert executable.startswith("/") and \
            f"{Path(executable).name} {args}".strip() == published, hook["entry"]
    assert local
