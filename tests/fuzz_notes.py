"""Notes for fuzzing the local engine's text functions: random ones (hypothesis strategies) and
adversarial ones built to make a backtracking regex work hard (the same token repeated, on
one line or many, with and without the piece that would complete the pattern), in English and
Chinese. Shared by tests/test_fuzz_text.py (a bounded property test) and
bench/bench_fuzz_text.py (the time per KB of every input, the slowest reported)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from hypothesis import strategies as st

# Tokens whose repetition stresses a pattern of the engine or of the link and markdown scanners:
# link and embed openers and closers, anchors and aliases, code spans and fences, emphasis,
# comments, math, URLs, hyphenated and capitalised words, numbers with units, list markers,
# reasons ("because"), CJK punctuation, brackets and quotes.
TOKENS: tuple[str, ...] = (
    "[[", "]]", "[", "]", "![[", "[[a|", "[[a#", "#", "|", "](", "[a](", "(", ")", "`", "```",
    "**", "__", "~~", "<!--", "-->", "%%", "$$", "<span hidden>", "http://", "https://a.b/",
    "a-", "a_", "-a", "A ", "Aa", "AB", "aA", "A-b ", "1", "1.", "1,", "1 ", "1-", "12 h ",
    " -", "- ", "* ", "1. ", "> ", ": ", "::", "because ", "so that ", ", because", "，", "。",
    "；", "因为", "决定", "必须", "（", "「", "\\", "'", '"', "\t", " ", "\u00a0", "a", "é",
    "名", "Alice said that ", "we decided to ", "e.g. ", "...", "—", "http://a.b/[[",
)
SEPARATORS = ("", " ", "\n", "x", "a ", "\n\n")


def adversarial(size: int) -> Iterator[tuple[str, str]]:
    """(label, note text) of about `size` characters: each token repeated on one line, on one
    line after a heading and a list marker, and cut into lines; each pair of tokens
    alternated."""
    for token in TOKENS:
        for sep in SEPARATORS:
            unit = token + sep
            body = unit * max(1, size // len(unit))
            yield f"{token!r} x{size // len(unit)} sep {sep!r}", body
        yield f"{token!r} heading+item", "# Title\n\n- " + token * max(1, size // len(token))
    pairs = ("[[", "]]"), ("[[", "|"), ("`", "["), ("**", "_"), ("A", "-"), ("1", "."),
    pairs += ("<!--", "%%"), ("$$", "`"), ("http://", "[["), ("因为", "，"), ("A", " "),
    for a, b in pairs:
        unit = a + b
        yield f"{a!r}{b!r} alternating", unit * max(1, size // len(unit))
    yield "one long word", "a" * size
    yield "one long capitalised word", "A" + "a" * (size - 1)
    yield "camel case run", "aB" * (size // 2)
    yield "one long number", "1" * size
    yield "cjk run", "名" * size
    yield "issue case 10: [[ x 8000 (16 KB)", "[[" * (size // 2)


def note_text() -> st.SearchStrategy[str]:
    """Random notes: lines drawn from the adversarial tokens, words and random text, so the
    random side reaches the same patterns as the built side."""
    word = st.sampled_from(["deploy", "keys", "rotation", "Alice", "Project_A", "24 h",
                            "30 days", "部署", "密钥", "轮换", "每 24 小时", "API", "`make test`"])
    piece = st.one_of(st.sampled_from(TOKENS), word,
                      st.text(min_size=0, max_size=12))
    line = st.lists(piece, max_size=30).map("".join)
    return st.lists(line, max_size=40).map("\n".join)


def as_note(text: str, path: str = "daily/2026-06-24/fuzz.md") -> Any:
    from remelink.vault.notes import parse_text

    return parse_text(path, text)


def text_functions() -> list[tuple[str, Callable[[str], object]]]:
    """The local engine's text functions, each applied to a whole note."""
    from remelink.models.local import text as tx

    return [
        ("sentences", tx.sentences),
        ("clean_statement", tx.clean_statement),
        ("core_statement", tx.core_statement),
        ("title_from", tx.title_from),
        ("procedure_title", lambda t: tx.procedure_title(t, t)),
        ("facts", tx.facts),
        ("clauses", tx.clauses),
        ("keywords", tx.keywords),
        ("name_phrases", tx.name_phrases),
        ("mentions", lambda t: tx.mentions(t, "Idempotency keys")),
        ("reason", tx.reason),
        ("main_clause", tx.main_clause),
        ("is_cjk_text", tx.is_cjk_text),
        ("heading_kind", tx.heading_kind),
    ]


def vault_functions() -> list[tuple[str, Callable[[str], object]]]:
    """The other code that runs regexes over a note's text: search's passage splitter, title
    and query terms, the MCP server's tool-error folding (it echoes a model's arguments), the
    wikilink and markdown scanner (lint, guards), the index's analysis and node parsing, the
    guards' line conservation and language check, and the lint checks of a digest node."""
    from remelink.config import Settings
    from remelink.guards import body_language, lost_lines
    from remelink.index import analysis
    from remelink.index.nodes import searchable_body
    from remelink.lint import check_note
    from remelink.vault import links as wl
    from remelink.vault.resolve import VaultFiles

    def lint(text: str) -> object:
        from pathlib import Path

        files = VaultFiles(root=Path("/nonexistent-vault"), files={"daily/x.md"})
        node = as_note(f"---\nname: n\ndescription: d\n---\n{text}\n", "digest/wiki/n.md")
        return check_note(files, Settings(), node)

    def conserve(text: str) -> object:
        old = as_note(text, "digest/wiki/n.md")
        return lost_lines(old, as_note(text + "\nMore.\n", "digest/wiki/n.md"))

    from remelink.mcp.server import one_line
    from remelink.search.passages import split
    from remelink.search.query import query_terms
    from remelink.search.reading import title_of

    return [
        ("search passages.split", lambda t: split(t, 1, digest=True)),
        ("search title_of", lambda t: title_of({}, t, "daily/x.md")),
        ("search query_terms", query_terms),
        ("mcp one_line (a tool error)", one_line),
        ("links.scan", lambda t: wl.scan(t, 1)),
        ("index analysis", analysis.terms),
        ("index searchable_body", searchable_body),
        ("guards.lost_lines", conserve),
        ("guards.body_language", lambda t: body_language(as_note(t, "digest/wiki/n.md"))),
        ("lint check_note", lint),
    ]


def extract_note(text: str) -> object:
    """The whole local extraction of one note (structure, sections, statements, titles...)."""
    from remelink.models.local.extract import extract

    return extract([(as_note(text), {})])


def per_line(fn: Callable[[str], object], distinct: bool = False) -> Callable[[str], object]:
    """`fn` on each line of a note, as the engine calls it; `distinct`: on each different line
    once (the functions are pure, so a repeated line repeats a call already made: the test's
    hang guard needs each call once, the benchmark's time per KB every line)."""
    if distinct:
        return lambda text: [fn(line) for line in dict.fromkeys(text.splitlines())]
    return lambda text: [fn(line) for line in text.splitlines()]
