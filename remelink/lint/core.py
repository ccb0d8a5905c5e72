"""`lint_links`: check the whole vault or some paths, resolving against the whole vault; and
`check_note` for one in-memory note (a staged node)."""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from remelink.config import Settings, load_settings
from remelink.errors import NoteError
from remelink.lint.checks import LintReport, Problem, _Linter
from remelink.lint.parallel import check_files, default_jobs
from remelink.lint.suggest import Suggester
from remelink.vault import links as wl
from remelink.vault.marks import deleted_marks
from remelink.vault.notes import Note, decode
from remelink.vault.paths import glob_matcher, nfc
from remelink.vault.resolve import MARKDOWN_EXTS, Resolution, VaultFiles


def _points_at(link: wl.Link, res: Resolution, wanted: set[str], wanted_folded: list[str],
               mode: str) -> bool:
    if res.path in wanted or any(c in wanted for c in res.candidates):
        return True
    if res.status != "broken":
        return False
    target = nfc(link.target)
    if mode == "path":
        return target in wanted
    folded = target.casefold()
    from remelink.vault.resolve import _path_suffix_match

    return any(_path_suffix_match(w, folded) for w in wanted_folded)


def lint_links(vault: Path, settings: Settings | None = None, paths: Sequence[str] | None = None,
               include_all: bool = False, jobs: int | None = 1,
               gone: Mapping[str, str | None] | None = None) -> LintReport:
    """Check the whole vault, or only `paths` (workspace-relative) resolving against the whole
    vault. With `include_all`, also report links elsewhere that point at `paths` (which may no
    longer exist: renames and deletions). `gone` maps paths a commit deletes (None) or renames
    (to the new path, as git reports it): links elsewhere that point at them are checked too,
    and a broken one's hint names the new path. `jobs` is the number of processes checking
    files (None: `default_jobs`); the report is the same for any value."""
    import gc

    # Linting allocates millions of small objects and no reference cycles to speak of: the
    # cyclic collector would only re-walk them (about 10 % of the run). Refcounting still frees.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        settings = settings or load_settings(vault)
        report = _lint_links(vault, settings, paths, include_all, jobs, gone or {})
        if settings.resolution_from or settings.resolution != "path" or \
                not any(p.code == "broken-link" for p in report.problems):
            return report
        # Nothing chose the resolution (no `.obsidian/`, no links.resolution anywhere) and a
        # link is broken as a path: let the vault's links decide, as init would (SPEC §3.2).
        # Only then is every note read for it; a vault init set up names its resolution.
        from remelink.vault.obsidian import detect

        found = detect(vault)
        if found.resolution != "obsidian":
            return report
        report = _lint_links(vault, replace(settings, resolution="obsidian",
                                            resolution_from=found.reason),
                             paths, include_all, jobs, gone or {})
        report.resolved_by_links = found.reason
        return report
    finally:
        if was_enabled:
            gc.enable()


def _mentions(linter: _Linter, rel: str, stems: tuple[str, ...]) -> bool:
    """Whether note `rel` can hold a link to one of the paths whose file names (without
    extension) are `stems`: every such link spells the name, so a note that does not is never
    parsed. In path mode the spelling is exact (NFC or NFD bytes); in obsidian mode it is
    case-insensitive. A note that does is decoded once and kept for the checks."""
    try:
        data = linter.read_bytes(rel)
    except (OSError, NoteError):
        return False
    if linter.settings.resolution == "path":
        found = any(n in data for n in _spellings(stems))
    elif data.isascii():
        lowered = data.lower().decode("ascii")
        found = any(n.casefold() in lowered for n in stems)
    else:
        text = unicodedata.normalize("NFC", data.decode("utf-8", "replace")).casefold()
        found = any(n.casefold() in text for n in stems)
    if not found:
        return False
    try:
        linter.texts[rel] = decode(rel, data, max_bytes=linter.settings.max_note_bytes)
    except NoteError:
        linter.texts[rel] = None
    return True


