"""The memory-reading features (issue 22: `remelink search`, `remelink mcp`) under attack
(issue 20): the passage index under `.remelink/index/passages/` tampered with (a link out,
FIFOs, links named like its temp files and locks), `remember` aimed through symlinked folders
and at names already taken, `read` of paths that climb out, links and FIFOs, crafted run
records for `recent`, and a crafted node whose Sources cite hidden files. Each case: nothing
outside written (in process: not even opened), raw notes untouched (`remember` adds one new
note and changes none), no hang, one line naming the entry, no text from outside or from a
hidden file in what the agent reads."""

from __future__ import annotations

import errno
import json
import os
import time
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from harness import MARKER, SECRET, TIMEOUT, World, opens_under, raw_snapshot, snapshot, world

from remelink.errors import RemelinkError, SandboxError, StateError
from remelink.mcp.tools import Memory
from remelink.vault import own

pytestmark = pytest.mark.timeout(TIMEOUT)
PASSAGES = ".remelink/index/passages"
QUERY = "idempotency keys"
HIT = "digest/wiki/idempotency-keys.md"
DAY = date(2026, 6, 25)


def indexed(w: World) -> None:
    """Build both indexes (a real passage index, as a first search leaves it): set-up, run in
    process."""
    result = w.cli_here("index", "rebuild")
    assert result.exit_code == 0, result.stderr
    assert (w.vault / PASSAGES / "remelink-format.json").is_file()


def new_note(w: World) -> None:
    (w.vault / "daily/2026-06-22/keys.md").write_text(
        "# Keys again\n\nWe decided idempotency keys expire after a day.\n", encoding="utf-8")


def searches(w: World) -> str:
    result = w.cli("search", QUERY)
    assert result.returncode == 0, result.stderr
    assert HIT in result.stdout
    assert MARKER not in result.stdout
    return result.stdout + result.stderr


def one_line(exc: BaseException) -> str:
    text = str(exc)
    assert "\n" not in text and "Traceback" not in text, text
    assert MARKER not in text
    return text


def memory(w: World, **changes: Any) -> Memory:
    from dataclasses import replace

    return Memory(w.vault, replace(w.settings(), **changes))


# -- the passage index -----------------------------------------------------------------------------
def test_passages_symlinked_to_an_outside_folder_holding_an_index(tmp_path: Path) -> None:
    """The passage index moved outside and `passages` a link to it: a search would write its
    segments, manifest and lock there. Now the link is moved aside as it is, into .remelink/
    (not into the node index's folder, which would then look tampered with), with a warning."""
    w = world(tmp_path)
    indexed(w)
    os.rename(w.vault / PASSAGES, w.outside / "passages")
    os.symlink(w.outside / "passages", w.vault / PASSAGES)
    new_note(w)
    w.seal()
    out = searches(w)
    w.held(out, needle=f"{PASSAGES} was tampered with")
    assert "warning:" in out and "moved it aside" in out
    assert (w.vault / PASSAGES).is_dir() and not (w.vault / PASSAGES).is_symlink()
    aside = [p for p in (w.vault / ".remelink").iterdir()
             if p.name.startswith("passages.tampered-")]
    assert len(aside) == 1 and aside[0].is_symlink()
    # The node index is left alone: it holds no foreign entry.
    node = w.cli("node-search", QUERY)
    assert node.returncode == 0 and "tampered" not in node.stderr, node.stderr


def test_passages_symlinked_out_in_process_opens_nothing_outside(tmp_path: Path) -> None:
    w = world(tmp_path)
    indexed(w)
    os.rename(w.vault / PASSAGES, w.outside / "passages")
    os.symlink(w.outside / "passages", w.vault / PASSAGES)
    w.seal()
    mem = memory(w)
    try:
        with opens_under(w.outside) as opened:
            found = mem.search(QUERY)
        w.opened_outside += opened
    finally:
        mem.close()
    assert found.startswith(HIT)
    w.held(found)
    assert any("was tampered with" in line for line in mem.warnings)


