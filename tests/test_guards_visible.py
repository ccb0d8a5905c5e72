"""Conservation sees through markup (issue 20, case 7; SPEC §7.2): a line, a link or a Sources
sentence counts as kept only where a reader still sees it as before. Properties over generated
node bodies in English and Chinese, and every wrapper a model could hide a fact in: an HTML
comment, an Obsidian `%%` comment (inline or a block), a strikethrough, a hidden element
(`hidden`, `display: none`, a hidden `<div>` around markdown), a `$$` math block or inline
`$$`, a code fence it was not in before, a quote. `<details>` is shown: it hides nothing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from integrate_support import copy_vault

from remelink.config import load_settings
from remelink.guards import conservation_problems, lost_lines, quoted_lines, validate
from remelink.units import Unit
from remelink.vault.notes import Note, parse_text
from remelink.vault.resolve import VaultFiles
from remelink.visible import CODE, COMMENT, HIDDEN, MATH, PROSE, QUOTE, STRUCK, render

HEAD = "---\nname: N\ndescription: D\n---\n"
SRC = "daily/2026-06-01/payments-retry.md"
NEW_SRC = "daily/2026-06-21/soc2-review.md"
SOURCES = f"## Sources\n\nThe incident is recorded in [[{SRC}]].\n"

WRAPPERS: dict[str, Callable[[str], str]] = {
    "html comment": lambda s: f"<!-- {s} -->",
    "html comment block": lambda s: f"<!--\n{s}\n-->",
    "obsidian comment": lambda s: f"%% {s} %%",
    "obsidian comment block": lambda s: f"%%\n{s}\n%%",
    "strikethrough": lambda s: f"~~{s}~~",
    "span hidden": lambda s: f"<span hidden>{s}</span>",
    "div hidden around markdown": lambda s: f"<div hidden>\n\n{s}\n\n</div>",
    "display none": lambda s: f'<p style="display: none">{s}</p>',
    "visibility hidden": lambda s: f"<span style='visibility:hidden'>{s}</span>",
    "math block": lambda s: f"$$\n{s}\n$$",
    "inline math": lambda s: f"$${s}$$",
    "backtick fence": lambda s: f"```\n{s}\n```",
    "tilde fence": lambda s: f"~~~text\n{s}\n~~~",
    "quote": lambda s: f"> {s}",
}
SHOWN: dict[str, Callable[[str], str]] = {
    "details": lambda s: f"<details><summary>More</summary>\n\n{s}\n\n</details>",
    "bold": lambda s: f"**{s}**",
    "list item": lambda s: f"- {s}",
    "heading": lambda s: f"## {s}",
}

_EN = st.sampled_from(["The rotation period is 24 hours", "Deploys run before noon",
                       "Every POST needs an idempotency key", "Alice reviews the exports",
                       "Keep the queue under 500 jobs", "Retries back off for 30 s"])
_ZH = st.sampled_from(["手机号写入日志前必须脱敏", "每个 PR 不超过 400 行", "导出任务在后台运行",
                       "密钥每 24 小时轮换一次", "评审由王芳负责"])
_SENTENCE = st.builds(lambda s, n: f"{s} ({n}).", st.one_of(_EN, _ZH),
                      st.integers(min_value=1, max_value=999))
_BODY = st.lists(_SENTENCE, min_size=1, max_size=6, unique=True)


def node(body: str) -> Note:
    return parse_text("digest/wiki/n.md", HEAD + body)


def body_of(lines: list[str]) -> str:
    return "\n\n".join(lines) + "\n\n" + SOURCES


@settings(max_examples=150, deadline=None)
@given(_BODY, st.data(), st.sampled_from(sorted(WRAPPERS)))
def test_a_line_wrapped_in_hiding_markup_is_lost(lines: list[str], data: st.DataObject,
                                                  wrapper: str) -> None:
    i = data.draw(st.integers(min_value=0, max_value=len(lines) - 1))
    after = [*lines]
    after[i] = WRAPPERS[wrapper](lines[i])
    problems = conservation_problems(node(body_of(lines)), node(body_of(after)))
    assert any(lines[i] in p and "would be lost" in p for p in problems), (wrapper, problems)


@settings(max_examples=80, deadline=None)
@given(_BODY, st.data(), st.sampled_from(sorted(SHOWN)))
def test_markup_that_shows_the_line_keeps_it(lines: list[str], data: st.DataObject,
                                             wrapper: str) -> None:
    i = data.draw(st.integers(min_value=0, max_value=len(lines) - 1))
    after = [*lines]
    after[i] = SHOWN[wrapper](lines[i])
    assert conservation_problems(node(body_of(lines)), node(body_of(after))) == []


@settings(max_examples=80, deadline=None)
@given(_BODY, st.data(), st.sampled_from(sorted(WRAPPERS)))
def test_inserting_hidden_text_removes_nothing(lines: list[str], data: st.DataObject,
                                               wrapper: str) -> None:
    """Hiding markup is not refused as such: a comment a model adds hides nothing the node
    had."""
    i = data.draw(st.integers(min_value=0, max_value=len(lines)))
    after = [*lines[:i], WRAPPERS[wrapper]("A note for later (1)."), *lines[i:]]
    assert conservation_problems(node(body_of(lines)), node(body_of(after))) == []


@settings(max_examples=80, deadline=None)
@given(_BODY, st.sampled_from(sorted(set(WRAPPERS) - {"quote", "backtick fence",
                                                       "tilde fence"})))
def test_a_link_wrapped_in_hiding_markup_is_removed(lines: list[str], wrapper: str) -> None:
    link = "See also [[digest/wiki/other.md]] (7)."
    before = body_of([*lines, link])
    after = body_of([*lines, WRAPPERS[wrapper](link)])
    problems = conservation_problems(node(before), node(after))
    assert any("would remove wikilink(s) [[digest/wiki/other.md]]" in p for p in problems), \
        (wrapper, problems)


@settings(max_examples=80, deadline=None)
@given(_BODY, st.sampled_from(sorted(WRAPPERS)))
def test_a_sources_sentence_wrapped_or_quoted_is_removed(lines: list[str], wrapper: str) -> None:
    sentence = f"The incident is recorded in [[{SRC}]]."
    after = body_of(lines).replace(sentence, WRAPPERS[wrapper](sentence))
    problems = conservation_problems(node(body_of(lines)), node(after))
    assert problems, wrapper


def test_a_quote_line_that_replaces_a_sources_sentence_is_a_removal() -> None:
    """The attack of case 7: the Sources sentence replaced by a `> Corrected on ...` quote that
    holds it verbatim and cites the new source."""
    sentence = f"The incident is recorded in [[{SRC}]]."
    before = body_of(["Retries back off for 30 s."])
    after = before.replace(sentence, f"> Corrected on 2026-06-21: the earlier text said "
                                     f"\"{sentence}\" per [[{NEW_SRC}]].")
    problems = conservation_problems(node(before), node(after), (NEW_SRC,))
    assert any("would remove Sources sentence" in p for p in problems), problems


def test_the_attack_of_case_7_in_one_update() -> None:
    """A fact in a comment, a link line in `%%`, the Sources sentence replaced by a quote: all
    three named."""
    fact = "The rotation period is 24 hours."
    link = "It extends [[digest/procedure/rotate-api-keys.md]]."
    sentence = f"The incident is recorded in [[{SRC}]]."
    before = f"{fact}\n\n{link}\n\n{SOURCES}"
    after = (f"<!-- {fact} -->\n\n%% {link} %%\n\n## Sources\n\n> Corrected on 2026-06-21: "
             f"{sentence} per [[{NEW_SRC}]].\n")
    problems = conservation_problems(node(before), node(after), (NEW_SRC,))
    assert any(fact in p for p in problems)
    assert any("[[digest/procedure/rotate-api-keys.md]]" in p for p in problems)
    assert any("Sources sentence" in p or sentence in p for p in problems), problems


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_BODY, st.data())
def test_only_a_correct_replaces_a_line_and_only_by_quoting_it(lines: list[str],
                                                               data: st.DataObject) -> None:
    i = data.draw(st.integers(min_value=0, max_value=len(lines) - 1))
    after = [*lines]
    after[i] = (f"> Corrected on 2026-06-21: the earlier text said \"{lines[i]}\"; it is now "
                f"different, per [[{NEW_SRC}]].")
    before_note, after_note = node(body_of(lines)), node(body_of(after))
    quoted = quoted_lines(before_note, after_note, (NEW_SRC,))
    assert [q.text for q in quoted] == [lines[i]]
    # Not quoting it (a paraphrase) loses it, whatever the action.
    reworded = [*lines]
    reworded[i] = f"> Corrected on 2026-06-21: it is now different, per [[{NEW_SRC}]]."
    lost = lost_lines(before_note, node(body_of(reworded)), (NEW_SRC,))
    assert [(ln.text, ln.quoted) for ln in lost] == [(lines[i], False)]


def test_a_corroborate_or_refine_never_replaces_a_line(tmp_path: Path) -> None:
    vault = copy_vault(tmp_path)
    files, cfg = VaultFiles.scan(vault), load_settings(vault, env={})
    (vault / NEW_SRC).parent.mkdir(parents=True, exist_ok=True)
    (vault / NEW_SRC).write_text("# SOC2\n\nRotation is 24 h.\n", encoding="utf-8")
    files = VaultFiles.scan(vault)
    unit = Unit(name="u", bucket="wiki", summary="s", paths=(NEW_SRC,))
    old = "The rotation period is 30 days."
    before = node(f"{old}\n\n{SOURCES}")
    after = node(f"> Corrected on 2026-06-21: the earlier text said \"{old}\"; it is 24 h, per "
                 f"[[{NEW_SRC}]].\n\n{SOURCES}- The review is in [[{NEW_SRC}]].\n")
    for action in ("CORROBORATE", "REFINE"):
        got = validate(files, cfg, unit, after, before, action=action).problems
        assert any("only a CORRECT may replace a line" in p for p in got), (action, got)
    got = validate(files, cfg, unit, after, before, action="CORRECT").problems
    assert not any("only a CORRECT" in p or "would be lost" in p for p in got), got


def test_the_renderer_on_each_construct() -> None:
    body = ("Q1 <!-- Q2 --> Q3 %% Q4 %% Q5 ~~Q6~~ Q7 <span hidden>Q8</span> Q9 $$Q10$$ Q11 "
            "`<!-- Q12 -->` Q13\n```\n<!-- Q14 -->\n```\n> Q15\n<!-- unclosed\nQ16")
    r = render(body)

    def at(text: str) -> int:
        return r.contexts[body.index(text + " ") if text + " " in body else body.index(text)]

    assert [at(x) for x in ("Q1", "Q3", "Q5", "Q7", "Q9", "Q11", "Q13")] == [PROSE] * 7
    assert (at("Q2"), at("Q4"), at("Q6"), at("Q8"), at("Q10")) == (COMMENT, COMMENT, STRUCK,
                                                                   HIDDEN, MATH)
    assert at("Q12") == PROSE  # inside inline code: literal text, shown
    assert at("Q14") == CODE  # inside a fence: code, not a comment
    assert at("Q15") == QUOTE
    assert at("Q16") == COMMENT  # an unclosed comment hides the rest
