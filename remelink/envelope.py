"""The one JSON document every command prints with `--json` (SPEC §9.4):

    {"ok": bool, "command": str, "duration_ms": int, "counts": {...}, "data": ..., "errors": [str]}

`ok` is false exactly when the exit status is not 0; `errors` holds one line per problem (the
same lines the text output shows). A command that fails before it starts (no vault, a bad
config, a bad flag) still prints one: `ok: false`, empty `counts`, `data: null`, the error.
Kept free of imports beyond json, so the pre-commit entry point can use it.
"""

from __future__ import annotations

import json
from typing import Any

KEYS = ("ok", "command", "duration_ms", "counts", "data", "errors")


def envelope(command: str, *, ok: bool, seconds: float, counts: dict[str, Any], data: Any,
             errors: list[str]) -> str:
    """The envelope as indented JSON text (no trailing newline)."""
    return json.dumps({"ok": ok, "command": command, "duration_ms": round(seconds * 1000),
                       "counts": counts, "data": data, "errors": errors},
                      ensure_ascii=False, indent=2)


def failure(command: str, seconds: float, message: str) -> str:
    """The envelope of a command that stopped on an error before it had a result."""
    return envelope(command, ok=False, seconds=seconds, counts={}, data=None,
                    errors=[" ".join(message.split())])
