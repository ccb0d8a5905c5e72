"""A candidate unit of the local engine's extraction, before candidates that state the same
thing are merged across notes."""

from __future__ import annotations

from dataclasses import dataclass, field

from remelink.models.local import decide
from remelink.models.local import points as pt
from remelink.models.local import text as tx


@dataclass
class Candidate:
    kind: str    # procedure | preference | decision | rule | lesson | definition | finding | fact
    bucket: str
    name: str
    statement: str
    points: list[str]
    paths: list[str]
    weight: float
    order: tuple[int, int] = (0, 0)
    roles: dict[str, str] = field(default_factory=dict)  # path -> source role
    subject: str = ""  # the person a fact is about (facts about two people never merge)

    def text(self) -> str:
        """What the candidate states, for comparisons (reasons and failure modes left out; a
        document's topic is its title and opening statement, not every line it keeps)."""
        said = [tx.main_clause(p.text) for p in pt.parse_all(self.points)
                if p.role not in ("why", "failure", "said", "context", "followup", "text")]
        return decide.text_of(self.name, tx.main_clause(self.statement), *said)
