"""Digest nodes as the index sees them: the file listing with stat fingerprints, and the
searchable fields of one node (SPEC §5). No Whoosh here.

Reading never crashes on bad input: a node whose frontmatter is invalid YAML is indexed from
its body (name from its first heading or file name) with a notice; a file that is not valid
UTF-8 is indexed with replacement characters; binary and oversized files are skipped with a
notice. Nothing here writes to the vault.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from remelink.errors import NoteError
from remelink.vault.boundary import hidden_inside, read_prefix
from remelink.vault.links import WEB_LINK_RE
from remelink.vault.notes import BOM, Note, decode, parse_text
from remelink.vault.paths import BUCKETS, nfc

DEFAULT_BUCKET = "wiki"  # SPEC §8: the fallback bucket
_LINK_RE = re.compile(r"!?\[\[([^\[\]|#\n]*)(?:#([^\[\]|\n]*))?(?:\|([^\[\]\n]*))?\]\]")
# The first `# ` heading line; its closing `#`s are stripped in Python (a lazy `(.+?)` before
# `[ \t#]*$` rescanned the line's tail at every character: quadratic on a line of `#`s).
_HEADING_RE = re.compile(r"^#[ \t]+(.+)$", re.M)


@dataclass(frozen=True, slots=True)
class FileStat:
    """Where a node lives on disk and the cheap part of its fingerprint."""

    disk: str  # absolute path as found on disk (its bytes may not be NFC)
    mtime_ns: int
    size: int


@dataclass(frozen=True, slots=True)
class NodeDoc:
    """The searchable fields of one digest node."""

    path: str
    bucket: str
    name: str
    description: str
    memory_tags: tuple[str, ...]
    body: str
    fingerprint: str


@dataclass(frozen=True, slots=True)
class ReadResult:
    """A node read for indexing: `doc` is None when the file cannot be indexed at all."""

    path: str
    fingerprint: str
    doc: NodeDoc | None
    notice: str | None = None
    unchanged: bool = False  # the fingerprint equals the `known` one: nothing was parsed


def fingerprint(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def bucket_of(rel: str, digest: str) -> str:
    """`digest/<bucket>/...` gives its bucket; anything else under the digest folder is `wiki`."""
    parts = rel.split("/")
    if len(parts) >= 3 and parts[0] == digest and parts[1] in BUCKETS:
        return parts[1]
    return DEFAULT_BUCKET


def is_node_path(rel: str, digest: str) -> bool:
    return rel.startswith(digest + "/") and rel.endswith(".md") and \
        not any(part.startswith(".") for part in rel.split("/"))


def scan_digest(root: Path, digest: str, suffixes: tuple[str, ...] = (".md",)
                ) -> dict[str, FileStat]:
    """Every `.md` file (or file ending in one of `suffixes`) under the digest folder (or any
    top-level folder named by `digest`): NFC workspace-relative path -> FileStat.

    Dot-folders and dotfiles are skipped; symlinked folders are not entered, and symlinked
    files that resolve outside the vault are left out (the index never reads outside it).
    """
    out: dict[str, FileStat] = {}
    root_real = os.path.realpath(root)
    top = os.path.realpath(root / digest)
    if not top.startswith(root_real + os.sep):
        return out  # a digest folder that is a symlink out of the vault is not read
    stack = [(f"{digest}/", str(root / digest))]
    while stack:
        prefix, directory = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            if name[0] == ".":
                continue
            disk = None
            try:
                # d_type answers these without a system call; only .md files are stat'ed.
                if entry.is_file(follow_symlinks=False):
                    if not name.endswith(suffixes):
                        continue
                    st = entry.stat(follow_symlinks=False)
                elif entry.is_dir(follow_symlinks=False):
                    stack.append((f"{prefix}{name}/", entry.path))
                    continue
                elif entry.is_symlink() and name.endswith(suffixes):
                    real = os.path.realpath(entry.path)
                    if not real.startswith(root_real + os.sep) or not os.path.isfile(real) \
                            or hidden_inside(root_real, real):
                        continue  # outside, or into .remelink/ or .git/: never indexed
                    st = os.stat(real)
                    disk = real  # read through the checked target: reads never follow links
                else:
                    continue
            except OSError:
                continue
            rel = prefix + name
            out[rel if rel.isascii() else nfc(rel)] = FileStat(
                entry.path if disk is None else disk, st.st_mtime_ns, st.st_size)
    return out


def stat_one(root: Path, rel: str) -> FileStat | None:
    """The FileStat of one node, or None if it is gone (or not a readable file)."""
    path = root / rel
    try:
        st = path.stat()
    except OSError:
        # The name on disk may be in another Unicode normal form (e.g. NFD from macOS).
        parent = path.parent
        try:
            matches = [e for e in os.scandir(parent) if nfc(e.name) == path.name]
        except OSError:
            return None
        if not matches:
            return None
        try:
            st = matches[0].stat()
        except OSError:
            return None
        path = Path(matches[0].path)
    if not path.is_file():
        return None
    root_real = os.path.realpath(root)
    real = os.path.realpath(path)
    if not real.startswith(root_real + os.sep) or hidden_inside(root_real, real):
        return None
    return FileStat(real, st.st_mtime_ns, st.st_size)  # the checked target (see read_bytes)


def read_bytes(disk: str, max_bytes: int) -> bytes:
    """The bytes of one node file, at most `max_bytes + 1` of them (so that "too large" can be
    told). The one place the index reads a note (the build worker too): through the vault
    boundary's reader, which never blocks on a FIFO or device and reads regular files only;
    `disk` is a path the scan checked to lie in the vault."""
    return read_prefix(disk, max_bytes + 1)


@dataclass(frozen=True, slots=True)
class Loaded:
    """A note file read and decoded, before its frontmatter is parsed: `note` is None when it
    cannot be read at all (`notice` says why) or when its bytes still hash to the `known`
    fingerprint (`unchanged`)."""

    fingerprint: str
    note: Note | None
    notice: str | None = None
    unchanged: bool = False


def load_note(rel: str, stat: FileStat, max_bytes: int, verb: str, *,
              known: str | None = None) -> Loaded:
    """Read and decode one note for an index (the node index: `verb` "indexed"; the passage
    index: "searched"). Never raises for bad content: the size cap (checked on the stat, then
    on the bytes), the read through the vault boundary, the fingerprint (equal to `known`:
    reported `unchanged`, nothing decoded), the UTF-8 decode, binary files skipped, other
    invalid UTF-8 decoded with replacement characters; each with a notice naming `verb`."""
    limit = f"{max_bytes // 1048576} MiB note limit; not {verb}"
    hint = "(split it, or raise limits.max_note_bytes)"
    if stat.size > max_bytes:
        fp = f"size:{stat.size}:{stat.mtime_ns}"  # not read: size and mtime stand in for it
        if fp == known:
            return Loaded(fp, None, unchanged=True)
        return Loaded(fp, None, f"{rel}: {stat.size / 1048576:.1f} MiB is over the {limit} "
                                f"{hint}")
    try:
        data = read_bytes(stat.disk, max_bytes)
    except OSError as exc:
        return Loaded(f"unreadable:{stat.mtime_ns}", None,
                      f"{rel}: cannot read ({exc.strerror or exc}); not {verb}")
    fp = fingerprint(data)
    if fp == known:
        return Loaded(fp, None, unchanged=True)
    if len(data) > max_bytes:
        return Loaded(fp, None, f"{rel}: over the {limit} {hint}")
    try:
        return Loaded(fp, decode(rel, data, max_bytes=max_bytes))
    except NoteError as exc:
        if b"\x00" in data[:8192]:
            return Loaded(fp, None, f"{exc}; not {verb}")
        return Loaded(fp, parse_text(rel, data.decode("utf-8", errors="replace")
                                     .removeprefix(BOM)),
                      f"{rel}: not valid UTF-8; {verb} with replacement characters "
                      "(re-save the file as UTF-8)")


def _scalar(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        return " ".join(_scalar(v) for v in value)
    if isinstance(value, dict):
        return " ".join(f"{k} {_scalar(v)}" for k, v in value.items())
    return " ".join(str(value).split())


def _tags(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    items = value if isinstance(value, (list, tuple)) else [value]
    return tuple(t for t in (_scalar(v) for v in items if not isinstance(v, dict)) if t)


def link_display(match: re.Match[str]) -> str:
    """What a reader sees for a wikilink: its alias, else the target's name (and anchor)."""
    target, anchor, alias = match.group(1), match.group(2), match.group(3)
    if alias and alias.strip():
        return alias.strip()
    name = target.strip().rsplit("/", 1)[-1]
    if name.endswith(".md"):
        name = name[:-3]
    if anchor and anchor.strip():
        name = f"{name} {anchor.strip()}".strip()
    return name


