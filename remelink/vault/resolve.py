"""The file listing of a vault and wikilink resolution in `path` and `obsidian` modes (SPEC §3.2).

`path` (default): the target is a literal workspace-relative path with its extension.
`obsidian`: exact path (with or without `.md`), then a case-insensitive, NFC-normalised name
match anywhere in the vault; more than one match is an ambiguous link, never a silent pick.
In both modes an absolute target, a `..` segment, or a file resolving outside the vault is an
error.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from remelink.vault.boundary import kind_of
from remelink.vault.paths import SKIP_DIRS, is_unsafe_target, nfc

Status = Literal["ok", "broken", "ambiguous", "outside"]
MARKDOWN_EXTS = (".md", ".markdown")


@dataclass(frozen=True, slots=True)
class Resolution:
    status: Status
    path: str | None = None
    candidates: tuple[str, ...] = ()
    reason: str = ""


@dataclass
class VaultFiles:
    """Every file of the vault (workspace-relative, NFC), gathered in one walk.

    Dot-folders (`.remelink`, `.git`, `.obsidian`, ...) are not part of the vault's notes.
    Symlinks that resolve outside the vault are listed in `escaping`.
    """

    root: Path
    files: set[str]
    escaping: set[str] = field(default_factory=set)
    _by_name: dict[str, list[str]] | None = None
    version: int = 0  # bumped by add/discard, so that resolvers drop what they cached
    # NFC path -> the path as spelled on disk, for the (rare) names stored decomposed (NFD).
    disk: dict[str, str] = field(default_factory=dict)
    # FIFOs, sockets, devices (and links to them): listed (a link to one is not broken), never
    # opened. Path -> what it is.
    special: dict[str, str] = field(default_factory=dict)
    # Paths the commit being checked deletes though they are still on disk (`git rm --cached`):
    # resolved as missing, never asked of the disk.
    removed: set[str] = field(default_factory=set)

    @classmethod
    def scan(cls, root: Path) -> VaultFiles:
        root = root.resolve()
        files: set[str] = set()
        escaping: set[str] = set()
        disk: dict[str, str] = {}
        special: dict[str, str] = {}
        root_real = str(root)
        stack = [("", str(root))]
        while stack:
            prefix, directory = stack.pop()
            try:
                entries = list(os.scandir(directory))
            except OSError:
                continue
            for entry in entries:
                name = entry.name
                if name.startswith(".") or name in SKIP_DIRS:
                    continue  # dot-folders and dotfiles are not notes
                rel = f"{prefix}{name}"
                key = rel if rel.isascii() else nfc(rel)
                try:
                    if entry.is_symlink():
                        real = os.path.realpath(entry.path)
                        if real != root_real and not real.startswith(root_real + os.sep):
                            escaping.add(key)
                        elif os.path.isdir(real):
                            continue  # never descend through a symlinked folder (loops)
                        elif os.path.exists(real) and not os.path.isfile(real):
                            special[key] = kind_of(os.stat(real).st_mode) or "special"
                    elif entry.is_dir(follow_symlinks=False):
                        stack.append((rel + "/", entry.path))
                        continue
                    elif not entry.is_file(follow_symlinks=False):
                        special[key] = kind_of(entry.stat(follow_symlinks=False).st_mode) \
                            or "special"
                except OSError:
                    continue
                files.add(key)
                if key != rel:  # a decomposed (NFD) name on disk: remember how to open it
                    disk[key] = rel
        return cls(root=root, files=files, escaping=escaping, disk=disk, special=special)

    def on_disk(self, rel: str) -> str:
        """The workspace-relative path to open for `rel` (its on-disk spelling)."""
        return self.disk.get(rel, rel) if self.disk else rel

    def markdown(self) -> list[str]:
        return sorted(p for p in self.files if p.endswith(MARKDOWN_EXTS))

    @property
    def by_name(self) -> dict[str, list[str]]:
        """casefolded basename -> paths; markdown files are also listed under their stem."""
        if self._by_name is None:
            index: dict[str, list[str]] = {}
            for path in self.files:
                base = path.rsplit("/", 1)[-1].casefold()
                index.setdefault(base, []).append(path)
                for ext in MARKDOWN_EXTS:
                    if base.endswith(ext):
                        index.setdefault(base[: -len(ext)], []).append(path)
            for paths in index.values():
                paths.sort()
            self._by_name = index
        return self._by_name

    def add(self, rel: str) -> None:
        self.files.add(rel)
        self._by_name = None
        self.version += 1

    def discard(self, rel: str) -> None:
        self.files.discard(rel)
        self.escaping.discard(rel)
        self._by_name = None
        self.version += 1


class Resolver:
    def __init__(self, files: VaultFiles, mode: str = "path") -> None:
        self.files = files
        self.mode = mode
        self._cache: dict[str, Resolution] = {}
        self._version = files.version
        self._listings: dict[str, set[str]] = {}

    def resolve(self, target: str, source: str) -> Resolution:
        """Where `target` (a link of note `source`) points. An empty target is the note itself."""
        if not target:
            return Resolution("ok", source)
        if self._version != self.files.version:  # a file appeared or went away
            self._cache.clear()
            self._listings.clear()
            self._version = self.files.version
        cached = self._cache.get(target)
        if cached is None:
            cached = self._resolve(target)
            self._cache[target] = cached
        return cached

    def _resolve(self, target: str) -> Resolution:
        reason = is_unsafe_target(target)
        if reason:
            return Resolution("outside", reason=reason)
        t = nfc(target)
        if t.startswith("./"):
            t = t[2:]
        found = self._exact(t)
        if found is not None:
            return found
        if self.mode == "obsidian":
            for ext in MARKDOWN_EXTS:
                found = self._exact(t + ext)
                if found is not None:
                    return found
            return self._by_name(t)
        return Resolution("broken", reason="no such file")

    def _exact(self, rel: str) -> Resolution | None:
        files = self.files
        if rel in files.removed:
            return None
        if rel in files.files:
            if rel in files.escaping:
                return Resolution("outside", reason="symlink resolves outside the vault")
            return Resolution("ok", rel)
        # Files the walk does not list (inside a symlinked folder, or a dot-folder such as
        # `.attachments/`) are asked of the disk, spelled exactly as linked: no empty or `.`
        # segment, and every name with its exact case (a case-insensitive disk would otherwise
        # accept `Digest/X.md`).
        parts = rel.split("/")
        if len(parts) < 2 or any(p in ("", ".") for p in parts):
            return None
        full = files.root.joinpath(*parts)
        if not os.path.isfile(full) or not self._spelled_exactly(parts):
            return None
        real = os.path.realpath(full)
        root = str(files.root)
        if real != root and not real.startswith(root + os.sep):
            return Resolution("outside", reason="resolves outside the vault")
        return Resolution("ok", rel)

    def _spelled_exactly(self, parts: list[str]) -> bool:
        folder = ""
        for part in parts:
            names = self._listings.get(folder)
            if names is None:
                try:
                    names = {nfc(n) for n in os.listdir(self.files.root / folder)}
                except OSError:
                    names = set()
                self._listings[folder] = names
            if part not in names:
                return False
            folder = f"{folder}/{part}" if folder else part
        return True

    def _by_name(self, target: str) -> Resolution:
        parts = [p for p in target.split("/") if p]
        if not parts:
            return Resolution("broken", reason="no such note")
        name = parts[-1].casefold()
        candidates = self.files.by_name.get(name, [])
        if len(parts) > 1:
            suffix = "/".join(parts).casefold()
            candidates = [c for c in candidates if _path_suffix_match(c.casefold(), suffix)]
        if not candidates:
            return Resolution("broken", reason="no note with that name")
        if len(candidates) > 1:
            return Resolution("ambiguous", candidates=tuple(candidates),
                              reason=f"{len(candidates)} notes match")
        only = candidates[0]
        if only in self.files.escaping:
            return Resolution("outside", reason="symlink resolves outside the vault")
        return Resolution("ok", only)


def _path_suffix_match(path: str, suffix: str) -> bool:
    for candidate in (path, *(path[: -len(e)] for e in MARKDOWN_EXTS if path.endswith(e))):
        if candidate == suffix or candidate.endswith("/" + suffix):
            return True
    return False
