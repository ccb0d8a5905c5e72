"""lint-links on real vaults (SilverBullet and Foam docs, obsidian resolution) and on generated
vaults with planted problems; the fast paths of the linter against the slow ones.

The real-vault counts are the audited numbers of docs/lint-link-vaults.md: every finding there
was checked by hand. A change in these counts means a change in what lint-links reports on real
notes: re-audit, then update the numbers and the document together.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest
from conftest import SHARED_DATA, VaultFactory
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from remelink.config import load_settings
from remelink.errors import NoteError
from remelink.lint import Problem, lint_links
from remelink.lint.checks import _simple_frontmatter
from remelink.vault import frontmatter
from remelink.vault.notes import parse_text

LINK_VAULTS = SHARED_DATA / "link-vaults"
ROOT = Path(__file__).resolve().parent.parent
needs_vaults = pytest.mark.skipif(not LINK_VAULTS.is_dir(), reason="shared link vaults not found")


def _genvault() -> ModuleType:
    spec = importlib.util.spec_from_file_location("genvault", ROOT / "bench" / "genvault.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["genvault"] = module
    spec.loader.exec_module(module)
    return module


def _obsidian(vault: Path) -> list[Problem]:
    settings_ = load_settings(vault, overrides={"links": {"resolution": "obsidian"}})
    return lint_links(vault, settings_).problems


# -- real vaults ------------------------------------------------------------------------------

def _category(p: Problem) -> str:
    """The audit's classes (docs/lint-link-vaults.md), decided from the finding alone."""
    if p.code == "missing-anchor":
        return "renamed or missing heading"
    m = re.match(r"!?\[\[([^\]|#]*)", p.message)
    target = m.group(1).strip() if m else ""
    if target.startswith(("from ", '" ..')) or "${" in target:
        return "Space Lua code"
    if "@" in target:
        return "SilverBullet position suffix"
    if target.startswith("$"):
        return "SilverBullet named anchor"
    if target.startswith("^"):
        return "caret meta-page link"
    if target.startswith("Library/Std"):
        return "built-in library page"
    return "other"


@needs_vaults
def test_silverbullet_docs_findings_are_the_audited_ones() -> None:
    problems = _obsidian(LINK_VAULTS / "silverbullet-docs")
    assert len(problems) == 134
    assert Counter(p.code for p in problems) == {"broken-link": 106, "missing-anchor": 28}
    assert Counter(_category(p) for p in problems) == {
        "caret meta-page link": 48, "Space Lua code": 41, "renamed or missing heading": 28,
        "built-in library page": 6, "SilverBullet position suffix": 5, "other": 5,
        "SilverBullet named anchor": 1,
    }
    others = {(p.path, p.line, p.col) for p in problems if _category(p) == "other"}
    assert others == {("Browser.md", 7, 1), ("Object/aspiring-page.md", 6, 112),
                      ("Object/relation.md", 29, 37), ("Object/relation.md", 29, 58),
                      ("Outline Stress Test.md", 59, 36)}


@needs_vaults
def test_foam_docs_findings_are_the_audited_ones() -> None:
    # The link-reference definitions Foam appends to each note are ordinary markdown, not
    # wikilinks, so they change nothing here.
    problems = _obsidian(LINK_VAULTS / "foam-docs")
    assert [(p.path, p.line, p.col, p.code) for p in problems] == [
        ("user/index.md", 69, 5, "broken-link"),
        ("user/tools/cli/search.md", 11, 35, "broken-link"),
    ]


@needs_vaults
@pytest.mark.parametrize("name", ["silverbullet-docs", "foam-docs"])
def test_two_processes_report_the_same_as_one(name: str) -> None:
    vault = LINK_VAULTS / name
    settings_ = load_settings(vault, overrides={"links": {"resolution": "obsidian"}})
    one = lint_links(vault, settings_, jobs=1)
    two = lint_links(vault, settings_, jobs=2)
    assert two.problems == one.problems
    assert (two.links_checked, two.files_checked) == (one.links_checked, one.files_checked)


# -- generated vaults -------------------------------------------------------------------------

@pytest.mark.parametrize("style", ["path", "obsidian"])
def test_generated_vault_findings_are_exactly_the_planted_problems(tmp_path: Path,
                                                                    style: str) -> None:
    gen = _genvault()
    truth = gen.generate(tmp_path / "vault", notes=600, seed=7, style=style)
    assert len(truth.broken_targets) == 60 and len(truth.broken_anchors) == 30
    assert sum(truth.fake_links.values()) > 100  # links in code etc. that must not count
    report = lint_links(tmp_path / "vault", jobs=1)  # the vault's config sets the resolution
    found = {(p.path, p.line, p.col, p.code) for p in report.problems}
    planted = {(p.path, p.line, p.col, "broken-link") for p in truth.broken_targets} | \
              {(p.path, p.line, p.col, "missing-anchor") for p in truth.broken_anchors}
    assert found == planted
    assert len(report.problems) == len(planted)
    assert report.links_checked == truth.links
    assert lint_links(tmp_path / "vault", jobs=2).problems == report.problems


