"""lint-links in a git repository: links to notes the commit deletes or renames are checked
(asked of git once, `git diff --cached --name-status -M`), and the "did you mean" hint prefers
the rename target git reports, then the closest existing name."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import VaultFactory
from hypothesis import given
from hypothesis import strategies as st

from remelink import lint
from remelink.lint import staged as staged_mod
from remelink.lint.staged import in_work_tree, parse_name_status
from remelink.lint.suggest import Suggester
from remelink.vault.resolve import VaultFiles

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
NODE = """\
---
name: Standup format
description: How the standup runs.
---
The standup is fifteen minutes, see also [[daily/2026-03-23/standup.md]].

## Sources

The format was agreed in [[daily/2026-03-02/standup.md]].
"""


def git(root: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-C", str(root), "-c", "user.email=t@example.org",
                           "-c", "user.name=t", *args], capture_output=True, text=True,
                          check=True)
    return proc.stdout


@pytest.fixture
def repo(make_vault: VaultFactory) -> Path:
    root = make_vault({
        "daily/2026-03-02/standup.md": "# Standup\n\nWe agreed on fifteen minutes.\n",
        "daily/2026-03-23/standup.md": "# Standup\n\nNothing new.\n",
        "digest/procedure/standup-format.md": NODE,
        "daily/2026-03-24/notes.md": "Yesterday: [[daily/2026-03-02/standup.md#Standup]]\n",
    })
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "init")
    return root


def run_lint(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = lint.main(args)
    out, err = capsys.readouterr()
    return code, out, err


@needs_git
def test_a_rename_breaks_the_links_to_the_old_path_and_the_hint_names_the_new_one(
        repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The issue's case: pre-commit passes only the renamed file; the node citing the old path
    is caught, and the hint is the renamed note, not another day's note of the same name."""
    monkeypatch.chdir(repo)
    git(repo, "mv", "daily/2026-03-02/standup.md", "daily/2026-03-02/standup-renamed.md")
    code, out, _ = run_lint(["daily/2026-03-02/standup-renamed.md"], capsys)
    assert code == 1
    assert out.splitlines() == [
        "daily/2026-03-24/notes.md:1:12: error broken-link "
        "[[daily/2026-03-02/standup.md#Standup]]: target does not exist (did you mean "
        "daily/2026-03-02/standup-renamed.md? the commit renames it)",
        "digest/procedure/standup-format.md:9:26: error broken-link "
        "[[daily/2026-03-02/standup.md]]: target does not exist (did you mean "
        "daily/2026-03-02/standup-renamed.md? the commit renames it)",
    ]
    # Outside git's view the old behaviour is kept: the same call without a repository checks
    # only the file named.
    shutil.rmtree(repo / ".git")
    assert run_lint(["daily/2026-03-02/standup-renamed.md"], capsys)[:2] == (0, "")


