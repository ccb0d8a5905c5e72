"""What the frontmatter keys remelink writes may hold (SPEC §2), without PyYAML: lint-links
checks them on its fast path, which never imports YAML.

Every other key of a node is a person's, and remelink never changes or removes it.
"""

from __future__ import annotations

from typing import Any

KINDS = ("procedure", "preference", "concept", "observation")
TAG_KEY = "memory_tags"
ENGINE_KEYS = frozenset({"name", "description", "kind", "memory_tags"})


def value_problems(meta: dict[str, Any]) -> list[str]:
    """Why the values of `kind` and `memory_tags` in `meta` break SPEC §2 (one line each)."""
    problems = []
    if "kind" in meta and meta["kind"] is not None and meta["kind"] not in KINDS:
        problems.append(f"kind is {meta['kind']!r}; it must be one of {', '.join(KINDS)}")
    tags = meta.get("memory_tags")
    if tags is not None:
        if not isinstance(tags, list):
            problems.append(f"memory_tags is a {type(tags).__name__}; it must be a list of "
                            "strings, e.g. [Alice, Project_A]")
        else:
            bad = [t for t in tags if not isinstance(t, str) or not t.strip()]
            if bad:
                problems.append(f"memory_tags holds {bad[0]!r}; every tag is a non-empty string")
    return problems


