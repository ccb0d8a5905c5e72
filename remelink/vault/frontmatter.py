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
from typing import Any

import yaml

from remelink.errors import NoteError
from remelink.vault.notes import Note, join, parse_text, to_newline

try:  # libyaml is in the PyYAML wheel on every mainstream platform; fall back gracefully.
    _Loader: type[yaml.SafeLoader] = yaml.CSafeLoader  # type: ignore[assignment]
except AttributeError:  # pragma: no cover - depends on the wheel
    _Loader = yaml.SafeLoader


class _StrictLoader(yaml.SafeLoader):
    """Safe loader that refuses duplicate keys (PyYAML silently keeps the last one)."""


def _construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
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
    if text is None or not text.strip():
        return {}
    try:
        data = yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        raise NoteError(_yaml_error_line(exc, note), path=note.path,
                        hint="fix the YAML between the --- lines") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise NoteError(f"frontmatter is a {type(data).__name__}, not a mapping of keys", path=note.path)
    if len(data) > 1 and _has_duplicate_keys(text):
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


def dump(mapping: dict[str, Any]) -> str:
    """PyYAML's block rendering, unicode kept, insertion order kept, no line wrapping."""
    if not mapping:
        return ""
    return yaml.safe_dump(mapping, allow_unicode=True, sort_keys=False, default_flow_style=False,
                          width=1 << 30)


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


def _key_spans(fm: str) -> dict[str, tuple[int, int]]:
    """For each top-level key: [start of its line, end of the line holding its value's end)."""
    root = yaml.compose(fm, Loader=yaml.SafeLoader)
    if root is None:
        return {}
    if not isinstance(root, yaml.MappingNode) or root.flow_style is True:
        raise ValueError("frontmatter is not a block mapping")
    spans: dict[str, tuple[int, int]] = {}
    for key_node, value_node in root.value:
        if not isinstance(key_node, yaml.ScalarNode):
            raise ValueError("complex keys are not supported")
        start = fm.rfind("\n", 0, key_node.start_mark.index) + 1
        end_idx = max(_node_end(value_node), int(key_node.end_mark.index))
        nl = fm.find("\n", max(end_idx - 1, start))
        end = len(fm) if nl == -1 else nl + 1
        if key_node.value in spans:
            raise ValueError(f"duplicate key {key_node.value!r}")
        spans[key_node.value] = (start, end)
    return spans


def update(note: Note, changes: dict[str, Any], *, remove: tuple[str, ...] = ()) -> Note:
    """A copy of `note` whose frontmatter has `changes` merged in (and `remove` keys dropped),
    touching only those keys' lines. Creates the block if the note had none.

    Raises NoteError if the existing frontmatter is invalid, or if the edit cannot be made
    faithfully (anchors, flow-style mapping, complex keys).
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
        return parse_text(note.path, join(note, new_fm, note.body), bom=note.bom)

    fm = note.frontmatter_text.replace("\r\n", "\n") if nl == "\r\n" else note.frontmatter_text
    try:
        spans = _key_spans(fm)
    except (ValueError, yaml.YAMLError) as exc:
        raise NoteError(f"cannot edit this frontmatter faithfully ({exc})", path=note.path,
                        hint="edit the frontmatter by hand") from None
    pieces: list[tuple[int, int, str]] = []
    for key in remove:
        if key in spans:
            pieces.append((*spans[key], ""))
    appended = ""
    for key, value in changes.items():
        rendered = dump({key: value})
        if key in spans:
            pieces.append((*spans[key], rendered))
        else:
            appended += rendered
    out = fm
    for start, end, text in sorted(pieces, reverse=True):
        out = out[:start] + text + out[end:]
    if appended:
        if out and not out.endswith("\n"):
            out += "\n"
        out += appended
    new_text = join(note, to_newline(out, nl), note.body)
    result = parse_text(note.path, new_text, bom=note.bom)
    try:
        after = load(result)
    except NoteError:
        after = None
    if after != expected:
        raise NoteError("frontmatter edit would not read back as intended", path=note.path,
                        hint="edit the frontmatter by hand")
    return result


def render_new(mapping: dict[str, Any], body: str, *, newline: str = "\n") -> str:
    """Text of a brand-new note: frontmatter block then body."""
    fm = to_newline(dump(mapping), newline)
    return f"---{newline}{fm}---{newline}{to_newline(body, newline)}"