def test_generator_is_deterministic(tmp_path: Path) -> None:
    gen = _genvault()
    a = gen.generate(tmp_path / "a", notes=200, seed=3)
    b = gen.generate(tmp_path / "b", notes=200, seed=3)
    assert a.summary() | {"root": ""} == b.summary() | {"root": ""}
    files_a = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*.md"))
    files_b = sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*.md"))
    assert files_a == files_b
    assert all((tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes()
               for f in files_a)


def test_two_processes_on_a_vault_with_every_problem(make_vault: VaultFactory) -> None:
    node = "---\nname: {name}\ndescription: d\n---\n{body}\n"
    files: dict[str, str | bytes] = {
        "daily/2026-01-01/a.md": "See [[daily/2026-01-01/b.md#Nope]] and [[nowhere.md]].\n"
                                 "[[../out.md]] [[daily/2026-01-01/b.md#L99]] [[b.md#^x]]\n",
        "daily/2026-01-01/b.md": "# Head\n\ntext ^blk\n",
        "daily/bin.md": b"\x00\x01binary",
        "daily/latin.md": "caf\xe9 [[x]]".encode("latin-1"),
        "digest/wiki/ok.md": node.format(name="ok", body="Uses [[digest/wiki/n2.md]].\n\n"
                                         "## Sources\n\n- Stated in [[daily/2026-01-01/b.md]].\n"),
        "digest/wiki/n2.md": node.format(name='""', body="relates_to:: [[digest/wiki/ok.md]]\n"),
        "digest/wiki/n3.md": node.format(name="n3", body="## Sources\n\n[[digest/wiki/ok.md]]\n"),
        "digest/wiki/n4.md": "---\nname: [unclosed\n---\n## Sources\n\nnothing\n",
    }
    for i in range(40):  # enough files for both processes to have work
        files[f"daily/2026-01-02/n{i}.md"] = f"Note {i} links [[daily/2026-01-02/n{i + 1}.md]].\n"
    vault = make_vault(files)
    one = lint_links(vault, jobs=1)
    two = lint_links(vault, jobs=2)
    codes = {p.code for p in one.problems}
    assert {"broken-link", "missing-anchor", "outside-vault", "frontmatter", "relation-field",
            "non-source-target", "bare-source-link", "missing-sources", "empty-sources",
            "unreadable"} <= codes
    assert two.problems == one.problems
    assert two.links_checked == one.links_checked


@pytest.mark.parametrize("failure", ["fork", "child"])
def test_a_failed_second_process_is_redone_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 failure: str) -> None:
    import os
    import pickle

    _genvault().generate(tmp_path / "v", notes=200, seed=5)
    expected = lint_links(tmp_path / "v", jobs=1)

    def refuse(*args: object, **kwargs: object) -> object:
        raise OSError(11, "Resource temporarily unavailable")

    if failure == "fork":
        monkeypatch.setattr(os, "fork", refuse)
    else:  # the child cannot hand its findings back: it exits 1 and the parent redoes its share
        monkeypatch.setattr(pickle, "dumps", refuse)
    got = lint_links(tmp_path / "v", jobs=2)
    assert got.problems == expected.problems
    assert got.links_checked == expected.links_checked


# -- the frontmatter fast path ----------------------------------------------------------------

def _pyyaml_emptiness(text: str) -> dict[str, bool] | str:
    note = parse_text("n.md", f"---\n{text}---\nbody\n")
    if note.frontmatter_text != text:
        return "not frontmatter"
    try:
        meta = frontmatter.load(note)
    except NoteError:
        return "error"
    return {k: v is None or (isinstance(v, str) and not v.strip()) for k, v in meta.items()}


_KEYS = st.sampled_from(["name", "description", "kind", "yes", "memory_tags", "a-b", "null"])
_ATOMS = st.sampled_from(["", " ", "x", "yes", "null", "Null", "~", "-", ":", "#", "a: b", "a #b",
                          "'", '"', "\\", "[", "]", ",", "{", "小王", "2025-13-45", "0x1F", "1.10",
                          "\t", "\r", "\u2028", "\x85", "\ufeff", "\x7f", "é", "&a", "*a", "!t",
                          "|", ">", "%", "@", "`"])
_SHAPES = ('{k}: "{v}"', "{k}: '{v}'", "{k}: [{v}]", "{k}:{v}", "  # {v}", "{k}: {v}")
_LINES = st.builds(lambda k, v, shape: shape.format(k=k, v=v), _KEYS,
                   st.lists(_ATOMS, max_size=5).map("".join), st.sampled_from(_SHAPES))


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_LINES, max_size=5).map(lambda lines: "".join(f"{x}\n" for x in lines)))
def test_simple_frontmatter_agrees_with_pyyaml(text: str) -> None:
    fast = _simple_frontmatter(text)
    if fast is None:
        return  # not a simple block: lint asks PyYAML
    slow = _pyyaml_emptiness(text)
    if slow == "not frontmatter":
        return
    assert slow != "error", "the fast path accepted a block PyYAML refuses"
    assert isinstance(slow, dict)
    for key in ("name", "description"):
        assert (key in fast, fast.get(key, True)) == (key in slow, slow.get(key, True))


def test_simple_frontmatter_takes_remelinks_own_shape() -> None:
    text = ('name: "数据脱敏规则"\ndescription: "What we know: the rule."\nkind: concept\n'
            "memory_tags: [Alice, 小王]\n# a comment\nempty:\n")
    assert _simple_frontmatter(text) == {"name": False, "description": False, "kind": False,
                                         "memory_tags": False, "empty": True}
    assert _simple_frontmatter('name: ""\n') == {"name": True}
    assert _simple_frontmatter("name: null\n") == {"name": True}
    assert _simple_frontmatter("name: a: b\n") is None  # invalid YAML: PyYAML reports it
    assert _simple_frontmatter("name: x\nname: y\n") is None  # repeated key: PyYAML reports it


# -- start-up ---------------------------------------------------------------------------------

def test_lint_help_imports_nothing_heavy() -> None:
    code = ("import sys\nfrom remelink.lint import main\ntry:\n    main(['--help'])\n"
            "except SystemExit:\n    pass\n"
            "heavy = {'yaml', 'typer', 'rich', 'whoosh', 'litellm', 'pydantic', 'click'}\n"
            "print(sorted(heavy & {m.split('.')[0] for m in sys.modules}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"
