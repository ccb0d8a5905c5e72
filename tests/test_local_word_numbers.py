"""A number written in words is one number (issue 21: "a changed number written as a word is a
change"): "twenty-four hours" is 24 h, not 20 and 4 h; "十四天" is 14 days, not 4; "fourteen"
is a number at all. A later note setting another such number corrects the earlier line. And a
Chinese negation is one character, never that character inside another word (非常, 级别)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from remelink.models.local import decide
from remelink.models.local import text as tx

_UNITS = ["", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
_TEENS = ["ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
          "eighteen", "nineteen"]
_TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_ZH = "零一二三四五六七八九"


def english(n: int) -> str:
    if n < 10:
        return _UNITS[n]
    if n < 20:
        return _TEENS[n - 10]
    return _TENS[n // 10] + (f"-{_UNITS[n % 10]}" if n % 10 else "")


def chinese(n: int) -> str:
    hundreds, tens, units = n // 100, n // 10 % 10, n % 10
    out = f"{_ZH[hundreds]}百" if hundreds else ""
    if tens:
        out += ("" if tens == 1 and not hundreds else _ZH[tens]) + "十"
    elif hundreds and units:
        out += "零"
    return out + (_ZH[units] if units else "")


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 99))
def test_an_english_number_in_words_is_read_whole(n: int) -> None:
    assert tx.facts(f"The review takes {english(n)} hours.").quantities == {("h", float(n))}


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 999))
def test_a_chinese_numeral_is_read_whole(n: int) -> None:
    assert tx.facts(f"消息保留{chinese(n)}天。").quantities == {("d", float(n))}


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 99), st.integers(2, 99))
def test_another_number_in_words_corrects_the_line(old: int, new: int) -> None:
    line = f"Retention on the topic is {english(old)} days."
    unit = f"Decision: retention on the topic goes to {english(new)} days."
    c = decide.compare(unit, line, line)
    if old == new:
        assert c.conflict_kind is None
    else:
        assert c.conflict_kind == "number" and c.label == "same_abstraction"


def test_a_range_of_chinese_digits_keeps_its_last() -> None:
    # "三四天" is three or four days: no power of ten, read as before (its last digit).
    assert tx.facts("大概三四天。").quantities == {("d", 4.0)}


@pytest.mark.parametrize(("text", "negated"), [
    ("别用 float，金额一律用整数分。", True),
    ("新接口不要 offset 分页。", True),
    ("没有 idle in transaction。", True),
    ("单个 PR 不能超过 400 行。", True),
    # The character inside a word it does not negate in.
    ("这一条非常重要。", False), ("事故级别 SEV2 要写复盘。", False),
    ("未来再评估分片。", False), ("无论哪个服务都要脱敏。", False),
    ("不过先上线灰度。", False), ("别的服务也要改。", False), ("特别是支付链路。", False),
])
def test_a_chinese_negation_is_never_a_character_inside_another_word(text: str,
                                                                     negated: bool) -> None:
    assert tx.facts(text).negated is negated
