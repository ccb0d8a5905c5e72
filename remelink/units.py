"""Memory units: one abstraction worth remembering, `{name, bucket, summary, paths}` (SPEC §7).

Parsed once at the boundary (a units file for `remelink integrate`, an extraction answer, the
checkpoint) into frozen values. What a model means is accepted, what it does not is refused
(SPEC §8): a bucket synonym (`preferences`, `howto`, `concept`) maps explicitly to its bucket, an
unknown bucket is a problem that goes back to the model (or fails the units file), never a
silent `wiki`; a path is normalised when it names one source unambiguously (`./`, a leading
`/`, `[[...]]`, a missing `.md`, a missing `daily/` prefix), and otherwise is a problem too.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, BinaryIO, NamedTuple

from remelink.errors import SandboxError, UsageError
from remelink.vault.paths import nfc, normalize_relpath

# Explicit, and only these: a word that names a bucket in other terms. Anything else is asked
# back (an LLM that says `recipes` may mean procedure or wiki; guessing would misfile it).
BUCKET_SYNONYMS = {
    "procedure": "procedure", "procedures": "procedure", "procedural": "procedure",
    "howto": "procedure", "how-to": "procedure", "how_to": "procedure", "how to": "procedure",
    "howtos": "procedure", "how-tos": "procedure", "runbook": "procedure",
    "runbooks": "procedure",
    "personal": "personal", "preference": "personal", "preferences": "personal",
    "wiki": "wiki", "knowledge": "wiki", "concept": "wiki", "concepts": "wiki",
}
SOURCE_EXTS = (".md", ".markdown", ".txt")
# The kind of a unit that is one line of a note (a meeting's decision, a review's "as the guide
# says"), given besides the note's own units: it may only update a node of another note. One
# that changed nothing (no such node) did nothing: it is no action of the run (the run report,
# its counts and `status` leave it out; the audit trail keeps its receipt).
LINE_KIND = "echo"


# The kind of a unit that is worth a node only once another note reports on the same (a
# workstream's status line, said alone in its run): the pipeline keeps it in the checkpoint,
# never integrates it, and gives it back to the extraction of later runs (`held` in the task,
# for an engine that asks for it), where a note reporting on the same makes it part of a unit.
HELD_KIND = "held"


def quiet(kind: str, ok: bool, changed: bool) -> bool:
    """A line's unit (LINE_KIND) that was integrated and changed nothing."""
    return kind == LINE_KIND and ok and not changed


@dataclass(frozen=True)
class Revision:
    """This unit restates a unit its note gave before, which went into `target`: the node to
    update, never a new one (SPEC §9.3). `changed`: a fact changed (a number, date, name or
    negation) and the update is a CORRECT; else only the wording did. `old_statement` and
    `new_statement` are the sentences that differ; `stale` the values the note no longer says
    (the node's name and description must not keep stating them)."""

    target: str
    old_unit: str
    old_statement: str
    new_statement: str
    changed: bool
    stale: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {"target": self.target, "old_unit": self.old_unit,
                "old_statement": self.old_statement, "new_statement": self.new_statement,
                "changed": self.changed, "stale": list(self.stale)}

    @classmethod
    def from_dict(cls, data: Any) -> Revision | None:
        if not isinstance(data, Mapping) or not isinstance(data.get("target"), str):
            return None
        return cls(target=str(data["target"]), old_unit=str(data.get("old_unit") or ""),
                   old_statement=str(data.get("old_statement") or ""),
                   new_statement=str(data.get("new_statement") or ""),
                   changed=bool(data.get("changed")),
                   stale=tuple(str(v) for v in data.get("stale") or ()))


@dataclass(frozen=True)
class LinkedNote:
    """A raw note linked with one of the unit's notes: `direction` "out" (the unit's note links
    it) or "in" (it links the unit's note); `context` the linking line, under its heading."""

    path: str
    direction: str = "out"
    context: str = ""

    def as_dict(self) -> dict[str, str]:
        return {"path": self.path, "direction": self.direction, "context": self.context}

    def as_row(self) -> list[str]:
        """`[direction, path, context]`: the prompt's form (a third of the tokens of the
        mapping's keys, repeated for each of up to a dozen notes, in every request)."""
        return [self.direction, self.path, self.context]


@dataclass(frozen=True)
class Unit:
    name: str
    bucket: str
    summary: str
    paths: tuple[str, ...]
    id: str = ""
    # Optional supporting facts from extraction (statements quoted from the notes), used by the
    # local engine to write the node; LLM extraction may leave it empty.
    points: tuple[str, ...] = field(default=())
    # Optional kind of statement (procedure, preference, decision, rule, lesson, definition...).
    kind: str = ""
    # Set by the pipeline when the unit restates what an edited note said before (not part of
    # the id: the same statement is the same unit whatever it revises).
    revises: Revision | None = None
    # Raw notes that the unit's notes link to or are linked from (SPEC §8: links between notes
    # are evidence that their nodes are related). Derived from the vault at integration time
    # (notelinks.py); not part of the id.
    linked_notes: tuple[LinkedNote, ...] = ()

    def __post_init__(self) -> None:
        if not self.id:
            object.__setattr__(self, "id", unit_id(self.name, self.bucket, self.paths,
                                                   self.summary, self.points))

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "name": self.name, "bucket": self.bucket,
                                "summary": self.summary, "paths": list(self.paths)}
        if self.points:
            data["points"] = list(self.points)
        if self.kind:
            data["kind"] = self.kind
        if self.revises is not None:
            data["revises"] = self.revises.as_dict()
        if self.linked_notes:
            data["linked_notes"] = [n.as_dict() for n in self.linked_notes]
        return data


