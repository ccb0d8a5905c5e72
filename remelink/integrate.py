"""Integrating one memory unit: one unit in, exactly one digest node written or updated, or
nothing changed at all (SPEC §7).

The model (LLM or the local engine) works through the six tools on an in-memory overlay. Its
receipt is accepted only when the staged node passes the guards; then the node is written
atomically (after an optional write-ahead hook used by the checkpoint) and the node index is
updated. Any failure leaves the vault byte-for-byte as it was.
"""

from __future__ import annotations

import difflib
import hashlib
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from remelink import evidence as ev
from remelink import prompts
from remelink.agent import (
    Accept,
    Feedback,
    LoopError,
    Transcript,
    json_problem,
    parse_receipt,
    quote,
    run_loop,
)
from remelink.config import Settings
from remelink.errors import RUN, UNIT, FileSystemError, ModelError, RemelinkError, RunModelError
from remelink.guards import Validation, revision_problems, validate
from remelink.models.base import ChatModel, Usage
from remelink.notelinks import LazyNoteLinks
from remelink.outage import Outage
from remelink.receipt import Receipt, check_receipt, classify
from remelink.tokens import estimate_tokens
from remelink.tools.vault_tools import toolbox
from remelink.units import Unit, match_source
from remelink.vault.fsio import replace_if
from remelink.vault.notes import Note
from remelink.vault.paths import resolve_inside
from remelink.vault.resolve import VaultFiles
from remelink.workspace import UnitWorkspace


class SearchIndex(Protocol):
    def search(self, query: str, *, limit: int = 20, bucket: str | None = None,
               refresh: bool = True) -> list[Any]: ...

    def update(self, paths: Any) -> None: ...


# Why a unit failed (UnitResult.failure): what the failure stops and what it costs.
TRANSIENT_FAILURE = "transient"  # the provider failed past its retries: the unit fails, the run
#                                  goes on; an outage (several in a row) costs no attempt
UNIT_FAILURE = "unit"            # permanent for the unit (context, policy, invalid): one attempt
RUN_FAILURE = "run"              # permanent for the run (auth, model, quota): the run stops
DISK_FAILURE = "disk"            # the disk refused a write: the step stops, no attempt
ANSWER_FAILURE = "answer"        # no acceptable answer within the budget: one attempt


@dataclass(frozen=True)
class UnitResult:
    unit: Unit
    status: str  # done | failed
    action: str | None = None
    target: str | None = None
    note: str = ""
    error: str | None = None
    diff: str = ""
    content_hash: str | None = None
    changed: bool = False
    usage: Usage = field(default_factory=Usage)
    steps: int = 0
    repairs: int = 0
    seconds: float = 0.0
    model_seconds: float = 0.0
    candidates: tuple[tuple[str, float], ...] = ()
    classification: tuple[tuple[str, str], ...] = ()
    related: tuple[str, ...] = ()
    labelled: tuple[str, ...] = ()  # candidates the receipt classified (the rest are inferred)
    model: str = ""
    failure: str | None = None  # one of the *_FAILURE kinds above when the unit failed
    over_budget: bool = False  # stopped by auto_dream.unit_tokens
    raced: bool = False  # failed while another unit changed what it was looking at
    warnings: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.status == "done"

    @property
    def infrastructure(self) -> bool:
        """The failure is not the unit's own (the provider or the disk failed)."""
        return self.failure in (TRANSIENT_FAILURE, RUN_FAILURE, DISK_FAILURE)


