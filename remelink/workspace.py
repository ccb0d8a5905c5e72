"""What one unit's agent sees of the vault: the disk for reading, an in-memory overlay for its
single target (SPEC §6 sandbox, §7.2 one target, all or nothing).

Nothing here writes to disk. Tools stage the target's new text in the overlay; `integrate`
commits it atomically only when the receipt is accepted, so a unit that fails leaves the vault
exactly as it was.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from remelink.config import Settings
from remelink.errors import NoteError, SandboxError
from remelink.units import Unit
from remelink.vault.notes import Note, read_note
from remelink.vault.paths import (
    BUCKETS,
    MARKER_DIR,
    disk_path,
    normalize_relpath,
    resolve_inside,
    slugify,
)

SearchFn = Callable[[str, int, "str | None"], list[Any]]


@dataclass
class UnitWorkspace:
    vault: Path
    settings: Settings
    unit: Unit | None
    search: SearchFn
    claim: Callable[[str], None] | None = None  # serialises parallel units on one target
    target: str | None = None
    original: Note | None = None   # the target before this unit (None: it did not exist)
    staged: Note | None = None
    searches: list[tuple[str, list[Any]]] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)

    @property
    def digest(self) -> str:
        return self.settings.folders.digest

    @property
    def existed(self) -> bool:
        return self.original is not None

    # -- paths -----------------------------------------------------------------------------
    def tool_path(self, raw: str) -> str:
        """Normalise a tool path: workspace-relative, `.md` added when there is no suffix."""
        if any("\ud800" <= ch <= "\udfff" for ch in raw):
            raise SandboxError("path contains an unpaired surrogate; send valid UTF-8 text")
        rel = normalize_relpath(raw)
        last = rel.rsplit("/", 1)[-1]
        if "." not in last.lstrip("."):
            rel += ".md"
        if any(part.startswith(".") for part in rel.split("/")):
            raise SandboxError(f"{rel}: hidden and {MARKER_DIR}/ paths are not notes")
        return rel

    def readable(self, raw: str) -> str:
        rel = self.tool_path(raw)
        resolve_inside(self.vault, rel)  # refuses symlinks that lead outside the vault
        return rel

    def writable(self, raw: str) -> str:
        """The path as a write target, or SandboxError: only `digest/<bucket>/...md`, never
        through a symlink, and only the unit's single target."""
        rel = self.tool_path(raw)
        parts = rel.split("/")
        if len(parts) < 3 or parts[0] != self.digest or parts[1] not in BUCKETS:
            raise SandboxError(
                f"{rel}: writes go only to {self.digest}/<bucket>/<slug>.md with bucket one of "
                f"{', '.join(BUCKETS)}; daily/ and resource/ are never modified")
        if not rel.endswith(".md"):
            raise SandboxError(f"{rel}: digest nodes are .md files")
        resolve_inside(self.vault, rel, follow_symlinks=False)
        revises = self.unit.revises if self.unit is not None else None
        if revises is not None and rel != revises.target:  # SPEC §9.3: an edit never duplicates
            raise SandboxError(f"this unit revises {revises.target} (its note was edited): "
                               "update that node; another node would say the same thing twice")
        if self.target is not None and rel != self.target:
            raise SandboxError(
                f"this unit already changes {self.target}; one unit changes exactly one node. "
                f"Put everything into {self.target} (link {rel} in its prose if related)")
        return rel

    # -- reading ---------------------------------------------------------------------------
    def current(self, rel: str) -> Note | None:
        """The note as this unit sees it: the staged version of the target, else the disk."""
        if self.staged is not None and rel == self.target:
            return self.staged
        if not os.path.lexists(disk_path(self.vault, rel)):  # its on-disk (maybe NFD) name
            return None
        return read_note(self.vault, rel, max_bytes=self.settings.max_note_bytes)

    def require(self, rel: str) -> Note:
        note = self.current(rel)
        if note is None:
            raise NoteError(f"{rel} does not exist", hint="use node_search to find existing nodes")
        return note

    # -- staging ---------------------------------------------------------------------------
    def open_for_write(self, rel: str) -> tuple[Note | None, Note | None]:
        """(current note, note before this unit) for a write to `rel`, after checking the
        create rules. The target is claimed only when something is actually staged."""
        if self.target == rel:
            return self.current(rel), self.original
        if self.claim is not None:
            self.claim(rel)
        existing = self.current(rel)
        if existing is None:
            self._check_create(rel)
        return existing, existing

    def _check_create(self, rel: str) -> None:
        bucket = rel.split("/")[1]
        if self.unit is None:
            raise SandboxError("this task may not create nodes")
        if bucket != self.unit.bucket:
            raise SandboxError(
                f"{rel} does not exist, and a new node goes to the unit's own bucket "
                f"({self.digest}/{self.unit.bucket}/); an update may target any bucket but only "
                "an existing node")
        if len(rel.split("/")) != 3:
            raise SandboxError(f"{rel}: create new nodes directly in {self.digest}/{bucket}/")
        stem = rel.rsplit("/", 1)[-1][:-3]
        want = slugify(stem)
        if stem != want:
            raise SandboxError(f"{rel}: new node file names are slugs; use "
                               f"{self.digest}/{bucket}/{want}.md")

    def stage(self, note: Note, original: Note | None) -> None:
        if self.target is None:
            self.target = note.path
            self.original = original
        elif note.path != self.target:  # writable() prevents this; keep the invariant loud
            raise SandboxError(f"this unit already changes {self.target}")
        self.staged = note
