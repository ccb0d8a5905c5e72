"""The six integration tools of SPEC §6, bound to one unit's workspace.

Reads may open any note of the vault except dot-folders (`.remelink/`, `.git/`). Writes reach
only the unit's single target under `digest/<bucket>/`, are staged in memory, and are refused
when they would drop a line of prose, a wikilink or a Sources sentence the node had, repeat a
Sources sentence, or add code that none of the unit's notes holds (SPEC §7.2, codeguard.py). A
staged node is checked at once (`check`): the tool's answer lists what would keep the receipt
from being accepted, so the model fixes it in the same turn.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from remelink import codeguard
from remelink.guards import conservation_problems, duplicate_sources, quote_line, quoted_lines
from remelink.tools.base import Tool, ToolBox, ToolError
from remelink.tools.line_endings import find_once, with_endings_of
from remelink.vault import frontmatter
from remelink.vault.notes import (
    Note,
    count_lines,
    detect_newline,
    parse_text,
    replace_body,
    to_newline,
)
from remelink.vault.paths import shown
from remelink.workspace import UnitWorkspace

READ_LIMIT = 50 * 1024
MAX_CONTENT = 64 * 1024       # bytes of one write's body, and of what one unit may grow a node to
MAX_METADATA = 8 * 1024       # bytes of the frontmatter keys one call may set
MAX_NAME = 200
MAX_DESCRIPTION = 1000
_KEY_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")
# C0 controls except tab/newline/CR, DEL, and lone UTF-16 surrogates (JSON `\ud800` decodes to
# one; it cannot be encoded as UTF-8, so it would only fail later, at commit time).
_CTRL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")
_FENCE_LINE_RE = re.compile(r"---[ \t]*\n")


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NodeSearchArgs(_Args):
    query: str = Field(min_length=1, max_length=4000,
                       description="Plain words (not query syntax).")
    limit: int = Field(20, ge=1, le=100, description="1-100, default 20.")
    bucket: Literal["procedure", "personal", "wiki"] | None = Field(
        None, description="Only this bucket (default: all).")


class ReadArgs(_Args):
    path: str = Field(min_length=1, max_length=1000,
                      description="e.g. digest/wiki/x.md")
    start_line: int | None = Field(None, ge=1, description="1-based.")
    end_line: int | None = Field(None, ge=1, description="Inclusive.")


class PathArgs(_Args):
    path: str = Field(min_length=1, max_length=1000)


def _metadata_keys(value: dict[str, Any] | None) -> dict[str, Any] | None:
    if value is None:
        return None
    for key in value:
        if not _KEY_RE.match(key):
            raise ValueError(f"metadata key {key!r} is not a plain identifier")
    _check_values(value, "metadata")
    return value


def _check_values(value: Any, where: str) -> None:
    """Frontmatter values are plain JSON data without control characters."""
    if isinstance(value, str):
        if _CTRL_RE.search(value.replace("\t", " ").replace("\n", " ").replace("\r", " ")):
            raise ValueError(f"{where} contains control characters")
    elif isinstance(value, dict):
        for key, item in value.items():
            if _CTRL_RE.search(str(key)):
                raise ValueError(f"{where} has a key with control characters")
            _check_values(item, f"{where}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _check_values(item, f"{where}[{i}]")


class WriteArgs(_Args):
    path: str = Field(min_length=1, max_length=1000,
                      description="digest/<unit bucket>/<slug>.md")
    name: str = Field(min_length=1, max_length=MAX_NAME, description="Title.")
    description: str = Field(min_length=1, max_length=MAX_DESCRIPTION,
                             description="One sentence: what the node holds.")
    content: str = Field(min_length=1, max_length=MAX_CONTENT,
                         description="Markdown body with ## Sources, no frontmatter.")
    metadata: dict[str, Any] | None = Field(
        None, description="Other frontmatter keys, e.g. {\"kind\": \"procedure\"}.")

    _check_keys = field_validator("metadata")(_metadata_keys)


class EditArgs(_Args):
    path: str = Field(min_length=1, max_length=1000)
    old: str = Field(min_length=1, max_length=MAX_CONTENT,
                     description="Exact body text occurring once.")
    new: str = Field(max_length=MAX_CONTENT)


class FrontmatterUpdateArgs(_Args):
    path: str = Field(min_length=1, max_length=1000)
    metadata: dict[str, Any] = Field(min_length=1,
                                     description="Keys to set.")

    _check_keys = field_validator("metadata")(_metadata_keys)


def _one_line(text: str, what: str) -> str:
    text = " ".join(text.split())
    if not text:
        raise ToolError(f"{what} is empty")
    if _CTRL_RE.search(text):
        raise ToolError(f"{what} contains control characters")
    return text


def _clean_body(content: str) -> str:
    body = content.replace("\r\n", "\n").replace("\r", "\n")
    if _CTRL_RE.search(body):
        raise ToolError("content contains control characters; send plain markdown text")
    head = body.lstrip()
    if _FENCE_LINE_RE.match(head) and parse_text("x", head).frontmatter_text is not None:
        raise ToolError("content starts with a frontmatter block; pass name, description and "
                        "metadata as arguments and only the markdown body as content")
    if not body.strip():
        raise ToolError("content is empty")
    size = len(body.encode("utf-8"))
    if size > MAX_CONTENT:
        raise ToolError(f"content is {size} bytes; the limit is {MAX_CONTENT} (a digest node is "
                        "an abstraction of about 50-200 words, not a copy of the notes)")
    return body if body.endswith("\n") else body + "\n"


def _check_growth(original: Note | None, new: Note) -> None:
    """A unit may not grow a node past MAX_CONTENT (or past its size before the unit, for
    nodes people wrote longer by hand): bounded output, whatever the number of edits."""
    limit = max(MAX_CONTENT, len(original.render()) if original is not None else 0)
    size = len(new.render())
    if size > limit:
        raise ToolError(f"the node would be {size} bytes; the limit is {limit}. Keep the node "
                        "an abstraction: summarise instead of adding more text")


def _check_metadata(meta: dict[str, Any]) -> dict[str, Any]:
    size = len(frontmatter.dump(meta).encode("utf-8"))
    if size > MAX_METADATA:
        raise ToolError(f"metadata is {size} bytes as YAML; the limit is {MAX_METADATA}")
    problems = frontmatter.value_problems(meta)
    if problems:
        raise ToolError("; ".join(problems))
    for key in ("name", "description"):
        if key in meta:
            value = meta[key]
            if not isinstance(value, str) or not value.strip():
                raise ToolError(f"{key} may change but not become empty")
            meta[key] = _one_line(value, key)
    return meta


def _merge(current: Note, original: Note | None, changes: dict[str, Any]) -> Note:
    """`current` with `changes` merged into its frontmatter, additively for what a person wrote
    (SPEC §2, §10.2): a key the node had before this unit that remelink does not own keeps its
    value (a change is refused); `memory_tags` only gains tags, appended after the ones on the
    node, whose quoting and comments stay."""
    before = frontmatter.load(original) if original is not None else {}
    for key, value in changes.items():
        if key in before and key not in frontmatter.ENGINE_KEYS and before[key] != value:
            raise ToolError(f"{key} was written by a person, and remelink keeps its value as "
                            f"written; leave {key} out of metadata")
    changes = dict(changes)
    tags = changes.pop(frontmatter.TAG_KEY, None)
    updated = frontmatter.update(current, changes)
    if tags:
        have = frontmatter.load(updated).get(frontmatter.TAG_KEY)
        if have is not None and not isinstance(have, list):
            raise ToolError(f"{frontmatter.TAG_KEY} on the node is not a list; it is kept as "
                            f"written: leave {frontmatter.TAG_KEY} out of metadata")
        taken = {str(t).casefold() for t in have or []}
        fresh = []
        for tag in tags:
            if tag.casefold() not in taken:
                taken.add(tag.casefold())
                fresh.append(tag)
        updated = frontmatter.extend_list(updated, frontmatter.TAG_KEY, fresh)
    return updated


def _new_meta(changes: dict[str, Any]) -> dict[str, Any]:
    """A new node's frontmatter: an empty `memory_tags` list is never written (SPEC §10.2)."""
    if changes.get(frontmatter.TAG_KEY) == []:
        return {k: v for k, v in changes.items() if k != frontmatter.TAG_KEY}
    return changes


