"""The node index is derived data (SPEC §5): a missing, stale-format or corrupt index is rebuilt
with a notice; a lost manifest is recovered; a second writer waits a bounded time, then fails
with VaultBusy; a process killed mid-commit leaves an index that still opens."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import VaultFactory

from remelink.config import Settings
from remelink.errors import EXIT_BUSY, VaultBusy
from remelink.index import INDEX_DIR, NodeIndex
from remelink.index.core import FORMAT_FILE, LOCK_FILE
from remelink.index.manifest import MANIFEST_FILE

SETTINGS = Settings()
ROOT = Path(__file__).resolve().parent.parent


def node(name: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: About {name}.\n---\n{body}\n"


@pytest.fixture
def vault(make_vault: VaultFactory) -> Path:
    files: dict[str, str | bytes] = {
        f"digest/wiki/n{i:03d}.md": node(f"Node {i}", f"word{i} shared text") for i in range(40)}
    files["digest/wiki/heron.md"] = node("Heron", "Herons stand still in shallow water.")
    root = make_vault(files)
    with NodeIndex(root, SETTINGS) as ix:
        assert ix.refresh().rebuilt
    return root


def index_dir(vault: Path) -> Path:
    return vault / INDEX_DIR


def search_heron(vault: Path) -> tuple[list[str], tuple[str, ...]]:
    with NodeIndex(vault, SETTINGS, wait=5) as ix:
        stats = ix.refresh()
        return [h.path for h in ix.search("heron", refresh=False)], stats.notices


def test_missing_index_is_built_with_a_notice(vault: Path) -> None:
    import shutil

    shutil.rmtree(index_dir(vault))
    hits, notices = search_heron(vault)
    assert hits == ["digest/wiki/heron.md"]
    assert len(notices) == 1 and "node index missing" in notices[0]
    assert "rebuilt it from 41 digest node(s)" in notices[0]


def test_truncated_toc_is_rebuilt(vault: Path) -> None:
    tocs = sorted(index_dir(vault).glob("_MAIN_*.toc"))
    assert tocs
    for toc in tocs:
        toc.write_bytes(toc.read_bytes()[:7])
    hits, notices = search_heron(vault)
    assert hits == ["digest/wiki/heron.md"]
    assert any("unreadable" in n for n in notices)


def test_garbage_files_in_the_index_dir(vault: Path) -> None:
    d = index_dir(vault)
    (d / "junk.bin").write_bytes(os.urandom(4096))
    (d / "MAIN_zzzzzzzzzzzzzzzz.trm").write_bytes(b"not a segment")
    (d / "_MAIN_999.toc.tmp").write_bytes(b"\x00" * 10)
    hits, notices = search_heron(vault)
    assert hits == ["digest/wiki/heron.md"]
    assert notices == ()  # harmless: not part of the live generation
    # Garbage written over a live segment file is caught and rebuilt.
    for seg in d.glob("MAIN_*.trm"):
        if "zzzz" not in seg.name:
            seg.write_bytes(os.urandom(seg.stat().st_size))
    hits, notices = search_heron(vault)
    assert hits == ["digest/wiki/heron.md"]
    assert any("unreadable" in n for n in notices)


def test_garbage_over_postings_is_caught_at_search_time(vault: Path) -> None:
    for pst in index_dir(vault).glob("MAIN_*.pst"):
        pst.write_bytes(b"\xff" * pst.stat().st_size)
    with NodeIndex(vault, SETTINGS) as ix:
        assert [h.path for h in ix.search("heron")] == ["digest/wiki/heron.md"]
        assert any("unreadable during search" in n for n in ix.notices)


def test_stale_format_is_rebuilt(vault: Path) -> None:
    fmt = index_dir(vault) / FORMAT_FILE
    data = json.loads(fmt.read_text())
    data["format"] = "remelink-node-index/0"
    fmt.write_text(json.dumps(data))
    hits, notices = search_heron(vault)
    assert hits == ["digest/wiki/heron.md"]
    assert any("format changed" in n for n in notices)
    assert json.loads(fmt.read_text())["format"] != "remelink-node-index/0"


def test_lost_or_stale_manifest_is_recovered_without_rebuild(vault: Path) -> None:
    manifest = index_dir(vault) / MANIFEST_FILE
    manifest.unlink()
    (vault / "digest/wiki/heron.md").write_text(node("Heron", "Herons eat frogs."),
                                                encoding="utf-8")
    with NodeIndex(vault, SETTINGS) as ix:
        stats = ix.refresh()
        assert not stats.rebuilt and stats.notices == ()
        assert (stats.added, stats.changed, stats.removed) == (0, 1, 0)
        assert [h.path for h in ix.search("frogs", refresh=False)] == ["digest/wiki/heron.md"]
    assert manifest.is_file()
    manifest.write_text("{not json")
    with NodeIndex(vault, SETTINGS) as ix:
        stats = ix.refresh()
        assert not stats.rebuilt and stats.touched == 0


def test_a_rebuild_killed_half_way_leaves_the_old_index(vault: Path) -> None:
    leftover = vault / ".remelink" / "index.new-99999-deadbeef"
    leftover.mkdir()
    (leftover / "_MAIN_1.toc").write_bytes(b"partial")
    hits, notices = search_heron(vault)
    assert hits == ["digest/wiki/heron.md"] and notices == ()
    with NodeIndex(vault, SETTINGS) as ix:
        ix.rebuild()
    assert not leftover.exists()


HOLD_OUTER = """
import sys, time
from pathlib import Path
from remelink.vault.fsio import file_lock
with file_lock(Path(sys.argv[1]), what="index"):
    print("locked", flush=True)
    time.sleep(float(sys.argv[2]))
