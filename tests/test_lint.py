"""lint-links rules (SPEC §4, §4.1): levels, the Sources rules, PATHS mode, `--all`, exit codes."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import VaultFactory

from remelink import lint
from remelink.config import PROBLEM_CODES, load_settings
from remelink.lint import is_bare_link_text, lint_links

NODE = """\
---
name: {name}
description: A node for the test.
---
{body}
"""


def node(body: str, name: str = "Node") -> str:
    return NODE.format(name=name, body=textwrap.dedent(body).strip("\n"))


BASE: dict[str, str | bytes] = {
    "daily/2026-06-01/a.md": "# A\n\n## Part\n\nText. ^blk\n",
    "daily/2026-06-02/b.md": "# B\n",
    "resource/doc.md": "# Doc\n",
}


def problems(root: Path, paths: list[str] | None = None, include_all: bool = False) -> list[str]:
    report = lint_links(root, load_settings(root), paths, include_all=include_all)
    return [f"{p.path}:{p.line}:{p.col} {p.level} {p.code}" for p in report.problems]


def codes(root: Path) -> list[tuple[str, str]]:
    report = lint_links(root, load_settings(root))
    return [(p.level, p.code) for p in report.problems]


# -- the Sources rules -----------------------------------------------------------------------

def test_a_good_node_has_no_problem(make_vault: VaultFactory) -> None:
    root = make_vault({**BASE, "digest/wiki/n.md": node("""
        A claim that extends [[digest/wiki/m.md]].

        ## Sources

        The claim is recorded in [[daily/2026-06-01/a.md#Part]].
        """), "digest/wiki/m.md": node("""
        Another claim.

        ## Sources

        - It is stated in [[daily/2026-06-02/b.md]] and in [[resource/doc.md]].
        """)})
    assert problems(root) == []


def test_bare_link_line_is_judged_per_paragraph(make_vault: VaultFactory) -> None:
    root = make_vault({**BASE, "digest/wiki/n.md": node("""
        Body.

        ## Sources

        The decision that this node records was taken in the meeting of
        [[daily/2026-06-01/a.md]].

        - A list item that is a sentence: [[daily/2026-06-02/b.md]]
        - The same item wrapped onto
          [[resource/doc.md]].
        - [[daily/2026-06-02/b.md]]
        * [[daily/2026-06-02/b.md]], [[resource/doc.md]]; —
        > [[daily/2026-06-01/a.md|the meeting notes]]
        1. `retry.py` [[resource/doc.md]]
        2. 见 [[resource/doc.md]]
        """)})
    # Line 10 (a bare line of a wrapped sentence) and 14 (of a wrapped list item) are fine; 18
    # has letters in a code span, 19 CJK ones; 17 has only an alias.
    assert problems(root) == [
        "digest/wiki/n.md:15:3 error bare-source-link",
        "digest/wiki/n.md:16:3 error bare-source-link",
        "digest/wiki/n.md:17:3 error bare-source-link",
    ]


def test_bare_link_outside_sources_is_a_warning(make_vault: VaultFactory) -> None:
    root = make_vault({**BASE, "digest/wiki/n.md": node("""
        - [[digest/wiki/m.md]]

        ## Sources

        Stated in [[daily/2026-06-01/a.md]].

        ## See also

        [[daily/2026-06-02/b.md]]
        """), "digest/wiki/m.md": node("Text.\n\n## Sources\n\nIn [[resource/doc.md]].")})
    assert problems(root) == ["digest/wiki/n.md:5:3 warning bare-source-link",
                              "digest/wiki/n.md:13:1 warning bare-source-link"]


@pytest.mark.parametrize(("text", "bare"), [
    ("- [[a.md]]", True), ("* [[a.md]] [[b.md]]", True), ("1. [[a.md]].", True),
    ("> - [[a.md|Alias words]]", True), ("[[a.md]] — [[b.md]];", True), ("  [[a.md]]  ", True),
    ("- see [[a.md]]", False), ("- 见 [[a.md]]", False), ("[[a.md]] 中", False),
    ("[[a.md]]\nwrapped words", False), ("`code` [[a.md]]", False), ("- [[a.md]] é", False),
    ("2024-06-01: [[a.md]]", True), ("- [[a.md]] (2024)", True),
])
def test_is_bare_link_text(text: str, bare: bool) -> None:
    assert is_bare_link_text(text) is bare


def test_missing_and_empty_sources(make_vault: VaultFactory) -> None:
    root = make_vault({**BASE,
                       "digest/wiki/none.md": node("Body.\n\n### Sources\n\n"
                                                   "[[daily/2026-06-01/a.md]] says so."),
                       "digest/wiki/empty.md": node("Body.\n\n## sources:\n\nNothing cited.\n\n"
                                                    "## Later\n\nSee [[daily/2026-06-01/a.md]]."),
                       })
    assert problems(root) == ["digest/wiki/empty.md:7:1 error empty-sources",
                              "digest/wiki/none.md:5:1 error missing-sources"]


def test_non_source_targets(make_vault: VaultFactory) -> None:
    root = make_vault({**BASE, "digest/wiki/n.md": node("""
        # Intro

        ## Sources

        It extends [[digest/wiki/m.md]] and is explained in [[#Intro]].
        The raw note is [[daily/2026-06-01/a.md]]; the typo [[daily/missing.md]] is broken.
        A typo out of the sources: [[digest/wiki/gone.md]].
        """), "digest/wiki/m.md": node("M.\n\n## Sources\n\nIn [[resource/doc.md]].")})
    assert problems(root) == [
        "digest/wiki/n.md:9:12 error non-source-target",
        "digest/wiki/n.md:9:53 error non-source-target",
        "digest/wiki/n.md:10:53 error broken-link",
        "digest/wiki/n.md:11:28 error broken-link",
        "digest/wiki/n.md:11:28 error non-source-target",
    ]


def test_non_source_targets_in_obsidian_mode(make_vault: VaultFactory) -> None:
    root = make_vault({
        ".remelink/config.yaml": "links: {resolution: obsidian}\n",
        "daily/d1/note.md": "x\n", "resource/note.md": "y\n", "digest/wiki/idea.md": node(
            "Body.\n\n## Sources\n\n"
            "Both [[note]] and the missing [[gone]] and [[idea]] are cited."),
    })
    # `[[note]]` is ambiguous but every candidate is a source; `[[gone]]` could be anything
    # (broken only); `[[idea]]` is the node itself.
    assert problems(root) == ["digest/wiki/idea.md:9:6 error ambiguous-link",
                              "digest/wiki/idea.md:9:31 error broken-link",
                              "digest/wiki/idea.md:9:44 error non-source-target"]


def test_relation_fields(make_vault: VaultFactory) -> None:
    m_node = node("M.\n\n## Sources\n\nIn [[resource/doc.md]].")
    root = make_vault({**BASE, "digest/wiki/m.md": m_node,
                       "digest/wiki/n.md": node("""
        relates_to:: [[digest/wiki/m.md]]
        Text with [derived_from:: [[digest/wiki/m.md]]] inline, and `source:: [[x.md]]` in code.
        Time 10::[[digest/wiki/m.md]] is not a field name.

        ## Sources

        派生自:: [[daily/2026-06-01/a.md]]
        """)})
    assert [p for p in problems(root) if "relation-field" in p] == [
        "digest/wiki/n.md:5:1 error relation-field",
        "digest/wiki/n.md:6:12 error relation-field",
        "digest/wiki/n.md:11:1 error relation-field",
    ]


@pytest.mark.parametrize(("frontmatter", "expected"), [
    ("name: N\ndescription: D\n", []),
    ("name: 2024\ndescription: yes\n", []),
    ("description: D\n", ["'name' is missing"]),
    ("name: ''\ndescription: '   '\n", ["'name' is empty", "'description' is empty"]),
    ("name:\ndescription: ~\n", ["'name' is empty", "'description' is empty"]),
    ("name: [bad\n", ["invalid YAML in frontmatter at line"]),
    ("name: a\nname: b\ndescription: d\n", ["duplicate key 'name'"]),
])
def test_frontmatter_checks(make_vault: VaultFactory, frontmatter: str,
                            expected: list[str]) -> None:
    text = f"---\n{frontmatter}---\nBody.\n\n## Sources\n\nIn [[resource/doc.md]].\n"
    root = make_vault({**BASE, "digest/wiki/n.md": text})
    report = lint_links(root, load_settings(root))
    got = [p.message for p in report.problems if p.code == "frontmatter"]
    assert len(got) == len(expected)
    for message, start in zip(got, expected, strict=True):
        assert message.startswith(start) or start in message


def test_only_bucket_files_are_nodes(make_vault: VaultFactory) -> None:
    root = make_vault({**BASE, "digest/README.md": "Index: [[digest/wiki/n.md]]\n",
                       "digest/drafts/idea.md": "No frontmatter, no Sources.\n",
                       "digest/wiki/n.md": node("N.\n\n## Sources\n\nIn [[resource/doc.md]].")})
    assert problems(root) == []


def test_anchors(make_vault: VaultFactory) -> None:
    root = make_vault({
        "daily/a.md": "# Top\n\n## **Bold** heading\n\nPara ^blk-1\n\n- item ^li\n",
        "daily/b.md": "[[daily/a.md#bold heading]] [[daily/a.md#**Bold** Heading]] "
                      "[[daily/a.md#Top#Bold heading]] [[daily/a.md#^blk-1]] [[daily/a.md#^li]] "
                      "[[daily/a.md#L1]] [[daily/a.md#L1-L7]] [[daily/a.md#L1-L2,L6-L7]]\n"
                      "[[daily/a.md#Nope]] [[daily/a.md#Top#Nope]] [[daily/a.md#^BLK-1]] "
                      "[[daily/a.md#L0]] [[daily/a.md#L3-L2]] [[daily/a.md#L1,L8]]\n"
                      "[[resource/x.pdf#page=3]] [[resource/t.txt#L2]] [[resource/t.txt#L3]]\n",
        "resource/x.pdf": b"%PDF", "resource/t.txt": "one\ntwo\n",
    })
    # Line 1 all resolve (formatting marks and case ignored in headings; block ids on list items;
    # line ranges within the 7 lines); block ids are case-sensitive; a PDF page is not checked.
    assert problems(root) == [f"daily/b.md:2:{c} error missing-anchor"
                              for c in (1, 21, 45, 67, 85, 106)] + \
        ["daily/b.md:3:49 error missing-anchor"]


# -- levels and exit codes -------------------------------------------------------------------

def test_levels_from_config(make_vault: VaultFactory) -> None:
    files: dict[str, str | bytes] = {
        **BASE,
        "daily/c.md": "[[daily/missing.md]] [[daily/2026-06-01/a.md#Gone]]\n",
        "digest/wiki/n.md": node("- [[daily/c.md]]\n\n## Sources\n\n- [[daily/c.md]]"),
    }
    root = make_vault(files)
    # Defaults: bare-source-link is an error in Sources, a warning elsewhere; orphan-node is off.
    assert codes(root) == [("error", "broken-link"), ("error", "missing-anchor"),
                           ("warning", "bare-source-link"), ("error", "bare-source-link")]
    # `"off"` is quoted: unquoted, YAML 1.1 reads it as false (see test_init.py).
    (root / ".remelink" / "config.yaml").write_text(
        'lint:\n  broken-link: warning\n  missing-anchor: "off"\n  bare-source-link: warning\n'
        "  orphan-node: error\n")
    assert codes(root) == [("warning", "broken-link"), ("error", "orphan-node"),
                           ("warning", "bare-source-link"), ("warning", "bare-source-link")]
    report = lint_links(root, load_settings(root))
    assert report.exit_code == 1 and report.errors == 1 and report.warnings == 3
    (root / ".remelink" / "config.yaml").write_text(
        "lint: {broken-link: 'off', missing-anchor: 'off', bare-source-link: 'off'}\n")
    report = lint_links(root, load_settings(root))
    assert report.problems == [] and report.exit_code == 0


def test_warnings_only_exit_zero(make_vault: VaultFactory,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    root = make_vault({"daily/a.md": b"\x00binary"})
    assert lint.main(["--vault", str(root)]) == 0
    out, err = capsys.readouterr()
    assert out == "daily/a.md:1:1: warning unreadable cannot read note: binary file (NUL bytes), " \
                  "not a note (move it out of the notes folders or give it a non-.md extension)\n"
    assert err.startswith("lint-links: 0 error(s), 1 warning(s) in 1 file(s)")


@pytest.mark.parametrize(("config", "message"), [
    ("lint: {broken-link: fatal}\n", "lint.broken-link must be error | warning | off"),
    ("lint: {no-such-code: error}\n", "unknown key(s) lint.no-such-code"),
    ("links: {resolution: fuzzy}\n", "links.resolution must be path | obsidian"),
    ("links: [oops\n", "line 2, column 1: cannot parse the YAML: expected ',' or ']'"),
    ("surprise: 1\n", "unknown key(s) surprise"),
])
def test_invalid_config_exits_2_with_one_line(make_vault: VaultFactory, config: str, message: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    root = make_vault({".remelink/config.yaml": config, "daily/a.md": "[[x.md]]\n"})
    assert lint.main(["--vault", str(root)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and message in err and ".remelink/config.yaml" in err


def test_usage_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert lint.main(["--format", "xml"]) == 2
    assert lint.main(["--vault", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'xml'" in err and "nowhere does not exist" in err


def test_codes_lists_every_code(capsys: pytest.CaptureFixture[str]) -> None:
    assert lint.main(["--codes"]) == 0
    listed = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert dict((code, level) for code, level in listed) == PROBLEM_CODES


# -- PATHS mode and --all --------------------------------------------------------------------

@pytest.fixture
def linked(make_vault: VaultFactory) -> Path:
    return make_vault({
        "daily/a.md": "[[daily/b.md]] [[daily/missing.md]]\n",
        "daily/b.md": "# B\n\n## Part\n\n[[daily/also-missing.md]]\n",
        "daily/c.md": "[[daily/b.md#Part]] [[daily/b.md#Gone]]\n",
        "resource/r.md": "[[daily/b.md]]\n",
    })


def test_paths_mode_checks_only_those_files(linked: Path) -> None:
    assert problems(linked, ["daily/a.md"]) == ["daily/a.md:1:16 error broken-link"]
    assert problems(linked, ["daily/c.md", "daily/a.md"]) == [
        "daily/a.md:1:16 error broken-link", "daily/c.md:1:21 error missing-anchor"]
    assert problems(linked) == ["daily/a.md:1:16 error broken-link",
                                "daily/b.md:5:1 error broken-link",
                                "daily/c.md:1:21 error missing-anchor"]


def test_paths_mode_ignores_what_is_not_a_note(linked: Path) -> None:
    assert problems(linked, ["daily/gone.md", "image.png", ".remelink/config.yaml"]) == []


def test_a_folder_path_stands_for_its_notes(linked: Path) -> None:
    assert problems(linked, ["daily"]) == problems(linked, ["daily/"]) == problems(linked)


def test_all_reports_links_to_a_renamed_or_deleted_note(linked: Path) -> None:
    (linked / "daily/b.md").rename(linked / "daily/b2.md")
    # pre-commit passes the deleted and the added path; --all finds the notes still linking the
    # old name, wherever they are.
    assert problems(linked, ["daily/b.md", "daily/b2.md"]) == [
        "daily/b2.md:5:1 error broken-link"]
    assert problems(linked, ["daily/b.md", "daily/b2.md"], include_all=True) == [
        "daily/a.md:1:1 error broken-link", "daily/b2.md:5:1 error broken-link",
        "daily/c.md:1:1 error broken-link", "daily/c.md:1:21 error broken-link",
        "resource/r.md:1:1 error broken-link"]


def test_all_reports_anchors_into_a_changed_note(linked: Path) -> None:
    (linked / "daily/b.md").write_text("# B\n\nNo more parts.\n")
    assert problems(linked, ["daily/b.md"], include_all=True) == [
        "daily/c.md:1:1 error missing-anchor", "daily/c.md:1:21 error missing-anchor"]


def test_all_in_obsidian_mode(make_vault: VaultFactory) -> None:
    root = make_vault({".remelink/config.yaml": "links: {resolution: obsidian}\n",
                       "daily/a.md": "[[Old Name]] and [[other]]\n", "notes/other.md": "",
                       "notes/New Name.md": ""})
    assert problems(root, ["notes/Old Name.md", "notes/New Name.md"], include_all=True) == [
        "daily/a.md:1:1 error broken-link"]


def test_command_line_paths_are_relative_to_the_cwd(linked: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(linked / "daily")
    assert lint.main(["a.md"]) == 1
    assert capsys.readouterr().out.startswith("daily/a.md:1:16: error broken-link")
    # The vault is a sub-folder of the repository pre-commit runs in.
    monkeypatch.chdir(tmp_path)
    rel = linked.relative_to(tmp_path)
    assert lint.main([f"{rel}/daily/c.md", f"{rel}/daily/b.md"]) == 1
    out, err = capsys.readouterr()
    assert out.splitlines() == ["daily/b.md:5:1: error broken-link [[daily/also-missing.md]]: "
                                "target does not exist",
                                "daily/c.md:1:21: error missing-anchor [[daily/b.md#Gone]]: "
                                "heading 'Gone' not found in daily/b.md"]
    assert "2 file(s)" in err
    # A path outside the vault is a usage error, never a silent pass of a file not checked.
    (tmp_path / "elsewhere.md").write_text("[[x]]\n")
    assert lint.main(["--vault", str(linked), "elsewhere.md", f"{rel}/daily/a.md"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (f"remelink-lint-links: elsewhere.md: outside the vault {linked} (relative "
                   "paths are taken from the working directory, as pre-commit passes them; "
                   "limit the hook to the vault's folder with `files:`)\n")
    # Named from another folder: the hint names the file meant, relative paths never resolve
    # against the vault.
    assert lint.main(["--vault", str(linked), "daily/a.md"]) == 2
    assert f"pass {linked}/daily/a.md" in capsys.readouterr().err


def test_cwd_reached_through_a_symlink(linked: Path, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "alias").symlink_to(linked)
    monkeypatch.chdir(tmp_path / "alias")
    assert lint.main(["--vault", str(linked), "daily/a.md"]) == 1
    assert capsys.readouterr().out.startswith("daily/a.md:1:16:")


# -- robustness ------------------------------------------------------------------------------

def test_bad_input_never_crashes_the_run(make_vault: VaultFactory) -> None:
    root = make_vault({
        "daily/binary.md": b"\x00\x01\x02",
        "daily/latin1.md": "caf\xe9".encode("latin-1"),
        "daily/empty.md": b"",
        "daily/bom-crlf.md": "\ufeff---\r\na: 1\r\n---\r\n[[daily/empty.md]]\r\n".encode(),
        "digest/wiki/binary.md": b"\x00",
        "digest/wiki/empty.md": b"",
        "daily/big.md": b"x" * 2048,
        ".remelink/config.yaml": "limits: {max_note_bytes: 1024}\n",
    })
    assert problems(root) == [
        "daily/big.md:1:1 warning unreadable", "daily/binary.md:1:1 warning unreadable",
        "daily/latin1.md:1:1 warning unreadable", "digest/wiki/binary.md:1:1 error frontmatter",
        "digest/wiki/empty.md:1:1 error frontmatter", "digest/wiki/empty.md:1:1 error frontmatter",
        "digest/wiki/empty.md:1:1 error missing-sources"]


def test_decomposed_file_names_are_read(tmp_path: Path) -> None:
    import unicodedata

    root = tmp_path / "v"
    (root / "daily").mkdir(parents=True)
    (root / "daily" / unicodedata.normalize("NFD", "café.md")).write_text("[[daily/b.md]]\n")
    (root / "daily" / "b.md").write_text("[[daily/café.md]]\n")
    assert problems(root) == []


def test_import_is_light_and_lint_of_plain_notes_loads_no_yaml(make_vault: VaultFactory) -> None:
    root = make_vault({"daily/a.md": "[[daily/b.md]] and [[daily/b.md#Part]]\n",
                       "daily/b.md": "---\ntitle: not parsed\n---\n## Part\n"}, marker=False)
    code = textwrap.dedent(f"""
        import sys
        import remelink.lint
        heavy = ("litellm", "whoosh", "typer", "rich", "pydantic", "yaml", "markdown_it")
        assert not [m for m in heavy if m in sys.modules], sorted(sys.modules)
        rc = remelink.lint.main(["--vault", {str(root)!r}])
        loaded = [m for m in heavy if m in sys.modules]
        print(rc, loaded)
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "0 []"
