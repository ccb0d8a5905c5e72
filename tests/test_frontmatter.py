"""Frontmatter values through one YAML parser (PyYAML), and surgical edits (SPEC §2)."""

from __future__ import annotations

import datetime
import difflib
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from remelink.errors import NoteError
from remelink.vault import frontmatter
from remelink.vault.notes import decode, parse_text

RICH = """\
---
# leading comment
name: "Quoted Name"   # why it is quoted
description: plain text
flag: yes
id: 0123
ver: 1.10
when: 2026-11-29T10:00:00+08:00
day: 2026-11-29
tags: [a, b]
nested:
  k: v
  # inner comment
  j: 2
block: |
  line one
  line two
empty:
title: 数据脱敏规则
last: x
---
Body with a rule below
---
More [[daily/x.md]]
"""


def changed_lines(before: str, after: str) -> list[str]:
    return [line for line in difflib.unified_diff(before.splitlines(), after.splitlines(),
                                                  lineterm="", n=0)
            if line[:1] in "+-" and line[:3] not in ("+++", "---")]


def test_values_are_yaml_1_1_as_pyyaml_reads_them() -> None:
    meta = frontmatter.load(parse_text("n.md", RICH))
    assert list(meta) == ["name", "description", "flag", "id", "ver", "when", "day", "tags",
                          "nested", "block", "empty", "title", "last"]
    assert meta["flag"] is True  # `yes` in YAML 1.1
    assert meta["id"] == 83  # `0123` is octal in YAML 1.1
    assert meta["ver"] == 1.1
    tz = datetime.timezone(datetime.timedelta(hours=8))
    assert meta["when"] == datetime.datetime(2026, 11, 29, 10, 0, tzinfo=tz)
    assert meta["day"] == datetime.date(2026, 11, 29)
    assert meta["block"] == "line one\nline two\n"
    assert meta["empty"] is None and meta["title"] == "数据脱敏规则"


@pytest.mark.parametrize(("changes", "diff"), [
    ({"name": "New"}, ['-name: "Quoted Name"   # why it is quoted',
                       "+name: New   # why it is quoted"]),
    ({"ver": "2.0"}, ["-ver: 1.10", "+ver: '2.0'"]),
    ({"flag": False}, ["-flag: yes", "+flag: false"]),
    ({"last": "y"}, ["-last: x", "+last: y"]),
    ({"nested": {"k": "w"}}, ["-  k: v", "-  # inner comment", "-  j: 2", "+  k: w"]),
    ({"block": "a\nb\n"}, ["-  line one", "-  line two", "+  a", "+  b"]),
    ({"memory_tags": ["Acme", "数据"]}, ["+memory_tags:", "+- Acme", "+- 数据"]),
    ({"empty": "now set"}, ["-empty:", "+empty: now set"]),
])
def test_update_changes_only_the_edited_keys_lines(changes: dict[str, Any],
                                                    diff: list[str]) -> None:
    note = parse_text("n.md", RICH)
    updated = frontmatter.update(note, changes)
    assert changed_lines(RICH, updated.text) == diff
    assert updated.body == note.body
    expected = {**frontmatter.load(note), **changes}
    assert frontmatter.load(updated) == expected
    assert list(frontmatter.load(updated)) == list(expected)


def test_update_keeps_yes_0123_and_1_10_of_other_keys() -> None:
    updated = frontmatter.update(parse_text("n.md", RICH), {"name": "N"})
    for line in ("flag: yes", "id: 0123", "ver: 1.10", "when: 2026-11-29T10:00:00+08:00",
                 "tags: [a, b]", "# leading comment", "  # inner comment"):
        assert line in updated.text.splitlines()


def test_remove_a_key() -> None:
    updated = frontmatter.update(parse_text("n.md", RICH), {}, remove=("tags",))
    assert changed_lines(RICH, updated.text) == ["-tags: [a, b]"]


def test_unchanged_update_returns_the_same_note() -> None:
    note = parse_text("n.md", RICH)
    assert frontmatter.update(note, {"last": "x"}) is note


