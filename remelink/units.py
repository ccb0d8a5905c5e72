"""Memory units: one abstraction worth remembering, `{name, bucket, summary, paths}` (SPEC §7).

Parsed once at the boundary (a units file for `remelink integrate`, an extraction answer, the
checkpoint) into frozen values; an unknown bucket becomes `wiki` (SPEC §8).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from remelink.errors import SandboxError, UsageError
from remelink.vault.paths import BUCKETS, normalize_relpath


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

    def __post_init__(self) -> None:
        if not self.id:
            object.__setattr__(self, "id",
                               unit_id(self.name, self.bucket, self.paths, self.summary))

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "name": self.name, "bucket": self.bucket,
                                "summary": self.summary, "paths": list(self.paths)}
        if self.points:
            data["points"] = list(self.points)
        if self.kind:
            data["kind"] = self.kind
        return data


def unit_id(name: str, bucket: str, paths: Iterable[str], summary: str = "") -> str:
    """Stable id: the same unit extracted again (an unrelated edit of its note) keeps its id,
    so it is not integrated twice; a unit whose statement changed gets a new one."""
    digest = hashlib.sha256(json.dumps([name, bucket, sorted(paths), summary], ensure_ascii=False)
                            .encode("utf-8")).hexdigest()
    return f"u-{digest[:12]}"


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def parse_unit(data: Any, *, source_prefixes: Sequence[str] | None = None,
               allowed_paths: set[str] | None = None) -> tuple[Unit | None, list[str]]:
    """One unit from a mapping, with the warnings it raised; None when it is unusable.

    `allowed_paths` (the changed notes of an extraction batch) restricts `paths`; unknown
    paths are dropped with a warning, and a unit left without paths is dropped.
    """
    warnings: list[str] = []
    if not isinstance(data, Mapping):
        return None, [f"unit is a {type(data).__name__}, not a mapping"]
    name, summary = _text(data.get("name")), _text(data.get("summary"))
    if not name or not summary:
        return None, [f"unit {name or '(unnamed)'!r} has no {'name' if not name else 'summary'}"]
    bucket = _text(data.get("bucket")).lower()
    if bucket not in BUCKETS:
        warnings.append(f"unit {name!r}: unknown bucket {bucket or '(none)'!r}, using wiki")
        bucket = "wiki"
    raw_paths = data.get("paths")
    if isinstance(raw_paths, str):
        raw_paths = [raw_paths]
    if not isinstance(raw_paths, list):
        return None, [f"unit {name!r} has no paths list"]
    paths: list[str] = []
    for raw in raw_paths:
        if not isinstance(raw, str):
            continue
        try:
            rel = normalize_relpath(raw.strip().strip("[]"))
        except SandboxError as exc:
            warnings.append(f"unit {name!r}: path dropped ({exc})")
            continue
        if source_prefixes and not rel.startswith(tuple(source_prefixes)):
            warnings.append(f"unit {name!r}: {rel} is not a daily/resource note; dropped")
            continue
        if allowed_paths is not None and rel not in allowed_paths:
            warnings.append(f"unit {name!r}: {rel} is not one of the input notes; dropped")
            continue
        if rel not in paths:
            paths.append(rel)
    if not paths:
        return None, [*warnings, f"unit {name!r} has no usable paths"]
    points_raw = data.get("points") or ()
    points = tuple(p.strip() for p in points_raw if isinstance(p, str) and p.strip()) \
        if isinstance(points_raw, (list, tuple)) else ()
    uid = _text(data.get("id"))
    kind = _text(data.get("kind")).lower()
    return Unit(name=name, bucket=bucket, summary=summary, paths=tuple(paths), id=uid,
                points=points, kind=kind), warnings


def parse_units_document(text: str, *, source: str = "units") -> list[Unit]:
    """Units from a JSON or YAML document: a list, or a mapping with a `units` list."""
    import yaml

    try:
        data = yaml.safe_load(text)
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
    for i, item in enumerate(data, 1):
        unit, warnings = parse_unit(item)
        if unit is None:
            raise UsageError(f"unit #{i}: {'; '.join(warnings)}", path=source)
        units.append(unit)
    return units
