"""The local engine integrating units one at a time into a fresh vault, as `dream run` does
after extraction: the shared set-up of the tests that judge its decisions and its writing."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from remelink.config import Settings
from remelink.index import NodeIndex
from remelink.integrate import IntegrationContext, UnitResult, integrate_unit
from remelink.models.local import LocalModel
from remelink.units import Unit
from remelink.vault.resolve import VaultFiles

FOLDERS = ("daily", "resource", "digest/wiki", "digest/personal", "digest/procedure",
           ".remelink")


@contextmanager
def local_context(tmp_path: Path, today: str) -> Iterator[IntegrationContext]:
    """An empty vault under `tmp_path`, its node index and the local engine (no embedder)."""
    root = tmp_path / "vault"
    for folder in FOLDERS:
        (root / folder).mkdir(parents=True, exist_ok=True)
    settings = replace(Settings(), embedder="none")
    index = NodeIndex(root, settings)
    index.refresh()
    model = LocalModel(settings)
    model.bind_index(index)
    try:
        yield IntegrationContext(vault=root, settings=settings, model=model, index=index,
                                 files=VaultFiles.scan(root), today=today)
    finally:
        index.close()


def integrate_note(ctx: IntegrationContext, path: str, name: str, summary: str,
                   bucket: str = "wiki", points: tuple[str, ...] = (),
                   note: str | None = None) -> UnitResult:
    """Write the note at `path` (unless it exists), integrate one unit of it, and require that
    the unit was written."""
    file = ctx.vault / path
    if not file.exists():
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(note or f"# {name}\n\n{summary}\n", encoding="utf-8")
        ctx.files.add(path)
    result = integrate_unit(ctx, Unit(name=name, bucket=bucket, summary=summary, paths=(path,),
                                      points=points))
    assert result.ok, result.error
    return result


def dream(root: Path, notes: dict[str, str], today: str | None = None) -> dict[str, str]:
    """Write `notes` into a fresh vault, dream it once with the local engine (no embedder;
    `today`: the run's date, default the clock), and return the digest (path -> text)."""
    from remelink.dream.run import DreamOptions, run_dream

    for rel, text in notes.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (root / "digest").mkdir(exist_ok=True)
    settings = replace(Settings(), embedder="none")
    report = run_dream(root, settings, LocalModel(settings), DreamOptions(today=today))
    failed = [(u.name, u.error) for u in report.units if u.status == "failed"]
    assert failed == [] and report.ok
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted((root / "digest").rglob("*.md"))}
