"""Wikilink resolution in `path` and `obsidian` modes (SPEC §3.2)."""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

import pytest
from conftest import VaultFactory

from remelink.vault.resolve import Resolver, VaultFiles


@pytest.fixture
def vault(make_vault: VaultFactory) -> Path:
    return make_vault({
        "daily/2026-06-01/payments-retry.md": "retry\n",
        "daily/2026-06-22/周会.md": "meeting\n",
        "digest/wiki/Idempotency Keys.md": "keys\n",
        "digest/wiki/note.md": "a\n",
        "digest/personal/note.md": "b\n",
        "resource/spec.pdf": b"%PDF",
        "resource/img/diagram.png": b"\x89PNG",
        "top.md": "top\n",
        ".obsidian/app.json": "{}",
        ".attachments/photo.png": b"\x89PNG",
    })


def res(vault: Path, target: str, mode: str) -> tuple[str, str | None]:
    r = Resolver(VaultFiles.scan(vault), mode).resolve(target, "daily/source.md")
    return r.status, r.path


@pytest.mark.parametrize(("target", "expected"), [
    ("daily/2026-06-01/payments-retry.md", ("ok", "daily/2026-06-01/payments-retry.md")),
    ("./daily/2026-06-01/payments-retry.md", ("ok", "daily/2026-06-01/payments-retry.md")),
    ("daily/2026-06-22/周会.md", ("ok", "daily/2026-06-22/周会.md")),
    (unicodedata.normalize("NFD", "digest/wiki/Idempotency Keys.md"),
     ("ok", "digest/wiki/Idempotency Keys.md")),
    ("resource/img/diagram.png", ("ok", "resource/img/diagram.png")),
    ("daily/2026-06-01/payments-retry", ("broken", None)),  # no .md appended
    ("payments-retry.md", ("broken", None)),  # no name lookup
    ("Daily/2026-06-01/payments-retry.md", ("broken", None)),  # case matters
    ("digest/wiki/idempotency keys.md", ("broken", None)),
    ("digest//wiki/note.md", ("broken", None)),
    (".attachments/photo.png", ("ok", ".attachments/photo.png")),  # on disk, as written
    (".attachments/Photo.png", ("broken", None)),
    ("../outside.md", ("outside", None)),
    ("/etc/passwd", ("outside", None)),
    ("digest/../top.md", ("outside", None)),
    ("", ("ok", "daily/source.md")),  # `[[#Heading]]`: the note itself
])
def test_path_mode(vault: Path, target: str, expected: tuple[str, str | None]) -> None:
    assert res(vault, target, "path") == expected


@pytest.mark.parametrize(("target", "expected"), [
    ("daily/2026-06-01/payments-retry.md", ("ok", "daily/2026-06-01/payments-retry.md")),
    ("daily/2026-06-01/payments-retry", ("ok", "daily/2026-06-01/payments-retry.md")),
    ("payments-retry", ("ok", "daily/2026-06-01/payments-retry.md")),
    ("PAYMENTS-RETRY", ("ok", "daily/2026-06-01/payments-retry.md")),
    ("payments-retry.md", ("ok", "daily/2026-06-01/payments-retry.md")),
    ("2026-06-01/payments-retry", ("ok", "daily/2026-06-01/payments-retry.md")),
    ("周会", ("ok", "daily/2026-06-22/周会.md")),
    ("idempotency keys", ("ok", "digest/wiki/Idempotency Keys.md")),
    (unicodedata.normalize("NFD", "Idempotency Keys"), ("ok", "digest/wiki/Idempotency Keys.md")),
    ("diagram.png", ("ok", "resource/img/diagram.png")),
    ("spec.pdf", ("ok", "resource/spec.pdf")),
    ("top", ("ok", "top.md")),
    ("wiki/note", ("ok", "digest/wiki/note.md")),
    ("note", ("ambiguous", None)),
    ("iki/note", ("broken", None)),  # a folder suffix matches whole segments only
    ("photo.png", ("broken", None)),  # dot-folders are not part of an Obsidian vault
    ("missing", ("broken", None)),
    ("../x", ("outside", None)),
])
def test_obsidian_mode(vault: Path, target: str, expected: tuple[str, str | None]) -> None:
    assert res(vault, target, "obsidian") == expected


def test_ambiguous_lists_every_candidate(vault: Path) -> None:
    r = Resolver(VaultFiles.scan(vault), "obsidian").resolve("NOTE", "top.md")
    assert r.status == "ambiguous"
    assert r.candidates == ("digest/personal/note.md", "digest/wiki/note.md")


def test_exact_path_wins_over_a_name_match(make_vault: VaultFactory) -> None:
    root = make_vault({"Note.md": "", "dir1/Note.md": "", "dir2/Note.md": ""})
    resolver = Resolver(VaultFiles.scan(root), "obsidian")
    assert resolver.resolve("Note", "x.md").path == "Note.md"
    assert resolver.resolve("dir2/Note", "x.md").path == "dir2/Note.md"


def test_symlinks(make_vault: VaultFactory, tmp_path: Path) -> None:
    root = make_vault({"real/in.md": "in\n"})
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "secret.md").write_text("s")
    (outside / "sub" / "n.md").write_text("n")
    os.symlink(outside / "secret.md", root / "leak.md")
    os.symlink(outside / "sub", root / "linked")
    os.symlink(root / "real", root / "inner")
    files = VaultFiles.scan(root)
    assert "leak.md" in files.escaping and "linked" in files.escaping
    for mode in ("path", "obsidian"):
        resolver = Resolver(files, mode)
        assert resolver.resolve("leak.md", "x.md").status == "outside"
        assert resolver.resolve("linked/n.md", "x.md").status == "outside"
        # A folder linked inside the vault: its files are reachable (not walked, asked of disk).
        assert resolver.resolve("inner/in.md", "x.md").path == "inner/in.md"
    assert Resolver(files, "obsidian").resolve("leak", "x.md").status == "outside"


def test_decomposed_file_names_on_disk(tmp_path: Path) -> None:
    root = tmp_path / "v"
    (root / "daily").mkdir(parents=True)
    nfd = unicodedata.normalize("NFD", "café.md")
    (root / "daily" / nfd).write_text("x", encoding="utf-8")
    files = VaultFiles.scan(root)
    assert files.files == {"daily/café.md"}
    assert files.on_disk("daily/café.md") == f"daily/{nfd}"
    assert (root / files.on_disk("daily/café.md")).read_text() == "x"
    assert Resolver(files).resolve("daily/café.md", "a.md").path == "daily/café.md"


def test_cache_follows_added_and_removed_files(vault: Path) -> None:
    files = VaultFiles.scan(vault)
    resolver = Resolver(files, "path")
    assert resolver.resolve("digest/wiki/new.md", "a.md").status == "broken"
    files.add("digest/wiki/new.md")
    assert resolver.resolve("digest/wiki/new.md", "a.md").status == "ok"
    files.discard("digest/wiki/new.md")
    assert resolver.resolve("digest/wiki/new.md", "a.md").status == "broken"


def test_markdown_listing_skips_dot_folders(vault: Path) -> None:
    files = VaultFiles.scan(vault)
    assert files.markdown() == sorted(["daily/2026-06-01/payments-retry.md",
                                       "daily/2026-06-22/周会.md",
                                       "digest/personal/note.md", "digest/wiki/Idempotency Keys.md",
                                       "digest/wiki/note.md", "top.md"])
    assert not any(p.startswith(".") for p in files.files)
