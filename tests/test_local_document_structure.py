"""A node written from one document keeps the document's structure (issue 21): the lines it
keeps of a section sit under that section's heading (a level-3 heading before the first kept
line; `## Sources` stays the only level-2 section), and the author's own notices about the
note (an `Update:`, a `Note:`, a warning quoted at its top, a retraction) are kept with their
label, in their place."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from local_support import dream

from remelink.lint.core import lint_links

POLLING = """# Polling a calendar feed from a script

> The OOB flow described in this document has been scheduled for deprecation by Google.

A calendar feed is an ICS file served over HTTP that a calendar app polls for changes.

## Using this with pytest

Mark the test with `@pytest.mark.vcr` so the feed is recorded once and replayed after that.

```python
@pytest.mark.vcr
def test_feed():
    assert fetch_feed("https://example.com/cal.ics")
```

## The catch: polling frequency

Google Calendar polls for updates to the feed less than once every 24 hours.

**Update:** Outlook polls every 3 hours, so a change shows up there first.

## I was wrong about caching

I was entirely wrong about the ETag header in the first version of this note. My bug fix was
incorrect: the feed must be served without `Cache-Control: max-age`, or Google keeps the old copy.
"""

DEBUG = """# Flaky upload test

## Symptom

The upload test fails one run in ten with `ConnectionResetError` on CI.

## Cause

The test server closed idle connections after 5 seconds while the client reused them.

## Fix

1. Set `keepalive_expiry=2` on the client.
2. Rerun the suite 50 times with `pytest -x --count 50`.
"""


RUNBOOK = """# Running Dolly 2.0 on Paperspace

Here's what I did.

1. Start a new GPU instance with `paperspace machines create --gpu A100`.
2. Run `pip install transformers torch accelerate -U` in its terminal.
3. Run `python -c "import dolly"` to load the model.

## Dolly v2-3b on Colab

A notebook runs the smaller model on Colab with `device_map="auto"` in 10-30 seconds.
"""


DESIGN = """# Posting consumer design

## Design

Producers publish a `PostingRequested` event to the Kafka topic `journal.postings.v2`.

## Failure handling

