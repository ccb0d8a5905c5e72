"""Helpers shared by the integrate tests: the fixture vault, scripted cases, and a small node
index double.

`TermIndex` implements the `SearchIndex` protocol of `remelink.integrate` (the real
`remelink.index.NodeIndex` has the same `search(query, *, limit, bucket, refresh)` and
`update(paths)`): naive term overlap over the digest folder, recomputed on every search, and a
record of every `update` call so tests can assert when the index was (not) told of a commit.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from remelink.config import Settings, load_settings
from remelink.evidence import terms
from remelink.integrate import IntegrationContext, UnitResult, integrate_unit
from remelink.models.scripted import ScriptedModel
from remelink.units import Unit, parse_unit
from remelink.vault import frontmatter
from remelink.vault.notes import read_note
from remelink.vault.resolve import VaultFiles

HERE = Path(__file__).resolve().parent
FIXTURE_VAULT = HERE / "fixtures" / "integrate" / "vault"
GOLDEN = HERE / "fixtures" / "integrate" / "golden"
SCRIPTS = HERE / "scripts"
TODAY = "2026-06-25"


@dataclass(frozen=True)
class Hit:
    path: str
    score: float
    name: str
    description: str
    bucket: str
    memory_tags: tuple[str, ...] = ()


class TermIndex:
    """A test double of the node index: term overlap between the query and each digest node's
    name, description (weighted) and body."""

    def __init__(self, vault: Path, digest: str = "digest") -> None:
        self.vault = vault
        self.digest = digest
        self.queries: list[tuple[str, int, str | None]] = []
        self.updates: list[list[str]] = []
        self.closed = False

    def refresh(self) -> None:
        """Nothing to do: every search reads the digest folder."""

    def close(self) -> None:
        self.closed = True

    def update(self, paths: Iterable[str]) -> None:
        self.updates.append(list(paths))

    def search(self, query: str, *, limit: int = 20, bucket: str | None = None,
               refresh: bool = True) -> list[Hit]:
        self.queries.append((query, limit, bucket))
        wanted = terms(query)
        hits = []
        for path in sorted((self.vault / self.digest).rglob("*.md")):
            rel = path.relative_to(self.vault).as_posix()
            node_bucket = rel.split("/")[1]
            if bucket is not None and node_bucket != bucket:
                continue
            note = read_note(self.vault, rel)
            meta = frontmatter.load(note)
            name, description = str(meta.get("name", "")), str(meta.get("description", ""))
            score = 2.0 * len(wanted & terms(f"{name} {description}")) + \
                len(wanted & terms(note.body))
            if score > 0:
                hits.append(Hit(rel, float(score), name, description, node_bucket,
                                tuple(meta.get("memory_tags") or ())))
        hits.sort(key=lambda h: (-h.score, h.path))
        return hits[:limit]


def copy_vault(tmp_path: Path, source: Path = FIXTURE_VAULT) -> Path:
    root = tmp_path / "vault"
    shutil.copytree(source, root)
    return root


def load_case(name: str) -> tuple[Unit, ScriptedModel, dict[str, Any]]:
    """The unit and the strict scripted model of tests/scripts/NAME.yaml."""
    path = SCRIPTS / f"{name}.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    unit, warnings = parse_unit(data["unit"])
    assert unit is not None, warnings
    return unit, ScriptedModel.from_file(path), data


def context(vault: Path, model: Any, *, index: Any = None, settings: Settings | None = None,
            today: str = TODAY) -> IntegrationContext:
    settings = settings or load_settings(vault, env={})
    return IntegrationContext(vault=vault, settings=settings, model=model,
                              index=index if index is not None else TermIndex(vault),
                              files=VaultFiles.scan(vault), today=today)


def run_case(vault: Path, name: str, *, dry_run: bool = False, index: Any = None,
             settings: Settings | None = None) -> tuple[UnitResult, ScriptedModel, TermIndex]:
    """Integrate the unit of a script against `vault`; the script must be used up exactly."""
    unit, model, _ = load_case(name)
    index = index if index is not None else TermIndex(vault)
    result = integrate_unit(context(vault, model, index=index, settings=settings), unit,
                            dry_run=dry_run)
    assert not model.unused, f"{model.unused} step(s) unused; the unit ended with {result.error}"
    model.assert_done()
    return result, model, index


def tool_results(model: ScriptedModel) -> list[str]:
    """Every tool result and repair message fed back to the model, in order."""
    if not model.calls:
        return []
    messages = model.calls[-1][0]
    return [str(m["content"]) for m in messages[2:] if m["role"] in ("tool", "user")]


def golden_check(actual: bytes, name: str, update: bool = False) -> None:
    """Compare with tests/fixtures/integrate/golden/NAME; UPDATE_GOLDEN=1 rewrites it."""
    import os

    path = GOLDEN / name
    if update or os.environ.get("UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(actual)
    assert path.exists(), f"golden file {path} missing: run with UPDATE_GOLDEN=1 and review it"
    assert actual == path.read_bytes(), f"output differs from golden file {path.name}"
