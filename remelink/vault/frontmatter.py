"""Frontmatter values: one YAML parser (PyYAML, safe) for reading and for writing (SPEC §2).

Reading uses libyaml when present (about 30 µs per node). Writing is surgical: a changed key's
lines are replaced by PyYAML's own rendering of that one key, everything else (other keys, key
order, comments, quoting, BOM, CRLF, the body) is left byte for byte. Every edit is verified by
parsing the result again; an edit that would not read back as intended is refused rather than
written. Because the same parser reads and writes, values such as `yes`, `0123` or `1.10` mean
the same thing to the model that reads them as to the file that stores them.

python-frontmatter is deliberately not used: its write-back sorts keys, drops comments, strips
the body, loses CRLF and BOMs, and drops the intro of notes that start with a `---` rule.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import yaml

from remelink.errors import NoteError
from remelink.vault.notes import Note, join, parse_text, to_newline, unclosed_frontmatter

# SPEC §2: what the keys remelink writes may hold lives in vault/values.py (no YAML import there,
# for lint's fast path); re-exported here for the writers.
from remelink.vault.values import ENGINE_KEYS as ENGINE_KEYS
from remelink.vault.values import KINDS as KINDS
from remelink.vault.values import TAG_KEY as TAG_KEY
from remelink.vault.values import value_problems as value_problems

try:  # libyaml is in the PyYAML wheel on every mainstream platform; fall back gracefully.
    _Loader: type[yaml.SafeLoader] = yaml.CSafeLoader  # type: ignore[assignment]
except AttributeError:  # pragma: no cover - depends on the wheel
    _Loader = yaml.SafeLoader


class _StrictLoader(yaml.SafeLoader):
    """Safe loader that refuses duplicate keys (PyYAML silently keeps the last one)."""


def _construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode,
                       deep: bool = False) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if isinstance(key, (list, dict)):
            continue
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark)
        seen.add(key)
    return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _yaml_error_line(exc: yaml.YAMLError, note: Note) -> str:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    if mark is not None:
        # +1 for 1-based lines, +1 for the opening `---` line.
        return f"invalid YAML in frontmatter at line {mark.line + 2}: {problem}"
    return f"invalid YAML in frontmatter: {problem}"


def load(note: Note) -> dict[str, Any]:
    """The frontmatter mapping of `note` ({} when there is none). Raises NoteError when the block
    is not valid YAML, is not a mapping, or repeats a key."""
    text = note.frontmatter_text
    if text is None and unclosed_frontmatter(note):
        raise NoteError("frontmatter opened by '---' on line 1 is never closed", path=note.path,
                        hint="add a line '---' after the last key")
    if text is None or not text.strip():
        return {}
    try:
        data = yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        raise NoteError(_yaml_error_line(exc, note), path=note.path,
                        hint="fix the YAML between the --- lines") from None
    except (ValueError, TypeError, OverflowError, RecursionError) as exc:
        # PyYAML's constructors raise plain ValueError for values such as `date: 2025-13-45`.
        raise NoteError(f"invalid value in frontmatter: {exc}", path=note.path,
                        hint="fix the YAML between the --- lines") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise NoteError(f"frontmatter is a {type(data).__name__}, not a mapping of keys",
                        path=note.path)
    if _has_duplicate_keys(text):  # PyYAML keeps the last value silently; refuse instead
        try:
            yaml.load(text, Loader=_StrictLoader)
        except yaml.YAMLError as exc:
            raise NoteError(_yaml_error_line(exc, note), path=note.path,
                            hint="remove the repeated key") from None
    return {str(k): v for k, v in data.items()}


_TOP_KEY_RE = re.compile(r"^([^\s#\-][^:\n]*?)\s*:(?:\s|$)", re.M)


def _has_duplicate_keys(text: str) -> bool:
    keys = _TOP_KEY_RE.findall(text)
    return len(keys) != len(set(keys))


class _Dumper(yaml.SafeDumper):
    """SafeDumper that writes multi-line strings as literal blocks (`|`) when YAML allows it,
    instead of a quoted scalar with doubled line breaks."""


# Line breaks other than LF only survive as escapes in a double-quoted scalar (PyYAML writes them
# raw in the other styles, where YAML then reads them as breaks).
_OTHER_BREAKS = re.compile(r"[\r\x85\u2028\u2029]")


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style: str | None = None
    if _OTHER_BREAKS.search(value):
        style = '"'
    elif "\n" in value and not value.endswith("\n\n"):  # `|+` would add a `...` line
        style = "|"
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


def dump(mapping: dict[str, Any]) -> str:
    """PyYAML's block rendering, unicode kept, insertion order kept, no line wrapping."""
    if not mapping:
        return ""
    return yaml.dump(mapping, Dumper=_Dumper, allow_unicode=True, sort_keys=False,
                     default_flow_style=False, width=1 << 30)


def to_yaml_values(mapping: dict[str, Any]) -> str:
    """What `frontmatter_read` shows the model: the values, as YAML."""
    return dump(mapping) or "{}\n"


