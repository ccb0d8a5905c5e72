"""`dream_extract_step` (SPEC §8): the raw notes whose content changed since they were last
processed become memory units, recorded as pending in the checkpoint.

Notes are read here and nowhere else in the pipeline's first step: an unreadable note (invalid
frontmatter, binary, not UTF-8, empty, over `limits.max_note_bytes`) is reported, recorded as
invalid with its hash (so it is reported again until it changes) and never rewritten. Changed
notes go to the model in batches (`auto_dream.batch_chars`); the answer `{units: [...]}` is
parsed at the boundary, and paths outside the batch are dropped.
"""

from __future__ import annotations

from collections.abc import Iterator

from remelink import prompts
from remelink.agent import Accept, Feedback, LoopError, parse_object, run_loop
from remelink.dream.context import RunContext
from remelink.dream.inputs import read_input, scan
from remelink.dream.state import InputRecord, sha256
from remelink.errors import ModelError, NoteError, RemelinkError
from remelink.evidence import detect_language
from remelink.tools.vault_tools import toolbox
from remelink.units import Unit, parse_unit
from remelink.vault import frontmatter
from remelink.vault.boundary import vault_real
from remelink.vault.notes import Note, decode, is_blank
from remelink.workspace import UnitWorkspace

PER_NOTE_CHARS = 20_000


def problem(exc: BaseException, rel: str) -> str:
    """An error as one line without the path in front (the report puts it there)."""
    text = " ".join(str(exc).split())
    return text.removeprefix(f"{rel}: ")


Changed = tuple[str, Note, str]  # (path, note, content hash)


def _changed_inputs(ctx: RunContext) -> Iterator[Changed]:
    """(path, note, hash) for every input whose content changed since it was processed.

    Unchanged inputs are skipped; invalid ones are reported every run until they are fixed, and
    never rewritten (nothing here writes to the vault)."""
    state, report = ctx.state, ctx.report
    found = scan(ctx.vault, ctx.settings, ctx.window)
    paths = found.inputs
    # What cannot be an input (a symlink out of the vault, a FIFO, a name no link can carry) is
    # reported every run, one line each, and never checkpointed.
    report.inputs.update({rel: {"status": "invalid", "error": why}
                          for rel, why in found.refused.items()})
    report.warnings += found.notices
    report.files_scanned = len(paths) + len(found.refused)
    limit = ctx.settings.max_note_bytes
    max_attempts = ctx.settings.auto_dream.max_attempts
    root_real = vault_real(ctx.vault)
    for rel in paths:
        data: bytes | None = None
        try:
            got = read_input(ctx.vault, rel, limit=limit, root_real=root_real)
            if got.data is None:
                # Not read at all: a 50 MB file costs a stat, and its "hash" is its stat.
                digest = f"stat:{got.size}:{got.mtime_ns}"
            else:
                data = got.data
                digest = sha256(data)
        except (OSError, NoteError) as exc:
            why = problem(exc, rel) if isinstance(exc, NoteError) else exc.strerror or exc
            report.inputs[rel] = {"status": "invalid", "error": f"cannot read: {why}"}
            continue
        known = state.inputs.get(rel)
        if known is not None and known.hash == digest:
            if known.extract_hash is not None:  # edited back to the content last extracted
                with ctx.state_lock:
                    known.extract_hash, known.extract_attempts, known.error = None, 0, None
                    known.status = "pending"  # finish_step settles it from its units
            if known.status == "invalid":
                report.inputs[rel] = {"status": "invalid", "error": known.error}
            else:
                report.files_unchanged += 1
                report.inputs[rel] = {"status": "skipped"}
            continue
        if known is not None and not ctx.retry_failed and \
                known.gave_up_extracting(digest, max_attempts):
            report.inputs[rel] = {
                "status": "failed", "attempts": known.extract_attempts,
                "error": f"extraction gave up after {known.extract_attempts} attempt(s) "
                         f"(last error: {known.error}); edit the note or rerun with "
                         f"--retry-failed"}
            continue
        error = None
        try:
            if data is None:
                raise NoteError(f"file is {got.size / 1048576:.1f} MiB, over the "
                                f"{limit / 1048576:g} MiB limit for notes", path=rel,
                                hint="split it, or raise limits.max_note_bytes")
            note = decode(rel, data, max_bytes=limit)
            if is_blank(note):
                raise NoteError("empty note: nothing to extract", path=rel)
            if note.frontmatter_text is not None or note.text.startswith("---"):
                frontmatter.load(note)
        except NoteError as exc:
            error = problem(exc, rel)
        if error is not None:
            report.inputs[rel] = {"status": "invalid", "error": error}
            with ctx.state_lock:
                state.inputs[rel] = InputRecord(hash=digest, status="invalid", error=error,
                                                run=report.run_id)
            continue
        report.files_changed += 1
        yield rel, note, digest


def _extraction_failed(ctx: RunContext, item: Changed, exc: Exception) -> None:
    rel, _, digest = item
    error = f"extraction: {exc}"
    with ctx.state_lock:
        record = ctx.state.inputs.get(rel) or InputRecord(hash="")
        record.extraction_failed(digest, error, ctx.report.run_id, fresh=ctx.retry_failed)
        ctx.state.inputs[rel] = record
        ctx.report.inputs[rel] = {"status": "failed", "error": error,
                                  "attempts": record.extract_attempts}
        ctx.report.errors.append(f"{rel}: {error}")
        ctx.reporter.advance("extract", rel)
        ctx.save_state(inputs=[rel])


