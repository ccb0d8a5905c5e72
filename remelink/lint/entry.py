"""The command line of lint-links: `remelink-lint-links` (the pre-commit entry point, no Typer
or Rich) and the shared `run` behind `remelink lint-links`."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import NoReturn, TextIO

from remelink.config import PROBLEM_CODES, load_settings
from remelink.errors import EXIT_OK, EXIT_USAGE, RemelinkError, UsageError
from remelink.lint.checks import LintReport
from remelink.lint.core import lint_links
from remelink.vault.own import check_marker
from remelink.vault.paths import MARKER_DIR, find_vault_root, nfc
from remelink.vault.root import check_folder, require_vault


class _ArgumentError(Exception):
    """A command-line error, raised instead of argparse's exit so --json can still answer."""


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
    resolved = (f"; links resolved the Obsidian way: {report.resolved_by_links} "
                "(links.resolution: obsidian in .remelink/config.yaml says so for good)") \
        if report.resolved_by_links else ""
    return (f"lint-links: {verdict} in {report.files_checked} file(s){excluded}, "
            f"{report.links_checked} link(s) checked ({seconds:.2f} s){resolved}")


def to_vault_paths(vault: Path, raw_paths: Sequence[str],
                   cwd: Path | None = None) -> tuple[list[str], list[str]]:
    """Command-line paths as workspace-relative paths, and the ones outside the vault.

    A relative path is taken from the working directory, as pre-commit passes them (relative
    to the repository root, where it runs hooks) and as a shell completes them; never from the
    vault, which would make `lint-links digest/x.md` mean two files depending on where it runs."""
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
        inside.append(nfc(rel) if rel != "." else "")
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


def _outside_error(root: Path, outside: Sequence[str]) -> UsageError:
    shown = ", ".join(outside[:3]) + (f" and {len(outside) - 3} more" if len(outside) > 3 else "")
    first = outside[0]
    in_vault = not os.path.isabs(first) and (root / first).exists()
    hint = (f"relative paths are taken from the working directory; run from the vault or "
            f"pass {root / first}") if in_vault else \
        "relative paths are taken from the working directory, as pre-commit passes them; " \
        "limit the hook to the vault's folder with `files:`"
    return UsageError(f"{shown}: outside the vault {root}", hint=hint)


def _refuse_missing(root: Path, raw_paths: Sequence[str], gone: dict[str, str | None]) -> None:
    """A PATH that names nothing is a usage error (exit 2) naming it: "no problems in 0
    file(s)" for a typo would pass a hook that checked nothing. A path the commit deletes or
    renames (git says so) is fine, and so is any path with `--all` (the old name of a deleted
    or renamed note, whose incoming links it checks)."""
    missing = []
    for raw in raw_paths:
        rels, _ = to_vault_paths(root, [raw])
        rel = rels[0] if rels else None  # None: outside the vault (refused) or in .remelink/
        if rel and rel not in gone and not os.path.lexists(root / rel):
            missing.append(raw)
    if missing:
        shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more"
                                          if len(missing) > 3 else "")
        raise UsageError(f"{shown}: no such file or folder",
                         hint="check the path (relative to the working directory); to check "
                              "the links to a note deleted or renamed, pass --all")


def envelope_json(report: LintReport, seconds: float) -> str:
    """The `--json` envelope: the problems under `data`, the error lines under `errors`."""
    from remelink.envelope import envelope

    return envelope(
        "lint-links", ok=report.exit_code == EXIT_OK, seconds=seconds,
        counts={"files": report.files_checked, "links": report.links_checked,
                "errors": report.errors, "warnings": report.warnings,
                "excluded": report.excluded},
        data=[asdict(p) for p in report.problems],
        errors=[p.format() for p in report.problems if p.level == "error"])


