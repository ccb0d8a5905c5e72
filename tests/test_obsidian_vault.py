"""A vault made in Obsidian works out of the box (SPEC §3.2): `.obsidian/` (or links that resolve
only by name) means `obsidian` resolution unless the configuration says otherwise; `init` writes
what it found; in `path` mode a broken link that would resolve the Obsidian way says so."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import VaultFactory
from hypothesis import given, settings
from hypothesis import strategies as st

from remelink.config import load_settings
from remelink.lint import lint_links
from remelink.scaffold import init
from remelink.vault.obsidian import detect

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "obsidian-vault"
SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "link-vaults"
LINT = [sys.executable, "-c", "import sys; from remelink.lint import main; sys.exit(main())"]


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "My Vault"
    shutil.copytree(FIXTURE, root)
    return root


def test_the_fixture_is_an_obsidian_vault(vault: Path) -> None:
    """Short links, embeds of notes and images, block and heading references, aliases, a link
    escaped in a table, notes in folders with spaces: what Obsidian writes."""
    text = "\n".join(p.read_text(encoding="utf-8") for p in vault.rglob("*.md"))
    for needle in ("![[diagram.png]]", "[[Payments#^retry-rule|", "![[Payments#Retries]]",
                   "[[Meeting notes#Decisions]]", "[[Payments\\|pay]]", "[[2026-06-21]]"):
        assert needle in text
    assert (vault / ".obsidian").is_dir() and not (vault / ".remelink").exists()


def test_an_obsidian_vault_passes_lint_links_with_no_configuration(vault: Path) -> None:
    for cwd in (vault, vault / "Projects"):  # the hook runs at the root; a person anywhere
        proc = subprocess.run(LINT, cwd=cwd, capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert proc.stdout == "" and "no problems in 5 file(s), 16 link(s)" in proc.stderr
    assert load_settings(vault, env={}).resolution == "obsidian"


def test_it_still_finds_what_is_broken(vault: Path) -> None:
    note = vault / "Home.md"
    note.write_text(note.read_text(encoding="utf-8") + "\n[[Nope]] and [[Payments#^nope]].\n",
                    encoding="utf-8")
    codes = sorted(p.code for p in lint_links(vault).problems)
    assert codes == ["broken-link", "missing-anchor"]


def test_the_configuration_wins_over_the_folder(vault: Path) -> None:
    (vault / ".remelink").mkdir()
    (vault / ".remelink" / "config.yaml").write_text("links: {resolution: path}\n")
    problems = lint_links(vault).problems
    assert problems and all(p.code == "broken-link" for p in problems)
    # ... and each says the link resolves the Obsidian way, and where.
    home = [p for p in problems if p.path == "Archive/Old idea.md"]
    assert [p.message for p in home] == [
        "[[Home]]: target does not exist (did you mean Home.md? it resolves there with "
        "links.resolution: obsidian, for a vault written in Obsidian)"]


def test_init_writes_what_it_detects(vault: Path, tmp_path: Path) -> None:
    result = init(vault)
    assert result.resolution == "obsidian" and result.resolution_reason == \
        "the vault holds .obsidian/"
    assert "  resolution: obsidian  # detected: the vault holds .obsidian/\n" in \
        (vault / ".remelink" / "config.yaml").read_text(encoding="utf-8")
    assert lint_links(vault).problems == []
    # Without .obsidian/, the links tell.
    bare = tmp_path / "bare"
    shutil.copytree(FIXTURE, bare, ignore=shutil.ignore_patterns(".obsidian"))
    found = detect(bare)
    assert (found.resolution, found.by_name, found.by_path) == ("obsidian", 16, 0)
    assert init(bare).resolution == "obsidian" and lint_links(bare).problems == []
    # An empty folder, or a vault of path links, stays with `path`, the file init writes
    # unchanged.
    empty = init(tmp_path / "empty")
    assert empty.resolution == "path"
    from remelink.scaffold import CONFIG_TEMPLATE

    assert (tmp_path / "empty" / ".remelink" / "config.yaml").read_text() == CONFIG_TEMPLATE


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 6), st.integers(0, 6))
def test_links_decide_by_majority(by_name: int, by_path: int) -> None:
    """More links that resolve only by name than as paths (and at least one): obsidian. A vault
    of path links with one short link keeps path."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "notes").mkdir()
        (root / "notes" / "target.md").write_text("# Target\n")
        links = ["[[target]]"] * by_name + ["[[notes/target.md]]"] * by_path
        (root / "notes" / "a.md").write_text(" and ".join(links) + "\n")
        found = detect(root)
        assert (found.by_name, found.by_path) == (by_name, by_path)
        want = "obsidian" if by_name and by_name >= by_path else "path"
        assert found.resolution == want


