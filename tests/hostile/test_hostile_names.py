"""Names as file systems write them (issue 10 item 3, issue 11): NFD (macOS), control
characters, tab, newline, RTL marks, backslash, `#`, `%`, spaces, emoji, undecodable bytes, two
names that differ only in normal form, paths past the system limit. Each note is either
processed under one canonical NFC path end to end (read, cited, linked: lint-links resolves the
citation) or reported one line as unprocessable, and never checkpointed silently."""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path

import pytest
from harness import TIMEOUT, World, world
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from remelink.config import Settings
from remelink.dream.inputs import read_input, scan
from remelink.dream.state import State
from remelink.integrate import integrate
from remelink.models.scripted import ScriptedModel
from remelink.units import Unit
from remelink.vault import links as wl
from remelink.vault.paths import nfc, normalize_relpath

pytestmark = pytest.mark.timeout(TIMEOUT)
DAY = "daily/2026-06-24"
FACT = "We decided to serve decaf after 3pm because the team sleeps badly otherwise.\n"


def raw(w: World, name: str | bytes, text: str = FACT) -> None:
    folder = w.vault / DAY
    folder.mkdir(parents=True, exist_ok=True)
    path = os.path.join(os.fsencode(folder), name if isinstance(name, bytes)
                        else os.fsencode(name))
    with open(path, "wb") as fh:
        fh.write(text.encode())


def cited(w: World) -> set[str]:
    """Every raw path the digest nodes cite (NFC)."""
    out: set[str] = set()
    for path in (w.vault / "digest").rglob("*.md"):
        body = path.read_text(encoding="utf-8")
        out |= {nfc(link.target) for link in wl.parse_links(body, 1)}
    return out


def test_nfd_raw_note_is_read_cited_and_linked_under_its_nfc_path(tmp_path: Path) -> None:
    w = world(tmp_path)
    name = unicodedata.normalize("NFD", "café-décision.md")
    raw(w, name)
    w.seal()
    report, out = w.run()
    w.held(out)
    canonical = f"{DAY}/café-décision.md"
    assert "No such file" not in out and report.inputs[canonical]["status"] != "invalid"
    assert canonical in State.load(w.vault).inputs
    assert canonical in cited(w)
    lint = w.lint()
    assert lint.returncode == 0, lint.stdout  # the citation resolves to the NFD file
    assert os.listdir(w.vault / DAY) == [name]  # the note itself was not renamed or copied


def test_nfd_digest_node_is_found_read_and_updated_not_duplicated(tmp_path: Path) -> None:
    """node-search finds it under its NFC path, `read` reads it there, and the unit updates
    it in place (under its own NFD name): no second file."""
    w = world(tmp_path)
    nfd = unicodedata.normalize("NFD", "café-décision.md")
    node = w.vault / "digest" / "wiki" / nfd
    node.write_text("---\nname: Café décision\ndescription: Decaf after 3pm.\nkind: concept\n"
                    "---\nThe team serves decaf after 3pm.\n\n## Sources\n\nThe rule comes "
                    "from [[daily/2026-06-01/payments-retry.md]].\n", encoding="utf-8")
    raw(w, "decaf.md")
    w.seal()
    path = "digest/wiki/café-décision.md"
    search = w.cli("node-search", "decaf")
    assert path in search.stdout, search.stdout
    new = "[[daily/2026-06-01/payments-retry.md]]. The team confirmed it in " \
          f"[[{DAY}/decaf.md]]."
    model = ScriptedModel([
        {"tool_calls": [{"name": "read", "arguments": {"path": path}}]},
        {"expect": "decaf after 3pm", "tool_calls": [{"name": "edit", "arguments": {
            "path": path, "old": "[[daily/2026-06-01/payments-retry.md]].", "new": new}}]},
        {"expect": "Staged edit",
         "text": f'{{"action": "CORROBORATE", "target_path": "{path}", "note": "same rule"}}'},
    ])
    unit = Unit(name="Decaf after 3pm", bucket="wiki", summary=FACT.strip(),
                paths=(f"{DAY}/decaf.md",))
    settings = w.settings()
    result = integrate(w.vault, settings, [unit], model)
    model.assert_done()
    assert result.failed == 0, [r.error for r in result.results]
    assert os.listdir(w.vault / "digest" / "wiki").count(nfd) == 1
    assert not (w.vault / "digest" / "wiki" / "café-décision.md").exists() or \
        os.listdir(w.vault / "digest" / "wiki").count("café-décision.md") == 0
    assert f"{DAY}/decaf.md" in node.read_text(encoding="utf-8")
    w.held()


def test_nfc_and_nfd_twins_one_is_read_the_other_reported(tmp_path: Path) -> None:
    w = world(tmp_path)
    raw(w, "café.md")
    raw(w, unicodedata.normalize("NFD", "café.md"), "We decided to serve tea on Fridays.\n")
    w.seal()
    _report, out = w.run()
    w.held(out, needle="(decomposed)")
    assert f"{DAY}/café.md" in State.load(w.vault).inputs


