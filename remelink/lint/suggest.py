"""The "did you mean" hint of a broken link: the new name git has staged for a renamed note
first, then the closest existing name: the same file name elsewhere, the nearest folder first.
(A near spelling would be the next step; compared name by name it cost 40 % of a whole-vault
run with many broken links, so it is not offered.)"""

from __future__ import annotations

from collections.abc import Mapping

from remelink.vault.paths import nfc
from remelink.vault.resolve import MARKDOWN_EXTS, Resolver, VaultFiles, _path_suffix_match


class Suggester:
    """Hints for one lint run. `gone` maps paths staged for deletion (None) or renaming (the new
    path) to what git reports."""

    def __init__(self, files: VaultFiles, resolution: str,
                 gone: Mapping[str, str | None] | None = None, *,
                 obsidian_hint: bool = False) -> None:
        self.files = files
        self.resolution = resolution
        self.gone = dict(gone or {})
        # Say when a link resolves the Obsidian way (for people running lint-links; a model
        # fixing a node in a `path` vault must write the path, not change the configuration).
        self.obsidian_hint = obsidian_hint
        self._obsidian: Resolver | None = None

    def hint(self, target: str) -> str:
        """` (did you mean X?)`, a note about a staged deletion, a note that the link resolves
        the Obsidian way (in `path` mode), or ""."""
        old = self._gone_path(target)
        if old is not None:
            new = self.gone[old]
            if new is not None:
                return f" (did you mean {new}? the commit renames it)"
            closest = self._closest(target)
            also = f"; did you mean {closest}?" if closest else ""
            return f" (the commit deletes it{also})"
        by_name = self._by_name(target)
        if by_name is not None:
            return (f" (did you mean {by_name}? it resolves there with links.resolution: "
                    "obsidian, for a vault written in Obsidian)")
        closest = self._closest(target)
        return f" (did you mean {closest}?)" if closest else ""

    def _by_name(self, target: str) -> str | None:
        """In `path` mode, where the link would resolve in `obsidian` mode (SPEC §3.2)."""
        if self.resolution != "path" or not self.obsidian_hint:
            return None  # `obsidian` tries the exact path first: nothing resolves only in `path`
        if self._obsidian is None:
            self._obsidian = Resolver(self.files, "obsidian")
        res = self._obsidian.resolve(target, "")
        return res.path if res.status == "ok" else None

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
