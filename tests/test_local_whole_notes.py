"""Whole notes nobody here wrote (issue 21, til-simonw tune side): what a node's code says, and
when one note updates another note's node."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from remelink.models.local import decide, fenced

_CODE_LINE = st.one_of(
    st.just(""),
    st.builds(lambda w: f"# {w} comment", st.sampled_from(["install", "run", "deploy"])),
    st.builds(lambda w: f"- name: {w} step", st.sampled_from(["Build", "Dump", "Test"])),
    st.builds(lambda w: f"1. {w}", st.sampled_from(["first", "second"])),
    st.builds(lambda w: f"    run: echo {w}", st.sampled_from(["one", "two"])),
)


@given(st.lists(_CODE_LINE, min_size=1, max_size=12), st.sampled_from(["```", "~~~", "````"]))
def test_a_code_block_of_a_node_is_never_a_claim_of_its_own(lines: list[str], fence: str
                                                             ) -> None:
    """Each line of a node's fenced block, however it looks (a blank line, a `# comment`, a
    `- name:` list line), stays with its fences in one passage: code states no claim, and a
    passage cut out of a block without them was read as one (a note about another workflow
    step "corrected" a node's `name: Dump steps context` line)."""
    code = [f"{line} zq{i}" if line else "" for i, line in enumerate(lines)]
    body = f"Useful for seeing the context.\n\n{fence}yaml\n" + "\n".join(code) + \
        f"\n{fence}\n\nAfter the block.\n"
    marks = [f"zq{i}" for i, line in enumerate(lines) if line]
    found = [p for p in decide.passages(body) if any(m in p for m in marks)]
    assert all(decide._in_code(p) for p in found), found
    assert all(any(m in p for p in found) for m in marks)
    assert "After the block." in decide.passages(body)


_DUMP_NODE = """Useful for seeing what's available for `if: ` conditions (see
context and expression syntax).

```yaml
on: push

jobs:
  one:
    runs-on: ubuntu-16.04
    steps:
      - name: Dump GitHub context
        env:
          GITHUB_CONTEXT: ${{ toJson(github) }}
        run: echo "$GITHUB_CONTEXT"
      - name: Dump job context
        env:
          JOB_CONTEXT: ${{ toJson(job) }}
        run: echo "$JOB_CONTEXT"
      - name: Dump steps context
        env:
          STEPS_CONTEXT: ${{ toJson(steps) }}
        run: echo "$STEPS_CONTEXT"
      - name: Dump runner context
        env:
          RUNNER_CONTEXT: ${{ toJson(runner) }}
        run: echo "$RUNNER_CONTEXT"
      - name: Dump strategy context
        env:
          STRATEGY_CONTEXT: ${{ toJson(strategy) }}
        run: echo "$STRATEGY_CONTEXT"
      - name: Dump matrix context
        env:
          MATRIX_CONTEXT: ${{ toJson(matrix) }}
        run: echo "$MATRIX_CONTEXT"
```
"""


def test_a_note_about_another_step_corrects_no_line_of_a_workflow() -> None:
    """A whole note ("Skipping a GitHub Actions step without failing") is not a correction of
    another note's workflow because a line of its code names another system."""
    unit = ("Skipping a GitHub Actions step without failing. I wanted to have a GitHub Action "
            "step run that might fail, but if it failed the rest of the steps should still "
            "execute and the overall run should be treated as a success.")
    head = ("Dump out all GitHub Actions context. Useful for seeing what's available for if: "
            "conditions (see context and expression syntax).")
    comp = decide.compare(unit, head, _DUMP_NODE, document=True)
    assert comp.label != "same_abstraction", comp
    assert comp.conflict_kind is None, comp


_COMMANDS = st.lists(st.sampled_from([
    "Install it with `pipx install paginate-json`.",
    "Then run `paginate-json https://api.github.com/repos/simonw/llm/releases`.",
    "Add `.diff` to that URL to get back a plain text diff.",
    "I added `| pbcopy` at the end to paste the result to my clipboard.",
    "Pipe that to `llm -m claude-3.5-sonnet` to summarise the changes.",
]), min_size=2, max_size=5, unique=True)
_ASIDES = st.sampled_from([
    "I prefer 301 and 302 redirects, which is why I used `statusCode` here.",
    "There's also at least one mistake in there, which I fixed by hand.",
    "I had a long-running process and I wanted to check that it was at least doing something.",
])


@given(_COMMANDS, _ASIDES, st.integers(min_value=0, max_value=5))
def test_one_liking_among_a_how_tos_commands_files_no_preference(commands: list[str],
                                                                 aside: str, at: int) -> None:
    """A how-to is filed by what it states: one liking or one count among its commands (`I
    prefer 301 and 302`, `at least one mistake`) does not make the note a preference or a
    convention of the author (a til how-to was filed under personal/ as a preference)."""
    from remelink.models.local import structure
    from remelink.vault.notes import parse_text

    lines = [*commands]
    lines.insert(min(at, len(lines)), aside)
    note = parse_text("resource/2024-08-05/howto.md", "# Release notes with a diff\n\n" +
                      "\n\n".join(lines) + "\n")
    out, _ = structure.note_candidates(note, {}, 0)
    topics = [c for c in out if c.kind == "topic"]
    assert topics and all(c.bucket == "wiki" for c in topics), [(c.bucket, c.name) for c in out]


def test_a_note_of_likings_is_still_a_preference() -> None:
    from remelink.models.local import structure
    from remelink.vault.notes import parse_text

    note = parse_text("resource/2024-08-05/style.md", "# My review style\n\n"
                      "I prefer small pull requests over large ones.\n\n"
                      "I prefer comments that explain why, not what.\n\n"
                      "Run `make lint` before asking for a review.\n")
    out, _ = structure.note_candidates(note, {}, 0)
    assert [c.bucket for c in out if c.kind == "topic"] == ["personal"], \
        [(c.kind, c.bucket) for c in out]


_PROBLEM = st.sampled_from(["Problem", "Symptom", "Issue"])
_SOLUTION = st.sampled_from(["Solution", "Fix", "Resolution"])
_TOLD = st.sampled_from([
    "Root cause: the shell splits the argument on every quote.",
    "Lesson: never build SQL arguments by string concatenation.",
    "Result: the insert ran in 2 seconds, all 412 rows went in.",
])


@given(_PROBLEM, _SOLUTION, st.one_of(st.none(), _TOLD))
def test_a_problem_and_its_solution_is_a_how_to_a_log_tells_more(
        problem: str, solution: str, told: str | None) -> None:
    """`Problem: ...` then `Solution: ...` explains a problem and its answer (a how-to: one
    topic, the problem line kept in its place); a log tells what was found out or what came of
    the fix (a cause, a lesson, an outcome) and is a runbook (issue 21: a til how-to was written
    as `Symptom: ... Fix: 1. ...`)."""
    from remelink.models.local import structure
    from remelink.vault.notes import parse_text

    text = ("# Passing arguments using heredoc syntax\n\n"
            "I wanted to pass a query as an argument to the `sqlite-utils` CLI tool.\n\n"
            f"{problem}: this contains both single AND double quotes, which makes string "
            "escaping a tiny bit tricky.\n\n"
            f"{solution}: use heredoc syntax:\n```\nsqlite-utils data.db \"$(cat <<EOF\n"
            "select 1;\nEOF\n)\"\n```\n" + (f"\n{told}\n" if told else ""))
    out, _ = structure.note_candidates(parse_text("resource/2022-07-07/heredoc.md", text), {}, 0)
    if told is None:
        assert [c.kind for c in out] == ["topic"], [(c.kind, c.name) for c in out]
        said = fenced.unfold(" ".join([out[0].statement, *out[0].points]))
        assert "both single AND double quotes" in said and "sqlite-utils data.db" in said
    else:
        assert out[0].kind == "debug", [(c.kind, c.name) for c in out]


_WHO = st.sampled_from(["Dana", "Alice", "Tomasz", "I", "We"])
_SAID = st.sampled_from(["asked for", "said", "brought up", "agreed on", "wants", "repeated"])
_DONE = st.sampled_from(["ran", "fetched", "deployed", "restarted", "rebuilt", "opened"])
_THING = st.sampled_from(["the retention change", "the `sqlite3 --version` command",
                          "the image", "til.simonwillison.net", "the weekly status"])
_AGAIN = st.sampled_from(["again", "once more", "once again"])


@given(_WHO, _SAID, _DONE, _THING, _AGAIN)
def test_again_says_a_statement_is_said_again_only_of_a_saying(
        who: str, said: str, done: str, thing: str, again: str) -> None:
    """"again" beside a verb of saying, asking, wanting or deciding says a statement is said
    again; beside a deed or a state ("I ran the above command again", "fetched again from
    Cloudflare every time", "working again") a thing happened again: no restatement of a node
    of another note (issue 21: til lines 'restated' nodes of other tools' notes)."""
    assert decide.says_again(f"{who} {said} {thing} {again}.")
    assert decide.says_again(f"{again.capitalize()}, {who} {said} {thing}.")
    assert not decide.says_again(f"After that {who} {done} {thing} {again} and it worked.")
    assert not decide.says_again(f"Once {who} got {thing} working {again} I wanted a redirect.")


_WEBAUTHN_HEAD = "WebAuthn browser support. Every current browser supports WebAuthn passkeys."
_WEBAUTHN_BODY = """Every current browser supports WebAuthn passkeys.

Safari on iOS supports them too.

The test harness calls browser_close after 30 seconds.

Firefox supports the browser API from version 60.
"""


def test_a_whole_note_about_another_thing_updates_no_node_through_one_line() -> None:
    """A line unit that sets another value of a line deep in a node, naming what that line
    names, corrects it (the node's opening names another subject: its document's); a whole
    note about another thing (Playwright MCP, not WebAuthn) does not, whatever one of its lines
    shares with one of the node's (issue 21: a whole til note was merged into 'WebAuthn browser
    support' through 'browser')."""
    unit = ("Using Playwright MCP with Claude Code. The browser_close tool actually closes the "
            "browser after 5 seconds.")
    line = decide.compare(unit, _WEBAUTHN_HEAD, _WEBAUTHN_BODY, document=False)
    assert line.label == "same_abstraction" and line.conflict_kind == "number", line
    whole = decide.compare(unit, _WEBAUTHN_HEAD, _WEBAUTHN_BODY, document=True)
    assert whole.label != "same_abstraction" and whole.conflict_kind == "entity", whole


def test_a_whole_note_replaces_no_system_of_another_note() -> None:
    """One sentence of a whole note that decides ("I decided ...", "... should be treated as a
    success") is no decision replacing a system a node's line names: a statement's unit is
    (a CORRECT), a note's topic is not (its other lines are about its own subject)."""
    head = "Security keys for two-factor login. Security keys work for two-factor login."
    body = ("Security keys work for two-factor login.\n\n"
            "The login pages for the 2FA settings are served by pypi.org today.\n\n"
            "It works in every browser.\n")
    unit = ("Using a browser MCP server. I decided the login pages for the 2FA settings are "
            "served by microsoft/playwright-mcp today.")
    line = decide.compare(unit, head, body, document=True)
    assert line.label == "same_abstraction" and line.conflict_kind == "tool", line
    whole = decide.compare(unit, head, body, document=True, whole_note=True)
    assert whole.label != "same_abstraction" and whole.conflict_kind != "tool", whole