"""

HOLD_WHOOSH = """
import sys, time
from whoosh import index
w = index.open_dir(sys.argv[1]).writer()
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
w.cancel()
"""


def hold(script: str, target: Path, seconds: float) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", script, str(target), str(seconds)],
                            stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "locked"
    return proc


@pytest.mark.parametrize("which", ["remelink lock", "whoosh writer lock"])
def test_second_writer_waits_then_fails_busy(vault: Path, which: str) -> None:
    (vault / "digest/wiki/heron.md").write_text(node("Heron", "Herons fish."), encoding="utf-8")
    proc = (hold(HOLD_OUTER, vault / LOCK_FILE, 30) if which == "remelink lock"
            else hold(HOLD_WHOOSH, index_dir(vault), 30))
    try:
        with NodeIndex(vault, SETTINGS, wait=0.6) as ix:
            started = time.monotonic()
            with pytest.raises(VaultBusy, match="index busy") as err:
                ix.update(["digest/wiki/heron.md"])
            waited = time.monotonic() - started
            assert 0.5 <= waited < 5
            assert err.value.exit_code == EXIT_BUSY
            # Readers never lock: a search without refresh still answers.
            assert [h.path for h in ix.search("heron", refresh=False)] == ["digest/wiki/heron.md"]
    finally:
        proc.kill()
        proc.wait()


def test_second_writer_gets_the_lock_when_the_first_finishes(vault: Path) -> None:
    (vault / "digest/wiki/heron.md").write_text(node("Heron", "Herons fish."), encoding="utf-8")
    proc = hold(HOLD_OUTER, vault / LOCK_FILE, 0.8)
    try:
        with NodeIndex(vault, SETTINGS, wait=10) as ix:
            ix.update(["digest/wiki/heron.md"])
            assert [h.path for h in ix.search("fish", refresh=False)] == ["digest/wiki/heron.md"]
    finally:
        proc.wait()


def test_another_process_update_is_seen(vault: Path) -> None:
    with NodeIndex(vault, SETTINGS) as reader:
        assert reader.search("otters") == []
        (vault / "digest/wiki/heron.md").write_text(node("Heron", "Herons chase otters."),
                                                    encoding="utf-8")
        code = textwrap.dedent("""
            import sys
            from pathlib import Path
            from remelink.config import Settings
            from remelink.index import NodeIndex
            with NodeIndex(Path(sys.argv[1]), Settings()) as ix:
                ix.update(["digest/wiki/heron.md"])
            """)
        subprocess.run([sys.executable, "-c", code, str(vault)], check=True, cwd=ROOT)
        stats = reader.refresh()
        assert stats.touched == 0  # the other process already indexed it
        assert [h.path for h in reader.search("otters", refresh=False)] == \
            ["digest/wiki/heron.md"]


UPDATER = """
import sys, random
from pathlib import Path
from remelink.config import Settings
from remelink.index import NodeIndex
root = Path(sys.argv[1])
rels = sorted(p.relative_to(root).as_posix() for p in (root / "digest").rglob("*.md"))
rng = random.Random(int(sys.argv[2]))
with NodeIndex(root, Settings()) as ix:
    print("ready", flush=True)
    n = 0
    while True:
        n += 1
        batch = rng.sample(rels, 60)
        for rel in batch:
            (root / rel).write_text(f"---\\nname: {rel}\\ndescription: round {n}\\n---\\n"
                                    + " ".join(f"w{rng.randrange(5000)}" for _ in range(300)),
                                    encoding="utf-8")
        print("u", end="", flush=True)
        ix.update(batch)
        print("d", end="", flush=True)
