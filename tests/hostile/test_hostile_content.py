"""Hidden or lost content, hangs and crashes from what a note, a model or a person does
(issue 20, cases 7, 8, 10, 11, 13), end to end: a model hiding a fact in markup, a person's
save landing while a node is integrated, tagged or given topics (no lost update, with the
edit injected at each point between read and write), a 16 KB line of `[[`, escaped surrogate
pairs in a units file and in a model's answer, lint-links on a path that does not exist and
on `git rm --cached`."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from dream_support import TODAY, settings_of
from harness import TIMEOUT, Recorder, world
from hypothesis import given, settings
from hypothesis import strategies as st

from remelink.dream.run import DreamOptions, run_dream
from remelink.models.base import AssistantTurn, Message, ToolSpec
from remelink.vault import own

pytestmark = pytest.mark.timeout(TIMEOUT * 2)
NODE = "digest/procedure/rotate-api-keys.md"  # the demo run updates it (CORRECT)
WIKI = "digest/wiki/idempotency-keys.md"
PERSON = "A line a person saved while remelink was working (keep me)."
SCRIPTS = Path(__file__).resolve().parent.parent / "fixtures" / "integrate" / "scripts"


def save_a_line(path: Path) -> None:
    """A person's editor saving the node: a new line at the end, written in place."""
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(f"\n{PERSON}\n")


