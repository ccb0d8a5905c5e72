"""Is this a vault written in Obsidian? (SPEC §3.2: which link resolution it needs.)

Obsidian writes short links (`[[Some Note]]`, `![[diagram.png]]`, `[[Note#^block]]`): a name
that resolves anywhere in the vault, not a path. A vault is Obsidian's when it holds the
`.obsidian/` folder Obsidian creates in every vault it opens, or when its links say so: more of
them resolve only by name than as paths (at least one), so that a vault of full-path links with
one slip keeps `path`. `remelink init` writes the answer into the configuration, with the
reason; settings without one take `.obsidian/` alone (config.default_resolution), since every
command loads them and a scan of the notes costs too much there.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from remelink.errors import NoteError
from remelink.vault import links as wl
from remelink.vault.boundary import read_listed, vault_real
from remelink.vault.notes import decode
from remelink.vault.paths import OBSIDIAN_DIR
from remelink.vault.resolve import Resolver, VaultFiles

MAX_NOTE_BYTES = 1 << 20  # a note larger than this is not read for the count


@dataclass(frozen=True)
class Detected:
    resolution: str  # path | obsidian
    reason: str      # why, for the comment init writes ("" for a vault without links)
    by_name: int = 0  # links that resolve only by name
    by_path: int = 0  # links that resolve as paths


def detect(root: Path) -> Detected:
    """The link resolution the vault at `root` is written for (see the module docstring)."""
    if os.path.isdir(root / OBSIDIAN_DIR):
        return Detected("obsidian", f"the vault holds {OBSIDIAN_DIR}/")
    if not root.is_dir():
        return Detected("path", "")
    files = VaultFiles.scan(root)
    as_path, as_name = Resolver(files, "path"), Resolver(files, "obsidian")
    root_real = vault_real(root)
    by_name = by_path = 0
    for rel in files.markdown():
        if rel in files.escaping or rel in files.special:
            continue
        try:
            got = read_listed(os.path.join(str(files.root), files.on_disk(rel)),
                              root_real=root_real, limit=MAX_NOTE_BYTES)
            if got.data is None or b"[[" not in got.data:
                continue
            note = decode(rel, got.data, max_bytes=MAX_NOTE_BYTES)
        except (OSError, NoteError):
            continue
        for link in wl.parse_links(note.body, note.body_line):
            if not link.target:
                continue
            if as_path.resolve(link.target, rel).status == "ok":
                by_path += 1
            elif as_name.resolve(link.target, rel).status == "ok":
                by_name += 1
    if by_name and by_name >= by_path:
        return Detected("obsidian", f"{by_name} of its links resolve only by name",
                        by_name, by_path)
    return Detected("path", f"its links are paths ({by_path})" if by_path else "",
                    by_name, by_path)
