"""Golden files for the wikilink parser, in the three-dot style of markdown-it-py's fixtures.

Each case in `tests/fixtures/links/*.md` is a title line, the markdown input, a line `.`, the
expected links one per line as `line:col target#anchor|alias [embed]` (or `(none)`), and a line
`.`. The input is a whole note: frontmatter is split off first, as every caller does.

Title flags: `[crlf]` turns the input's line endings into CRLF, `[bom]` prefixes a UTF-8 BOM,
`[dedupe]` applies `dedupe()` (the edges of one note). In inputs, `→` stands for a tab.
Regenerate nothing automatically: a changed expectation is a reviewed edit of the fixture.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from remelink.vault.links import Link, dedupe, parse_links
from remelink.vault.notes import decode

FIXTURES = Path(__file__).parent / "fixtures" / "links"


@dataclass(frozen=True)
class Case:
    file: str
    line: int
    title: str
    source: str
    expected: list[str]

    @property
    def id(self) -> str:
        return f"{self.file}:{self.line}"


def load_cases(path: Path) -> list[Case]:
    lines = path.read_text(encoding="utf-8").split("\n")
    cases: list[Case] = []
    i = 0
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        title, start = lines[i], i + 1
        i += 1
        try:
            dot = lines.index(".", i)
            end = lines.index(".", dot + 1)
        except ValueError:
            raise AssertionError(f"{path.name}:{start}: case {title!r} is not closed by two '.' "
                                 "lines") from None
        source = "\n".join(lines[i:dot]) + "\n"
        cases.append(Case(path.name, start, title, source, lines[dot + 1:end]))
        i = end + 1
    return cases


def render(link: Link) -> str:
    text = f"{link.line}:{link.col} {link.target}"
    if link.anchor is not None:
        text += f"#{link.anchor}"
    if link.alias is not None:
        text += f"|{link.alias}"
    return text + (" [embed]" if link.embed else "")


def links_of(case: Case) -> list[Link]:
    source = case.source.replace("→", "\t")
    if "[crlf]" in case.title:
        source = source.replace("\n", "\r\n")
    data = source.encode("utf-8")
    if "[bom]" in case.title:
        data = b"\xef\xbb\xbf" + data
    note = decode("case.md", data)
    links = parse_links(note.body, note.body_line)
    return dedupe(links) if "[dedupe]" in case.title else links


CASES = [case for path in sorted(FIXTURES.glob("*.md")) for case in load_cases(path)]


def test_fixture_files_exist_and_hold_many_cases() -> None:
    per_file = {path.name: len(load_cases(path)) for path in FIXTURES.glob("*.md")}
    assert len(per_file) >= 5, per_file
    assert all(count >= 5 for count in per_file.values()), per_file


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_links_golden(case: Case) -> None:
    got = [render(link) for link in links_of(case)] or ["(none)"]
    assert got == case.expected, f"{case.id} {case.title}\n{case.source}"
