"""SPEC §7.2 guards on their own: prose conservation (every line of the old body stays, in order;
a CORRECT may replace the wrong line only by quoting it), edge conservation (no wikilink or
Sources sentence may disappear), and validation (lint checks with body line numbers and the line
quoted, every unit path cited in ## Sources, no repeated Sources sentence, the unit's language)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import assume, given, settings
from hypothesis import strategies as st
from integrate_support import copy_vault

from remelink.config import load_settings
from remelink.guards import (
    LostLine,
    conservation_problems,
    duplicate_sources,
    lost_lines,
    quoted_lines,
    source_sentences,
    validate,
)
from remelink.units import Unit
from remelink.vault.notes import Note, parse_text
from remelink.vault.resolve import VaultFiles

HEAD = "---\nname: N\ndescription: D\n---\n"
SOURCES = ("## Sources\n\nThe incident is recorded in [[daily/2026-06-01/payments-retry.md]].\n"
           "- The review is in [[daily/2026-06-19/dashboard-review.md]].\n")


def note(body: str, path: str = "digest/wiki/n.md") -> Note:
    return parse_text(path, HEAD + body)


def problems(before: str, after: str) -> list[str]:
    return conservation_problems(note(before), note(after))


def test_insertions_around_and_inside_a_line_are_fine() -> None:
    before = "See [[digest/wiki/a.md]].\n\n" + SOURCES
    after = ("Intro.\n\nSee [[digest/wiki/a.md]]. Also [[digest/wiki/b.md]].\n\n" +
             SOURCES.replace("payments-retry.md]].", "payments-retry.md]]. And more."))
    assert problems(before, after) == []


def test_a_reworded_line_is_lost_and_quoted_in_full() -> None:
    before = "See [[digest/wiki/a.md]].\n\n" + SOURCES
    after = "See [[digest/wiki/b.md]] and, later, [[digest/wiki/a.md]].\n\n" + SOURCES
    assert problems(before, after) == ['body line 1 would be lost: "See [[digest/wiki/a.md]]."']


def test_a_dropped_link_is_named_with_its_anchor() -> None:
    before = "See [[digest/wiki/a.md#Scope]] and [[digest/wiki/a.md]].\n\n" + SOURCES
    after = "See [[digest/wiki/a.md]].\n\n" + SOURCES
    assert problems(before, after) == [
        'body line 1 would be lost: "See [[digest/wiki/a.md#Scope]] and [[digest/wiki/a.md]]."',
        "it would remove wikilink(s) [[digest/wiki/a.md#Scope]]"]


def test_many_dropped_links_are_listed_whole() -> None:
    links = " ".join(f"[[digest/wiki/n{i}.md]]" for i in range(11))
    got = problems(f"All: {links}.\n\n" + SOURCES, "None.\n\n" + SOURCES)
    assert got == [f'body line 1 would be lost: "All: {links}."',
                   "it would remove wikilink(s) " + ", ".join(
                       f"[[digest/wiki/n{i}.md]]" for i in range(11))]


def test_a_reworded_sources_sentence_is_one_item() -> None:
    after = SOURCES.replace("The incident is recorded in", "Incident:")
    assert problems("Body.\n\n" + SOURCES, "Body.\n\n" + after) == [
        'body line 5 would be lost: "The incident is recorded in '
        '[[daily/2026-06-01/payments-retry.md]]."']


def test_a_sources_sentence_moved_out_of_sources_is_lost() -> None:
    """Every line stays in order, but a heading inserted above them takes the sentences out of
    ## Sources: the additive rule on Sources sentences still names them."""
    before = "Body.\n\n" + SOURCES
    after = "Body.\n\n## Sources\n\nNew [[daily/2026-06-23/checkout-retries.md]].\n\n" \
        "## Later\n\n" + SOURCES.removeprefix("## Sources\n\n")
    assert problems(before, after) == [
        'it would remove Sources sentence "The incident is recorded in '
        '[[daily/2026-06-01/payments-retry.md]]."',
        'it would remove Sources sentence "The review is in '
        '[[daily/2026-06-19/dashboard-review.md]]."']


def test_reflowed_whitespace_keeps_every_line() -> None:
    before = "One two three\nfour five.\n\n" + SOURCES
    after = "One two\n  three four   five.\n\n" + SOURCES
    assert problems(before, after) == []


def test_a_line_is_not_found_inside_a_longer_word() -> None:
    before = "cat\n\n" + SOURCES
    assert problems(before, "concatenate\n\n" + SOURCES) == ['body line 1 would be lost: "cat"']
    assert problems(before, "A cat.\n\n" + SOURCES) == []


