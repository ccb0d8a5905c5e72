"""What the MCP server's tools do, without the MCP SDK (SPEC §5.2): each takes plain values and
returns the text the model reads, bounded to MAX_CHARS, or raises RemelinkError with one line.

The server (`remelink.mcp.server`) keeps one `Memory` for its life: the passage and node
indexes stay open, and each call refreshes them incrementally.
"""

from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

from remelink.config import Settings
from remelink.decoding import scrub_text
from remelink.errors import FileSystemError, NoteError, SandboxError, UsageError
from remelink.index import NodeIndex
from remelink.search import MAX_LIMIT, PassageIndex, search
from remelink.search.expand import cut
from remelink.search.render import hit_text
from remelink.vault.paths import MARKER_DIR, normalize_relpath, slugify

MAX_CHARS = 20_000  # per tool result (about 5,000 tokens)
# Seconds between two checks of the notes for changes (a walk of the vault; see
# PassageIndex.recheck): edits made outside the server are seen within about this long.
RECHECK = 1.0
READ_CHARS = MAX_CHARS
REMEMBER_CHARS = 20_000  # the largest note `remember` writes
NODE_LIMIT = 100


def bounded(text: str, limit: int = MAX_CHARS, *, what: str = "") -> str:
    """`text`, or its first `limit` characters and a line saying it was cut."""
    if len(text) <= limit:
        return text
    head, _ = cut(text, limit)
    return f"{head}\n[cut at {limit:,} of {len(text):,} characters{what}]"