class TargetClaims:
    """Serialises units that touch the same node when units run in parallel: a unit claims its
    target on its first write and keeps it until it commits or fails. Each unit holds at most
    one claim, so waiting can never deadlock."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._held: dict[str, str] = {}

    def claim(self, target: str, owner: str) -> None:
        with self._cond:
            # A unit that has not staged anything yet may change its mind about the target:
            # drop its other claims first, so it never holds two while waiting.
            for other in [t for t, o in self._held.items() if o == owner and t != target]:
                del self._held[other]
            self._cond.notify_all()
            while self._held.get(target, owner) != owner:
                self._cond.wait()
            self._held[target] = owner

    def release(self, owner: str) -> None:
        with self._cond:
            for target in [t for t, o in self._held.items() if o == owner]:
                del self._held[target]
            self._cond.notify_all()


CommitHook = Callable[[Unit, str, str], None]
# The calls whose message may carry the receipt as its text (judged once they ran).
RECEIPT_WITH = frozenset({"write", "edit", "frontmatter_update"})


@dataclass
class IntegrationContext:
    vault: Path
    settings: Settings
    model: ChatModel
    index: SearchIndex
    files: VaultFiles
    today: str
    on_commit: CommitHook | None = None
    claims: TargetClaims = field(default_factory=TargetClaims)
    commit_lock: threading.Lock = field(default_factory=threading.Lock)
    # Guards the shared file list: a unit validating its staged node adds the node's path for
    # a moment, and a parallel unit must not see it (it is not on disk yet).
    files_lock: threading.RLock = field(default_factory=threading.RLock)
    # Every node committed in this context, in order, with the rank of the unit that wrote it
    # and whether it created it (under commit_lock).
    commits: list[tuple[int, str, bool]] = field(default_factory=list)
    # Units run side by side but commit in extraction order (`rank`), as one at a time would:
    # a unit that is done waits for the units before it to settle, then, if one of them created
    # a node its own searches would now show among their best candidates, it runs again (it
    # decided without a node it would have seen one at a time: a link missed, or a duplicate).
    ordered: bool = False
    gate: threading.Condition = field(default_factory=threading.Condition)
    settled: set[int] = field(default_factory=set)
    ranks: dict[str, int] = field(default_factory=dict)  # unit id -> its rank
    # Links between the raw notes (notelinks.py), scanned once on first use.
    note_links: LazyNoteLinks | None = None
    # The first message's candidates of each unit running side by side (rank -> paths): a
    # unit whose candidates overlap those of an earlier unit still running waits for it (see
    # `wait_for_overlap`).
    recalled: dict[int, frozenset[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.note_links is None:
            self.note_links = LazyNoteLinks(self.files, self.settings)

    def committed_since(self, mark: int) -> list[tuple[int, str, bool]]:
        with self.commit_lock:
            return self.commits[mark:]

    def mark(self) -> int:
        with self.commit_lock:
            return len(self.commits)

    def settle(self, rank: int) -> None:
        """The unit of `rank` is done with (committed, failed or not attempted)."""
        with self.gate:
            self.settled.add(rank)
            self.gate.notify_all()

    def wait_for_overlap(self, rank: int, paths: frozenset[str]) -> bool:
        """Record the candidates of the unit of `rank`, and wait while an earlier unit that is
        still running was shown one of them: it will most likely update that node or create
        one next to it, which this unit's candidates would then show, so a conversation
        started now would run stale and be paid for twice. True when it waited (the caller
        recalls again). Only earlier units are waited for, and they started first: no
        deadlock."""
        with self.gate:
            self.recalled[rank] = paths

            def blocking() -> bool:
                return any(r < rank and r not in self.settled and seen & paths
                           for r, seen in self.recalled.items())

            if not blocking():
                return False
            while blocking():
                self.gate.wait()
            return True

    def wait_turn(self, rank: int) -> None:
        """Until every unit before `rank` has settled. Units start in rank order, so the first
        unsettled one is always running: the wait ends."""
        with self.gate:
            while any(r not in self.settled for r in range(rank)):
                self.gate.wait()


class _Stale(Exception):
    """A unit's conversation missed a node an earlier unit created meanwhile."""

    def __init__(self, transcript: Transcript) -> None:
        super().__init__("stale")
        self.transcript = transcript


def _hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@contextmanager
def _with_path(files: VaultFiles, rel: str) -> Iterator[None]:
    """Pretend `rel` exists while validating a staged new node (self-links, anchors)."""
    added = rel not in files.files
    if added:
        files.add(rel)
    try:
        yield
    finally:
        if added:
            files.discard(rel)


