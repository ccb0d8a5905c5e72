"""Differential tests against other wikilink implementations' fixtures and expected values
(/work/shared/data/parser-fixtures): obsidiantools (tests/test_md_utils.py), commonmark-hs
(wikilinks_title_after_pipe.md) and lychee (fixtures/wiki). Deliberate differences are asserted
as such and listed in docs/conformance.md.
"""

from __future__ import annotations

import html
import re
import textwrap
from pathlib import Path
from urllib.parse import unquote

import pytest
from conftest import SHARED_DATA

from remelink.config import Settings
from remelink.errors import NoteError
from remelink.lint import lint_links
from remelink.vault import frontmatter
from remelink.vault.links import dedupe, parse_links
from remelink.vault.notes import decode

FIXTURES = SHARED_DATA / "parser-fixtures"
pytestmark = pytest.mark.skipif(not FIXTURES.is_dir(), reason="shared parser fixtures not found")
OT = FIXTURES / "obsidiantools" / "tests"


def _note(path: Path) -> tuple[list[str], list[str]]:
    """(targets of plain links, targets of embeds) of a file, frontmatter split off."""
    note = decode(path.name, path.read_bytes())
    links = parse_links(note.body, note.body_line)
    return [lk.target for lk in links if not lk.embed], [lk.target for lk in links if lk.embed]


# -- obsidiantools 0.11 (mfarragher/obsidiantools, tests/test_md_utils.py) ---------------------

# Its `html_wikilinks_stub` fixture, dedented (the original sits indented in a Python string).
HTML_WIKILINKS_STUB = textwrap.dedent(r"""
    <pre># Intro</pre>
    This is a very basic string representation.

    ## Shopping list
    Here is a **[[Shopping list | shopping list]]**:
    - [[Bananas]]: also have these for [[Banana splits]]
    - [[Apples]]
    - [[Flour]]: not a [[Flower | flower]]

    Oh and did I say [[Bananas | BANANAS]]??
    There's no link for [Cherries].  Though there is for [[Durians]].

    ![[Egg.jpg]]

    ## Drinks
    - [[Apples|Freshly squeezed apple juice]]
    - [[Bananas|Banana smoothie]]
    - [[Protein shakes#Protein powder|Vanilla whey protein]]

    ![[Easter egg.png]]
    ![[Egg.jpg | 125]]
    """)


def test_obsidiantools_all_wikilinks() -> None:
    links = [lk for lk in parse_links(HTML_WIKILINKS_STUB) if not lk.embed]
    # test_get_all_wikilinks_from_source_text
    assert [lk.target for lk in links] == [
        "Shopping list", "Bananas", "Banana splits", "Apples", "Flour", "Flower", "Bananas",
        "Durians", "Apples", "Bananas", "Protein shakes"]
    # test_get_all_wikilinks_from_source_text_keep_aliases (their raw text, spaces folded)
    raw = [lk.raw[2:-2] for lk in links]
    theirs = ["Shopping list | shopping list", "Bananas", "Banana splits", "Apples", "Flour",
              "Flower | flower", "Bananas | BANANAS", "Durians",
              "Apples|Freshly squeezed apple juice", "Bananas|Banana smoothie",
              "Protein shakes#Protein powder|Vanilla whey protein"]
    assert raw == [re.sub(r"\s*\|\s*", "|", text) for text in theirs]


def test_obsidiantools_embedded_files() -> None:
    embeds = [lk for lk in parse_links(HTML_WIKILINKS_STUB) if lk.embed]
    assert [lk.target for lk in embeds] == ["Egg.jpg", "Easter egg.png", "Egg.jpg"]
    assert [lk.alias for lk in embeds] == [None, None, "125"]


def test_obsidiantools_unique_wikilinks() -> None:
    links = dedupe([lk for lk in parse_links(HTML_WIKILINKS_STUB) if not lk.embed])
    assert [lk.target for lk in links] == ["Shopping list", "Bananas", "Banana splits", "Apples",
                                          "Flour", "Flower", "Durians", "Protein shakes"]


