"""Notes: decoding and the byte-faithful frontmatter split (SPEC §2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from remelink.errors import NoteError
from remelink.vault.notes import (
    count_lines,
    decode,
    is_blank,
    join,
    parse_text,
    read_note,
    replace_body,
    to_newline,
    unclosed_frontmatter,
)


def test_split_frontmatter_and_body() -> None:
    note = parse_text("a.md", "---\nname: X\n---\nBody\n")
    assert note.frontmatter_text == "name: X\n"
    assert note.body == "Body\n"
    assert (note.body_offset, note.body_line) == (16, 4)
    assert note.newline == "\n" and not note.bom


def test_no_frontmatter() -> None:
    note = parse_text("a.md", "# Title\n\ntext\n")
    assert note.frontmatter_text is None
    assert note.body == note.text and note.body_line == 1


def test_bom_is_kept_and_not_part_of_the_text() -> None:
    data = b"\xef\xbb\xbf---\nname: X\n---\nBody\n"
    note = decode("a.md", data)
    assert note.bom and not note.text.startswith("\ufeff")
    assert note.frontmatter_text == "name: X\n"
    assert note.render() == data


def test_crlf_is_detected_and_kept() -> None:
    data = b"---\r\nname: X\r\n---\r\nBody\r\nmore\r\n"
    note = decode("a.md", data)
    assert note.newline == "\r\n"
    assert note.frontmatter_text == "name: X\r\n"
    assert note.body == "Body\r\nmore\r\n"
    assert note.body_line == 4
    assert note.render() == data


@pytest.mark.parametrize("data", [
    b"", b"\n", b"no newline at the end", b"---\nname: X\n---", b"---\nname: X\n---\n",
    b"\xef\xbb\xbf", b"---\r\nname: X\r\n---\r\n\r\n", b"a\rb\rc", "中文\n".encode(),
    b"---\n\n---\n", b"---  \nname: x\n---  \nbody",
])
def test_render_gives_back_the_exact_bytes(data: bytes) -> None:
    assert decode("a.md", data).render() == data


def test_closing_line_at_end_of_file_without_newline() -> None:
    note = parse_text("a.md", "---\nname: X\n---")
    assert note.frontmatter_text == "name: X\n"
    assert note.body == "" and note.body_line == 3


def test_body_starting_with_a_rule_is_not_frontmatter() -> None:
    # python-frontmatter drops "Intro" here; a `---` followed by prose is a thematic break.
    text = "---\n\nIntro paragraph.\n\n---\n\nRest of note.\n"
    note = parse_text("a.md", text)
    assert note.frontmatter_text is None
    assert note.body == text


def test_comments_and_blank_lines_only_is_an_empty_block() -> None:
    note = parse_text("a.md", "---\n# just a comment\n\n---\nBody\n")
    assert note.frontmatter_text == "# just a comment\n\n"
    assert note.body == "Body\n"


def test_list_frontmatter_is_body_text() -> None:
    # A block that is not a mapping is not frontmatter (never rewritten as if it were).
    note = parse_text("a.md", "---\n- a\n- b\n---\nBody\n")
    assert note.frontmatter_text is None


def test_unclosed_frontmatter() -> None:
    note = parse_text("a.md", "---\nname: X\ndescription: Y\n\nBody [[x.md]]\n")
    assert note.frontmatter_text is None and note.body == note.text
    assert unclosed_frontmatter(note)
    assert not unclosed_frontmatter(parse_text("a.md", "---\n\nJust a rule.\n"))
    assert not unclosed_frontmatter(parse_text("a.md", "---\nname: X\n---\n"))
    assert not unclosed_frontmatter(parse_text("a.md", "Text\n"))


def test_only_the_first_closing_line_counts() -> None:
    note = parse_text("a.md", "---\na: 1\n---\nBody\n---\nmore\n---\n")
    assert note.frontmatter_text == "a: 1\n"
    assert note.body == "Body\n---\nmore\n---\n"


def test_closing_line_must_be_at_column_zero() -> None:
    note = parse_text("a.md", "---\na: |\n  ---\n  text\n---\nBody\n")
    assert note.frontmatter_text == "a: |\n  ---\n  text\n"


def test_binary_file_is_refused() -> None:
    with pytest.raises(NoteError, match=r"^img\.md: binary file"):
        decode("img.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00")


def test_non_utf8_names_the_byte_and_line() -> None:
    with pytest.raises(NoteError, match=r"^old\.md: not valid UTF-8 \(byte 0xe9 at line 2\) "
                                        r"\(re-save the file as UTF-8\)$"):
        decode("old.md", "line one\ncaf\xe9\n".encode("latin-1"))


def test_oversized_note_is_refused_before_decoding() -> None:
    with pytest.raises(NoteError, match=r"file is 1.0 MiB, over the 1.0 MiB limit"):
        decode("big.md", b"a" * (1024 * 1024 + 1), max_bytes=1024 * 1024)


def test_read_note_errors(tmp_path: Path) -> None:
    (tmp_path / "big.md").write_bytes(b"x" * 2048)
    (tmp_path / "dir.md").mkdir()
    with pytest.raises(NoteError, match="file is 2048 bytes, over the 1024 bytes limit"):
        read_note(tmp_path, "big.md", max_bytes=1024)
    with pytest.raises(NoteError, match=r"^missing\.md: file not found$"):
        read_note(tmp_path, "missing.md")
    with pytest.raises(NoteError, match="is a folder, not a regular file; not opened"):
        read_note(tmp_path, "dir.md")


def test_reading_never_modifies_the_file(tmp_path: Path) -> None:
    data = b"\xef\xbb\xbf---\r\nname: [unclosed\r\n---\r\nbody"
    (tmp_path / "a.md").write_bytes(data)
    read_note(tmp_path, "a.md")
    assert (tmp_path / "a.md").read_bytes() == data


def test_empty_note() -> None:
    note = decode("e.md", b"")
    assert note.text == "" and note.frontmatter_text is None
    assert is_blank(note) and note.line_count == 0


def test_count_lines() -> None:
    texts = ("", "a", "a\n", "a\nb", "a\nb\n", "\n\n")
    assert [count_lines(t) for t in texts] == [0, 1, 1, 2, 2, 2]


def test_join_and_replace_body_keep_the_frontmatter_bytes() -> None:
    note = parse_text("a.md", "---\r\nname:   'X'  # c\r\n---\r\nold\r\n")
    changed = replace_body(note, "new\r\n")
    assert changed.text == "---\r\nname:   'X'  # c\r\n---\r\nnew\r\n"
    assert join(note, "a: 1\r\n", "b\r\n") == "---\r\na: 1\r\n---\r\nb\r\n"
    assert join(note, None, "b") == "b"


def test_to_newline() -> None:
    assert to_newline("a\nb\r\nc\n", "\r\n") == "a\r\nb\r\nc\r\n"
    assert to_newline("a\r\nb\n", "\n") == "a\nb\n"
