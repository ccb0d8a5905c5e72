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
from typing import TextIO

from remelink.config import PROBLEM_CODES, Settings, load_settings
from remelink.errors import EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, NoteError, RemelinkError
from remelink.vault import links as wl
from remelink.vault.notes import Note, decode, unclosed_frontmatter
from remelink.vault.paths import BUCKETS, MARKER_DIR, find_vault_root, nfc
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

# Frontmatter written as plain `key: value` lines (what remelink itself writes) is read without
# PyYAML: for these shapes PyYAML's result is certain, and lint only needs to know whether
# `name` and `description` are present and non-empty. Anything else goes to PyYAML.
# Refused: tabs, lone CR, characters PyYAML will not read or treats as line breaks, BOMs.
_FM_UNSAFE_RE = re.compile(r"[^\n\r\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd"
                           r"\U00010000-\U0010ffff]|\r(?!\n)")
_FM_LINE_RE = re.compile(
    r"([A-Za-z_][A-Za-z0-9_-]{0,100}):"
    r"(?: +(?:\"([^\"\\]*)\"|'([^']*)'|(\[(?:[^\W\d_][\w-]*(?:, *[^\W\d_][\w-]*)*)?\])"
    r"|([^\W\d_][^:#]*?)))? *")
_YAML_NULLS = ("null", "Null", "NULL")


def _simple_frontmatter(text: str | None) -> dict[str, bool] | None:
    """{key: value is empty (null or blank)} for a frontmatter block of plain `key: value`
    lines (double- or single-quoted strings without escapes, flow lists of words, plain words,
    comments); None for any other shape, which PyYAML must read."""
    if text is None:
        return {}
    if _FM_UNSAFE_RE.search(text):
        return None
    out: dict[str, bool] = {}
    for line in text.split("\n"):
        line = line.removesuffix("\r")
        stripped = line.lstrip(" ")
        if not stripped or stripped[0] == "#":
            continue
        m = _FM_LINE_RE.fullmatch(line)
        if m is None or m.group(1) in out:
            return None  # another shape, or a repeated key (PyYAML reports it)
        double, single, flow, plain = m.group(2, 3, 4, 5)
        if double is not None or single is not None:
            out[m.group(1)] = not (double if double is not None else single).strip()
        else:
            out[m.group(1)] = flow is None and (plain is None or plain in _YAML_NULLS)
    return out
_LIST_MARK_RE = re.compile(r"^(?:[ \t]*(?:[-+*]|\d{1,9}[.)]|>)[ \t]+)+")


def _has_letter(text: str) -> bool:
    for ch in text:  # noqa: SIM110 - a plain loop, faster than any() over a generator
        if ch.isalpha() or unicodedata.category(ch).startswith("L"):
            return True
    return False


def is_bare_link_text(text: str) -> bool:
    """A bare link line: after removing list and quote markers, wikilinks, whitespace and
    punctuation, no letter or CJK character is left (SPEC §4)."""
    if text[:1].isalpha():  # the usual sentence: a letter that no marker or link can start
        return False
    rest = wl.LINK_RE.sub(" ", _LIST_MARK_RE.sub("", text))
    return not _has_letter(rest)