"""


@pytest.mark.slow
def test_kill_during_commits_leaves_an_index_that_opens(make_vault: VaultFactory) -> None:
    files: dict[str, str | bytes] = {
        f"digest/wiki/k{i:03d}.md": node(f"K {i}", " ".join(f"w{j}" for j in range(i, i + 200)))
        for i in range(150)}
    files["digest/wiki/heron.md"] = node("Heron", "Herons stand still.")
    root = make_vault(files)
    with NodeIndex(root, SETTINGS) as ix:
        ix.refresh()
    rng = random.Random(7)
    inside = 0
    for trial in range(6):
        proc = subprocess.Popen([sys.executable, "-c", UPDATER, str(root), str(trial)],
                                stdout=subprocess.PIPE, text=True, cwd=ROOT)
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.2, 1.5))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        progress = proc.stdout.read()
        inside += progress.endswith("u")  # killed inside update(): reading, writing, committing
        with NodeIndex(root, SETTINGS) as ix:
            assert ix._store.open() is None, f"trial {trial}: the index no longer opens"
            stats = ix.refresh()
            assert not stats.rebuilt, stats.notices
            assert [h.path for h in ix.search("heron", refresh=False)] == \
                ["digest/wiki/heron.md"]
            assert ix.doc_count() == len(files)
    assert inside >= 3, f"only {inside} of 6 kills landed inside an update"


def test_index_replaced_while_refreshing_does_not_deadlock(vault: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Another process swaps in an unreadable index between our diff and our lock: the
    rebuild runs under the lock we already hold instead of waiting for ourselves."""
    from remelink.index.store import IndexStore

    original = IndexStore.diff
    calls: list[int] = []

    def diff_then_replace(self: IndexStore) -> object:
        result = original(self)
        if not calls:
            calls.append(1)
            fmt = index_dir(vault) / FORMAT_FILE
            fmt.write_text(json.dumps({**json.loads(fmt.read_text()), "index_id": "other"}))
            for toc in index_dir(vault).glob("_MAIN_*.toc"):
                toc.write_bytes(b"\x00")
        return result

    with NodeIndex(vault, SETTINGS, wait=2) as ix:
        ix.refresh()
        (vault / "digest/wiki/heron.md").write_text(node("Heron", "Herons eat frogs."),
                                                    encoding="utf-8")
        monkeypatch.setattr(IndexStore, "diff", diff_then_replace)
        ix.refresh()
        assert [h.path for h in ix.search("frogs", refresh=False)] == ["digest/wiki/heron.md"]
