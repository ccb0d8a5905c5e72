"""`remelink init [DIR]`: the vault folders and a commented `.remelink/config.yaml`."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from remelink.errors import FileSystemError, RemelinkError, UsageError
from remelink.vault import own
from remelink.vault.own import check_marker
from remelink.vault.paths import BUCKETS, MARKER_DIR

if TYPE_CHECKING:
    from remelink.vault.obsidian import Detected

CONFIG_TEMPLATE = """\
# remelink configuration. Every key is optional; the values shown are the defaults.
# Precedence: these values < REMELINK_* environment variables < command-line flags.
# In the environment a nested key is joined with __ and - is written _:
# REMELINK_AUTO_DREAM__MAX_UNITS=5, REMELINK_LINT__ORPHAN_NODE=warning.

# The engine. `local` is the built-in offline, deterministic engine (no key, no network).
# Any litellm model id works too, e.g. openai/gpt-4.1-mini or ollama_chat/qwen3 (pip install
# 'remelink[llm]'). API keys stay in the provider's own environment variables, never here.
model: local
# api_base: http://localhost:11434     # for Ollama, llama.cpp, vLLM and other local servers
# timeout: 120                         # seconds per model call
# retries: 4                           # on rate limits and server errors, with backoff
# retry_after_max: 120                 # longest Retry-After (s) honoured; longer fails the unit
# Passed as they are to every litellm call (LLM engines only). Ollama's default context is
# small next to a first request: set num_ctx (Ollama only; for llama.cpp start the server with -c).
# model_options: {temperature: 0.2, top_p: 1.0, max_tokens: 4096, seed: 7, num_ctx: 16384}

# Language of prompts and templates: auto (from the material), en or zh.
language: auto

folders:
  daily: daily
  resource: resource
  digest: digest

links:
  # With `path`, [[digest/wiki/x.md]] is a literal workspace-relative path (remelink writes
  # these); with `obsidian`, [[x]] may omit folders and .md (several matches is an error).
  resolution: path

# Levels per problem code: error | warning | off (quote "off": bare off is YAML for false,
# which remelink also reads as off). `remelink-lint-links --codes` lists them.
lint:
  orphan-node: off
  # broken-link: error
  # missing-anchor: error
  # ambiguous-link: error
  # outside-vault: error
  # missing-sources: error
  # empty-sources: error
  # bare-source-link: error
  # non-source-target: error
  # relation-field: error
  # frontmatter: error
  # unreadable: warning
  # deleted-source: warning
  # Notes not checked (they stay link targets): globs, `**` across folders, `dir/` a folder.
  # exclude: [templates/, "**/*.excalidraw.md"]

# A note larger than this is reported and skipped, never read.
# limits:
#   max_note_bytes: 10485760

# The local engine's offline sentence embedder (installed with remelink, no network): auto
# blends it in where it measurably helps (English; Chinese stays lexical), none keeps the
# engine purely lexical (faster start, about 1 s less per run).
# local:
#   embedder: auto

# `remelink mcp` (an agent's access to this memory): whether agents may save raw notes into
# daily/<today>/ with the `remember` tool (the digest is never written by it).
# mcp:
#   remember: true

auto_dream:
  steps: [dream_extract_step, dream_integrate_step, dream_finish_step, auto_tag_step]
  # dream_topics_step (the day's interests in daily/<date>/interests.yaml) is opt-in.
  max_units: 20          # units per extraction answer (a model with more is asked to continue)
  # batch_tokens: 4000   # LLM: estimated tokens of notes per extraction call (the local
  #                      # engine, with no context window, reads all changed notes at once)
  max_steps: 30          # model turns per unit
  # unit_tokens: 32000   # prompt tokens one unit may spend (about 8 clean units)
  max_attempts: 3        # a failed unit is retried on later runs up to this many times
  concurrency: 1         # units integrated in parallel (LLM engines)
  node_search_limit: 25  # candidates a node_search returns (at most 100)
  # repair_turns: 3          # corrections the model may get for a refused answer, per unit
  # batch_chars: 60000       # deprecated: read as batch_tokens = batch_chars / 4
  # max_tags: 3              # memory_tags auto_tag_step gives a node
  # topic_count: 3           # topics dream_topics_step picks for the day
  # topic_diversity_days: 7  # days back whose topics it does not repeat
