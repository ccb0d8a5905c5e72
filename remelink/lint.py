"""lint-links: validate every wikilink and every digest node's Sources section (SPEC §4.1).

`main(argv)` is the pre-commit entry point (`remelink-lint-links`). It imports no Typer, Rich,
Whoosh or litellm, and PyYAML only when a digest node or a config file has to be read, so the
hook starts in a few tens of milliseconds. `remelink lint-links` calls the same `lint_links`.
"""

from __future__ import annotations

import os
import re
import sys
import time
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from remelink.config import PROBLEM_CODES, Settings, load_settings
from remelink.errors import EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, NoteError, RemelinkError
from remelink.vault import links as wl
from remelink.vault.notes import Note, decode
from remelink.vault.paths import MARKER_DIR, find_vault_root, nfc
from remelink.vault.resolve import MARKDOWN_EXTS, Resolution, Resolver, VaultFiles


@dataclass(frozen=True, slots=True)
class Problem:
    path: str
    line: int
    col: int
    level: str
    code: str
    message: str

    def format(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: {self.level} {self.code} {self.message}"


@dataclass
class LintReport:
    vault: Path
    problems: list[Problem] = field(default_factory=list)
    files_checked: int = 0
    links_checked: int = 0

    @property
    def errors(self) -> int:
        return sum(1 for p in self.problems if p.level == "error")

    @property
    def warnings(self) -> int:
        return sum(1 for p in self.problems if p.level == "warning")

    @property
    def exit_code(self) -> int:
        return EXIT_PROBLEMS if self.errors else EXIT_OK


_RELATION_RE = re.compile(r"(?<![\w-])([^\W\d][\w-]*)::[ \t]*!?\[\[")
_LIST_MARK_RE = re.compile(r"^(?:[ \t]*(?:[-+*]|\d{1,9}[.)]|>)[ \t]+)+")


def _has_letter(text: str) -> bool:
    for ch in text:
        if ch.isalpha() or unicodedata.category(ch).startswith("L"):
            return True
    return False


def is_bare_link_text(text: str) -> bool:
    """A bare link line: after removing list and quote markers, wikilinks, whitespace and
    punctuation, no letter or CJK character is left (SPEC §4)."""
    rest = wl.LINK_RE.sub(" ", _LIST_MARK_RE.sub("", text))
    return not _has_letter(rest)


class _Linter:
    def __init__(self, files: VaultFiles, settings: Settings) -> None:
        self.files = files
        self.root = files.root
        self.settings = settings
        self.resolver = Resolver(files, settings.resolution)
        self.texts: dict[str, Note | None] = {}
        self.outlines: dict[str, tuple[set[str], set[str], int]] = {}
        self.problems: list[Problem] = []
        self.links_checked = 0
        folders = settings.folders
        self.digest_prefix = folders.digest + "/"
        self.source_prefixes = (folders.daily + "/", folders.resource + "/")
        self.levels = dict(settings.lint)
        # Links of digest nodes to other digest nodes, for orphan-node.
        self.digest_edges: dict[str, set[str]] = {}

    # -- reading -------------------------------------------------------------------------
    def note(self, rel: str) -> Note | None:
        if rel in self.texts:
            return self.texts[rel]
        try:
            full = self.root / rel
            size = full.stat().st_size
            if size > self.settings.max_note_bytes:
                raise NoteError(f"file is {size / 1048576:.1f} MiB, over the "
                                f"{self.settings.max_note_bytes // 1048576} MiB limit for notes")
            note: Note | None = decode(rel, full.read_bytes(), max_bytes=self.settings.max_note_bytes)
        except (OSError, NoteError):
            note = None
        self.texts[rel] = note
        return note

    def outline(self, rel: str) -> tuple[set[str], set[str], int] | None:
        cached = self.outlines.get(rel)
        if cached is not None:
            return cached
        note = self.note(rel)
        if note is None:
            return None
        o = wl.outline(note.body, note.body_line)
        result = ({wl.heading_key(h.text) for h in o.headings}, o.block_ids, note.line_count)
        self.outlines[rel] = result
        return result

    def report(self, path: str, line: int, col: int, code: str, message: str,
               level: str | None = None) -> None:
        level = level or self.levels.get(code, "error")
        if level == "off":
            return
        self.problems.append(Problem(path, line, col, level, code, message))

    # -- checks --------------------------------------------------------------------------
    def check_file(self, rel: str) -> None:
        is_digest = rel.startswith(self.digest_prefix) and rel.endswith(MARKDOWN_EXTS)
        try:
            full = self.root / rel
            size = full.stat().st_size
            if size > self.settings.max_note_bytes:
                raise NoteError(f"file is {size / 1048576:.1f} MiB, over the "
                                f"{self.settings.max_note_bytes // 1048576} MiB limit for notes",
                                hint="split it, or raise limits.max_note_bytes")
            note = decode(rel, full.read_bytes(), max_bytes=self.settings.max_note_bytes)
        except NoteError as exc:
            self.texts[rel] = None
            message = str(exc)
            self.report(rel, 1, 1, "frontmatter" if is_digest else "unreadable",
                        f"cannot read note: {message}")
            return
        except OSError as exc:
            self.texts[rel] = None
            self.report(rel, 1, 1, "unreadable", f"cannot read note: {exc.strerror or exc}")
            return
        self.texts[rel] = note
        if is_digest:
            self.check_digest(rel, note)
        else:
            for link in wl.parse_links(note.body, note.body_line):
                self.check_link(rel, link)

    def check_link(self, rel: str, link: wl.Link) -> Resolution:
        self.links_checked += 1
        res = self.resolver.resolve(link.target, rel)
        shown = link.raw
        if res.status == "ok":
            if link.anchor is not None and res.path is not None:
                self.check_anchor(rel, link, res.path)
        elif res.status == "broken":
            hint = self._suggest(link.target)
            self.report(rel, link.line, link.col, "broken-link",
                        f"{shown}: target does not exist{hint}")
        elif res.status == "ambiguous":
            shown_candidates = ", ".join(res.candidates[:4])
            more = f" and {len(res.candidates) - 4} more" if len(res.candidates) > 4 else ""
            self.report(rel, link.line, link.col, "ambiguous-link",
                        f"{shown}: {len(res.candidates)} notes match ({shown_candidates}{more}); "
                        "write the folder to choose one")
        else:
            self.report(rel, link.line, link.col, "outside-vault", f"{shown}: {res.reason}")
        return res

    def _suggest(self, target: str) -> str:
        name = target.rsplit("/", 1)[-1].casefold()
        matches = self.files.by_name.get(name) or self.files.by_name.get(name + ".md") or []
        if self.settings.resolution == "path" and len(matches) == 1:
            return f" (did you mean {matches[0]}?)"
        return ""

    def check_anchor(self, rel: str, link: wl.Link, target: str) -> None:
        anchor = link.anchor or ""
        if not anchor:
            return
        is_md = target.endswith(MARKDOWN_EXTS)
        ranges = wl.parse_line_anchor(anchor)
        if ranges is not None:
            if not (is_md or target.endswith(".txt")):
                return
            info = self.outline(target)
            if info is None:
                return
            line_count = info[2]
            for start, end in ranges:
                if start < 1 or end < start or end > line_count:
                    self.report(rel, link.line, link.col, "missing-anchor",
                                f"{link.raw}: line range L{start}-L{end} is outside {target} "
                                f"({line_count} lines)")
                    return
            return
        if not is_md:
            return  # `#page=3` on a PDF and the like: nothing we can check
        info = self.outline(target)
        if info is None:
            return
        headings, block_ids, _ = info
        if anchor.startswith("^"):
            if anchor[1:] not in block_ids:
                self.report(rel, link.line, link.col, "missing-anchor",
                            f"{link.raw}: block ^{anchor[1:]} not found in {target}")
            return
        for part in anchor.split("#"):
            key = wl.heading_key(part)
            if key and key not in headings:
                self.report(rel, link.line, link.col, "missing-anchor",
                            f"{link.raw}: heading '{part.strip()}' not found in {target}")
                return

    def check_digest(self, rel: str, note: Note) -> None:
        from remelink.vault import frontmatter

        try:
            meta = frontmatter.load(note)
        except NoteError as exc:
            self.report(rel, 1, 1, "frontmatter", str(exc).removeprefix(f"{rel}: "))
            meta = None
        if meta is not None:
            for key in ("name", "description"):
                value = meta.get(key)
                if value is None or (isinstance(value, str) and not value.strip()):
                    state = "missing" if key not in meta else "empty"
                    self.report(rel, 1, 1, "frontmatter", f"'{key}' is {state} in the frontmatter")

        result = wl.scan(note.body, note.body_line)
        section = _sources_section(result.outline.headings)
        edges = self.digest_edges.setdefault(rel, set())
        resolved: dict[int, Resolution] = {}
        for i, link in enumerate(result.links):
            res = self.check_link(rel, link)
            resolved[i] = res
            if res.status == "ok" and res.path and res.path != rel and \
                    res.path.startswith(self.digest_prefix):
                edges.add(res.path)

        if section is None:
            self.report(rel, note.body_line, 1, "missing-sources",
                        "digest node has no '## Sources' section citing its daily/resource notes")
        else:
            start, end = section
            in_section = [(i, lk) for i, lk in enumerate(result.links) if start < lk.line < end]
            if not in_section:
                self.report(rel, start, 1, "empty-sources",
                            "'## Sources' has no wikilink; cite the raw notes as [[daily/...]] "
                            "inside a sentence")
            for i, link in in_section:
                res = resolved[i]
                dest = res.path if res.status == "ok" and res.path else nfc(link.target)
                if not link.target or not dest.startswith(self.source_prefixes):
                    self.report(rel, link.line, link.col, "non-source-target",
                                f"{link.raw}: Sources cite daily/ or resource/ notes only; "
                                "link related digest nodes in the body prose")
        bare_level_elsewhere = _milder(self.levels.get("bare-source-link", "error"), "warning")
        for para in result.paragraphs:
            text = wl.mask_code(wl.paragraph_text(para))
            if "[[" not in text:
                continue
            first_line = para[0][0]
            for m in _RELATION_RE.finditer(text):
                line, col = _position(para, m.start())
                self.report(rel, line, col, "relation-field",
                            f"relation field '{m.group(1)}::' - weave the link into a sentence "
                            "instead")
            if not wl.LINK_RE.search(text) or not is_bare_link_text(text):
                continue
            m = wl.LINK_RE.search(text)
            line, col = _position(para, m.start() if m else 0)
            if section is not None and section[0] < first_line < section[1]:
                self.report(rel, line, col, "bare-source-link",
                            "bare link line in Sources: say in a sentence what this source supports")
            else:
                self.report(rel, line, col, "bare-source-link",
                            "bare link line: weave the link into a sentence",
                            level=bare_level_elsewhere)

    def check_orphans(self, candidates: Iterable[str]) -> None:
        inbound: dict[str, int] = {}
        for src, targets in self.digest_edges.items():
            for t in targets:
                if t != src:
                    inbound[t] = inbound.get(t, 0) + 1
        for rel in candidates:
            if rel in self.digest_edges and not self.digest_edges[rel] and not inbound.get(rel):
                self.report(rel, 1, 1, "orphan-node",
                            "no link to or from another digest node")


def _milder(level: str, cap: str) -> str:
    order = {"off": 0, "warning": 1, "error": 2}
    return level if order[level] <= order[cap] else cap


def _position(para: list[tuple[int, int, str]], pos: int) -> tuple[int, int]:
    acc = 0
    for line, col, seg in para:
        if pos <= acc + len(seg):
            return line, col + (pos - acc) + 1
        acc += len(seg) + 1
    return para[-1][0], para[-1][1] + 1


def _sources_section(headings: Sequence[wl.Heading]) -> tuple[int, int] | None:
    """(heading line, end line exclusive) of the first level-2 'Sources' heading."""
    for i, h in enumerate(headings):
        if h.level == 2 and h.text.strip().rstrip(":").strip().casefold() == "sources":
            end = next((later.line for later in headings[i + 1:] if later.level <= 2), 1 << 30)
            return h.line, end
    return None


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
               include_all: bool = False) -> LintReport:
    """Check the whole vault, or only `paths` (workspace-relative) resolving against the whole
    vault. With `include_all`, also report links elsewhere that point at `paths` (which may no
    longer exist: renames and deletions)."""
    settings = settings or load_settings(vault)
    files = VaultFiles.scan(vault)
    linter = _Linter(files, settings)
    report = LintReport(vault=files.root)
    markdown = files.markdown()
    if paths is None:
        targets = markdown
    else:
        targets = sorted({p for p in paths if p.endswith(MARKDOWN_EXTS) and p in files.files})
    for rel in targets:
        linter.check_file(rel)
    checked = set(targets)
    if paths is not None and include_all:
        wanted = set(paths)
        wanted_folded = [w.casefold() for w in wanted]
        for rel in markdown:
            if rel in checked:
                continue
            note = linter.note(rel)
            if note is None:
                continue
            for link in wl.parse_links(note.body, note.body_line):
                res = linter.resolver.resolve(link.target, rel)
                if _points_at(link, res, wanted, wanted_folded, settings.resolution):
                    linter.check_link(rel, link)
    if settings.level("orphan-node") != "off":
        digest_nodes = [p for p in markdown if p.startswith(linter.digest_prefix)]
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
        linter.check_orphans([t for t in targets if t.startswith(linter.digest_prefix)])
    report.problems = sorted(linter.problems, key=lambda p: (p.path, p.line, p.col, p.code))
    report.files_checked = len(targets)
    report.links_checked = linter.links_checked
    return report