@needs_git
def test_a_deletion_is_caught_with_staged_and_no_paths(repo: Path,
                                                       capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(repo)
    (repo / "daily/2026-03-25.md").write_text("[[daily/nowhere.md]]\n")  # broken, not staged
    git(repo, "rm", "-q", "daily/2026-03-02/standup.md")
    code, out, err = run_lint(["--staged"], capsys)
    assert code == 1
    assert [line.split(": error ")[0] for line in out.splitlines()] == [
        "daily/2026-03-24/notes.md:1:12", "digest/procedure/standup-format.md:9:26"]
    assert all(line.endswith("target does not exist (the commit deletes it; did you mean "
                             "daily/2026-03-23/standup.md?)") for line in out.splitlines())
    assert "in 0 file(s)" in err  # only the links to the deleted note: not the whole vault
    # Without --staged and without PATHS the whole vault is checked (and git is not asked).
    code, out, _ = run_lint([], capsys)
    assert "daily/2026-03-25.md:1:1: error broken-link" in out


@needs_git
def test_nothing_staged_changes_nothing(repo: Path, capsys: pytest.CaptureFixture[str],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(repo)
    assert run_lint(["--staged"], capsys)[:2] == (0, "")
    assert run_lint(["daily/2026-03-23/standup.md"], capsys)[:2] == (0, "")


@needs_git
def test_git_is_asked_once(repo: Path, capsys: pytest.CaptureFixture[str],
                           monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[list[str]] = []
    real = subprocess.run

    def counting(argv: list[str], *args: object, **kwargs: object) -> object:
        calls.append(list(argv))
        return real(argv, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.chdir(repo)
    git(repo, "mv", "daily/2026-03-23/standup.md", "daily/2026-03-23/standup-2.md")
    monkeypatch.setattr(staged_mod.subprocess, "run", counting)
    run_lint(["daily/2026-03-23/standup-2.md", "digest/procedure/standup-format.md"], capsys)
    assert len(calls) == 1 and calls[0][3:6] == ["diff", "--cached", "--name-status"]


@needs_git
def test_a_vault_in_a_sub_folder_sees_its_own_changes(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    top = tmp_path / "repo"
    vault = top / "notes"
    (vault / ".remelink").mkdir(parents=True)
    (vault / "daily").mkdir()
    (vault / "daily/a.md").write_text("# A\n")
    (vault / "daily/b.md").write_text("[[daily/a.md]]\n")
    (top / "README.md").write_text("# repo\n")
    git(top, "init", "-q")
    git(top, "add", "-A")
    git(top, "commit", "-qm", "init")
    git(top, "mv", "notes/daily/a.md", "notes/daily/a2.md")
    monkeypatch.chdir(top)  # where pre-commit runs, paths relative to the repository
    code, out, _ = run_lint(["notes/daily/a2.md"], capsys)
    assert (code, out) == (1, "daily/b.md:1:1: error broken-link [[daily/a.md]]: target does "
                              "not exist (did you mean daily/a2.md? the commit renames it)\n")
    # The repository's README is outside the vault: a usage error, not a silent pass.
    code, _, err = run_lint(["notes/daily/a2.md", "README.md"], capsys)
    assert code == 2 and "README.md: outside the vault" in err


@needs_git
def test_obsidian_links_to_a_renamed_note(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "v"
    (root / ".remelink").mkdir(parents=True)
    (root / ".remelink/config.yaml").write_text("links: {resolution: obsidian}\n")
    (root / "daily").mkdir()
    (root / "daily/会议纪要.md").write_text("# 纪要\n")
    (root / "daily/index.md").write_text("见 [[会议纪要]] 和 [[会议纪要#纪要]]\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "init")
    git(root, "mv", "daily/会议纪要.md", "daily/周会纪要.md")
    monkeypatch.chdir(root)
    code, out, _ = run_lint(["daily/周会纪要.md"], capsys)
    assert code == 1
    assert out.splitlines() == [
        "daily/index.md:1:3: error broken-link [[会议纪要]]: target does not exist (did you mean "
        "daily/周会纪要.md? the commit renames it)",
        "daily/index.md:1:14: error broken-link [[会议纪要#纪要]]: target does not exist (did "
        "you mean daily/周会纪要.md? the commit renames it)"]


def test_staged_outside_git_is_a_usage_error(make_vault: VaultFactory,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    root = make_vault({"daily/a.md": ""})
    assert not in_work_tree(root)
    code, out, err = run_lint(["--vault", str(root), "--staged"], capsys)
    assert (code, out) == (2, "")
    assert "--staged" in err and "not inside a git repository" in err


@st.composite
def name_status(draw: st.DrawFn) -> tuple[bytes, dict[str, str | None]]:
    names = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), min_size=1,
                    max_size=12).filter(lambda t: "\0" not in t)
    out: list[bytes] = []
    expect: dict[str, str | None] = {}
    for status in draw(st.lists(st.sampled_from(["M", "A", "D", "R100", "R067", "C080", "T"]),
                                max_size=8)):
        old = "daily/" + draw(names) + ".md"
        if status[0] in "RC":
            new = "daily/" + draw(names) + ".md"
            out += [status.encode(), old.encode(), new.encode()]
            if status[0] == "R":
                expect[old] = new
        else:
            out += [status.encode(), old.encode()]
            if status == "D":
                expect[old] = None
    return b"\0".join(out) + (b"\0" if out else b""), expect


@given(name_status())
def test_parse_name_status_keeps_exactly_deletions_and_renames(
        case: tuple[bytes, dict[str, str | None]]) -> None:
    import unicodedata

    raw, expect = case
    want = {unicodedata.normalize("NFC", k): None if v is None else unicodedata.normalize("NFC", v)
            for k, v in expect.items()}
    assert parse_name_status(raw) == want


def test_closest_name_prefers_the_nearest_folder(tmp_path: Path) -> None:
    for rel in ("daily/2026-03-02/a/standup.md", "daily/2026-03-23/standup.md",
                "resource/standup.md", "daily/2026-03-02/stand-up.md"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    hints = Suggester(VaultFiles.scan(tmp_path), "path")
    # Same name in several places: the one sharing the most leading folders, when it wins.
    assert hints.hint("daily/2026-03-02/standup.md") == \
        " (did you mean daily/2026-03-02/a/standup.md?)"
    assert hints.hint("other/standup.md") == ""  # a tie: no guess
    assert hints.hint("daily/2026-03-02/stand-upp.md") == ""  # no note of that name
    assert Suggester(VaultFiles.scan(tmp_path), "obsidian").hint("x/standup.md") == ""
    renamed = Suggester(VaultFiles.scan(tmp_path), "path",
                        {"daily/2026-03-02/standup.md": "daily/2026-03-02/stand-up.md"})
    assert renamed.hint("daily/2026-03-02/standup.md") == \
        " (did you mean daily/2026-03-02/stand-up.md? the commit renames it)"


@given(st.lists(st.tuples(st.sampled_from(["Note", "note", "Ünïcode", "会议", "a b", "x"]),
                          st.sampled_from(["", ".md", "#Part"]),
                          st.sampled_from(["NFC", "NFD", "upper"])), min_size=1, max_size=6),
       st.sampled_from(["path", "obsidian"]))
def test_the_byte_search_never_hides_a_link_to_a_gone_note(
        links: list[tuple[str, str, str]], mode: str) -> None:
    """Reading only the notes that spell a gone note's name reports exactly what parsing every
    note would (the prefilter is an optimisation, never a filter)."""
    import tempfile
    import unicodedata

    from remelink.config import load_settings
    from remelink.lint import core, lint_links

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / ".remelink").mkdir()
        (root / ".remelink/config.yaml").write_text(f"links: {{resolution: {mode}}}\n")
        (root / "daily").mkdir()
        for i, (name, suffix, form) in enumerate(links):
            target = f"daily/{name}{suffix}" if mode == "path" else f"{name}{suffix}"
            target = target.upper() if form == "upper" else unicodedata.normalize(form, target)
            (root / f"daily/n{i}.md").write_text(f"see [[{target}]]\n", encoding="utf-8")
        gone = {f"daily/{name}.md": None for name, _, _ in links[:2]}
        settings = load_settings(root, env={})
        fast = lint_links(root, settings, [], gone=gone).problems
        real = core._mentions
        core._mentions = lambda linter, rel, stems: True  # type: ignore[assignment]
        try:
            slow = lint_links(root, settings, [], gone=gone).problems
        finally:
            core._mentions = real
        assert fast == slow
        exact = [n for n, suffix, form in links if suffix == ".md" and form == "NFC"
                 and f"daily/{n}.md" in gone]
        if exact:  # a link spelling a gone path exactly is always reported
            assert any(p.code == "broken-link" for p in fast)


@needs_git
def test_git_rm_cached_of_a_cited_note_is_a_deletion(repo: Path,
                                                     capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 20, case 13: `git rm --cached` of a cited note passed the `--staged` hook. The
    note is still on disk, but not in the commit: the links to it break there."""
    monkeypatch.chdir(repo)
    git(repo, "rm", "-q", "--cached", "daily/2026-03-02/standup.md")
    assert (repo / "daily/2026-03-02/standup.md").is_file()
    code, out, _ = run_lint(["--staged"], capsys)
    assert code == 1
    assert [line.split(": error ")[0] for line in out.splitlines()] == [
        "daily/2026-03-24/notes.md:1:12", "digest/procedure/standup-format.md:9:26"]
    assert all("the commit deletes it" in line for line in out.splitlines())
    # As pre-commit runs it (the changed files as PATHS), the same.
    code, out, _ = run_lint(["daily/2026-03-24/notes.md"], capsys)
    assert code == 1 and "the commit deletes it" in out


def test_a_path_that_does_not_exist_is_an_error_naming_it(
        make_vault: VaultFactory, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 20, case 13: `remelink-lint-links digest/wiki/othr.md` said "no problems in 0
    file(s)", exit 0."""
    root = make_vault({"digest/wiki/other.md": "x\n", "daily/a.md": "[[digest/wiki/other.md]]\n"})
    monkeypatch.chdir(root)
    code, out, err = run_lint(["digest/wiki/othr.md", "daily/a.md"], capsys)
    assert (code, out) == (2, "") and "digest/wiki/othr.md: no such file or folder" in err
    assert "daily/a.md" not in err
    code, _, _ = run_lint(["--all", "digest/wiki/othr.md"], capsys)
    assert code == 0  # --all: a deleted note's old name, whose incoming links it checks