def test_a_moved_line_is_lost_order_matters() -> None:
    before = "First.\n\nSecond.\n\nThird.\n\n" + SOURCES
    after = "Second.\n\nThird.\n\nFirst.\n\n" + SOURCES
    # The most lines that stay in order stay; the one moved past them is lost.
    assert problems(before, after) == ['body line 1 would be lost: "First."']


def test_a_repeated_line_must_stay_as_often() -> None:
    before = "Same.\n\nSame.\n\n" + SOURCES
    assert problems(before, "Same.\n\n" + SOURCES) == ['body line 3 would be lost: "Same."']


def test_a_bare_link_line_may_become_a_sentence() -> None:
    before = "- [[digest/wiki/a.md]]\nrelates_to:: [[digest/wiki/b.md]]\n\n" + SOURCES
    after = ("This builds on [[digest/wiki/a.md]] and contrasts with [[digest/wiki/b.md]].\n\n"
             + SOURCES)
    assert problems(before, after) == []


def test_a_correct_may_replace_the_wrong_line_only_by_quoting_it() -> None:
    src = "daily/2026-06-21/soc2-review.md"
    before = "Steps.\n\nThe rotation period is 30 days.\n\n" + SOURCES
    quoted = ("Steps.\n\nThe rotation period is 24 hours.\n\n" + SOURCES +
              f'\n> Corrected on 2026-06-21: 24 h; the earlier text said "The rotation period is '
              f'30 days.", per [[{src}]].\n')
    lost = lost_lines(note(before), note(quoted), (src,))
    assert lost == [LostLine(3, "The rotation period is 30 days.", quoted=True)]
    assert conservation_problems(note(before), note(quoted), (src,)) == []
    assert quoted_lines(note(before), note(quoted), (src,)) == lost
    # Without the unit's source in the quoting paragraph it is an ordinary lost line.
    unsourced = quoted.replace(f", per [[{src}]]", "")
    assert conservation_problems(note(before), note(unsourced), (src,)) == [
        'body line 3 would be lost: "The rotation period is 30 days."']


# -- properties ------------------------------------------------------------------------------

_WORDS = st.text(alphabet=st.sampled_from("abcdefgh 数据脱敏規則.,"), min_size=1, max_size=30)
_LINES = st.lists(_WORDS.filter(lambda t: t.strip()), min_size=1, max_size=8)


@settings(max_examples=150, deadline=None)
@given(old=_LINES, inserts=st.lists(st.tuples(st.integers(0, 8), _WORDS), max_size=5))
def test_property_inserting_lines_never_loses_one(old: list[str],
                                                  inserts: list[tuple[int, str]]) -> None:
    new = list(old)
    for at, text in sorted(inserts, reverse=True):
        new.insert(min(at, len(new)), text)
    assert lost_lines(note("\n".join(old) + "\n"), note("\n".join(new) + "\n")) == []


@settings(max_examples=150, deadline=None)
@given(old=_LINES, data=st.data())
def test_property_deleting_a_unique_line_reports_it_whole(old: list[str],
                                                           data: st.DataObject) -> None:
    i = data.draw(st.integers(0, len(old) - 1))
    gone = " ".join(old[i].split())
    rest = " ".join(" ".join(old[:i] + old[i + 1:]).split())
    assume(gone not in rest)
    lost = lost_lines(note("\n".join(old) + "\n"), note("\n".join(old[:i] + old[i + 1:]) + "\n"))
    assert [(ln.line, ln.text) for ln in lost] == [(i + 1, old[i].strip())]


def test_duplicate_sources_sentences_within_a_paragraph() -> None:
    sentence = "The retry is in [[daily/2026-06-23/checkout-retries.md]]."
    before = note("Body.\n\n" + SOURCES)
    once = note("Body.\n\n" + SOURCES + sentence + "\n")
    twice = note("Body.\n\n" + SOURCES + f"{sentence} {sentence}\n")
    assert duplicate_sources(before, once) == []
    assert duplicate_sources(before, twice) == [sentence]
    assert duplicate_sources(twice, twice) == []  # the node had it twice already


def test_source_sentences_fold_whitespace_and_list_markers() -> None:
    n = note("Body.\n\n## Sources\n\nOne sentence\n   over two lines [[daily/x.md]].\n\n"
             "- A list item [[daily/y.md]].\n\n## Later\n\nNot a source [[daily/z.md]].\n")
    assert source_sentences(n) == [
        "One sentence over two lines [[daily/x.md]].", "A list item [[daily/y.md]]."]


