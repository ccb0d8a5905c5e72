"""The checks of lint-links (SPEC §4.1) on one note at a time: links, anchors, and a digest
node's frontmatter, Sources section and relation fields. `_Linter` holds what a run shares:
the resolver, the notes read and the outlines of link targets."""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from remelink.config import Settings
from remelink.errors import EXIT_OK, EXIT_PROBLEMS, NoteError, UnsafeFileError
from remelink.lint.suggest import Suggester
from remelink.vault import links as wl
from remelink.vault.boundary import outside_error, read_listed, vault_real
from remelink.vault.marks import deleted_marks
from remelink.vault.notes import Note, decode, unclosed_frontmatter
from remelink.vault.paths import BUCKETS, nfc
from remelink.vault.resolve import (
    MARKDOWN_EXTS,
    Resolution,
    Resolver,
    VaultFiles,
    _path_suffix_match,
)
from remelink.vault.values import value_problems


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
    excluded: int = 0  # notes left out by lint.exclude
    # Why links were resolved the Obsidian way though nothing configured it ("" otherwise):
    # the vault's links resolve only by name (vault/obsidian.py).
    resolved_by_links: str = ""

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


def _simple_frontmatter(text: str | None,
                        values: dict[str, object] | None = None) -> dict[str, bool] | None:
    """{key: value is empty (null or blank)} for a frontmatter block of plain `key: value`
    lines (double- or single-quoted strings without escapes, flow lists of words, plain words,
    comments); None for any other shape, which PyYAML must read. With `values`, the values of
    `kind` and `memory_tags` are put there too, as PyYAML reads these shapes (`_value`)."""
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
        if values is not None and m.group(1) in _CHECKED_VALUES:
            values[m.group(1)] = _value(double, single, flow, plain)
    return out
_CHECKED_VALUES = ("kind", "memory_tags")


def _value(double: str | None, single: str | None, flow: str | None,
           plain: str | None) -> object:
    """A value of the simple shapes as PyYAML reads it: a quoted or plain string, a flow list
    of words, a boolean, or null."""
    if double is not None or single is not None:
        return double if double is not None else single
    if flow is not None:
        return [t.strip() for t in flow[1:-1].split(",") if t.strip()]
    if plain is None or plain in _YAML_NULLS:
        return None
    if plain.lower() in ("true", "false", "yes", "no", "on", "off"):
        return plain.lower() in ("true", "yes", "on")
    return plain.rstrip()


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
        self.root_real = vault_real(files.root)
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
        # "did you mean" hints (lint_links sets one that knows the staged renames).
        self.suggester: Suggester | None = None
        # Hints that a link resolves the Obsidian way: for lint-links runs (people), not for
        # the checks of a node a unit is writing.
        self.obsidian_hint = False
        # The deletion marks of the digest node being checked: {path: date}.
        self.marks: dict[str, str] = {}

    def is_node(self, rel: str) -> bool:
        """A digest node: a markdown file under `digest/<bucket>/` (SPEC §1). Other files under
        `digest/` (a README, an index page) get the link checks only."""
        return rel.startswith(self.node_prefixes) and rel.endswith(MARKDOWN_EXTS)

    # -- reading -------------------------------------------------------------------------
    def read_bytes(self, rel: str) -> bytes:
        """The file's bytes through the vault boundary: a symlink out of the vault, a FIFO, a
        socket or a device is never opened, and an oversized file is refused before it is
        read (UnsafeFileError / NoteError); OSError for the file system's own failures. The
        walk already knows each entry's type, so a listed regular file costs one open, fstat
        and read (`fsio.read_listed`): on this hot path every system call counts."""
        if rel in self.files.escaping:
            raise outside_error(None)
        special = self.files.special.get(rel)
        if special is not None:
            raise UnsafeFileError(f"is {special}, not a regular file; not opened",
                                  hint="notes are regular files; move it out of the vault")
        limit = self.settings.max_note_bytes
        got = read_listed(os.path.join(self.root_str, self.files.on_disk(rel)),
                          root_real=self.root_real, limit=limit)
        if got.data is None:
            raise NoteError(f"file is {got.size / 1048576:.1f} MiB, over the "
                            f"{limit // 1048576} MiB limit for notes",
                            hint="split it, or raise limits.max_note_bytes")
        return got.data

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
        except UnsafeFileError as exc:  # not a note at all: never opened, whatever its folder
            self.texts[rel] = None
            self.report(rel, 1, 1, "unreadable", str(exc))
            return
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
        if res.status == "broken" and self.marks:
            deleted = self._marked(link.target)
            if deleted is not None:
                self.report(rel, link.line, link.col, "deleted-source",
                            f"{shown}: the note was deleted ({deleted[1]}, marked in this node); "
                            "the citation is kept as history")
                return res
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

    def _marked(self, target: str) -> tuple[str, str] | None:
        """(path, date) of the deletion mark of this node (vault/marks.py) that a broken link
        to `target` names: the path itself, or in obsidian mode a path it would resolve to."""
        t = nfc(target).removeprefix("./")
        for candidate in (t, *(t + ext for ext in MARKDOWN_EXTS)):
            if candidate in self.marks:
                return candidate, self.marks[candidate]
        if self.settings.resolution == "obsidian":
            folded = t.casefold()
            found = [p for p in self.marks if _path_suffix_match(p.casefold(), folded)]
            if len(found) == 1:
                return found[0], self.marks[found[0]]
        return None

    def _suggest(self, target: str) -> str:
        if self.suggester is None:
            self.suggester = Suggester(self.files, self.settings.resolution,
                                       obsidian_hint=self.obsidian_hint)
        return self.suggester.hint(target)

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
        values: dict[str, object] = {}
        empty = None if unclosed_frontmatter(note) else \
            _simple_frontmatter(note.frontmatter_text, values)
        if empty is None:  # not a block of plain `key: value` lines: ask PyYAML
            from remelink.vault import frontmatter

            try:
                meta = frontmatter.load(note)
            except NoteError as exc:
                self.report(rel, 1, 1, "frontmatter", str(exc).removeprefix(f"{rel}: "))
            else:
                empty = {key: value is None or (isinstance(value, str) and not value.strip())
                         for key, value in meta.items()}
                values = {k: meta[k] for k in _CHECKED_VALUES if k in meta}
        if empty is not None:
            for key in ("name", "description"):
                if empty.get(key, True):
                    state = "missing" if key not in empty else "empty"
                    self.report(rel, 1, 1, "frontmatter", f"'{key}' is {state} in the frontmatter")
        for problem in value_problems(values) if values else ():  # SPEC §2 kind, memory_tags
            self.report(rel, 1, 1, "frontmatter", problem)

        result = wl.scan(note.body, note.body_line)
        self.remember_outline(rel, result.outline, note)
        section = _sources_section(result.outline.headings)
        edges = self.digest_edges.setdefault(rel, set())
        resolved: dict[int, Resolution] = {}
        self.marks = deleted_marks(note.body)
        for i, link in enumerate(result.links):
            res = self.check_link(rel, link)
            resolved[i] = res
            if res.status == "ok" and res.path and res.path != rel and \
                    res.path.startswith(self.digest_prefix):
                edges.add(res.path)
        self.marks = {}

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


sources_section = _sources_section
