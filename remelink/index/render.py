"""How `remelink node-search` shows hits: a rich table on a terminal, tab-separated lines
otherwise (cron, pipes), or JSON. Rich is imported only for the terminal case."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from remelink.index.core import Hit


def is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def hits_plain(hits: Sequence[Hit]) -> str:
    """One hit per line: score, path, name, description, tab-separated."""
    return "".join(f"{h.score:.2f}\t{h.path}\t{h.name}\t{h.description}\n" for h in hits)


def print_table(hits: Sequence[Hit], stream: TextIO) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(show_header=True, header_style="bold", show_lines=False, expand=False)
    table.add_column("score", justify="right", no_wrap=True)
    table.add_column("path", overflow="fold")
    table.add_column("name", overflow="fold")
    table.add_column("description", overflow="fold")
    for h in hits:
        table.add_row(f"{h.score:.2f}", h.path, h.name, h.description)
    Console(file=stream, highlight=False, markup=False, emoji=False).print(table)