@pytest.mark.parametrize("name", ["remelink-format.json", "remelink-manifest.json", "_MAIN_1.toc",
                                  "MAIN_WRITELOCK"])
def test_fifo_in_the_passage_index_does_not_hang(tmp_path: Path, name: str) -> None:
    w = world(tmp_path)
    indexed(w)
    target = w.vault / PASSAGES / name
    if os.path.lexists(target):
        target.unlink()
    os.mkfifo(target)
    new_note(w)
    w.seal()
    started = time.monotonic()
    w.held(searches(w), needle=f"{PASSAGES} was tampered with")
    assert time.monotonic() - started < 60


@pytest.mark.parametrize("trap", ["manifest-temp-names", "writelock", "whoosh-temp-folder",
                                  "own-temp-names"])
def test_links_named_like_the_passage_index_files_lead_nowhere(tmp_path: Path, trap: str) -> None:
    """Links planted under the names the index writes (its temp files, Whoosh's lock and temp
    folder) to an outside file or folder: nothing is written, truncated, created or emptied
    there."""
    w = world(tmp_path)
    indexed(w)
    folder = w.vault / PASSAGES
    if trap == "manifest-temp-names":
        for pid in range(1, 300):
            os.symlink(w.outside / "victim.md", folder / f".remelink-manifest.json.{pid}.tmp")
    elif trap == "writelock":
        with_lock = folder / "MAIN_WRITELOCK"
        if os.path.lexists(with_lock):
            with_lock.unlink()
        os.symlink(w.outside / "created-by-the-lock", with_lock)
    elif trap == "whoosh-temp-folder":
        os.symlink(w.outside / "day", folder / "MAIN.tmp")
    else:  # own.py's temp names are random; plant links under names of that shape anyway
        for i in range(300):
            os.symlink(w.outside / "victim.md", folder / f"{own.TMP_PREFIX}{i:016x}.tmp")
    new_note(w)
    w.seal()
    w.held(searches(w), needle=f"{PASSAGES} was tampered with")
    assert not (w.outside / "created-by-the-lock").exists()


@pytest.mark.parametrize("what", ["symlink", "fifo"])
def test_passage_lock_that_is_a_link_or_a_fifo(tmp_path: Path, what: str) -> None:
    """The passage index writers' lock is opened without following a link or blocking: one
    line, exit 2, nothing created where the link points."""
    w = world(tmp_path)
    lock = w.vault / ".remelink/passages.lock"
    if what == "symlink":
        os.symlink(w.outside / "made-by-lock", lock)
    else:
        os.mkfifo(lock)
    w.seal()
    result = w.cli("search", QUERY)
    w.held(result.stdout + result.stderr, needle=".remelink/passages.lock")
    assert result.returncode == 2, result.stderr
    assert not (w.outside / "made-by-lock").exists()


# -- search quotes no hidden file ------------------------------------------------------------------
def test_a_crafted_node_citing_hidden_files_quotes_none_of_them(tmp_path: Path) -> None:
    """A node's Sources link `daily/../.env#L1-L3` (the path starts in daily/, the file is the
    vault's own `.env`) and a raw note that is a link into `.git/`: search quoted both."""
    w = world(tmp_path)
    (w.vault / ".env").write_text(f"DEPLOY_PASSWORD={MARKER}\n", encoding="utf-8")
    (w.vault / ".git").mkdir(exist_ok=True)
    (w.vault / ".git/secret.md").write_text(SECRET, encoding="utf-8")
    os.symlink("../../.git/secret.md", w.vault / "daily/2026-06-22/deploy-secret.md")
    (w.vault / "digest/wiki/zebra-crossing.md").write_text(
        "---\nname: Zebra crossing\ndescription: where the zebra deploys cross\n---\n"
        "Zebra deploys cross here.\n\n## Sources\n"
        "- Password from [[daily/../.env#L1-L3]].\n"
        "- Config from [[daily/../.remelink/config.yaml#L1-L40]].\n"
        "- The plan in [[daily/2026-06-22/deploy-secret.md#L1-L5]].\n", encoding="utf-8")
    w.seal()
    result = w.cli("search", "zebra deploys password")
    assert result.returncode == 0, result.stderr
    assert "digest/wiki/zebra-crossing.md" in result.stdout
    for leaked in (MARKER, "model: local", "links:"):
        assert leaked not in result.stdout, result.stdout
    mem = memory(w)
    try:
        found = mem.search("zebra deploys password") + mem.search(MARKER)
    finally:
        mem.close()
    assert "zebra-crossing" in found and MARKER not in found.replace(repr(MARKER), "")
    w.held(result.stdout + result.stderr)


