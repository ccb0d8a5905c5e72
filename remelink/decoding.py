"""Text decoded from JSON or YAML that remelink did not write (units files, a model's answers
and tool arguments, the checkpoint, the configuration) holds only valid code points.

Both formats let an escape name a UTF-16 surrogate: JSON keeps an unpaired one (`"\\ud83d"`),
PyYAML keeps even a proper pair as two halves (`"\\ud83d\\ude80"` is not 🚀 but two lone
surrogates). Python stores such a string, and the first `encode("utf-8")` of it, when a node
or the checkpoint is written, raises UnicodeEncodeError: one crafted unit aborted a whole run.
Every decoder of such text goes through `scrub`: pairs become the character they encode, a lone
half becomes U+FFFD.
"""

from __future__ import annotations

import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")


def scrub_text(text: str) -> str:
    """`text` with surrogate pairs joined and lone surrogates replaced by U+FFFD."""
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def scrub(value: Any, depth: int = 0) -> Any:
    """`value` (as a JSON or YAML parser returns it) with every string scrubbed, keys included.
    Containers are rebuilt only when something in them changed."""
    if isinstance(value, str):
        return scrub_text(value)
    if depth > 200:  # parsers refuse deeper nesting before this; never recurse without end
        return value
    if isinstance(value, list):
        items = [scrub(v, depth + 1) for v in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    if isinstance(value, dict):
        pairs = [(scrub(k, depth + 1), scrub(v, depth + 1)) for k, v in value.items()]
        if all(k is k0 and v is v0 for (k, v), (k0, v0) in zip(pairs, value.items(),
                                                               strict=True)):
            return value
        return dict(pairs)
    return value


def json_loads(text: str | bytes) -> Any:
    """`json.loads`, scrubbed."""
    import json

    return scrub(json.loads(text))


def yaml_load(text: str) -> Any:
    """`yaml.safe_load`, scrubbed."""
    import yaml

    return scrub(yaml.safe_load(text))