def _node_end(node: yaml.Node) -> int:
    """End index of the last character that belongs to `node` (block collections end at the next
    token, which may sit after comment lines, so recurse into their children)."""
    if isinstance(node, yaml.MappingNode) and node.flow_style is not True and node.value:
        return max(_node_end(v) for pair in node.value for v in pair)
    if isinstance(node, yaml.SequenceNode) and node.flow_style is not True and node.value:
        return max(_node_end(v) for v in node.value)
    return int(node.end_mark.index)


@dataclass(frozen=True, slots=True)
class _Span:
    start: int  # start of the key's first line
    end: int  # end of the value's last line (after its newline)
    tail: str  # what follows a one-line scalar value on its line (an inline comment), or ""


def _key_spans(fm: str) -> dict[str, _Span]:
    """For each top-level key: its lines, from the start of the key's line to the end of the line
    holding its value's end. Works on the text as stored (LF or CRLF)."""
    root = yaml.compose(fm, Loader=yaml.SafeLoader)
    if root is None:
        return {}
    if not isinstance(root, yaml.MappingNode) or root.flow_style is True:
        raise ValueError("frontmatter is not a block mapping")
    spans: dict[str, _Span] = {}
    for key_node, value_node in root.value:
        if not isinstance(key_node, yaml.ScalarNode):
            raise ValueError("complex keys are not supported")
        start = fm.rfind("\n", 0, key_node.start_mark.index) + 1
        value_end = _node_end(value_node)
        end_idx = max(value_end, int(key_node.end_mark.index))
        nl = fm.find("\n", max(end_idx - 1, start))
        end = len(fm) if nl == -1 else nl + 1
        if key_node.value in spans:
            raise ValueError(f"duplicate key {key_node.value!r}")
        tail = ""
        if isinstance(value_node, yaml.ScalarNode) and value_node.style not in ("|", ">"):
            rest = fm[value_end:end].rstrip("\r\n")
            if "\n" not in fm[start:value_end] and rest.strip().startswith("#"):
                tail = rest
        spans[key_node.value] = _Span(start, end, tail)
    return spans


def update(note: Note, changes: dict[str, Any], *, remove: tuple[str, ...] = ()) -> Note:
    """A copy of `note` whose frontmatter has `changes` merged in (and `remove` keys dropped),
    touching only those keys' lines. Creates the block if the note had none.

    Everything else is kept byte for byte: other keys and comments, the `---` lines as written,
    the newline style of untouched lines, the BOM and the body. A one-line value keeps its inline
    comment. New keys go at the end. Raises NoteError if the existing frontmatter is invalid, or
    if the edit cannot be made faithfully (anchors and aliases, a flow-style mapping, complex
    keys, a value that does not read back as given).
    """
    before = load(note)
    expected = dict(before)
    for key in remove:
        expected.pop(key, None)
    expected.update(changes)
    if expected == before and list(expected) == list(before):
        return note
    nl = note.newline
    if note.frontmatter_text is None:
        new_fm = to_newline(dump(expected), nl)
        return _verified(note, join(note, new_fm, note.body), expected)

    fm = note.frontmatter_text
    fm_start = note.text.index("\n") + 1  # after the opening `---` line
    fm_end = fm_start + len(fm)
    try:
        spans = _key_spans(fm)
    except (ValueError, yaml.YAMLError) as exc:
        raise NoteError(f"cannot edit this frontmatter faithfully ({exc})", path=note.path,
                        hint="edit the frontmatter by hand") from None
    pieces: list[tuple[int, int, str]] = []
    for key in remove:
        if key in spans and key not in changes:
            pieces.append((spans[key].start, spans[key].end, ""))
    appended = ""
    for key, value in changes.items():
        span = spans.get(key)
        if span is None:
            appended += to_newline(dump({key: value}), nl)
            continue
        line_nl = "\r\n" if fm.endswith("\r\n", 0, span.end) else "\n"
        rendered = to_newline(dump({key: value}), line_nl if fm.endswith("\n", 0, span.end) else nl)
        if span.tail and rendered.count("\n") == 1:
            rendered = rendered.rstrip("\r\n") + span.tail + line_nl
        if not fm.endswith("\n", 0, span.end):  # the last line had no newline: keep it so
            rendered = rendered.rstrip("\r\n")
        pieces.append((span.start, span.end, rendered))
    out = fm
    for start, end, text in sorted(pieces, reverse=True):
        out = out[:start] + text + out[end:]
    if appended:
        if out and not out.endswith("\n"):
            out += nl
        out += appended
    return _verified(note, note.text[:fm_start] + out + note.text[fm_end:], expected)


