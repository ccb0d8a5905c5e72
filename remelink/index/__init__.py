"""The node index: digest-only recall over a Whoosh index under `.remelink/index/` (SPEC §5).

Importing this package does not import Whoosh; the index opens it on first use.
"""

from remelink.index.core import (
    INDEX_DIR,
    Hit,
    NodeIndex,
    RefreshStats,
    node_search,
)

__all__ = ["INDEX_DIR", "Hit", "NodeIndex", "RefreshStats", "node_search"]