def searchable_body(body: str) -> str:
    """The body with every wikilink and markdown link replaced by its display text (paths and
    URLs are not prose: `github.com` in every linked note would match them all)."""
    if "[[" in body:
        body = _LINK_RE.sub(link_display, body)
    return WEB_LINK_RE.sub(r"\1", body) if "](" in body else body


def read_node(rel: str, stat: FileStat, digest: str, max_bytes: int, *,
              known: str | None = None) -> ReadResult:
    """Read one node for indexing. Never raises for bad content; returns a notice instead.

    With `known` (the fingerprint recorded at the last indexing), a file whose bytes still
    hash to it is reported `unchanged` without being parsed.
    """
    loaded = load_note(rel, stat, max_bytes, "indexed", known=known)
    note = loaded.note
    if note is None:
        return ReadResult(rel, loaded.fingerprint, None, loaded.notice, loaded.unchanged)
    from remelink.vault import frontmatter  # PyYAML: only when a node is actually read

    fp = loaded.fingerprint
    notices = [loaded.notice] if loaded.notice else []
    try:
        meta = frontmatter.load(note)
    except NoteError as exc:
        meta = {}
        notices.append(f"{exc}; indexed without its frontmatter")
    body = note.body
    name = _scalar(meta.get("name"))
    if not name:
        heading = _HEADING_RE.search(body)
        name = heading.group(1).rstrip(" \t#").strip() if heading else \
            rel.rsplit("/", 1)[-1][:-3]
    doc = NodeDoc(path=rel, bucket=bucket_of(rel, digest), name=name,
                  description=_scalar(meta.get("description")),
                  memory_tags=_tags(meta.get("memory_tags")),
                  body=searchable_body(body), fingerprint=fp)
    return ReadResult(rel, fp, doc, "; ".join(notices) or None)
