"""The tag step only adds (SPEC §10.2, issue case 5), on the demo vault: tags and comments a
person wrote survive a run that updates their node, byte for byte; no empty list is written;
the same for every key the engine did not write. And the property behind it, over generated
frontmatter: appending tags keeps every byte that was there."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from harness import TIMEOUT, world
from hypothesis import given, settings
from hypothesis import strategies as st

from remelink.errors import NoteError
from remelink.vault import frontmatter
from remelink.vault.notes import parse_text, read_note

pytestmark = pytest.mark.timeout(TIMEOUT)
ROTATE = "digest/procedure/rotate-api-keys.md"
KEYS = "digest/wiki/idempotency-keys.md"
REVIEW = "digest/personal/review-style.md"


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_human_tags_and_comments_survive_a_run_that_updates_their_node(tmp_path: Path) -> None:
    w = world(tmp_path, full=True)
    rotate, keys = w.vault / ROTATE, w.vault / KEYS
    edit(rotate, "kind: procedure\n",
         "kind: procedure\nmemory_tags: [SOC2, Security Team]\nowner: Bob  # rotates the keys\n")
    edit(keys, "memory_tags: []", "memory_tags: [Vault]   # keep me")
    review = w.vault / REVIEW
    edit(review, "---\n", "---\n# reviewed by hand; do not reorder\n")
    w.seal()
    report, out = w.run()
    assert ROTATE in report.updated, out  # the run did update the node
    rotate_text = rotate.read_text(encoding="utf-8")
    # The person's list is kept as written, in front of anything the step added.
    tags_line = next(line for line in rotate_text.splitlines()
                     if line.startswith("memory_tags:"))
    assert tags_line.startswith("memory_tags: [SOC2, Security Team"), tags_line
    assert "owner: Bob  # rotates the keys\n" in rotate_text
    meta = frontmatter.load(read_note(w.vault, ROTATE))
    assert meta["memory_tags"][:2] == ["SOC2", "Security Team"] and len(meta["memory_tags"]) <= 3
    keys_text = keys.read_text(encoding="utf-8")
    assert re.search(r"^memory_tags: \[Vault(, [^\]]+)?\]   # keep me$", keys_text, re.M), \
        keys_text
    assert "# reviewed by hand; do not reorder\n" in review.read_text(encoding="utf-8")
    for path in (w.vault / "digest").rglob("*.md"):
        text = path.read_text(encoding="utf-8")
        if path != keys:
            assert "memory_tags: []" not in text, path  # an empty list is never written
    w.held(out)
    _again, _ = w.run()
    assert rotate.read_text(encoding="utf-8") == rotate_text  # a rerun adds nothing


def test_a_tags_value_that_is_not_a_list_is_left_as_written_and_reported(
        tmp_path: Path) -> None:
    w = world(tmp_path, full=True)
    rotate = w.vault / ROTATE
    edit(rotate, "kind: procedure\n", "kind: procedure\nmemory_tags: Security   # by hand\n")
    w.seal()
    _report, out = w.run()
    assert "memory_tags: Security   # by hand\n" in rotate.read_text(encoding="utf-8")
    w.held(out, needle=f"{ROTATE}: tagging failed")


# -- the property ---------------------------------------------------------------------------------
TAG = st.text(st.sampled_from(list("abcXYZ09 _-:#'\"数é")), min_size=1, max_size=10).filter(
    lambda t: t.strip() != "")
COMMENT = st.sampled_from(["", "  # keep me", "   # 人写的", " #x"])


@given(human=st.lists(TAG, min_size=0, max_size=4), added=st.lists(TAG, min_size=1, max_size=3),
       flow=st.booleans(), crlf=st.booleans(), comment=COMMENT,
       other=st.sampled_from(["", "owner: Bob  # lead\n", "x: [1, 2]\n"]))
@settings(max_examples=300, deadline=None)
def test_appending_tags_keeps_every_byte_a_person_wrote(
        human: list[str], added: list[str], flow: bool, crlf: bool, comment: str,
        other: str) -> None:
    import yaml

    nl = "\r\n" if crlf else "\n"
    if flow:
        items = yaml.safe_dump(human, default_flow_style=True, allow_unicode=True,
                               width=1 << 30).strip()
        tags = f"memory_tags: {items}{comment}\n"
    else:
        items = "".join(yaml.safe_dump([t], allow_unicode=True, width=1 << 30).replace(
            "- ", "  - ", 1) for t in human) if human else ""
        tags = f"memory_tags:{comment}\n{items}" if human else f"memory_tags: []{comment}\n"
    fm = f"name: N\n{tags}{other}description: D\n".replace("\n", nl)
    note = parse_text("n.md", f"---{nl}{fm}---{nl}Body{nl}")
    try:
        before = frontmatter.load(note)
    except NoteError:
        return  # a generated block YAML does not read: not a frontmatter anyone has
    if before.get("memory_tags") is None:
        before["memory_tags"] = []
    result = frontmatter.extend_list(note, "memory_tags", added)
    after = frontmatter.load(result)
    assert after["memory_tags"] == [*before["memory_tags"], *added]
    assert {k: v for k, v in after.items() if k != "memory_tags"} == \
        {k: v for k, v in before.items() if k != "memory_tags"}
    assert result.body == note.body
    old_lines = note.text.splitlines(keepends=True)
    new_lines = result.text.splitlines(keepends=True)
    # Every line of the original is still there, in order, byte for byte, except the one flow
    # line that received the items, which still starts with what the person wrote up to the
    # last item and still ends with their comment.
    changed = [line for line in old_lines if line not in new_lines]
    assert len(changed) <= 1, (note.text, result.text)
    for line in changed:
        assert line.startswith("memory_tags:") and comment.strip() in line
        kept = next(n for n in new_lines if n.startswith("memory_tags:"))
        assert kept.endswith(line[line.index("]"):]) if "]" in line else True
