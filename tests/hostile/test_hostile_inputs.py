"""Hostile inputs in the raw and digest folders: symlinks in and out of the vault (files, raw,
day and digest folders), hard links, FIFOs, sockets, devices, /dev/zero, 60 MB notes, binary
files. Each case: nothing outside read or written, raw notes untouched, no hang, one line."""

from __future__ import annotations

import contextlib
import os
import socket
import stat
from pathlib import Path

import pytest
from harness import MARKER, SECRET, TIMEOUT, World, world

from remelink.dream.state import State

pytestmark = pytest.mark.timeout(TIMEOUT)
DAY = "daily/2026-06-24"


def note(w: World, rel: str, text: str) -> Path:
    path = w.vault / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def link(w: World, rel: str, target: str | Path) -> None:
    path = w.vault / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, path)


def checkpointed(w: World) -> set[str]:
    return set(State.load(w.vault).inputs)


# -- symlinked files ------------------------------------------------------------------------------
def test_raw_note_symlinked_outside(tmp_path: Path) -> None:
    w = world(tmp_path)
    link(w, f"{DAY}/passwd.md", w.outside / "secret.md")
    w.seal()
    _report, out = w.run()
    w.held(out, needle="passwd.md")
    assert "outside the vault; not read" in out
    assert f"{DAY}/passwd.md" not in checkpointed(w)


def test_raw_note_symlinked_to_etc_passwd(tmp_path: Path) -> None:
    w = world(tmp_path)
    link(w, f"{DAY}/passwd.md", "/etc/passwd")
    w.seal()
    _, out = w.run()
    w.held(out, needle="passwd.md")
    assert not any("root:" in r for r in w.requests)


def test_raw_note_symlinked_inside_the_vault_is_an_input(tmp_path: Path) -> None:
    w = world(tmp_path)
    link(w, f"{DAY}/alias.md", "../2026-06-01/payments-retry.md")
    w.seal()
    report, out = w.run()
    w.held(out)
    assert report.inputs[f"{DAY}/alias.md"]["status"] != "invalid"


def test_raw_note_symlink_broken(tmp_path: Path) -> None:
    w = world(tmp_path)
    link(w, f"{DAY}/gone.md", "no-such-note.md")
    w.seal()
    _, out = w.run()
    w.held(out, needle="gone.md")
    assert "broken symlink" in out


def test_digest_node_symlinked_outside(tmp_path: Path) -> None:
    """Not indexed, not readable by the tools, never written through; the run says so."""
    w = world(tmp_path)
    link(w, "digest/wiki/deploy-password.md", w.outside / "digest" / "wiki" / "leak.md")
    note(w, f"{DAY}/deploy.md", "We decided that the deploy password rotates every month "
         "because the audit asked for it.\n")
    w.seal()
    _, out = w.run()
    w.held(out, needle="deploy-password.md")
    lint = w.lint()
    w.held(lint.stdout + lint.stderr, needle="deploy-password.md")


def test_digest_node_symlinked_to_dev_zero_lint_links(tmp_path: Path) -> None:
    """The pre-commit entry on /dev/zero behind a link: one line, no MemoryError, no hang."""
    w = world(tmp_path)
    link(w, "digest/wiki/zero.md", "/dev/zero")
    w.seal()
    lint = w.lint()
    w.held(lint.stdout + lint.stderr, needle="zero.md")
    assert lint.returncode == 0  # a warning: the link checks of the other notes ran
    _, out = w.run()
    w.held(out, needle="zero.md")


def test_raw_note_symlinked_to_dev_zero(tmp_path: Path) -> None:
    w = world(tmp_path)
    link(w, f"{DAY}/zero.md", "/dev/zero")
    w.seal()
    _, out = w.run()
    w.held(out, needle="zero.md")


# -- symlinked folders ----------------------------------------------------------------------------
def test_daily_folder_symlinked_outside(tmp_path: Path) -> None:
    w = world(tmp_path)
    os.rename(w.vault / "daily", w.root / "real-daily")
    link(w, "daily", w.outside / "daily")
    w.seal()
    _report, out = w.run()
    w.held(out, needle="daily/:")
    assert not any(p.startswith("daily/2026") for p in checkpointed(w))


