"""The vault's own folder and what a person passes on the command line (issue 20, cases 1-6
and 9): a tampered `.remelink/index` (a link out, links and FIFOs inside it), the locks, what
`init` writes, crash logs, dry-run copies, paths in config.yaml, units and script files that
are devices or FIFOs. Each case: nothing outside written (or, in process, even opened), raw
notes untouched, no hang, one line naming the entry."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from harness import MARKER, SECRET, TIMEOUT, World, opens_under, snapshot, world

pytestmark = pytest.mark.timeout(TIMEOUT)
INDEX = ".remelink/index"
QUERY = "idempotency keys"


def indexed(w: World) -> None:
    """Build the vault's node index (a real one, as a first search leaves it): set-up, run
    in process."""
    result = w.cli_here("index", "rebuild")
    assert result.exit_code == 0, result.stderr


def old_index_outside(w: World) -> Path:
    """The vault's real index moved outside, and `.remelink/index` a link to it."""
    indexed(w)
    target = w.outside / "index"
    os.rename(w.vault / INDEX, target)
    os.symlink(target, w.vault / INDEX)
    return target


def new_node(w: World) -> None:
    (w.vault / "digest/wiki/fresh-node.md").write_text(
        "---\nname: Fresh node\ndescription: idempotency keys again\n---\nKeys, keys.\n",
        encoding="utf-8")


def searches(w: World) -> str:
    result = w.cli("node-search", QUERY)
    assert result.returncode == 0, result.stderr
    assert "digest/wiki/idempotency-keys.md" in result.stdout
    return result.stderr


def test_the_watch_sees_an_open_through_a_link(tmp_path: Path) -> None:
    """The harness's own check: an open through a link into outside/ is recorded."""
    w = world(tmp_path)
    os.symlink(w.outside / "secret.md", w.vault / "peek.md")
    with opens_under(w.outside) as opened:
        (w.vault / "peek.md").read_bytes()
    assert opened


# -- case 1: .remelink/index -----------------------------------------------------------------------
@pytest.mark.parametrize("command", ["node-search", "dream"])
def test_index_symlinked_to_an_outside_folder_holding_an_index(tmp_path: Path,
                                                                 command: str) -> None:
    """node-search wrote index files there and deleted one (`_MAIN_1.toc`); a dream run left
    29 files. Now: the link is moved aside as it is, the index is rebuilt inside."""
    w = world(tmp_path)
    old_index_outside(w)
    new_node(w)
    w.seal()
    if command == "node-search":
        out = searches(w)
    else:
        result = w.cli("dream", "run", "--today", "2026-06-25")
        out = result.stdout + result.stderr
        assert result.returncode in (0, 1), out
    w.held(out, needle=f"{INDEX} was tampered with")
    assert (w.vault / INDEX).is_dir() and not (w.vault / INDEX).is_symlink()
    aside = [p for p in (w.vault / ".remelink").iterdir() if p.name.startswith("index.tampered-")]
    assert len(aside) == 1 and aside[0].is_symlink()
    assert "moved it aside" in out and aside[0].name in out


def test_index_in_process_opens_nothing_outside(tmp_path: Path) -> None:
    w = world(tmp_path)
    old_index_outside(w)
    new_node(w)
    w.seal()
    report, out = w.run()
    w.held(out, needle=f"{INDEX} was tampered with")
    assert any("tampered" in line for line in report.warnings)


def test_manifest_temp_names_symlinked_to_an_outside_file(tmp_path: Path) -> None:
    """Links named like the manifest's temp file (`.remelink-manifest.json.<pid>.tmp`, every
    pid) to a file outside: one search overwrote it with the manifest."""
    w = world(tmp_path)
    indexed(w)
    victim = w.outside / "victim.md"
    for pid in range(1, 400):
        os.symlink(victim, w.vault / INDEX / f".remelink-manifest.json.{pid}.tmp")
    new_node(w)
    w.seal()
    w.held(searches(w), needle=f"{INDEX} was tampered with")


def test_whoosh_write_lock_symlinked_to_a_missing_outside_path(tmp_path: Path) -> None:
    w = world(tmp_path)
    indexed(w)
    os.unlink(w.vault / INDEX / "MAIN_WRITELOCK")
    os.symlink(w.outside / "created-by-the-lock", w.vault / INDEX / "MAIN_WRITELOCK")
    new_node(w)
    w.seal()
    w.held(searches(w), needle=f"{INDEX} was tampered with")
    assert not (w.outside / "created-by-the-lock").exists()