"""

# Everything remelink writes under .remelink/ that is derived, machine-local or transient.
# state.json, runs/ and config.yaml are the vault's history and settings: they stay tracked.
GITIGNORE_LINES = (
    "index/",        # the node index (derived, rebuilt when missing)
    "index.new-*/",  # a rebuild in progress, or left by one that died
    "index.old-*/",
    "index.tampered-*",  # a tampered index, moved aside (never followed) and rebuilt
    "index.lock",    # the index writers' lock
    "passages.lock",  # the passage index writers' lock (remelink search)
    "passages.new-*/",  # a passage index rebuild in progress, or left by one that died
    "passages.old-*/",
    "passages.tampered-*",  # a tampered passage index, moved aside (never followed) and rebuilt
    "lock",          # the vault lock of dream run and integrate
    "state.journal",  # checkpoint records since the last full save of state.json
    "*.tmp",         # atomic writes in progress (.remelink-tmp-*.tmp)
    "crash-*.log",   # tracebacks of unexpected errors
    "cron.log",      # the log the README's cron line appends to
)
GITIGNORE = "# remelink: derived and transient files (remelink init keeps this list)\n" + \
    "".join(f"{line}\n" for line in GITIGNORE_LINES)


@dataclass(frozen=True)
class InitResult:
    root: Path
    created: tuple[str, ...]
    updated: tuple[str, ...] = ()  # e.g. ".remelink/.gitignore: added state.journal"
    # The link resolution written into a new config.yaml, and why (vault/obsidian.py); None
    # when the configuration existed already.
    resolution: str | None = None
    resolution_reason: str = ""


def init(directory: Path, *, daily: str = "daily", resource: str = "resource",
         digest: str = "digest") -> InitResult:
    """Create the vault layout under `directory`; existing files are never overwritten.

    Everything goes through the boundary for remelink's files (`vault/own.py`): a folder or a
    file of the layout that is a symlink, or not what it must be, is refused (UsageError, exit 2)
    before anything is created through it."""
    root = directory.expanduser().resolve()
    if root.exists() and not root.is_dir():
        raise UsageError(f"{directory} exists and is not a folder")
    root.mkdir(parents=True, exist_ok=True)
    try:
        return _init(root, daily, resource, digest)
    except RemelinkError as exc:
        if isinstance(exc, FileSystemError):
            raise
        raise UsageError(str(exc.args[0]), path=exc.path, hint=exc.hint) from None


def _init(root: Path, daily: str, resource: str, digest: str) -> InitResult:
    check_marker(root)
    wanted = [daily, resource, *(f"{digest}/{b}" for b in BUCKETS), MARKER_DIR]
    created: list[str] = []
    updated: list[str] = []
    for rel in wanted:
        try:
            with own.folder(root, rel):
                continue
        except FileNotFoundError:
            pass
        except own.Unsafe as exc:
            raise own.refusal(exc) from None
        try:
            with own.folder(root, rel, create=True):
                created.append(rel + "/")
        except own.Unsafe as exc:
            raise own.refusal(exc) from None
    config = f"{MARKER_DIR}/config.yaml"
    detected = None
    if not os.path.lexists(root / config):
        from remelink.vault.obsidian import detect

        detected = detect(root)
        text = CONFIG_TEMPLATE
        if detected.resolution != "path":
            text = text.replace("  resolution: path\n", f"  resolution: {detected.resolution}"
                                f"  # detected: {detected.reason}\n")
        if (daily, resource, digest) != ("daily", "resource", "digest"):
            text = text.replace("  daily: daily", f"  daily: {daily}").replace(
                "  resource: resource", f"  resource: {resource}").replace(
                "  digest: digest", f"  digest: {digest}")
        with contextlib.suppress(FileExistsError):
            own.create(root, config, text)
            created.append(config)
    gitignore = f"{MARKER_DIR}/.gitignore"
    try:
        present: str | None = own.read(root, gitignore, limit=1 << 20).decode("utf-8")
    except FileNotFoundError:
        with contextlib.suppress(FileExistsError):
            own.create(root, gitignore, GITIGNORE)
            created.append(gitignore)
        return _result(root, created, updated, detected)
    except UnicodeDecodeError:
        present = None  # not ours to fix: left as it is
    if present is not None:
        # remelink's own file: a vault made by an older remelink gets the lines it lacks;
        # lines the user added stay.
        have = {line.strip() for line in present.splitlines()}
        missing = [line for line in GITIGNORE_LINES if line not in have]
        if missing:
            sep = "" if not present or present.endswith("\n") else "\n"
            own.write(root, gitignore, present + sep + "".join(f"{m}\n" for m in missing))
            updated.append(f"{gitignore}: added " + ", ".join(missing))
    return _result(root, created, updated, detected)


def _result(root: Path, created: list[str], updated: list[str],
            detected: Detected | None) -> InitResult:
    return InitResult(root, tuple(created), tuple(updated),
                      detected.resolution if detected else None,
                      detected.reason if detected else "")
