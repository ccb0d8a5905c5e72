"""Scratch vaults for the quality benchmarks: digest nodes with valid Sources sections that cite
generated daily notes, and units that cite their own daily note."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from remelink.config import Settings
from remelink.index import NodeIndex
from remelink.integrate import IntegrationContext, UnitResult, integrate_unit
from remelink.models.local import LocalModel
from remelink.units import Unit
from remelink.vault.resolve import VaultFiles

TODAY = "2026-06-30"


@dataclass(frozen=True)
class NodeSpec:
    path: str          # digest/<bucket>/<slug>.md
    name: str
    description: str
    body: str          # prose, without Sources
    source: str        # daily/... note it cites
    source_text: str


def write_node(root: Path, spec: NodeSpec) -> None:
    meta = yaml.safe_dump({"name": spec.name, "description": spec.description, "kind": "concept"},
                          allow_unicode=True, sort_keys=False, width=1 << 30)
    body = (f"{spec.body.rstrip()}\n\n## Sources\n\nThis was recorded in [[{spec.source}]].\n")
    path = root / spec.path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{meta}---\n{body}", encoding="utf-8")
    note = root / spec.source
    note.parent.mkdir(parents=True, exist_ok=True)
    if not note.exists():
        note.write_text(spec.source_text.rstrip() + "\n", encoding="utf-8")


def write_note(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text.rstrip() + "\n", encoding="utf-8")


def settings(embedder: str) -> Settings:
    return replace(Settings(), embedder=embedder)


class Runner:
    """integrate_unit with the local engine and the real node index over `root`."""

    def __init__(self, root: Path, embedder: str) -> None:
        (root / ".remelink").mkdir(parents=True, exist_ok=True)
        self.root = root
        self.settings = settings(embedder)
        self.index = NodeIndex(root, self.settings)
        self.index.rebuild()
        self.model = LocalModel(self.settings)
        self.model.bind_index(self.index)
        self.ctx = IntegrationContext(vault=root, settings=self.settings, model=self.model,
                                      index=self.index, files=VaultFiles.scan(root), today=TODAY)

    def run(self, unit: Unit, *, dry_run: bool) -> UnitResult:
        return integrate_unit(self.ctx, unit, dry_run=dry_run)

    def close(self) -> None:
        self.index.close()


def unit(name: str, summary: str, paths: Sequence[str], bucket: str = "wiki") -> Unit:
    return Unit(name=name, bucket=bucket, summary=summary, paths=tuple(paths))
