"""The receipt a unit ends with (SPEC §7.1 step 5): `{action, target_path, note,
classification}`, checked against what the unit actually did (one target; CREATE only of a new
node, an update only of an existing one), and the candidates' classification for the audit: the
model's own labels where it gave them, inferred for the rest.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from remelink.errors import SandboxError
from remelink.vault import links as wl
from remelink.vault.notes import Note
from remelink.workspace import UnitWorkspace

ACTIONS = ("CREATE", "CORROBORATE", "REFINE", "CORRECT")


@dataclass(frozen=True)
class Receipt:
    action: str
    target_path: str
    note: str


def check_receipt(ws: UnitWorkspace, data: dict[str, Any]) -> tuple[Receipt | None, list[str]]:
    action = str(data.get("action", "")).strip().upper()
    if action not in ACTIONS:
        return None, [f"action must be one of {', '.join(ACTIONS)}, got {data.get('action')!r}"]
    raw_target = data.get("target_path")
    if not isinstance(raw_target, str) or not raw_target.strip():
        return None, ["target_path is missing"]
    try:
        target = ws.tool_path(raw_target.strip().strip("[]"))
    except SandboxError as exc:
        return None, [f"target_path: {exc}"]
    note = str(data.get("note") or "").strip()
    if ws.target is not None and target != ws.target:
        return None, [f"target_path is {target}, but this unit changed {ws.target}; the receipt "
                      "names the node you wrote"]
    try:
        ws.writable(target)  # a digest node (a receipt may not name a raw note or a non-.md)
    except SandboxError as exc:
        return None, [f"target_path: {exc}"]
    if ws.target is None:
        if action == "CREATE":
            return None, ["the receipt says CREATE but nothing was written; write the node first"]
        if ws.current(target) is None:
            return None, [f"{target} does not exist; an update targets an existing node"]
        return Receipt(action, target, note), []
    if action == "CREATE" and ws.existed:
        return None, [f"{target} existed before this unit, so the action is an update "
                      "(CORROBORATE, REFINE or CORRECT), not CREATE"]
    if action != "CREATE" and not ws.existed:
        return None, [f"{target} is new, so the action is CREATE, not {action}"]
    return Receipt(action, target, note), []


_LABELS = {"same": "same_abstraction", "same_abstraction": "same_abstraction",
           "related": "related", "unrelated": "unrelated"}


def model_labels(ws: UnitWorkspace, data: dict[str, Any]) -> dict[str, str]:
    """The receipt's own classification: `{path: same|related|unrelated}` (or the reverse,
    `{label: [paths]}`), paths normalised as tool paths; anything else is ignored (a wrong
    label costs no repair turn: the audit then infers that candidate's label)."""
    given = data.get("classification")
    pairs: list[tuple[Any, Any]] = []
    if isinstance(given, dict):
        for key, value in given.items():
            if isinstance(value, list) and str(key).lower() in _LABELS:
                pairs += [(path, key) for path in value]
            else:
                pairs.append((key, value))
    labels: dict[str, str] = {}
    for path, label in pairs:
        name = _LABELS.get(str(label).strip().lower())
        if name is None or not isinstance(path, str) or not path.strip():
            continue
        try:
            labels[ws.tool_path(path.strip().strip("[]"))] = name
        except SandboxError:
            continue
    return labels


def classify(ws: UnitWorkspace, final: Note | None, receipt: Receipt | None,
                    data: dict[str, Any]) -> tuple[tuple[tuple[str, float], ...],
                                                   tuple[tuple[str, str], ...], tuple[str, ...],
                                                   tuple[str, ...]]:
    """(candidates with their best score, label of each, related nodes linked, the paths the
    model labelled itself). A candidate the model did not label is inferred: the update
    target is the same abstraction, a linked node is related, the rest unrelated."""
    best: dict[str, float] = {}
    for _, hits in ws.searches:
        for hit in hits:
            best[hit.path] = max(best.get(hit.path, float("-inf")), float(hit.score))
    candidates = tuple(sorted(best.items(), key=lambda kv: -kv[1]))
    digest_prefix = ws.digest + "/"
    linked = set()
    if final is not None:
        linked = {lk.target for lk in wl.parse_links(final.body)
                  if lk.target.startswith(digest_prefix)}
    given = model_labels(ws, data)
    target = receipt.target_path if receipt is not None else None
    classes = []
    for path, _ in candidates:
        label = given.get(path)
        if label is None:
            if path == target and receipt is not None and receipt.action != "CREATE":
                label = "same_abstraction"
            elif path in linked:
                label = "related"
            else:
                label = "unrelated"
        classes.append((path, label))
    related = tuple(sorted(p for p in linked if p != target))
    labelled = tuple(p for p, _ in candidates if p in given)
    return candidates, tuple(classes), related, labelled
