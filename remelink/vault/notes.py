"""Notes: decoding, the frontmatter split, and byte-faithful reassembly (SPEC §2).

A note is UTF-8 text with optional YAML frontmatter: first line `---`, closed by the next line
that is exactly `---`. This module never parses YAML (see `frontmatter.py`); it only finds the
block, so that link checking of non-digest notes costs no YAML at all.

Fidelity rules: the BOM, the newline style and every byte of the body are kept. `Note.text` is
the decoded file without the BOM; `Note.render()` gives back the exact original bytes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

from remelink.errors import NoteError

BOM = "\ufeff"
DEFAULT_MAX_BYTES = 10 * 1024 * 1024

# The closing fence is a line that is exactly `---` (trailing spaces tolerated: editors add them).
_CLOSE_RE = re.compile(r"^---[ \t]*\r?$", re.M)
_OPEN_RE = re.compile(r"---[ \t]*(\r?\n)")
# A YAML mapping starts with a key (or a flow mapping). A block that starts otherwise is a
# thematic break followed by prose, and treating it as frontmatter would hide that prose.
_FIRST_KEY_RE = re.compile(r"^(?:\{|\?\s|[^\s#\-][^\n]*?:(?:[ \t]|\r?$)"
                           r"|-[^\s\-][^\n]*?:(?:[ \t]|\r?$))")


@dataclass(frozen=True, slots=True)
class Note:
    """One decoded note. `frontmatter_text` is None when the note has no frontmatter block."""

    path: str
    text: str
    bom: bool
    newline: str
    frontmatter_text: str | None
    body: str
    body_offset: int
    body_line: int  # 1-based file line where the body starts

    def render(self) -> bytes:
        return ((BOM if self.bom else "") + self.text).encode("utf-8")

    def with_text(self, text: str) -> Note:
        """The same note with new content; the BOM and path are kept."""
        return parse_text(self.path, text, bom=self.bom)

    @property
    def line_count(self) -> int:
        return count_lines(self.text)


def count_lines(text: str) -> int:
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def detect_newline(text: str) -> str:
    idx = text.find("\n")
    return "\r\n" if idx > 0 and text[idx - 1] == "\r" else "\n"


def parse_text(path: str, text: str, *, bom: bool = False) -> Note:
    """Split decoded text (BOM already removed) into frontmatter and body."""
    if text.startswith(BOM):
        text, bom = text[1:], True
    newline = detect_newline(text)
    fm_text: str | None = None
    body_offset = 0
    body_line = 1
    m = _OPEN_RE.match(text)
    if m:
        close = _CLOSE_RE.search(text, m.end())
        if close and _looks_like_mapping(text[m.end():close.start()]):
            fm_text = text[m.end():close.start()]
            end = close.end()
            if text.startswith("\r\n", end):
                end += 2
            elif text.startswith("\n", end):
                end += 1
            body_offset = end
            body_line = text.count("\n", 0, end) + 1
    return Note(path=path, text=text, bom=bom, newline=newline, frontmatter_text=fm_text,
                body=text[body_offset:], body_offset=body_offset, body_line=body_line)


def _looks_like_mapping(block: str) -> bool:
    for line in block.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        return bool(_FIRST_KEY_RE.match(line))
    return True  # empty or comments only: an empty mapping


def unclosed_frontmatter(note: Note) -> bool:
    """True when the note opens a frontmatter block (a `---` line, then a `key:` line) that no
    `---` line closes. Such a note has no frontmatter (its text is all body), and a reader should
    say so rather than report its keys as missing."""
    if note.frontmatter_text is not None:
        return False
    m = _OPEN_RE.match(note.text)
    if m is None or _CLOSE_RE.search(note.text, m.end()):
        return False
    for line in note.text[m.end():].splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return bool(_FIRST_KEY_RE.match(line))
    return False


def too_big(size: int, max_bytes: int) -> str:
    """The message for a note over the size limit (`limits.max_note_bytes`)."""
    def fmt(n: int) -> str:
        return f"{n / 1048576:.1f} MiB" if n >= 1048576 else f"{n} bytes"
    return f"file is {fmt(size)}, over the {fmt(max_bytes)} limit for notes"


def decode(path: str, data: bytes, *, max_bytes: int = DEFAULT_MAX_BYTES) -> Note:
    """Decode raw bytes into a Note, or raise NoteError with one actionable line."""
    if len(data) > max_bytes:
        raise NoteError(too_big(len(data), max_bytes), path=path,
                        hint="split it, or raise limits.max_note_bytes")
    if b"\x00" in data[:8192]:
        raise NoteError("binary file (NUL bytes), not a note", path=path,
                        hint="move it out of the notes folders or give it a non-.md extension")
    bom = data.startswith(b"\xef\xbb\xbf")
    try:
        text = data[3:].decode("utf-8") if bom else data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise NoteError(f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at line {line})", path=path,
                        hint="re-save the file as UTF-8") from None
    return parse_text(path, text, bom=bom)


def read_note(root: Path, rel: str, *, max_bytes: int = DEFAULT_MAX_BYTES,
              root_real: str | None = None) -> Note:
    """Read and decode workspace-relative `rel` under `root`, through the vault boundary
    (`fsio.read_file`): never outside the vault, never a FIFO, socket or device, the size checked
    before reading. A name stored in NFD is found under its NFC path. Raises NoteError (one
    line) for missing, unsafe, unreadable, binary, non-UTF-8 or oversized files; never modifies
    the file."""
    from remelink.vault.boundary import read_file, vault_real
    from remelink.vault.paths import disk_path

    try:
        got = read_file(disk_path(root, rel), root_real=root_real or vault_real(root),
                        limit=max_bytes, rel=rel)
    except FileNotFoundError:
        raise NoteError("file not found", path=rel) from None
    except NotADirectoryError:
        raise NoteError("file not found (a folder on its path is a file)", path=rel) from None
    except OSError as exc:
        raise NoteError(f"cannot read file: {exc.strerror or exc}", path=rel) from None
    if got.data is None:
        raise NoteError(too_big(got.size, max_bytes), path=rel,
                        hint="split it, or raise limits.max_note_bytes")
    return decode(rel, got.data, max_bytes=max_bytes)


def is_blank(note: Note) -> bool:
    """True for a note with no content beyond whitespace and an empty frontmatter."""
    return not note.body.strip() and not (note.frontmatter_text or "").strip()


def join(note: Note, frontmatter_text: str | None, body: str) -> str:
    """Reassemble text from a frontmatter block and a body, in the note's newline style.

    `frontmatter_text` must end with a newline (or be empty); None drops the block.
    """
    if frontmatter_text is None:
        return body
    nl = note.newline
    return f"---{nl}{frontmatter_text}---{nl}{body}"


def replace_body(note: Note, body: str) -> Note:
    """The note with a new body; frontmatter bytes untouched."""
    text = note.text[:note.body_offset] + body
    return replace(parse_text(note.path, text, bom=note.bom))


def to_newline(text: str, newline: str) -> str:
    """Convert model-written text (LF) to the note's newline style."""
    if newline == "\n":
        return text.replace("\r\n", "\n")
    return re.sub(r"(?<!\r)\n", "\r\n", text)
