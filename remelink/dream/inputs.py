"""The raw notes a dream run looks at (SPEC §8): `daily/` and `resource/` markdown and text files,
optionally restricted to a window of dates, and the ones that cannot be inputs.

`--date D --scan-days N` is the window of N days ending at D: `daily/<d>.md`, `daily/<d>/**` and
`resource/<d>/**`. Without it every note is a candidate. Nothing here ever writes, and nothing
here opens a file: the walk uses directory entries and `stat` only.

What an input is (SPEC §1, "the vault is the boundary"): a regular file whose real location is
inside the vault, with a name remelink can cite in a wikilink. Everything else found in the raw
folders is *refused*, one line each with the reason, and never becomes an input (so it is never
checkpointed): a symlink leading out of the vault, a symlinked folder (never followed: loops,
and the same notes twice), a FIFO, socket or device, a name with a control character, a
bidirectional mark, a backslash or a character no wikilink can carry (`# | [ ]`), a name that is
not UTF-8, a path longer than the system allows, two names that differ only in Unicode normal
form. A name stored decomposed (NFD, as macOS writes it) is an input under its NFC path; spaces,
`%`, `^` and emoji are fine. The digest folder gets the same walk for its problems only (the
index skips such files; the run says so).
"""

from __future__ import annotations

import datetime as dt
import errno
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from remelink.config import Settings
from remelink.errors import SandboxError, UsageError
from remelink.vault.boundary import FileBytes, is_inside, kind_of, read_file, vault_real
from remelink.vault.paths import BUCKETS, disk_path, name_problem, nfc, shown

INPUT_EXTS = (".md", ".markdown", ".txt")
MAX_SCAN_DAYS = 36_525  # `--scan-days 999999999` built a tuple of a billion dates
NODE_EXTS = (".md",)


@dataclass(frozen=True)
class Window:
    date: str
    days: tuple[str, ...]  # oldest first

    @classmethod
    def of(cls, date: str | None, scan_days: int | None) -> Window | None:
        if date is None and scan_days is None:
            return None
        try:
            end = dt.date.fromisoformat(date) if date else dt.date.today()
        except ValueError:
            raise UsageError(f"--date must be YYYY-MM-DD, got {date!r}") from None
        n = 1 if scan_days is None else scan_days
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_SCAN_DAYS:
            raise UsageError(f"--scan-days must be a whole number from 1 to {MAX_SCAN_DAYS} "
                             f"(a century), got {scan_days}")
        try:
            days = tuple((end - dt.timedelta(days=i)).isoformat() for i in range(n - 1, -1, -1))
        except OverflowError:
            raise UsageError(f"--scan-days {n} before --date {end.isoformat()} reaches before "
                             "year 1", hint="use a shorter window") from None
        return cls(end.isoformat(), days)

    def contains(self, rel: str, daily: str, resource: str) -> bool:
        parts = rel.split("/")
        if parts[0] == daily:
            if len(parts) == 2:
                stem = parts[1].rsplit(".", 1)[0]
                return stem in self.days
            return parts[1] in self.days
        if parts[0] == resource:
            return len(parts) > 2 and parts[1] in self.days
        return False


@dataclass
class Scan:
    """What a walk of the raw folders found."""

    inputs: list[str] = field(default_factory=list)  # canonical (NFC) paths, sorted
    # shown path -> why it is not an input (one line each, printable)
    refused: dict[str, str] = field(default_factory=dict)
    # problems of the digest folder, as "path: reason" lines (files the index skips)
    notices: list[str] = field(default_factory=list)


