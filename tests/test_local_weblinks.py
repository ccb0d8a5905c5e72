"""SPEC §4: a note's markdown links reach its node as markdown (issue 21: URLs kept)."""
from __future__ import annotations

import re
from pathlib import Path

from dream_support import run
from hypothesis import given, settings
from hypothesis import strategies as st

from remelink import mdblocks
from remelink.index.nodes import searchable_body
from remelink.models.local import weblinks

NOTE = ("# Freezing requirements\n\nThe [pip-tools README](https://github.com/jazzband/pip-tools)"
        " is really good.\n\nSee [here](https://a.example/1) and [here](https://b.example/2).\n\n"
        "`[not a link](https://code.example)` stays code.\n\n"
        "![A diagram](https://img.example/d.png)\n")


def test_links_of_a_note_are_read_outside_code_and_never_ambiguous() -> None:
    found = dict(weblinks.in_note(NOTE))
    assert found["pip-tools README"] == "[pip-tools README](https://github.com/jazzband/pip-tools)"
    assert found["A diagram"] == "![A diagram](https://img.example/d.png)"
    assert "here" not in found  # two URLs share the words: nothing says which
    assert "not a link" not in found


def test_relink_puts_a_link_back_on_words_that_stand_once() -> None:
    links = [("pip-tools README", "[pip-tools README](https://github.com/jazzband/pip-tools)"),
             ("requirements", "[requirements](https://x.example/r)"),
             ("A diagram", "![A diagram](https://img.example/d.png)")]
    prose = ("The pip-tools README is really good.\n\n`pip-tools README` in code.\n\n"
             "requirements twice: requirements.\n\n!A diagram\n\n"
             "[[digest/wiki/x.md|X]] also names pip-tools README.\n\n## Sources\n\n"
             "pip-tools README per [[resource/a.md]].\n")
    out = weblinks.relink(prose, links)
    assert out.startswith("The [pip-tools README](https://github.com/jazzband/pip-tools) is")
    assert "`pip-tools README` in code." in out
    assert "requirements twice: requirements." in out  # twice: left as words
    assert "\n![A diagram](https://img.example/d.png)\n" in out
    assert "X]] also names pip-tools README." in out  # the engine's own sentence
    assert out.endswith("pip-tools README per [[resource/a.md]].\n")  # Sources untouched


def test_relink_never_touches_a_line_the_node_already_had() -> None:
    old = "The pip-tools README is good.\n"
    new = old + "\nThe pip-tools README was updated.\n"
    links = [("pip-tools README", "[pip-tools README](https://p.example)")]
    assert weblinks.relink(new, links, kept=old) == \
        old + "\nThe [pip-tools README](https://p.example) was updated.\n"
    twice = old + "\nThe pip-tools README and the pip-tools README.\n"
    assert weblinks.relink(twice, links, kept=old) == \
        old + "\nThe [pip-tools README](https://p.example) and the pip-tools README.\n"


def test_a_name_said_twice_is_linked_where_first_said_a_common_word_never() -> None:
    links = [("Cloudflare", "[Cloudflare](https://cloudflare.com)"),
             ("just", "[just](https://github.com/casey/just)")]
    prose = "Cloudflare runs it; just use Cloudflare.\n\nI run just with just a Justfile.\n"
    assert weblinks.relink(prose, links) == ("[Cloudflare](https://cloudflare.com) runs it; "
                                             "just use Cloudflare.\n\nI run just with just a "
                                             "Justfile.\n")


def test_a_url_is_not_searchable_prose() -> None:
    assert searchable_body("The [README](https://github.com/x/y) and ![map](m.png).") == \
        "The README and map."


def test_a_dream_run_keeps_the_notes_links(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    (vault / "resource" / "2026-01-02").mkdir(parents=True)
    (vault / "resource" / "2026-01-02" / "pip-tools.md").write_text(
        "# Freezing requirements with pip-tools\n\n"
        "The [pip-tools README](https://github.com/jazzband/pip-tools) explains "
        "`pip-compile`: it reads `requirements.in` and writes pinned versions to "
        "`requirements.txt`.\n", encoding="utf-8")
    run(vault)
    nodes = list((vault / "digest").rglob("*.md"))
    text = "".join(p.read_text(encoding="utf-8") for p in nodes)
    assert "[pip-tools README](https://github.com/jazzband/pip-tools)" in text, text


def test_two_links_on_one_line_are_both_put_back() -> None:
    links = [("substr()", "[substr()](https://sqlite.org/substr)"),
             ("instr()", "[instr()](https://sqlite.org/instr)")]
    assert weblinks.relink("Use substr() with instr() here.\n", links) == \
        "Use [substr()](https://sqlite.org/substr) with [instr()](https://sqlite.org/instr) here.\n"


def test_no_link_goes_into_code_after_a_span_holding_a_fence() -> None:
    """A double-backtick span holding ``` is one span, not a fence: the code block after it is
    still code (a link put there made the guard refuse the write as invented code)."""
    links = [("fenced_code", "[fenced_code](https://x.example/fc)")]
    prose = ("Handle `` ```python `` at the start of a block, with fenced_code.\n\n"
             "```python\nmd = Markdown(extensions=[\"toc\", \"fenced_code\"])\n```\n")
    out = weblinks.relink(prose, links)
    assert "with [fenced_code](https://x.example/fc)." in out
    assert 'extensions=["toc", "fenced_code"]' in out
    item = "1. Run it:\n   ```\n   use fenced_code here\n   ```\n"
    assert weblinks.relink(item, links) == item


_WORDS = st.sampled_from(["Cloudflare", "fenced_code", "the README", "vips", "just", "here",
                          "pip-tools", "`code`", "x"])
_LINE = st.lists(_WORDS, min_size=1, max_size=6).map(" ".join)
_PIECE = st.one_of(
    _LINE,
    _LINE.map(lambda t: f"- {t}"),
    _LINE.map(lambda t: f"`` ```{t} ``"),
    st.lists(_LINE, min_size=1, max_size=3).map(lambda ls: "```\n" + "\n".join(ls) + "\n```"),
    st.lists(_LINE, min_size=1, max_size=2).map(
        lambda ls: "1. Step:\n   ```\n" + "\n".join(f"   {x}" for x in ls) + "\n   ```"))


@settings(max_examples=200, deadline=None)
@given(st.lists(_PIECE, min_size=1, max_size=6).map("\n\n".join))
def test_relink_never_changes_code_and_only_adds_links(prose: str) -> None:
    """Property: whatever the prose, relink leaves every piece of code as it was, and taking
    the links it added back out gives the prose it was given."""
    links = [("Cloudflare", "[Cloudflare](https://c.example)"),
             ("fenced_code", "[fenced_code](https://f.example)"),
             ("the README", "[the README](https://r.example)"), ("just", "[just](https://j.example)")]
    out = weblinks.relink(prose, links)
    assert list(mdblocks.iter_code(out)) == list(mdblocks.iter_code(prose))
    assert re.sub(r"\[([^\[\]]*)\]\(https://\w\.example\)", r"\1", out) == prose