def test_validation_lists_lint_errors_and_uncited_paths(tmp_path: Path) -> None:
    vault = copy_vault(tmp_path)
    files = VaultFiles.scan(vault)
    settings = load_settings(vault, env={})
    unit = Unit(name="u", bucket="wiki", summary="s",
                paths=("daily/2026-06-01/payments-retry.md",
                       "daily/2026-06-23/checkout-retries.md"))
    bad = parse_text("digest/wiki/idempotency-keys.md",
                     "---\nname: Keys\ndescription: ''\n---\nrelates_to:: [[digest/wiki/x.md]]\n\n"
                     "## Sources\n\nSee [[digest/wiki/progress-feedback.md]] for more, and "
                     "[[daily/2026-06-01/payments-retry.md]].\n")
    got = validate(files, settings, unit, bad).problems
    relation = '"relates_to:: [[digest/wiki/x.md]]"'
    assert got == [
        "frontmatter: frontmatter: 'description' is empty in the frontmatter",
        "body line 1: relation-field: relation field 'relates_to::' - weave the link into a "
        f"sentence instead: {relation}",
        f"body line 1: broken-link: [[digest/wiki/x.md]]: target does not exist: {relation}",
        "body line 5: non-source-target: [[digest/wiki/progress-feedback.md]]: Sources cite "
        "daily/ or resource/ notes only; link related digest nodes in the body prose: \"See "
        "[[digest/wiki/progress-feedback.md]] for more, and "
        "[[daily/2026-06-01/payments-retry.md]].\"",
        "## Sources does not cite [[daily/2026-06-23/checkout-retries.md]] - add a sentence "
        "saying what each supports",
    ]


def test_validation_accepts_a_good_node(tmp_path: Path) -> None:
    vault = copy_vault(tmp_path)
    unit = Unit(name="u", bucket="wiki", summary="s", paths=("daily/2026-06-01/payments-retry.md",))
    good = (vault / "digest/wiki/idempotency-keys.md").read_text()
    assert validate(VaultFiles.scan(vault), load_settings(vault, env={}), unit,
                    parse_text("digest/wiki/idempotency-keys.md", good)).problems == []


def test_a_new_node_is_written_in_the_language_of_its_unit(tmp_path: Path) -> None:
    vault = copy_vault(tmp_path)
    files, settings = VaultFiles.scan(vault), load_settings(vault, env={})
    src = "daily/2026-06-21/数据脱敏.md"
    unit = Unit(name="日志数据脱敏", bucket="procedure", summary="写入日志前脱敏。", paths=(src,))
    english = parse_text("digest/procedure/log-masking.md",
                         "---\nname: Log masking\ndescription: Mask phone numbers.\n---\n"
                         "Mask phone numbers and ID numbers before they reach the logs.\n\n"
                         f"## Sources\n\nThe masking rule is recorded in [[{src}]].\n")
    chinese = parse_text("digest/procedure/日志数据脱敏.md",
                         "---\nname: 日志数据脱敏\ndescription: 写入日志前脱敏。\n---\n"
                         "手机号和身份证号写入日志前必须先脱敏，只保留后四位。\n\n"
                         f"## Sources\n\n脱敏规则记录在 [[{src}]]。\n")
    got = validate(files, settings, unit, english, language="zh").problems
    assert got == ["the node is written in English, but its unit and sources are in Chinese "
                   "(中文): write the name, description and body in Chinese (中文)"]
    assert validate(files, settings, unit, chinese, language="zh").problems == []
    # An update is not judged on the language: the node had one already.
    assert validate(files, settings, unit, english, english, language="zh").problems == []


def test_only_a_correct_receipt_may_replace_a_quoted_line(tmp_path: Path) -> None:
    vault = copy_vault(tmp_path)
    files, settings = VaultFiles.scan(vault), load_settings(vault, env={})
    src = "daily/2026-06-21/soc2-review.md"
    unit = Unit(name="Rotate keys daily", bucket="procedure", summary="24 h.", paths=(src,))
    rel = "digest/procedure/rotate-api-keys.md"
    original = parse_text(rel, (vault / rel).read_text(encoding="utf-8"))
    fixed = original.text.replace(
        "The rotation period is 30 days.\n", "The rotation period is 24 hours.\n").replace(
        "[[daily/2026-05-15/key-rotation.md]].\n",
        "[[daily/2026-05-15/key-rotation.md]].\n\n> Corrected on 2026-06-21: the earlier text "
        f'said "The rotation period is 30 days.", but the SOC2 review in [[{src}]] sets 24 h.\n')
    new = parse_text(rel, fixed)
    assert validate(files, settings, unit, new, original, action="CORRECT").problems == []
    refine = validate(files, settings, unit, new, original, action="REFINE").problems
    assert refine == [
        'body line 7 ("The rotation period is 30 days.") is replaced by a correction that '
        "quotes it; only a CORRECT may replace a line, and the receipt says REFINE: answer with "
        "action CORRECT if the new source corrects it, else put the line back"]