def recall(ctx: IntegrationContext, ws: UnitWorkspace, unit: Unit,
           search: Any = None) -> list[tuple[str, str, str, str | None]]:
    """node_search for the unit before the first model turn, for the first message: the best
    candidates (path, name, description) and the bodies of the best short ones. Recorded as a
    search of the unit, so the audit lists these candidates too. A failing index only costs
    the shortcut: the model can still call node_search."""
    query = " ".join([unit.name, unit.summary, *unit.points])[:1500]
    try:
        hits = search(query, prompts.RECALL_SHOWN, None) if search is not None else \
            ctx.index.search(query, limit=prompts.RECALL_SHOWN, bucket=None, refresh=False)
    except RemelinkError:
        return []
    hits = list(hits)[:prompts.RECALL_SHOWN]
    ws.searches.append((query, hits))
    out: list[tuple[str, str, str, str | None]] = []
    room = prompts.RECALL_BODIES_TOKENS
    for i, hit in enumerate(hits):
        body = None
        if i < prompts.RECALL_BODIES:
            try:
                note = ws.current(hit.path)
            except RemelinkError:
                note = None
            cost = estimate_tokens(note.body) if note is not None else 0
            if note is not None and cost <= min(room, prompts.RECALL_BODY_TOKENS):
                body = note.body.replace("\r\n", "\n")
                room -= cost
        out.append((hit.path, str(hit.name), str(hit.description), body))
    return out


def integrate_unit(ctx: IntegrationContext, unit: Unit, *, dry_run: bool = False,
                   rank: int = 0) -> UnitResult:
    """Integrate one unit. Never raises for unit-level failures: they come back as `failed`,
    with the tokens, turns and time they cost, and the kind of failure (`failure`). `rank` is
    the unit's place in extraction order (for `ctx.ordered`); a unit that ran stale is run once
    more, and the result carries what both conversations cost."""
    try:
        return _integrate_unit(ctx, unit, dry_run=dry_run, rank=rank,
                               check_stale=ctx.ordered)
    except _Stale as stale:
        # Every unit before it has settled now: this conversation sees what one at a time
        # would have, and cannot run stale again.
        spent = stale.transcript
        bind = getattr(ctx.model, "bind_index", None)
        if callable(bind):
            bind(ctx.index)  # the statistics of the vault as it is now, as for a fresh unit
        again = _integrate_unit(ctx, unit, dry_run=dry_run, rank=rank, check_stale=False)
        return replace(again, usage=spent.usage + again.usage, steps=spent.steps + again.steps,
                       repairs=spent.repairs + again.repairs,
                       model_seconds=spent.model_seconds + again.model_seconds)


