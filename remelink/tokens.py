"""Tokens a text costs a typical LLM tokenizer, estimated per script without a tokenizer
dependency (the reasoning is in dream/batching.py, which sizes extraction batches with it; the
integration prompt sizes its candidates and evidence with it, so that a Chinese unit gets as
much context as an English one, not four times as many tokens of it)."""

from __future__ import annotations

import re

_CJK_RE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
                     r"\U00020000-\U0002fa1f]")
_NON_ASCII_RE = re.compile(r"[^\x00-\x7f]")


def estimate_tokens(text: str) -> int:
    """Tokens `text` costs a typical LLM tokenizer, estimated per script (see the module)."""
    cjk = len(_CJK_RE.findall(text))
    other = len(_NON_ASCII_RE.findall(text)) - cjk
    ascii_chars = len(text) - cjk - other
    return cjk + (other + 1) // 2 + (ascii_chars + 3) // 4


def cut_to_tokens(text: str, budget: int) -> str:
    """The longest prefix of `text` estimated at no more than `budget` tokens."""
    if estimate_tokens(text) <= budget:
        return text
    low, high = 0, len(text)
    while low < high:
        mid = (low + high + 1) // 2
        if estimate_tokens(text[:mid]) <= budget:
            low = mid
        else:
            high = mid - 1
    return text[:low]
