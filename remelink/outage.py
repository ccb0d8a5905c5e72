"""When the provider is down rather than flaky (SPEC §7.2 "Errors by kind").

A transient failure (rate limit, server error, timeout) that outlasts the backend's retries
fails its unit, and the run goes on: the next unit may well get through. But when `limit`
units (or batches, or tagging calls) in a row fail that way, the provider is down: walking
every remaining unit through its retries would take minutes and tell nothing new. `Outage`
counts that streak; once it trips, the caller stops asking the model for the rest of its step,
reports the rest as not attempted, and gives the streak's units their attempt back (an outage
is no fault of theirs). The next step probes again: one more such failure trips it at once.
"""

from __future__ import annotations

import threading

OUTAGE_STREAK = 3


class Outage:
    def __init__(self, limit: int = OUTAGE_STREAK) -> None:
        self.limit = limit
        self.streak: list[str] = []  # labels of the transient failures in a row
        self.tripped = False
        self.last = ""
        self._lock = threading.Lock()

    def record(self, transient: bool, label: str = "", error: str = "") -> bool:
        """One settled call, unit or batch: `transient` when it failed past its retries.
        Returns True when this failure trips the breaker."""
        with self._lock:
            if not transient:
                self.streak.clear()
                return False
            self.streak.append(label)
            self.last = error or self.last
            if not self.tripped and len(self.streak) >= self.limit:
                self.tripped = True
                return True
            return False

    def trip(self, error: str) -> None:
        with self._lock:
            self.tripped, self.last = True, error

    def reason(self) -> str:
        last = " ".join(self.last.split())[:300]
        return (f"the model failed {len(self.streak) or 1} time(s) in a row, so the provider "
                f"looks down (last error: {last}); no attempt used, the next run tries again")

    def next_step(self) -> None:
        """A new step starts half-open: one more transient failure trips it again."""
        with self._lock:
            if self.tripped:
                self.tripped = False
                self.streak = self.streak[-(self.limit - 1):] if self.limit > 1 else []
