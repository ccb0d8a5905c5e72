"""The node index analyzer (SPEC §5): English, Chinese, Japanese, Korean and mixed text."""

from __future__ import annotations

import pytest

from remelink.index.analysis import stem, terms


def test_english_lowercased_plurals_folded_no_stop_words() -> None:
    assert terms("The Idempotency Keys of the API") == ["the", "idempotency", "key", "of",
                                                        "the", "api"]
    # No stop-word list: a query of common words still has terms.
    assert terms("the who", query=True) == ["the", "who"]


@pytest.mark.parametrize(("word", "expected"), [
    ("keys", "key"), ("policies", "policy"), ("classes", "class"), ("indexes", "index"),
    ("caches", "cache"), ("status", "status"), ("analysis", "analysis"), ("class", "class"),
    ("days", "day"), ("its", "its"), ("bus", "bus"), ("v2s", "v2s"),
])
def test_plural_stemmer(word: str, expected: str) -> None:
    assert stem(word) == expected


def test_separators_split_words() -> None:
    assert terms("snake_case node.js a:b idempotency-keys 2026-06-21") == [
        "snake", "case", "node", "js", "a", "b", "idempotency", "key", "2026", "06", "21"]


def test_nfkc_and_accents() -> None:
    assert terms("Ｐｙｔｈｏｎ Café naïve ＡＰＩ") == ["python", "cafe", "naive", "api"]


def test_chinese_runs_become_bigrams_and_characters() -> None:
    assert terms("数据脱敏规则") == ["数据", "据脱", "脱敏", "敏规", "规则",
                                "数", "据", "脱", "敏", "规", "则"]
    # The query form asks for bigrams only: `脱敏` inside `数据脱敏规则` is found by its bigram.
    assert terms("脱敏", query=True) == ["脱敏"]
    assert set(terms("脱敏", query=True)) <= set(terms("数据脱敏规则"))
    assert set(terms("数据脱敏规则", query=True)) & set(terms("脱敏"))


def test_single_character_query_finds_character() -> None:
    assert terms("猫", query=True) == ["猫"]
    assert "猫" in terms("我家的猫咪")


def test_mixed_text_keeps_latin_words() -> None:
    assert "python" in terms("学习了Python编程", query=True)
    assert terms("学习了Python编程", query=True) == ["学习", "习了", "python", "编程"]


def test_unspaced_chinese_every_two_character_word_is_a_term() -> None:
    text = "我们今天讨论了密钥轮换和缓存失效的问题"
    indexed = set(terms(text))
    for word in ("密钥", "轮换", "缓存", "失效", "问题", "讨论"):
        assert terms(word, query=True) == [word]
        assert word in indexed


def test_kana_and_hangul_are_cjk_runs() -> None:
    assert terms("カタカナ", query=True) == ["カタ", "タカ", "カナ"]
    assert terms("한국어", query=True) == ["한국", "국어"]
    assert "東京" in terms("東京タワーへ行く")


def test_hostile_input_never_raises() -> None:
    for text in ("", "   ", "a:b", "(", ")", "AND", '"', "*", "\x00\x1f\x7f", "🙂" * 10,
                 "x" * 10_000, "[[digest/wiki/x.md]]", "\ud800"):
        assert isinstance(terms(text, query=True), list)
    assert terms("x" * 100) == []  # a 100-letter "word" is a hash or base64, not a term