def run(raw_paths: Sequence[str], *, vault: str | None, fmt: str | None = None,
        include_all: bool = False, resolution: str | None = None, json_out: bool = False,
        staged: bool = False, out: TextIO | None = None, err: TextIO | None = None,
        on_json: Callable[[str], None] | None = None,
        on_warning: Callable[[str], None] | None = None) -> int:
    """Shared by the console script and `remelink lint-links`: lint, print, return the exit code.
    Raises RemelinkError (usage, configuration) before anything is printed on stdout."""
    stdout = out if out is not None else sys.stdout
    stderr = err if err is not None else sys.stderr
    started = time.perf_counter()

    def warn(message: str) -> None:
        if on_warning is not None:
            on_warning(message)
        else:
            print(f"remelink-lint-links: warning: {message}", file=stderr)

    if fmt not in (None, "text", "json"):
        raise UsageError(f"--format must be text or json, got {fmt!r}")
    if json_out and fmt is not None:
        raise UsageError("--json and --format are alternatives",
                         hint="--json prints the envelope, --format json the bare list")
    if resolution not in (None, "path", "obsidian"):
        raise UsageError(f"--resolution must be path or obsidian, got {resolution!r}")
    if vault is not None:
        root = find_vault_root(vault)
    else:
        root = (_vault_for(raw_paths) if raw_paths else None) or find_vault_root()
    check_folder(root, vault)
    check_marker(root)
    settings = load_settings(
        root, overrides={"links": {"resolution": resolution}} if resolution else None)
    for warning in settings.warnings:
        warn(warning)
    require_vault(root, settings, vault)
    paths: list[str] | None = None
    if raw_paths:
        paths, outside = to_vault_paths(root, raw_paths)
        if outside:
            raise _outside_error(root, outside)
        paths = [p for p in paths if p]
        if not paths:  # the vault itself was named
            paths = None
    gone: dict[str, str | None] = {}
    if paths is not None or staged:
        from remelink.lint.staged import staged_changes

        changes = staged_changes(root)
        if staged and not changes.repository:
            raise UsageError(f"--staged: {root} is not inside a git repository")
        if changes.problem:
            if staged:
                raise UsageError(changes.problem)
            warn(f"{changes.problem}; links to staged deletions and renames not checked")
        gone = changes.gone
        if staged and paths is None:
            paths = []  # what the commit changes, never the whole vault
    if raw_paths and not include_all:
        _refuse_missing(root, raw_paths, gone)
    report = lint_links(root, settings, paths, include_all=include_all, jobs=None, gone=gone)
    seconds = time.perf_counter() - started
    if json_out:
        text = envelope_json(report, seconds)
        if on_json is not None:
            on_json(text)
        else:
            stdout.write(text + "\n")
    else:
        stdout.write(render_json(report) if fmt == "json" else render_text(report))
    # The problems before the summary even where both go to one pipe (pre-commit shows a
    # hook's output that way), whatever the buffering of the two streams.
    stdout.flush()
    print(summary_line(report, seconds), file=stderr)
    return report.exit_code


def main(argv: Sequence[str] | None = None) -> int:
    """`remelink-lint-links [PATHS...]`: the pre-commit hook (no Typer, no Rich)."""
    import argparse

    class Parser(argparse.ArgumentParser):
        def error(self, message: str) -> NoReturn:  # keep the message for the --json envelope
            self.print_usage(sys.stderr)
            raise _ArgumentError(message)

    parser = Parser(
        prog="remelink-lint-links",
        description="Validate every wikilink and every digest node's '## Sources' section. "
                    "With PATHS (as pre-commit passes them: relative to the working directory, "
                    "each inside the vault) only those files are checked, resolving against "
                    "the whole vault; inside a git repository the links that point at notes "
                    "staged for deletion or renaming are checked too. Exit 0 no errors, 1 "
                    "errors found, 2 usage or configuration error.")
    parser.add_argument("paths", nargs="*", metavar="PATHS", help="markdown files to check")
    parser.add_argument("--vault", help="vault root (default: nearest folder holding .remelink/)")
    parser.add_argument("--json", action="store_true", dest="json_out",
                        help="print one JSON document {ok, command, duration_ms, counts, data, "
                             "errors}")
    parser.add_argument("--format", choices=("text", "json"), default=None, dest="fmt",
                        help="text (default) or json: the bare list of problems")
    parser.add_argument("--all", action="store_true", dest="include_all",
                        help="also report links elsewhere that point at PATHS (renames, deletions)")
    parser.add_argument("--staged", action="store_true",
                        help="check only what the commit changes: PATHS and the links to notes "
                             "staged for deletion or renaming; never the whole vault")
    parser.add_argument("--resolution", choices=("path", "obsidian"),
                        help="override links.resolution from the config")
    parser.add_argument("--codes", action="store_true", help="list problem codes and exit")
    started = time.perf_counter()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help
        return int(exc.code or 0) and EXIT_USAGE
    except _ArgumentError as exc:
        words = sys.argv[1:] if argv is None else list(argv)
        if "--json" in (words[: words.index("--")] if "--" in words else words):
            from remelink.envelope import failure

            print(failure("lint-links", 0.0, str(exc)))
        print(f"remelink-lint-links: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.codes:
        for code_name, level in PROBLEM_CODES.items():
            print(f"{code_name:20} {level}")
        return EXIT_OK
    try:
        return run(args.paths, vault=args.vault, fmt=args.fmt, include_all=args.include_all,
                   resolution=args.resolution, json_out=args.json_out, staged=args.staged)
    except RemelinkError as exc:
        if args.json_out:
            from remelink.envelope import failure

            print(failure("lint-links", time.perf_counter() - started, str(exc)))
        print(f"remelink-lint-links: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        if args.json_out:
            from remelink.envelope import failure

            print(failure("lint-links", time.perf_counter() - started, "interrupted"))
        return 130
