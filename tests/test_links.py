"""The wikilink API beyond the golden files: Link values, outlines, anchors, scan()."""

from __future__ import annotations

import time

import pytest

from remelink.vault.links import (
    Link,
    dedupe,
    heading_key,
    mask_code,
    outline,
    paragraph_text,
    parse_line_anchor,
    parse_links,
    scan,
)


def test_link_raw_rebuilds_the_normalised_text() -> None:
    (link,) = parse_links("x ![[ a.md # Part | shown ]]")
    assert link == Link("a.md", "Part", "shown", True, 1, 3)
    assert link.raw == "![[a.md#Part|shown]]"
    assert Link("", "H", None, False, 1, 1).raw == "[[#H]]"


def test_first_line_offsets_line_numbers() -> None:
    assert [(lk.line, lk.col) for lk in parse_links("a\n[[x]]\n", first_line=5)] == [(6, 1)]


def test_a_lone_carriage_return_is_not_a_line_break() -> None:
    links = parse_links("a [[x.md]]\rb [[y.md]]\n[[z.md]]\r\n[[w.md]]")
    assert [(lk.target, lk.line, lk.col) for lk in links] == [
        ("x.md", 1, 3), ("y.md", 1, 14), ("z.md", 2, 1), ("w.md", 3, 1)]


def test_no_brackets_costs_nothing() -> None:
    body = "plain text line\n" * 20000
    start = time.perf_counter()
    assert parse_links(body) == []
    assert time.perf_counter() - start < 0.05


def test_dedupe_keeps_first_occurrence_order() -> None:
    links = parse_links("[[b]] [[a]] [[b|x]] [[a#h]] ![[a]] [[b#h]] [[a#h|y]]")
    assert [(lk.target, lk.anchor, lk.col) for lk in dedupe(links)] == [
        ("b", None, 1), ("a", None, 7), ("a", "h", 21), ("b", "h", 36)]


OUTLINE = """\
# Title

Setext *one*
===

Setext two
---

- ## In a list [[x.md]]
> ### Quoted
```
# not a heading ^not-a-block
```
    # indented code
#hashtag
####### seven hashes
## Closing ##
Text ^para-id

- item ^item-id
| a | b |
| c | d | ^table-id
<!--
## commented out
-->
"""


def test_outline_headings() -> None:
    got = [(h.level, h.text, h.line) for h in outline(OUTLINE).headings]
    assert got == [(1, "Title", 1), (1, "Setext *one*", 3), (2, "Setext two", 6),
                   (2, "In a list [[x.md]]", 9), (3, "Quoted", 10), (2, "Closing", 17)]


def test_outline_block_ids() -> None:
    assert outline(OUTLINE).block_ids == {"para-id", "item-id", "table-id"}


def test_scan_gives_links_outline_and_paragraphs_in_one_pass() -> None:
    result = scan("# T [[a.md]]\n\n- one [[b.md]]\n  two\n\n`[[c.md]]` [[d.md]]\n", first_line=3)
    assert [lk.target for lk in result.links] == ["a.md", "b.md", "d.md"]
    assert [h.text for h in result.outline.headings] == ["T [[a.md]]"]
    assert [paragraph_text(p) for p in result.paragraphs] == [
        "T [[a.md]]", "one [[b.md]]\ntwo", "`[[c.md]]` [[d.md]]"]
    assert [p[0][:2] for p in result.paragraphs] == [(3, 2), (5, 2), (8, 0)]
    assert mask_code("`[[c.md]]` [[d.md]]") == "           [[d.md]]"


@pytest.mark.parametrize(("heading", "anchor"), [
    ("Some Heading", "some heading"),
    ("  Spaced   out  ", "Spaced out"),
    ("**Bold** heading", "Bold heading"),
    ("**Bold** heading", "**bold** heading"),
    ("The `foo` option", "The foo option"),
    ("Q: what? #1 | [x]", "Q what? 1 x"),
    ("Links [[a.md|shown]] here", "Links shown here"),
    ("Links [[a.md]] here", "Links a.md here"),
    ("决定：下一步", "决定：下一步"),
    ("Café", "cafe\u0301"),  # NFC
    ("STRASSE", "strasse"),
])
def test_heading_key_matches(heading: str, anchor: str) -> None:
    assert heading_key(heading) == heading_key(anchor)


@pytest.mark.parametrize(("heading", "anchor"), [
    ("Heading 1", "Heading 2"), ("Part A", "PartA"), ("决定", "决议"),
])
def test_heading_key_differs(heading: str, anchor: str) -> None:
    assert heading_key(heading) != heading_key(anchor)


@pytest.mark.parametrize(("anchor", "ranges"), [
    ("L9", [(9, 9)]), ("L9-L12", [(9, 12)]), ("L9-L10,L15-L20", [(9, 10), (15, 20)]),
    ("L0", [(0, 0)]), ("L12-L9", [(12, 9)]),  # parsed; lint reports them as out of range
    ("l9", None), ("L9-", None), ("L9-12", None), ("L9,", None), ("Line 9", None), ("", None),
    ("L9 ", None),
])
def test_parse_line_anchor(anchor: str, ranges: list[tuple[int, int]] | None) -> None:
    assert parse_line_anchor(anchor) == ranges
