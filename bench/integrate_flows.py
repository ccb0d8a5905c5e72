"""One code version's side of bench_integrate_cost.py: integrate units with a model that plays
the shortest conversation this version of remelink allows, and count its prompt tokens.

Run as a child process, so the parent can run it against an export of an older commit
(`--code DIR` goes first on sys.path) and against the working tree, on copies of the same
vault, with the same units:

    python bench/integrate_flows.py --code DIR --vault VAULT --units UNITS.json --out OUT.json

`FlowModel` reads the conversation like a model: with no candidates in the first message it
calls node_search first (the old prompt asked for recall); to update a node whose body it has
not seen it reads it; then it writes (CREATE) or edits (an update), and answers with the
receipt when the tool says the node is staged and clean. In the `repair` flow its write or edit
carries one mistake (a bare link line in ## Sources): it fixes it with one edit as soon as it
is told, by the tool's answer (new code) or by the repair message after its receipt (old code).
Targets are chosen the same way under both versions (the bench's own recall query), so the two
conversations do the same work.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _setup_path(code: str | None) -> None:
    sys.path[:0] = [p for p in (code, str(ROOT)) if p]
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")


class FlowModel:
    """A ChatModel playing one unit's conversation (see the module docstring)."""

    name = "bench:flow"

    def __init__(self, plan: dict[str, Any], repair: bool) -> None:
        self.plan = plan
        self.repair = repair
        self.calls: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]] = []
        self.fixed = False
        self.wrote = False

    def complete(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]
                 ) -> Any:
        from remelink.models.base import AssistantTurn, ToolCall

        self.calls.append(([dict(m) for m in messages], list(tools)))
        plan = self.plan
        first = str(messages[1]["content"])
        said = [str(m.get("content") or "") for m in messages[2:]
                if m["role"] in ("tool", "user")]
        last = said[-1] if said else ""

        def call(name: str, args: dict[str, Any]) -> Any:
            n = len(self.calls)
            return AssistantTurn(tool_calls=(ToolCall(f"c{n}", name, json.dumps(
                args, ensure_ascii=False)),))

        recall_given = "Candidates (node_search" in first or "候选（node_search" in first
        if not recall_given and not any(m.get("tool_calls") for m in messages
                                        if m["role"] == "assistant"):
            return call("node_search", {"query": plan["query"], "limit": 25})
        if last.startswith("Error:"):
            raise RuntimeError(f"bench conversation refused: {last[:300]}")
        if self.wrote:
            bare = plan["bare"]
            told = "bare-source-link" in last
            if told and not self.fixed:
                self.fixed = True
                return call("edit", {"path": plan["target"], "old": bare,
                                     "new": plan["sentence"]})
            receipt = {"action": plan["action"], "target_path": plan["target"],
                       "note": "bench"}
            return AssistantTurn(text=json.dumps(receipt, ensure_ascii=False))
        tail = None
        if plan["action"] != "CREATE":
            body = _body_seen(plan["target"], first, said)
            if body is None:
                return call("read", {"path": plan["target"]})
            # The node's last line as the model saw it (an earlier unit may have added to it).
            tail = [ln for ln in body.split("\n") if ln.strip()][-1]
        self.wrote = True
        if plan["action"] == "CREATE":
            content = plan["content"]
            if self.repair:
                content = content.replace(plan["sentence"], plan["bare"])
            return call("write", {"path": plan["target"], "name": plan["name"],
                                  "description": plan["description"], "content": content,
                                  "metadata": {"kind": plan["kind"]}})
        assert tail is not None
        new = f"{tail} {plan['sentence']}"
        if self.repair:
            new = f"{tail}\n\n{plan['bare']}"
        return call("edit", {"path": plan["target"], "old": tail, "new": new})


_CANDIDATE_RE = re.compile(r"^\d+\. (\S+)\n(?:   [^\n]*\n)*?   body:\n(~{4,})markdown\n(.*?)\n\2$",
                           re.M | re.S)


