"""Relative dates resolved against the day a note was written (SPEC §11: "yesterday" -> the
date), in English and Chinese, and the day a note belongs to.

A conversation held on 23 January 2022 that says "I printed it last Friday" is remembered as
"printed it on Friday 21 January 2022": the memory outlives the day it was said on, "last Friday"
does not. Expressions that name no definite day ("recently", "lately") are left as they are;
a week, weekend or month is written as such ("in the week before 1 January 2023").
"""

from __future__ import annotations

import re
from datetime import date, timedelta

_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
            "seven": 7, "eight": 8, "nine": 9, "ten": 10, "couple of": 2}
_SEASONS = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}
_ISO_RE = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")


def day_of(path: str, meta: dict[str, object], heading: str = "") -> date | None:
    """The day a note belongs to: its `daily/<date>/` folder (or file name), else a `date`
    frontmatter value, else an ISO date in its first heading."""
    for text in (path, str(meta.get("date") or ""), heading):
        m = _ISO_RE.search(text)
        if m:
            try:
                return date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
            except ValueError:
                continue
    value = meta.get("date")
    return value if isinstance(value, date) else None


def english(day: date) -> str:
    """`21 January 2022` (day month year: unambiguous, and how people write it in notes)."""
    return f"{day.day} {day:%B %Y}"


def chinese(day: date) -> str:
    return f"{day.year}年{day.month}月{day.day}日"


def _month(day: date, delta: int) -> tuple[int, int]:
    index = day.year * 12 + day.month - 1 + delta
    return index // 12, index % 12 + 1


def _month_name(year: int, month: int) -> str:
    return f"{date(year, month, 1):%B} {year}"


def _weekday(day: date, name: str, direction: int) -> date:
    """The nearest `name` day strictly before (direction -1) or after (+1) `day`."""
    target = _DAYS.index(name)
    step = timedelta(days=direction)
    probe = day + step
    while probe.weekday() != target:
        probe += step
    return probe


def _count(word: str) -> int | None:
    word = word.lower()
    if word.isdigit():
        return int(word)
    return _NUMBERS.get(word)


_EN_RE = re.compile(
    r"\b(?:(?P<yesterday>the day before yesterday|yesterday)|(?P<today>today|tonight|"
    r"this (?:morning|afternoon|evening))|(?P<lastnight>last night)|"
    r"(?P<tomorrow>the day after tomorrow|tomorrow)|"
    r"(?:(?P<dir>last|next|this|on|past|by|until|till) (?P<unit>week|weekend|month|year|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|spring|summer|fall|autumn|"
    r"winter))|"
    r"(?:(?:a |about |around )?(?P<n>\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|"
    r"couple of|few) (?P<agounit>days?|weeks?|months?|years?) ago))\b", re.I)


def resolve_english(text: str, day: date) -> str:
    """`text` with each relative date written as the date (or week, month, year) it means."""
    def sub(m: re.Match[str]) -> str:
        said = m.group(0)
        if m.group("yesterday"):
            back = 2 if said.lower().startswith("the day before") else 1
            return f"on {english(day - timedelta(days=back))}"
        if m.group("today"):
            return f"on {english(day)}" if said.lower() in ("today", "tonight") else \
                f"on the {said.split()[1].lower()} of {english(day)}"
        if m.group("lastnight"):
            return f"on the night of {english(day - timedelta(days=1))}"
        if m.group("tomorrow"):
            ahead = 2 if said.lower().startswith("the day after") else 1
            return f"on {english(day + timedelta(days=ahead))}"
        if m.group("unit"):
            return _relative_unit(m.group("dir").lower(), m.group("unit").lower(), day, said)
        n = _count(m.group("n"))
        unit = m.group("agounit").lower().rstrip("s")
        if n is None:  # "a few days ago": no definite day, but a definite side of the date
            return f"a few {unit}s before {english(day)}"
        if unit == "day":
            return f"on {english(day - timedelta(days=n))}"
        if unit == "week":
            return f"{n} week{'s' if n > 1 else ''} before {english(day)}"
        if unit == "month":
            year, month = _month(day, -n)
            return f"in {_month_name(year, month)}"
        return f"in {day.year - n}"

    def cased(m: re.Match[str]) -> str:
        out = sub(m)
        return out[:1].upper() + out[1:] if m.group(0)[:1].isupper() else out

    return _EN_RE.sub(cased, text)


