"""What the commit being made deletes or renames, as git reports it (one subprocess).

pre-commit passes the hook the files a commit adds or changes, never the ones it deletes, and
for a rename only the new name: a link elsewhere to the old path breaks without any of the
files passed being wrong. `git diff --cached --name-status -M` names those paths, so lint-links
can check the links that point at them in the commit that breaks them.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from remelink.vault.paths import nfc

GIT_TIMEOUT = 60.0  # seconds; a diff of the index against HEAD is normally milliseconds


@dataclass(frozen=True)
class Staged:
    """The vault's staged deletions and renames: old path -> None (deleted) or the new path.
    Paths are vault-relative (git's `--relative`), so a vault in a sub-folder of the repository
    sees only its own changes. `problem` says why git could not be asked (then `gone` is
    empty); `repository` is False outside a git work tree."""

    repository: bool
    gone: dict[str, str | None] = field(default_factory=dict)
    problem: str | None = None


def parse_name_status(output: bytes) -> dict[str, str | None]:
    """`git diff --name-status -z` output -> {old path: new path or None}. Only deletions
    (D) and renames (R) are kept; added, modified, copied and type-changed paths still exist."""
    fields = output.split(b"\0")
    gone: dict[str, str | None] = {}
    i = 0
    while i < len(fields) and fields[i]:
        status = fields[i].decode("ascii", "replace")
        if status.startswith(("R", "C")):
            if i + 2 >= len(fields):
                break
            old = nfc(fields[i + 1].decode("utf-8", "surrogateescape"))
            new = nfc(fields[i + 2].decode("utf-8", "surrogateescape"))
            if status.startswith("R"):
                gone[old] = new
            i += 3
            continue
        if i + 1 >= len(fields):
            break
        if status.startswith("D"):
            gone[nfc(fields[i + 1].decode("utf-8", "surrogateescape"))] = None
        i += 2
    return gone


def in_work_tree(vault: Path) -> bool:
    """Whether `vault` lies in a git work tree: a `.git` folder or file (worktrees, submodules)
    in it or above it, or GIT_DIR set (as git sets it for hooks). Asked of the file system, so
    a vault outside git costs no subprocess (and `git diff` outside a repository would turn
    into `git diff --no-index` and fail on `--cached`)."""
    if os.environ.get("GIT_DIR"):
        return True
    here = vault.resolve()
    return any((folder / ".git").exists() for folder in (here, *here.parents))


def staged_changes(vault: Path) -> Staged:
    """Ask git (once) what the index deletes and renames under `vault`."""
    if not in_work_tree(vault):
        return Staged(repository=False)
    argv = ["git", "-C", str(vault), "diff", "--cached", "--name-status", "-M", "-z",
            "--relative", "--no-color", "--no-ext-diff"]
    try:
        proc = subprocess.run(argv, capture_output=True, timeout=GIT_TIMEOUT, check=False,
                              stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        return Staged(repository=False)  # no git: nothing can be staged
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Staged(repository=True, problem=f"git diff --cached failed: {exc}")
    if proc.returncode != 0:
        message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        first = message[0] if message else f"exit {proc.returncode}"
        if "not a git repository" in first:
            return Staged(repository=False)
        return Staged(repository=True, problem=f"git diff --cached failed: {first}")
    return Staged(repository=True, gone=parse_name_status(proc.stdout))