def _integrate_unit(ctx: IntegrationContext, unit: Unit, *, dry_run: bool, rank: int,
                    check_stale: bool) -> UnitResult:
    started = time.perf_counter()
    settings = ctx.settings
    owner = f"{unit.id}-{threading.get_ident()}"
    dream = settings.auto_dream
    mark = ctx.mark()
    ctx.ranks[unit.id] = rank
    asked: list[tuple[str, int, str | None, list[str]]] = []

    def search(query: str, limit: int, bucket: str | None) -> list[Any]:
        hits = list(ctx.index.search(query, limit=limit, bucket=bucket, refresh=False))
        asked.append((query, limit, bucket, [h.path for h in hits]))
        return hits

    notices: list[str] = []
    if unit.revises is not None and not (ctx.vault / unit.revises.target).is_file():
        # The node the earlier statement went into is gone (deleted or renamed by hand): the
        # unit is new knowledge again, integrated as usual.
        notices.append(f"{unit.revises.target}, which held what the edited note said before, "
                       "no longer exists; integrated as a new unit")
        unit = replace(unit, revises=None)
    if ctx.note_links is not None:
        # The notes that the unit's notes link (or are linked from): evidence of related nodes.
        unit = ctx.note_links.annotate(unit)
    ws = UnitWorkspace(ctx.vault, settings, unit, search,
                       claim=lambda rel: ctx.claims.claim(rel, owner))
    transcript = Transcript(messages=[])
    try:
        _check_unit_paths(ctx, unit)
        evidence = ev.build(ctx.vault, unit)
        language = settings.language if settings.language != "auto" else \
            ev.language_of(unit, evidence)
        folders = settings.folders
        shown = recall(ctx, ws, unit, search) if getattr(ctx.model, "prompt_recall", True) \
            else []
        while check_stale and shown and \
                ctx.wait_for_overlap(rank, frozenset(path for path, *_ in shown)):
            # Recalled again on the vault the earlier units left: this conversation starts
            # from what one at a time would show (the check at its end still stands).
            mark = ctx.mark()
            asked.clear()
            ws.searches.clear()
            shown = recall(ctx, ws, unit, search)
        messages = prompts.integrate_messages(unit, evidence, language=language, today=ctx.today,
                                              daily=folders.daily, resource=folders.resource,
                                              digest=folders.digest, candidates=shown,
                                              budget=getattr(ctx.model, "prompt_budget", True))
        receipt_data: dict[str, Any] = {}
        inherited: list[str] = []  # lint errors the node had before this unit, kept

        def check(note: Note, original: Note | None, action: str | None = None
                  ) -> Validation:
            with ctx.files_lock, _with_path(ctx.files, note.path):
                return validate(ctx.files, settings, unit, note, original, language=language,
                                action=action)

        def judge(text: str) -> Accept[Receipt] | Feedback:
            data = parse_receipt(text)
            staged = ws.staged is not None
            if data is None:
                # The model's own words go back with the problem (a refusal says why it stopped;
                # broken JSON says where).
                broken = json_problem(text)
                said = f"your answer was {quote(text)}" if text.strip() else \
                    "your answer was empty"
                problem = (f"no receipt found ({said}"
                           + (f"; its JSON is invalid: {broken}" if broken else "")
                           + "): answer with only {\"action\": ..., \"target_path\": ..., "
                           "\"note\": ..., \"classification\": {...}}, not in prose")
                return Feedback(prompts.receipt_feedback([problem], language=language,
                                                         staged=staged), problem)
            try:
                receipt, problems = check_receipt(ws, data)
                final = ws.staged or (ws.current(receipt.target_path) if receipt else None)
            except RemelinkError as exc:  # e.g. an update receipt naming an unreadable note
                receipt, problems = None, [str(exc)]
            if receipt is None:
                return Feedback(prompts.receipt_feedback(problems, language=language,
                                                         staged=staged), "; ".join(problems))
            if final is None:
                problem = f"{receipt.target_path} is empty"
                return Feedback(prompts.receipt_feedback([problem], language=language,
                                                         staged=staged), problem)
            # Judged against the node as it was (nothing staged: the node is its own original).
            original = ws.original if ws.staged is not None else final
            verdict = check(final, original, receipt.action)
            problems = revision_problems(unit, receipt.action, receipt.target_path, final) + \
                verdict.problems
            inherited[:] = verdict.inherited
            if problems:
                return Feedback(prompts.node_feedback(problems, receipt.target_path,
                                                      language=language), "; ".join(problems))
            receipt_data.clear()
            receipt_data.update(data)
            return Accept(receipt)

        tools = toolbox(ws, check=lambda note, original: check(note, original).problems)
        receipt, transcript = run_loop(ctx.model, messages, tools, judge,
                                       max_steps=dream.max_steps, max_repairs=dream.repair_turns,
                                       transcript=transcript, max_tokens=dream.unit_tokens,
                                       answer_with=RECEIPT_WITH)
        final = ws.staged if ws.staged is not None else ws.current(receipt.target_path)
        before = ws.original.render() if ws.original is not None else b""
        after = final.render() if final is not None else before
        changed = ws.staged is not None and after != before
        diff = _diff(receipt.target_path, before, after, created=not ws.existed) if changed else ""
        warnings: tuple[str, ...] = tuple(notices) + tuple(
            f"kept a problem the node already had ({p}); lint-links reports it" for p in inherited)
        if ctx.ordered:
            # Wait for the units before this one without holding the target: one of them may
            # need it (the commit checks the node did not change meanwhile).
            ctx.claims.release(owner)
            ctx.wait_turn(rank)
            if check_stale and _stale(ctx, mark, rank, asked):
                raise _Stale(transcript)
        if changed and not dry_run:
            warnings += _commit(ctx, ws, unit, receipt.target_path, after)
        candidates, classes, related, labelled = classify(ws, final, receipt,
                                                                 receipt_data)
        return UnitResult(
            unit=unit, status="done", action=receipt.action, target=receipt.target_path,
            note=receipt.note, diff=diff, content_hash=_hash(after), changed=changed,
            usage=transcript.usage, steps=transcript.steps, repairs=transcript.repairs,
            seconds=time.perf_counter() - started, model_seconds=transcript.model_seconds,
            candidates=candidates, classification=classes, related=related,
            labelled=labelled, model=ctx.model.name, warnings=warnings)
    except (LoopError, ModelError, RemelinkError) as exc:
        candidates, classes, _, _ = classify(ws, None, None, {})
        seen = {ws.target} | {p for p, _ in candidates} | set(ws.reads)
        raced = "changed on disk while this unit" in str(exc) or any(
            path in seen for _, path, _ in ctx.committed_since(mark))
        return UnitResult(unit=unit, status="failed", error=str(exc),
                          seconds=time.perf_counter() - started, target=ws.target,
                          usage=transcript.usage, steps=transcript.steps,
                          repairs=transcript.repairs, model_seconds=transcript.model_seconds,
                          candidates=candidates, classification=classes,
                          model=ctx.model.name, failure=failure_kind(exc),
                          over_budget=isinstance(exc, LoopError) and exc.budget, raced=raced)
    finally:
        ctx.claims.release(owner)