class _Linter:
    def __init__(self, files: VaultFiles, settings: Settings) -> None:
        self.files = files
        self.root = files.root
        self.settings = settings
        self.resolver = Resolver(files, settings.resolution)
        self.root_str = str(files.root)
        self.texts: dict[str, Note | None] = {}
        self.outlines: dict[str, tuple[set[str], set[str], int]] = {}
        # What the main pass already scanned, for anchor checks: heading texts, block ids,
        # line count (so a linked note is never read or scanned twice).
        self.scanned: dict[str, tuple[tuple[str, ...], set[str], int]] = {}
        # With `defer_anchors`, anchor checks wait until every file has been scanned
        # (`flush_anchors`), so that their targets' outlines come from the main pass.
        self.defer_anchors = False
        self.pending_anchors: list[tuple[str, wl.Link, str]] = []
        self.problems: list[Problem] = []
        self.links_checked = 0
        folders = settings.folders
        self.digest_prefix = folders.digest + "/"
        self.node_prefixes = tuple(f"{folders.digest}/{bucket}/" for bucket in BUCKETS)
        self.source_prefixes = (folders.daily + "/", folders.resource + "/")
        self.levels = dict(settings.lint)
        # Links of digest nodes to other digest nodes, for orphan-node.
        self.digest_edges: dict[str, set[str]] = {}

    def is_node(self, rel: str) -> bool:
        """A digest node: a markdown file under `digest/<bucket>/` (SPEC §1). Other files under
        `digest/` (a README, an index page) get the link checks only."""
        return rel.startswith(self.node_prefixes) and rel.endswith(MARKDOWN_EXTS)

    # -- reading -------------------------------------------------------------------------
    def read_bytes(self, rel: str) -> bytes:
        """The file's bytes, refusing oversized files before reading them. Raises OSError or
        NoteError. Plain descriptors, one read for a file that does not change meanwhile: on
        this hot path pathlib and file objects cost more than the read itself."""
        fd = os.open(os.path.join(self.root_str, self.files.on_disk(rel)), os.O_RDONLY)
        try:
            size = os.fstat(fd).st_size
            if size > self.settings.max_note_bytes:
                raise NoteError(f"file is {size / 1048576:.1f} MiB, over the "
                                f"{self.settings.max_note_bytes // 1048576} MiB limit for notes",
                                hint="split it, or raise limits.max_note_bytes")
            data = os.read(fd, size + 1)
            if len(data) > size:  # it grew since fstat: read on to the end
                chunks = [data]
                while chunk := os.read(fd, 1 << 20):
                    chunks.append(chunk)
                data = b"".join(chunks)
            return data
        finally:
            os.close(fd)

    def note(self, rel: str) -> Note | None:
        if rel in self.texts:
            return self.texts[rel]
        try:
            note: Note | None = decode(rel, self.read_bytes(rel),
                                       max_bytes=self.settings.max_note_bytes)
        except (OSError, NoteError):
            note = None
        self.texts[rel] = note
        return note

    def remember_outline(self, rel: str, outline: wl.Outline, note: Note) -> None:
        self.scanned[rel] = (tuple(h.text for h in outline.headings), outline.block_ids,
                             note.line_count)

    def outline(self, rel: str) -> tuple[set[str], set[str], int] | None:
        cached = self.outlines.get(rel)
        if cached is not None:
            return cached
        raw = self.scanned.get(rel)
        if raw is None:
            note = self.note(rel)
            if note is None:
                return None
            o = wl.outline(note.body, note.body_line)
            raw = (tuple(h.text for h in o.headings), o.block_ids, note.line_count)
        result = ({wl.heading_key(text) for text in raw[0]}, raw[1], raw[2])
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
        is_digest = self.is_node(rel)
        try:
            note = decode(rel, self.read_bytes(rel), max_bytes=self.settings.max_note_bytes)
        except NoteError as exc:
            self.texts[rel] = None
            message = str(exc).removeprefix(f"{rel}: ")  # the line already starts with the path
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
        elif "[[" in note.body:
            # One pass gives the links and the outline (kept for anchors that point here).
            result = wl.scan(note.body, note.body_line)
            self.remember_outline(rel, result.outline, note)
            for link in result.links:
                self.check_link(rel, link)

    def check_link(self, rel: str, link: wl.Link) -> Resolution:
        self.links_checked += 1
        res = self.resolver.resolve(link.target, rel)
        if res.status == "ok":
            if link.anchor is not None and res.path is not None:
                if self.defer_anchors:
                    self.pending_anchors.append((rel, link, res.path))
                else:
                    self.check_anchor(rel, link, res.path)
            return res
        shown = link.raw
        if res.status == "broken":
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

    def flush_anchors(self) -> None:
        """Run the anchor checks that `defer_anchors` held back."""
        pending, self.pending_anchors = self.pending_anchors, []
        for rel, link, target in pending:
            self.check_anchor(rel, link, target)

    def flush_scanned_anchors(self) -> None:
        """Run the held-back anchor checks whose target this process has scanned; keep the
        others (their targets' outlines come from another process)."""
        pending = self.pending_anchors
        self.pending_anchors = [a for a in pending if a[2] in self.scanned]
        self.flush_anchors()
        self.pending_anchors = [a for a in pending if a[2] not in self.scanned]

    def check_digest(self, rel: str, note: Note) -> None:
        # An unclosed block goes to PyYAML's reader, which names it (not "'name' is missing").
        empty = None if unclosed_frontmatter(note) else _simple_frontmatter(note.frontmatter_text)
        if empty is None:  # not a block of plain `key: value` lines: ask PyYAML
            from remelink.vault import frontmatter

            try:
                meta = frontmatter.load(note)
            except NoteError as exc:
                self.report(rel, 1, 1, "frontmatter", str(exc).removeprefix(f"{rel}: "))
            else:
                empty = {key: value is None or (isinstance(value, str) and not value.strip())
                         for key, value in meta.items()}
        if empty is not None:
            for key in ("name", "description"):
                if empty.get(key, True):
                    state = "missing" if key not in empty else "empty"
                    self.report(rel, 1, 1, "frontmatter", f"'{key}' is {state} in the frontmatter")

        result = wl.scan(note.body, note.body_line)
        self.remember_outline(rel, result.outline, note)
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
                if not self.cites_source(link, resolved[i]):
                    self.report(rel, link.line, link.col, "non-source-target",
                                f"{link.raw}: Sources cite daily/ or resource/ notes only; "
                                "link related digest nodes in the body prose")
        bare_level_elsewhere = _milder(self.levels.get("bare-source-link", "error"), "warning")
        for para in result.paragraphs:
            text = para[0][2] if len(para) == 1 else wl.paragraph_text(para)
            if "[[" not in text:  # masking code only removes text: nothing to check
                continue
            raw_text = text
            text = wl.mask_code(text)
            if "[[" not in text:
                continue
            first_line = para[0][0]
            if "::" in text:
                for m in _RELATION_RE.finditer(text):
                    line, col = _position(para, m.start())
                    self.report(rel, line, col, "relation-field",
                                f"relation field '{m.group(1)}::' - weave the link into a "
                                "sentence instead")
            if not is_bare_link_text(raw_text):
                continue
            first_link = wl.LINK_RE.search(text)
            if first_link is None:
                continue
            line, col = _position(para, first_link.start())
            if section is not None and section[0] < first_line < section[1]:
                self.report(rel, line, col, "bare-source-link",
                            "bare link line in Sources: say in a sentence what this source "
                            "supports")
            else:
                self.report(rel, line, col, "bare-source-link",
                            "bare link line: weave the link into a sentence",
                            level=bare_level_elsewhere)

    def cites_source(self, link: wl.Link, res: Resolution) -> bool:
        """Does a Sources link point into daily/ or resource/? Judged on the resolved path, on
        every candidate of an ambiguous link, and for a broken link in path mode on its literal
        target. A broken link in obsidian mode could name anything, and a link leaving the vault
        is not a citation either way: those are reported as broken-link / outside-vault only."""
        if not link.target:
            return False  # `[[#heading]]`: the node itself
        if res.status == "ok" and res.path:
            return res.path.startswith(self.source_prefixes)
        if res.status == "ambiguous":
            return all(c.startswith(self.source_prefixes) for c in res.candidates)
        if res.status == "outside" or self.settings.resolution == "obsidian":
            return True
        return nfc(link.target).startswith(self.source_prefixes)

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


