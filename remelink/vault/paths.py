"""Vault root discovery, workspace-relative paths, the sandbox, and slugs (SPEC §1).

Every path remelink prints, stores or writes into a link is workspace-relative, POSIX-separated,
NFC-normalised and keeps its extension. These helpers are the only place that turns untrusted
text (a tool argument, a wikilink target, a command-line path) into a filesystem path.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from remelink.errors import SandboxError

MARKER_DIR = ".remelink"
BUCKETS = ("procedure", "personal", "wiki")

# Folders never scanned as notes: remelink's own state, VCS and editor metadata.
SKIP_DIRS = frozenset({MARKER_DIR, ".git", ".hg", ".svn", ".obsidian", ".trash", "node_modules"})

# C0 and C1 control characters, and the bidirectional controls that make a path display as
# something else than it is.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_WINDOWS_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")
_DRIVE_RELATIVE = re.compile(r"^[A-Za-z]:")  # `C:x`: refused in tool paths, a name in links


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def find_vault_root(explicit: str | os.PathLike[str] | None = None,
                    cwd: Path | None = None) -> Path:
    """`--vault PATH`, else the nearest ancestor of the working directory holding `.remelink/`,
    else the working directory (SPEC §1)."""
    if explicit is not None:
        return Path(explicit).expanduser().resolve()
    here = (cwd or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / MARKER_DIR).is_dir():
            return candidate
    return here


def is_unsafe_target(text: str) -> str | None:
    """Why `text` may never name a file inside the vault, or None when it is acceptable.

    Absolute paths, the home folder (`~/`), Windows drives and any `..` segment are refused
    everywhere (SPEC §3.2). A name that merely starts with `~` (`~draft.md`) is a name.
    """
    if text.startswith(("/", "\\", "~/", "~\\")) or text == "~" or _WINDOWS_DRIVE.match(text):
        return "absolute path"
    parts = re.split(r"[\\/]", text)
    if ".." in parts:
        return "path climbs out with '..'"
    return None


def normalize_relpath(text: str) -> str:
    """Turn user or model text into a canonical workspace-relative path, or raise SandboxError.

    Accepts `./` prefixes and doubled slashes; refuses absolute paths, `..`, backslashes and
    control characters. The result is NFC-normalised with POSIX separators.
    """
    raw = text.strip()
    if not raw:
        raise SandboxError("empty path")
    reason = is_unsafe_target(raw) or ("absolute path" if _DRIVE_RELATIVE.match(raw) else None)
    if reason:
        raise SandboxError(f"{reason}: {raw!r}", hint="use a workspace-relative path such as "
                           "digest/wiki/some-node.md")
    if _CONTROL.search(raw):
        raise SandboxError(f"control character in path {raw!r}")
    if "\\" in raw:
        raise SandboxError(f"backslash in path {raw!r}", hint="use '/' as the separator")
    parts = [p for p in raw.split("/") if p not in ("", ".")]
    if not parts:
        raise SandboxError(f"path names no file: {raw!r}")
    return nfc(str(PurePosixPath(*parts)))


def resolve_inside(root: Path, rel: str, *, follow_symlinks: bool = True) -> Path:
    """The absolute path of workspace-relative `rel`, after checking it stays inside `root`.

    The path is spelled as on disk: a name stored decomposed (NFD, as macOS writes it) is found
    under its canonical NFC path (`disk_path`). With `follow_symlinks=False` any symlink on the
    way (including the file itself) is refused, which is what writes require (SPEC §6 sandbox).
    """
    rel = normalize_relpath(rel)
    root = root.resolve()
    path = disk_path(root, rel)
    if not follow_symlinks:
        probe = root
        for part in path.relative_to(root).parts:
            probe = probe / part
            if probe.is_symlink():
                raise SandboxError(f"refusing to write through a symlink: {rel}")
    real = Path(os.path.realpath(path))
    if real != root and root not in real.parents:
        raise SandboxError(f"path resolves outside the vault: {rel}")
    return path


def disk_path(root: Path, rel: str) -> Path:
    """`root/rel` as spelled on disk. Paths are canonical in NFC, but a file system may store a
    name decomposed (NFD: macOS writes `café` as `cafe` + U+0301, and sync tools carry that to
    Linux, where the two spellings are different names). When `rel` does not exist as given,
    each missing component is looked up among its folder's entries by its NFC form. An exact
    match always wins, so of two names differing only in normal form the NFC one is used."""
    path = root.joinpath(*rel.split("/"))
    if rel.isascii() or unicodedata.normalize("NFD", rel) == rel or os.path.lexists(path):
        return path  # a name with nothing to decompose (ASCII, most CJK) has one spelling
    here = root
    for part in rel.split("/"):
        candidate = here / part
        if not os.path.lexists(candidate) and unicodedata.normalize("NFD", part) != part:
            try:
                names = [e.name for e in os.scandir(here)]
            except OSError:
                return path
            match = next((n for n in sorted(names) if nfc(n) == part), None)
            if match is None:
                return path
            candidate = here / match
        here = candidate
    return here


# Characters a note's name may not carry to be an input: they cannot be written into a wikilink
# (`[ ] | #` end or split a target, SPEC §3.1), break the one-line reports and the link's line
# (C0/C1 controls, tab, newline, the Unicode line separators), make the path display as another
# one (bidirectional controls), or are a separator elsewhere (backslash, on Windows).
_LINK_BREAKERS = re.compile(r"[\[\]|#]")
_LINE_BREAKS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_BIDI = re.compile(r"[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def name_problem(rel: str) -> str | None:
    """Why the workspace-relative path `rel` (as listed from disk) cannot be a note remelink
    reads, cites and links, or None when it can (spaces, `%`, emoji, `^` and NFD names can:
    they are processed under their NFC path)."""
    if any("\ud800" <= ch <= "\udfff" for ch in rel):
        return "the name is not valid UTF-8; rename the file"
    for pattern, what in ((_LINE_BREAKS, "a control character"),
                          (_BIDI, "a bidirectional control character (it makes the path "
                                  "display as another one)")):
        m = pattern.search(rel)
        if m:
            return f"the name holds {what} (U+{ord(m.group(0)):04X}); rename the file"
    if "\\" in rel:
        return "the name holds a backslash (a folder separator on Windows); rename the file"
    m = _LINK_BREAKERS.search(rel)
    if m:
        return (f"the name holds {m.group(0)!r}, which no wikilink can carry, so no node could "
                "cite it; rename the file")
    return None


def shown(rel: str) -> str:
    """A path as one printable line: control, bidirectional and undecodable characters are
    shown as escapes (a name with a newline must not split a report line)."""
    out = []
    for ch in rel:
        if _LINE_BREAKS.match(ch) or _BIDI.match(ch) or "\ud800" <= ch <= "\udfff":
            code = ord(ch)
            if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte (surrogateescape)
                out.append(f"\\x{code - 0xDC00:02x}")
            else:
                out.append(f"\\u{code:04x}" if code > 0xFF else f"\\x{code:02x}")
        else:
            out.append(ch)
    return "".join(out)


_SLUG_FORBIDDEN = re.compile(r'[/\\:*?"<>|\x00-\x1f\x7f]')
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")


# Names Windows refuses for a file whatever the extension (a vault is often synced there).
_RESERVED = frozenset({"con", "prn", "aux", "nul", *(f"com{i}" for i in range(1, 10)),
                       *(f"lpt{i}" for i in range(1, 10))})


def slugify(title: str, *, max_length: int = 80, max_bytes: int = 200) -> str:
    """A file-name slug for a node title (SPEC §1).

    ASCII titles become lowercase kebab-case; accented Latin and full-width letters become their
    ASCII base (`Café` -> `cafe`); CJK and other scripts keep their characters, with their
    combining marks (`ガイド`, `हिन्दी`), lowercased where the script has case; characters that
    are unsafe in file names never appear; no leading or trailing dots, spaces or dashes. The
    slug is at most `max_length` characters and `max_bytes` UTF-8 bytes (file systems limit a
    name to 255 bytes, and 80 characters of a 4-byte script would exceed it).
    """
    text = _SLUG_FORBIDDEN.sub(" ", nfc(title).strip())
    out: list[str] = []
    for ch in text:
        if ch.isascii():
            out.append(ch.lower() if ch.isalnum() else "-")
            continue
        base = "".join(c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c))
        if base and base.isascii():
            out.append("".join(c.lower() if c.isalnum() else "-" for c in base))
            continue
        category = unicodedata.category(ch)
        if category[0] in "LN" or (category[0] == "M" and out and out[-1] != "-"):
            out.append(ch.lower())
        else:
            out.append("-")
    slug = nfc(re.sub(r"-{2,}", "-", "".join(out)).strip("-."))
    if len(slug) > max_length:
        slug = slug[:max_length]
    while len(slug.encode("utf-8")) > max_bytes:
        slug = slug[:-1]
    slug = slug.rstrip("-.")
    if slug.split(".", 1)[0] in _RESERVED:
        slug += "-note"
    return slug or "node"


def has_cjk(text: str) -> bool:
    return bool(_CJK.search(text))


def glob_matcher(globs: tuple[str, ...] | list[str]) -> Callable[[str], bool] | None:
    """A test for workspace-relative paths against `globs`, or None for no globs. `*` and `?`
    stay within one folder, `**` spans folders (`**/x.md` also matches `x.md`), `[...]` is a
    character class, and a glob ending in `/` means everything under that folder. A glob
    without `/` matches a file name in any folder (`*.canvas.md`), as in .gitignore. Compared
    after NFC normalisation, case-sensitively."""
    if not globs:
        return None
    parts = []
    for glob in globs:
        glob = nfc(glob.strip())
        if glob.endswith("/"):
            glob += "**"
        if "/" not in glob:
            glob = "**/" + glob
        parts.append(_glob_regex(glob.lstrip("/")))
    pattern = re.compile("(?:" + "|".join(parts) + r")\Z")
    return lambda rel: pattern.match(nfc(rel)) is not None


def _glob_regex(glob: str) -> str:
    out, i = [], 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        elif glob[i] == "[" and "]" in glob[i + 2:]:
            end = glob.index("]", i + 2)
            body = glob[i + 1:end]
            negate = body.startswith("!")
            body = body[1:] if negate else body
            body = body.replace("\\", "\\\\")
            out.append(f"[^/{body}]" if negate else f"[{body}]")
            i = end + 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return "".join(out)
