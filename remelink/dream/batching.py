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

from collections.abc import Iterator, Sequence
from typing import TypeVar

from remelink.tokens import estimate_tokens

__all__ = ["PER_NOTE_OVERHEAD", "batches", "estimate_tokens"]

T = TypeVar("T")
PER_NOTE_OVERHEAD = 12  # the `### path` header and the blank lines around a note's material



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
