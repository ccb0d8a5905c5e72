"""Whole notes nobody here wrote (issue 21, til-simonw tune side): what a node's code says, and
when one note updates another note's node."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from remelink.models.local import decide

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