def render_text(report: LintReport) -> str:
    return "".join(p.format() + "\n" for p in report.problems)


def render_json(report: LintReport) -> str:
    import json

    return json.dumps([asdict(p) for p in report.problems], ensure_ascii=False, indent=2) + "\n"


def summary_line(report: LintReport, seconds: float) -> str:
    if not report.problems:
        verdict = "no problems"
    else:
        verdict = f"{report.errors} error(s), {report.warnings} warning(s)"
    return (f"lint-links: {verdict} in {report.files_checked} file(s), "
            f"{report.links_checked} link(s) checked ({seconds:.2f} s)")


def to_vault_paths(vault: Path, raw_paths: Sequence[str], cwd: Path | None = None) -> tuple[list[str], list[str]]:
    """Command-line paths (relative to the working directory, as pre-commit passes them) as
    workspace-relative paths; the second list holds paths that are outside the vault."""
    cwd = cwd or Path.cwd()
    root = vault.resolve()
    inside: list[str] = []
    outside: list[str] = []
    for raw in raw_paths:
        full = Path(os.path.abspath(cwd / raw))
        try:
            rel = full.relative_to(root).as_posix()
        except ValueError:
            outside.append(raw)
            continue
        if rel.split("/", 1)[0] == MARKER_DIR:
            continue
        inside.append(nfc(rel))
    return inside, outside