# From this many files on, a second process pays for itself: on a generated 1,000-note vault the
# fork and the pickled hand-back cost 0.02 s of CPU while each process does half of 0.17 s.
PARALLEL_MIN_FILES = 1000


def default_jobs(n_files: int) -> int:
    """Processes for checking `n_files`: 2 on a machine with two or more usable cores and a vault
    large enough to gain from it, else 1. `REMELINK_LINT_JOBS=1` keeps it to one process."""
    if n_files < PARALLEL_MIN_FILES or not hasattr(os, "fork"):
        return 1
    if os.environ.get("REMELINK_LINT_JOBS", "").strip() == "1":
        return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return 2 if cores >= 2 else 1


# What a child process hands back: its problems, links checked, digest edges, deferred anchor
# checks and the outlines it scanned.
_ShareResult = tuple[list[Problem], int, dict[str, set[str]], list[tuple[str, wl.Link, str]],
                     dict[str, tuple[tuple[str, ...], set[str], int]]]


def _check_files(linter: _Linter, targets: list[str], jobs: int) -> None:
    """Check `targets`. With `jobs` > 1, forked children check their share of the files (every
    `jobs`-th one) and hand back their findings, scanned outlines and deferred anchor checks;
    the result is the same as checking every file here. A child that fails is redone here."""
    if jobs < 2 or len(targets) < 2 or not hasattr(os, "fork"):
        for rel in targets:
            linter.check_file(rel)
        return
    import pickle

    # Every jobs-th file to each process: equal shares (measured: the children's extra costs,
    # copy-on-write and pickling, match this process's merge and remaining anchor checks).
    shares = [targets[k::jobs] for k in range(jobs)]
    children: list[tuple[int, int, list[str]]] = []
    for k in range(1, jobs):
        share = shares[k]
        try:
            read_fd, write_fd = os.pipe()
        except OSError:
            shares[0].extend(share)
            continue
        try:
            pid = os.fork()
        except OSError:  # no process to be had (limits): check that share here
            os.close(read_fd)
            os.close(write_fd)
            shares[0].extend(share)
            continue
        if pid == 0:  # pragma: no cover - runs in the child (measured by the tests' results)
            code = 1
            try:
                os.close(read_fd)
                for rel in share:
                    linter.check_file(rel)
                # The others go back to the parent with the outlines it may need.
                linter.flush_scanned_anchors()
                # Digest edges matter only to the orphan-node check.
                edges = linter.digest_edges if linter.settings.level("orphan-node") != "off" \
                    else {}
                payload = pickle.dumps(
                    (linter.problems, linter.links_checked, edges, linter.pending_anchors,
                     linter.scanned), protocol=pickle.HIGHEST_PROTOCOL)
                with os.fdopen(write_fd, "wb") as out:
                    out.write(payload)
                code = 0
            finally:
                os._exit(code)
        os.close(write_fd)
        children.append((pid, read_fd, share))
    for rel in shares[0]:
        linter.check_file(rel)
    if children:
        linter.flush_scanned_anchors()  # while the children finish
    for pid, read_fd, share in children:
        data = b""
        try:
            with os.fdopen(read_fd, "rb") as inp:
                data = inp.read()
        finally:
            _, status = os.waitpid(pid, 0)
        result: _ShareResult | None = None
        if status == 0 and data:
            try:
                result = pickle.loads(data)
            except Exception:  # a truncated payload: redo that share here
                result = None
        if result is None:
            for rel in share:
                linter.check_file(rel)
            continue
        problems, links_checked, digest_edges, pending, scanned = result
        linter.problems.extend(problems)
        linter.links_checked += links_checked
        linter.digest_edges.update(digest_edges)
        linter.pending_anchors.extend(pending)
        linter.scanned.update(scanned)