def test_update_keeps_bom_crlf_and_a_missing_final_newline() -> None:
    data = "\ufeff---\r\nname: a\r\ndescription: d\r\n---".encode()
    updated = frontmatter.update(decode("c.md", data), {"name": "b", "kind": "concept"})
    assert updated.render() == \
        "\ufeff---\r\nname: b\r\ndescription: d\r\nkind: concept\r\n---".encode()


def test_update_keeps_untouched_lines_of_a_mixed_newline_block() -> None:
    text = "---\r\nname: a\ndescription: d\r\n---\r\nbody\n"
    updated = frontmatter.update(parse_text("m.md", text), {"name": "b"})
    assert updated.text == "---\r\nname: b\ndescription: d\r\n---\r\nbody\n"


def test_update_keeps_fence_lines_as_written() -> None:
    text = "---  \nname: a\n---   \nbody"
    assert frontmatter.update(parse_text("f.md", text), {"name": "b"}).text == \
        "---  \nname: b\n---   \nbody"


def test_update_last_key_without_newline_before_closing() -> None:
    # The block text always ends with a newline (the closing line starts a line), but the value
    # may sit on the last line: the edit must not merge it with the closing `---`.
    text = "---\nname: a\ndescription: |\n  two\n  lines\n---\nbody\n"
    updated = frontmatter.update(parse_text("f.md", text), {"description": "one"})
    assert updated.text == "---\nname: a\ndescription: one\n---\nbody\n"


def test_create_a_block_on_a_note_without_one() -> None:
    note = parse_text("a.md", "Body [[x.md]]\r\nline two\r\n")
    updated = frontmatter.update(note, {"name": "X", "description": "数据"})
    assert updated.text == \
        "---\r\nname: X\r\ndescription: 数据\r\n---\r\nBody [[x.md]]\r\nline two\r\n"
    assert updated.body == note.body


def test_create_a_block_keeps_a_body_that_starts_with_a_rule() -> None:
    note = parse_text("r.md", "---\n\nIntro\n\n---\n\nRest\n")
    updated = frontmatter.update(note, {"name": "x"})
    assert updated.text == "---\nname: x\n---\n---\n\nIntro\n\n---\n\nRest\n"
    assert updated.body == note.body


def test_create_a_block_on_an_empty_note() -> None:
    updated = frontmatter.update(decode("e.md", b""), {"name": "x"})
    assert updated.text == "---\nname: x\n---\n"


@pytest.mark.parametrize(("text", "reason"), [
    ("---\nbase: &b {x: 1}\nother: *b\n---\n", "would not read back"),
    ("---\n{name: a, description: b}\n---\n", "not a block mapping"),
])
def test_update_refuses_what_it_cannot_do_faithfully(text: str, reason: str) -> None:
    note = parse_text("r.md", text)
    first = next(iter(frontmatter.load(note)))
    with pytest.raises(NoteError, match=reason):
        frontmatter.update(note, {first: "changed"})


def test_update_refuses_invalid_yaml_and_unclosed_blocks() -> None:
    with pytest.raises(NoteError, match="invalid YAML"):
        frontmatter.update(parse_text("a.md", "---\nname: [x\n---\n"), {"name": "y"})
    with pytest.raises(NoteError, match="never closed"):
        frontmatter.update(parse_text("a.md", "---\nname: x\nbody\n"), {"name": "y"})


@pytest.mark.parametrize(("text", "message"), [
    ("---\nname: [x\n---\n", r"^a\.md: invalid YAML in frontmatter at line 3: .*"
                             r"\(fix the YAML between the --- lines\)$"),
    ("---\nname: a\nname: b\n---\n", r"duplicate key 'name'.*remove the repeated key"),
    ("---\nname: x\n\nbody\n", r"never closed"),
    # Blocks that do not start like a mapping are no frontmatter at all (body text, kept).
    ("---\n- a\n- b\n---\n", None),
    ("---\n'just a string'\n---\n", None),
    ("---\n\tname: x\n---\n", None),
])
def test_load_errors_are_one_clear_line(text: str, message: str | None) -> None:
    note = parse_text("a.md", text)
    if message is None:
        assert frontmatter.load(note) == {}
        return
    with pytest.raises(NoteError, match=message) as info:
        frontmatter.load(note)
    assert "\n" not in str(info.value)


