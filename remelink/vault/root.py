"""Which folder a command works on, and whether it is a vault at all (SPEC §1).

The root is `--vault PATH`, else the nearest ancestor of the working directory holding
`.remelink/`, else the working directory. A folder is a vault when it holds `.remelink/` or one
of the configured folders (`daily/`, `resource/`, `digest/` by default). Every command but
`init` refuses anything else (exit 2) before it creates a file there: a cron line with a typo in
its path would otherwise report "0 notes scanned" every night and leave a `.remelink/` behind.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from remelink.config import Settings, load_settings
from remelink.errors import UsageError
from remelink.vault.own import check_marker
from remelink.vault.paths import MARKER_DIR, find_vault_root


def check_folder(root: Path, given: str | os.PathLike[str] | None) -> None:
    """Refuse a root that does not exist or is not a directory (UsageError, exit 2)."""
    shown = str(given) if given is not None else str(root)
    if not root.exists():
        raise UsageError(f"vault {shown} does not exist",
                         hint="check the --vault path, or create a vault there with "
                              f"`remelink init {shown}`")
    if not root.is_dir():
        raise UsageError(f"vault {shown} is not a directory",
                         hint="--vault takes the vault's folder, not a file in it")


def is_vault(root: Path, settings: Settings) -> bool:
    folders = settings.folders
    return any((root / name).is_dir()
               for name in (MARKER_DIR, folders.daily, folders.resource, folders.digest))


def require_vault(root: Path, settings: Settings, given: str | os.PathLike[str] | None) -> None:
    """Refuse a directory that is not a vault (UsageError, exit 2), naming what was looked for."""
    if is_vault(root, settings):
        return
    f = settings.folders
    where = str(given) if given is not None else f"{root} (the working directory)"
    raise UsageError(
        f"{where} is not a remelink vault: it has neither {MARKER_DIR}/ nor {f.daily}/, "
        f"{f.resource}/ or {f.digest}/",
        hint=f"run `remelink init {given if given is not None else '.'}` to make it one, or "
             "pass --vault PATH")


def open_vault(explicit: str | os.PathLike[str] | None = None, *,
               overrides: Mapping[str, Any] | None = None,
               cwd: Path | None = None) -> tuple[Path, Settings]:
    """The vault root and its settings, or UsageError / ConfigError (exit 2). Creates nothing."""
    root = find_vault_root(explicit, cwd=cwd)
    check_folder(root, explicit)
    check_marker(root)  # a symlinked .remelink: one line, exit 2, nothing created through it
    settings = load_settings(root, overrides=overrides)
    require_vault(root, settings, explicit)
    return root, settings
