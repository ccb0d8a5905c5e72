"""How search hits read as text: for `remelink search` and the MCP server's `search` tool.

One block per hit: `path:start-end  score  name`, the passage indented, then what the Sources
cite (digest nodes), then the links out (`->`) and in (`<-`) with name and description.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from remelink.search.expand import Expanded, Neighbour


def _indent(text: str, prefix: str) -> str:
    return textwrap.indent(text, prefix, lambda line: True)


def _neighbour(arrow: str, n: Neighbour) -> str:
    anchor = f"#{n.anchor}" if n.anchor else ""
    desc = f" — {n.description}" if n.description else ""
    return f"  {arrow} {n.path}{anchor}  {n.name}{desc}"


def hit_text(h: Expanded) -> str:
    hit = h.hit
    lines = [f"{hit.path}:{hit.start}-{hit.end}  [{hit.score:.2f}]  {h.name}"]
    if h.description:
        lines.append(f"  ({h.description})")
    lines.append(_indent(h.passage, "  | "))
    if h.cut:
        lines.append(f"  (passage cut; read {hit.path} lines {hit.start}-{hit.end} for all)")
    if h.sources:
        lines.append("  sources:")
        for c in h.sources:
            anchor = f"#{c.anchor}" if c.anchor else ""
            lines.append(f"    {c.path}{anchor}: {c.says}")
            if c.passage:
                lines.append(_indent(c.passage, "      > "))
    for n in h.outlinks:
        lines.append(_neighbour("->", n))
    if h.outlinks_total > len(h.outlinks):
        lines.append(f"  -> ... {h.outlinks_total - len(h.outlinks)} more")
    for n in h.inlinks:
        lines.append(_neighbour("<-", n))
    if h.inlinks_total > len(h.inlinks):
        lines.append(f"  <- ... {h.inlinks_total - len(h.inlinks)} more")
    return "\n".join(lines)


def hits_text(hits: Sequence[Expanded]) -> str:
    return "".join(hit_text(h) + "\n\n" for h in hits).rstrip("\n") + ("\n" if hits else "")