def test_obsidiantools_wikilinks_exclude_code() -> None:
    # test_wikilinks_code_block: `tibble[['column_name']]` in a fence and in a code span.
    assert _note(OT / "general" / "wikilinks_exclude-code.md") == ([], [])


def test_obsidiantools_wikilinks_extraction() -> None:
    path = OT / "general" / "wikilinks_extraction.md"
    links = parse_links(path.read_text(encoding="utf-8"))
    assert [lk.target for lk in links] == ["A", "B", "C", "D", "E", "A"]
    # test_wikilinks_as_readable_text: the alias, else the target.
    assert [lk.alias or lk.target for lk in links] == ["A", "B", "see", "dee", "ee", "A"]
    assert [lk.anchor for lk in links] == [None, None, None, "one", "one", None]


def test_obsidiantools_embedded_images_in_table() -> None:
    # test_embedded_files_alias_scaling: `![[x.png \| 300]]` in a table cell.
    plain, embeds = _note(OT / "general" / "embedded-images_in-table.md")
    assert embeds == ["test-image_1_before.png", "test-image_1_after.png",
                      "test-image_2_before.png", "test-image_2_after.png"]
    assert plain == ["Strategy 1", "Strategy 2"]


def test_obsidiantools_frontmatter_is_not_scanned() -> None:
    # test_pretend_wikilink_not_extracted_from_front_matter and test_sussudio_front_matter.
    path = OT / "vault-stub" / "Sussudio.md"
    note = decode(path.name, path.read_bytes())
    plain, embeds = _note(path)
    assert "Polka Party!" not in plain and "American Psycho (film)" in plain
    assert embeds == ["Sussudio.mp3", "1999.flac"]
    assert frontmatter.load(note) == {
        "title": "Sussudio", "artist": "Phil Collins", "category": "music", "year": 1985,
        "url": "https://www.discogs.com/Phil-Collins-Sussudio/master/106239",
        "references": [[["American Psycho (film)"]], "Polka Party!"],
        "chart_peaks": [{"US": 1}, {"UK": 12}]}


def test_obsidiantools_no_frontmatter() -> None:
    path = OT / "vault-stub" / "lipsum" / "Ne fuit.md"
    assert frontmatter.load(decode(path.name, path.read_bytes())) == {}


@pytest.mark.parametrize("name", ["frontmatter-only_1.md", "frontmatter-only_2.md",
                                  "frontmatter-only_3.md", "frontmatter-only_4.md",
                                  "frontmatter_parse-double-curly.md"])
def test_obsidiantools_frontmatter_only(name: str) -> None:
    # test_front_matter_only_parsing / test_front_matter_parse_double_curly: the body is empty.
    note = decode(name, (OT / "general" / name).read_bytes())
    assert note.frontmatter_text is not None
    assert not note.body.strip()


@pytest.mark.parametrize("name", ["not-frontmatter_1.md", "not-frontmatter_2.md",
                                  "not-frontmatter_3.md"])
def test_obsidiantools_separators_are_not_frontmatter(name: str) -> None:
    note = decode(name, (OT / "general" / name).read_bytes())
    assert note.frontmatter_text is None
    assert frontmatter.load(note) == {}
    assert note.body == note.text


@pytest.mark.parametrize("name", ["invalid-frontmatter_1.md", "frontmatter_parse-double-curly.md"])
def test_invalid_frontmatter_is_reported_not_swallowed(name: str) -> None:
    # Deliberate difference: obsidiantools returns {} for invalid frontmatter; SPEC §2 wants a
    # clear per-file problem, so `load` raises NoteError naming the file and a line.
    note = decode(name, (OT / "general" / name).read_bytes())
    pattern = rf"^{re.escape(name)}: invalid YAML in frontmatter at line \d+"
    with pytest.raises(NoteError, match=pattern):
        frontmatter.load(note)


# -- commonmark-hs (jgm/commonmark-hs, commonmark-extensions/test) -----------------------------