def test_duplicate_keys_with_a_comment_between() -> None:
    with pytest.raises(NoteError, match="duplicate key"):
        frontmatter.load(parse_text("a.md", "---\na: 1\n# note\nb: 2\na: 3\n---\n"))


def test_nested_duplicate_keys_are_not_top_level_duplicates() -> None:
    meta = frontmatter.load(parse_text("a.md", "---\na:\n  k: 1\nb:\n  k: 2\n---\n"))
    assert meta == {"a": {"k": 1}, "b": {"k": 2}}


def test_dump_writes_multiline_strings_as_blocks_and_keeps_order() -> None:
    assert frontmatter.dump({"z": 1, "a": "x\ny\n", "中": "文"}) == "z: 1\na: |\n  x\n  y\n中: 文\n"
    assert frontmatter.dump({}) == ""
    assert frontmatter.to_yaml_values({}) == "{}\n"


def test_render_new_quotes_what_yaml_would_change() -> None:
    meta = {"name": "yes", "id": "0123", "ver": "1.10", "when": "2026-11-29", "n": None,
            "t": ["[[x]]"], "colon": "a: b", "dash": "---"}
    text = frontmatter.render_new(meta, "Body\n")
    assert frontmatter.load(parse_text("n.md", text)) == meta


def test_render_new_refuses_values_that_do_not_round_trip() -> None:
    with pytest.raises(NoteError, match="would not read back"):
        frontmatter.render_new({"\xa0": 1}, "Body\n")


# -- properties ----------------------------------------------------------------------------

_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=16)
_KEYS = st.text(st.characters(codec="utf-8", blacklist_categories=("Cs", "Zs", "Cc")),
                min_size=1, max_size=10)
_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-10**12, 10**12), st.floats(allow_nan=False),
    st.dates(), _TEXT,
    st.sampled_from(["yes", "no", "on", "0123", "1.10", "~", "null", "2026-11-29", "a: b",
                     "- x", "#c", "---", "'q'", '"d"', "[[x]]", "{a}", "数据", "", " ", "x\ny\n"]))
_VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(_KEYS, inner, max_size=3)), max_leaves=6)
_MAPPINGS = st.dictionaries(_KEYS, _VALUES, max_size=5)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_MAPPINGS, _TEXT, st.sampled_from(["\n", "\r\n"]))
def test_render_new_then_load_round_trips(mapping: dict[str, Any], body: str, nl: str) -> None:
    try:
        text = frontmatter.render_new(mapping, body, newline=nl)
    except NoteError:
        return  # refused, nothing written: allowed, never a wrong note
    note = parse_text("n.md", text)
    assert frontmatter.load(note) == mapping
    assert list(frontmatter.load(note)) == list(mapping)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_MAPPINGS, _MAPPINGS, st.lists(_KEYS, max_size=2), st.sampled_from(["\n", "\r\n"]))
def test_update_then_load_equals_the_intended_mapping(start: dict[str, Any],
                                                      changes: dict[str, Any],
                                                      remove: list[str], nl: str) -> None:
    try:
        note = parse_text("n.md", frontmatter.render_new(start, "Body [[x.md]]\n", newline=nl))
        updated = frontmatter.update(note, changes, remove=tuple(remove))
    except NoteError:
        return
    intended = dict(start)
    for key in remove:
        intended.pop(key, None)
    intended.update(changes)
    assert frontmatter.load(updated) == intended
    assert updated.body == note.body
    # Keys that were neither changed nor removed keep their exact lines. (`...` is YAML's
    # document end, which a dump of the key alone adds after a kept block scalar, `|2+`; in
    # the note's frontmatter the next key ends that scalar instead.)
    for key in start:
        if key not in changes and key not in remove:
            for line in frontmatter.dump({key: start[key]}).splitlines():
                assert line == "..." or line in updated.text


def test_an_impossible_date_is_a_note_error_not_a_crash() -> None:
    from remelink.errors import NoteError
    from remelink.vault import frontmatter
    from remelink.vault.notes import parse_text

    note = parse_text("digest/wiki/x.md", "---\nname: x\ndate: 2025-13-45\n---\nbody\n")
    with pytest.raises(NoteError, match="invalid value in frontmatter"):
        frontmatter.load(note)