def test_whoosh_temp_folder_symlinked_to_an_outside_folder(tmp_path: Path) -> None:
    """Whoosh empties its temp folder `MAIN.tmp` after a write: through a link, that would
    delete the files of the folder it points at."""
    w = world(tmp_path)
    indexed(w)
    os.symlink(w.outside / "day", w.vault / INDEX / "MAIN.tmp")
    new_node(w)
    w.seal()
    w.held(searches(w), needle=f"{INDEX} was tampered with")


@pytest.mark.parametrize("what", ["symlink", "fifo", "file"])
def test_index_folder_itself_replaced(tmp_path: Path, what: str) -> None:
    w = world(tmp_path)
    if what == "symlink":
        os.symlink(w.outside / "day", w.vault / INDEX)
    elif what == "fifo":
        os.mkfifo(w.vault / INDEX)
    else:
        (w.vault / INDEX).write_bytes(b"not an index")
    w.seal()
    w.held(searches(w), needle=f"{INDEX} was tampered with")
    assert (w.vault / INDEX).is_dir()


def test_a_clean_index_is_neither_moved_nor_reported(tmp_path: Path) -> None:
    w = world(tmp_path)
    indexed(w)
    # A writer killed mid-write leaves its temp folder: not tampering.
    (w.vault / INDEX / "MAIN.tmp").mkdir()
    (w.vault / INDEX / "MAIN.tmp" / "x.c").write_bytes(b"stale")
    new_node(w)
    w.seal()
    out = searches(w)
    assert "tampered" not in out and "warning" not in out
    assert not [p for p in (w.vault / ".remelink").iterdir() if "tampered" in p.name]
    w.held(out)


# -- case 9: FIFOs in the index do not hang---------------------------------------------------------
@pytest.mark.parametrize("name", ["remelink-format.json", "remelink-manifest.json", "_MAIN_1.toc",
                                  "MAIN_WRITELOCK"])
def test_fifo_in_the_index_does_not_hang(tmp_path: Path, name: str) -> None:
    w = world(tmp_path)
    indexed(w)
    target = w.vault / INDEX / name
    if target.exists():
        target.unlink()
    os.mkfifo(target)
    w.seal()
    started = time.monotonic()
    w.held(searches(w), needle=f"{INDEX} was tampered with")
    result = w.cli("dream", "run", "--today", "2026-06-25")
    assert result.returncode in (0, 1), result.stderr
    assert time.monotonic() - started < 60
    w.held(result.stdout + result.stderr)


@pytest.mark.parametrize("lock", [".remelink/lock", ".remelink/index.lock"])
@pytest.mark.parametrize("what", ["symlink", "fifo"])
def test_lock_files_that_are_links_or_fifos(tmp_path: Path, lock: str, what: str) -> None:
    """A lock is opened without following a link or blocking: a link or a FIFO there is one
    line and exit 2 (delete it: it is recreated), and nothing is created where it points."""
    w = world(tmp_path)
    path = w.vault / lock
    if path.exists():
        path.unlink()
    if what == "symlink":
        os.symlink(w.outside / "made-by-lock", path)
    else:
        os.mkfifo(path)
    w.seal()
    command = ("dream", "run") if lock.endswith("/lock") else ("index", "rebuild")
    result = w.cli(*command)
    w.held(result.stdout + result.stderr, needle=lock)
    assert result.returncode == 2, result.stderr
    assert not (w.outside / "made-by-lock").exists()


# -- case 2: dry-run copies-------------------------------------------------------------------------
def test_dry_run_with_a_symlinked_index_copies_nothing_from_outside(tmp_path: Path) -> None:
    """It copied what the link pointed at (287 MB of an outside folder into TMPDIR)."""
    w = world(tmp_path)
    target = old_index_outside(w)
    (target / "big.bin").write_bytes(b"\0" * (4 << 20))
    os.mkfifo(target / "pipe")
    w.seal()
    report, out = w.run(dry_run=True)
    w.held(out)
    assert report.dry_run and report.diffs


def test_dry_run_with_a_fifo_inside_a_real_index(tmp_path: Path) -> None:
    w = world(tmp_path)
    indexed(w)
    os.mkfifo(w.vault / INDEX / "pipe")
    w.seal()
    result = w.cli("dream", "run", "--dry-run", "--today", "2026-06-25")
    assert result.returncode in (0, 1) and "Traceback" not in result.stderr, result.stderr
    w.held(result.stdout + result.stderr)
    assert "+++ b/digest/" in result.stdout


def test_dry_run_with_state_json_symlinked_outside(tmp_path: Path) -> None:
    w = world(tmp_path)
    (w.vault / ".remelink/state.json").symlink_to(w.outside / "victim.md")
    w.seal()
    result = w.cli("dream", "run", "--dry-run")
    w.held(result.stdout + result.stderr, needle=".remelink/state.json")
    assert result.returncode == 2


