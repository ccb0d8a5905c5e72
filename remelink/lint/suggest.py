"""The "did you mean" hint of a broken link: the new name git has staged for a renamed note
first, then the closest existing name (the same file name elsewhere, nearest folder first; else a
near spelling in the same folder)."""

from __future__ import annotations

from collections.abc import Mapping

from remelink.vault.paths import nfc
from remelink.vault.resolve import MARKDOWN_EXTS, VaultFiles, _path_suffix_match

# How alike a name in the link's own folder must be to be offered (difflib ratio).
CLOSE_NAME = 0.75


class Suggester:
    """Hints for one lint run. `gone` maps paths staged for deletion (None) or renaming (the new
    path) to what git reports; the folder listing is built on first need."""

    def __init__(self, files: VaultFiles, resolution: str,
                 gone: Mapping[str, str | None] | None = None) -> None:
        self.files = files
        self.resolution = resolution
        self.gone = dict(gone or {})
        self._folders: dict[str, list[str]] | None = None

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
        if matches:
            return _nearest(t, matches)
        return self._near_spelling(t)

    def _near_spelling(self, target: str) -> str | None:
        import difflib

        folder, _, name = target.rpartition("/")
        if self._folders is None:
            listing: dict[str, list[str]] = {}
            for path in self.files.files:
                parent, _, base = path.rpartition("/")
                listing.setdefault(parent, []).append(base)
            self._folders = listing
        names = self._folders.get(folder, [])
        if not name.endswith(MARKDOWN_EXTS):
            name += ".md"
        found = difflib.get_close_matches(name, names, n=2, cutoff=CLOSE_NAME)
        if len(found) == 1 or (len(found) == 2 and difflib.SequenceMatcher(
                None, name, found[0]).ratio() > difflib.SequenceMatcher(
                None, name, found[1]).ratio()):
            return f"{folder}/{found[0]}" if folder else found[0]
        return None


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
