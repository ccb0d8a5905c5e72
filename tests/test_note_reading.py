"""One reader for both indexes (remelink/index/nodes.py `load_note`): the node index and the
passage index read a file the same way, and their notices differ only in the verb
("indexed" / "searched")."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from remelink.config import Settings
from remelink.index.nodes import ReadResult, fingerprint, read_node, scan_digest
from remelink.search import reading

CASES = {
    "ok.md": b"---\nname: Rotate keys\n---\n# Rotate keys\n\nEvery 14 days.\n",
    "latin1.md": "# Caf\xe9\n\nna\xefve text\n".encode("latin-1"),
    "binary.md": b"\x00\x01\x02\xff\xfe" * 20,
    "big.md": b"# Big\n\n" + b"word " * 400,
    "bad-yaml.md": b"---\nname: [unclosed\n---\nbody\n",
}


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    (tmp_path / "digest" / "wiki").mkdir(parents=True)
    for name, data in CASES.items():
        (tmp_path / "digest" / "wiki" / name).write_bytes(data)
    return tmp_path


def both(vault: Path, rel: str, max_bytes: int, known: str | None = None
         ) -> tuple[reading.NoteRead, ReadResult]:
    stat = scan_digest(vault, "digest")[rel]
    settings = replace(Settings(), max_note_bytes=max_bytes)
    return (reading.read(rel, stat, settings, known=known),
            read_node(rel, stat, "digest", max_bytes, known=known))


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_two_readers_agree_but_for_the_verb(vault: Path, name: str) -> None:
    rel = f"digest/wiki/{name}"
    searched, indexed = both(vault, rel, 1000)
    assert searched.fingerprint == indexed.fingerprint
    assert (searched.doc is None) == (indexed.doc is None)
    s_notice, i_notice = searched.notice, indexed.notice
    if name == "ok.md":
        assert s_notice is None and i_notice is None
        assert searched.fingerprint == fingerprint(CASES[name])
        return
    assert s_notice and i_notice
    if name == "bad-yaml.md":  # frontmatter is each index's own affair; same wording
        assert s_notice == i_notice and "indexed without its frontmatter" in s_notice
        return
    assert "searched" in s_notice and "indexed" not in s_notice
    assert s_notice.replace("searched", "indexed") == i_notice
    expected = {"latin1.md": "not valid UTF-8", "binary.md": "not searched",
                "big.md": "note limit; not searched"}[name]
    assert expected in s_notice
    if name == "latin1.md":
        assert searched.doc is not None


def test_an_unchanged_fingerprint_is_reported_without_parsing(vault: Path) -> None:
    rel = "digest/wiki/ok.md"
    fp = fingerprint(CASES["ok.md"])
    searched, indexed = both(vault, rel, 1000, known=fp)
    assert searched.unchanged and indexed.unchanged
    assert searched.doc is None and indexed.doc is None
    big = "digest/wiki/big.md"
    first, _ = both(vault, big, 1000)
    again, again_node = both(vault, big, 1000, known=first.fingerprint)
    assert first.fingerprint.startswith("size:") and again.unchanged
    assert again_node.unchanged
