"""Extraction batches sized by an estimated token budget (SPEC §8).

A budget in characters means four times more tokens in Chinese than in English (60,000
characters are ~15k tokens of English and ~50-60k of Chinese), so batches are sized in tokens,
estimated per script without a tokenizer dependency:

- CJK ideographs, kana and hangul: one token each (BPE vocabularies of the GPT-4 / Qwen /
  Llama-3 families spend 0.7-1.5 tokens on a Han character; one is the middle, and erring high
  only makes batches smaller);
- other non-ASCII letters (accented Latin, Cyrillic, Greek...): one token per two characters;
- ASCII: one token per four characters (the usual figure for English prose and markdown).

A batch always holds at least one note (a note over the budget goes alone; its material is
truncated in the prompt and the model reads the rest), so no budget can keep a note out.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import TypeVar

T = TypeVar("T")

_CJK_RE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
                     r"\U00020000-\U0002fa1f]")
_NON_ASCII_RE = re.compile(r"[^\x00-\x7f]")
PER_NOTE_OVERHEAD = 12  # the `### path` header and the blank lines around a note's material


def estimate_tokens(text: str) -> int:
    """Tokens `text` costs a typical LLM tokenizer, estimated per script (see the module)."""
    cjk = len(_CJK_RE.findall(text))
    other = len(_NON_ASCII_RE.findall(text)) - cjk
    ascii_chars = len(text) - cjk - other
    return cjk + (other + 1) // 2 + (ascii_chars + 3) // 4


def batches(items: Sequence[T], costs: Sequence[int], budget: int) -> Iterator[list[T]]:
    """Consecutive items in batches whose costs add up to at most `budget` (at least one item
    per batch), in order."""
    batch: list[T] = []
    size = 0
    for item, cost in zip(items, costs, strict=True):
        cost += PER_NOTE_OVERHEAD
        if batch and size + cost > budget:
            yield batch
            batch, size = [], 0
        batch.append(item)
        size += cost
    if batch:
        yield batch