def _examples(path: Path) -> list[tuple[str, str]]:
    text = path.read_text(encoding="utf-8")
    fence = "`" * 32
    pattern = re.compile(rf"^{fence} example\n(.*?)^\.\n(.*?)^{fence}$", re.M | re.S)
    return [(m.group(1), m.group(2)) for m in pattern.finditer(text)]


def test_commonmark_hs_title_after_pipe() -> None:
    """Obsidian's order (`[[target|title]]`). Targets agree except where commonmark-hs decodes
    HTML entities: we keep `&uuml;` literally, as Obsidian resolves the text as written."""
    examples = _examples(FIXTURES / "commonmark-hs" / "wikilinks_title_after_pipe.md")
    assert len(examples) == 5
    agree = 0
    for source, expected_html in examples:
        (link,) = parse_links(source)
        m = re.search(r'<a class="wikilink" href="([^"]*)">(.*?)</a>', expected_html)
        assert m is not None
        href, title = unquote(html.unescape(m.group(1))), html.unescape(m.group(2))
        if "&" in source:
            assert link.target == "Gesch&uuml;tztes Leerzeichen" != href
            assert html.unescape(link.target) == href and html.unescape(link.alias or "") == title
            continue
        assert link.target == href
        assert (link.alias or link.target) == title
        agree += 1
    assert agree == 4


def test_commonmark_hs_title_before_pipe_is_not_our_convention() -> None:
    """The other convention (`[[title|target]]`, pandoc's wikilinks_title_before_pipe): we read
    the first part as the target, as Obsidian does, so only pipe-less links agree."""
    examples = _examples(FIXTURES / "commonmark-hs" / "wikilinks_title_before_pipe.md")
    wikilinks = [(src, exp) for src, exp in examples if "[[" in src]
    agree = 0
    for source, expected_html in wikilinks:
        (link,) = parse_links(source)
        m = re.search(r'href="([^"]*)"', expected_html)
        assert m is not None
        href = unquote(html.unescape(m.group(1)))
        if "|" in source:
            assert link.alias is not None and html.unescape(link.alias) == href
        else:
            assert link.target == href
            agree += 1
    assert agree == 2


# -- lychee (lycheeverse/lychee, fixtures/wiki, used by its --include-wikilinks tests) --------

WIKI = FIXTURES / "lychee-wiki" / "fixtures" / "wiki"


def _broken_by_file() -> dict[str, list[str]]:
    report = lint_links(WIKI, Settings(resolution="obsidian"))
    out: dict[str, list[str]] = {}
    for problem in report.problems:
        out.setdefault(problem.path, []).append(f"{problem.code} {problem.message.split(':')[0]}")
    return out


def test_lychee_wiki_obsidian_style() -> None:
    problems = _broken_by_file()
    # Obsidian-style names (spaces kept, folders omitted) and headers all resolve.
    assert "obsidian-style.md" not in problems
    assert "obsidian-style-plus-headers.md" not in problems
    # The file named for it holds three links to notes that do not exist.
    assert problems["Non-existent.md"] == [
        "broken-link [[Does not exist]]", "broken-link [[Doesn't exist.md]]",
        "broken-link [[Does_not_exist]]"]


def test_lychee_wiki_mediawiki_style_is_not_obsidian() -> None:
    """Deliberate difference: lychee's `wikilink-style.md` expects MediaWiki's rule (a space in
    the link matches `-` or `_` in the file name). Obsidian, and SPEC §3.2, match names as
    written (case-insensitive, NFC), so those links are broken for us."""
    assert _broken_by_file()["wikilink-style.md"] == [
        "broken-link [[Dash Usage]]", "broken-link [[Underscore Usage]]",
        "broken-link [[Different Directory Dash]]",
        "broken-link [[Different Directory Underscore]]",
        "broken-link [[Dash Usage#Header|HeaderRenaming]]",
        "broken-link [[Underscore Usage#Header|HeaderRenaming]]",
        "broken-link [[Different Directory Dash#Header|HeaderRenaming]]",
        "broken-link [[Different Directory Underscore#Header|HeaderRenaming]]"]
