"""SPEC §7.2 guards on their own: edge conservation (no wikilink or Sources sentence of the node
may disappear) and validation (lint checks plus every unit path cited in ## Sources)."""

from __future__ import annotations

from pathlib import Path

from integrate_support import copy_vault

from remelink.config import load_settings
from remelink.guards import conservation_problems, source_sentences, validate
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


def test_additions_and_moves_are_fine() -> None:
    before = "See [[digest/wiki/a.md]].\n\n" + SOURCES
    after = ("Intro.\n\nSee [[digest/wiki/b.md]] and, later, [[digest/wiki/a.md]].\n\n" +
             SOURCES.replace("payments-retry.md]].", "payments-retry.md]]. And more."))
    assert problems(before, after) == []


def test_a_dropped_link_is_named_with_its_anchor() -> None:
    before = "See [[digest/wiki/a.md#Scope]] and [[digest/wiki/a.md]].\n\n" + SOURCES
    after = "See [[digest/wiki/a.md]].\n\n" + SOURCES
    assert problems(before, after) == ["it would remove wikilink(s) [[digest/wiki/a.md#Scope]]"]


def test_one_of_two_occurrences_may_go() -> None:
    before = "[[digest/wiki/a.md]] twice: [[digest/wiki/a.md]].\n\n" + SOURCES
    after = "Once: [[digest/wiki/a.md]].\n\n" + SOURCES
    assert problems(before, after) == []


def test_many_dropped_links_are_summarised() -> None:
    links = " ".join(f"[[digest/wiki/n{i}.md]]" for i in range(11))
    got = problems(f"All: {links}.\n\n" + SOURCES, "None.\n\n" + SOURCES)
    assert got == ["it would remove wikilink(s) " + ", ".join(
        f"[[digest/wiki/n{i}.md]]" for i in range(8)) + " and 3 more"]


def test_a_reworded_sources_sentence_is_lost() -> None:
    after = SOURCES.replace("The incident is recorded in", "Incident:")
    assert problems("Body.\n\n" + SOURCES, "Body.\n\n" + after) == [
        "it would remove Sources sentence(s) 'The incident is recorded in "
        "[[daily/2026-06-01/payments-retry.md]].'"]


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
    assert got == [
        "line 1: frontmatter: 'description' is empty in the frontmatter",
        "line 5: relation-field: relation field 'relates_to::' - weave the link into a sentence "
        "instead",
        "line 5: broken-link: [[digest/wiki/x.md]]: target does not exist",
        "line 9: non-source-target: [[digest/wiki/progress-feedback.md]]: Sources cite daily/ or "
        "resource/ notes only; link related digest nodes in the body prose",
        "## Sources does not cite [[daily/2026-06-23/checkout-retries.md]] - add a sentence "
        "saying what each supports",
    ]


def test_validation_accepts_a_good_node(tmp_path: Path) -> None:
    vault = copy_vault(tmp_path)
    unit = Unit(name="u", bucket="wiki", summary="s", paths=("daily/2026-06-01/payments-retry.md",))
    good = (vault / "digest/wiki/idempotency-keys.md").read_text()
    assert validate(VaultFiles.scan(vault), load_settings(vault, env={}), unit,
                    parse_text("digest/wiki/idempotency-keys.md", good)).problems == []