@dataclass
class Memory:
    vault: Path
    settings: Settings

    def __post_init__(self) -> None:
        self.passages = PassageIndex(self.vault, self.settings, recheck=RECHECK)
        self.nodes = NodeIndex(self.vault, self.settings)
        self._nodes_checked = -1e18
        # For a person, not the model: a tampered index folder moved aside and rebuilt. The
        # server writes them to its stderr (the client's log of the server).
        self.warnings: list[str] = []
        # One call at a time, the start-up warm-up included: the node index is not safe to
        # refresh from two threads, and a call that needs an index waits for the warm-up
        # that is opening it anyway.
        self.lock = threading.RLock()

    def close(self) -> None:
        self.passages.close()
        self.nodes.close()

    def warm(self) -> None:
        """Open and refresh both indexes (best effort: a failure shows up again, as a tool
        error, in the call that needs the index)."""
        with self.lock:
            with contextlib.suppress(Exception):
                self.passages.refresh()
            with contextlib.suppress(Exception):
                self.nodes.refresh()
                self._nodes_checked = time.monotonic()

    # -- search ------------------------------------------------------------------------------
    def search(self, query: str, limit: int = 5, since: str | None = None,
               until: str | None = None, folder: str | None = None, links: bool = True) -> str:
        if not query or not query.strip():
            raise UsageError("query is empty: give a question or some words")
        note = ""
        if limit > MAX_LIMIT:
            note = f"(limit {limit} is over the maximum; showing at most {MAX_LIMIT})\n"
            limit = MAX_LIMIT
        result = search(self.vault, self.settings, query, limit=limit, since=since,
                        until=until, folder=folder or None, links=links, index=self.passages)
        self.warnings.extend(result.warnings)
        if not result.hits:
            return note + f"No note matches {query.strip()[:200]!r}."
        blocks = [hit_text(h) for h in result.hits]
        out = note
        for i, block in enumerate(blocks):
            piece = block + "\n\n"
            if len(out) + len(piece) > MAX_CHARS:
                left = len(blocks) - i
                if i == 0:
                    out += bounded(piece, MAX_CHARS - len(out) - 120) + "\n"
                    left -= 1
                if left:
                    out += (f"[cut: {left} more hit(s) not shown to stay under {MAX_CHARS:,} "
                            "characters; ask with a smaller limit or links=false]")
                return out.rstrip() + "\n"
            out += piece
        return out.rstrip() + "\n"

    def node_search(self, query: str, limit: int = 10, bucket: str | None = None) -> str:
        if not query or not query.strip():
            raise UsageError("query is empty: give some words")
        limit = max(1, min(limit, NODE_LIMIT))
        now = time.monotonic()
        if now - self._nodes_checked >= RECHECK:
            self.nodes.refresh()
            self._nodes_checked = now
        hits = self.nodes.search(query, limit=limit, bucket=bucket or None, refresh=False)
        self.nodes.notices.clear()  # index notices are for the CLI's stderr, not the model
        self.warnings.extend(self.nodes.warnings)
        self.nodes.warnings.clear()
        if not hits:
            return f"No digest node matches {query.strip()[:200]!r}."
        lines = [f"[{h.score:.2f}] {h.path}\n  name: {h.name}\n  description: "
                 f"{cut(h.description, 300)[0]}" for h in hits]
        return bounded("\n".join(lines) + "\n", what="; ask with a smaller limit")

    # -- read --------------------------------------------------------------------------------
    def read(self, path: str, start_line: int | None = None, end_line: int | None = None) -> str:
        import os

        from remelink.vault.boundary import hidden_inside, read_file, vault_real
        from remelink.vault.notes import decode
        from remelink.vault.paths import disk_path

        rel = normalize_relpath(scrub_text(path))
        if any(part.startswith(".") for part in rel.split("/")):
            raise SandboxError(f"{rel}: {MARKER_DIR}/ and hidden files are not notes; not read")
        disk = disk_path(self.vault, rel)
        root_real = vault_real(self.vault)
        if hidden_inside(root_real, os.path.realpath(disk)):
            raise SandboxError(f"{rel}: a link into {MARKER_DIR}/ or a hidden file is not a "
                               "note; not read")
        try:
            got = read_file(disk, root_real=root_real, limit=self.settings.max_note_bytes,
                            rel=rel)
        except FileNotFoundError:
            raise NoteError("file not found", path=rel,
                            hint="use search or node_search to find a path") from None
        except IsADirectoryError:
            raise NoteError("is a folder, not a note", path=rel) from None
        except NotADirectoryError:
            raise NoteError("file not found (a folder on its path is a file)", path=rel) from None
        except OSError as exc:
            raise NoteError(f"cannot read: {exc.strerror or exc}", path=rel) from None
        if got.data is None:
            raise NoteError(f"is {got.size:,} bytes, over the note limit; not read", path=rel)
        note = decode(rel, got.data, max_bytes=self.settings.max_note_bytes)
        lines = note.text.splitlines()
        total = len(lines)
        first = 1 if start_line is None else start_line
        last = total if end_line is None else min(end_line, total)
        if first < 1 or (end_line is not None and end_line < first):
            raise UsageError(f"line range {first}-{end_line} is not valid: lines are 1-based "
                             f"and start_line <= end_line ({rel} has {total} lines)")
        if total and first > total:
            raise UsageError(f"{rel} has {total} lines; start_line {first} is past the end")
        body: list[str] = []
        size = 0
        shown_last = first - 1
        for number in range(first, last + 1):
            line = lines[number - 1]
            if size + len(line) + 1 > READ_CHARS and body:
                break
            body.append(line)
            size += len(line) + 1
            shown_last = number
        head = f"{rel} (lines {first}-{shown_last} of {total})\n"
        text = head + "\n".join(body)
        if shown_last < last:
            text += (f"\n[cut at line {shown_last} to stay under {READ_CHARS:,} characters; "
                     f"read again with start_line={shown_last + 1}]")
        return bounded(text + "\n", READ_CHARS + 400)

    # -- recent ------------------------------------------------------------------------------
    def recent(self, runs: int = 3) -> str:
        from remelink.mcp.recent import recent_runs, recent_text

        runs = max(1, min(runs, 20))
        return bounded(recent_text(recent_runs(self.vault, self.settings, runs)),
                       what="; ask for fewer runs")

    # -- remember ----------------------------------------------------------------------------
    def remember(self, title: str, text: str, today: date | None = None) -> str:
        title, text = scrub_text(title or ""), scrub_text(text or "")  # lone surrogates
        if not title or not title.strip():
            raise UsageError("title is empty: give the note a short title")
        if not text or not text.strip():
            raise UsageError("text is empty: give what to remember")
        if len(text) > REMEMBER_CHARS:
            raise UsageError(f"text is {len(text):,} characters, over the {REMEMBER_CHARS:,} a "
                             "note may have; split it into several notes")
        title = " ".join(title.split())[:200]
        day = (today or date.today()).isoformat()
        folder = f"{self.settings.folders.daily}/{day}"
        slug = slugify(title)
        stamp = datetime.now().astimezone().isoformat(timespec="seconds")
        content = (f"---\nname: {_yaml_str(title)}\nsource: remelink mcp (remember)\n"
                   f"created: {stamp}\n---\n# {title}\n\n{text.strip()}\n")
        rel = write_new(self.vault, folder, slug, content)
        self.passages.update([rel])  # searchable now, not at the next check
        self.warnings.extend(self.passages.take_warnings())
        return (f"Saved {rel}. It is a raw note: the next `remelink dream run` integrates it "
                "into the digest; search finds it now.")


def _yaml_str(text: str) -> str:
    import json

    return json.dumps(text, ensure_ascii=False)  # a JSON string is a YAML string


def write_new(vault: Path, folder: str, slug: str, content: str) -> str:
    """Create `folder/slug.md` (or `slug-2.md`, ...) with `content`, through the vault
    boundary (`own.publish`): the whole note or nothing (a temp file created exclusively,
    fsynced, then linked into place), never over an existing entry of any kind, never through
    a symlinked folder, folders created as needed. Returns the workspace path written."""
    from remelink.vault import own

    for n in range(1, 1000):
        rel = f"{folder}/{slug}.md" if n == 1 else f"{folder}/{slug}-{n}.md"
        try:
            published = own.publish(vault, rel, content)
        except OSError as exc:  # what filesystem_error does not name (EIO...): one line too
            raise FileSystemError(f"cannot write {rel}: {exc.strerror or exc}; nothing saved",
                                  hint="check the disk, then call remember again") from None
        if published:
            return rel
    raise UsageError(f"{folder}/ already holds 999 notes named {slug}*; choose another title")
