"""`remelink init [DIR]`: the vault folders and a commented `.remelink/config.yaml`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from remelink.errors import UsageError
from remelink.vault.fsio import atomic_write
from remelink.vault.paths import BUCKETS

CONFIG_TEMPLATE = """\
# remelink configuration. Every key is optional; the values shown are the defaults.
# Precedence: these values < REMELINK_* environment variables < command-line flags.

# The engine. `local` is the built-in offline, deterministic engine (no key, no network).
# Any litellm model id works too, e.g. openai/gpt-4.1-mini or ollama_chat/qwen3 (pip install
# 'remelink[llm]'). API keys stay in the provider's own environment variables, never here.
model: local
# api_base: http://localhost:11434     # for Ollama, llama.cpp, vLLM and other local servers
# timeout: 120                         # seconds per model call
# retries: 4                           # on rate limits and server errors, with backoff

# Language of prompts and templates: auto (from the material), en or zh.
language: auto

folders:
  daily: daily
  resource: resource
  digest: digest

links:
  # path: [[digest/wiki/x.md]] is a literal workspace-relative path (remelink writes these).
  # obsidian: [[x]] may omit folders and .md; several matches is an error, never a guess.
  resolution: path

# Levels per problem code: error | warning | off. See `remelink-lint-links --codes`.
lint:
  orphan-node: off
  # Notes not checked (they stay link targets): globs, `**` across folders, `dir/` a folder.
  # exclude: [templates/, "**/*.excalidraw.md"]

auto_dream:
  steps: [dream_extract_step, dream_integrate_step, dream_finish_step, auto_tag_step]
  max_units: 20          # units per extraction answer (a model with more is asked to continue)
  batch_tokens: 15000    # estimated tokens of changed notes per extraction call
  max_steps: 30          # model turns per unit
  max_attempts: 3        # a failed unit is retried on later runs up to this many times
  concurrency: 1         # units integrated in parallel (LLM engines)
  node_search_limit: 25
"""


@dataclass(frozen=True)
class InitResult:
    root: Path
    created: tuple[str, ...]


def init(directory: Path, *, daily: str = "daily", resource: str = "resource",
         digest: str = "digest") -> InitResult:
    """Create the vault layout under `directory`; existing files are never overwritten."""
    root = directory.expanduser().resolve()
    if root.exists() and not root.is_dir():
        raise UsageError(f"{directory} exists and is not a folder")
    wanted = [daily, resource, *(f"{digest}/{b}" for b in BUCKETS), ".remelink"]
    created: list[str] = []
    for rel in wanted:
        path = root / rel
        if not path.is_dir():
            path.mkdir(parents=True, exist_ok=True)
            created.append(rel + "/")
    config = root / ".remelink" / "config.yaml"
    if not config.exists():
        text = CONFIG_TEMPLATE
        if (daily, resource, digest) != ("daily", "resource", "digest"):
            text = text.replace("  daily: daily", f"  daily: {daily}").replace(
                "  resource: resource", f"  resource: {resource}").replace(
                "  digest: digest", f"  digest: {digest}")
        atomic_write(config, text)
        created.append(".remelink/config.yaml")
    gitignore = root / ".remelink" / ".gitignore"
    if not gitignore.exists():
        # The index and the lock are derived and machine-local; state, runs and config are not.
        atomic_write(gitignore, "index/\nlock\n*.tmp\ncrash-*.log\n")
        created.append(".remelink/.gitignore")
    return InitResult(root, tuple(created))
