"""Hostile tool arguments and what tools touch: nesting that would recurse (a RecursionError
killed `integrate` and `dream run`), an exception inside a tool, a run that dies (status showed
it as running), mixed line endings (`edit` failed: "old text not found"), frontmatter values
outside SPEC §2, a person's keys. Every failure goes back to the model as an `Error:` result."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
import yaml
from harness import TIMEOUT, World, world
from hypothesis import given, settings
from hypothesis import strategies as st

from remelink.dream.state import State
from remelink.integrate import integrate
from remelink.models.base import ToolCall
from remelink.models.scripted import ScriptedModel
from remelink.tools.line_endings import find_once, with_endings_of
from remelink.tools.vault_tools import toolbox
from remelink.units import Unit
from remelink.vault import frontmatter
from remelink.vault.notes import parse_text
from remelink.workspace import UnitWorkspace

pytestmark = pytest.mark.timeout(TIMEOUT)
NODE = "digest/wiki/idempotency-keys.md"
RAW = "daily/2026-06-01/payments-retry.md"
NESTED = "[" * 5000 + "]" * 5000
UNIT = Unit(name="Keys on every charge", bucket="wiki",
            summary="Every money-moving POST needs an idempotency key.", paths=(RAW,))


def receipt(action: str = "CORROBORATE", target: str = NODE) -> str:
    return json.dumps({"action": action, "target_path": target, "note": "n"})


def raw_call(name: str, arguments: str) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


# -- bounded arguments, exceptions as results ---------------------------------------------------
def test_nested_metadata_is_an_error_result_in_integrate(tmp_path: Path) -> None:
    """Issue case 6, through the CLI: the unit goes on (the model gets `Error:`), exit 0."""
    w = world(tmp_path)
    script = [
        {"tool_calls": [raw_call("frontmatter_update",
                                 f'{{"path": "{NODE}", "metadata": {{"x": {NESTED}}}}}')]},
        {"expect": "Error: arguments nest more than",
         "tool_calls": [raw_call("read", json.dumps({"path": NODE}))]},
        {"text": receipt()},
    ]
    (w.root / "script.yaml").write_text(yaml.safe_dump(script), encoding="utf-8")
    (w.root / "units.yaml").write_text(yaml.safe_dump([UNIT.as_dict()]), encoding="utf-8")
    w.seal()
    result = w.cli("integrate", str(w.root / "units.yaml"), "--model",
                   f"scripted:{w.root / 'script.yaml'}")
    w.held(result.stdout + result.stderr)
    assert "RecursionError" not in result.stdout + result.stderr
    assert result.returncode == 0, result.stdout + result.stderr
    assert not list((w.vault / ".remelink").glob("crash-*.log"))


def test_nested_metadata_in_a_dream_run_with_an_llm(tmp_path: Path) -> None:
    w = world(tmp_path)
    for extra in ("daily", "resource", "digest"):
        for path in sorted((w.vault / extra).rglob("*"), reverse=True):
            if path.is_file() and path.as_posix().find(RAW) < 0:
                path.unlink()
    unit = {"name": UNIT.name, "bucket": "wiki", "summary": UNIT.summary, "paths": [RAW]}
    target = "digest/wiki/keys-on-every-charge.md"
    body = ("Every money-moving POST carries an idempotency key.\n\n## Sources\n\n"
            f"The rule comes from the duplicate charge in [[{RAW}]].\n")
    model = ScriptedModel([
        {"expect": '"task": "extract"', "text": json.dumps({"units": [unit]})},
        {"tool_calls": [raw_call("frontmatter_update",
                                 f'{{"path": "{target}", "metadata": {{"x": {NESTED}}}}}')]},
        {"expect": "Error: arguments nest more than", "tool_calls": [raw_call("write", json.dumps(
            {"path": target, "name": UNIT.name, "description": UNIT.summary, "content": body,
             "metadata": {"kind": "concept"}}))]},
        {"expect": "Staged", "text": receipt("CREATE", target)},
        {"expect": "Tag the node", "text": '{"tags": []}'},
    ])
    w.seal()
    from dream_support import run

    report = run(w.vault, model)
    model.assert_done()
    assert report.ok, report.errors
    assert [(u.status, u.action) for u in report.units] == [("done", "CREATE")]
    w.held()


def box(w: World, *, unit: Unit | None = UNIT) -> Any:
    ws = UnitWorkspace(w.vault, w.settings(), unit, lambda q, n, b: [])
    return toolbox(ws), ws


def call(b: Any, name: str, arguments: dict[str, Any] | str) -> str:
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return str(b.call(ToolCall(id="c", name=name, arguments=raw)).result)


@pytest.mark.parametrize("arguments", [
    f'{{"path": "{NODE}", "metadata": {{"x": {NESTED}}}}}',
    f'{{"path": "{NODE}", "metadata": {{"x": ' + '{"a": ' * 3000 + "1" + "}" * 3000 + "}}",
    f'{{"path": {NESTED}}}',
    '{"path": "' + "[" * 100 + '", "metadata": {"k": "v"}}',  # brackets in a string: fine
])
def test_deep_arguments_are_refused_before_parsing(tmp_path: Path, arguments: str) -> None:
    w = world(tmp_path)
    b, _ = box(w)
    out = call(b, "frontmatter_update", arguments)
    assert out.startswith("Error:") and "\n" not in out


def test_an_unexpected_exception_inside_a_tool_is_an_error_result(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    w = world(tmp_path)
    b, _ = box(w)

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise KeyError("surprise")

    monkeypatch.setattr(frontmatter, "load", boom)
    out = call(b, "frontmatter_read", {"path": NODE})
    assert out == "Error: frontmatter_read failed: KeyError: 'surprise'"


def test_a_run_that_dies_is_marked_failed_not_running(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dream_support import cli, run

    import remelink.dream.run as run_module

    w = world(tmp_path)

    def dies(ctx: Any) -> None:
        raise RuntimeError("the step crashed")

    monkeypatch.setitem(run_module.STEPS, "dream_integrate_step", dies)
    with pytest.raises(RuntimeError):
        run(w.vault)
    (last,) = State.load(w.vault).runs
    assert last["finished"] and last["ok"] is False and "the step crashed" in last["failed"]
    status = cli("status", "--vault", str(w.vault))
    assert "running" not in status.output, status.output


def test_status_never_shows_a_dead_run_as_running(tmp_path: Path) -> None:
    """A run killed before even its failure was saved: nobody holds the lock, so it is not
    running, whatever state.json says."""
    from dream_support import cli

    w = world(tmp_path)
    (w.vault / ".remelink" / "state.json").write_text(json.dumps(
        {"version": 1, "inputs": {}, "units": {}, "pending_tags": [],
         "runs": [{"id": "20260101T000000-1-abcd", "started": "x", "finished": None}]}),
        encoding="utf-8")
    status = cli("status", "--vault", str(w.vault))
    assert "interrupted" in status.output and "running" not in status.output


# -- mixed line endings --------------------------------------------------------------------------
def mixed(w: World) -> bytes:
    """LF frontmatter, CRLF body (issue case 7), one LF line among them."""
    path = w.vault / NODE
    data = path.read_bytes()
    head, sep, body = data.partition(b"---\n")[2].partition(b"---\n")
    body = body.replace(b"\n", b"\r\n").replace(b"same request, so retries never repeat a "
                                                b"side effect such as a charge.\r\n",
                                                b"same request, so retries never repeat a "
                                                b"side effect such as a charge.\n")
    new = b"---\n" + head + sep + body
    path.write_bytes(new)
    return new


def test_edit_works_on_lf_frontmatter_over_a_crlf_body(tmp_path: Path) -> None:
    w = world(tmp_path)
    before = mixed(w)
    b, ws = box(w)
    # An insertion (updates only insert, SPEC 7.2) whose span crosses a CRLF line break.
    span = "The server stores the key with the first response for 24 hours and replays that " \
           "response when\nthe key"
    out = call(b, "edit", {"path": NODE, "old": span,
                           "new": "Keys are scoped to one client.\n" + span})
    assert out.startswith("Staged edit"), out
    after = ws.staged.render()
    assert after.startswith(before[:before.index(b"The server")])  # untouched before the span
    assert b"Keys are scoped to one client.\r\nThe server stores the key with the first " \
           b"response for 24 hours and replays that response when\r\nthe key" in after
    assert after.endswith(before[before.index(b"\r\n## Sources"):])
    assert b"a charge.\n" in after  # the LF line kept its LF


def test_local_engine_updates_a_mixed_ending_node(tmp_path: Path) -> None:
    """The whole run on the demo vault with the node made mixed: no unit fails."""
    w = world(tmp_path)
    mixed(w)
    w.seal()
    report, out = w.run()
    assert report.ok, out
    assert not [u for u in report.units if u.status == "failed"], out
    data = (w.vault / NODE).read_bytes()
    assert data.startswith(b"---\nname:")  # the LF frontmatter stayed LF
    w.held(out)


ENDINGS = st.sampled_from(["\n", "\r\n"])
LINE = st.text(st.sampled_from(list("ab c.-#[]数")), min_size=0, max_size=12)


@given(lines=st.lists(st.tuples(LINE, ENDINGS), min_size=1, max_size=12),
       span=st.tuples(st.integers(0, 11), st.integers(0, 11)),
       new=st.lists(LINE, min_size=1, max_size=4), seed=st.integers(0, 10**6))
@settings(max_examples=300, deadline=None)
def test_an_edit_changes_only_its_span_and_keeps_each_lines_ending(
        lines: list[tuple[str, str]], span: tuple[int, int], new: list[str], seed: int) -> None:
    random.seed(seed)
    lines = [(f"<{i}>{text}", end) for i, (text, end) in enumerate(lines)]  # lines unique
    body = "".join(text + end for text, end in lines)
    a, z = sorted((min(span[0], len(lines) - 1), min(span[1], len(lines) - 1)))
    old = "\n".join(text for text, _ in lines[a:z + 1])  # what the model saw (LF, no \r)
    found = find_once(body, old)
    assert isinstance(found, tuple), (body, old)
    start, end = found
    assert body[start:end].replace("\r\n", "\n") == old
    replacement = "\n".join(new)
    text = with_endings_of(replacement, body, start, end, "\n")
    out = body[:start] + text + body[end:]
    assert out[:start] == body[:start] and out[start + len(text):] == body[end:]
    spans = [e for _, e in lines[a:z]]  # the endings inside the replaced span
    got = [("\r\n" if text[i - 1:i] == "\r" else "\n") for i, ch in enumerate(text) if ch == "\n"]
    for i, ending in enumerate(got):
        if i < len(spans):
            assert ending == spans[i]


# -- frontmatter values and a person's keys ----------------------------------------------------
@pytest.mark.parametrize(("metadata", "error"), [
    ({"kind": "admin"}, "kind is 'admin'; it must be one of"),
    ({"memory_tags": "not-a-list"}, "memory_tags is a str"),
    ({"memory_tags": ["ok", 3]}, "memory_tags holds 3"),
    ({"memory_tags": [""]}, "memory_tags holds ''"),
])
def test_frontmatter_values_outside_spec_are_refused(
        tmp_path: Path, metadata: dict[str, Any], error: str) -> None:
    w = world(tmp_path)
    b, ws = box(w)
    out = call(b, "frontmatter_update", {"path": NODE, "metadata": metadata})
    assert out.startswith("Error:") and error in out, out
    out = call(b, "write", {"path": "digest/wiki/keys-on-every-charge.md", "name": "K",
                            "description": "D", "content": "B.\n\n## Sources\n\nFrom "
                            f"[[{RAW}]].\n", "metadata": metadata})
    assert out.startswith("Error:") and error in out, out
    assert ws.staged is None


def test_lint_reports_invalid_values_in_digest_nodes(tmp_path: Path) -> None:
    w = world(tmp_path)
    path = w.vault / NODE
    path.write_text(path.read_text(encoding="utf-8").replace(
        "kind: concept\nmemory_tags: []", "kind: admin\nmemory_tags: not-a-list"),
        encoding="utf-8")
    lint = w.lint(NODE)
    assert lint.returncode == 1
    assert "kind is 'admin'" in lint.stdout and "memory_tags is a str" in lint.stdout


def test_a_persons_keys_are_never_changed(tmp_path: Path) -> None:
    w = world(tmp_path)
    path = w.vault / NODE
    path.write_text(path.read_text(encoding="utf-8").replace(
        "kind: concept\n", "kind: concept\nowner: Alice   # the on-call lead\n"),
        encoding="utf-8")
    b, ws = box(w)
    out = call(b, "frontmatter_update", {"path": NODE, "metadata": {"owner": "Bob"}})
    assert out.startswith("Error: owner was written by a person"), out
    out = call(b, "frontmatter_update", {"path": NODE, "metadata": {"owner": "Alice",
                                                                    "memory_tags": ["Stripe"]}})
    assert out.startswith("Staged"), out
    text = ws.staged.render().decode()
    assert "owner: Alice   # the on-call lead\n" in text and "memory_tags: [Stripe]\n" in text


def test_memory_tags_from_a_tool_only_add(tmp_path: Path) -> None:
    w = world(tmp_path)
    path = w.vault / NODE
    path.write_text(path.read_text(encoding="utf-8").replace(
        "memory_tags: []", "memory_tags: [SOC2, 'Security Team']   # keep me"), encoding="utf-8")
    b, ws = box(w)
    out = call(b, "frontmatter_update", {"path": NODE, "metadata": {"memory_tags": ["soc2",
                                                                                    "Stripe"]}})
    assert out.startswith("Staged"), out
    assert "memory_tags: [SOC2, 'Security Team', Stripe]   # keep me\n" in \
        ws.staged.render().decode()
    note = parse_text(NODE, ws.staged.text)
    assert frontmatter.load(note)["memory_tags"] == ["SOC2", "Security Team", "Stripe"]


def test_integrate_refuses_a_person_key_change_and_the_unit_still_lands(tmp_path: Path) -> None:
    w = world(tmp_path)
    path = w.vault / NODE
    path.write_text(path.read_text(encoding="utf-8").replace(
        "kind: concept\n", "kind: concept\nreviewed: 2026-05-01\n"), encoding="utf-8")
    model = ScriptedModel([
        {"tool_calls": [{"name": "frontmatter_update", "arguments": {
            "path": NODE, "metadata": {"reviewed": "2026-06-25"}}}]},
        {"expect": "Error: reviewed was written by a person", "text": receipt()},
    ])
    result = integrate(w.vault, w.settings(), [UNIT], model)
    model.assert_done()
    assert result.failed == 0, [r.error for r in result.results]
    assert "reviewed: 2026-05-01\n" in path.read_text(encoding="utf-8")


# -- the tools on special files and links -------------------------------------------------------
def test_tools_never_open_a_fifo_or_follow_a_link_out(tmp_path: Path) -> None:
    import os

    w = world(tmp_path)
    os.mkfifo(w.vault / "digest" / "wiki" / "pipe.md")
    os.symlink("/dev/zero", w.vault / "daily" / "2026-06-01" / "zero.md")
    os.symlink(w.outside / "secret.md", w.vault / "digest" / "wiki" / "leak.md")
    w.seal()
    b, _ = box(w)
    for name, args, error in [
        ("read", {"path": "digest/wiki/pipe.md"}, "is a FIFO (named pipe), not a regular file"),
        ("frontmatter_read", {"path": "digest/wiki/pipe.md"}, "FIFO"),
        ("edit", {"path": "digest/wiki/pipe.md", "old": "a", "new": "b"}, "FIFO"),
        ("read", {"path": "daily/2026-06-01/zero.md"}, "outside the vault"),
        ("read", {"path": "digest/wiki/leak.md"}, "outside the vault"),
        ("frontmatter_update", {"path": "digest/wiki/leak.md", "metadata": {"kind": "concept"}},
         "symlink"),
    ]:
        out = call(b, name, args)
        assert out.startswith("Error:") and error in out and "\n" not in out, (name, out)
    w.held()
