"""`remelink node-search` as one function, without Typer: both entry points call it (the
Typer command in `cli.py`, and `edge.main` for a plain invocation, whose start-up counts)."""

from __future__ import annotations

import sys
from pathlib import Path

from remelink.command import elapsed, err, open_vault, print_json

LIMIT_MIN, LIMIT_MAX = 1, 100


def node_search(query: str, limit: int, bucket: str | None, json_out: bool,
                vault: Path | None) -> int:
    """`remelink node-search`: refresh the index, search, print hits (or the envelope)."""
    from remelink.errors import UsageError
    from remelink.index import NodeIndex
    from remelink.index import render as rd
    from remelink.render import search_json
    from remelink.vault.paths import BUCKETS

    if not query.strip():
        raise UsageError("the query is empty", hint='give the words to look for, e.g. '
                         'remelink node-search "retry budget"')
    if bucket is not None and bucket not in BUCKETS:
        raise UsageError(f"--bucket must be one of {', '.join(BUCKETS)}, got {bucket!r}")
    root, settings = open_vault(vault)
    with NodeIndex(root, settings) as index:
        stats = index.refresh()
        for warning in stats.warnings:
            err(f"warning: {warning}")
        for notice in stats.notices:
            err(f"note: {notice}")
        hits = index.search(query, limit=limit, bucket=bucket, refresh=False)
        for warning in index.warnings:
            err(f"warning: {warning}")
        for notice in index.notices:
            err(f"note: {notice}")
    if json_out:
        print_json(search_json(hits, elapsed()))
    elif not hits:
        err(f"no digest node matches {query.strip()[:80]!r}")
    elif rd.is_terminal(sys.stdout):
        rd.print_table(hits, sys.stdout)
    else:
        sys.stdout.write(rd.hits_plain(hits))
    return 0
