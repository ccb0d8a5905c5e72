"""What one integrated unit costs: prompt tokens, the loop's own overhead, and what the bounded
evidence excerpts save over sending whole source files.

A generated vault (bench/genvault.py, ~1,000 digest nodes) gets 20 units: 12 from its own
daily/resource notes (short, English and Chinese) and 8 from long real documents (SilverBullet's
MIT-licensed docs from ../shared/data, copied into resource/). Each unit runs through the real
`integrate_unit` with the real node index, driven by a strict scripted model whose script is
generated per unit to play a realistic LLM conversation: node_search, two reads, an edit of a
clean same-topic node or the write of a new node that links the top hits, then a receipt.

Reported: (a) prompt tokens per unit, counted from the recorded messages and tool schemas with
litellm.token_counter(model="gpt-4o-mini") (offline: the tokenizer files ship with litellm; the
process records every socket connect and name lookup and reports them); (b) the loop's own time
per unit, wall time minus the time inside model.complete (tools, index, guards, commit); (c)
the same conversations with each unit's full source files as evidence instead of the bounded
excerpts: tokens per unit both ways and the ratio. Plus the hostile-call suite's count (run).

    python bench/bench_integrate_cost.py [--notes 2200] [--seed 7]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")

from bench._report import SHARED_DATA, median, pct, python, write_section  # noqa: E402
from bench.genvault import generate  # noqa: E402
from remelink import evidence as ev  # noqa: E402
from remelink import prompts  # noqa: E402
from remelink.config import Settings, load_settings  # noqa: E402
from remelink.index import NodeIndex  # noqa: E402
from remelink.integrate import IntegrationContext, UnitResult, integrate_unit  # noqa: E402
from remelink.lint import check_note  # noqa: E402
from remelink.models.scripted import ScriptedModel  # noqa: E402
from remelink.units import Unit  # noqa: E402
from remelink.vault import frontmatter  # noqa: E402
from remelink.vault.notes import Note, read_note  # noqa: E402
from remelink.vault.paths import slugify  # noqa: E402
from remelink.vault.resolve import VaultFiles  # noqa: E402

TODAY = "2026-06-25"
SILVERBULLET = SHARED_DATA / "link-vaults" / "silverbullet-docs"
LONG_DOCS = ["Getting Started.md", "Space Lua.md", "Install/Configuration.md", "TLS.md",
             "Space Manager.md", "Space Lua/Integrated Query.md", "API/editor.md",
             "Plugs/Development/Reference.md"]
_SENTENCE_RE = re.compile(r"[^.!?。！？\n]{30,240}[.!?。！？]")
_NOISE_RE = re.compile(r"\[\[[^\]]*\]\]|`[^`]*`|[#>*_|\[\]()]|\^[\w-]+")


# -- the network watch (token counting must stay offline) --------------------------------------

NETWORK: list[str] = []


def watch_network() -> None:
    real_connect = socket.socket.connect
    real_getaddrinfo = socket.getaddrinfo

    def connect(self: socket.socket, address: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6):
            NETWORK.append(str(address[0]))
        return real_connect(self, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        NETWORK.append(str(host))
        return real_getaddrinfo(host, *args, **kwargs)

    socket.socket.connect = connect  # type: ignore[method-assign,assignment]
    socket.getaddrinfo = getaddrinfo


# -- the vault and its units ---------------------------------------------------------------------

def build_vault(root: Path, notes: int, seed: int) -> int:
    generate(root, notes=notes, seed=seed)
    (root / ".remelink").mkdir(exist_ok=True)
    target = root / "resource" / "silverbullet"
    for rel in LONG_DOCS:
        dest = target / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SILVERBULLET / rel, dest)
    return sum(1 for _ in (root / "digest").rglob("*.md"))


def title_of(note: Note, rel: str) -> str:
    try:
        meta = frontmatter.load(note)
    except Exception:
        meta = {}
    for line in note.body.splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return str(meta.get("name") or Path(rel).stem)


def sentences(note: Note, limit: int = 4) -> list[str]:
    text = _NOISE_RE.sub(" ", note.body)
    out = [" ".join(m.group(0).split()) for m in _SENTENCE_RE.finditer(text)]
    return [s for s in out if len(s.split()) > 4 or re.search(r"[\u4e00-\u9fff]{8}", s)][:limit]


def make_units(vault: Path, seed: int) -> list[Unit]:
    rng = random.Random(seed)
    raw = sorted(p.relative_to(vault).as_posix() for p in (vault / "daily").rglob("*.md")
                 if p.parent != vault / "daily")
    picked = rng.sample(raw, 16)
    units: list[Unit] = []
    buckets = ["procedure", "personal", "wiki"]
    i = 0
    while len(units) < 12:
        paths = picked[i:i + (2 if len(units) % 3 == 0 else 1)]
        i += len(paths)
        note = read_note(vault, paths[0])
        said = sentences(note, 2) or [title_of(note, paths[0])]
        units.append(Unit(name=title_of(note, paths[0])[:80], bucket=buckets[len(units) % 3],
                          summary=" ".join(said), paths=tuple(paths)))
    for rel in LONG_DOCS:
        path = f"resource/silverbullet/{rel}"
        note = read_note(vault, path)
        units.append(Unit(name=f"SilverBullet: {title_of(note, path)}"[:80], bucket="wiki",
                          summary=" ".join(sentences(note, 2)), paths=(path,)))
    return units


# -- the script generator: a realistic conversation per unit ------------------------------------

def _clean(files: VaultFiles, settings: Settings, rel: str) -> Note | None:
    """The node if it lints clean on its own (an update must pass validation afterwards)."""
    try:
        note = read_note(files.root, rel)
    except Exception:
        return None
    return note if not [p for p in check_note(files, settings, note) if p.level == "error"] \
        else None


def _unique_sources_line(note: Note) -> str | None:
    body = note.body
    idx = body.lower().find("## sources")
    if idx < 0:
        return None
    lines = [ln for ln in body[idx:].splitlines()[1:] if ln.strip()]
    if not lines or lines[-1].startswith("#"):
        return None
    last = lines[-1]
    return last if body.count(last) == 1 else None


def cite(unit: Unit, zh: bool) -> str:
    parts = []
    for rel in unit.paths:
        parts.append(f"{unit.name} 的依据记录在 [[{rel}]]。" if zh else
                     f"The evidence for {unit.name.lower()} is recorded in [[{rel}]].")
    return " ".join(parts)


def plan(vault: Path, index: NodeIndex, files: VaultFiles, settings: Settings, unit: Unit,
         n: int) -> list[dict[str, Any]]:
    zh = ev.detect_language(unit.name + unit.summary) == "zh"
    query = f"{unit.name} {unit.summary}"[:300]
    hits = index.search(query, limit=25, refresh=False)
    steps: list[dict[str, Any]] = [
        {"expect": unit.paths[0], "tool_calls": [
            {"name": "node_search", "arguments": {"query": query, "limit": 25}}]}]
    reads = [h.path for h in hits[:2]] or list(unit.paths[:1])
    while len(reads) < 2:
        reads.append(unit.paths[0])
    steps.append({"expect": hits[0].path if hits else "No digest node matches",
                  "tool_calls": [{"name": "read", "arguments": {"path": reads[0]}}]})
    steps.append({"tool_calls": [{"name": "read", "arguments": {"path": reads[1]}}]})
    sentence = cite(unit, zh)
    target = None
    if n % 2 == 1:  # every other unit updates a clean same-topic node, if recall found one
        for hit in hits[:5]:
            node = _clean(files, settings, hit.path)
            line = _unique_sources_line(node) if node is not None else None
            if line is not None:
                target = hit.path
                steps.append({"tool_calls": [{"name": "edit", "arguments": {
                    "path": hit.path, "old": line, "new": f"{line} {sentence}"}}]})
                action = "CORROBORATE"
                break
    if target is None:
        slug = slugify(unit.name)
        target = f"digest/{unit.bucket}/{slug}.md"
        k = 2
        while (vault / target).exists():
            target = f"digest/{unit.bucket}/{slug}-{k}.md"
            k += 1
        related = [h.path for h in hits[:2] if h.path != target]
        said = unit.summary
        if zh:
            links = "、".join(f"[[{p}]]" for p in related)
            body = (f"{said}\n\n这与 {links} 相关。\n\n## Sources\n\n{sentence}\n" if related
                    else f"{said}\n\n## Sources\n\n{sentence}\n")
        else:
            links = " and ".join(f"[[{p}]]" for p in related)
            body = (f"{said}\n\nIt is related to {links}, which cover adjacent ground.\n\n"
                    f"## Sources\n\n{sentence}\n" if related else
                    f"{said}\n\n## Sources\n\n{sentence}\n")
        steps.append({"tool_calls": [{"name": "write", "arguments": {
            "path": target, "name": unit.name, "description": said[:200] or unit.name,
            "content": body, "metadata": {"kind": {"procedure": "procedure",
                                                   "personal": "preference"}.get(unit.bucket,
                                                                                 "concept")}}}]})
        action = "CREATE"
    receipt = {"action": action, "target_path": target, "note": "bench"}
    steps.append({"expect": "Staged", "text": json.dumps(receipt, ensure_ascii=False)})
    return steps


# -- measuring -----------------------------------------------------------------------------------

@dataclass
class Measured:
    unit: Unit
    result: UnitResult
    calls: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]]
    tokens: int = 0            # prompt tokens over the whole conversation, bounded evidence
    tokens_full: int = 0       # the same conversation with whole source files as evidence
    first: int = 0             # prompt tokens of the first call (system + unit + evidence + tools)
    first_full: int = 0
    tools_only: int = 0
    source_bytes: int = 0
    evidence_chars: tuple[int, int] = (0, 0)
    notes: list[str] = field(default_factory=list)


def full_evidence(vault: Path, unit: Unit) -> str:
    return "\n\n".join(f"### {rel}\n{read_note(vault, rel).text}" for rel in unit.paths)


def count(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> int:
    import litellm

    specs: Any = tools or None
    return int(litellm.token_counter(model="gpt-4o-mini", messages=messages, tools=specs))


def measure(vault: Path, units: list[Unit]) -> tuple[list[Measured], float]:
    settings = load_settings(vault, env={})
    index = NodeIndex(vault, settings)
    started = time.perf_counter()
    index.refresh()
    index_seconds = time.perf_counter() - started
    files = VaultFiles.scan(vault)
    out = []
    for n, unit in enumerate(units):
        model = ScriptedModel(plan(vault, index, files, settings, unit, n),
                              name="scripted:bench")
        ctx = IntegrationContext(vault=vault, settings=settings, model=model, index=index,
                                 files=files, today=TODAY)
        result = integrate_unit(ctx, unit)
        if not result.ok:
            raise SystemExit(f"unit {unit.name!r} failed: {result.error}")
        model.assert_done()
        out.append(Measured(unit, result, model.calls))
    index.close()
    return out, index_seconds


def tokenize(vault: Path, rows: list[Measured]) -> None:
    for row in rows:
        bounded = ev.build(vault, row.unit)
        full = full_evidence(vault, row.unit)
        language = ev.language_of(row.unit, bounded)
        full_user = prompts.integrate_messages(row.unit, full, language=language,
                                               today=TODAY)[1]["content"]
        row.evidence_chars = (len(bounded), len(full))
        row.source_bytes = sum((vault / p).stat().st_size for p in row.unit.paths)
        for i, (messages, tools) in enumerate(row.calls):
            swapped = [dict(m) for m in messages]
            assert swapped[1]["role"] == "user"
            swapped[1]["content"] = full_user
            a, b = count(messages, tools), count(swapped, tools)
            row.tokens += a
            row.tokens_full += b
            if i == 0:
                row.first, row.first_full = a, b
                row.tools_only = count([{"role": "user", "content": ""}], tools) - \
                    count([{"role": "user", "content": ""}], None)


def hostile_count() -> tuple[int, str]:
    proc = subprocess.run([python(), "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "tests/test_hostile_calls.py"], cwd=ROOT, capture_output=True,
                          text=True, check=False)
    last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-200:]
    sys.path.insert(0, str(ROOT / "tests"))
    from test_hostile_calls import CASES

    return len(CASES), last


# -- report --------------------------------------------------------------------------------------

def _row(label: str, rows: list[Measured]) -> str:
    tok = [r.tokens for r in rows]
    full = [r.tokens_full for r in rows]
    first = [r.first for r in rows]
    first_full = [r.first_full for r in rows]
    ratio = sum(full) / sum(tok)

    def med(xs: list[int]) -> str:
        return f"{median([float(x) for x in xs]):,.0f}"

    return (f"| {label} | {len(rows)} | {med([r.source_bytes for r in rows])} | "
            f"{med(first)} / {med(first_full)} | {med(tok)} | {med(full)} | {ratio:.2f}x |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=2200)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    watch_network()
    with tempfile.TemporaryDirectory(prefix="remelink-bench-integrate-") as tmp:
        vault = Path(tmp) / "vault"
        nodes = build_vault(vault, args.notes, args.seed)
        units = make_units(vault, args.seed)
        rows, index_seconds = measure(vault, units)
        tokenize(vault, rows)
    count_cases, hostile = hostile_count()

    overhead = [(r.result.seconds - r.result.model_seconds) * 1000 for r in rows]
    model_ms = [r.result.model_seconds * 1000 for r in rows]
    steps = [float(r.result.steps) for r in rows]
    actions: dict[str, int] = {}
    for r in rows:
        actions[r.result.action or "?"] = actions.get(r.result.action or "?", 0) + 1
    short = [r for r in rows if not r.unit.paths[0].startswith("resource/silverbullet/")]
    long = [r for r in rows if r.unit.paths[0].startswith("resource/silverbullet/")]
    tok_all = [float(r.tokens) for r in rows]
    offline = "none" if not NETWORK else ", ".join(sorted(set(NETWORK)))
    md = f"""## Integrate: cost per unit