def test_daily_folder_symlinked_inside_the_vault(tmp_path: Path) -> None:
    """Not followed either (one rule: no symlinked folder is entered), and said so."""
    w = world(tmp_path)
    os.rename(w.vault / "daily", w.vault / "archive")
    link(w, "daily", "archive")
    w.seal()
    _, out = w.run()
    w.held(out, needle="daily/:")
    assert "not followed" in out


def test_day_folder_symlinked_outside(tmp_path: Path) -> None:
    w = world(tmp_path)
    link(w, DAY, w.outside / "day")
    w.seal()
    _, out = w.run()
    w.held(out, needle=DAY)


def test_day_folder_symlinked_inside_the_vault(tmp_path: Path) -> None:
    w = world(tmp_path)
    link(w, DAY, "2026-06-01")
    w.seal()
    _, out = w.run()
    w.held(out, needle=DAY)
    assert "not followed" in out


def test_resource_folder_symlinked_outside(tmp_path: Path) -> None:
    w = world(tmp_path)
    link(w, "resource/2026-06-24", w.outside / "day")
    w.seal()
    _, out = w.run()
    w.held(out, needle="resource/2026-06-24")


@pytest.mark.parametrize("where", ["digest", "digest/wiki"])
def test_digest_folder_symlinked_outside_stops_the_run(tmp_path: Path, where: str) -> None:
    """Every node write would go through the link: one line before anything runs, exit 1."""
    w = world(tmp_path)
    target = w.outside / "digest" if where == "digest" else w.outside / "digest" / "wiki"
    os.rename(w.vault / where, w.root / "moved")
    link(w, where, target)
    w.seal()
    result = w.cli_here("dream", "run", "--date", "2026-06-25", "--scan-days", "60")
    w.held(result.stdout + result.stderr, needle=f"{where} is a symlink")
    assert result.exit_code == 1


def test_digest_folder_symlinked_inside_stops_the_run(tmp_path: Path) -> None:
    w = world(tmp_path)
    os.rename(w.vault / "digest", w.vault / "nodes")
    link(w, "digest", "nodes")
    w.seal()
    result = w.cli_here("dream", "run")
    w.held(result.stdout + result.stderr, needle="digest is a symlink")
    assert result.exit_code == 1 and not (w.vault / "nodes" / "wiki" / "x").exists()


def test_day_folder_symlinked_outside_topics_write_nothing_there(tmp_path: Path) -> None:
    """Issue case 3: units from 2026-06-20 are in the checkpoint, then the day folder becomes
    a link out of the vault: interests.yaml is not written through it."""
    w = world(tmp_path, full=True)
    steps = ["dream_extract_step", "dream_integrate_step", "dream_finish_step",
             "auto_tag_step", "dream_topics_step"]
    settings = w.settings(steps=steps)
    w.run(settings, date="2026-06-20")
    day = w.vault / "daily" / "2026-06-20"
    (day / "interests.yaml").unlink()
    os.rename(day, w.outside / "day20")
    link(w, "daily/2026-06-20", w.outside / "day20")
    w.seal()
    _report, out = w.run(settings, date="2026-06-20")
    w.held(out, needle="interests.yaml")
    assert not (w.outside / "day20" / "interests.yaml").exists()


# -- hard links -------------------------------------------------------------------------------
def test_digest_node_hard_linked_outside_is_replaced_not_written_through(tmp_path: Path) -> None:
    """A hard link is a name in the vault for a file that also has a name outside. Its content
    is vault content (nothing tells the two names apart), but a write replaces the vault's name
    (atomic rename), so the outside name keeps its bytes."""
    w = world(tmp_path, full=True)
    node = w.vault / "digest" / "procedure" / "rotate-api-keys.md"
    twin = w.outside / "twin.md"
    os.link(node, twin)
    w.seal()
    report, out = w.run()
    assert "digest/procedure/rotate-api-keys.md" in report.updated
    w.held(out)
    assert twin.read_bytes() != node.read_bytes() and os.stat(node).st_nlink == 1