@functools.cache
def _spellings(stems: tuple[str, ...]) -> tuple[bytes, ...]:
    return tuple({unicodedata.normalize(form, s).encode("utf-8")
                  for s in stems for form in ("NFC", "NFD")})


def _stem(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    for ext in MARKDOWN_EXTS:
        if name.endswith(ext):
            return name[: -len(ext)]
    return name


def _lint_links(vault: Path, settings: Settings, paths: Sequence[str] | None,
                include_all: bool, jobs: int | None,
                gone: Mapping[str, str | None]) -> LintReport:
    files = VaultFiles.scan(vault)
    if gone:
        # Deleted from the index by the commit (`git rm --cached`, or the old name of a
        # rename) but still on disk: after the commit it is gone, so links to it break.
        for old in gone:
            files.discard(old)
        files.removed |= set(gone)
    linter = _Linter(files, settings)
    linter.obsidian_hint = True
    if gone:
        linter.suggester = Suggester(files, settings.resolution, gone, obsidian_hint=True)
    linter.defer_anchors = True
    report = LintReport(vault=files.root)
    markdown = files.markdown()
    if paths is None:
        targets = markdown
    else:
        # A folder stands for the notes under it (`remelink lint-links digest/`).
        folders = tuple(p.rstrip("/") + "/" for p in paths
                        if p not in files.files and (files.root / p).is_dir())
        targets = sorted({p for p in paths if p.endswith(MARKDOWN_EXTS) and p in files.files} |
                         {p for p in markdown if folders and p.startswith(folders)})
    excluded = glob_matcher(settings.lint_exclude)
    if excluded is not None:
        # Not checked (templates, exports), though still link targets.
        report.excluded = sum(1 for p in targets if excluded(p))
        targets = [p for p in targets if not excluded(p)]
    check_files(linter, targets, default_jobs(len(targets)) if jobs is None else jobs)
    checked = set(targets)
    wanted = set(paths or ()) if paths is not None and include_all else set()
    wanted |= set(gone)
    if wanted:
        wanted_folded = [w.casefold() for w in wanted]
        needles = tuple(sorted({_stem(w) for w in wanted} - {""}))
        for rel in markdown:
            if rel in checked or (excluded is not None and excluded(rel)):
                continue
            if not _mentions(linter, rel, needles):
                continue
            note = linter.note(rel)
            if note is None:
                continue
            linter.marks = deleted_marks(note.body) if linter.is_node(rel) else {}
            for link in wl.parse_links(note.body, note.body_line):
                res = linter.resolver.resolve(link.target, rel)
                if _points_at(link, res, wanted, wanted_folded, settings.resolution):
                    linter.check_link(rel, link)
            linter.marks = {}
    linter.flush_anchors()
    if settings.level("orphan-node") != "off":
        digest_nodes = [p for p in markdown if linter.is_node(p)]
        for rel in digest_nodes:
            if rel not in linter.digest_edges:
                note = linter.note(rel)
                if note is None:
                    continue
                edges = linter.digest_edges.setdefault(rel, set())
                for link in wl.parse_links(note.body, note.body_line):
                    res = linter.resolver.resolve(link.target, rel)
                    if res.status == "ok" and res.path and res.path != rel and \
                            res.path.startswith(linter.digest_prefix):
                        edges.add(res.path)
        linter.check_orphans([t for t in targets if linter.is_node(t)])
    report.problems = sorted(linter.problems, key=lambda p: (p.path, p.line, p.col, p.code))
    report.files_checked = len(targets)
    report.links_checked = linter.links_checked
    return report


def check_note(files: VaultFiles, settings: Settings, note: Note) -> list[Problem]:
    """The §4.1 checks for one in-memory note (a staged node not yet on disk), resolving its
    links against `files`. Used by the integration guards before a receipt is accepted."""
    linter = _Linter(files, settings)
    linter.texts[note.path] = note
    if note.path.startswith(linter.digest_prefix):
        linter.check_digest(note.path, note)
    else:
        for link in wl.parse_links(note.body, note.body_line):
            linter.check_link(note.path, link)
    return sorted(linter.problems, key=lambda p: (p.line, p.col, p.code))
