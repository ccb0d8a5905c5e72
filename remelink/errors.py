"""One error base class; exit codes are decided here and applied only at the CLI edge (SPEC §13).

Exit codes: 0 success; 1 problems found or units failed; 2 usage or configuration error;
3 vault busy; 130 interrupted.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_PROBLEMS = 1
EXIT_USAGE = 2
EXIT_BUSY = 3
EXIT_INTERRUPTED = 130


class RemelinkError(Exception):
    """Base class of every error remelink raises on purpose.

    The message is one line a person can act on: what went wrong, which file, what to do.
    """

    exit_code = EXIT_PROBLEMS

    def __init__(self, message: str, *, path: str | None = None, hint: str | None = None) -> None:
        self.path = path
        self.hint = hint
        super().__init__(message)

    def __str__(self) -> str:
        text = super().__str__()
        if self.path and self.path not in text:
            text = f"{self.path}: {text}"
        if self.hint:
            text = f"{text} ({self.hint})"
        return text


class UsageError(RemelinkError):
    """Bad arguments or input given on the command line."""

    exit_code = EXIT_USAGE


class ConfigError(RemelinkError):
    """`.remelink/config.yaml`, an environment variable or a flag holds an invalid value."""

    exit_code = EXIT_USAGE


class SandboxError(RemelinkError):
    """A path is absolute, climbs out with `..`, leaves the vault through a symlink, or is
    otherwise not allowed for the operation."""


class NoteError(RemelinkError):
    """A note cannot be read or parsed (binary, not UTF-8, invalid frontmatter, too large)."""


class VaultBusy(RemelinkError):
    """Another process holds the vault lock (or the index writer) past the wait budget."""

    exit_code = EXIT_BUSY


class StateError(RemelinkError):
    """`.remelink/state.json` is unreadable or from a newer version; it is never overwritten."""

    exit_code = EXIT_USAGE


class ModelError(RemelinkError):
    """The model backend failed in a way retries did not fix (infrastructure, not a tool error)."""
