"""(e) Orphan rate after `dream run`: the share of digest nodes that `orphan-node` flags (no link
to or from another digest node) once the local engine has distilled a vault. "A node contains
only isolated prose" is the failure auto_link exists to avoid (seed `auto_link`).

`measure(vault)` takes any vault: it copies it to a scratch folder, runs `remelink dream run`
there (the real CLI, the local engine, `local.embedder` as given) and lints the copy with
`orphan-node` switched on. The demo vault and the work-notes vault of workvault.py are measured
by default; point it at any other (fixtures/work-vault/) by path, or pass `--locomo` for the
eight LoCoMo training conversations written as daily notes (bench/locomo.py), with a total row.

    .venv/bin/python bench/quality/orphans.py [--embedder none|auto] [--locomo] [VAULT ...]
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))


@dataclass(frozen=True)
class OrphanResult:
    vault: str
    embedder: str
    nodes: int
    new_nodes: int
    orphans: int
    new_orphans: int        # orphans among the nodes this run created
    digest_links: int       # digest-to-digest links in the whole digest
    lint_errors: int
    orphan_paths: tuple[str, ...] = ()

    @property
    def rate(self) -> float:
        return self.orphans / max(1, self.nodes)


def _digest_nodes(root: Path) -> set[str]:
    digest = root / "digest"
    if not digest.is_dir():
        return set()
    return {p.relative_to(root).as_posix() for p in digest.glob("*/*.md")}


def measure(vault: Path, embedder: str = "none", label: str | None = None) -> OrphanResult:
    """Copy `vault`, `dream run` the copy, and count the nodes `orphan-node` flags."""
    from remelink.config import load_settings
    from remelink.lint.core import lint_links

    with tempfile.TemporaryDirectory(prefix="remelink-orphans-") as tmp:
        root = Path(tmp) / "vault"
        shutil.copytree(vault, root, ignore=shutil.ignore_patterns("index", "state.json",
                                                                     "runs", "*.lock", "lock"))
        before = _digest_nodes(root)
        env = {k: v for k, v in os.environ.items() if not k.startswith("REMELINK_")}
        env["REMELINK_LOCAL__EMBEDDER"] = embedder
        exe = Path(sys.executable).with_name("remelink")
        done = subprocess.run([str(exe), "dream", "run", "--vault", str(root)], env=env,
                              capture_output=True, text=True, timeout=3600)
        if done.returncode not in (0, 1):
            raise RuntimeError(f"dream run failed on {vault}: {done.stderr.strip()[-400:]}")
        settings = load_settings(root, env={})
        settings = replace(settings, lint={**dict(settings.lint), "orphan-node": "warning"})
        report = lint_links(root, settings)
        nodes = _digest_nodes(root)
        flagged = {p.path for p in report.problems if p.code == "orphan-node"}
        errors = sum(1 for p in report.problems if p.level == "error")
        links = 0
        for rel in nodes:
            text = (root / rel).read_text(encoding="utf-8")
            head = text.split("\n## Sources", 1)[0]
            links += head.count("[[digest/")
    new = nodes - before
    return OrphanResult(label or vault.name, embedder, len(nodes), len(new), len(flagged),
                        len(flagged & new), links, errors, tuple(sorted(flagged)))


def lint_orphans(root: Path) -> tuple[int, int, int]:
    """(digest nodes, nodes `orphan-node` flags, lint errors) of a vault already dreamt."""
    from remelink.config import load_settings
    from remelink.lint.core import lint_links

    settings = load_settings(root, env={})
    settings = replace(settings, lint={**dict(settings.lint), "orphan-node": "warning"})
    report = lint_links(root, settings)
    flagged = {p.path for p in report.problems if p.code == "orphan-node"}
    return (len(_digest_nodes(root)), len(flagged),
            sum(1 for p in report.problems if p.level == "error"))


def default_vaults(tmp: Path) -> list[tuple[str, Path]]:
    import workvault

    return [("demo-vault (tuning)", ROOT / "fixtures" / "demo-vault"),
            ("work-notes, bench/quality/workvault.py (tuning)",
             workvault.write(tmp / "work-notes"))]


def locomo_vaults(tmp: Path) -> list[tuple[str, Path]]:
    sys.path.insert(0, str(ROOT / "bench"))
    import locomo
    import splits

    out = []
    for conv in locomo.load():
        root = tmp / conv.sample_id
        locomo.write_vault(conv, root)
        out.append((f"LoCoMo {conv.sample_id} ({splits.label(splits.locomo(conv.sample_id))})",
                    root))
    return out


def total(results: list[OrphanResult], label: str) -> list[OrphanResult]:
    """One row per embedder summing `results` (new nodes, orphans, links, errors)."""
    rows = []
    for embedder in dict.fromkeys(r.embedder for r in results):
        rs = [r for r in results if r.embedder == embedder]
        rows.append(OrphanResult(label, embedder, sum(r.nodes for r in rs),
                                 sum(r.new_nodes for r in rs), sum(r.orphans for r in rs),
                                 sum(r.new_orphans for r in rs), sum(r.digest_links for r in rs),
                                 sum(r.lint_errors for r in rs)))
    return rows


def table(results: list[OrphanResult]) -> str:
    lines = ["| vault | embedder | digest nodes (new) | orphan-node | orphan rate | orphans among "
             "new nodes | digest-to-digest links | lint errors |",
             "|---|---|---|---|---|---|---|---|"]
    for r in results:
        lines.append(f"| {r.vault} | {r.embedder} | {r.nodes} ({r.new_nodes}) | {r.orphans} | "
                     f"{100 * r.rate:.0f} % | {r.new_orphans} of {r.new_nodes} | "
                     f"{r.digest_links} | {r.lint_errors} |")
    return "\n".join(lines)


def main(argv: list[str]) -> tuple[str, list[OrphanResult]]:
    embedders = [argv[argv.index("--embedder") + 1]] if "--embedder" in argv else ["none", "auto"]
    paths = [Path(a) for a in argv if not a.startswith("--") and a not in ("none", "auto")]
    with tempfile.TemporaryDirectory(prefix="remelink-vaults-") as tmp:
        if "--locomo" in argv:
            vaults = locomo_vaults(Path(tmp))
            results = [measure(path, e, label) for label, path in vaults for e in embedders]
            results += total([r for r in results if "held-out" in r.vault],
                             "**LoCoMo, held-out (conv-49, conv-50)**")
            results += total([r for r in results if r.vault.endswith("(tuning)")],
                             "LoCoMo, tuning (six conversations)")
        else:
            vaults = [(p.name, p) for p in paths] or default_vaults(Path(tmp))
            results = [measure(path, e, label) for label, path in vaults for e in embedders]
    text = table(results)
    small = [r for r in results if 0 < r.orphans <= 5 and not r.vault.startswith("LoCoMo")]
    if small:
        text += "\n\nThe orphans: " + "; ".join(
            f"{r.vault}, {r.embedder}: {', '.join(f'`{p}`' for p in r.orphan_paths)}"
            for r in small) + "."
    print(text)
    return text, results


if __name__ == "__main__":
    main(sys.argv[1:])