# (staged node, node before the unit or None) -> problems that would refuse the receipt
Check = Callable[[Note, "Note | None"], list[str]]


class VaultTools:
    """Handlers for one unit. `ws` holds the overlay; nothing here touches the disk for writing."""

    def __init__(self, ws: UnitWorkspace, check: Check | None = None) -> None:
        self.ws = ws
        self.check = check
        self._sources: list[str] | None = None

    def _source_texts(self) -> list[str]:
        """The texts of the unit's notes (read once; a note that cannot be read gives none)."""
        if self._sources is None:
            texts = []
            for path in self.ws.unit.paths if self.ws.unit is not None else ():
                try:
                    note = self.ws.current(self.ws.readable(path))
                except Exception:  # a missing or unreadable note vouches for no code
                    note = None
                if note is not None:
                    texts.append(note.text)
            self._sources = texts
        return self._sources

    def _no_invented_code(self, current: Note | None, original: Note | None, new: Note) -> None:
        """SPEC §7.2: the code this call adds must occur verbatim in one of the unit's notes."""
        before = [n.body for n in (current, original) if n is not None]
        found = codeguard.invented(new.body, before, self._source_texts())
        if found:
            paths = list(self.ws.unit.paths) if self.ws.unit is not None else []
            message, items, tail = codeguard.refusal(found, new.path, paths)
            raise ToolError(message, items=items, tail=tail)

    # -- reading ---------------------------------------------------------------------------
    def node_search(self, args: NodeSearchArgs) -> str:
        query = args.query.strip()
        if not query:
            raise ToolError("query is empty")
        hits = self.ws.search(query, args.limit, args.bucket)
        self.ws.searches.append((query, hits))
        if not hits:
            return (f"No digest node matches {query[:80]!r}. If nothing similar exists, CREATE a "
                    "new node in the unit's bucket.")
        lines = [f"{len(hits)} node(s), best first:"]
        for i, hit in enumerate(hits, 1):
            # One line per field whatever the node's frontmatter holds (a multi-line
            # description would break the list the model reads).
            lines.append(f"{i}. [{hit.score:.2f}] {shown(hit.path)}")
            lines.append(f"   name: {' '.join(str(hit.name).split())}")
            lines.append(f"   description: {' '.join(str(hit.description).split())}")
        return "\n".join(lines)

    def read(self, args: ReadArgs) -> str:
        rel = self.ws.readable(args.path)
        note = self.ws.require(rel)
        self.ws.reads.append(rel)
        lines = note.text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        total = len(lines)
        start = args.start_line or 1
        end = min(args.end_line or total, total)
        if total == 0:
            return f"{rel} is empty."
        if start > total:
            raise ToolError(f"start_line {start} is past the end of {rel} ({total} lines)")
        if args.end_line is not None and args.end_line < start:
            raise ToolError(f"end_line {args.end_line} is before start_line {start}")
        out: list[str] = []
        size = 0
        last = start - 1
        cut = False
        for i in range(start - 1, end):
            line = lines[i].rstrip("\r")
            cost = len(line.encode("utf-8")) + 1
            if size + cost > READ_LIMIT:
                if not out:  # one line longer than the whole budget: show its head only
                    out.append(line.encode("utf-8")[:READ_LIMIT].decode("utf-8", "ignore"))
                    last, cut = i + 1, True
                break
            out.append(line)
            size += cost
            last = i + 1
        text = "\n".join(out)
        if cut:
            more = (f"call read with start_line={last + 1} to continue" if last < end
                    else "nothing follows it")
            text += (f"\n[... line {last} is longer than {READ_LIMIT // 1024} KiB and was cut; "
                     f"{more}]")
        elif last < end:
            text += (f"\n[... truncated at {READ_LIMIT // 1024} KiB: lines {start}-{last} of "
                     f"{total} shown; call read with start_line={last + 1} to continue]")
        elif start > 1 or end < total:
            text += f"\n[lines {start}-{end} of {total}]"
        return text

    def frontmatter_read(self, args: PathArgs) -> str:
        rel = self.ws.readable(args.path)
        note = self.ws.require(rel)
        values = frontmatter.load(note)
        if not values:
            return f"{rel} has no frontmatter."
        return frontmatter.to_yaml_values(values).rstrip("\n")

    # -- writing ---------------------------------------------------------------------------
    def _conserve(self, original: Note | None, new: Note) -> None:
        if original is None:
            return
        paths = self.ws.unit.paths if self.ws.unit is not None else ()
        problems = conservation_problems(original, new, paths)
        if problems:
            raise ToolError(
                "refused, nothing staged: an update keeps every line, wikilink and Sources "
                f"sentence {new.path} had, in order; it only inserts. This call would lose:",
                items=problems, path=new.path,
                tail="Put these back word for word (or send an edit that inserts text next to "
                     "them instead of rewriting). Only a CORRECT may replace the line holding a "
                     "wrong claim, and only by quoting it verbatim in its correction, next to the "
                     "link to the new source.")
        repeated = duplicate_sources(original, new)
        if repeated:
            raise ToolError(
                f"refused, nothing staged: ## Sources of {new.path} would hold the same "
                "sentence twice (an earlier call may have added it already; read the node):",
                items=[quote_line(s) for s in repeated], path=new.path)

    def _checked(self, message: str, new: Note, original: Note | None) -> str:
        """The tool's answer for a staged node: staged, and what still keeps it from being
        accepted (or that nothing does), so problems never wait for the receipt."""
        if self.check is None:
            return f"{message} It is written to the vault when your receipt is accepted."
        problems = self.check(new, original)
        notes = []
        if original is not None and self.ws.unit is not None:
            for ln in quoted_lines(original, new, self.ws.unit.paths):
                notes.append(f"body line {ln.line} is replaced by a correction that quotes it: "
                             "the receipt must say CORRECT")
        if not problems:
            tail = (" " + "; ".join(notes) + ".") if notes else ""
            return (f"{message} Checked: it passes every check.{tail} Unless you want to change "
                    "more, answer now with only the receipt JSON.")
        items = "\n".join(f"- {' '.join(p.split())}" for p in problems)
        tail = ("\n" + "\n".join(f"- note: {n}" for n in notes)) if notes else ""
        return (f"{message} Not acceptable yet (line numbers count body lines, without the "
                f"frontmatter):\n{items}{tail}\nFix these with edit on {new.path}, then answer "
                "with the receipt.")

    def write(self, args: WriteArgs) -> str:
        ws = self.ws
        rel = ws.writable(args.path)
        current, original = ws.open_for_write(rel)
        name = _one_line(args.name, "name")
        description = _one_line(args.description, "description")
        body = _clean_body(args.content)
        meta = dict(args.metadata or {})
        for key in ("name", "description"):
            if key in meta:
                raise ToolError(f"pass {key} as its own argument, not inside metadata")
        _check_metadata(meta)
        changes: dict[str, Any] = {"name": name, "description": description, **meta}
        if current is None:
            text = frontmatter.render_new(_new_meta(changes), body)
            new = parse_text(rel, text)
            verb = "CREATE of a new node"
        else:
            updated = _merge(current, original, changes)
            # The body keeps its own line ending (LF frontmatter over a CRLF body is common).
            newline = detect_newline(current.body) if "\n" in current.body else updated.newline
            new = replace_body(updated, to_newline(body, newline))
            verb = "overwrite of the existing node"
        self._conserve(original, new)
        self._no_invented_code(current, original, new)
        _check_growth(original, new)
        ws.stage(new, original)
        return self._checked(f"Staged {verb} {rel} ({len(new.render())} bytes, "
                             f"{count_lines(new.text)} lines).", new, original)

    def edit(self, args: EditArgs) -> str:
        ws = self.ws
        rel = ws.writable(args.path)
        current, original = ws.open_for_write(rel)
        if current is None:
            raise ToolError(f"{rel} does not exist; use write to create a new node")
        body = current.body
        found = find_once(body, args.old)
        if isinstance(found, int):
            if found == 0:
                raise ToolError(f"old text not found in the body of {rel}; read the node and "
                                "copy the text exactly")
            raise ToolError(f"old text occurs {found} times in {rel}; include more context so "
                            "it occurs exactly once")
        start, end = found
        if _CTRL_RE.search(args.new.replace("\r", "")):
            raise ToolError("new text contains control characters")
        new_text = with_endings_of(args.new, body, start, end, current.newline)
        updated = replace_body(current, body[:start] + new_text + body[end:])
        self._conserve(original, updated)
        self._no_invented_code(current, original, updated)
        _check_growth(original, updated)
        ws.stage(updated, original)
        return self._checked(f"Staged edit of {rel} (1 replacement).", updated, original)

    def frontmatter_update(self, args: FrontmatterUpdateArgs) -> str:
        ws = self.ws
        rel = ws.writable(args.path)
        current, original = ws.open_for_write(rel)
        if current is None:
            raise ToolError(f"{rel} does not exist; use write to create a new node")
        meta = _check_metadata(dict(args.metadata))
        updated = _merge(current, original, meta)
        _check_growth(original, updated)
        ws.stage(updated, original)
        return self._checked(f"Staged frontmatter update of {rel} ({', '.join(meta)}).",
                             updated, original)