def _vault_for(paths: Sequence[str]) -> Path | None:
    """The nearest ancestor of the first given path holding `.remelink/` (the vault may be a
    sub-folder of the repository pre-commit runs in)."""
    for raw in paths:
        here = Path(os.path.abspath(raw)).parent
        for candidate in (here, *here.parents):
            if (candidate / MARKER_DIR).is_dir():
                return candidate
    return None


def run(raw_paths: Sequence[str], *, vault: str | None, fmt: str, include_all: bool,
        resolution: str | None, out: object = None, err: object = None) -> int:
    """Shared by the console script and `remelink lint-links`: lint, print, return the exit code."""
    stdout = out if out is not None else sys.stdout
    stderr = err if err is not None else sys.stderr
    started = time.perf_counter()
    if vault is not None:
        root = find_vault_root(vault)
    else:
        root = (_vault_for(raw_paths) if raw_paths else None) or find_vault_root()
    if not root.is_dir():
        print(f"remelink lint-links: vault {root} is not a folder (pass --vault PATH)", file=stderr)  # type: ignore[call-overload]
        return EXIT_USAGE
    settings = load_settings(root, overrides={"links": {"resolution": resolution}} if resolution else None)
    paths: list[str] | None = None
    if raw_paths:
        paths, outside = to_vault_paths(root, raw_paths)
        for raw in outside:
            print(f"remelink lint-links: {raw} is outside the vault {root}; skipped", file=stderr)  # type: ignore[call-overload]
    report = lint_links(root, settings, paths, include_all=include_all)
    rendered = render_json(report) if fmt == "json" else render_text(report)
    stdout.write(rendered)  # type: ignore[attr-defined]
    print(summary_line(report, time.perf_counter() - started), file=stderr)  # type: ignore[call-overload]
    return report.exit_code