def lint_links(vault: Path, settings: Settings | None = None, paths: Sequence[str] | None = None,
               include_all: bool = False, jobs: int | None = 1) -> LintReport:
    """Check the whole vault, or only `paths` (workspace-relative) resolving against the whole
    vault. With `include_all`, also report links elsewhere that point at `paths` (which may no
    longer exist: renames and deletions). `jobs` is the number of processes checking files
    (None: `default_jobs`); the report is the same for any value."""
    import gc

    # Linting allocates millions of small objects and no reference cycles to speak of: the
    # cyclic collector would only re-walk them (about 10 % of the run). Refcounting still frees.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _lint_links(vault, settings, paths, include_all, jobs)
    finally:
        if was_enabled:
            gc.enable()


def _lint_links(vault: Path, settings: Settings | None, paths: Sequence[str] | None,
                include_all: bool, jobs: int | None) -> LintReport:
    settings = settings or load_settings(vault)
    files = VaultFiles.scan(vault)
    linter = _Linter(files, settings)
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
    _check_files(linter, targets, default_jobs(len(targets)) if jobs is None else jobs)
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


sources_section = _sources_section


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


def to_vault_paths(vault: Path, raw_paths: Sequence[str],
                   cwd: Path | None = None) -> tuple[list[str], list[str]]:
    """Command-line paths (relative to the working directory, as pre-commit passes them) as
    workspace-relative paths; the second list holds paths that are outside the vault."""
    cwd = cwd or Path.cwd()
    root = vault.resolve()
    inside: list[str] = []
    outside: list[str] = []
    for raw in raw_paths:
        full = Path(os.path.abspath(cwd / raw))
        # The folder may be reached through a symlink (macOS /tmp, a linked checkout): resolve
        # it, but not the file itself (a deleted file has nothing to resolve, and a symlinked
        # note is checked under its own name).
        full = full.parent.resolve() / full.name
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
        resolution: str | None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Shared by the console script and `remelink lint-links`: lint, print, return the exit code."""
    stdout = out if out is not None else sys.stdout
    stderr = err if err is not None else sys.stderr
    started = time.perf_counter()
    if vault is not None:
        root = find_vault_root(vault)
    else:
        root = (_vault_for(raw_paths) if raw_paths else None) or find_vault_root()
    if not root.is_dir():
        print(f"remelink lint-links: vault {root} is not a folder (pass --vault PATH)", file=stderr)
        return EXIT_USAGE
    settings = load_settings(
        root, overrides={"links": {"resolution": resolution}} if resolution else None)
    paths: list[str] | None = None
    if raw_paths:
        paths, outside = to_vault_paths(root, raw_paths)
        for raw in outside:
            print(f"remelink lint-links: {raw} is outside the vault {root}; skipped", file=stderr)
    report = lint_links(root, settings, paths, include_all=include_all, jobs=None)
    rendered = render_json(report) if fmt == "json" else render_text(report)
    stdout.write(rendered)
    print(summary_line(report, time.perf_counter() - started), file=stderr)
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
