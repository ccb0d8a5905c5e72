"""The README is tested: every `remelink` command it shows exists with the flags it uses, the
configuration it documents is accepted, and the problem codes it lists are the real ones."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from remelink.cli import app
from remelink.config import PROBLEM_CODES, Settings, apply

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
SUBCOMMANDS = {"dream": {"run"}, "index": {"rebuild"}}


def shown_commands() -> list[list[str]]:
    """`remelink ...` invocations in code blocks and inline code of the README."""
    texts = re.findall(r"```[a-z]*\n(.*?)```", README, re.S) + re.findall(r"`([^`\n]+)`", README)
    commands = []
    for text in texts:
        for line in text.splitlines():
            line = line.strip().removeprefix("$ ")
            if line.startswith("#"):
                continue
            line = re.split(r"\s#", line, maxsplit=1)[0]  # a trailing comment
            m = re.search(r"(?:^|\s|/)(remelink(?:-lint-links)?)\s+(.*)$", line)
            if m is None:
                continue
            words = shlex.split(m.group(2).split("#")[0].split(">>")[0].split("|")[0],
                                posix=True)
            commands.append([m.group(1), *words])
    return commands


COMMANDS = shown_commands()


def test_the_readme_shows_commands() -> None:
    names = {c[1] for c in COMMANDS if c[0] == "remelink" and len(c) > 1}
    assert {"dream", "status", "integrate", "node-search", "lint-links", "init"} <= names


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c)[:60])
def test_every_shown_command_exists_with_its_flags(command: list[str]) -> None:
    if command[0] == "remelink-lint-links":
        from remelink.lint import main

        assert main(["--help"]) == 0
        return
    words = command[1:]
    path: list[str] = []  # stays empty for `remelink --help` and the like
    if words and not words[0].startswith("-"):
        path.append(words[0])
        if words[0] in SUBCOMMANDS and len(words) > 1 and words[1] in SUBCOMMANDS[words[0]]:
            path.append(words[1])
    result = CliRunner().invoke(app, [*path, "--help"])
    assert result.exit_code == 0, (command, result.output)
    flags = [w.split("=")[0] for w in words if w.startswith("--")]
    for flag in flags:
        assert flag in result.output, f"{' '.join(command)}: {flag} not in its --help"


def test_the_documented_configuration_is_accepted() -> None:
    import yaml

    block = README.split("## Configuration", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    data = yaml.safe_load(block)
    settings = apply(Settings(), data, "README.md")
    assert settings.auto_dream.steps == Settings().auto_dream.steps


def test_the_documented_problem_codes_are_the_real_ones() -> None:
    table = README.split("| code | default | what |", 1)[1].split("\n\n", 1)[0]
    rows = dict(re.findall(r"^\| `([a-z-]+)` \| (\w+) \|", table, re.M))
    assert rows == PROBLEM_CODES
