"""docs/llm.md's table of configuration keys against the code (issue 23): every key it lists is a
configuration key with the default the code has, and every key the LLM path reads (its source
files, scanned for `settings.X` and `auto_dream.X`) is in the table. Its table of fixed values
(tagging batch, outage streak) matches the constants."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

from remelink import outage
from remelink.config import (
    DEFAULT_BATCH_TOKENS,
    SECTIONS,
    DreamSettings,
    Settings,
    config_keys,
)
from remelink.models import litellm_model

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "llm.md"
# The source files of the LLM path: the model, its errors, the loop, integration, the outage
# breaker, and the dream steps that call the model.
LLM_FILES = ["models/litellm_model.py", "models/provider_errors.py", "agent.py", "integrate.py",
             "outage.py", "dream/extract.py", "dream/batching.py", "dream/pages.py",
             "dream/autotag.py", "dream/steps.py"]


def table(marker: str) -> list[list[str]]:
    text = DOC.read_text(encoding="utf-8")
    m = re.search(rf"<!-- {marker} -->\n(.*?)\n<!-- /{marker} -->", text, re.S)
    assert m, f"docs/llm.md has no {marker} table"
    rows = [ln for ln in m.group(1).splitlines() if ln.startswith("|")][2:]  # header, rule
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows]


def documented() -> dict[str, str]:
    out = {}
    for key, default, what in table("llm-keys"):
        assert what, key
        out[key.strip("`")] = default.strip("`")
    return out


def code_default(key: str) -> object:
    top, _, sub = key.partition(".")
    if top == "auto_dream":
        value = getattr(DreamSettings(), sub)
        if sub == "batch_tokens" and value is None:  # the LLM's own extraction budget
            value = getattr(litellm_model.LiteLLMModel, "extraction_budget",
                            DEFAULT_BATCH_TOKENS)
        return value
    if top == "model_options":
        return Settings().model_options.get(sub)
    return getattr(Settings(), top)


def test_every_documented_key_exists_with_the_code_default() -> None:
    keys = documented()
    assert len(keys) >= 10
    assert set(keys) <= set(config_keys()), set(keys) - set(config_keys())
    for key, shown in keys.items():
        value = code_default(key)
        if value is None:
            assert shown == "unset", (key, shown)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            assert float(shown) == float(value), (key, shown, value)
        else:
            assert shown == str(value), (key, shown, value)


def test_every_key_the_llm_path_reads_is_documented() -> None:
    dream_keys = {f.name for f in fields(DreamSettings)}
    read: set[str] = set()
    for rel in LLM_FILES:
        source = (ROOT / "remelink" / rel).read_text(encoding="utf-8")
        read |= {f"auto_dream.{k}" for k in re.findall(r"\b(?:auto_)?dream\.([a-z_]+)", source)
                 if k in dream_keys}
        for k in re.findall(r"\bsettings\.([a-z_]+)", source):
            if SECTIONS.get(k, ()) is None:  # a top-level key
                read.add(k)
            elif k == "model_options":  # passed whole to litellm: each of its keys
                read |= {f"model_options.{o}" for o in SECTIONS["model_options"] or ()}
    # The scan finds what it should (a regex that matches nothing would pass anything).
    assert {"retries", "retry_after_max", "timeout", "auto_dream.unit_tokens",
            "auto_dream.concurrency", "auto_dream.batch_tokens"} <= read
    missing = read - set(documented()) - {"language", "folders", "max_note_bytes"}
    assert not missing, f"read by the LLM path but not in docs/llm.md: {sorted(missing)}"


def test_the_fixed_values_are_the_constants() -> None:
    rows = {what: value.strip("`") for what, value, _ in table("llm-fixed")}
    assert int(rows["nodes per tagging request"]) == litellm_model.LiteLLMModel.tag_batch
    assert int(rows["transient failures in a row that make an outage"]) == \
        outage.OUTAGE_STREAK
