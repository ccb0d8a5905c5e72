"""A note's markdown links, put back into the prose the local engine writes from it.

SPEC §4: URLs reach a node byte for byte, as markdown. The engine reads a note's lines as
statements (tx.clean_statement), which shows a link `[the pip-tools README](https://...)` as
its words, `the pip-tools README`: every comparison, title and description reads the words,
never a URL. So the unit carries its notes' links beside its points (`link@K: words<TAB>url`,
a meta point: never prose, never compared), and the written prose gets each one back where
its words first stand (a common word only where it stands once; words two URLs share never):
a link is left as words rather than put on the wrong ones. Code,
wikilinks and links already written are never touched; nor is the Sources section.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from remelink import mdblocks
from remelink.models.local import fenced, write
from remelink.models.local import points as pt
from remelink.models.local import text as tx
from remelink.vault.links import WEB_LINK_RE

_SOURCES_RE = re.compile(r"^##[ \t]+(?:sources|来源)\b", re.I | re.M)
# What prose already holds that a link's words must not be found inside, besides code (see
# _free): wikilinks and markdown links.
_TAKEN_RE = re.compile(r"!?\[\[[^\]\n]*\]\]|!?\[[^\[\]\n]*\]\([^)\s]*\)")


def in_note(text: str) -> list[tuple[str, str]]:
    """The links of a note's prose as (words as a statement shows them, the link as written),
    outside code. Words shared by two different URLs are left out: nothing says which."""
    found: dict[str, set[str]] = {}
    prose = tx.around_code(text, lambda p: p, lambda code: " " * len(code))
    for m in WEB_LINK_RE.finditer(prose):
        words = tx.clean_statement(m.group(1)).strip()
        if words and "\t" not in m.group(0):
            found.setdefault(words, set()).add(m.group(0))
    return [(words, next(iter(links))) for words, links in found.items() if len(links) == 1]


def points(links: Iterable[tuple[str, str]], said: str, source: int) -> list[str]:
    """Meta points for the links whose words a unit says (`said`: its summary and points)."""
    return [pt.Point("link", source, f"{words}\t{link}").format()
            for words, link in links if words in said]


def of_points(raws: Sequence[str]) -> list[tuple[str, str]]:
    out = []
    for raw in raws:
        p = pt.parse(raw)
        if p.role == "link" and "\t" in p.text:
            words, link = p.text.split("\t", 1)
            out.append((words, link))
    return out


def _names_something(words: str) -> bool:
    """More than a common word: several words, a capital, a digit or an identifier's mark."""
    return " " in words or bool(re.search(r"[A-Z0-9._/-]", words)) or tx.is_cjk_text(words)


def _masked(m: re.Match[str]) -> str:
    return re.sub(r"[^\n]", "\0", m.group(0))


def _code_lines(prose: str) -> list[bool]:
    """Which lines of `prose` are in a code block (markdown's blocks: a fence inside a list
    item too). A link put in prose moves no line, so this holds while links go in."""
    shut = [False] * (prose.count("\n") + 1)
    for block in mdblocks.parse(prose):
        if block.kind == "code":
            for i in range(block.line, min(len(shut), block.line + block.text.count("\n") + 1)):
                shut[i] = True
    return shut


def _free(prose: str, closed: Sequence[bool]) -> str:
    """`prose` with what no link may go in blanked, lines kept: the lines `closed` marks (code
    blocks among them, _code_lines), code spans (CommonMark's: a double-backtick span holding
    ``` is one span, no fence), wikilinks and links."""
    text = "\n".join("\0" * len(line) if off else line
                     for line, off in zip(prose.split("\n"), closed, strict=True))
    text = fenced.TOKEN_RE.sub(_masked, mdblocks.mask_code(text))
    return _TAKEN_RE.sub(_masked, text)


def relink(prose: str, links: Sequence[tuple[str, str]], *, kept: str = "") -> str:
    """`prose` (new text for a node, Sources section included or not) with each link put back
    on its words (where they first stand, see below), outside code, wikilinks, links, Sources
    and the engine's own sentences; never on a line that `kept` (the node as it was) already
    holds: a node's old lines stay as written."""
    if not links:
        return prose
    cut = _SOURCES_RE.search(prose)
    head, tail = (prose[:cut.start()], prose[cut.start():]) if cut else (prose, "")
    old = set(kept.splitlines())
    # The engine's own sentences (a related node's "See also ...") hold no words of the notes;
    # nor do the lines the node had. (Links put in keep every line where it was.)
    own = set(write.without_related_sentences(head).split("\n"))
    # A heading (a document's section, issue 21) says what the lines under it are about: a
    # link goes where its words are first said in the prose.
    closed = [line in old or line not in own or code or line.startswith("#") for line, code in
              zip(head.split("\n"), _code_lines(head), strict=True)]
    # Longer words first: `vips dzsave` is placed before `vips` could take its first word.
    for words, link in sorted(links, key=lambda wl: -len(wl[0])):
        free = _free(head, closed)
        # An image shown by its alt text keeps its mark: `!alt` is the image.
        shown = ("!" + words) if link.startswith("!") else words
        hits = list(re.finditer(rf"(?<![\w\[!]){re.escape(shown)}(?![\w\]])", free))
        # Words said more than once get the link where they are first said, as a writer links
        # a name's first mention, when they name something (`Cloudflare`, `vips dzsave`,
        # `tools.simonwillison.net`); a common word (`[just](...)`, `[returns](...)`) is
        # linked only where it stands alone: its other uses may be the word itself.
        if len(hits) == 1 or (hits and _names_something(words)):
            m = hits[0]
            head = head[:m.start()] + link + head[m.end():]
    out = head + tail
    # Never at the cost of the write: a link in code would be refused as invented code.
    return out if out == prose or list(mdblocks.iter_code(out)) == list(
        mdblocks.iter_code(prose)) else prose
