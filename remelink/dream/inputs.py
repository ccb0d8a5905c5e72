"""The raw notes a dream run looks at (SPEC §8): `daily/` and `resource/` markdown and text files,
optionally restricted to a window of dates.

`--date D --scan-days N` is the window of N days ending at D: `daily/<d>.md`, `daily/<d>/**` and
`resource/<d>/**`. Without it every note is a candidate. Nothing here ever writes.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from pathlib import Path

from remelink.config import Settings
from remelink.errors import UsageError
from remelink.vault.paths import nfc

INPUT_EXTS = (".md", ".markdown", ".txt")


@dataclass(frozen=True)
class Window:
    date: str
    days: tuple[str, ...]  # oldest first

    @classmethod
    def of(cls, date: str | None, scan_days: int | None) -> Window | None:
        if date is None and scan_days is None:
            return None
        try:
            end = dt.date.fromisoformat(date) if date else dt.date.today()
        except ValueError:
            raise UsageError(f"--date must be YYYY-MM-DD, got {date!r}") from None
        n = 1 if scan_days is None else scan_days
        if n < 1:
            raise UsageError(f"--scan-days must be at least 1, got {scan_days}")
        days = tuple((end - dt.timedelta(days=i)).isoformat() for i in range(n - 1, -1, -1))
        return cls(end.isoformat(), days)

    def contains(self, rel: str, daily: str, resource: str) -> bool:
        parts = rel.split("/")
        if parts[0] == daily:
            if len(parts) == 2:
                stem = parts[1].rsplit(".", 1)[0]
                return stem in self.days
            return parts[1] in self.days
        if parts[0] == resource:
            return len(parts) > 2 and parts[1] in self.days
        return False


def scan_inputs(vault: Path, settings: Settings, window: Window | None) -> list[str]:
    """Workspace-relative paths of every candidate input note, sorted."""
    folders = settings.folders
    out: list[str] = []
    for top in (folders.daily, folders.resource):
        base = vault / top
        if not base.is_dir():
            continue
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            rel_dir = Path(dirpath).relative_to(vault).as_posix()
            for name in filenames:
                if name.startswith(".") or not name.lower().endswith(INPUT_EXTS):
                    continue
                rel = nfc(f"{rel_dir}/{name}")
                if window is None or window.contains(rel, folders.daily, folders.resource):
                    out.append(rel)
    return sorted(out)