def test_raw_note_hard_linked_outside_stays_byte_identical(tmp_path: Path) -> None:
    w = world(tmp_path)
    os.link(w.vault / "daily" / "2026-06-01" / "payments-retry.md", w.outside / "twin.md")
    w.seal()
    _, out = w.run()
    w.held(out)


def test_journal_hard_linked_outside_is_dropped_not_appended_to(tmp_path: Path) -> None:
    """The journal is replayed and removed before the run appends to it: the outside name of a
    hard-linked journal keeps its bytes."""
    w = world(tmp_path)
    (w.outside / "journal-twin").write_bytes(b"")
    os.link(w.outside / "journal-twin", w.vault / ".remelink" / "state.journal")
    w.seal()
    result = w.cli_here("dream", "run")
    w.held(result.stdout + result.stderr)
    assert result.exit_code == 0, result.stderr


def test_journal_append_refuses_a_hard_linked_file(tmp_path: Path) -> None:
    from remelink.errors import SandboxError
    from remelink.vault.fsio import append

    w = world(tmp_path)
    (w.outside / "twin").write_bytes(b"keep\n")
    os.link(w.outside / "twin", w.vault / ".remelink" / "state.journal")
    w.seal()
    with pytest.raises(SandboxError, match="hard links"):
        append(w.vault / ".remelink" / "state.journal", b"x\n", root=w.vault)
    w.held()


def test_lock_file_hard_linked_outside_is_refused(tmp_path: Path) -> None:
    w = world(tmp_path)
    (w.outside / "lock-twin").write_bytes(b"keep me\n")
    os.link(w.outside / "lock-twin", w.vault / ".remelink" / "lock")
    w.seal()
    result = w.cli_here("dream", "run")
    w.held(result.stdout + result.stderr, needle=".remelink/lock")
    assert result.exit_code == 2


# -- special files --------------------------------------------------------------------------------
def test_fifo_in_daily_does_not_hang_dream_run_or_lint(tmp_path: Path) -> None:
    w = world(tmp_path)
    (w.vault / DAY).mkdir(parents=True)
    os.mkfifo(w.vault / DAY / "pipe.md")
    w.seal()
    result = w.cli("dream", "run")
    w.held(result.stdout + result.stderr, needle="pipe.md")
    assert result.returncode == 1 and "FIFO" in result.stdout
    again = w.cli("dream", "run")  # the lock was released: no exit 3
    assert again.returncode == 1, again.stderr
    lint = w.lint()
    w.held(lint.stdout + lint.stderr, needle="pipe.md")
    lint_all = w.cli("lint-links")
    w.held(lint_all.stdout + lint_all.stderr, needle="pipe.md")


def test_fifo_in_digest_is_never_opened(tmp_path: Path) -> None:
    w = world(tmp_path)
    os.mkfifo(w.vault / "digest" / "wiki" / "pipe.md")
    w.seal()
    result = w.cli("dream", "run")
    w.held(result.stdout + result.stderr, needle="pipe.md")
    search = w.cli("node-search", "idempotency")
    assert search.returncode == 0 and "idempotency-keys.md" in search.stdout


def test_socket_in_daily(tmp_path: Path) -> None:
    w = world(tmp_path)
    (w.vault / DAY).mkdir(parents=True)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.getcwd()
    os.chdir(w.vault / DAY)  # AF_UNIX paths are limited to 108 bytes: bind a relative one
    try:
        sock.bind("sock.md")
    finally:
        os.chdir(old)
    try:
        w.seal()
        _, out = w.run()
        w.held(out, needle="sock.md")
        assert "socket" in out
    finally:
        sock.close()


def test_character_device_inside_the_vault(tmp_path: Path) -> None:
    """A device node in daily/ (root can make one): never opened, one line."""
    w = world(tmp_path)
    (w.vault / DAY).mkdir(parents=True)
    try:
        os.mknod(w.vault / DAY / "zero.md", stat.S_IFCHR | 0o600, os.makedev(1, 5))
    except (PermissionError, OSError) as exc:
        pytest.skip(f"cannot make a device node here: {exc}")
    w.seal()
    _, out = w.run()
    w.held(out, needle="zero.md")
    assert "character device" in out
    lint = w.lint()
    w.held(lint.stdout + lint.stderr, needle="zero.md")