def _relative_unit(direction: str, unit: str, day: date, said: str) -> str:
    if unit in _DAYS:
        if direction == "this":
            return said
        # "on Friday" in a past-tense report means the last one; the caller cannot tell the
        # tense, and a conversation mostly reports what happened: treat it as the last one.
        if direction in ("by", "until", "till"):  # a deadline: the coming one
            return f"{direction} {unit.capitalize()} {english(_weekday(day, unit, 1))}"
        when = _weekday(day, unit, 1 if direction == "next" else -1)
        return f"on {unit.capitalize()} {english(when)}"
    if unit == "week":
        if direction in ("last", "past"):
            return f"in the week before {english(day)}"
        if direction == "next":
            return f"in the week after {english(day)}"
        return f"in the week of {english(day)}" if direction == "this" else said
    if unit == "weekend":
        if direction in ("last", "past"):
            return f"on the weekend before {english(day)}"
        if direction in ("next", "this"):
            return f"on the weekend after {english(day)}"
        return said
    if unit == "month":
        shift = {"last": -1, "past": -1, "next": 1, "this": 0}.get(direction)
        if shift is None:
            return said
        year, month = _month(day, shift)
        return f"in {_month_name(year, month)}"
    if unit == "year":
        shift = {"last": -1, "past": -1, "next": 1, "this": 0}.get(direction)
        return said if shift is None else f"in {day.year + shift}"
    # Seasons: "last summer" said in October is this year's.
    start = _SEASONS[unit]
    if direction in ("last", "past"):
        year = day.year if day.month > start + 2 else day.year - 1
    elif direction == "next":
        year = day.year if day.month < start else day.year + 1
    elif direction == "this":
        year = day.year
    else:
        return said
    return f"in the {('fall' if unit == 'autumn' else unit)} of {year}"


_ZH_RE = re.compile(r"(大前天|前天|昨天|昨晚|今天|今晚|今早|明天|后天|上周末|这周末|下周末|"
                    r"上周|本周|这周|下周|上个月|这个月|本月|下个月|去年|今年|明年|前年)")


def resolve_chinese(text: str, day: date) -> str:
    def sub(m: re.Match[str]) -> str:
        word = m.group(0)
        offsets = {"大前天": -3, "前天": -2, "昨天": -1, "昨晚": -1, "今天": 0, "今晚": 0,
                   "今早": 0, "明天": 1, "后天": 2}
        if word in offsets:
            when = chinese(day + timedelta(days=offsets[word]))
            return when + ("晚上" if word.endswith("晚") else "")
        if word in ("上周", "上周末"):
            return f"{chinese(day)}之前的{'周末' if word.endswith('末') else '一周'}"
        if word in ("下周", "下周末", "这周末"):
            return f"{chinese(day)}之后的{'周末' if word.endswith('末') else '一周'}"
        if word in ("本周", "这周"):
            return f"{chinese(day)}这一周"
        shift = {"上个月": -1, "这个月": 0, "本月": 0, "下个月": 1}.get(word)
        if shift is not None:
            year, month = _month(day, shift)
            return f"{year}年{month}月"
        years = {"前年": -2, "去年": -1, "今年": 0, "明年": 1}
        return f"{day.year + years[word]}年"

    return _ZH_RE.sub(sub, text)


def resolve(text: str, day: date | None, lang: str) -> str:
    if day is None:
        return text
    return resolve_chinese(text, day) if lang == "zh" else resolve_english(text, day)
