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


def documented_keys(text: str) -> set[str]:
    """Dotted keys of a YAML-ish configuration text, commented-out ones included
    (`# api_base: ...`, `  # batch_chars: ...`), and the keys of flow mappings
    (`lint: {orphan-node: warning}`)."""
    keys: set[str] = set()
    stack: list[tuple[int, str]] = []
    for line in text.splitlines():
        m = re.match(r"^(\s*)(?:#\s?)?(\s*)([a-z_][a-z0-9_-]*):(\s|$)(.*)$", line)
        if m is None:
            continue
        indent = len(m.group(1)) + len(m.group(2))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        key = ".".join([k for _, k in stack] + [m.group(3)])
        keys.add(key)
        rest = m.group(5).split(" #", 1)[0].strip()
        if rest.startswith("{"):
            keys |= {f"{key}.{k}" for k in re.findall(r"([a-z_][a-z0-9_-]*):", rest)}
        elif not rest:
            stack.append((indent, m.group(3)))
    return keys


def test_every_configuration_key_is_documented_in_both_places() -> None:
    """Every key of config.yaml is in the README's configuration block and in the commented
    file `remelink init` writes. The per-code lint levels are in the init file one by one; the
    README lists the codes in its lint-links table (checked above)."""
    from remelink.config import PROBLEM_CODES, config_keys
    from remelink.scaffold import CONFIG_TEMPLATE

    block = README.split("## Configuration", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    codes = {f"lint.{code}" for code in PROBLEM_CODES}
    readme, template = documented_keys(block), documented_keys(CONFIG_TEMPLATE)
    missing_readme = [k for k in config_keys() if k not in readme and k not in codes]
    missing_template = [k for k in config_keys() if k not in template]
    assert missing_readme == [], f"not in the README configuration block: {missing_readme}"
    assert missing_template == [], f"not in the init template: {missing_template}"
    assert "lint.orphan-node" in readme  # the per-code form is shown once


def test_the_init_template_with_everything_uncommented_is_accepted() -> None:
    """The commented-out lines show valid values: uncommented, the file still loads."""
    import yaml

    from remelink.scaffold import CONFIG_TEMPLATE

    lines = [re.sub(r"^(\s*)# (\s*[a-z_][a-z0-9_-]*:(\s|$))", r"\1\2", line)
             for line in CONFIG_TEMPLATE.splitlines()]
    data = yaml.safe_load("\n".join(lines))
    settings = apply(Settings(), data, "template")
    # batch_tokens as shown wins over the deprecated batch_chars shown next to it.
    from remelink.config import DEFAULT_BATCH_TOKENS

    assert settings.auto_dream.batch_tokens == DEFAULT_BATCH_TOKENS


def test_debug_is_listed_in_every_help() -> None:
    for words in (["init"], ["lint-links"], ["node-search"], ["integrate"], ["status"],
                  ["dream", "run"], ["index", "rebuild"]):
        assert "--debug" in CliRunner().invoke(app, [*words, "--help"]).stdout, words


def _script_examples() -> list[dict[str, object]]:
    import json

    section = README.split("## Use from scripts", 1)[1].split("\n## ", 1)[0]
    return [json.loads(block) for block in re.findall(r"```json\n(.*?)```", section, re.S)]


def test_use_from_scripts_shows_every_command_in_its_real_shape() -> None:
    """One example per command, each the envelope, with the fields of the golden shapes of
    tests/golden/envelopes/ (so the README moves with the output)."""
    import json

    from remelink.envelope import KEYS

    golden = ROOT / "tests" / "golden" / "envelopes"
    examples = _script_examples()
    commands = [e["command"] for e in examples if e["ok"] or e["command"] == "lint-links"]
    assert sorted(commands) == sorted(["init", "dream run", "status", "node-search", "search",
                                       "index rebuild", "integrate", "lint-links"])
    for example in examples:
        assert list(example) == list(KEYS)
        name = str(example["command"]).replace(" ", "-") if example["counts"] else "failure"
        want = json.loads((golden / f"{name}.json").read_text(encoding="utf-8"))
        assert sorted(example["counts"]) == sorted(want["counts"]), name  # type: ignore[arg-type]
        data = example["data"]
        dry_run_only = {"diff", "diffs"}  # the goldens come from --dry-run where it exists
        if isinstance(data, dict):
            assert set(data) ^ set(want["data"]) <= dry_run_only, name
        elif isinstance(data, list) and data:
            assert set(data[0]) ^ set(want["data"][0]) <= dry_run_only, name