def scan(vault: Path, settings: Settings, window: Window | None) -> Scan:
    """The inputs of the raw folders, what was refused there and why, and the problems of the
    digest folder."""
    folders = settings.folders
    walker = _Walker(vault)
    out = Scan()
    found: list[tuple[str, str]] = []  # (canonical, on-disk spelling)
    for top in (folders.daily, folders.resource):
        for rel, disk, problem in walker.walk(top, INPUT_EXTS):
            wanted = window is None or window.contains(rel, folders.daily, folders.resource) \
                or (problem is not None and rel.endswith("/")
                    and window.contains(rel + "x", folders.daily, folders.resource))
            if not wanted:
                continue
            if problem is None:
                found.append((rel, disk))
            else:  # keyed by the name as shown; an NFD twin of a refused name gets its own line
                key = shown(rel)
                out.refused[key if key not in out.refused else
                            f"{shown(disk)} (decomposed)"] = problem
    inputs, twins = _one_per_name(found)
    out.inputs = inputs
    out.refused.update(twins)
    nodes: list[tuple[str, str]] = []
    for rel, disk, problem in walker.walk(folders.digest, NODE_EXTS):
        if problem is None:
            nodes.append((rel, disk))
        else:
            out.notices.append(f"{shown(rel)}: {problem}")
    _, twins = _one_per_name(nodes)
    out.notices += [f"{rel}: {why}" for rel, why in twins.items()]
    return out


def check_write_folders(vault: Path, settings: Settings) -> None:
    """Refuse, before anything runs, a digest folder (or bucket folder) that is a symlink, or
    not a folder: every node write would go through it (out of the vault, for a link leading
    out), and remelink never writes through a symlink. One line instead of one per unit."""
    digest = settings.folders.digest
    for rel in (digest, *(f"{digest}/{b}" for b in BUCKETS)):
        try:
            st = os.lstat(vault / rel)
        except OSError:
            continue
        if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
            what = "a symlink" if stat.S_ISLNK(st.st_mode) else kind_of(st.st_mode)
            raise SandboxError(f"{rel} is {what}; remelink writes digest nodes only into a real "
                               "folder of the vault, never through a symlink",
                               hint=f"replace {rel} by a folder (move the notes in)")


def walk_notes(vault: Path, top: str, exts: tuple[str, ...] = NODE_EXTS
               ) -> list[tuple[str, str, str | None]]:
    """(canonical path, on-disk path, problem or None) for every file under `top` with one of
    `exts`, and every entry there that cannot be one (with the reason). Opens nothing."""
    return _Walker(vault).walk(top, exts)


def read_input(vault: Path, rel: str, *, limit: int, root_real: str | None = None) -> FileBytes:
    """The bytes of input `rel` (None when over `limit`: not read), through the vault boundary
    (`fsio.read_file`), under its on-disk spelling. Raises NoteError or OSError."""
    return read_file(disk_path(vault, rel), root_real=root_real or vault_real(vault), limit=limit,
                     rel=rel)


def _one_per_name(found: list[tuple[str, str]]) -> tuple[list[str], dict[str, str]]:
    """One file per canonical path: of two names that differ only in Unicode normal form (two
    files on Linux, one on macOS), the NFC one is read; the other is refused."""
    by_name: dict[str, list[str]] = {}
    for rel, disk in found:
        by_name.setdefault(rel, []).append(disk)
    refused: dict[str, str] = {}
    for rel, disks in by_name.items():
        for disk in disks:
            if disk != rel and len(disks) > 1:
                refused[shown(disk) + " (decomposed)"] = (
                    f"another file has the same name in another Unicode form ({rel}); only "
                    "that one is read; merge the two files and delete this one")
    return sorted(by_name), refused