def unit_id(name: str, bucket: str, paths: Iterable[str], summary: str = "",
            points: Sequence[str] = ()) -> str:
    """Stable id: the same unit extracted again (an unrelated edit of its note) keeps its id,
    so it is not integrated twice; a unit whose statement changed gets a new one. The points
    count (a runbook's `90 days` is in a step, not in its name), and a unit without points keeps
    the id it always had."""
    fields: list[object] = [name, bucket, sorted(paths), summary]
    if points:
        fields.append(list(points))
    digest = hashlib.sha256(json.dumps(fields, ensure_ascii=False).encode("utf-8")).hexdigest()
    return f"u-{digest[:12]}"


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def bucket_of(value: Any) -> str | None:
    """The bucket a model's word names, or None when it names none (ask back, never guess)."""
    word = " ".join(_text(value).lower().replace("digest/", "").strip("/ ").split())
    return BUCKET_SYNONYMS.get(word)


def _strip_link(raw: str) -> str:
    text = nfc(raw.strip().strip("`'\""))
    if text.startswith("[[") and text.endswith("]]"):
        text = text[2:-2]
    text = text.split("|", 1)[0]  # [[path|alias]]
    if "#" in text and not text.startswith("#"):
        text = text.split("#", 1)[0]  # [[path#heading]]
    return text.strip()


def match_source(raw: str, sources: Sequence[str]) -> tuple[str | None, str]:
    """The one path of `sources` that `raw` names, and '' ; or None and why not.

    Unambiguous readings only: `./x`, a leading `/`, `[[x]]`, a missing extension, and a path
    that is a whole-segment suffix of exactly one source (`2026-06-20/x.md` for
    `daily/2026-06-20/x.md`)."""
    text = _strip_link(raw).lstrip("/")
    try:
        rel = normalize_relpath(text)
    except SandboxError as exc:
        return None, str(exc)
    if rel in sources:
        return rel, ""
    wanted = [rel] + [rel + ext for ext in SOURCE_EXTS if not rel.lower().endswith(SOURCE_EXTS)]
    for form in wanted:
        if form in sources:
            return form, ""
    hits = sorted({s for s in sources for form in wanted if s.endswith("/" + form)})
    if len(hits) == 1:
        return hits[0], ""
    if hits:
        return None, f"{raw!r} could be any of {', '.join(hits[:4])}"
    return None, f"{raw!r} names none of the notes"


class ParsedUnit(NamedTuple):
    """A unit read from a model or a file: the unit, or the problems that make it unusable
    (each one line, naming the unit, to send back or to report)."""

    unit: Unit | None
    problems: tuple[str, ...] = ()


def parse_unit(data: Any, *, sources: Sequence[str] | None = None,
               source_prefixes: Sequence[str] = ()) -> ParsedUnit:
    """One unit from a mapping.

    `sources` (the notes of an extraction batch) are the only paths a unit may cite; each path
    is matched to one of them (`match_source`). Without `sources` (a units file), paths are only
    made canonical (`./`, a leading `/`, `[[...]]`), and must start with `source_prefixes`.
    """
    if not isinstance(data, Mapping):
        return ParsedUnit(None, (f"a unit is a {type(data).__name__}, not a mapping",))
    name, summary = _text(data.get("name")), _text(data.get("summary"))
    label = repr(name) if name else "(unnamed)"
    problems: list[str] = []
    if not name:
        problems.append(f"unit {label} has no name")
    if not summary:
        problems.append(f"unit {label} has no summary")
    raw_bucket = data.get("bucket")
    bucket = bucket_of(raw_bucket)
    if bucket is None:
        shown = repr(raw_bucket) if _text(raw_bucket) else "no bucket"
        problems.append(f"unit {label}: {shown} is not a bucket; use procedure, personal or wiki")
    raw_paths = data.get("paths")
    if isinstance(raw_paths, str):
        raw_paths = [raw_paths]
    paths: list[str] = []
    if not isinstance(raw_paths, list) or not raw_paths:
        problems.append(f"unit {label} has no paths: list the notes it comes from")
        raw_paths = []
    for raw in raw_paths:
        if not isinstance(raw, str) or not raw.strip():
            problems.append(f"unit {label}: path {raw!r} is not a path")
            continue
        if sources is not None:
            rel, why = match_source(raw, sources)
            if rel is None:
                problems.append(f"unit {label}: path {why}; cite only the notes listed in the "
                                "task, exactly as written")
                continue
        else:
            try:
                rel = normalize_relpath(_strip_link(raw).lstrip("/"))
            except SandboxError as exc:
                problems.append(f"unit {label}: path {raw!r}: {exc}")
                continue
            if source_prefixes and not rel.startswith(tuple(source_prefixes)):
                problems.append(f"unit {label}: {rel} is not a "
                                f"{' or '.join(p.rstrip('/') + '/' for p in source_prefixes)} "
                                "note; a unit cites raw notes only")
                continue
        if rel not in paths:
            paths.append(rel)
    if problems:
        return ParsedUnit(None, tuple(problems))
    assert bucket is not None
    points_raw = data.get("points") or ()
    points = tuple(p.strip() for p in points_raw if isinstance(p, str) and p.strip()) \
        if isinstance(points_raw, (list, tuple)) else ()
    uid = _text(data.get("id"))
    kind = _text(data.get("kind")).lower()
    return ParsedUnit(Unit(name=name, bucket=bucket, summary=summary, paths=tuple(paths), id=uid,
                           points=points, kind=kind,
                           revises=Revision.from_dict(data.get("revises")),
                           linked_notes=_linked_notes(data.get("linked_notes"), paths)))