def main(argv: Sequence[str] | None = None) -> int:
    """`remelink-lint-links [PATHS...]`: the pre-commit hook (no Typer, no Rich)."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="remelink-lint-links",
        description="Validate every wikilink and every digest node's '## Sources' section. "
                    "With PATHS (as pre-commit passes them) only those files are checked, "
                    "resolving against the whole vault.")
    parser.add_argument("paths", nargs="*", metavar="PATHS", help="markdown files to check")
    parser.add_argument("--vault", help="vault root (default: nearest folder holding .remelink/)")
    parser.add_argument("--format", choices=("text", "json"), default="text", dest="fmt")
    parser.add_argument("--all", action="store_true", dest="include_all",
                        help="also report links elsewhere that point at PATHS (renames, deletions)")
    parser.add_argument("--resolution", choices=("path", "obsidian"),
                        help="override links.resolution from the config")
    parser.add_argument("--codes", action="store_true", help="list problem codes and exit")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0) and EXIT_USAGE
    if args.codes:
        for code, level in PROBLEM_CODES.items():
            print(f"{code:20} {level}")
        return EXIT_OK
    try:
        return run(args.paths, vault=args.vault, fmt=args.fmt, include_all=args.include_all,
                   resolution=args.resolution)
    except RemelinkError as exc:
        print(f"remelink-lint-links: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
