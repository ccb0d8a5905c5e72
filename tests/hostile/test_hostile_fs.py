"""File-system failures (issue case 8): `.remelink/` not writable, the disk full, a read-only
file system. Each is one line naming the file and what to do, no crash log; and a run resumed
after a full disk loses nothing: the vault ends exactly as after a run that never failed, the
tags of the node being committed included.

Tests run as root here, where chmod denies nothing: the failures are injected where the
operating system would raise them (os.open, and the two low-level writers of vault.own)."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from dream_support import cli, run, settings_of
from harness import TIMEOUT, World, regular_bytes, world

from remelink.dream.state import State
from remelink.errors import FileSystemError
from remelink.vault import own

pytestmark = pytest.mark.timeout(TIMEOUT * 3)


def refuse_open_under(monkeypatch: pytest.MonkeyPatch, folder: Path, code: int) -> None:
    """os.open fails with `code` for anything created or written under `folder` (also when
    opened relative to a folder's descriptor, as vault.own does)."""
    real = os.open
    prefix = str(folder)

    def guarded(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        target = os.fspath(path)
        if kwargs.get("dir_fd") is not None and isinstance(target, str):
            target = os.path.join(os.readlink(f"/proc/self/fd/{kwargs['dir_fd']}"), target)
        writing = flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT)
        if writing and isinstance(target, str) and target.startswith(prefix):
            raise OSError(code, os.strerror(code), target)
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", guarded)


@pytest.mark.parametrize(("code", "words", "hint"), [
    (errno.EACCES, "permission denied", "make it writable"),
    (errno.EROFS, "the file system is read-only", "remount the vault read-write"),
    (errno.ENOSPC, "no space left on the device", "free some disk space"),
])
def test_remelink_folder_not_writable_is_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, words: str,
        hint: str) -> None:
    w = world(tmp_path)
    w.seal()
    refuse_open_under(monkeypatch, w.vault / ".remelink", code)
    result = cli("dream", "run", "--vault", str(w.vault))
    monkeypatch.undo()
    lines = [line for line in result.output.splitlines() if line.startswith("remelink: ")]
    assert lines == [f"remelink: error: cannot write .remelink/lock: {words} "
                     f"({lines[0].split('(', 1)[1]}"] if lines else False, result.output
    assert hint in lines[0] and result.exit_code == 1
    assert "unexpected error" not in result.output and "Traceback" not in result.output
    assert not list((w.vault / ".remelink").glob("crash-*.log"))
    w.held(result.output)


def test_state_json_not_writable_is_one_line(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    w = world(tmp_path)
    w.seal()
    real = own._write

    def refuse(root: Path, rel: str, *args: Any) -> None:
        if rel.endswith("state.json"):
            raise PermissionError(errno.EACCES, "Permission denied", rel)
        real(root, rel, *args)

    monkeypatch.setattr(own, "_write", refuse)
    result = cli("dream", "run", "--vault", str(w.vault))
    assert "remelink: error: cannot write .remelink/state.json: permission denied" in \
        result.output and result.exit_code == 1, result.output
    assert not list((w.vault / ".remelink").glob("crash-*.log"))
    w.held(result.output)


def test_an_oserror_from_anywhere_reaches_the_cli_as_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The node index writes through its own library: its ENOSPC is still one line."""
    import remelink.dream.run as run_module

    w = world(tmp_path)

    def full(*args: Any, **kwargs: Any) -> Any:
        raise OSError(errno.ENOSPC, "No space left on device",
                      str(w.vault / ".remelink" / "index" / "seg.tmp"))

    monkeypatch.setattr(run_module.LockedIndex, "refresh", full)
    result = cli("dream", "run", "--vault", str(w.vault))
    assert "remelink: error: cannot write .remelink/index/seg.tmp: no space left on the " \
        "device" in result.output, result.output
    assert result.exit_code == 1 and "unexpected" not in result.output
    assert not list((w.vault / ".remelink").glob("crash-*.log"))
    (last,) = State.load(w.vault).runs
    assert last["finished"] and "No space left" in last["failed"]  # not shown as running


class DiskFull:
    """Counts the writes of vault.own; from write number `at` on, every write fails with
    ENOSPC, as on a disk that filled up (None: count only)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, at: int | None) -> None:
        self.at = at
        self.count = 0
        for name in ("_write", "_append", "_replace_if"):
            monkeypatch.setattr(own, name, self.wrap(getattr(own, name)))

    def wrap(self, real: Callable[..., Any]) -> Callable[..., Any]:
        def write(root: Path, rel: str, *args: Any) -> Any:
            self.count += 1
            if self.at is not None and self.count > self.at:
                raise OSError(errno.ENOSPC, "No space left on device", rel)
            return real(root, rel, *args)
        return write


def final_tree(w: World) -> dict[str, bytes]:
    return {**{f"digest/{k}": v for k, v in regular_bytes(w.vault / "digest").items()},
            **{f"daily/{k}": v for k, v in regular_bytes(w.vault / "daily").items()}}


def test_a_resumed_run_after_a_full_disk_loses_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """For write points across the whole run (state saves, journal appends, audit lines, node
    commits, tag writes): the disk fills up there, the run stops with one line, the disk is
    freed, the next run resumes, and the vault is byte for byte what a run that never failed
    leaves: every node, every tag."""
    clean = world(tmp_path / "clean")
    with monkeypatch.context() as m:
        counter = DiskFull(m, None)
        run(clean.vault)
    total = counter.count
    want = final_tree(clean)
    assert total > 20 and any(b"memory_tags" in v for k, v in want.items()
                              if "alice" in k)
    points = sorted({1, 2, 3, total // 4, total // 2, 3 * total // 4, total - 3, total - 2,
                     total - 1})
    for at in points:
        w = world(tmp_path / f"full-{at}")
        w.seal()
        with monkeypatch.context() as m:
            DiskFull(m, at)
            try:
                report = run(w.vault)
            except FileSystemError as exc:
                assert "no space left on the device" in str(exc) and "\n" not in str(exc)
            else:  # the last writes failed inside a unit: reported, not fatal
                assert not report.ok
        run(w.vault)  # the disk was freed: resume
        again = run(w.vault)
        assert again.units == [] or all(u.status == "done" for u in again.units)
        assert final_tree(w) == want, f"the vault after a full disk at write {at} differs"
        statuses = {r.status for r in State.load(w.vault).inputs.values()}
        assert statuses == {"processed"}, (at, statuses)
        assert State.load(w.vault).pending_tags == []
        w.held()


def test_a_tag_write_on_a_full_disk_keeps_the_node_pending(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The failure the attack found: a node committed, then its tag write fails. The pass
    stays pending; the next run writes the same tags."""
    clean = world(tmp_path / "clean")
    run(clean.vault)
    w = world(tmp_path / "full")
    real = own._replace_if
    seen: list[str] = []

    def tag_write_fails(root: Path, rel: str, data: Any, *args: Any) -> bool:
        text = data if isinstance(data, str) else data.decode("utf-8", "replace")
        if rel.startswith("digest") and "memory_tags:\n- Alice" in text:
            seen.append(rel)
            raise OSError(errno.ENOSPC, "No space left on device", rel)
        return real(root, rel, data, *args)

    monkeypatch.setattr(own, "_replace_if", tag_write_fails)
    with pytest.raises(FileSystemError):
        run(w.vault, settings=settings_of(w.vault))
    monkeypatch.undo()
    assert seen and State.load(w.vault).pending_tags
    run(w.vault)
    assert final_tree(w) == final_tree(clean)