DESCRIPTIONS = {
    "node_search": "Find digest nodes by words: path, name, description of each hit.",
    "read": "Read a note (with frontmatter), or a line range of it.",
    "frontmatter_read": "A note's frontmatter values, as YAML.",
    "write": "Create a new node. Update an existing one with edit.",
    "edit": "Replace `old` in a node's body with `new`; an update keeps every line it had.",
    "frontmatter_update": "Merge keys into a node's frontmatter (name and description stay "
                          "non-empty).",
}


def toolbox(ws: UnitWorkspace, *, read_only: bool = False, check: Check | None = None
            ) -> ToolBox:
    """The six tools for one unit, or, for extraction and tagging, only the readers of a note
    they use (they have no node index: a node_search there could only answer "no match")."""
    h = VaultTools(ws, check)
    tools: list[Tool[Any]] = [
        Tool("read", DESCRIPTIONS["read"], ReadArgs, h.read),
        Tool("frontmatter_read", DESCRIPTIONS["frontmatter_read"], PathArgs, h.frontmatter_read),
    ]
    if not read_only:
        tools = [Tool("node_search", DESCRIPTIONS["node_search"], NodeSearchArgs,
                      h.node_search), *tools]
        tools += [
            Tool("write", DESCRIPTIONS["write"], WriteArgs, h.write),
            Tool("edit", DESCRIPTIONS["edit"], EditArgs, h.edit),
            Tool("frontmatter_update", DESCRIPTIONS["frontmatter_update"], FrontmatterUpdateArgs,
                 h.frontmatter_update),
        ]
    return ToolBox(tools)
