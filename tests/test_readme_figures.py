"""The README's figures are docs/benchmarks.md's (bench/readme_figures.py copies them): a figure
changed in one place and not the other fails here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_the_readme_figures_are_the_benchmarks() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "readme_figures.py"), "--check"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_figure_changed_in_the_readme_alone_is_caught(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    import readme_figures

    doc = readme_figures.DOC.read_text(encoding="utf-8")
    values = readme_figures.values(doc)
    assert all(v and v in doc for v in values.values())  # the doc's own text, every one
    readme = tmp_path / "README.md"
    text = readme_figures.README.read_text(encoding="utf-8")
    figure = values["otools_10k"]
    assert f"obsidiantools\n  takes {figure}" in text or f"takes {figure}" in text
    readme.write_text(text.replace(f"takes {figure}", "takes 74 s"), encoding="utf-8")
    monkeypatch.setattr(readme_figures, "README", readme)
    assert readme_figures.main(["--check"]) == 1
    assert readme_figures.main([]) == 0  # rewrites it from the doc
    assert readme_figures.main(["--check"]) == 0
    assert f"takes {figure}" in readme.read_text(encoding="utf-8")