A posting that fails validation goes to `journal.postings.dlq` and pages the on-call after 10
messages in 5 minutes.
"""


def _node(digest: dict[str, str], note: str) -> str:
    found = [text for text in digest.values() if f"[[{note}" in text]
    assert len(found) == 1, list(digest)
    return found[0]


def _body(node: str) -> str:
    return node.split("\n---\n", 1)[1].split("\n## Sources", 1)[0]


def _heading_over(body: str, needle: str) -> str:
    """The heading nearest above the line of `body` holding `needle` ("" for none)."""
    heading = ""
    for line in body.split("\n"):
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        if needle in line:
            return heading
    raise AssertionError(f"{needle!r} not in the node")


def test_kept_lines_sit_under_their_sections_heading(tmp_path: Path) -> None:
    digest = dream(tmp_path, {"resource/2024-05-01/polling.md": POLLING})
    body = _body(_node(digest, "resource/2024-05-01/polling.md"))
    assert _heading_over(body, "@pytest.mark.vcr") == "Using this with pytest"
    assert _heading_over(body, "less than once every 24 hours") == \
        "The catch: polling frequency"
    assert "### Using this with pytest" in body and "### The catch: polling frequency" in body
    # Level 3 only: `## Sources` is the only level-2 section; the title is never repeated.
    assert not re.search(r"^#{1,2} ", body, re.M)
    assert "Polling a calendar feed from a script" not in re.findall(r"^#+ (.*)$", body, re.M)
    assert lint_links(tmp_path).errors == 0


def test_the_authors_notices_are_kept_with_their_label_in_their_place(tmp_path: Path) -> None:
    digest = dream(tmp_path, {"resource/2024-05-01/polling.md": POLLING})
    body = _body(_node(digest, "resource/2024-05-01/polling.md"))
    # A quote that opens the note, before its body: the author's notice, not an aside.
    assert "The OOB flow described in this document has been scheduled for deprecation by " \
        "Google." in body
    # A labelled update keeps its label, in its section.
    assert "Update: Outlook polls every 3 hours" in body
    assert _heading_over(body, "Outlook polls every 3 hours") == "The catch: polling frequency"
    # A retraction is kept whole: the node does not state the wrong claim alone.
    assert "I was entirely wrong about the ETag header" in body
    assert "My bug fix was incorrect" in body


def test_a_line_after_a_runbooks_steps_keeps_its_heading(tmp_path: Path) -> None:
    digest = dream(tmp_path, {"resource/2024-05-01/dolly.md": RUNBOOK})
    body = _body(_node(digest, "resource/2024-05-01/dolly.md"))
    assert re.search(r"^1\. Start a new GPU instance", body, re.M)  # still a runbook
    assert _heading_over(body, 'device_map="auto"') == "Dolly v2-3b on Colab"


def test_a_lesson_drawn_after_the_walk_sits_under_no_heading(tmp_path: Path) -> None:
    # A failure section's statements become lessons after the walk (their order is no
    # section of the note): the node is written, each line once.
    digest = dream(tmp_path, {"resource/2024-05-01/design.md": DESIGN})
    body = _body(_node(digest, "resource/2024-05-01/design.md"))
    assert "`journal.postings.v2`" in body and "`journal.postings.dlq`" in body
    written = re.findall(r"^#+ (.*)$", body, re.M)
    assert len(written) == len(set(written))


def test_a_debugging_logs_label_headings_are_roles_not_headings(tmp_path: Path) -> None:
    digest = dream(tmp_path, {"resource/2024-05-01/flaky.md": DEBUG})
    body = _body(_node(digest, "resource/2024-05-01/flaky.md"))
    assert "keepalive_expiry=2" in body
    assert not re.search(r"^#+ (?:Symptom|Cause|Fix)\s*$", body, re.M)


_HEADINGS = ["Using this with pytest", "The catch: polling frequency", "Running it in CI",
             "An alternative with `jq`", "Cleaning up afterwards", "What the output looks like"]
_NAMES = ["timeout", "retries", "page_size", "max_age", "batch", "workers", "interval"]


@st.composite
def _document(draw: st.DrawFn) -> tuple[str, dict[str, str]]:
    """A how-to note of 1-4 sections, each line naming one setting (so it is kept: code and
    a number), and the heading each line sits under."""
    headings = draw(st.lists(st.sampled_from(_HEADINGS), min_size=1, max_size=4, unique=True))
    lines = ["# Tuning the exporter", "",
             "The exporter reads a queue and writes Parquet files to a bucket.", ""]
    under: dict[str, str] = {}
    n = 0
    for heading in headings:
        lines += [f"## {heading}", ""]
        for _ in range(draw(st.integers(1, 3))):
            n += 1
            name = f"{draw(st.sampled_from(_NAMES))}_{n}"
            lines += [f"Set `{name}` to {n * 7} seconds when the queue holds over {n} jobs.", ""]
            under[f"`{name}`"] = heading
    return "\n".join(lines), under


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(_document())
def test_every_kept_section_line_is_preceded_by_its_heading(
        doc: tuple[str, dict[str, str]]) -> None:
    text, under = doc
    with tempfile.TemporaryDirectory(prefix="remelink-structure-") as tmp:
        root = Path(tmp)
        digest = dream(root, {"resource/2024-05-01/exporter.md": text})
        node = _node(digest, "resource/2024-05-01/exporter.md")
        body = _body(node)
        written = re.findall(r"^#+ (.*)$", body, re.M)
        assert len(written) == len(set(written))  # no heading twice
        assert all(line.startswith("### ") for line in body.split("\n") if line.startswith("#"))
        first = body.strip().split("\n\n", 1)[0]  # the lead statement opens the node
        for needle, heading in under.items():
            if needle in body and needle not in first:
                assert _heading_over(body, needle) == heading
        assert lint_links(root).errors == 0


def test_code_is_copied_longer_than_what_came_out_of_it() -> None:
    """A node copies a 60-line `python` block (the code a how-to exists for), but points to a
    60-line block of output or data (`json`, `text`, or no language named): a 77-line output
    copied beside its code made a node longer than its note."""
    from remelink.models.local import fenced

    body = [f"    x{i} = {i}" for i in range(60)]
    for lang, copied in (("python", True), ("sql", True), ("yaml", True), ("json", False),
                         ("text", False), ("", False)):
        block = [f"```{lang}", *body, "```"]
        (line, is_block), = fenced.split_body(block, 1, "resource/a.md")
        assert is_block
        assert (fenced.unfold(line).split("\n") == block) is copied, lang
        assert ("60-line" in fenced.unfold(line)) is not copied, lang