# -- remember --------------------------------------------------------------------------------------
def kept_raw(w: World, added: str | None) -> None:
    """Raw notes as before, except the one new note `added`."""
    after = raw_snapshot(w.vault)
    for rel, value in w.before_raw.items():
        assert after.get(rel) == value, f"{rel} changed"
    new = {rel for rel in after if rel not in w.before_raw and after[rel][0] != "dir"}
    assert new == ({added} if added else set()), new
    leftovers = [p for p in (w.vault / "daily").rglob("*") if p.name.startswith(own.TMP_PREFIX)]
    assert not leftovers, leftovers


@pytest.mark.parametrize("where", ["daily", "daily/2026-06-25"])
def test_remember_through_a_symlinked_folder_is_refused(tmp_path: Path, where: str) -> None:
    w = world(tmp_path)
    target = w.outside / "daily"
    if where == "daily":
        os.rename(w.vault / "daily", tmp_path / "moved-daily")
    else:
        target = w.outside / "day"
    os.symlink(target, w.vault / where)
    w.seal()
    mem = memory(w)
    try:
        with opens_under(w.outside) as opened, pytest.raises(SandboxError) as caught:
            mem.remember("Deploy freeze", "We freeze deploys on Fridays.", today=DAY)
        w.opened_outside += opened
    finally:
        mem.close()
    assert where in one_line(caught.value) and "symlink" in str(caught.value)
    assert snapshot(w.outside) == w.before_outside


@pytest.mark.parametrize("taken", ["note", "link-out", "dangling-link-out", "fifo", "folder"])
def test_remember_never_writes_over_or_through_a_taken_name(tmp_path: Path, taken: str) -> None:
    """The note's name is already an entry: an existing note (never changed), a link to an
    outside file (never written through), a dangling link to an outside path (never
    created), a FIFO (never opened), a folder. The note goes to the next free name."""
    w = world(tmp_path)
    day = w.vault / "daily/2026-06-25"
    day.mkdir()
    name = day / "deploy-freeze.md"
    if taken == "note":
        name.write_text("# A person's note\n\nKeep this.\n", encoding="utf-8")
    elif taken == "link-out":
        os.symlink(w.outside / "victim.md", name)
    elif taken == "dangling-link-out":
        os.symlink(w.outside / "created-by-remember.md", name)
    elif taken == "fifo":
        os.mkfifo(name)
    else:
        name.mkdir()
    w.seal()
    mem = memory(w)
    try:
        with opens_under(w.outside) as opened:
            said = mem.remember("Deploy freeze", "We freeze deploys on Fridays.", today=DAY)
        w.opened_outside += opened
    finally:
        mem.close()
    assert said.startswith("Saved daily/2026-06-25/deploy-freeze-2.md."), said
    assert "We freeze deploys on Fridays." in (day / "deploy-freeze-2.md").read_text()
    kept_raw(w, "daily/2026-06-25/deploy-freeze-2.md")
    assert not (w.outside / "created-by-remember.md").exists()
    w.before_raw = raw_snapshot(w.vault)  # raw notes: checked above (one added, none changed)
    w.held(said)


