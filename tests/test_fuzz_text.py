"""Every text function of the local engine, and its whole extraction of a note, finishes within a
bound on random and adversarial notes (issue 20, "bounded everywhere"; case 10: a 16 KB line of
`[[` repeated 8,000 times ran the quadratic wikilink clean-up for over 120 s).

The bound is a hang guard, not a speed claim (speed is bench/bench_fuzz_text.py's): generous
enough for a loaded machine, far below what a quadratic pattern takes on these sizes."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
from fuzz_notes import (
    TOKENS,
    adversarial,
    extract_note,
    note_text,
    per_line,
    text_functions,
    vault_functions,
)
from hypothesis import HealthCheck, given, settings

BOUND = 8.0  # seconds of wall time per function and note


class TooSlow(Exception):
    pass


@contextmanager
def bounded(what: str) -> Iterator[None]:
    def late(*_: object) -> None:
        raise TooSlow(f"{what} ran past {BOUND:g} s")

    old = signal.signal(signal.SIGALRM, late)
    signal.setitimer(signal.ITIMER_REAL, BOUND)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


FUNCTIONS: list[tuple[str, Callable[[str], object]]] = [
    *((name, per_line(fn, distinct=True)) for name, fn in text_functions()),
    *((f"{name} (whole note)", fn) for name, fn in text_functions()),
    ("extract", extract_note),
    *((f"{name} (whole note)", fn) for name, fn in vault_functions()),
]


PER_LINE = frozenset(name for name, _ in text_functions())  # the line-by-line entries' names


def all_bounded(text: str, label: str) -> None:
    # A note of one line is that line: line by line, a text function makes the very call its
    # whole-note entry makes, so that call is made once (most adversarial notes are one line).
    one_line = text.splitlines() == [text]
    for name, fn in FUNCTIONS:
        if one_line and name in PER_LINE:
            continue
        with bounded(f"{name} on {label}"):
            fn(text)


def test_issue_case_10_a_line_of_8000_wikilink_openers() -> None:
    from remelink.models.local.text import clean_statement

    text = "[[" * 8000
    started = time.process_time()
    with bounded("clean_statement"):
        assert clean_statement(text) == text
    assert time.process_time() - started < 1.0  # was 116 s for 4,000 repeats
    all_bounded(f"# Brackets\n\nWe decided to keep this: {text}\n", "case 10")


def test_links_are_still_cleaned() -> None:
    from remelink.models.local.text import clean_statement, drop_parentheticals

    assert clean_statement("- See [[digest/wiki/a-b.md|the A]] and [[digest/x.md#h]] and "
                           "![[y.md]], [docs](https://x.y/z).") == "See the A and x and y, docs."
    assert clean_statement("[[a [[b]] c]]") == "[[a b c]]"
    assert drop_parentheticals("Keys (rotated) every day （每天） ok") == "Keys every day ok"
    assert drop_parentheticals("((((") == "(((("


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(note_text())
def test_random_notes_are_bounded(text: str) -> None:
    all_bounded(text, "a random note")


SIZE = 16384  # characters of an adversarial note


def token_line(token: str) -> str:
    """The token repeated on one line to SIZE characters."""
    return token * max(1, SIZE // len(token))


@pytest.mark.parametrize("token", TOKENS)
def test_each_token_repeated_on_one_line_is_bounded(token: str) -> None:
    text = token_line(token)
    assert text.splitlines() == [text]  # one line: every whole-note entry and extract
    all_bounded(text, repr(token))


PARTS = 8  # the adversarial notes dealt out to parallel workers, the dearest spread over all


def adversarial_notes() -> list[tuple[str, str]]:
    """The adversarial notes, each different text once, less the token lines of the test
    above (it makes the very calls on them: the same text, the same entries). 83 of the 521
    are such repeats: each token with the empty separator is its token line, and a few notes
    built by name are one too (a long word is `a` repeated, the issue's case `[[`)."""
    done = {token_line(token) for token in TOKENS}
    notes = []
    for label, text in adversarial(SIZE):
        if text not in done:
            done.add(text)
            notes.append((label, text))
    return notes


@pytest.mark.slow
@pytest.mark.parametrize("part", range(PARTS))
def test_every_adversarial_note_is_bounded(part: int) -> None:
    notes = adversarial_notes()[part::PARTS]
    assert notes
    for label, text in notes:
        all_bounded(text, label)
