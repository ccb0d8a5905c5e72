"""Settings: defaults < `.remelink/config.yaml` < `REMELINK_*` environment < flags (SPEC §12).

Kept free of heavy imports: PyYAML is imported only when a config file exists, so the pre-commit
hook stays fast. Unknown keys and bad values are configuration errors (exit 2) that name the key
and the file, because a typo that silently does nothing is worse than a refusal.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from remelink.errors import ConfigError
from remelink.vault.paths import OBSIDIAN_DIR

CONFIG_FILE = ".remelink/config.yaml"
LEVELS = ("error", "warning", "off")
PROBLEM_CODES = {
    "broken-link": "error",
    "missing-anchor": "error",
    "ambiguous-link": "error",
    "outside-vault": "error",
    "missing-sources": "error",
    "empty-sources": "error",
    "bare-source-link": "error",
    "non-source-target": "error",
    "relation-field": "error",
    "frontmatter": "error",
    "orphan-node": "off",
    "unreadable": "warning",
    "deleted-source": "warning",
}
DEFAULT_STEPS = ("dream_extract_step", "dream_integrate_step", "dream_finish_step", "auto_tag_step")


@dataclass(frozen=True)
class Folders:
    daily: str = "daily"
    resource: str = "resource"
    digest: str = "digest"


# An LLM's extraction batch, in estimated tokens of notes: about 20 units' worth (a unit per
# 150-300 tokens of notes on the demo and the generated vaults), so that a typical batch is
# answered in one page of `max_units` (20) and no page resends the notes (bench_llm_path.py).
DEFAULT_BATCH_TOKENS = 4_000


@dataclass(frozen=True)
class DreamSettings:
    steps: tuple[str, ...] = DEFAULT_STEPS
    max_units: int = 20
    max_steps: int = 30
    # Prompt tokens one unit may spend, over all its turns (SPEC §7.2 "Bounded"): about eight
    # clean units (a clean unit is under 4,000). A unit that would go past it fails cleanly,
    # its attempt counted, instead of paying for a model that keeps repeating itself.
    unit_tokens: int = 32_000
    max_attempts: int = 3
    concurrency: int = 1
    node_search_limit: int = 25
    repair_turns: int = 3
    topic_count: int = 3
    topic_diversity_days: int = 7
    max_tags: int = 3
    # Extraction batches: estimated tokens of note text per call (dream/batching.py). None:
    # the engine's own budget (an LLM: DEFAULT_BATCH_TOKENS; the local engine, which has no
    # context window, reads every changed note in one pass and merges evidence across them).
    batch_tokens: int | None = None
    # Deprecated (characters mean 4x more tokens in Chinese than in English): read as
    # batch_tokens = batch_chars / 4 when batch_tokens is not given; the run warns.
    batch_chars: int | None = None


@dataclass(frozen=True)
class Settings:
    model: str = "local"
    api_base: str | None = None
    language: str = "auto"
    timeout: float = 120.0
    retries: int = 4
    # The longest Retry-After (seconds) a transient failure waits for. A provider asking for
    # longer fails the call at once with that reason (the unit fails, the run goes on) rather
    # than being asked again before it is ready.
    retry_after_max: float = 120.0
    folders: Folders = field(default_factory=Folders)
    resolution: str = "path"
    # Where `resolution` came from: "" when nothing chose it (no `.obsidian/`, no layer set
    # `links.resolution`): lint-links then lets the links decide (vault/obsidian.py). Not part
    # of the settings' value.
    resolution_from: str = field(default="", compare=False)
    lint: Mapping[str, str] = field(default_factory=lambda: dict(PROBLEM_CODES))
    # Notes lint-links does not check (templates with `[[{{date}}]]` placeholders, exports):
    # workspace-relative globs (`*` within a folder, `**` across folders, `dir/` for a folder).
    # They stay link targets.
    lint_exclude: tuple[str, ...] = ()
    auto_dream: DreamSettings = field(default_factory=DreamSettings)
    max_note_bytes: int = 10 * 1024 * 1024
    embedder: str = "auto"
    # What loading noticed but did not refuse (an unknown REMELINK_* variable): the CLI prints
    # each as a warning. Not part of the settings' value.
    warnings: tuple[str, ...] = field(default=(), compare=False)
    # Passed to every litellm call (see MODEL_OPTIONS): temperature, max_tokens, Ollama's num_ctx.
    model_options: Mapping[str, Any] = field(default_factory=dict)
    # `remelink mcp`: whether agents may write raw notes with the `remember` tool.
    mcp_remember: bool = True
    # `model: scripted:FILE` came from the vault's config.yaml: FILE is a path inside the vault
    # (validated as one), read through the vault boundary; from the environment or a flag it is
    # a path of the person's own choosing.
    script_in_vault: bool = False

    def level(self, code: str) -> str:
        return self.lint.get(code, "error")


# Every key of config.yaml: a top-level value (None) or a section with its keys. The file
# `remelink init` writes documents each (docs/configuration.md shows it; a test checks both).
SECTIONS: dict[str, frozenset[str] | None] = {
    "model": None, "api_base": None, "language": None, "timeout": None, "retries": None,
    "retry_after_max": None,
    "folders": frozenset({"daily", "resource", "digest"}),
    "links": frozenset({"resolution"}),
    "lint": frozenset({*PROBLEM_CODES, "exclude"}),
    "limits": frozenset({"max_note_bytes"}),
    "local": frozenset({"embedder"}),
    "model_options": frozenset({"temperature", "top_p", "max_tokens", "seed", "num_ctx"}),
    "auto_dream": frozenset(f.name for f in fields(DreamSettings)),
    "mcp": frozenset({"remember"}),
}
_TOP_KEYS = set(SECTIONS)
ENV_PREFIX = "REMELINK_"
# Variables remelink reads that are not configuration keys.
OTHER_ENV = frozenset({"REMELINK_DEBUG", "REMELINK_LINT_JOBS"})


def config_keys() -> list[str]:
    """Every configuration key, dotted (`auto_dream.batch_chars`, `lint.orphan-node`)."""
    keys = []
    for top, subs in SECTIONS.items():
        keys += [top] if subs is None else [f"{top}.{sub}" for sub in sorted(subs)]
    return keys


def env_name(key: str) -> str:
    """The variable of a dotted key: `lint.orphan-node` -> REMELINK_LINT__ORPHAN_NODE."""
    return ENV_PREFIX + key.replace(".", "__").replace("-", "_").upper()

# model_options: (type, minimum, maximum) of each key litellm is given as it is.
MODEL_OPTIONS: dict[str, tuple[type, float, float]] = {
    "temperature": (float, 0.0, 2.0), "top_p": (float, 0.0, 1.0),
    "max_tokens": (int, 1, 1_000_000), "seed": (int, 0, 2**63 - 1),
    "num_ctx": (int, 256, 10_000_000),
}


def _type_error(key: str, want: str, value: Any, source: str) -> ConfigError:
    return ConfigError(f"{key} must be {want}, got {value!r}", path=source)


# The largest value each integer setting takes: far above any real use, low enough that no
# loop, list or allocation it sizes can run away (`retries: 10**18`, `max_units: 1e30`).
MAXIMA = {"retries": 100, "limits.max_note_bytes": 1 << 30, "auto_dream.max_units": 100_000,
          "auto_dream.max_steps": 1000, "auto_dream.max_attempts": 1000,
          "auto_dream.concurrency": 64,
          "auto_dream.repair_turns": 100, "auto_dream.topic_count": 100,
          "auto_dream.topic_diversity_days": 3660, "auto_dream.max_tags": 64,
          "auto_dream.batch_tokens": 10_000_000, "auto_dream.batch_chars": 40_000_000}
MAX_TIMEOUT = 86_400.0


def _as_int(key: str, value: Any, source: str, *, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            value = int(value)
        else:
            raise _type_error(key, "an integer", value, source)
    if value < minimum:
        raise _type_error(key, f"an integer >= {minimum}", value, source)
    maximum = MAXIMA.get(key)
    if maximum is not None and value > maximum:
        raise _type_error(key, f"an integer from {minimum} to {maximum}", value, source)
    return int(value)


def _as_bool(key: str, value: Any, source: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "1", "0", "yes",
                                                            "no", "on", "off"):
        return value.strip().lower() in ("true", "1", "yes", "on")
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise _type_error(key, "true or false", value, source)


def _as_str(key: str, value: Any, source: str, *, choices: tuple[str, ...] | None = None) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _type_error(key, "a non-empty string", value, source)
    if choices and value not in choices:
        raise _type_error(key, " | ".join(choices), value, source)
    return value.strip()


def _folder_name(key: str, value: Any, source: str) -> str:
    """A folder of the vault: one plain name inside it. `/`, the vault root (`.`, empty), an
    absolute path, `~`, `..`, a nested or hidden name are refused, never read as something
    else (a stripped `/` used to mean the vault root)."""
    text = _as_str(key, value, source)
    name = text.rstrip("/")
    if not name or name.startswith(("/", "~", ".")) or "/" in name or "\\" in name or \
            any(ord(ch) < 32 for ch in name):
        raise ConfigError(f"{key} must be a plain folder name inside the vault (not /, the "
                          f"vault root, an absolute path, ~, .. or a nested path), got "
                          f"{value!r}", path=source)
    return name


def _vault_path(key: str, value: str, source: str) -> str:
    """A file inside the vault, workspace-relative (the same rules as a vault path: no
    absolute path, no `..`, not the vault root)."""
    from remelink.errors import SandboxError
    from remelink.vault.paths import normalize_relpath

    try:
        return normalize_relpath(value)
    except SandboxError as exc:
        raise ConfigError(f"{key} must name a file inside the vault, relative to it (not /, "
                          f"the vault root, an absolute path or ..), got {value!r}: "
                          f"{exc.args[0] if exc.args else exc}", path=source) from None


def _globs(key: str, value: Any, source: str) -> tuple[str, ...]:
    """A list of workspace-relative globs (a single string is one glob; in the environment,
    comma-separated)."""
    if isinstance(value, str):
        value = [v for v in value.split(",") if v.strip()]
    if value is None:
        return ()
    if not isinstance(value, list):
        raise _type_error(key, "a list of globs", value, source)
    out = []
    for item in value:
        glob = _as_str(key, item, source)
        if glob.startswith("/") or ".." in glob.split("/"):
            raise _type_error(key, "workspace-relative globs (no leading / and no ..)", item,
                              source)
        out.append(glob)
    return tuple(out)


def apply(settings: Settings, data: Mapping[str, Any], source: str) -> Settings:
    """Layer a mapping of config keys (as in config.yaml) over `settings`."""
    if not isinstance(data, Mapping):
        raise ConfigError("configuration must be a mapping of keys", path=source)
    unknown = set(data) - _TOP_KEYS
    if unknown:
        raise ConfigError(f"unknown key(s) {', '.join(sorted(map(str, unknown)))}", path=source,
                          hint=f"valid keys: {', '.join(sorted(_TOP_KEYS))}")
    s = settings
    if "model" in data:
        model = _as_str("model", data["model"], source)
        in_vault = source == CONFIG_FILE and model.startswith("scripted:")
        if in_vault:  # the vault's own file names a script: it must lie inside the vault
            model = "scripted:" + _vault_path("model", model.split(":", 1)[1], source)
        s = replace(s, model=model, script_in_vault=in_vault)
    if "api_base" in data:
        value = data["api_base"]
        s = replace(s, api_base=None if value in (None, "") else _as_str("api_base", value, source))
    if "language" in data:
        s = replace(s, language=_as_str("language", data["language"], source,
                                        choices=("auto", "en", "zh")))
    if "timeout" in data:
        try:
            timeout = float(data["timeout"])
        except (TypeError, ValueError, OverflowError):
            raise _type_error("timeout", "a number of seconds", data["timeout"], source) from None
        if not 0 < timeout <= MAX_TIMEOUT:  # also NaN and infinity
            raise _type_error("timeout", f"a positive number of seconds, at most {MAX_TIMEOUT:g}",
                              data["timeout"], source)
        s = replace(s, timeout=timeout)
    if "retries" in data:
        s = replace(s, retries=_as_int("retries", data["retries"], source))
    if "retry_after_max" in data:
        try:
            wait = float(data["retry_after_max"])
        except (TypeError, ValueError):
            raise _type_error("retry_after_max", "a number of seconds", data["retry_after_max"],
                              source) from None
        if wait < 0:
            raise _type_error("retry_after_max", "a number of seconds >= 0",
                              data["retry_after_max"], source)
        s = replace(s, retry_after_max=wait)
    if "folders" in data:
        folders = _sub(data, "folders", source)
        _only(folders, _keys("folders"), "folders", source)
        s = replace(s, folders=replace(s.folders, **{
            k: _folder_name(f"folders.{k}", v, source) for k, v in folders.items()}))
        names = [s.folders.daily, s.folders.resource, s.folders.digest]
        if len(set(names)) != 3:
            raise ConfigError("folders.daily, folders.resource and folders.digest must differ",
                              path=source)
    if "links" in data:
        links = _sub(data, "links", source)
        _only(links, _keys("links"), "links", source)
        if "resolution" in links:
            s = replace(s, resolution=_as_str("links.resolution", links["resolution"], source,
                                              choices=("path", "obsidian")),
                        resolution_from=source)
    if "lint" in data:
        lint = _sub(data, "lint", source)
        _only(lint, _keys("lint"), "lint", source)
        if "exclude" in lint:
            s = replace(s, lint_exclude=_globs("lint.exclude", lint["exclude"], source))
        levels = dict(s.lint)
        for code, level in lint.items():
            if code == "exclude":
                continue
            if level is False:  # YAML 1.1 reads an unquoted `off` as false
                level = "off"
            levels[code] = _as_str(f"lint.{code}", level, source, choices=LEVELS)
        s = replace(s, lint=levels)
    if "limits" in data:
        limits = _sub(data, "limits", source)
        _only(limits, _keys("limits"), "limits", source)
        if "max_note_bytes" in limits:
            s = replace(s, max_note_bytes=_as_int("limits.max_note_bytes", limits["max_note_bytes"],
                                                  source, minimum=1))
    if "local" in data:
        local = _sub(data, "local", source)
        _only(local, _keys("local"), "local", source)
        if "embedder" in local:
            s = replace(s, embedder=_as_str("local.embedder", local["embedder"], source))
    if "model_options" in data:
        # Layered key by key: REMELINK_MODEL_OPTIONS__NUM_CTX keeps the file's temperature.
        s = replace(s, model_options={**s.model_options, **_model_options(
            _sub(data, "model_options", source), source)})
    if "mcp" in data:
        mcp = _sub(data, "mcp", source)
        _only(mcp, _keys("mcp"), "mcp", source)
        if "remember" in mcp:
            s = replace(s, mcp_remember=_as_bool("mcp.remember", mcp["remember"], source))
    if "auto_dream" in data:
        dream = _sub(data, "auto_dream", source)
        _only(dream, _keys("auto_dream"), "auto_dream", source)
        changes: dict[str, Any] = {}
        for key, value in dream.items():
            if key == "steps":
                if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                    raise _type_error("auto_dream.steps", "a list of step names", value, source)
                changes["steps"] = tuple(value)
            else:
                minimum = 1 if key in ("max_steps", "max_attempts", "concurrency",
                                       "node_search_limit", "batch_chars", "batch_tokens",
                                       "unit_tokens") else 0
                changes[key] = _as_int(f"auto_dream.{key}", value, source, minimum=minimum)
        if "batch_chars" in changes and "batch_tokens" not in changes:
            changes["batch_tokens"] = max(1, -(-changes["batch_chars"] // 4))
        if "node_search_limit" in changes and changes["node_search_limit"] > 100:
            raise _type_error("auto_dream.node_search_limit", "at most 100",
                              changes["node_search_limit"], source)
        s = replace(s, auto_dream=replace(s.auto_dream, **changes))
    return s


def _model_options(data: Mapping[str, Any], source: str) -> dict[str, Any]:
    _only(data, set(MODEL_OPTIONS), "model_options", source)
    out: dict[str, Any] = {}
    for key, value in data.items():
        kind, low, high = MODEL_OPTIONS[key]
        name = f"model_options.{key}"
        try:
            if isinstance(value, bool):
                raise ValueError
            number = kind(value) if kind is float else _as_int(name, value, source)
        except (TypeError, ValueError):
            raise _type_error(name, "a number" if kind is float else "an integer", value,
                              source) from None
        if not low <= number <= high:  # NaN compares false: refused too
            raise _type_error(name, f"between {low:g} and {high:g}", value, source)
        out[key] = number
    return out


def _sub(data: Mapping[str, Any], key: str, source: str) -> Mapping[str, Any]:
    value = data[key]
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise _type_error(key, "a mapping", value, source)
    return value


def _only(data: Mapping[str, Any], allowed: set[str], prefix: str, source: str) -> None:
    unknown = set(data) - allowed
    if unknown:
        names = ", ".join(f"{prefix}.{k}" for k in sorted(map(str, unknown)))
        raise ConfigError(f"unknown key(s) {names}", path=source,
                          hint=f"valid: {', '.join(sorted(allowed))}")


def _keys(section: str) -> set[str]:
    return set(SECTIONS[section] or ())


def _env_key(name: str) -> tuple[str, ...] | None:
    """The config key a `REMELINK_*` variable sets, or None when it names none. Segments are
    matched case-insensitively, and `_` stands for `-` (shells allow no `-` in names):
    `REMELINK_LINT__ORPHAN_NODE` is `lint.orphan-node`."""
    parts = [p.lower() for p in name[len(ENV_PREFIX):].split("__")]
    subs = SECTIONS.get(parts[0], ())
    if subs is None:
        return (parts[0],) if len(parts) == 1 else None
    if not subs or len(parts) != 2:
        return None
    for candidate in (parts[1], parts[1].replace("_", "-")):
        if candidate in subs:
            return parts[0], candidate
    return None


def _closest_env(name: str) -> str | None:
    import difflib

    known = [env_name(k) for k in config_keys()] + sorted(OTHER_ENV)
    matches = difflib.get_close_matches(name.upper(), known, n=1, cutoff=0.6)
    return matches[0] if matches else None


def _env_layer(env: Mapping[str, str]) -> tuple[dict[str, Any], list[str]]:
    """`REMELINK_MODEL=x`, `REMELINK_LINKS__RESOLUTION=obsidian`,
    `REMELINK_AUTO_DREAM__MAX_UNITS=5`: the mapping they set, and one warning per `REMELINK_*`
    variable that names no key (a typo that silently did nothing would be worse)."""
    data: dict[str, Any] = {}
    warnings: list[str] = []
    for name, raw in sorted(env.items()):
        if not name.startswith(ENV_PREFIX) or name in OTHER_ENV:
            continue
        path = _env_key(name)
        if path is None:
            closest = _closest_env(name)
            hint = f"did you mean {closest}?" if closest else \
                "see the configuration keys in docs/configuration.md"
            warnings.append(f"{name} is not a remelink setting; ignored ({hint})")
            continue
        value: Any = raw
        if raw.strip().lstrip("-").isdigit():
            value = int(raw)
        elif "," in raw and path == ("auto_dream", "steps"):
            value = [v.strip() for v in raw.split(",") if v.strip()]
        node = data
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = value
    return data, warnings


def _yaml_error(exc: Exception) -> ConfigError:
    """One line naming where the YAML syntax breaks: line and column (1-based), what PyYAML
    expected, and where the construct it was reading started."""
    import yaml

    if isinstance(exc, yaml.MarkedYAMLError) and (exc.problem_mark or exc.context_mark):
        mark = exc.problem_mark or exc.context_mark
        assert mark is not None
        problem = exc.problem or exc.context or "invalid YAML"
        context = ""
        if exc.context and exc.problem and exc.context_mark is not None:
            start = exc.context_mark
            context = f" ({exc.context} that starts at line {start.line + 1}, column " \
                      f"{start.column + 1})"
        return ConfigError(f"line {mark.line + 1}, column {mark.column + 1}: cannot parse the "
                           f"YAML: {problem}{context}", path=CONFIG_FILE,
                           hint="fix the syntax there")
    first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return ConfigError(f"cannot parse config: {first}", path=CONFIG_FILE)


def _read_config(vault: Path) -> bytes | None:
    """config.yaml through the boundary for remelink's own files (never through a symlink, never
    a FIFO or a device, never more than 1 MiB); None when there is none."""
    from remelink.errors import RemelinkError
    from remelink.vault import own

    if not os.path.lexists(vault / CONFIG_FILE):
        return None
    try:
        return own.read(vault, CONFIG_FILE, limit=1 << 20)
    except FileNotFoundError:
        return None
    except (OSError, RemelinkError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else \
            str(exc.args[0] if exc.args else exc).removeprefix(f"{CONFIG_FILE}: ")
        raise ConfigError(f"cannot read config: {reason}", path=CONFIG_FILE) from None


def default_resolution(vault: Path) -> str:
    """`obsidian` when the vault holds Obsidian's `.obsidian/` folder, else `path`. One stat:
    every command loads the settings, the pre-commit hook too."""
    return "obsidian" if os.path.isdir(vault / OBSIDIAN_DIR) else "path"


def load_settings(vault: Path, env: Mapping[str, str] | None = None,
                  overrides: Mapping[str, Any] | None = None) -> Settings:
    """Settings for `vault`: defaults, then config.yaml, then environment, then flags. The
    default link resolution is the vault's own: `obsidian` in a vault Obsidian made (it holds
    `.obsidian/`), else `path` (SPEC §3.2; any layer that sets `links.resolution` wins)."""
    resolution = default_resolution(vault)
    settings = Settings(resolution=resolution,
                        resolution_from=f"{OBSIDIAN_DIR}/" if resolution == "obsidian" else "")
    raw = _read_config(vault)
    if raw is not None:
        import yaml

        from remelink.decoding import scrub

        try:
            data = scrub(yaml.safe_load(raw.decode("utf-8-sig")))
        except (yaml.YAMLError, UnicodeDecodeError, RecursionError) as exc:
            raise _yaml_error(exc) from None
        if data is not None:
            settings = apply(settings, data, CONFIG_FILE)
    env_data, warnings = _env_layer(os.environ if env is None else env)
    if env_data:
        settings = apply(settings, env_data, "environment (REMELINK_*)")
    if overrides:
        settings = apply(settings, {k: v for k, v in overrides.items() if v is not None},
                         "command line")
    return replace(settings, warnings=tuple(warnings)) if warnings else settings
