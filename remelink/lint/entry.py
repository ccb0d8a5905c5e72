"""The command line of lint-links: `remelink-lint-links` (the pre-commit entry point, no Typer
or Rich) and the shared `run` behind `remelink lint-links`."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TextIO

from remelink.config import PROBLEM_CODES, load_settings
from remelink.errors import EXIT_OK, EXIT_USAGE, RemelinkError
from remelink.lint.checks import LintReport
from remelink.lint.core import lint_links
from remelink.vault.paths import MARKER_DIR, find_vault_root, nfc


def render_text(report: LintReport) -> str:
    return "".join(p.format() + "\n" for p in report.problems)


def render_json(report: LintReport) -> str:
    import json

    return json.dumps([asdict(p) for p in report.problems], ensure_ascii=False, indent=2) + "\n"


def summary_line(report: LintReport, seconds: float) -> str:
    if not report.problems:
        verdict = "no problems"
    else:
        verdict = f"{report.errors} error(s), {report.warnings} warning(s)"
    excluded = f" ({report.excluded} excluded by lint.exclude)" if report.excluded else ""
    return (f"lint-links: {verdict} in {report.files_checked} file(s){excluded}, "
            f"{report.links_checked} link(s) checked ({seconds:.2f} s)")


def to_vault_paths(vault: Path, raw_paths: Sequence[str],
                   cwd: Path | None = None) -> tuple[list[str], list[str]]:
    """Command-line paths (relative to the working directory, as pre-commit passes them) as
    workspace-relative paths; the second list holds paths that are outside the vault."""
    cwd = cwd or Path.cwd()
    root = vault.resolve()
    inside: list[str] = []
    outside: list[str] = []
    for raw in raw_paths:
        full = Path(os.path.abspath(cwd / raw))
        # The folder may be reached through a symlink (macOS /tmp, a linked checkout): resolve
        # it, but not the file itself (a deleted file has nothing to resolve, and a symlinked
        # note is checked under its own name).
        full = full.parent.resolve() / full.name
        try:
            rel = full.relative_to(root).as_posix()
        except ValueError:
            outside.append(raw)
            continue
        if rel.split("/", 1)[0] == MARKER_DIR:
            continue
        inside.append(nfc(rel))
    return inside, outside


def _vault_for(paths: Sequence[str]) -> Path | None:
    """The nearest ancestor of the first given path holding `.remelink/` (the vault may be a
    sub-folder of the repository pre-commit runs in)."""
    for raw in paths:
        here = Path(os.path.abspath(raw)).parent
        for candidate in (here, *here.parents):
            if (candidate / MARKER_DIR).is_dir():
                return candidate
    return None


def run(raw_paths: Sequence[str], *, vault: str | None, fmt: str, include_all: bool,
        resolution: str | None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Shared by the console script and `remelink lint-links`: lint, print, return the exit code."""
    stdout = out if out is not None else sys.stdout
    stderr = err if err is not None else sys.stderr
    started = time.perf_counter()
    if vault is not None:
        root = find_vault_root(vault)
    else:
        root = (_vault_for(raw_paths) if raw_paths else None) or find_vault_root()
    if not root.is_dir():
        print(f"remelink lint-links: vault {root} is not a folder (pass --vault PATH)", file=stderr)
        return EXIT_USAGE
    settings = load_settings(
        root, overrides={"links": {"resolution": resolution}} if resolution else None)
    paths: list[str] | None = None
    if raw_paths:
        paths, outside = to_vault_paths(root, raw_paths)
        for raw in outside:
            print(f"remelink lint-links: {raw} is outside the vault {root}; skipped", file=stderr)
    report = lint_links(root, settings, paths, include_all=include_all, jobs=None)
    rendered = render_json(report) if fmt == "json" else render_text(report)
    stdout.write(rendered)
    print(summary_line(report, time.perf_counter() - started), file=stderr)
    return report.exit_code


def main(argv: Sequence[str] | None = None) -> int:
    """`remelink-lint-links [PATHS...]`: the pre-commit hook (no Typer, no Rich)."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="remelink-lint-links",
        description="Validate every wikilink and every digest node's '## Sources' section. "
                    "With PATHS (as pre-commit passes them) only those files are checked, "
                    "resolving against the whole vault.")
    parser.add_argument("paths", nargs="*", metavar="PATHS", help="markdown files to check")
    parser.add_argument("--vault", help="vault root (default: nearest folder holding .remelink/)")
    parser.add_argument("--format", choices=("text", "json"), default="text", dest="fmt")
    parser.add_argument("--all", action="store_true", dest="include_all",
                        help="also report links elsewhere that point at PATHS (renames, deletions)")
    parser.add_argument("--resolution", choices=("path", "obsidian"),
                        help="override links.resolution from the config")
    parser.add_argument("--codes", action="store_true", help="list problem codes and exit")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0) and EXIT_USAGE
    if args.codes:
        for code, level in PROBLEM_CODES.items():
            print(f"{code:20} {level}")
        return EXIT_OK
    try:
        return run(args.paths, vault=args.vault, fmt=args.fmt, include_all=args.include_all,
                   resolution=args.resolution)
    except RemelinkError as exc:
        print(f"remelink-lint-links: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