def extend_list(note: Note, key: str, items: list[Any]) -> Note:
    """A copy of `note` whose list `key` has `items` appended, every byte already there kept:
    the items a person wrote, their quoting, the comments on and after them, the flow or block
    style. `[Vault]   # keep me` becomes `[Vault, Alice]   # keep me`; a block list gets one
    `- item` line per item, indented like its siblings. A missing or null key is set to the
    list (its inline comment kept). Raises NoteError when the value is not a list (nothing is
    changed then: the caller reports it) or the edit cannot be made faithfully."""
    before = load(note)
    current = before.get(key)
    if not items:
        return note
    if current is None:
        spans = _key_spans(note.frontmatter_text or "") if key in before else {}
        span = spans.get(key)
        if span is None or not span.tail:
            return update(note, {key: list(items)})
        # `memory_tags:   # note`: the list goes on the key's line, so the comment stays.
        fm = note.frontmatter_text or ""
        fm_start = note.text.index("\n") + 1
        line_nl = "\r\n" if fm.endswith("\r\n", 0, span.end) else "\n"
        line = f"{key}: [{', '.join(_flow_item(item) for item in items)}]{span.tail}{line_nl}"
        expected = {**before, key: list(items)}
        new_fm = fm[:span.start] + line + fm[span.end:]
        return _verified(note, note.text[:fm_start] + new_fm + note.text[fm_start + len(fm):],
                         expected)
    if not isinstance(current, list):
        raise NoteError(f"{key} is a {type(current).__name__}, not a list; left as written",
                        path=note.path, hint=f"write {key} as a list, e.g. {key}: [A, B]")
    expected = dict(before)
    expected[key] = [*current, *items]
    fm = note.frontmatter_text or ""
    fm_start = note.text.index("\n") + 1
    try:
        root = yaml.compose(fm, Loader=yaml.SafeLoader)
        if not isinstance(root, yaml.MappingNode):
            raise TypeError("not a mapping")
        value = next(v for k, v in root.value if isinstance(k, yaml.ScalarNode) and k.value == key)
    except (yaml.YAMLError, StopIteration, AttributeError, TypeError) as exc:
        raise NoteError(f"cannot extend {key} faithfully ({exc})", path=note.path,
                        hint="edit the frontmatter by hand") from None
    if not isinstance(value, yaml.SequenceNode) or value.tag != "tag:yaml.org,2002:seq":
        raise NoteError(f"cannot extend {key} faithfully (not a plain list)", path=note.path,
                        hint="edit the frontmatter by hand")
    if value.flow_style:
        close = int(value.end_mark.index) - 1  # the `]`
        if fm[close] != "]":
            raise NoteError(f"cannot extend {key} faithfully", path=note.path,
                            hint="edit the frontmatter by hand")
        rendered = ", ".join(_flow_item(item) for item in items)
        if value.value:  # after the last item, before any space or line break that precedes `]`
            head = fm[:close].rstrip()
            text = head + ", " + rendered + fm[len(head):]
        else:
            text = fm[:close] + rendered + fm[close:]
    else:
        last = value.value[-1]
        dash_col = int(value.start_mark.column)
        gap = max(1, int(value.value[0].start_mark.column) - dash_col - 1)
        end = _node_end(last)
        nl_at = fm.find("\n", max(end - 1, 0))
        at = len(fm) if nl_at == -1 else nl_at + 1
        line_nl = "\r\n" if nl_at > 0 and fm[nl_at - 1] == "\r" else "\n"
        lines = "".join(f"{' ' * dash_col}-{' ' * gap}{_flow_item(item)}{line_nl}"
                        for item in items)
        text = fm[:at] + ("" if nl_at != -1 else line_nl) + lines + fm[at:]
    return _verified(note, note.text[:fm_start] + text + note.text[fm_start + len(fm):],
                     expected)


def _flow_item(item: Any) -> str:
    """One list item as PyYAML writes it inside `[...]` (quoted when it must be)."""
    return yaml.dump([item], Dumper=_Dumper, allow_unicode=True, default_flow_style=True,
                     width=1 << 30).strip()[1:-1]


def _verified(note: Note, new_text: str, expected: dict[str, Any]) -> Note:
    """The note for `new_text`, after checking that it reads back as `expected` with the body
    untouched; otherwise NoteError (nothing is written)."""
    result = parse_text(note.path, new_text, bom=note.bom)
    try:
        after = load(result)
    except NoteError:
        after = None
    if after != expected or result.body != note.body or \
            (after is not None and list(after) != list(expected)):
        raise NoteError("frontmatter edit would not read back as intended", path=note.path,
                        hint="edit the frontmatter by hand")
    return result


def render_new(mapping: dict[str, Any], body: str, *, newline: str = "\n") -> str:
    """Text of a brand-new note: frontmatter block then body. Raises NoteError (ValueError for
    a value YAML cannot represent) when the result would not read back as `mapping`."""
    fm = to_newline(dump(mapping), newline)
    text = f"---{newline}{fm}---{newline}{to_newline(body, newline)}"
    note = parse_text("new note", text)
    try:
        back = load(note)
    except NoteError:
        back = None
    if back != {str(k): v for k, v in mapping.items()} or \
            note.body != to_newline(body, newline):
        raise NoteError("these frontmatter values would not read back as given",
                        hint="use plain strings, numbers, booleans, lists and mappings")
    return text
