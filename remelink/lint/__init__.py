"""lint-links: validate every wikilink and every digest node's Sources section (SPEC §4.1).

`main(argv)` is the pre-commit entry point (`remelink-lint-links`). It imports no Typer, Rich,
Whoosh or litellm, and PyYAML only when a digest node or a config file has to be read, so the
hook starts in a few tens of milliseconds. `remelink lint-links` calls the same `run`.

- `checks`: the checks on one note (`_Linter`), the problem and report values;
- `core`: `lint_links` over the vault or some paths, `check_note` for a staged node;
- `parallel`: two processes for large vaults;
- `entry`: rendering, path handling and `main`.
"""

from __future__ import annotations

import sys

from remelink.lint.checks import LintReport, Problem, is_bare_link_text, sources_section
from remelink.lint.core import check_note, lint_links
from remelink.lint.entry import main, render_json, render_text, run, summary_line, to_vault_paths
from remelink.lint.parallel import default_jobs

__all__ = ["LintReport", "Problem", "check_note", "default_jobs", "is_bare_link_text",
           "lint_links", "main", "render_json", "render_text", "run", "sources_section",
           "summary_line", "to_vault_paths"]

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
