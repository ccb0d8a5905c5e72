"""Speed without a change of answer (issue 21): the local engine skips work whose result it
already knows, and every such shortcut gives the answer the full computation gives."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from remelink.config import Settings
from remelink.models.local import extract
from remelink.models.local import text as tx
from remelink.models.local.engine import LocalModel

STATEMENTS = [
    "Rotate the vault tokens every 14 days.",
    "We agreed again to rotate the vault tokens every 14 days.",
    "Vault tokens are rotated every 30 days by the scheduler.",
    "Use pytest-httpx to mock HTTPX requests in tests.",
    "Mock HTTPX calls in pytest with the pytest-httpx fixture.",
    "Dana prefers dark mode dashboards.",
    "Bob prefers dark mode dashboards.",
    "GitHub Actions can run different steps on a schedule.",
    "Postgres pool exhaustion came from a missing connection release.",
]


class FakeEmbedder:
    """A cosine chosen by the test, and a count of the texts it was asked about."""

    def __init__(self, cosine: float, loads: bool = True) -> None:
        self.cosine = cosine
        self.loads = loads
        self.asked = 0

    def ready(self) -> bool:
        return self.loads

    def similarity(self, a: str, others: Sequence[str]) -> list[float]:
        self.asked += 1
        if not self.loads:
            raise RuntimeError("embedder unavailable")
        return [self.cosine for _ in others]


def engine(embedder: FakeEmbedder) -> LocalModel:
    model = LocalModel(Settings())
    model.embedder = embedder  # type: ignore[assignment]
    return model


@pytest.mark.parametrize("cosine", [-0.2, 0.0, 0.5, 0.8, 0.9, 0.95, 0.99, 1.0])
@pytest.mark.parametrize("loads", [True, False])
def test_same_statement_answers_as_the_full_comparison(cosine: float, loads: bool) -> None:
    for a in STATEMENTS:
        for b in STATEMENTS:
            fast = engine(FakeEmbedder(cosine, loads))._same_statement(a, b)
            full = FakeEmbedder(cosine, loads)
            want = extract.same_statement(a, b, idf=LocalModel(Settings()).idf,
                                          semantic=full.similarity)
            assert fast == want, (a, b, cosine)


def test_a_pair_no_cosine_can_join_is_not_embedded() -> None:
    # Two statements that disagree (another number, another person) are two units whatever
    # their cosine: nothing is embedded for them.
    fake = FakeEmbedder(1.0)
    model = engine(fake)
    assert not model._same_statement("Rotate the vault tokens every 14 days.",
                                     "Vault tokens are rotated every 30 days by the scheduler.")
    assert not model._same_statement("Dana prefers dark mode dashboards.",
                                     "Bob prefers dark mode dashboards.")
    assert fake.asked == 0
    # ... while a pair the cosine decides is embedded, and decided by it.
    a = "Use pytest-httpx to mock HTTPX requests in tests."
    b = "Mock HTTPX calls in pytest with the pytest-httpx fixture."
    assert model._same_statement(a, b)
    assert fake.asked == 1
    low = FakeEmbedder(0.0)
    assert not engine(low)._same_statement(a, b)
    assert low.asked == 1


@given(st.text(alphabet="abcXYZ é ß 1_,.中文数据ｱＰ한ひ", max_size=40) | st.text(max_size=40))
@settings(max_examples=400, deadline=None)
def test_is_cjk_text_counts_as_the_loop_did(text: str) -> None:
    cjk = len(tx._CJK_RE.findall(text))
    latin = sum(1 for ch in text if ch.isascii() and ch.isalpha())
    assert tx.is_cjk_text(text) == (bool(cjk) and cjk * 5 >= cjk + latin)
