"""How a CORRECT is written into a node (issue 21, the demo's rotation runbook): the line that
held the old value stays, character for character, but is marked where it stands, struck
through and dated (`~~The rotation period is 30 days.~~ (superseded on 2026-06-21, see
below)`), a list item with the dated note only; the correction below quotes it. A reader
skimming the node meets the old value as superseded; the guards still count every line kept
(the struck line is quoted by the correction); and the engine no longer reads the struck line
as a claim of the node."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from local_support import integrate_note, local_context

from remelink import guards
from remelink.integrate import IntegrationContext
from remelink.models.local import decide, write
from remelink.models.local.edits import without_superseded
from remelink.vault.notes import parse_text


@pytest.fixture
def ctx(tmp_path: Path) -> Iterator[IntegrationContext]:
    with local_context(tmp_path, "2026-04-01") as context:
        yield context


run = integrate_note


def body_of(ctx: IntegrationContext, rel: str | None) -> str:
    assert rel
    return (ctx.vault / rel).read_text(encoding="utf-8").split("---", 2)[2]


def test_an_english_correction_strikes_the_old_line_and_dates_it(
        ctx: IntegrationContext) -> None:
    kept = run(ctx, "daily/2026-02-02/retention.md", "Payments log retention",
               "Logs of the payments service are kept for 30 days.")
    before = body_of(ctx, kept.target)
    later = run(ctx, "daily/2026-03-16/retention.md", "Payments log retention is 14 days",
                "Correction: logs of the payments service are kept for 14 days, not 30 days.")
    assert later.action == "CORRECT" and later.target == kept.target
    body = body_of(ctx, kept.target)
    lines = body.splitlines()
    struck = lines.index("~~Logs of the payments service are kept for 30 days.~~ "
                         "(superseded on 2026-03-16, see below)")
    # The correction comes right after it, quoting it.
    [quote] = [x for x in lines if x.startswith("> Corrected on 2026-03-16")]
    assert lines.index(quote) > struck
    assert "\u201cLogs of the payments service are kept for 30 days\u201d" in quote
    # Nothing is lost: every old line is still there, character for character.
    assert all(x in body for x in before.splitlines())
    # The struck line is no claim of the node any more; the correction is.
    claim = "Logs of the payments service are kept for 30 days."
    assert claim in decide.passages(before) and claim not in decide.passages(body)
    assert "14 days" in " ".join(decide.passages(body))


def test_a_chinese_correction_strikes_the_old_line_and_dates_it(
        ctx: IntegrationContext) -> None:
    kept = run(ctx, "daily/2026-02-12/pool.md", "连接池 default_pool_size 维持 40",
               "连接池 default_pool_size 维持 40，不扩容。")
    before = body_of(ctx, kept.target)
    later = run(ctx, "daily/2026-03-04/review.md", "连接池 default_pool_size 从 40 调到 80",
                "连接池 default_pool_size 从 40 调到 80（三个实例一共 240）。")
    assert later.action == "CORRECT" and later.target == kept.target
    body = body_of(ctx, kept.target)
    assert "~~连接池 default_pool_size 维持 40，不扩容。~~（2026-03-04 已更正，见下）" in body
    assert all(x in body for x in before.splitlines())
    assert "连接池 default_pool_size 维持 40，不扩容。" in decide.passages(before)
    assert "连接池 default_pool_size 维持 40，不扩容。" not in decide.passages(body)


@pytest.mark.parametrize(("lang", "mark"), [("en", " (superseded on 2026-06-30, see below)"),
                                            ("zh", "（2026-06-30 已更正，见下）")])
def test_a_step_keeps_its_number_and_text_and_gets_the_dated_mark(lang: str, mark: str) -> None:
    body = ("Use this when keys are due.\n\n1. Generate a key.\n"
            "2. Rotate the keys every 90 days.\n3. Revoke the old key.\n")
    new = write.strike_superseded(body, "Rotate the keys every 90 days", "2026-06-30", lang,
                                  quote="the earlier claim was “Rotate the keys every 90 days”")
    assert f"2. Rotate the keys every 90 days.{mark}\n" in new
    assert "~~" not in new  # a strikethrough would break the list item's text
    assert "Rotate the keys every 90 days" not in " ".join(decide.passages(new))


@pytest.mark.parametrize("line", [
    "Keys are rotated by [[digest/wiki/scheduler.md|the scheduler]] every 30 days.",
    "```rotate --days 30```",
    "## Rotation every 30 days",
    "> Corrected on 2026-01-01: rotation every 30 days; per [[daily/x.md]].",
])
def test_a_line_with_links_code_or_a_heading_is_left_as_it_is(line: str) -> None:
    body = f"{line}\n\n## Sources\n\nFrom [[daily/x.md]].\n"
    sentence = line.lstrip("#> ").rstrip(".")
    assert write.strike_superseded(body, sentence, "2026-06-30", "en", quote=body) == body


def test_the_sources_section_is_never_struck() -> None:
    body = "A claim.\n\n## Sources\n\nThe period is 30 days.\n"
    assert write.strike_superseded(body, "The period is 30 days.", "2026-06-30", "en",
                                   quote="The period is 30 days") == body


def test_a_line_the_correction_does_not_quote_as_it_stands_is_left_as_it_is() -> None:
    body = "Keys are rotated every **30** days.\n"
    # The correction quotes the claim without its emphasis: struck, the line would be lost.
    assert write.strike_superseded(body, "Keys are rotated every 30 days", "2026-06-30", "en",
                                   quote="“Keys are rotated every 30 days”") == body


_WORDS = st.sampled_from(["rotate", "keys", "every", "30", "days", "轮换", "密钥", "天",
                          "the", "period", "is", "scheduler", "每", "次"])
_LINE = st.lists(_WORDS, min_size=1, max_size=8).map(" ".join)


@settings(max_examples=60, deadline=None)
@given(lines=st.lists(st.tuples(st.sampled_from(["", "- ", "1. "]), _LINE), min_size=1,
                      max_size=6),
       pick=st.integers(min_value=0, max_value=5), lang=st.sampled_from(["en", "zh"]))
def test_no_line_is_lost_when_a_correction_marks_one_superseded(
        lines: list[tuple[str, str]], pick: int, lang: str) -> None:
    """Whatever line the correction is about: every old line is still in the new body as
    text, the guards find no line lost that the correction does not quote, and the line it is
    about is marked when the body says it once."""
    body = "\n\n".join(f"{mark}{text}." for mark, text in lines) + \
        "\n\n## Sources\n\nFrom [[daily/2026-01-01/a.md]].\n"
    old = lines[pick % len(lines)][1]
    line = write.correction_line("the new value", old, "daily/2026-06-30/b.md",
                                 "2026-06-30", lang)
    new = write.strike_superseded(write.insert_after_sentence(body, old, line), old,
                                  "2026-06-30", lang, quote=line)
    assert all(x in new for x in body.splitlines())
    assert guards.conservation_problems(parse_text("n.md", body), parse_text("n.md", new),
                                        ("daily/2026-06-30/b.md",)) == []
    assert without_superseded(new).count("~~") == 0
    if sum(old in x for x in body.splitlines()) == 1:  # else which line it was is unclear
        assert "superseded on 2026-06-30" in new or "2026-06-30 已更正" in new