def _linked_notes(raw: Any, own: Sequence[str]) -> tuple[LinkedNote, ...]:
    """Optional evidence: `{path, direction, context}` mappings, `[direction, path, context]`
    triples (the prompt's form, `LinkedNote.as_row`) or bare paths, naming workspace paths
    other than the unit's own; anything else is dropped (it only ever adds links, and the
    pipeline derives it again from the vault)."""
    if not isinstance(raw, (list, tuple)):
        return ()
    out: dict[str, LinkedNote] = {}
    for item in raw:
        if isinstance(item, (list, tuple)) and len(item) == 3:
            item = {"direction": item[0], "path": item[1], "context": item[2]}
        entry = item if isinstance(item, Mapping) else {"path": item}
        path, context = entry.get("path"), entry.get("context")
        if not isinstance(path, str) or not path.strip():
            continue
        try:
            rel = normalize_relpath(_strip_link(path).lstrip("/"))
        except SandboxError:
            continue
        direction = "in" if entry.get("direction") == "in" else "out"
        if rel not in own and rel not in out:
            out[rel] = LinkedNote(rel, direction,
                                  context[:600] if isinstance(context, str) else "")
    return tuple(out.values())


def read_units(arg: str, stdin: BinaryIO | None = None) -> list[Unit]:
    """The units of `remelink integrate UNITS`: a file (a regular file of at most
    MAX_INPUT_BYTES: never a FIFO or a device, whose read could block or never end) or `-`,
    standard input (read up to the same limit). UsageError (exit 2) for anything unreadable."""
    from remelink.errors import RemelinkError
    from remelink.vault.boundary import MAX_INPUT_BYTES, read_given

    if arg == "-":
        import sys

        stream = stdin if stdin is not None else sys.stdin.buffer
        data = stream.read(MAX_INPUT_BYTES + 1)
        source = "stdin"
        if len(data) > MAX_INPUT_BYTES:
            raise UsageError(f"more than {MAX_INPUT_BYTES >> 20} MiB of units; not read",
                             path=source, hint="split the units into several files")
    else:
        source = arg
        try:
            data = read_given(arg, what="units file")
        except OSError as exc:
            raise UsageError(f"cannot read units file: {exc.strerror or exc}",
                             path=arg) from None
        except RemelinkError as exc:
            raise UsageError(str(exc.args[0]), path=arg, hint=exc.hint) from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UsageError(f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})",
                         path=source, hint="save the units file as UTF-8") from None
    return parse_units_document(text, source=source)


def parse_units_document(text: str, *, source: str = "units",
                         source_prefixes: Sequence[str] = ()) -> list[Unit]:
    """Units from a JSON or YAML document: a list, or a mapping with a `units` list. Every unit
    that is unusable (an unknown bucket, no paths...) is named in one UsageError: the file is
    fixed and run again, nothing is integrated from a half-understood file."""
    import yaml

    from remelink.decoding import yaml_load

    try:
        data = yaml_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or (str(exc).splitlines() or ["parse error"])[0]
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise UsageError(f"cannot parse units: {problem}{where}", path=source,
                         hint="give a JSON or YAML list of {name, bucket, summary, "
                              "paths}") from None
    if isinstance(data, Mapping) and "units" in data:
        data = data["units"]
    if isinstance(data, Mapping):
        data = [data]
    if not isinstance(data, list):
        raise UsageError("units must be a list of {name, bucket, summary, paths}", path=source)
    units: list[Unit] = []
    problems: list[str] = []
    for i, item in enumerate(data, 1):
        parsed = parse_unit(item, source_prefixes=source_prefixes)
        if parsed.unit is None:
            problems += [f"unit #{i}: {p}" for p in parsed.problems]
        else:
            units.append(parsed.unit)
    if problems:
        raise UsageError("; ".join(problems), path=source,
                         hint="buckets: procedure, personal, wiki (also accepted: "
                              "procedures, howto, preference(s), knowledge, concept); nothing "
                              "was integrated")
    return units