@pytest.mark.parametrize("fails", ["write", "fsync", "link"])
def test_remember_killed_half_way_leaves_no_part_of_a_note(tmp_path: Path, fails: str,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The note is written to an exclusive temp file, fsynced, and only then linked into
    place: a failure at any step (a full disk, an I/O error) leaves no note and no temp file,
    and the error is one line."""
    w = world(tmp_path)
    w.seal()
    mem = memory(w)
    order: list[str] = []
    real = {"write": os.write, "fsync": os.fsync, "link": os.link}

    def spy(step: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            order.append(step)
            if step == fails:
                raise OSError(errno.ENOSPC if step == "write" else errno.EIO, "injected")
            return real[step](*args, **kwargs)
        return call

    for step in real:
        monkeypatch.setattr(os, step, spy(step))
    try:
        with pytest.raises(RemelinkError) as caught:
            mem.remember("Deploy freeze", "We freeze deploys on Fridays.", today=DAY)
    finally:
        monkeypatch.undo()
        mem.close()
    one_line(caught.value)
    assert not (w.vault / "daily/2026-06-25/deploy-freeze.md").exists()
    kept_raw(w, None)
    if fails == "link":
        assert order.index("fsync") < order.index("link")  # durable before it is visible


def test_remember_writes_the_whole_note_before_it_has_its_name(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    w = world(tmp_path)
    seen: list[bytes] = []
    link = os.link

    def watch(src: Any, dst: Any, **kwargs: Any) -> None:
        fd = os.open(src, os.O_RDONLY, dir_fd=kwargs.get("src_dir_fd"))
        try:
            seen.append(os.read(fd, 1 << 20))
        finally:
            os.close(fd)
        link(src, dst, **kwargs)

    monkeypatch.setattr(os, "link", watch)
    mem = memory(w)
    try:
        mem.remember("Deploy freeze", "We freeze deploys on Fridays.", today=DAY)
    finally:
        mem.close()
    monkeypatch.undo()
    written = (w.vault / "daily/2026-06-25/deploy-freeze.md").read_bytes()
    assert seen == [written] and written.endswith(b"We freeze deploys on Fridays.\n")


def test_remember_where_daily_is_a_file_or_a_fifo(tmp_path: Path) -> None:
    w = world(tmp_path)
    os.rename(w.vault / "daily", tmp_path / "moved-daily")
    os.mkfifo(w.vault / "daily")
    w.seal()
    mem = memory(w)
    try:
        with pytest.raises(RemelinkError) as caught:
            mem.remember("Deploy freeze", "We freeze deploys on Fridays.", today=DAY)
    finally:
        mem.close()
    assert "daily" in one_line(caught.value)


def test_remember_with_lone_surrogates_saves_valid_utf8(tmp_path: Path) -> None:
    """A client's JSON may carry unpaired surrogates (`"\\ud83d"`): the note was never written
    (UnicodeEncodeError, an "unexpected error"); now they are U+FFFD."""
    w = world(tmp_path)
    mem = memory(w)
    try:
        said = mem.remember("Deploy \ud83d rocket", "Ship it \udc00 on Monday.", today=DAY)
    finally:
        mem.close()
    rel = said.split()[1].rstrip(".")
    text = (w.vault / rel).read_bytes().decode("utf-8")
    assert "Ship it \ufffd on Monday." in text


# -- read ------------------------------------------------------------------------------------------
READS = ["../../etc/passwd", "/etc/passwd", "daily/../../outside/secret.md", "link-out",
         "link-etc-passwd", "link-dev-zero", "fifo", "link-to-fifo", "link-into-remelink",
         "link-into-git", ".remelink/config.yaml", "daily/../.env", "over-the-size-cap"]


@pytest.mark.parametrize("case", READS)
def test_read_refuses_what_is_not_a_note_inside(tmp_path: Path, case: str) -> None:
    w = world(tmp_path)
    day = w.vault / "daily/2026-06-22"
    (w.vault / ".env").write_text(f"DEPLOY_PASSWORD={MARKER}\n", encoding="utf-8")
    (w.vault / ".git").mkdir(exist_ok=True)
    (w.vault / ".git/secret.md").write_text(SECRET, encoding="utf-8")
    path = {"link-out": "daily/2026-06-22/out.md", "link-etc-passwd": "daily/2026-06-22/pw.md",
            "link-dev-zero": "daily/2026-06-22/zero.md", "fifo": "daily/2026-06-22/pipe.md",
            "link-to-fifo": "daily/2026-06-22/to-pipe.md",
            "link-into-remelink": "daily/2026-06-22/config.md",
            "link-into-git": "daily/2026-06-22/git.md",
            "over-the-size-cap": "daily/2026-06-22/big.md"}.get(case, case)
    if case == "link-out":
        os.symlink(w.outside / "secret.md", day / "out.md")
    elif case == "link-etc-passwd":
        os.symlink("/etc/passwd", day / "pw.md")
    elif case == "link-dev-zero":
        os.symlink("/dev/zero", day / "zero.md")
    elif case in ("fifo", "link-to-fifo"):
        os.mkfifo(day / "pipe.md")
        if case == "link-to-fifo":
            os.symlink("pipe.md", day / "to-pipe.md")
    elif case == "link-into-remelink":
        os.symlink("../../.remelink/config.yaml", day / "config.md")
    elif case == "link-into-git":
        os.symlink("../../.git/secret.md", day / "git.md")
    elif case == "over-the-size-cap":
        (day / "big.md").write_text("# Big\n\n" + "x" * 5000 + MARKER + "\n", encoding="utf-8")
    w.seal()
    mem = memory(w, max_note_bytes=4096)
    started = time.monotonic()
    try:
        with opens_under(w.outside) as opened, pytest.raises(RemelinkError) as caught:
            mem.read(path)
        w.opened_outside += opened
    finally:
        mem.close()
    assert time.monotonic() - started < 10
    message = one_line(caught.value)
    assert "root:" not in message and "model: local" not in message
    w.held(message)


def test_read_of_a_note_inside_still_works_and_is_capped(tmp_path: Path) -> None:
    w = world(tmp_path)
    long = "\n".join(f"line {i} " + "y" * 200 for i in range(400))
    (w.vault / "daily/2026-06-22/long.md").write_text(long + "\n", encoding="utf-8")
    mem = memory(w)
    try:
        text = mem.read("daily/2026-06-22/long.md")
        inside_link = w.vault / "daily/2026-06-22/alias.md"
        os.symlink("long.md", inside_link)
        aliased = mem.read("daily/2026-06-22/alias.md", 1, 2)
    finally:
        mem.close()
    assert len(text) <= 20_400 and "read again with start_line=" in text
    assert aliased.startswith("daily/2026-06-22/alias.md (lines 1-2 of 400)")


# -- recent: crafted run records -------------------------------------------------------------------
GOOD = {"action": "CREATE", "status": "done", "target": "digest/wiki/idempotency-keys.md",
        "name": "Idempotency keys", "paths": ["daily/2026-06-22/note.md"]}
CRAFTED = {
    "deep-nesting": "[" * 200_000 + "]" * 200_000,
    "deep-object": '{"a":' * 100_000 + "1" + "}" * 100_000,
    "surrogates": json.dumps({**GOOD, "name": "x\ud83d", "paths": ["a\udc00"],
                              "target": "digest/wiki/r\ud800.md"}),
    "wrong-types": json.dumps({"action": ["CREATE"], "status": {"done": 1}, "target": 7,
                               "paths": {"a": 1}, "attempts": "lots", "counts": "x"}),
    "target-types": json.dumps({**GOOD, "target": {"path": "x"}, "paths": "daily/x.md"}),
    "infinity": '{"action": "CREATE", "status": "done", "attempts": Infinity, '
                '"target": "digest/wiki/inf.md", "name": NaN}',
    "target-climbs-out": json.dumps({**GOOD, "target": "../../outside/secret.md"}),
    "target-absolute": json.dumps({**GOOD, "target": "/etc/passwd"}),
    "target-through-digest": json.dumps({**GOOD, "target": "digest/../../outside/leak.md"}),
    "target-hidden": json.dumps({**GOOD, "target": "digest/.git/config.md"}),
    "target-huge": json.dumps({**GOOD, "target": "digest/" + "a" * 3_000_000 + ".md"}),
    "binary": "\x00\xff\xfe" * 1000,
}


@pytest.mark.parametrize("case", list(CRAFTED))
def test_recent_reads_crafted_run_records_as_untrusted(tmp_path: Path, case: str) -> None:
    w = world(tmp_path)
    runs = w.vault / ".remelink/runs"
    runs.mkdir(parents=True, exist_ok=True)
    (runs / "20260625T080000-crafted.jsonl").write_text(
        CRAFTED[case] + "\n" + json.dumps(GOOD) + "\n", encoding="utf-8", errors="surrogatepass")
    w.seal()
    mem = memory(w)
    try:
        with opens_under(w.outside) as opened:
            text = mem.recent(5)
        w.opened_outside += opened
    finally:
        mem.close()
    text.encode("utf-8")  # valid text for the client's JSON
    assert "created: digest/wiki/idempotency-keys.md" in text, text
    assert "outside" not in text and "/etc/passwd" not in text and ".git" not in text
    assert len(text) < 20_000
    w.held(text)


@pytest.mark.parametrize("what", ["runs-link-out", "run-file-link-out", "run-file-fifo",
                                  "run-file-too-big", "remelink-runs-is-a-file"])
def test_recent_with_runs_that_are_links_fifos_or_too_big(tmp_path: Path, what: str) -> None:
    w = world(tmp_path)
    runs = w.vault / ".remelink/runs"
    record = json.dumps({**GOOD, "name": MARKER}) + "\n"
    (w.outside / "runs").mkdir()
    (w.outside / "runs/20991231T235959-outside.jsonl").write_text(record, encoding="utf-8")
    if what == "runs-link-out":
        if runs.exists():
            os.rename(runs, tmp_path / "moved-runs")
        os.symlink(w.outside / "runs", runs)
    elif what == "remelink-runs-is-a-file":
        if runs.exists():
            os.rename(runs, tmp_path / "moved-runs")
        runs.write_text(record, encoding="utf-8")
    else:
        runs.mkdir(parents=True, exist_ok=True)
        name = runs / "20991231T235959-planted.jsonl"
        if what == "run-file-link-out":
            os.symlink(w.outside / "runs/20991231T235959-outside.jsonl", name)
        elif what == "run-file-fifo":
            os.mkfifo(name)
        else:
            with open(name, "wb") as f:
                f.truncate(21 * 1024 * 1024)
                f.write(record.encode())
    w.seal()
    mem = memory(w)
    started = time.monotonic()
    try:
        with opens_under(w.outside) as opened:
            try:
                text = mem.recent(5)
            except StateError as exc:  # `.remelink/runs` itself not a real folder: one line
                text = one_line(exc)
                assert ".remelink/runs" in text
        w.opened_outside += opened
    finally:
        mem.close()
    assert time.monotonic() - started < 10
    assert MARKER not in text and "planted" not in text
    planted = {"run-file-too-big": [".remelink/runs/20991231T235959-planted.jsonl"],
               "remelink-runs-is-a-file": [".remelink/runs"]}.get(what, [])
    w.held(text, planted=planted)


# -- quadratic inputs (as case 10) ---------------------------------------------------------------
@pytest.mark.parametrize("line", ["# a" + " " * 64_000 + "b", "# a" + "\t" * 64_000 + "x",
                                  "# a" + " #" * 32_000 + " z"])
def test_a_64_kb_heading_line_does_not_hold_the_passage_index(tmp_path: Path, line: str) -> None:
    """The passage splitter's heading pattern and the title pattern were quadratic on a long
    heading line of spaces: 64 KB took 34 s and 13 s of CPU in every index refresh, holding
    the passage index's lock (a search or an MCP server waits on it)."""
    w = world(tmp_path)
    (w.vault / "daily/2026-06-22/wide.md").write_text(line + "\n\nidempotency keys\n",
                                                      encoding="utf-8")
    w.seal()
    mem = memory(w)
    started = time.process_time()
    try:
        found = mem.search(QUERY)
    finally:
        mem.close()
    assert time.process_time() - started < 10
    assert "daily/2026-06-22/wide.md" in found
    w.held(found)


def test_a_megabyte_argument_echoed_in_a_tool_error_is_folded_in_linear_time() -> None:
    """A tool error echoes the argument (`since must be a date ..., got '111...'`); folding it
    into one line ran a pattern that is quadratic on a run of digits (40,000: 7.7 s; a
    megabyte would hold the MCP server for hours). Now: short, and at once."""
    from remelink.mcp.server import ERROR_CHARS, one_line

    text = "since must be a date YYYY-MM-DD, got '" + "1" * 1_000_000 + "'"
    started = time.process_time()
    line = one_line(text)
    assert time.process_time() - started < 1.0
    assert "\n" not in line and len(line) <= ERROR_CHARS + 10


# -- the passage index vanishing under an open index -----------------------------------------------
@pytest.mark.parametrize("emptied", [False, True])
def test_remember_while_the_passage_folder_vanishes_is_not_an_unexpected_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, emptied: bool) -> None:
    """An MCP server's start-up refresh rebuilds the node index; when it cannot get the
    passage index's lock at once it leaves that index behind and removes it with the old
    folder, under a `remember` that is updating it: "unexpected error: FileNotFoundError ...
    'passages'" (seen in `make test-fast`). Caught a moment later the folder is there without
    its table of contents (another process's rebuild swapping it in): Whoosh's
    EmptyIndexError (seen once in `make test`). Now the update finds the index gone, rebuilds
    it and goes on; the note is saved and found."""
    import shutil

    from remelink.index.store import IndexStore

    w = world(tmp_path)
    mem = memory(w)
    real = IndexStore._apply
    vanished: list[bool] = []

    def vanish(self: IndexStore, diff: Any) -> None:
        if not vanished:
            vanished.append(True)
            shutil.rmtree(w.vault / PASSAGES)
            if emptied:
                (w.vault / PASSAGES).mkdir()
        real(self, diff)

    try:
        mem.search(QUERY)
        monkeypatch.setattr(IndexStore, "_apply", vanish)
        said = mem.remember("Numbat freeze", "We freeze numbat deploys on Fridays.", today=DAY)
        monkeypatch.undo()
        found = mem.search("numbat deploys Fridays")
    finally:
        mem.close()
    assert vanished and said.startswith("Saved daily/2026-06-25/numbat-freeze.md.")
    assert found.startswith("daily/2026-06-25/numbat-freeze.md:"), found


def test_recent_reads_a_bounded_amount_whatever_runs_holds(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    """200 run files of 20 MiB each, none a change, made a `recent` call read 4 GB. Now a
    call reads at most READ_BUDGET bytes of run files in all (here set to 1 MiB)."""
    from remelink.mcp import recent

    w = world(tmp_path)
    runs = w.vault / ".remelink/runs"
    runs.mkdir(parents=True, exist_ok=True)
    junk = (json.dumps({"action": "NOOP", "status": "done", "pad": "x" * 1000}) + "\n") * 300
    for i in range(40):
        (runs / f"2026062{i % 10}T08{i:04d}-junk.jsonl").write_text(junk, encoding="utf-8")
    monkeypatch.setattr(recent, "READ_BUDGET", 1 << 20)
    read: list[int] = []
    real = own.read_fd

    def counted(*args: Any, **kwargs: Any) -> bytes:
        data = real(*args, **kwargs)
        read.append(len(data))
        return data

    monkeypatch.setattr(own, "read_fd", counted)
    text = recent.recent_text(recent.recent_runs(w.vault, w.settings(), 20))
    assert text.startswith("No dream run has changed the digest yet")
    assert sum(read) <= (1 << 20) and len(read) < 40