def _material(note: Note) -> str:
    text = note.text
    if len(text) > PER_NOTE_CHARS:
        text = text[:PER_NOTE_CHARS] + \
            f"\n[... truncated at {PER_NOTE_CHARS} characters; call read for the rest]"
    return f"### {note.path}\n{text}"


def _batches(items: list[Changed], budget: int) -> Iterator[list[Changed]]:
    batch: list[Changed] = []
    size = 0
    for item in items:
        length = min(len(item[1].text), PER_NOTE_CHARS)
        if batch and size + length > budget:
            yield batch
            batch, size = [], 0
        batch.append(item)
        size += length
    if batch:
        yield batch


def _extract_batch(ctx: RunContext, batch: list[tuple[str, Note, str]]) -> list[Unit]:
    paths = [rel for rel, _, _ in batch]
    material = "\n\n".join(_material(note) for _, note, _ in batch)
    language = ctx.settings.language if ctx.settings.language != "auto" else \
        detect_language(material[:20_000])
    messages = prompts.extract_messages(
        date=ctx.window.date if ctx.window else ctx.today,
        window=list(ctx.window.days) if ctx.window else [], hint=ctx.hint,
        max_units=ctx.max_units, changed_paths=paths, material=material, language=language)
    ws = UnitWorkspace(ctx.vault, ctx.settings, None, lambda q, n, b: [])
    folders = ctx.settings.folders
    allowed = set(paths)
    warnings: list[str] = []

    def judge(text: str) -> Accept[list[Unit]] | Feedback:
        data = parse_object(text, ("units",)) or parse_object(text, ("memory_units",))
        if data is None:
            return Feedback('Answer with one JSON object {"units": [...]} and nothing else.')
        raw = data.get("units", data.get("memory_units"))
        if not isinstance(raw, list):
            return Feedback('"units" must be a list of {name, bucket, summary, paths}.')
        units: list[Unit] = []
        warnings.clear()
        for item in raw:
            unit, found = parse_unit(item, source_prefixes=(folders.daily + "/",
                                                            folders.resource + "/"),
                                     allowed_paths=allowed)
            warnings.extend(found)
            if unit is not None and unit.id not in {u.id for u in units}:
                units.append(unit)
        if ctx.max_units and len(units) > ctx.max_units:
            warnings.append(f"extraction returned {len(units)} units; kept the first "
                            f"{ctx.max_units}")
            units = units[:ctx.max_units]
        return Accept(units)

    units, transcript = run_loop(ctx.model, messages, toolbox(ws, read_only=True), judge,
                                 max_steps=ctx.settings.auto_dream.max_steps, max_repairs=1)
    ctx.report.warnings.extend(warnings)
    ctx.report.tokens_in += transcript.usage.prompt_tokens
    ctx.report.tokens_out += transcript.usage.completion_tokens
    return units


def extract_step(ctx: RunContext) -> None:
    """`dream_extract_step`: changed inputs -> units, recorded as pending in the checkpoint.

    A batch that fails is tried again note by note, so that one note the model cannot extract
    does not hold back the notes batched with it. A note that still fails is recorded with its
    attempts and retried on the next runs up to `max_attempts` (an edit, or --retry-failed,
    starts again). An outage (the model cannot be reached) stops the step and counts against
    no note."""
    changed = list(_changed_inputs(ctx))
    ctx.reporter.start("extract", len(changed))
    queue = list(_batches(changed, ctx.settings.auto_dream.batch_chars))
    while queue:
        batch = queue.pop(0)
        ctx.rebind_model()
        try:
            units = _extract_batch(ctx, batch)
        except ModelError as exc:
            # Not checkpointed and not counted: the notes count as changed again next run.
            for rel, _, _ in batch:
                ctx.report.inputs[rel] = {"status": "failed", "error": f"extraction: {exc}"}
                ctx.reporter.advance("extract", rel)
            for rest in queue:
                for rel, _, _ in rest:
                    ctx.report.inputs[rel] = {"status": "failed",
                                              "error": f"extraction not attempted: {exc}"}
                    ctx.reporter.advance("extract", rel)
            ctx.report.errors.append(f"extraction stopped: {exc}")
            return
        except (LoopError, RemelinkError) as exc:
            if len(batch) > 1:
                queue[:0] = [[item] for item in batch]
                continue
            _extraction_failed(ctx, batch[0], exc)
            continue
        with ctx.state_lock:
            state = ctx.state
            ids = state.add_units(units, ctx.report.run_id)
            by_path: dict[str, list[str]] = {}
            for unit, uid in zip(units, ids, strict=True):
                for p in unit.paths:
                    by_path.setdefault(p, []).append(uid)
            touched = list(ids)
            for rel, _, digest in batch:
                unit_ids = by_path.get(rel, [])
                touched += state.drop_stale_units(rel, unit_ids)
                state.inputs[rel] = InputRecord(hash=digest, status="pending", units=unit_ids,
                                                run=ctx.report.run_id)
                ctx.report.inputs[rel] = {"status": "extracted", "units": unit_ids}
                ctx.reporter.advance("extract", rel)
            ctx.report.units_extracted += len(units)
            ctx.save_state(units=touched, inputs=[rel for rel, _, _ in batch])
