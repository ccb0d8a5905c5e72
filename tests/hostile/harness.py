"""The hostile-vault harness: a demo vault beside an `outside/` tree that holds a marker string,
a model that records every request it receives, and the checks every hostile case must pass:

- the tree outside the vault is byte-identical (names, bytes, link targets, file types);
- raw notes (`daily/`, `resource/`) are byte-identical;
- nothing outside the vault was read: the marker is in no model request (recorded by the
  model, or by the loopback server in the LLM cases), no digest node and no file of `.remelink/`;
- no hang: every case runs under a timeout (pytest-timeout, and a subprocess timeout for the CLI
  where a blocking open would otherwise block the test process itself);
- one line reported: exactly one line of the output names the offending entry;
- nothing outside even opened: in-process runs are watched by an audit hook that records every
  file or folder opened or listed whose real location is under `outside/`.

The marker text is written as a decision ("We decided ..."), so that the local engine would turn
it into a unit, and so into a node and a request, if it were ever read.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dream_support import DEMO, TODAY, cli, settings_of

from remelink.config import Settings
from remelink.dream.context import RunReport
from remelink.dream.run import DreamOptions, run_dream
from remelink.models.base import AssistantTurn, Message, ToolSpec
from remelink.models.local import LocalModel
from remelink.render import dream_text

MARKER = "ZEBRA-7F3A-HOSTILE-MARKER"
SECRET = (f"# Deploy secret\n\nWe decided that the deploy password is {MARKER} because the "
          f"vault must never see it. Alice owns {MARKER}.\n")
TIMEOUT = 90  # seconds per case; a hang fails the case instead of blocking the suite


_WATCHED: list[tuple[str, list[str]]] = []
_OPEN_EVENTS = frozenset({"open", "os.listdir", "os.scandir", "shutil.copytree", "shutil.copyfile"})


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if not _WATCHED or event not in _OPEN_EVENTS or not args:
        return
    target = args[0]
    if isinstance(target, int) or target is None:
        return  # a descriptor: its folder was opened (and checked) by name before
    try:
        real = os.path.realpath(os.fsdecode(target))
    except (TypeError, ValueError, OSError):
        return
    for prefix, hits in _WATCHED:
        if real == prefix or real.startswith(prefix + os.sep):
            hits.append(f"{event} {real}")


sys.addaudithook(_audit)


@contextlib.contextmanager
def opens_under(folder: Path) -> Iterator[list[str]]:
    """Record every open, listing or copy (in this process) of something whose real location
    is under `folder`."""
    entry: tuple[str, list[str]] = (os.path.realpath(folder), [])
    _WATCHED.append(entry)
    try:
        yield entry[1]
    finally:
        _WATCHED.remove(entry)


class Recorder:
    """The local engine, recording every request: what an LLM provider would receive."""

    def __init__(self, settings: Settings) -> None:
        self.inner = LocalModel(settings)
        self.name = "recording-local"
        self.requests: list[str] = []

    def complete(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> AssistantTurn:
        self.requests.append(json.dumps(list(messages), ensure_ascii=False))
        return self.inner.complete(messages, tools)

    def bind_index(self, index: Any) -> None:
        self.inner.bind_index(index)


def snapshot(top: Path) -> dict[str, Any]:
    """Every entry under `top` without following links: bytes of regular files, link targets,
    the type of anything else."""
    out: dict[str, Any] = {}
    if not os.path.lexists(top):
        return out
    if os.path.islink(top):
        return {".": ("link", os.readlink(top))}
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
        for name in sorted(dirnames + filenames):
            path = Path(dirpath) / name
            rel = path.relative_to(top).as_posix()
            try:
                st = os.lstat(path)
            except OSError:  # past PATH_MAX: nobody can open it by name, remelink included
                out[rel] = ("unreachable",)
                continue
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(path))
            elif stat.S_ISREG(st.st_mode):
                out[rel] = ("file", path.read_bytes(), st.st_ino)
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir",)
            else:
                out[rel] = ("special", stat.S_IFMT(st.st_mode))
    return out


def raw_snapshot(vault: Path) -> dict[str, Any]:
    out = {}
    for top in ("daily", "resource"):
        for rel, value in snapshot(vault / top).items():
            if not rel.endswith("interests.yaml"):  # the topics step's own output
                out[f"{top}/{rel}"] = value[:2] if value[0] == "file" else value
    return out


def regular_bytes(top: Path) -> dict[str, bytes]:
    """The bytes of every regular file under `top`, never following a link."""
    return {rel: value[1] for rel, value in snapshot(top).items() if value[0] == "file"}


@dataclass
class World:
    """A copy of the demo vault at `vault`, and `outside` beside it holding the marker."""

    root: Path
    vault: Path
    outside: Path
    before_outside: dict[str, Any] = field(default_factory=dict)
    before_raw: dict[str, Any] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)
    opened_outside: list[str] = field(default_factory=list)

    def seal(self) -> None:
        """Record the trees the case must leave as they are (call after building the case)."""
        self.before_outside = snapshot(self.outside)
        self.before_raw = raw_snapshot(self.vault)

    def settings(self, **dream: Any) -> Settings:
        return settings_of(self.vault, **dream)

    def run(self, settings: Settings | None = None, **options: Any) -> tuple[RunReport, str]:
        """A dream run in process with the recording local engine: the report and its text."""
        settings = settings or self.settings()
        model = Recorder(settings)
        options.setdefault("today", TODAY)
        with opens_under(self.outside) as opened:
            report = run_dream(self.vault, settings, model, DreamOptions(**options))
        self.requests += model.requests
        self.opened_outside += opened
        return report, dream_text(report, 0.0)

    def cli(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """`remelink ARGS --vault VAULT` as a subprocess, killed after `timeout` seconds (a
        blocking open would block the test process itself)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("REMELINK_")}
        env["REMELINK_LOCAL__EMBEDDER"] = "none"
        exe = Path(sys.executable).with_name("remelink")
        return subprocess.run([str(exe), *args, "--vault", str(self.vault)],
                              capture_output=True, text=True, timeout=timeout, env=env,
                              cwd=self.root, check=False)

    def cli_here(self, *args: str) -> Any:
        """`remelink ARGS --vault VAULT` through the command-line app in this process (Click's
        result: `exit_code`, `stdout`, `stderr`), watched by the audit hook like `run`: for the
        cases that cannot block (a refused configuration), where a process adds only its
        start-up."""
        with opens_under(self.outside) as opened:
            result = cli(*args, "--vault", str(self.vault))
        self.opened_outside += opened
        return result

    def cli_plain(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """`remelink ARGS` as a subprocess, without `--vault` (init takes a folder)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("REMELINK_")}
        env["REMELINK_LOCAL__EMBEDDER"] = "none"
        exe = Path(sys.executable).with_name("remelink")
        return subprocess.run([str(exe), *args], capture_output=True, text=True,
                              timeout=timeout, env=env, cwd=self.root, check=False)

    def lint(self, *paths: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """`remelink-lint-links` (the pre-commit entry) as a subprocess."""
        exe = Path(sys.executable).with_name("remelink-lint-links")
        # Run from inside the vault, as the pre-commit hook does: PATHS are relative to it.
        return subprocess.run([str(exe), "--vault", str(self.vault), *paths],
                              capture_output=True, text=True, timeout=timeout,
                              cwd=self.vault, check=False)

    # -- the checks -----------------------------------------------------------------------
    def held(self, output: str = "", *, needle: str | None = None,
             extra_requests: Sequence[str] = (), planted: Sequence[str] = ()) -> None:
        """Every check of the module docstring. `needle`: the offending entry, which exactly
        one line of `output` must name. `planted`: vault files the case itself filled with the
        marker (a 60 MB node whose tail holds it: read past the limit, it would show up)."""
        assert snapshot(self.outside) == self.before_outside, "the tree outside changed"
        assert not self.opened_outside, f"opened outside the vault: {self.opened_outside[:5]}"
        assert raw_snapshot(self.vault) == self.before_raw, "a raw note changed"
        for i, request in enumerate([*self.requests, *extra_requests]):
            assert MARKER not in request, f"request {i} carried text from outside the vault"
        for top in ("digest", ".remelink"):
            for rel, data in regular_bytes(self.vault / top).items():
                if f"{top}/{rel}" in planted:
                    continue
                assert MARKER.encode() not in data, f"{top}/{rel} holds text from outside"
        assert "Traceback" not in output, output
        if needle is not None:
            lines = [line for line in output.splitlines() if needle in line]
            assert len(lines) == 1, f"{len(lines)} line(s) name {needle!r}:\n{output}"


# The raw notes of the demo vault a hostile case keeps: the ones its cases name and the ones the
# demo's digest nodes cite (so the vault lints clean). What a case checks (held, one line,
# nothing outside opened) needs no more notes, and a run over these four costs a fifth of a run
# over all eight (0.12 s of CPU against 0.62 s, measured), in some 150 cases.
HOSTILE_RAW = frozenset({"daily/2026-06-01/payments-retry.md", "daily/2026-06-22/周会.md",
                         "daily/2026-05-15/key-rotation.md",
                         "daily/2026-06-19/dashboard-review.md"})


def world(tmp_path: Path, source: Path = DEMO, *, full: bool = False) -> World:
    """The case's vault (the demo's four raw notes of HOSTILE_RAW, or with `full` all of them:
    for the cases that need a node the others update or a day they write) and outside/."""
    root = tmp_path
    vault = root / "vault"
    shutil.copytree(source, vault, symlinks=True)
    if source == DEMO and not full:
        for folder in ("daily", "resource"):
            for path in sorted((vault / folder).rglob("*.md")):
                if path.relative_to(vault).as_posix() not in HOSTILE_RAW:
                    path.unlink()
    outside = root / "outside"
    (outside / "day").mkdir(parents=True)
    (outside / "daily" / "2026-06-24").mkdir(parents=True)
    (outside / "digest" / "wiki").mkdir(parents=True)
    (outside / "secret.md").write_text(SECRET, encoding="utf-8")
    (outside / "victim.md").write_text(f"---\nname: Victim\ndescription: {MARKER}\n---\n"
                                       f"{SECRET}", encoding="utf-8")
    (outside / "day" / "note.md").write_text(SECRET, encoding="utf-8")
    (outside / "daily" / "2026-06-24" / "note.md").write_text(SECRET, encoding="utf-8")
    (outside / "digest" / "wiki" / "leak.md").write_text(
        f"---\nname: Deploy password\ndescription: {MARKER}\n---\n{SECRET}", encoding="utf-8")
    return World(root=root, vault=vault, outside=outside)
