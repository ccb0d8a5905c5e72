"""`--help` is read by people: every description is a whole sentence, and the command lists
(`remelink --help`, `remelink dream --help`, ...) show each command's description whole, never
cut mid-phrase by click's 45-character short help (give a command a `short_help`)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
import typer
from typer.testing import CliRunner

from remelink.cli import app

ROOT = typer.main.get_command(app)


def _commands(group: object, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...],
                                                                             object]]:
    yield path, group
    for name, sub in sorted(getattr(group, "commands", {}).items()):
        yield from _commands(sub, (*path, name))


COMMANDS = list(_commands(ROOT))
GROUPS = [path for path, cmd in COMMANDS if getattr(cmd, "commands", None)]


def listed(help_text: str) -> dict[str, str]:
    """{command: description} from the Commands section of a help text (wrapped lines
    joined)."""
    section = help_text.split("\nCommands:\n", 1)[1]
    out: dict[str, str] = {}
    name = None
    for line in section.splitlines():
        m = re.match(r"^  (\S+)\s+(.*)$", line)
        if m:
            name = m.group(1)
            out[name] = m.group(2).strip()
        elif name and line.startswith("    "):
            out[name] += " " + line.strip()
    return out


@pytest.mark.parametrize("path", GROUPS, ids=lambda p: " ".join(p) or "remelink")
@pytest.mark.parametrize("width", [60, 100])
def test_command_lists_show_whole_sentences(path: tuple[str, ...], width: int) -> None:
    result = CliRunner().invoke(app, [*path, "--help"], terminal_width=width,
                                env={"COLUMNS": str(width)})
    assert result.exit_code == 0, result.output
    entries = listed(result.output)
    assert entries, result.output
    for name, text in entries.items():
        assert "..." not in text and text.endswith("."), \
            f"{' '.join((*path, name))}: {text!r} is cut or not a sentence; give it a short_help"
        assert text[0].isupper(), text


@pytest.mark.parametrize("path,command", COMMANDS, ids=lambda c: " ".join(c) if
                         isinstance(c, tuple) else "")
def test_every_help_text_is_sentences(path: tuple[str, ...], command: object) -> None:
    """The command's own help and each option's help end as sentences do."""
    texts = [getattr(command, "help", None) or ""]
    texts += [getattr(p, "help", None) or "" for p in getattr(command, "params", [])]
    assert texts[0], path  # every command says what it does
    for text in texts:
        for paragraph in text.strip().split("\n\n"):  # every paragraph, not only the first
            paragraph = " ".join(paragraph.split())
            if paragraph:
                assert paragraph.endswith((".", ".)")) and not paragraph.endswith("..."), \
                    (path, paragraph)
