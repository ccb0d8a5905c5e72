"""The "did you mean" hint of a broken link: the new name git has staged for a renamed note
first, then the closest existing name: the same file name elsewhere, the nearest folder first.
(A near spelling would be the next step; compared name by name it cost 40 % of a whole-vault
run with many broken links, so it is not offered.)"""

from __future__ import annotations

from collections.abc import Mapping

from remelink.vault.paths import nfc
from remelink.vault.resolve import MARKDOWN_EXTS, VaultFiles, _path_suffix_match


class Suggester:
    """Hints for one lint run. `gone` maps paths staged for deletion (None) or renaming (the new
    path) to what git reports."""

    def __init__(self, files: VaultFiles, resolution: str,
                 gone: Mapping[str, str | None] | None = None) -> None:
        self.files = files
        self.resolution = resolution
        self.gone = dict(gone or {})

    def hint(self, target: str) -> str:
        """` (did you mean X?)`, a note about a staged deletion, or ""."""
        old = self._gone_path(target)
        if old is not None:
            new = self.gone[old]
            if new is not None:
                return f" (did you mean {new}? the commit renames it)"
            closest = self._closest(target)
            also = f"; did you mean {closest}?" if closest else ""
            return f" (the commit deletes it{also})"
        closest = self._closest(target)
        return f" (did you mean {closest}?)" if closest else ""

    def _gone_path(self, target: str) -> str | None:
        if not self.gone:
            return None
        t = nfc(target).removeprefix("./")
        for candidate in (t, *(t + ext for ext in MARKDOWN_EXTS)):
            if candidate in self.gone:
                return candidate
        if self.resolution == "obsidian":
            folded = t.casefold()
            matches = [old for old in self.gone if _path_suffix_match(old.casefold(), folded)]
            if len(matches) == 1:
                return matches[0]
        return None

    def _closest(self, target: str) -> str | None:
        if self.resolution != "path":
            return None  # in obsidian mode a same-name note would have resolved
        t = nfc(target).removeprefix("./")
        name = t.rsplit("/", 1)[-1].casefold()
        matches = self.files.by_name.get(name) or self.files.by_name.get(name + ".md") or []
        if len(matches) == 1:
            return matches[0]
        return _nearest(t, matches) if matches else None


def _nearest(target: str, candidates: list[str]) -> str | None:
    """The candidate sharing the most leading folders with `target`, when one wins outright."""
    folders = target.split("/")[:-1]

    def shared(path: str) -> int:
        n = 0
        for a, b in zip(path.split("/")[:-1], folders, strict=False):
            if a != b:
                break
            n += 1
        return n

    ranked = sorted(candidates, key=shared, reverse=True)
    if shared(ranked[0]) > shared(ranked[1]):
        return ranked[0]
    return None