@pytest.mark.skipif(not (SHARED / "foam-docs").is_dir(), reason="shared link vaults not found")
def test_a_real_vault_of_short_links_is_detected(tmp_path: Path) -> None:
    """Foam's documentation (a VS Code vault of short links, no .obsidian/): detected by its
    links."""
    found = detect(SHARED / "foam-docs")
    assert found.resolution == "obsidian" and found.by_name > found.by_path


def test_short_links_alone_mean_obsidian_when_nothing_is_configured(tmp_path: Path) -> None:
    """No `.obsidian/` and no `links.resolution` anywhere (a bare `.remelink/`): lint-links lets
    the links decide, as init would, and says so on its summary line; a configuration that
    names `path` still wins."""
    bare = tmp_path / "bare"
    shutil.copytree(FIXTURE, bare, ignore=shutil.ignore_patterns(".obsidian"))
    (bare / ".remelink").mkdir()
    assert load_settings(bare, env={}).resolution == "path"
    proc = subprocess.run(LINT, cwd=bare, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout == ""
    assert proc.stderr.startswith("lint-links: no problems in 5 file(s), 16 link(s) checked")
    assert proc.stderr.rstrip().endswith(
        "; links resolved the Obsidian way: 16 of its links resolve only by name "
        "(links.resolution: obsidian in .remelink/config.yaml says so for good)")
    report = lint_links(bare)
    assert report.problems == [] and report.resolved_by_links
    # What is broken either way is still reported, once, in obsidian terms.
    home = bare / "Home.md"
    home.write_text(home.read_text(encoding="utf-8") + "\n[[Nope]]\n", encoding="utf-8")
    report = lint_links(bare)
    assert [(p.code, p.message) for p in report.problems] == [
        ("broken-link", "[[Nope]]: target does not exist")]
    (bare / ".remelink" / "config.yaml").write_text("links: {resolution: path}\n")
    report = lint_links(bare)
    assert len(report.problems) == 17 and not report.resolved_by_links


def test_a_path_vault_with_one_slip_keeps_path(make_vault: VaultFactory) -> None:
    vault = make_vault({"notes/a.md": "[[notes/b.md]] [[notes/c.md]] [[b]]\n",
                        "notes/b.md": "# B\n", "notes/c.md": "# C\n"})
    report = lint_links(vault)
    assert not report.resolved_by_links
    assert [p.message for p in report.problems] == [
        "[[b]]: target does not exist (did you mean notes/b.md? it resolves there with "
        "links.resolution: obsidian, for a vault written in Obsidian)"]


@pytest.mark.skipif(not (SHARED / "foam-docs").is_dir(), reason="shared link vaults not found")
def test_foam_lints_as_obsidian_with_no_configuration(tmp_path: Path) -> None:
    """Foam's documentation (held-out link vault, short links, no .obsidian/) with a bare
    `.remelink/`: the same report as with `links.resolution: obsidian` (what remains are its
    own broken links), not one error per short link."""
    root = tmp_path / "foam"
    shutil.copytree(SHARED / "foam-docs", root)
    (root / ".remelink").mkdir()
    plain = lint_links(root)
    as_path = lint_links(root, load_settings(root, overrides={"links": {"resolution": "path"}}))
    as_obsidian = lint_links(
        root, load_settings(root, overrides={"links": {"resolution": "obsidian"}}))
    assert plain.resolved_by_links and plain.problems == as_obsidian.problems
    assert len(as_path.problems) > 10 * len(plain.problems)
