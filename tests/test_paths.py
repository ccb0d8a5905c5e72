"""Workspace-relative paths, the sandbox, vault root discovery and slugs (SPEC §1)."""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

import pytest

from remelink.errors import SandboxError
from remelink.vault.paths import (
    find_vault_root,
    glob_matcher,
    has_cjk,
    is_unsafe_target,
    normalize_relpath,
    resolve_inside,
    slugify,
)


@pytest.mark.parametrize(("raw", "expected"), [
    ("digest/wiki/x.md", "digest/wiki/x.md"),
    ("./digest/wiki/x.md", "digest/wiki/x.md"),
    ("digest//wiki/./x.md", "digest/wiki/x.md"),
    ("digest/wiki/", "digest/wiki"),
    ("  daily/a.md  ", "daily/a.md"),
    ("...", "..."),  # a name, not a parent
    ("~draft.md", "~draft.md"),  # a name that starts with ~ is a name
    ("daily/周会.md", "daily/周会.md"),
    (unicodedata.normalize("NFD", "daily/café.md"), "daily/café.md"),  # NFC
])
def test_normalize_relpath_accepts(raw: str, expected: str) -> None:
    assert normalize_relpath(raw) == expected
    assert unicodedata.is_normalized("NFC", normalize_relpath(raw))


@pytest.mark.parametrize(("raw", "reason"), [
    ("/etc/passwd", "absolute path"),
    ("//server/share/x.md", "absolute path"),
    ("\\\\server\\share", "absolute path"),
    ("~/notes.md", "absolute path"),
    ("~", "absolute path"),
    ("C:\\Users\\x.md", "absolute path"),
    ("c:/x.md", "absolute path"),
    ("C:x.md", "absolute path"),  # drive-relative
    ("../x.md", "climbs out"),
    ("digest/../../x.md", "climbs out"),
    ("digest/..", "climbs out"),
    ("..", "climbs out"),
    ("a/..\\b.md", "climbs out"),
    ("a\\b.md", "backslash"),
    ("a\x00b.md", "control character"),
    ("a\nb.md", "control character"),
    ("a\tb.md", "control character"),
    ("a\x9bb.md", "control character"),  # C1
    ("a\u202eb.md", "control character"),  # right-to-left override
    ("", "empty path"),
    ("   ", "empty path"),
    (".", "names no file"),
    ("./", "names no file"),
])
def test_normalize_relpath_refuses(raw: str, reason: str) -> None:
    with pytest.raises(SandboxError, match=reason) as info:
        normalize_relpath(raw)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(("target", "unsafe"), [
    ("digest/x.md", None), ("x", None), ("~draft", None), ("Q: answers", None),
    ("/abs.md", "absolute path"), ("~/x.md", "absolute path"), ("D:\\x.md", "absolute path"),
    ("a/../b.md", "path climbs out with '..'"), ("..\\b.md", "path climbs out with '..'"),
])
def test_is_unsafe_target(target: str, unsafe: str | None) -> None:
    assert is_unsafe_target(target) == unsafe


@pytest.fixture
def sandbox(tmp_path: Path) -> tuple[Path, Path]:
    vault, outside = tmp_path / "vault", tmp_path / "outside"
    (vault / "digest" / "wiki").mkdir(parents=True)
    (vault / "real").mkdir()
    (outside / "sub").mkdir(parents=True)
    (outside / "secret.md").write_text("secret")
    (vault / "real" / "in.md").write_text("in")
    os.symlink(outside / "secret.md", vault / "digest" / "wiki" / "leak.md")
    os.symlink(outside / "sub", vault / "digest" / "linked")
    os.symlink(outside / "missing.md", vault / "digest" / "wiki" / "dangling.md")
    os.symlink("../../real/in.md", vault / "digest" / "wiki" / "inside.md")
    os.symlink("real", vault / "realdir")
    return vault, outside


def test_resolve_inside_plain(sandbox: tuple[Path, Path]) -> None:
    vault, _ = sandbox
    assert resolve_inside(vault, "digest/wiki/new.md") == vault.resolve() / "digest/wiki/new.md"
    assert resolve_inside(vault, "digest/wiki/new.md", follow_symlinks=False).name == "new.md"


@pytest.mark.parametrize("rel", ["digest/wiki/leak.md", "digest/linked/x.md",
                                 "digest/wiki/dangling.md", "digest/linked/new.md"])
def test_symlinks_leaving_the_vault_are_refused(sandbox: tuple[Path, Path], rel: str) -> None:
    vault, _ = sandbox
    with pytest.raises(SandboxError, match="outside the vault"):
        resolve_inside(vault, rel)


@pytest.mark.parametrize("rel", ["digest/wiki/inside.md", "realdir/in.md", "realdir/new.md",
                                 "digest/linked/new.md", "digest/wiki/leak.md"])
def test_writes_never_go_through_a_symlink(sandbox: tuple[Path, Path], rel: str) -> None:
    vault, _ = sandbox
    with pytest.raises(SandboxError, match="symlink"):
        resolve_inside(vault, rel, follow_symlinks=False)


