"""Digest nodes that cite a raw note which is gone, and the two edits `dream run` makes to them
(SPEC §9.3): a renamed note's citations get the new path; a deleted note's citations stay and
get a mark (vault/marks.py).

A node cites a gone note when one of its links no longer resolves and would resolve to that
note were it still there (in `obsidian` mode a short `[[lunch]]` cites `daily/x/lunch.md`); a
link that now resolves to another note cites nothing gone.

Both edits go through the guards before they are written: a relink changes link targets and
nothing else (every line the same once the targets are mapped, the same edges), a mark only
inserts lines (`guards.conservation_problems`), and neither adds a lint error. A node is
written with the compare-and-swap of every node write (`fsio.replace_if`): replaced atomically
only when its bytes are still the ones edited (a person saving the node meanwhile wins; the
run says so and the next run tries again).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from remelink.config import Settings
from remelink.dream.inputs import walk_notes
from remelink.errors import NoteError, RemelinkError
from remelink.vault import links as wl
from remelink.vault.boundary import read_file, vault_real
from remelink.vault.fsio import replace_if
from remelink.vault.marks import deleted_marks, mark_line
from remelink.vault.notes import Note, decode
from remelink.vault.paths import BUCKETS, disk_path, nfc
from remelink.vault.resolve import MARKDOWN_EXTS, Resolver, VaultFiles


@dataclass
class Citing:
    """A node with links to gone notes, as read."""

    path: str
    data: bytes
    note: Note
    links: dict[str, list[wl.Link]] = field(default_factory=dict)  # gone path -> its links


class EditRefused(RemelinkError):
    """A node edit that the guards, or the bytes on disk, do not allow."""


def citing_nodes(vault: Path, settings: Settings, files: VaultFiles, gone: Collection[str],
                 ) -> tuple[dict[str, Citing], list[str]]:
    """The digest nodes that cite any of `gone`, and one line per node that could not be read.
    `files` is the vault as it is now (the gone notes not in it)."""
    if not gone:
        return {}, []
    mode = settings.resolution
    now = Resolver(files, mode)
    before = VaultFiles(root=files.root, files=set(files.files) | set(gone),
                        escaping=set(files.escaping), disk=dict(files.disk),
                        special=dict(files.special))
    then = Resolver(before, mode)
    needles = {_needle(p, mode) for p in gone}
    limit = settings.max_note_bytes
    root_real = vault_real(vault)
    out: dict[str, Citing] = {}
    problems: list[str] = []
    prefixes = tuple(f"{settings.folders.digest}/{b}/" for b in BUCKETS)
    for rel, disk, problem in walk_notes(vault, settings.folders.digest):
        if problem is not None or not rel.startswith(prefixes):
            continue
        try:
            got = read_file(vault / disk, root_real=root_real, limit=limit, rel=rel)
            if got.data is None:
                continue  # over the size limit: not a node remelink edits
            folded = got.data.decode("utf-8", "replace").casefold()
            if not any(n in folded for n in needles):
                continue
            note = decode(rel, got.data, max_bytes=limit)
        except (OSError, NoteError) as exc:
            problems.append(f"{rel}: not read while looking for citations of gone notes: "
                            f"{getattr(exc, 'strerror', None) or exc}")
            continue
        found = Citing(rel, got.data, note)
        for link in wl.parse_links(note.body, note.body_line):
            if not link.target or now.resolve(link.target, rel).status == "ok":
                continue
            res = then.resolve(link.target, rel)
            if res.status == "ok" and res.path is not None and res.path in gone:
                found.links.setdefault(res.path, []).append(link)
        if found.links:
            out[rel] = found
    return out, problems


def _needle(path: str, mode: str) -> str:
    """What a note citing `path` must contain (casefolded): its name without the extension in
    obsidian mode (a short link), the path otherwise."""
    if mode == "obsidian":
        name = path.rsplit("/", 1)[-1]
        for ext in MARKDOWN_EXTS:
            name = name.removesuffix(ext)
        return nfc(name).casefold()
    return nfc(path).casefold()


# -- relinking ---------------------------------------------------------------------------------

def new_target(link: wl.Link, old: str, new: str, files: VaultFiles, mode: str,
               source: str) -> str:
    """The target to write for `link` (which cited `old`) now that the note is `new`: the same
    style when it resolves (a short name for a short name, no `.md` if there was none), else
    the full path."""
    target = nfc(link.target).removeprefix("./")
    if mode == "obsidian" and "/" not in target:
        stem = new.rsplit("/", 1)[-1]
        short = stem if target.casefold().endswith(MARKDOWN_EXTS) else _strip_ext(stem)
        if Resolver(files, mode).resolve(short, source).path == new:
            return short
    if mode == "obsidian" and not target.casefold().endswith(MARKDOWN_EXTS) and old != target:
        return _strip_ext(new)
    return new


def _strip_ext(path: str) -> str:
    for ext in MARKDOWN_EXTS:
        if path.endswith(ext):
            return path[: -len(ext)]
    return path


def relink(citing: Citing, targets: Mapping[tuple[int, int], str]) -> Note:
    """The node with the link at each (line, col) of `targets` pointing at its new target;
    anchor, alias, embed mark and every other byte unchanged."""
    lines = citing.note.text.split("\n")
    for (line, col), target in sorted(targets.items(), key=lambda t: (t[0][0], -t[0][1])):
        text = lines[line - 1]
        m = wl.LINK_RE.match(text, col - 1)
        if m is None:
            raise EditRefused(f"the link at line {line}, column {col} was not found",
                              path=citing.path)
        start, end = m.span(2)
        inner = text[start:end]
        lead = len(inner) - len(inner.lstrip())
        trail = len(inner) - len(inner.rstrip())
        # `[[x\|alias]]` in a table: the backslash escapes the pipe, it is not part of the name
        if inner.rstrip().endswith("\\"):
            trail = len(inner) - len(inner.rstrip()[:-1].rstrip())
        lines[line - 1] = text[:start + lead] + target + text[end - trail:]
    return citing.note.with_text("\n".join(lines))


def relinked_only(original: Note, new: Note, mapping: Mapping[str, str]) -> list[str]:
    """What `new` changes besides pointing links at their new targets (`mapping`: old target
    as written -> new target): nothing, for a relink. Each line is compared as its text
    between links (byte for byte) and its links (embed mark, anchor and alias the same, the
    target the same or mapped); a `[[...]]` the parser does not read as a link (inside code)
    is text, and must not change."""
    old_lines = original.text.split("\n")
    new_lines = new.text.split("\n")
    if len(old_lines) != len(new_lines) or original.frontmatter_text != new.frontmatter_text:
        return ["the edit changes the node's lines or frontmatter, not only link targets"]
    before, after = _pieces(original), _pieces(new)
    problems = []
    for number, (a, b) in enumerate(zip(old_lines, new_lines, strict=True), 1):
        if a == b:
            continue
        want = [(p[0], mapping.get(p[1], p[1]), *p[2:]) if isinstance(p, tuple) else p
                for p in _split(a, before.get(number, []))]
        if want != _split(b, after.get(number, [])):
            problems.append(f"line {number} changes more than a link target")
    return problems


_Piece = str | tuple[bool, str, str | None, str | None]


def _pieces(note: Note) -> dict[int, list[wl.Link]]:
    out: dict[int, list[wl.Link]] = {}
    for link in wl.parse_links(note.body, note.body_line):
        out.setdefault(link.line, []).append(link)
    return out


def _split(line: str, links: list[wl.Link]) -> list[_Piece]:
    """A line as its text between links and its links (embed, target, anchor, alias)."""
    out: list[_Piece] = []
    pos = 0
    for link in sorted(links, key=lambda lk: lk.col):
        m = wl.LINK_RE.match(line, link.col - 1)
        if m is None:
            return [line]  # cannot happen for a parsed link; compared whole then
        out.append(line[pos:m.start()])
        out.append((link.embed, link.target, link.anchor, link.alias))
        pos = m.end()
    out.append(line[pos:])
    return out


# -- deletion marks ----------------------------------------------------------------------------

def mark(citing: Citing, paths: Collection[str], date: str, lang: str) -> Note:
    """The node with a deletion mark under each paragraph citing one of `paths` (one per
    paragraph and path; a path the node marks already is left as it is)."""
    note = citing.note
    marked = deleted_marks(note.text)
    todo = {p for p in paths if p not in marked}
    if not todo:
        return note
    scan = wl.scan(note.body, note.body_line)
    inserts: dict[int, list[str]] = {}  # file line after which to insert -> marks
    for para in scan.paragraphs:
        first, last = para[0][0], para[-1][0]
        for path in sorted(todo):
            if any(first <= lk.line <= last for lk in citing.links.get(path, ())):
                inserts.setdefault(last, []).append(mark_line(path, date, lang))
    if not inserts:  # the links are outside any paragraph the scanner sees: mark at the end
        inserts[note.line_count] = [mark_line(p, date, lang) for p in sorted(todo)]
    nl = note.newline
    parts = note.text.split("\n")  # file lines as the scanner counts them, endings kept
    lines = [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])
    for after in sorted(inserts, reverse=True):
        if after and not lines[after - 1].endswith("\n"):
            lines[after - 1] += nl  # the paragraph ends the file without a newline
        block: list[str] = []
        for line in inserts[after]:
            block += [nl, line + nl]
        if after < len(lines) and lines[after].strip():
            block.append(nl)  # the next line is text: keep the mark a paragraph of its own
        lines[after:after] = block
    text = "".join(lines)
    return note.with_text(text)


# -- writing -----------------------------------------------------------------------------------

def write_if_unchanged(vault: Path, settings: Settings, citing: Citing, new: Note) -> None:
    """Replace the node only if its bytes are still the ones read: the compare-and-swap of
    node writes (`fsio.replace_if`: the compare right before the atomic rename, never through
    a symlink); EditRefused otherwise."""
    if not replace_if(disk_path(vault, citing.path), new.render(), citing.data, root=vault,
                      rel=citing.path):
        raise EditRefused("it changed on disk while it was being edited; the next run tries "
                          "again", path=citing.path)