def failure_kind(exc: BaseException) -> str:
    """What a unit's failure stops and costs (the *_FAILURE kinds)."""
    if isinstance(exc, ModelError):
        return {RUN: RUN_FAILURE, UNIT: UNIT_FAILURE}.get(exc.kind, TRANSIENT_FAILURE)
    if isinstance(exc, FileSystemError):  # a full or read-only disk is not the unit's fault
        return DISK_FAILURE
    return ANSWER_FAILURE


def _stale(ctx: IntegrationContext, mark: int, rank: int,
           asked: list[tuple[str, int, str | None, list[str]]]) -> bool:
    """Did the units earlier in extraction order, committing after this unit started, change
    what its searches showed it? Then this unit decided on a vault one at a time would not
    have shown it (a link missed, or a duplicate made). Changed means: the searches now return
    other nodes or the same ones in another order (a node created, or a node's new text moving
    the ranking), or a node they return was written since (the model saw its old text). Every
    hit counts, not only the best few: a model links candidates far down the list (the
    trade-off measured is in docs/llm.md, "Concurrency")."""
    written = {path for r, path, _ in ctx.committed_since(mark) if r < rank}
    if not written:
        return False
    for query, limit, bucket, seen in asked:
        try:
            hits = [h.path for h in ctx.index.search(query, limit=limit, bucket=bucket,
                                                     refresh=False)]
        except RemelinkError:
            continue
        if hits != seen or any(path in written for path in hits):
            return True
    return False


def _check_unit_paths(ctx: IntegrationContext, unit: Unit) -> None:
    """Fail before the first model call when the unit can never pass validation: its Sources
    must cite every path, so every path must be an existing daily/resource note in the vault."""
    folders = ctx.settings.folders
    for rel in unit.paths:
        if not rel.startswith((f"{folders.daily}/", f"{folders.resource}/")):
            raise RemelinkError(f"unit path {rel} is not a {folders.daily}/ or "
                                f"{folders.resource}/ note; a unit cites raw notes only")
        if not resolve_inside(ctx.vault, rel).is_file():
            raise RemelinkError(f"unit path {rel} does not exist; was the note moved or deleted?")


class _RawNotes:
    """The raw notes of the vault, listed the first time a units file names a path that is not
    one as written: `2026-06-20/x` then means `daily/2026-06-20/x.md` when exactly one note
    matches (SPEC §8, the same reading as for an extraction answer)."""

    def __init__(self, vault: Path, settings: Settings) -> None:
        self.vault, self.settings = vault, settings
        self._paths: list[str] | None = None

    def canonical(self, unit: Unit) -> Unit:
        paths = []
        for rel in unit.paths:
            if not (self.vault / rel).is_file():
                if self._paths is None:
                    from remelink.dream.inputs import scan

                    self._paths = scan(self.vault, self.settings, None).inputs
                found, _ = match_source(rel, self._paths)
                rel = found or rel  # not found: the unit fails naming the path
            paths.append(rel)
        return unit if tuple(paths) == unit.paths else replace(unit, paths=tuple(paths))