def test_symlinks_inside_the_vault_are_fine_for_reading(sandbox: tuple[Path, Path]) -> None:
    vault, _ = sandbox
    assert resolve_inside(vault, "digest/wiki/inside.md").read_text() == "in"
    assert resolve_inside(vault, "realdir/in.md").read_text() == "in"


def test_vault_root_reached_through_a_symlink(sandbox: tuple[Path, Path], tmp_path: Path) -> None:
    vault, _ = sandbox
    os.symlink(vault, tmp_path / "alias")
    assert resolve_inside(tmp_path / "alias", "real/in.md").read_text() == "in"


def test_find_vault_root(tmp_path: Path) -> None:
    (tmp_path / "v" / ".remelink").mkdir(parents=True)
    (tmp_path / "v" / "daily" / "2026").mkdir(parents=True)
    assert find_vault_root(cwd=tmp_path / "v" / "daily" / "2026") == (tmp_path / "v").resolve()
    assert find_vault_root(cwd=tmp_path) == tmp_path.resolve()  # no marker: the cwd
    assert find_vault_root(tmp_path / "v" / "daily") == (tmp_path / "v" / "daily").resolve()


@pytest.mark.parametrize(("title", "slug"), [
    ("Idempotency Keys", "idempotency-keys"),
    ("  Rotate API keys (quarterly)!  ", "rotate-api-keys-quarterly"),
    ("Café au lait", "cafe-au-lait"),
    ("Ｆｕｌｌ　ｗｉｄｔｈ", "full-width"),
    ("v1.2 release", "v1-2-release"),
    ("..hidden..", "hidden"),
    ("a/b\\c:d*e?f\"g<h>i|j", "a-b-c-d-e-f-g-h-i-j"),
    ("tab\tnew\nline\x00nul", "tab-new-line-nul"),
    ("数据脱敏规则", "数据脱敏规则"),
    ("学习了Python编程", "学习了python编程"),
    ("周会 决定", "周会-决定"),
    ("ガイド", "ガイド"),  # the voiced mark stays (カイト would be another word)
    ("한국어", "한국어"),
    ("हिन्दी", "हिन्दी"),  # combining vowel signs stay
    ("Привет Мир", "привет-мир"),
    ("straße", "straße"),
    ("emoji 🎉 party", "emoji-party"),
    ("CON", "con-note"),  # a Windows device name
    ("", "node"),
    ("...", "node"),
    ("🎉", "node"),
])
def test_slugify(title: str, slug: str) -> None:
    assert slugify(title) == slug


def test_slug_limits() -> None:
    assert len(slugify("word " * 40)) <= 80
    assert not slugify("word " * 40).endswith("-")
    long_cjk = slugify("𠀀" * 100)  # 4-byte characters
    assert len(long_cjk.encode("utf-8")) <= 200 and long_cjk == "𠀀" * 50
    assert len(slugify("数" * 100).encode("utf-8")) <= 200


def test_slug_never_holds_forbidden_characters() -> None:
    for title in ['a/b', 'a\\b', 'a:b', 'a*b', 'a?b', 'a"b', 'a<b', 'a>b', 'a|b', ' a ', '.a.',
                  "\x7fx\x1f"]:
        slug = slugify(title)
        assert not set(slug) & set('/\\:*?"<>|') and slug == slug.strip(" .-")
        assert all(ord(ch) >= 32 and ord(ch) != 127 for ch in slug)


def test_has_cjk() -> None:
    assert has_cjk("学习 python") and has_cjk("ガイド") and has_cjk("한국어")
    assert not has_cjk("plain text") and not has_cjk("Привет")


@pytest.mark.parametrize(("globs", "path", "expected"), [
    (["templates/"], "templates/daily.md", True),
    (["templates/"], "templates/sub/x.md", True),
    (["templates/"], "daily/templates/x.md", False),
    (["templates/**"], "templates/sub/x.md", True),
    (["*.excalidraw.md"], "any/where/drawing.excalidraw.md", True),
    (["*.excalidraw.md"], "drawing.excalidraw.md", True),
    (["*.excalidraw.md"], "drawing.md", False),
    (["daily/*.md"], "daily/a.md", True),
    (["daily/*.md"], "daily/2026/a.md", False),
    (["daily/**/*.md"], "daily/a.md", True),
    (["daily/**/*.md"], "daily/2026/06/a.md", True),
    (["daily/202?-*/x.md"], "daily/2026-06/x.md", True),
    (["daily/[!a]*.md"], "daily/a.md", False),
    (["daily/[!a]*.md"], "daily/b.md", True),
    (["模板/"], "模板/日记.md", True),
    (["a.md", "b/"], "b/c.md", True),
    (["a.md"], "xa.md", False),
])
def test_glob_matcher(globs: list[str], path: str, expected: bool) -> None:
    matcher = glob_matcher(globs)
    assert matcher is not None and matcher(path) is expected


def test_no_globs_is_no_matcher() -> None:
    assert glob_matcher([]) is None