{len(rows)} units integrated with the scripted model (a generated conversation per unit:
node_search, two reads, an edit or a write, a receipt) through the real `integrate_unit` and the
real node index, on a generated vault of {nodes:,} digest nodes (`genvault --notes {args.notes}
--seed {args.seed}`) plus 8 long SilverBullet docs in `resource/`. Actions:
{", ".join(f"{k} {v}" for k, v in sorted(actions.items()))}; {median(steps):.0f} model turns per
unit. Initial index build: {index_seconds:.1f} s.

**(a) Prompt tokens per unit** (litellm.token_counter, model gpt-4o-mini, messages + tool
schemas of every call): median {median(tok_all):,.0f}, p90 {pct(tok_all, 90):,.0f}, max
{max(tok_all):,.0f}. The first call alone: median {median([float(r.first) for r in rows]):,.0f},
of which the six tool schemas are {rows[0].tools_only:,}. Network during counting: {offline}.

**(b) Loop overhead per unit** (wall time minus time inside model.complete: tools, index
searches, guards and lint checks, atomic commit, index update): median {median(overhead):.0f} ms,
p90 {pct(overhead, 90):.0f} ms, max {max(overhead):.0f} ms (scripted model time: median
{median(model_ms):.2f} ms).

**(c) Bounded excerpts vs whole source files as evidence**, same conversations:

| units | n | source bytes (median) | first call tokens, excerpts / whole \
| conversation tokens, excerpts | conversation tokens, whole | whole / excerpts |
|---|---|---|---|---|---|---|
{_row("short raw notes (genvault)", short)}
{_row("long documents (SilverBullet)", long)}
{_row("all", rows)}

The user message (unit + evidence) is resent on every model turn, so a saving on the first call
is multiplied by the number of turns.

**Hostile tool calls:** {count_cases} parametrised cases in `tests/test_hostile_calls.py`, each
an `Error:` with the tree (vault and an outside folder) byte-for-byte unchanged, plus scenarios
(prompt injection in the evidence, unit paths that leave the vault or cannot validate); last
run: `{hostile}`.
"""
    print(md)
    write_section("integrate", md, "python bench/bench_integrate_cost.py")
    return 0


if __name__ == "__main__":
    sys.exit(main())