# -- case 3: init-----------------------------------------------------------------------------------
def test_init_with_gitignore_symlinked_to_an_outside_secret(tmp_path: Path) -> None:
    """It replaced the link by a regular file whose first line was the secret."""
    w = world(tmp_path)
    gitignore = w.vault / ".remelink/.gitignore"
    if gitignore.exists():
        gitignore.unlink()
    os.symlink(w.outside / "secret.md", gitignore)
    w.seal()
    result = w.cli_plain("init", str(w.vault))
    w.held(result.stdout + result.stderr, needle=".remelink/.gitignore")
    assert result.returncode == 2 and gitignore.is_symlink()
    assert MARKER not in result.stdout + result.stderr


def test_init_with_remelink_symlinked_outside_creates_nothing_there(tmp_path: Path) -> None:
    w = world(tmp_path)
    (w.outside / "state").mkdir()
    config = w.vault / ".remelink/config.yaml"
    config.unlink()
    os.rmdir(w.vault / ".remelink")
    os.symlink(w.outside / "state", w.vault / ".remelink")
    w.seal()
    result = w.cli_plain("init", str(w.vault))
    w.held(result.stdout + result.stderr, needle=".remelink is a symlink")
    assert result.returncode == 2 and not os.listdir(w.outside / "state")


@pytest.mark.parametrize("folder", ["daily", "digest", "digest/wiki"])
def test_init_never_creates_through_a_symlinked_folder(tmp_path: Path, folder: str) -> None:
    w = world(tmp_path / "w")
    root = tmp_path / "fresh"
    root.mkdir()
    (root / folder).parent.mkdir(parents=True, exist_ok=True)
    os.symlink(w.outside / "day", root / folder)
    w.seal()
    result = w.cli_plain("init", str(root))
    w.held(result.stdout + result.stderr, needle=f"{folder} is a symlink")
    assert result.returncode == 2 and not (root / ".remelink").exists()


# -- case 4: crash logs-----------------------------------------------------------------------------
def test_crash_log_never_goes_through_a_symlinked_remelink(tmp_path: Path) -> None:
    from remelink.command import crash_log

    w = world(tmp_path)
    (w.outside / "state").mkdir()
    (w.vault / ".remelink/config.yaml").unlink()
    os.rmdir(w.vault / ".remelink")
    os.symlink(w.outside / "state", w.vault / ".remelink")
    w.seal()
    try:
        raise RuntimeError("boom")
    except RuntimeError as exc:
        log = crash_log(exc, w.vault)
    assert log is not None and w.outside not in log.parents and log.exists()
    log.unlink()
    w.held()


