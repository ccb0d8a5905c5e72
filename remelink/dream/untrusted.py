"""Everything read from `.remelink/` is untrusted input (SPEC §1, "the vault is the boundary").

The docs suggest committing `state.json` and `runs/` to git, so a crafted commit can put any
text in them. Before the checkpoint is used, every path in it is validated as a workspace
path of the kind it must be, and anything else is one line naming the file and the entry,
dropped, never followed:

- `inputs` keys and unit `paths`: notes under the raw folders (`daily/`, `resource/`);
- unit `target`: a digest node path (`digest/<bucket>/...md`);
- `pending_tags`, and the `target` of a `runs/<id>.jsonl` line that recovery trusts: existing
  digest nodes (a regular file, no symlink on the way);
- run ids (they name `runs/<id>.jsonl`): a plain file-name token.

A canonical path is what remelink itself writes: relative, POSIX, NFC, no `.`/`..`, no empty
or hidden segment, no control or bidirectional character, no backslash. Validation never opens
a file; it only `lstat`s the components of the node paths it must find.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from remelink.errors import RemelinkError
from remelink.vault.paths import BUCKETS, name_problem, normalize_relpath, shown

if TYPE_CHECKING:
    from remelink.config import Folders

_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
NOTE = "the checkpoint is untrusted input: nothing it names outside its place is used"


def folders_of(vault: Path) -> Folders:
    """The vault's folder names (configurable), as the rest of the run sees them."""
    from remelink.config import Folders, load_settings

    try:
        return load_settings(vault).folders
    except RemelinkError:  # the run reports the configuration itself
        return Folders()


@dataclass(frozen=True)
class Kinds:
    """Which workspace paths an entry may name."""

    vault: Path
    folders: Folders

    @classmethod
    def of(cls, vault: Path) -> Kinds:
        return cls(vault, folders_of(vault))

    def canonical(self, value: Any) -> str | None:
        """`value` when it is a canonical workspace path, else None."""
        if not isinstance(value, str) or not value or len(value) > 4096:
            return None
        try:
            if normalize_relpath(value) != value:
                return None
        except RemelinkError:
            return None
        parts = value.split("/")
        if any(p.startswith(".") for p in parts) or name_problem(value) is not None:
            return None
        return value

    def raw_note(self, value: Any) -> bool:
        rel = self.canonical(value)
        raw = (f"{self.folders.daily}/", f"{self.folders.resource}/")
        return rel is not None and rel.startswith(raw)

    def node_path(self, value: Any) -> bool:
        rel = self.canonical(value)
        if rel is None or not rel.endswith(".md"):
            return False
        parts = rel.split("/")
        return len(parts) >= 3 and parts[0] == self.folders.digest and parts[1] in BUCKETS

    def existing_node(self, value: Any) -> bool:
        """A digest node path naming a regular file reached without a symlink."""
        if not self.node_path(value):
            return False
        from remelink.vault.paths import disk_path

        path = disk_path(self.vault, value)
        probe = self.vault
        for part in path.relative_to(self.vault).parts:
            probe = probe / part
            try:
                st = os.lstat(probe)
            except OSError:
                return False
            if stat.S_ISLNK(st.st_mode):
                return False
        return stat.S_ISREG(st.st_mode)


# -- values: what a field must hold (a crafted one is a ValueError: the checkpoint is refused) --
MAX_COUNT = 1_000_000_000  # attempts, tokens, counts: far above anything a run records


def count(value: Any, what: str) -> int:
    """A whole number from 0 to MAX_COUNT (absent: 0). Infinity, NaN, a float, a string or a
    bool is refused (`"attempts": Infinity` crashed the run with OverflowError)."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_COUNT:
        raise ValueError(f"{what} must be a whole number from 0 to {MAX_COUNT}, got "
                         f"{_brief(value)}")
    return value


def text(value: Any, what: str) -> str | None:
    """A string, or absent."""
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{what} must be a string, got {_brief(value)}")
    return value


def texts(value: Any, what: str) -> list[str]:
    """A list of strings (absent: empty)."""
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{what} must be a list of strings, got {_brief(value)}")
    return list(value)


def run_record(value: Any) -> dict[str, Any]:
    """One entry of `runs`: what `status` shows, each field of the type remelink writes."""
    if not isinstance(value, dict):
        raise ValueError(f"a run must be a mapping, got {_brief(value)}")
    for key in ("id", "date", "started", "finished", "failed"):
        text(value.get(key), f"run {key}")
    for key in ("ok", "interrupted"):
        if key in value and not isinstance(value[key], bool):
            raise ValueError(f"run {key} must be true or false, got {_brief(value[key])}")
    counts = value.get("counts")
    if counts is not None:
        if not isinstance(counts, dict):
            raise ValueError(f"run counts must be a mapping, got {_brief(counts)}")
        for key, number in counts.items():
            if isinstance(number, dict):
                for sub, n in number.items():
                    count(n, f"run counts.{key}.{sub}")
            else:
                count(number, f"run counts.{key}")
    return value


def _brief(value: Any) -> str:
    shown = repr(value)
    return shown if len(shown) <= 60 else shown[:57] + "..."


def run_id_ok(value: Any) -> bool:
    return isinstance(value, str) and _RUN_ID.fullmatch(value) is not None and ".." not in value


def problem_line(source: str, entry: str, value: Any, why: str) -> str:
    text = shown(value) if isinstance(value, str) else repr(value)
    if len(text) > 120:
        text = text[:117] + "..."
    return f"{source}: {entry} {text!r} {why}; ignored ({NOTE})"


def audit_entries(lines: Iterable[str], source: str, kinds: Kinds,
                  problems: list[str]) -> dict[str, dict[str, Any]]:
    """The `done` lines of one audit file that recovery may trust, by unit id: a line whose
    `target` is not an existing digest node is a problem, and its unit is not settled by it."""
    from remelink.decoding import json_loads

    done: dict[str, dict[str, Any]] = {}
    for number, line in enumerate(lines, 1):
        try:
            entry = json_loads(line)
        except (ValueError, RecursionError):
            continue  # a line cut by the kill: its unit was not settled
        if not isinstance(entry, dict) or entry.get("status") != "done" or \
                not entry.get("unit") or entry.get("dry_run"):
            continue
        try:  # recovery uses these: a crafted value stops the run (one line, exit 2)
            count(entry.get("attempts"), "attempts")
            for key in ("unit", "action", "target"):
                text(entry.get(key), key)
        except ValueError as exc:
            from remelink.errors import StateError

            raise StateError(f"line {number} is malformed: {exc}", path=source,
                             hint="move the file away (it is the audit trail of one run); "
                                  "the file was left untouched") from None
        target = entry.get("target")
        if target is not None and not kinds.existing_node(target):
            problems.append(problem_line(f"{source} line {number}", "target", target,
                                  "is not an existing digest node"))
            continue
        done[str(entry["unit"])] = entry
    return done