def _commit(ctx: IntegrationContext, ws: UnitWorkspace, unit: Unit, target: str,
            data: bytes) -> tuple[str, ...]:
    """Write the accepted node: run the write-ahead hook (the journal is fsynced first), then
    compare-and-swap: the node is replaced only if it is still byte for byte what the unit read
    (the compare happens right before the atomic rename, `own.replace_if`), so a person's edit
    saved while the model worked is never overwritten: the unit fails, changes nothing, and is
    retried on the new content. Then record the commit (with the unit's rank, for ordered
    commits), refresh the file list and the node index. Returns warnings."""
    # The sandbox again, at the last moment: a folder swapped for a symlink since the tool call
    # must not redirect the write.
    path = resolve_inside(ctx.vault, target, follow_symlinks=False)  # its on-disk spelling
    root = ctx.vault.resolve()
    with ctx.commit_lock:
        expected = ws.original.render() if ws.original is not None else None
        if ctx.on_commit is not None:
            ctx.on_commit(unit, target, _hash(data))
        if not replace_if(path, data, expected, root=root, rel=target):
            raise RemelinkError(f"{target} changed on disk while this unit was integrated; "
                                "nothing was written, and the unit will be retried on the new "
                                "content", path=target)
        ctx.commits.append((ctx.ranks.get(unit.id, 0), target, expected is None))
        with ctx.files_lock:
            ctx.files.add(target)
    try:
        ctx.index.update([target])
    except RemelinkError as exc:
        # The node is committed; the index is derived and the next search refreshes it. Failing
        # the unit now would integrate it twice on the next run.
        return (f"node index not updated: {exc}",)
    return ()


def _diff(target: str, before: bytes, after: bytes, *, created: bool) -> str:
    a = before.decode("utf-8", "replace").splitlines(keepends=True)
    b = after.decode("utf-8", "replace").splitlines(keepends=True)
    return "".join(difflib.unified_diff(a, b, fromfile="/dev/null" if created else f"a/{target}",
                                        tofile=f"b/{target}"))


@dataclass
class IntegrateReport:
    results: list[UnitResult]
    seconds: float

    @property
    def failed(self) -> int:
        return sum(1 for r in self.results if not r.ok)


def integrate(vault: Path, settings: Settings, units: Sequence[Unit], model: ChatModel, *,
              dry_run: bool = False, wait: float = 0.0, today: str | None = None,
              index: SearchIndex | None = None) -> IntegrateReport:
    """`remelink integrate`: integrate each unit in turn under the vault lock.

    A dry run of several units runs for real on a scratch copy of the vault, so each unit's
    diff is what it would change after the units before it (a second unit about the same thing
    updates the node the first one created instead of creating it too)."""
    from remelink.vault.fsio import file_lock, shared_lock

    started = time.perf_counter()
    lock_path = vault / ".remelink" / "lock"
    # A dry run writes nothing, not even the lock file, yet waits for a run that writes.
    with (shared_lock if dry_run else file_lock)(lock_path, wait=wait):
        if dry_run and len(units) > 1 and index is None:
            from remelink.vault.scratch import scratch_copy

            with scratch_copy(vault, settings) as scratch:
                results = _integrate_all(scratch, settings, units, model, dry_run=False,
                                         today=today, index=None)
        else:
            results = _integrate_all(vault, settings, units, model, dry_run=dry_run,
                                     today=today, index=index)
    return IntegrateReport(results, time.perf_counter() - started)


def _integrate_all(vault: Path, settings: Settings, units: Sequence[Unit], model: ChatModel, *,
                   dry_run: bool, today: str | None, index: SearchIndex | None
                   ) -> list[UnitResult]:
    own_index = None
    if index is None:
        from remelink.index import NodeIndex

        index = own_index = NodeIndex(vault, settings)
        own_index.refresh()
    bind = getattr(model, "bind_index", None)
    if callable(bind):
        bind(index)
    try:
        ctx = IntegrationContext(vault=vault, settings=settings, model=model, index=index,
                                 files=VaultFiles.scan(vault),
                                 today=today or time.strftime("%Y-%m-%d"))
        results: list[UnitResult] = []
        sources = _RawNotes(vault, settings)
        outage = Outage()
        for unit in units:
            unit = sources.canonical(unit)
            if outage.tripped:
                results.append(UnitResult(
                    unit=unit, status="failed", model=model.name, failure=TRANSIENT_FAILURE,
                    error=f"not attempted: {outage.reason()}"))
                continue
            result = integrate_unit(ctx, unit, dry_run=dry_run)
            results.append(result)
            if result.failure == RUN_FAILURE:
                # Auth, an unknown model, an exhausted quota: one line and exit 2, whatever
                # else was asked (every further call would fail the same way).
                raise RunModelError(result.error or "the model failed")
            if result.failure == DISK_FAILURE:
                outage.trip(result.error or "the disk refused a write")
            else:
                outage.record(result.failure == TRANSIENT_FAILURE, unit.id, result.error or "")
        return results
    finally:
        if own_index is not None:
            own_index.close()