# -- size and content -----------------------------------------------------------------------------
def test_sixty_megabyte_raw_note_is_not_read(tmp_path: Path) -> None:
    w = world(tmp_path)
    with (w.vault / "daily" / "2026-06-01" / "huge.md").open("wb") as fh:
        fh.write(b"We decided to keep logs.\n" * (60 * 1024 * 1024 // 25))
        fh.write(SECRET.encode())  # read, it would be extracted
    w.seal()
    _, out = w.run()
    w.held(out, needle="huge.md")
    assert "MiB limit" in out


def test_sixty_megabyte_digest_node_is_not_indexed_or_linted_past_the_limit(
        tmp_path: Path) -> None:
    w = world(tmp_path)
    with (w.vault / "digest" / "wiki" / "huge.md").open("wb") as fh:
        fh.write(b"---\nname: Huge\ndescription: huge\n---\n")
        fh.write(b"padding line\n" * (60 * 1024 * 1024 // 13))
        fh.write(SECRET.encode())
    w.seal()
    _report, out = w.run()
    w.held(out, needle="huge.md", planted=["digest/wiki/huge.md"])
    lint = w.lint()
    w.held(lint.stdout + lint.stderr, needle="huge.md", planted=["digest/wiki/huge.md"])


def test_binary_raw_note(tmp_path: Path) -> None:
    w = world(tmp_path)
    (w.vault / "daily" / "2026-06-01" / "blob.md").write_bytes(
        b"\x00\x01\x02PNG" + SECRET.encode() + os.urandom(4096))
    w.seal()
    _, out = w.run()
    w.held(out, needle="blob.md")
    assert "binary" in out


def test_non_utf8_raw_note(tmp_path: Path) -> None:
    w = world(tmp_path)
    (w.vault / "daily" / "2026-06-01" / "latin1.md").write_bytes(
        "We decided café is free.\n".encode("latin-1") + SECRET.encode())
    w.seal()
    _, out = w.run()
    w.held(out, needle="latin1.md")
    assert "UTF-8" in out


def test_binary_digest_node(tmp_path: Path) -> None:
    w = world(tmp_path)
    (w.vault / "digest" / "wiki" / "blob.md").write_bytes(b"\x00\x00" + SECRET.encode())
    w.seal()
    _, out = w.run()
    w.held(out, needle="blob.md", planted=["digest/wiki/blob.md"])


def test_marker_outside_is_never_in_the_index(tmp_path: Path) -> None:
    """node-search over a vault with every kind of link out: no hit from outside."""
    w = world(tmp_path)
    link(w, "digest/wiki/leak.md", w.outside / "digest" / "wiki" / "leak.md")
    link(w, "digest/extra", w.outside / "digest")
    w.seal()
    search = w.cli("node-search", "deploy password")
    w.held(search.stdout + search.stderr)
    assert "leak.md" not in search.stdout and MARKER not in search.stdout


def test_dry_run_across_file_systems_copies_no_fifo_or_device(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A dry run copies the vault to a scratch folder; when hard links fail (another file
    system), a FIFO or /dev/zero-like device must not be read by the copy."""
    import errno

    w = world(tmp_path)
    (w.vault / DAY).mkdir(parents=True)
    os.mkfifo(w.vault / DAY / "pipe.md")
    with contextlib.suppress(OSError):  # not root: the FIFO still makes the case
        os.mknod(w.vault / DAY / "zero.md", stat.S_IFCHR | 0o600, os.makedev(1, 5))
    w.seal()

    real_link = os.link

    def cross_device(src: object, dst: object, **kwargs: object) -> None:
        if kwargs:  # a create-if-absent inside one folder (vault.own): not the copy
            return real_link(src, dst, **kwargs)  # type: ignore[arg-type]
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(os, "link", cross_device)
    report, out = w.run(dry_run=True)
    monkeypatch.undo()
    w.held(out, needle="pipe.md")
    assert report.dry_run