def _body_seen(target: str, first: str, said: list[str]) -> str | None:
    """The target's body if the conversation showed it: a candidate of the first message, or
    the answer of a read (the note with its frontmatter)."""
    for m in _CANDIDATE_RE.finditer(first):
        if m.group(1) == target:
            return m.group(3)
    for text in said:
        if text.startswith("---\n") and "\n---\n" in text[4:]:
            return re.sub(r"\n\[lines \d+-\d+ of \d+\]$", "", text.split("\n---\n", 1)[1])
    return None


def count(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
          model: str = "gpt-4o-mini") -> int:
    import litellm

    return int(litellm.token_counter(model=model, messages=messages, tools=tools or None))


def run(vault: Path, units: list[dict[str, Any]], plans: list[dict[str, Any]],
        repair: bool) -> list[dict[str, Any]]:
    from remelink.config import load_settings
    from remelink.index import NodeIndex
    from remelink.integrate import IntegrationContext, integrate_unit
    from remelink.units import parse_unit
    from remelink.vault.resolve import VaultFiles

    settings = load_settings(vault, env={})
    index = NodeIndex(vault, settings)
    index.refresh()
    out = []
    for raw, plan in zip(units, plans, strict=True):
        unit, _ = parse_unit(raw)
        assert unit is not None
        model = FlowModel(plan, repair)
        ctx = IntegrationContext(vault=vault, settings=settings, model=model,  # type: ignore[arg-type]
                                 index=index, files=VaultFiles.scan(vault), today="2026-06-25")
        result = integrate_unit(ctx, unit)
        row: dict[str, Any] = {"unit": unit.name, "ok": result.ok, "error": result.error,
                               "action": result.action, "steps": result.steps,
                               "repairs": result.repairs,
                               "loop_ms": (result.seconds - result.model_seconds) * 1000}
        row["tokens"] = sum(count(m, t) for m, t in model.calls)
        if not repair:
            # (c) the same conversation with whole source files instead of bounded excerpts.
            from remelink import evidence as ev
            from remelink.vault.notes import read_note

            bounded = ev.build(vault, unit)
            full = "\n\n".join(f"### {rel}\n{read_note(vault, rel).text}" for rel in unit.paths)
            swapped = []
            for m, t in model.calls:
                m = [dict(x) for x in m]
                m[1]["content"] = str(m[1]["content"]).replace(bounded, full)
                swapped.append((m, t))
            row["tokens_full"] = sum(count(m, t) for m, t in swapped)
            row["first_full"] = count(*swapped[0])
            row["source_bytes"] = sum((vault / p).stat().st_size for p in unit.paths)
        row["first"] = count(*model.calls[0])
        row["first_cl100k"] = count(*model.calls[0], model="gpt-3.5-turbo")
        row["tools"] = count([{"role": "user", "content": ""}], model.calls[0][1]) - \
            count([{"role": "user", "content": ""}], None)
        row["system"] = count(model.calls[0][0][:1], None)
        out.append(row)
    index.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--code", help="a directory holding the remelink package to measure")
    parser.add_argument("--vault", required=True)
    parser.add_argument("--units", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    _setup_path(args.code)
    import remelink

    data = json.loads(Path(args.units).read_text(encoding="utf-8"))
    result: dict[str, Any] = {"code": str(Path(remelink.__file__).resolve().parent.parent)}
    for flow in ("clean", "repair"):
        with tempfile.TemporaryDirectory(prefix="remelink-bench-flow-") as tmp:
            vault = Path(tmp) / "vault"
            shutil.copytree(args.vault, vault)
            started = time.perf_counter()
            result[flow] = run(vault, data["units"], data["plans"], flow == "repair")
            result[f"{flow}_seconds"] = time.perf_counter() - started
    Path(args.out).write_text(json.dumps(result, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
