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


class UnsafeFileError(NoteError):
    """A path whose real location leaves the vault (a symlink out of it), or that is not a
    regular file (FIFO, socket, device, folder): never opened, never written (SPEC §1)."""


class FileSystemError(RemelinkError):
    """The file system refused a write: permission denied, disk full, read-only. The message
    names the file and what to do; nothing is lost, and a rerun resumes."""


class VaultBusy(RemelinkError):
    """Another process holds the vault lock (or the index writer) past the wait budget."""

    exit_code = EXIT_BUSY


class StateError(RemelinkError):
    """`.remelink/state.json` is unreadable or from a newer version; it is never overwritten."""

    exit_code = EXIT_USAGE


# What a model failure stops (SPEC §7.2 "Errors by kind").
TRANSIENT = "transient"  # 429, 5xx, timeouts, connection, empty or invalid answers: retried,
#                          then the unit fails and the run goes on
UNIT = "unit"            # context length, content policy, a rejected request: the unit fails
#                          at once (one attempt), the run goes on
RUN = "run"              # auth, unknown model, exhausted quota: the run stops, exit 2


class ModelError(RemelinkError):
    """The model backend failed in a way retries did not fix (infrastructure, not a tool error).

    `kind` says what it stops (TRANSIENT, UNIT or RUN above). The tokens the failed calls
    were charged (an answer without choices still has a `usage`) travel with it, so that a
    failed unit's cost is counted."""

    kind = TRANSIENT

    def __init__(self, message: str, *, path: str | None = None, hint: str | None = None,
                 prompt_tokens: int = 0, completion_tokens: int = 0) -> None:
        super().__init__(message, path=path, hint=hint)
        self.prompt_tokens = prompt_tokens
        self.completion_tokens = completion_tokens


class UnitModelError(ModelError):
    """Permanent for this unit (its conversation no longer fits the context window, the
    provider's content policy refused it, the provider rejected the request as invalid):
    retrying the same conversation cannot help, other units may well succeed."""

    kind = UNIT


class RunModelError(ModelError):
    """Permanent for the run (authentication, an unknown model or provider, an exhausted
    quota or unpaid account): every further call would fail the same way. One line, exit 2."""

    kind = RUN
    exit_code = EXIT_USAGE


# errno values of a file system that refuses writes: the user can act on each of them.
_FS_ERRNOS = {"EACCES": "permission denied", "EPERM": "operation not permitted",
              "ENOSPC": "no space left on the device", "EDQUOT": "disk quota exceeded",
              "EROFS": "the file system is read-only",
              "EFBIG": "file too large for the file system"}


def filesystem_error(exc: BaseException, *, path: str | None = None, root: object = None,
                     verb: str | None = None) -> FileSystemError | None:
    """`exc` as a one-line FileSystemError when it is a file-system refusal the user can fix
    (permission, disk full, read-only), else None. `path` (workspace-relative) names the file;
    otherwise the OSError's own file name, shown relative to `root` when it is inside it.
    `verb` says what was refused ("write", "read"; default: "write", or "access" for a
    permission error of unknown direction)."""
    import errno
    import os

    if not isinstance(exc, OSError) or exc.errno is None:
        return None
    name = errno.errorcode.get(exc.errno, "")
    what = _FS_ERRNOS.get(name)
    if what is None:
        return None
    where = path
    if where is None and exc.filename is not None:
        where = os.fsdecode(exc.filename)
        if root is not None:
            base = os.path.abspath(os.fspath(root))  # type: ignore[call-overload]
            full = os.path.abspath(where)
            if full.startswith(base + os.sep):
                where = os.path.relpath(full, base).replace(os.sep, "/")
    if name in ("ENOSPC", "EDQUOT", "EFBIG"):
        hint = "free some disk space, then rerun: what was written is kept, and the run resumes"
    elif name == "EROFS":
        hint = "remount the vault read-write (or copy it somewhere writable), then rerun"
    else:
        hint = "make it writable by this user (check its owner and mode), then rerun"
    if verb is None:
        verb = "access" if name in ("EACCES", "EPERM") else "write"
    return FileSystemError(f"cannot {verb} {where or 'a file'}: {what}", hint=hint)