@pytest.mark.parametrize(("name", "why"), [
    ("tab\there.md", "control character (U+0009)"),
    ("new\nline.md", "control character (U+000A)"),
    ("bell\x07.md", "control character (U+0007)"),
    ("del\x7f.md", "control character (U+007F)"),
    ("nel\x85.md", "control character (U+0085)"),
    ("ls\u2028sep.md", "control character (U+2028)"),
    ("rtl\u202egnp.md", "bidirectional control character"),
    ("lrm\u200emark.md", "bidirectional control character"),
    ("back\\slash.md", "backslash"),
    ("hash #1.md", "'#'"),
    ("pipe|x.md", "'|'"),
    ("br[ack]et.md", "'['"),
])
def test_names_no_link_can_carry_are_reported_never_checkpointed(
        tmp_path: Path, name: str, why: str) -> None:
    w = world(tmp_path)
    raw(w, name)
    w.seal()
    _report, out = w.run()
    shown = [line for line in out.splitlines() if why in line]
    assert len(shown) == 1, out
    w.held(out)
    assert not any(p.startswith(DAY) for p in State.load(w.vault).inputs)
    assert not any(p.startswith(DAY) for p in cited(w))


def test_undecodable_name_bytes(tmp_path: Path) -> None:
    w = world(tmp_path)
    raw(w, b"caf\xe9-latin1.md")
    w.seal()
    _, out = w.run()
    w.held(out, needle="caf\\xe9-latin1.md")
    assert "not valid UTF-8" in out
    assert not any(p.startswith(DAY) for p in State.load(w.vault).inputs)


@pytest.mark.parametrize("name", ["my note.md", "100% done.md", "🎉 launch.md", "a^b.md",
                                  "colon: yes.md", "  spaced  .md", "数据 脱敏 %.md"])
def test_awkward_but_linkable_names_are_processed_and_their_links_resolve(
        tmp_path: Path, name: str) -> None:
    w = world(tmp_path)
    raw(w, name)
    w.seal()
    report, out = w.run()
    w.held(out)
    rel = f"{DAY}/{name}"
    assert report.inputs[rel]["status"] != "invalid", out
    assert rel in cited(w)
    lint = w.lint()
    assert lint.returncode == 0, lint.stdout


def test_notes_nested_past_the_path_length_limit_are_reported(tmp_path: Path) -> None:
    """A path longer than PATH_MAX cannot be opened by name: the folder is reported, not
    silently skipped."""
    w = world(tmp_path)
    top = os.open(w.vault / "daily", os.O_RDONLY)
    fds = [top]
    try:
        for i in range(24):  # 24 x 201 bytes: past the 4096-byte limit
            name = f"{i:02d}" + "n" * 199
            os.mkdir(name, dir_fd=fds[-1])
            fds.append(os.open(name, os.O_RDONLY, dir_fd=fds[-1]))
        fd = os.open("deep.md", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fds[-1])
        os.write(fd, FACT.encode())
        os.close(fd)
    finally:
        for fd in fds:
            os.close(fd)
    w.seal()
    _, out = w.run()
    w.held(out)
    lines = [line for line in out.splitlines() if "longer than this system allows" in line]
    assert len(lines) == 1, out


# -- the property: every name is an input or a refusal, and an input's path is linkable -------
NAME_CHARS = st.sampled_from([*"abcXYZ09-_. ", "é", "\u0301", "数", "🎉", "#", "%", "^", "\\",
                              "\t", "\n", "\x01", "\u202e", "\u200f", "|", "[", "]", ":", "'"])


@given(names=st.lists(st.text(NAME_CHARS, min_size=1, max_size=12), min_size=1, max_size=8,
                      unique=True))
@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_every_name_is_an_input_or_refused_and_inputs_are_linkable(
        tmp_path_factory: pytest.TempPathFactory, names: list[str]) -> None:
    vault = tmp_path_factory.mktemp("names")
    folder = vault / DAY
    folder.mkdir(parents=True)
    for name in names:
        try:
            (folder / ("x" + name.replace("/", "_") + ".md")).write_text(FACT, encoding="utf-8")
        except OSError:
            continue
    on_disk = os.listdir(folder)
    found = scan(vault, Settings(), None)
    # A partition: each file is exactly one input or exactly one refusal line.
    assert len(found.inputs) + len(found.refused) == len(on_disk), (on_disk, found)
    for rel in found.inputs:
        assert normalize_relpath(rel) == rel  # a tool may name it
        links = wl.parse_links(f"See [[{rel}]].", 1)
        assert [link.target for link in links] == [rel]  # a citation points at it
        assert not re.search(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e]", rel)
        got = read_input(vault, rel, limit=1 << 20)
        assert got.data == FACT.encode()  # readable under its canonical path
    for key, why in found.refused.items():
        assert "\n" not in key and "\n" not in why  # one line each