# -- case 8: compare-and-swap on every node write -------------------------------------------------
def test_a_save_while_a_unit_is_integrated_is_never_overwritten(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The person saves the node after the unit read it and before its write (while the model
    worked): the commit sees it, writes nothing, and the unit is integrated again on the new
    content by the next run."""
    from remelink import integrate

    w = world(tmp_path, full=True)
    w.seal()
    real = integrate._commit
    saved: list[str] = []

    def commit_after_a_save(ctx: Any, ws: Any, unit: Any, target: str, data: bytes) -> Any:
        if target == NODE and not saved:
            save_a_line(w.vault / NODE)
            saved.append(unit.name)
        return real(ctx, ws, unit, target, data)

    monkeypatch.setattr(integrate, "_commit", commit_after_a_save)
    report, _ = w.run()
    monkeypatch.undo()
    assert saved
    text = (w.vault / NODE).read_text(encoding="utf-8")
    assert PERSON in text
    failed = [u for u in report.units if u.status == "failed"]
    assert [u.name for u in failed] == saved and "changed on disk" in (failed[0].error or "")
    again, _ = w.run()
    final = (w.vault / NODE).read_text(encoding="utf-8")
    assert final.count(PERSON) == 1 and [u.name for u in again.units] == saved
    assert all(u.status == "done" for u in again.units), again.units
    w.held()


def test_a_save_during_the_journal_fsync_is_seen(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The write-ahead record is fsynced first, then the compare, then the rename: a save that
    lands during the fsync (between the old compare and the replace) is no longer lost."""
    from remelink.dream import state as state_mod

    w = world(tmp_path, full=True)
    w.seal()
    real_log = state_mod.State.log
    saved: list[bool] = []

    def slow_log(self: Any, **kwargs: Any) -> None:
        real_log(self, **kwargs)
        if not saved and any(self.units[u].status == "committing" and self.units[u].target ==
                             NODE for u in kwargs.get("units", ()) if u in self.units):
            save_a_line(w.vault / NODE)
            saved.append(True)

    monkeypatch.setattr(state_mod.State, "log", slow_log)
    report, _ = w.run()
    assert saved, "no unit committed to the node"
    assert PERSON in (w.vault / NODE).read_text(encoding="utf-8")
    assert any("changed on disk" in (u.error or "") for u in report.units)
    w.held()


def test_a_save_while_a_node_is_tagged_is_kept_and_the_tags_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tag step read the node, asked the model, and wrote without checking: the line a
    person saved in between was lost. Now the write is a compare-and-swap, and the node is
    tagged again on its new content."""
    from remelink.dream import autotag

    w = world(tmp_path)
    w.seal()
    real = autotag._propose
    edited: list[str] = []

    def propose_while_a_person_saves(ctx: Any, note: Any, existing: list[str]) -> list[Any]:
        if not edited:
            save_a_line(ctx.vault / note.path)
            edited.append(note.path)
        return real(ctx, note, existing)

    monkeypatch.setattr(autotag, "_propose", propose_while_a_person_saves)
    report, out = w.run()
    assert edited
    text = (w.vault / edited[0]).read_text(encoding="utf-8")
    assert PERSON in text and text.count(PERSON) == 1
    assert report.tags.get(edited[0]), out  # tagged on the new content
    assert "memory_tags" in text
    w.held(out)


def test_a_node_saved_at_every_tagging_round_is_left_as_it_is(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from remelink.dream import autotag

    w = world(tmp_path)
    w.seal()
    real = autotag._propose
    target: list[str] = []

    def always_saving(ctx: Any, note: Any, existing: list[str]) -> list[Any]:
        if not target or note.path == target[0]:
            target[:1] = [note.path]
            save_a_line(ctx.vault / note.path)
        return real(ctx, note, existing)

    monkeypatch.setattr(autotag, "_propose", always_saving)
    report, out = w.run()
    text = (w.vault / target[0]).read_text(encoding="utf-8")
    assert text.count(PERSON) == autotag.MAX_REDO
    assert any(f"{target[0]}: tagging failed" in line and "changed on disk" in line
               for line in report.warnings), report.warnings
    w.held(out)


def test_a_save_while_the_topics_are_chosen_is_kept(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from remelink.dream import topics

    w = world(tmp_path)
    settings = settings_of(w.vault, steps=("dream_extract_step", "dream_integrate_step",
                                           "dream_finish_step", "dream_topics_step"))
    day = w.vault / "daily" / TODAY
    day.mkdir(parents=True, exist_ok=True)
    (day / "notes.md").write_text("# Notes\n\nWe decided to rotate keys every 24 hours.\n",
                                  encoding="utf-8")
    w.seal()
    real = topics._select
    mine = "topics:\n- title: A topic a person added\n  reason: kept by hand\n"

    def select_while_a_person_saves(*args: Any, **kwargs: Any) -> Any:
        path = day / "interests.yaml"
        if not path.exists():
            path.write_text(mine, encoding="utf-8")
        return real(*args, **kwargs)

    monkeypatch.setattr(topics, "_select", select_while_a_person_saves)
    report, out = w.run(settings=settings)
    text = (day / "interests.yaml").read_text(encoding="utf-8")
    assert "A topic a person added" in text, text
    assert len(report.topics) >= 2, report.topics
    w.before_raw = {k: v for k, v in w.before_raw.items() if "interests" not in k}
    w.held(out)


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=200), st.binary(max_size=200), st.booleans())
def test_replace_if_replaces_only_what_was_read(on_disk: bytes, new: bytes,
                                                same: bool) -> None:
    """The property under every node write: the file is replaced by `new` exactly when it
    still holds what was read; otherwise it keeps every byte it had."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "digest").mkdir()
        (root / "digest" / "n.md").write_bytes(on_disk)
        expected = on_disk if same else on_disk + b"!"
        done = own.replace_if(root, "digest/n.md", new, expected)
        assert done is same
        assert (root / "digest" / "n.md").read_bytes() == (new if same else on_disk)
        # A create: only where nothing is.
        assert own.replace_if(root, "digest/n.md", new, None) is False
        assert own.replace_if(root, "digest/m.md", new, None) is True
        assert (root / "digest" / "m.md").read_bytes() == new
        assert sorted(p.name for p in (root / "digest").iterdir()) == ["m.md", "n.md"]


# -- case 7: a model hides a fact, a link and a Sources sentence -----------------------------------
def test_a_model_hiding_content_in_one_corroborate_is_refused(tmp_path: Path) -> None:
    """Wrapping the fact in a comment, a link line in `%%`, and replacing the Sources sentence
    by a quote, in one CORROBORATE: it was accepted, exit 0, lint clean."""
    w = world(tmp_path)
    node = (w.vault / WIKI).read_text(encoding="utf-8")
    _head, body = node.split("\n---\n", 1)
    lines = body.split("\n")
    fact = next(line for line in lines if line.strip() and not line.startswith("#")
                and "[[" not in line)
    link = next((line for line in lines if "[[digest/" in line), None)
    hidden = body.replace(fact, f"<!-- {fact} -->")
    if link is not None:
        hidden = hidden.replace(link, f"%% {link} %%")
    source = next(line for line in lines if "[[daily/" in line)
    hidden = hidden.replace(source, f"> Corrected on 2026-06-25: {source.lstrip('- ')}")
    script = w.root / "script.yaml"
    write = {"name": "write", "arguments": {
        "path": WIKI, "name": "Idempotency keys",
        "description": "A client-supplied key that lets a server recognise a retried request.",
        "content": hidden}}
    receipt = json.dumps({"action": "CORROBORATE", "target_path": WIKI, "note": "same"})
    script.write_text(json.dumps({"steps": [
        {"tool_calls": [write]},
        {"text": receipt, "expect": "would be lost"},
        {"text": receipt}, {"text": receipt}, {"text": receipt}]}), encoding="utf-8")
    units = w.root / "units.yaml"
    units.write_text(json.dumps([{"name": "Idempotency keys", "bucket": "wiki",
                                  "summary": "A retried POST carries the same key.",
                                  "paths": ["daily/2026-06-01/payments-retry.md"]}]),
                     encoding="utf-8")
    w.seal()
    before = (w.vault / WIKI).read_bytes()
    result = w.cli("integrate", str(units), "--model", f"scripted:{script}")
    out = result.stdout + result.stderr
    assert "Traceback" not in out
    after = (w.vault / WIKI).read_bytes()
    # The write was refused (the model was told what it would lose), so nothing hid anything.
    assert after == before and b"<!--" not in after
    w.held(out)


# -- case 10: a line of 8,000 `[[` ---------------------------------------------------------------
def test_a_16_kb_line_of_wikilink_openers_does_not_hold_the_vault(tmp_path: Path) -> None:
    w = world(tmp_path)
    day = w.vault / "daily" / "2026-06-24"
    day.mkdir(parents=True)
    (day / "brackets.md").write_text("# Brackets\n\nWe decided to keep this: " + "[[" * 8000 +
                                     "\n", encoding="utf-8")
    (day / "more.md").write_text("# Links\n\nWe decided that " + "[[a|" * 4000 + " and " +
                                 "![[" * 3000 + "\n\n" + "[" * 16000 + "\n", encoding="utf-8")
    w.seal()
    started = time.monotonic()
    _report, out = w.run()
    assert time.monotonic() - started < 60  # was past 120 s, holding the vault lock
    w.held(out)
    started = time.monotonic()
    result = w.lint()
    assert time.monotonic() - started < 30 and "Traceback" not in result.stderr


# -- case 11: escaped surrogate pairs -------------------------------------------------------------
def test_escaped_surrogates_in_a_units_file(tmp_path: Path) -> None:
    w = world(tmp_path)
    units = w.root / "units.yaml"
    units.write_text('- name: "Deploy \\ud83d\\ude80 rockets"\n  bucket: wiki\n'
                     '  summary: "Deploys \\ud83d\\ude80 go out before noon \\udc80."\n'
                     '  paths: [daily/2026-06-01/payments-retry.md]\n', encoding="utf-8")
    w.seal()
    result = w.cli("integrate", str(units))
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "UnicodeEncodeError" not in out and "unexpected" not in out
    nodes = "".join(p.read_text(encoding="utf-8") for p in (w.vault / "digest").rglob("*.md"))
    assert "🚀" in nodes
    w.held(out)


def test_escaped_surrogates_in_a_models_extraction_answer() -> None:
    """The YAML fallback of a model's answer: PyYAML keeps the two halves of an escaped pair."""
    from remelink.agent import parse_object

    answer = ('units:\n- name: "Deploy \\ud83d\\ude80"\n  bucket: wiki\n'
              '  summary: "Ship \\ud83d\\ude80 lone \\udc80"\n  paths: [daily/x.md]\n')
    data = parse_object(answer, ("units",))
    assert data is not None
    unit = data["units"][0]
    assert unit["name"] == "Deploy 🚀" and unit["summary"] == "Ship 🚀 lone \ufffd"
    json.dumps(data, ensure_ascii=False).encode("utf-8")  # encodes: no lone surrogate left


def test_escaped_surrogates_in_a_scripted_extraction_run(tmp_path: Path) -> None:
    """A whole dream run whose extraction answer (YAML, from a scripted model) carries escaped
    surrogate pairs: the run integrates the unit; nothing aborts."""
    w = world(tmp_path)
    for p in list((w.vault / "daily").rglob("*.md")):
        if "payments-retry" not in p.name:
            p.unlink()
    w.seal()

    class Answering(Recorder):
        """The local engine, except that its extraction answer is YAML with escapes."""

        def complete(self, messages: Sequence[Message],
                     tools: Sequence[ToolSpec]) -> AssistantTurn:
            turn = super().complete(messages, tools)
            if turn.text and '"units"' in turn.text and not turn.tool_calls:
                data = json.loads(turn.text)
                if data.get("units"):
                    data["units"][0]["name"] = "Retry rockets \U0001f680"
                    import yaml

                    text = yaml.safe_dump(data, allow_unicode=True)
                    text = text.replace("\U0001f680", "\\ud83d\\ude80")
                    text = text.replace("Retry rockets \\ud83d\\ude80",
                                        '"Retry rockets \\ud83d\\ude80"')
                    return AssistantTurn(text=text, tool_calls=(), usage=turn.usage)
            return turn

    model = Answering(w.settings())
    report = run_dream(w.vault, w.settings(), model, DreamOptions(today=TODAY))
    assert report.units and all(u.status == "done" for u in report.units), report.units
    w.held()


# -- case 13: lint-links ---------------------------------------------------------------------------
def test_lint_links_on_a_path_that_does_not_exist(tmp_path: Path) -> None:
    w = world(tmp_path)
    w.seal()
    result = w.lint("digest/wiki/othr.md")
    w.held(result.stdout + result.stderr, needle="digest/wiki/othr.md")
    assert result.returncode == 2 and "no such file" in result.stderr


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
def test_git_rm_cached_of_a_cited_note_fails_the_staged_hook(tmp_path: Path) -> None:
    w = world(tmp_path)

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(w.vault), "-c", "user.email=t@example.org",
                        "-c", "user.name=t", *args], capture_output=True, check=True)

    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "init")
    git("rm", "-q", "--cached", "daily/2026-06-01/payments-retry.md")
    w.seal()
    exe = Path(sys.executable).with_name("remelink-lint-links")
    result = subprocess.run([str(exe), "--staged"], capture_output=True, text=True, timeout=60,
                            cwd=w.vault, check=False)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "the commit deletes it" in result.stdout
    w.held(result.stdout + result.stderr)
