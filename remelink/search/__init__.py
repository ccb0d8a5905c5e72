"""Memory search for people and agents: passages of every note, with link expansion
(SPEC §5.1). `search()` is what `remelink search` and the MCP server's `search` tool call.

Importing this package does not import Whoosh; the index opens it on first use.
"""

from remelink.search.api import SearchResult, search
from remelink.search.core import DEFAULT_LIMIT, FOLDERS, MAX_LIMIT, PassageIndex

__all__ = ["DEFAULT_LIMIT", "FOLDERS", "MAX_LIMIT", "PassageIndex", "SearchResult", "search"]
