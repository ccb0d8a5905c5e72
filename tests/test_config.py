"""Settings: defaults < .remelink/config.yaml < REMELINK_* environment < flags (SPEC §12)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from remelink.config import (
    DEFAULT_STEPS,
    OTHER_ENV,
    Settings,
    _env_key,
    config_keys,
    env_name,
    load_settings,
)
from remelink.errors import ConfigError
from remelink.scaffold import init


def write_config(vault: Path, text: str) -> None:
    (vault / ".remelink").mkdir(parents=True, exist_ok=True)
    (vault / ".remelink" / "config.yaml").write_text(text, encoding="utf-8")


def test_defaults_without_a_config_file(tmp_path: Path) -> None:
    s = load_settings(tmp_path, env={})
    assert s == Settings()
    assert s.model == "local"
    assert s.resolution == "path"
    assert s.auto_dream.steps == DEFAULT_STEPS
    assert s.auto_dream.max_units == 20 and s.auto_dream.max_attempts == 3
    assert s.level("broken-link") == "error" and s.level("orphan-node") == "off"


def test_the_init_template_loads_to_the_defaults(tmp_path: Path) -> None:
    init(tmp_path)
    assert load_settings(tmp_path, env={}) == Settings()


def test_layers_in_order(tmp_path: Path) -> None:
    write_config(tmp_path, "model: openai/gpt-4.1-mini\nauto_dream:\n  max_units: 5\n"
                           "  concurrency: 2\nlinks: {resolution: obsidian}\n")
    s = load_settings(tmp_path, env={})
    assert (s.model, s.auto_dream.max_units, s.auto_dream.concurrency, s.resolution) == \
        ("openai/gpt-4.1-mini", 5, 2, "obsidian")
    env = {"REMELINK_MODEL": "ollama_chat/qwen3", "REMELINK_AUTO_DREAM__MAX_UNITS": "7",
           "REMELINK_API_BASE": "http://localhost:11434", "UNRELATED": "x"}
    s = load_settings(tmp_path, env=env)
    assert (s.model, s.auto_dream.max_units, s.api_base) == \
        ("ollama_chat/qwen3", 7, "http://localhost:11434")
    assert s.auto_dream.concurrency == 2  # from the file, untouched by the environment
    s = load_settings(tmp_path, env=env, overrides={"model": "local", "api_base": None})
    assert s.model == "local" and s.api_base == "http://localhost:11434"


def test_lint_levels_accept_an_unquoted_off(tmp_path: Path) -> None:
    write_config(tmp_path, "lint:\n  orphan-node: warning\n  bare-source-link: off\n")
    s = load_settings(tmp_path, env={})
    assert s.level("orphan-node") == "warning"
    assert s.level("bare-source-link") == "off"


def test_steps_from_the_environment(tmp_path: Path) -> None:
    s = load_settings(tmp_path, env={
        "REMELINK_AUTO_DREAM__STEPS": "dream_extract_step,dream_integrate_step,dream_finish_step"})
    assert s.auto_dream.steps == ("dream_extract_step", "dream_integrate_step",
                                  "dream_finish_step")


@pytest.mark.parametrize(("text", "message"), [
    ("modle: local\n", "unknown key(s) modle"),
    ("auto_dream:\n  max_unit: 3\n", "auto_dream.max_unit"),
    ("language: fr\n", "language must be auto | en | zh"),
    ("links: {resolution: wiki}\n", "links.resolution must be path | obsidian"),
    ("lint: {broken-link: fatal}\n", "lint.broken-link must be error | warning | off"),
    ("lint: {no-such-code: error}\n", "lint.no-such-code"),
    ("auto_dream: {concurrency: 0}\n", "auto_dream.concurrency must be an integer >= 1"),
    ("auto_dream: {node_search_limit: 500}\n", "at most 100"),
    ("auto_dream: {max_units: many}\n", "auto_dream.max_units must be an integer"),
    ("auto_dream: {steps: dream_extract_step}\n", "auto_dream.steps must be a list"),
    ("folders: {digest: ../elsewhere}\n", "folders.digest must be a plain folder name"),
    ("folders: {daily: notes, resource: notes}\n", "must differ"),
    ("timeout: -1\n", "timeout must be a positive number"),
    ("- a list\n", "configuration must be a mapping"),
    ("model: [unclosed\n", "line 2, column 1: cannot parse the YAML"),
    ("model: local\nfolders:\n  daily: x\n   resource: y\n",
     "line 4, column 12: cannot parse the YAML: mapping values are not allowed here"),
    ("lint: {exclude: {a: b}}\n", "lint.exclude must be a list of globs"),
    ("lint: {exclude: [../outside/]}\n", "lint.exclude must be workspace-relative globs"),
    ("lint: {exclude: [/abs/*.md]}\n", "lint.exclude must be workspace-relative globs"),
])
def test_bad_config_is_one_clear_error(tmp_path: Path, text: str, message: str) -> None:
    write_config(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_settings(tmp_path, env={})
    assert message in str(info.value)
    assert "\n" not in str(info.value)
    assert info.value.exit_code == 2


def test_bad_environment_value_names_the_environment(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"environment \(REMELINK_\*\).*concurrency"):
        load_settings(tmp_path, env={"REMELINK_AUTO_DREAM__CONCURRENCY": "0"})


def test_an_empty_config_file_is_the_defaults(tmp_path: Path) -> None:
    write_config(tmp_path, "# nothing set\n")
    assert load_settings(tmp_path, env={}) == Settings()


def test_lint_exclude_from_the_file_and_the_environment(tmp_path: Path) -> None:
    write_config(tmp_path, "lint:\n  exclude: [templates/, '**/*.excalidraw.md']\n"
                           "  orphan-node: warning\n")
    s = load_settings(tmp_path, env={})
    assert s.lint_exclude == ("templates/", "**/*.excalidraw.md")
    assert s.level("orphan-node") == "warning" and "exclude" not in s.lint
    s = load_settings(tmp_path, env={"REMELINK_LINT__EXCLUDE": "a/,b/*.md"})
    assert s.lint_exclude == ("a/", "b/*.md")


# -- the environment ----------------------------------------------------------------------------

def test_environment_keys_accept_underscore_for_dash(tmp_path: Path) -> None:
    """Shells allow no `-` in a variable name: REMELINK_LINT__ORPHAN_NODE is lint.orphan-node."""
    s = load_settings(tmp_path, env={"REMELINK_LINT__ORPHAN_NODE": "warning",
                                     "REMELINK_LINT__BARE_SOURCE_LINK": "off",
                                     "remelink_model": "ignored: not upper case"})
    assert s.level("orphan-node") == "warning" and s.level("bare-source-link") == "off"
    assert s.warnings == ()


@pytest.mark.parametrize(("name", "closest"), [
    ("REMELINK_MODLE", "REMELINK_MODEL"),
    ("REMELINK_AUTO_DREAM__MAX_UNIT", "REMELINK_AUTO_DREAM__MAX_UNITS"),
    ("REMELINK_LINT__ORPHAN", "REMELINK_LINT__ORPHAN_NODE"),
    ("REMELINK_LINKS_RESOLUTION", "REMELINK_LINKS__RESOLUTION"),
    ("REMELINK_DEBGU", "REMELINK_DEBUG"),
])
def test_an_unknown_variable_is_a_warning_naming_the_closest_key(tmp_path: Path, name: str,
                                                                 closest: str) -> None:
    s = load_settings(tmp_path, env={name: "x"})
    assert s == Settings()  # ignored, not an error
    assert s.warnings == (f"{name} is not a remelink setting; ignored (did you mean {closest}?)",)


def test_variables_that_are_not_settings_are_not_warned_about(tmp_path: Path) -> None:
    s = load_settings(tmp_path, env={"REMELINK_DEBUG": "1", "REMELINK_LINT_JOBS": "1"})
    assert s.warnings == ()
    far = load_settings(tmp_path, env={"REMELINK_XYZZY_QQQ": "1"})
    assert far.warnings == ("REMELINK_XYZZY_QQQ is not a remelink setting; ignored (see the "
                            "configuration keys in docs/configuration.md)",)


def test_every_key_has_its_variable() -> None:
    """Every configuration key can be set from the environment, by the name `env_name` gives."""
    for key in config_keys():
        path = tuple(key.split("."))
        assert _env_key(env_name(key)) == path, key


@given(st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZ_-0123456789", min_size=1, max_size=30),
       st.text(max_size=8))
def test_any_remelink_variable_sets_a_key_or_warns(suffix: str, value: str) -> None:
    name = f"REMELINK_{suffix}"
    try:
        s = load_settings(Path("/nonexistent-vault"), env={name: value})
    except ConfigError as exc:  # a real key with a bad value: the error names the environment
        assert _env_key(name) is not None and "environment (REMELINK_*)" in str(exc)
        return
    if _env_key(name) is None and name not in OTHER_ENV:
        assert len(s.warnings) == 1 and s.warnings[0].startswith(f"{name} is not a remelink")
    else:
        assert s.warnings == ()


def test_the_cli_prints_the_warning_and_goes_on(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from remelink.cli import app

    init(tmp_path)
    monkeypatch.setenv("REMELINK_MODLE", "openai/x")
    result = CliRunner().invoke(app, ["status", "--vault", str(tmp_path)])
    assert result.exit_code == 0
    assert result.stderr == ("remelink: warning: REMELINK_MODLE is not a remelink setting; "
                             "ignored (did you mean REMELINK_MODEL?)\n")


@pytest.mark.parametrize(("text", "where"), [
    ("model: local\nlint: {orphan-node: warning\n", "line 3, column 1"),
    ("model: local\nfolders:\n\tdaily: d\n", "line 3, column 1"),
    ("model: 'unclosed\n", "line 2, column 1"),
    ("a: b\n- c\n", "line 2, column 1"),
])
def test_yaml_errors_name_line_and_column(tmp_path: Path, text: str, where: str) -> None:
    write_config(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_settings(tmp_path, env={})
    message = str(info.value)
    assert message.startswith(f".remelink/config.yaml: {where}: cannot parse the YAML: "), message
    assert message.endswith("(fix the syntax there)") and "\n" not in message


def test_model_options_from_the_file_and_the_environment(tmp_path: Path) -> None:
    write_config(tmp_path, "model_options:\n  temperature: 0.2\n  max_tokens: 1200\n")
    s = load_settings(tmp_path, env={"REMELINK_MODEL_OPTIONS__NUM_CTX": "16384",
                                     "REMELINK_MODEL_OPTIONS__TEMPERATURE": "0"})
    assert dict(s.model_options) == {"temperature": 0.0, "max_tokens": 1200, "num_ctx": 16384}
    assert load_settings(tmp_path / "none", env={}).model_options == {}


@pytest.mark.parametrize(("text", "message"), [
    ("model_options: {top_k: 3}", "unknown key(s) model_options.top_k"),
    ("model_options: {temperature: 3}", "model_options.temperature must be between 0 and 2"),
    ("model_options: {temperature: hot}", "model_options.temperature must be a number"),
    ("model_options: {max_tokens: 0}", "model_options.max_tokens must be between 1 and"),
    ("model_options: {num_ctx: true}", "model_options.num_ctx must be an integer"),
    ("model_options: [1]", "model_options must be a mapping"),
])
def test_bad_model_options_are_one_clear_error(tmp_path: Path, text: str, message: str) -> None:
    write_config(tmp_path, text + "\n")
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_settings(tmp_path, env={})