def test_crash_log_never_overwrites_a_planted_name(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Crash logs are new files (O_EXCL) with a random part: a link planted under every name
    the clock could give is never written through."""
    from remelink import command

    w = world(tmp_path)
    monkeypatch.setattr(time, "strftime", lambda fmt, *a: "20260101-000000")
    for i in range(64):
        os.symlink(w.outside / "victim.md",
                   w.vault / f".remelink/crash-20260101-000000-{os.getpid()}-{i:04x}.log")
    w.seal()
    try:
        raise RuntimeError("boom")
    except RuntimeError as exc:
        log = command.crash_log(exc, w.vault)
    assert log is not None and log.is_file() and not log.is_symlink()
    w.held()


# -- case 5: config paths---------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["/", "//", "/tmp", "..", "../outside", ".", "~", "~/notes",
                                   "a/../..", "\\\\"])
@pytest.mark.parametrize("key", ["digest", "daily", "resource"])
def test_config_folders_outside_the_vault_are_refused(tmp_path: Path, key: str,
                                                       value: str) -> None:
    w = world(tmp_path)
    (w.vault / ".remelink/config.yaml").write_text(f"folders: {{{key}: {value!r}}}\n",
                                                   encoding="utf-8")
    w.seal()
    result = w.cli_here("dream", "run")
    w.held(result.stdout + result.stderr, needle=f"folders.{key}")
    assert result.exit_code == 2 and "inside the vault" in result.stderr


@pytest.mark.parametrize("value", ["/", "/tmp", "tmp/.."])
def test_config_folder_slash_in_a_vault_named_tmp(tmp_path: Path, value: str) -> None:
    """The issue's own example: `digest: /` had its slash stripped, and in a vault named `tmp`
    the run walked the machine's /tmp. The value is refused before any walk: the run reads
    nothing and writes nothing."""
    w = world(tmp_path)
    named_tmp = w.root / "tmp"
    os.rename(w.vault, named_tmp)
    w.vault = named_tmp
    (w.vault / ".remelink/config.yaml").write_text(f"folders: {{digest: {value!r}}}\n",
                                                   encoding="utf-8")
    w.seal()
    before = snapshot(w.vault)
    result = w.cli_here("dream", "run")
    w.held(result.stdout + result.stderr, needle="folders.digest")
    assert result.exit_code == 2 and "inside the vault" in result.stderr
    assert snapshot(w.vault) == before


# -- case 6: scripts and units files----------------------------------------------------------------
@pytest.mark.parametrize("script", ["/dev/zero", "/etc/passwd", "../outside/secret.md", "",
                                    "/", "."])
def test_config_model_scripted_outside_the_vault(tmp_path: Path, script: str) -> None:
    """`model: scripted:/dev/zero` read until memory ran out (2.6 GB in 3 s)."""
    w = world(tmp_path)
    (w.vault / ".remelink/config.yaml").write_text(f"model: 'scripted:{script}'\n",
                                                   encoding="utf-8")
    w.seal()
    started = time.monotonic()
    result = w.cli("dream", "run")
    assert time.monotonic() - started < 30
    w.held(result.stdout + result.stderr, needle="model")
    assert result.returncode == 2 and "inside the vault" in result.stderr


@pytest.mark.parametrize("kind", ["link to /dev/zero", "fifo", "link out"])
def test_config_model_scripted_inside_the_vault_but_not_a_file_there(tmp_path: Path,
                                                                      kind: str) -> None:
    w = world(tmp_path)
    script = w.vault / "script.yaml"
    if kind == "fifo":
        os.mkfifo(script)
    else:
        os.symlink("/dev/zero" if kind == "link to /dev/zero" else w.outside / "secret.md",
                   script)
    (w.vault / ".remelink/config.yaml").write_text("model: scripted:script.yaml\n",
                                                   encoding="utf-8")
    w.seal()
    result = w.cli("dream", "run")
    w.held(result.stdout + result.stderr, needle="script.yaml")
    assert result.returncode == 2


@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "directory", "huge"])
@pytest.mark.parametrize("what", ["integrate", "script"])
def test_units_and_script_files_that_are_not_files(tmp_path: Path, kind: str,
                                                   what: str) -> None:
    """`remelink integrate /dev/zero` reached 6 GB; a FIFO as the units file blocked."""
    w = world(tmp_path)
    path = {"dev-zero": Path("/dev/zero"), "fifo": w.root / "units.fifo",
            "directory": w.root, "huge": w.root / "huge.yaml"}[kind]
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "huge":
        with open(path, "wb") as fh:
            fh.truncate(40 << 20)  # sparse: 40 MiB of nothing, over the 32 MiB limit
    w.seal()
    started = time.monotonic()
    if what == "integrate":
        result = w.cli("integrate", str(path))
    else:
        units = w.root / "units.yaml"
        units.write_text("[]\n", encoding="utf-8")
        result = w.cli("integrate", str(units), "--model", f"scripted:{path}")
    assert time.monotonic() - started < 30
    w.held(result.stdout + result.stderr, needle=str(path))
    assert result.returncode == 2, result.stderr


def test_units_from_stdin_are_read_up_to_the_limit(tmp_path: Path) -> None:
    w = world(tmp_path)
    w.seal()
    exe = Path(sys.executable).with_name("remelink")
    with open("/dev/zero", "rb") as zero:
        result = subprocess.run([str(exe), "integrate", "-", "--vault", str(w.vault)],
                                stdin=zero, capture_output=True, text=True, timeout=60,
                                check=False)
    w.held(result.stdout + result.stderr, needle="stdin")
    assert result.returncode == 2 and "MiB" in result.stderr


def test_a_run_leaves_the_outside_tree_alone_with_every_trap_at_once(tmp_path: Path) -> None:
    """Links everywhere under .remelink/ that a careless writer would follow, at once."""
    w = world(tmp_path)
    indexed(w)
    victim = w.outside / "victim.md"
    os.symlink(victim, w.vault / INDEX / "remelink-format.json.tmp")
    os.symlink(victim, w.vault / ".remelink" / ".remelink-tmp-0000.tmp")
    os.symlink(w.outside / "day", w.vault / ".remelink" / "index.new-1-deadbeef")
    os.symlink(w.outside / "day", w.vault / ".remelink" / "index.old-1-deadbeef")
    before = snapshot(w.outside)
    w.seal()
    _report, out = w.run()
    w.held(out, needle=f"{INDEX} was tampered with")
    assert snapshot(w.outside) == before
    assert SECRET not in out
