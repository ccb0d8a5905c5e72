"""Checking a large vault's files in two processes: forked children check every `jobs`-th file
and hand back their findings; the report is the same as checking every file in one process."""

from __future__ import annotations

import os

from remelink.lint.checks import Problem, _Linter
from remelink.vault import links as wl

# From this many files on, a second process pays for itself: on a generated 1,000-note vault the
# fork and the pickled hand-back cost 0.02 s of CPU while each process does half of 0.17 s.
PARALLEL_MIN_FILES = 1000


def default_jobs(n_files: int) -> int:
    """Processes for checking `n_files`: 2 on a machine with two or more usable cores and a vault
    large enough to gain from it, else 1. `REMELINK_LINT_JOBS=1` keeps it to one process."""
    if n_files < PARALLEL_MIN_FILES or not hasattr(os, "fork"):
        return 1
    if os.environ.get("REMELINK_LINT_JOBS", "").strip() == "1":
        return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return 2 if cores >= 2 else 1


# What a child process hands back: its problems, links checked, digest edges, deferred anchor
# checks and the outlines it scanned.
_ShareResult = tuple[list[Problem], int, dict[str, set[str]], list[tuple[str, wl.Link, str]],
                     dict[str, tuple[tuple[str, ...], set[str], int]]]


def check_files(linter: _Linter, targets: list[str], jobs: int) -> None:
    """Check `targets`. With `jobs` > 1, forked children check their share of the files (every
    `jobs`-th one) and hand back their findings, scanned outlines and deferred anchor checks;
    the result is the same as checking every file here. A child that fails is redone here."""
    if jobs < 2 or len(targets) < 2 or not hasattr(os, "fork"):
        for rel in targets:
            linter.check_file(rel)
        return
    import pickle

    # Every jobs-th file to each process: equal shares (measured: the children's extra costs,
    # copy-on-write and pickling, match this process's merge and remaining anchor checks).
    shares = [targets[k::jobs] for k in range(jobs)]
    children: list[tuple[int, int, list[str]]] = []
    for k in range(1, jobs):
        share = shares[k]
        try:
            read_fd, write_fd = os.pipe()
        except OSError:
            shares[0].extend(share)
            continue
        try:
            pid = os.fork()
        except OSError:  # no process to be had (limits): check that share here
            os.close(read_fd)
            os.close(write_fd)
            shares[0].extend(share)
            continue
        if pid == 0:  # pragma: no cover - runs in the child (measured by the tests' results)
            code = 1
            try:
                os.close(read_fd)
                for rel in share:
                    linter.check_file(rel)
                # The others go back to the parent with the outlines it may need.
                linter.flush_scanned_anchors()
                # Digest edges matter only to the orphan-node check.
                edges = linter.digest_edges if linter.settings.level("orphan-node") != "off" \
                    else {}
                payload = pickle.dumps(
                    (linter.problems, linter.links_checked, edges, linter.pending_anchors,
                     linter.scanned), protocol=pickle.HIGHEST_PROTOCOL)
                with os.fdopen(write_fd, "wb") as out:
                    out.write(payload)
                code = 0
            finally:
                os._exit(code)
        os.close(write_fd)
        children.append((pid, read_fd, share))
    for rel in shares[0]:
        linter.check_file(rel)
    if children:
        linter.flush_scanned_anchors()  # while the children finish
    for pid, read_fd, share in children:
        data = b""
        try:
            with os.fdopen(read_fd, "rb") as inp:
                data = inp.read()
        finally:
            _, status = os.waitpid(pid, 0)
        result: _ShareResult | None = None
        if status == 0 and data:
            try:
                result = pickle.loads(data)
            except Exception:  # a truncated payload: redo that share here
                result = None
        if result is None:
            for rel in share:
                linter.check_file(rel)
            continue
        problems, links_checked, digest_edges, pending, scanned = result
        linter.problems.extend(problems)
        linter.links_checked += links_checked
        linter.digest_edges.update(digest_edges)
        linter.pending_anchors.extend(pending)
        linter.scanned.update(scanned)