class _Walker:
    """A directory walk that never opens a file, never follows a symlinked folder, and says
    why each entry it leaves out is left out."""

    def __init__(self, vault: Path) -> None:
        self.vault = vault
        self.root_real = vault_real(vault)
        try:
            self.path_max = os.pathconf(vault, "PC_PATH_MAX")
        except (OSError, ValueError):
            self.path_max = 4096

    def walk(self, top: str,
             exts: tuple[str, ...]) -> list[tuple[str, str, str | None]]:
        """(canonical path, on-disk path, problem or None) for every candidate under `top`;
        folders that cannot be walked are reported with a trailing `/`."""
        out: list[tuple[str, str, str | None]] = []
        base = self.vault / top
        try:
            st = os.lstat(base)
        except OSError:
            return out
        if stat.S_ISLNK(st.st_mode):
            out.append((f"{top}/", f"{top}/", self._folder_link(base)))
            return out
        if not stat.S_ISDIR(st.st_mode):
            return out
        stack = [top]
        while stack:
            rel_dir = stack.pop()
            directory = self.vault / rel_dir
            try:
                entries = sorted(os.scandir(directory), key=lambda e: e.name, reverse=True)
            except OSError as exc:
                out.append((nfc(rel_dir) + "/", rel_dir + "/", self._unlistable(exc, directory)))
                continue
            for entry in entries:
                name = entry.name
                if name.startswith("."):
                    continue  # hidden files and folders (.obsidian, .DS_Store) are not notes
                disk = f"{rel_dir}/{name}"
                rel = nfc(disk)
                try:
                    if entry.is_symlink():
                        problem = self._symlink(entry, exts)
                        if problem == "":
                            continue  # a link to a file that is no note (an image)
                    elif entry.is_dir(follow_symlinks=False):
                        problem = name_problem(rel)
                        if problem is None:
                            stack.append(disk)
                            continue
                        out.append((rel + "/", disk + "/", f"{problem} (its notes are not read)"))
                        continue
                    elif entry.is_file(follow_symlinks=False):
                        if not name.lower().endswith(exts):
                            continue  # images, PDFs: not notes
                        problem = None
                    else:
                        problem = (f"is {kind_of(entry.stat(follow_symlinks=False).st_mode)}, "
                                   "not a regular file; not opened")
                except OSError as exc:
                    problem = f"cannot read its type: {exc.strerror or exc}"
                if problem is None:
                    problem = name_problem(rel)
                if problem is None and len(os.fsencode(entry.path)) >= self.path_max:
                    problem = (f"its path is longer than this system allows ({self.path_max} "
                               "bytes); move the note to a shallower folder")
                out.append((rel, disk, problem or None))
        return out

    def _symlink(self, entry: os.DirEntry[str], exts: tuple[str, ...]) -> str | None:
        """Why a symlink is refused; None when it is an input (a link to a regular file inside
        the vault); "" when it is not a candidate at all (a link to a non-note file)."""
        real = os.path.realpath(entry.path)
        if not is_inside(self.root_real, real):
            if os.path.isdir(real):
                return self._folder_link(Path(entry.path))
            return "a symlink whose real location is outside the vault; not read"
        try:
            st = os.stat(real)
        except OSError:
            return "a broken symlink (its target does not exist)"
        if stat.S_ISDIR(st.st_mode):
            return self._folder_link(Path(entry.path))
        if not stat.S_ISREG(st.st_mode):
            return f"a symlink to {kind_of(st.st_mode)}, not a regular file; not opened"
        if not entry.name.lower().endswith(exts):
            return ""
        return None

    def _folder_link(self, path: Path) -> str:
        real = os.path.realpath(path)
        if not is_inside(self.root_real, real):
            return ("a symlinked folder whose real location is outside the vault; not read "
                    "(move the notes into the vault)")
        target = os.path.relpath(real, self.root_real).replace(os.sep, "/")
        return (f"a symlinked folder (to {nfc(target)}/); not followed: remelink reads notes "
                "where they really are (move them here, or link the notes one by one)")

    def _unlistable(self, exc: OSError, directory: Path) -> str:
        if exc.errno == errno.ENAMETOOLONG or len(os.fsencode(str(directory))) >= self.path_max:
            return (f"its path is longer than this system allows ({self.path_max} bytes); the "
                    "notes under it cannot be read (move them to a shallower folder)")
        return f"cannot list this folder: {exc.strerror or exc}; its notes are not read"
