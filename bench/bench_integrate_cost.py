"""What one integrated unit costs, before and after a change: prompt tokens of a clean unit and
of a unit with one repair, the first request's size, turns per unit; plus the loop's own
overhead and what bounded evidence excerpts save over whole source files.

Two sets of units: the demo vault's (extracted by the local engine from fixtures/demo-vault)
and 20 units against a generated vault of ~1,000 digest nodes (bench/genvault.py; 12 units
from its own short notes, English and Chinese, and 8 from long SilverBullet docs copied into
resource/). Every other unit updates a clean same-topic node when the bench's recall finds one,
the others CREATE. Each set runs through the real `integrate_unit` and node index twice per
code version: a clean conversation, and one whose write or edit carries a bare Sources link
that must be repaired (bench/integrate_flows.py plays the conversations; each version gets the
shortest one it allows). "Before" is an export of an older commit (`--before REV`, default the
merge base with main), run in a child process on a copy of the same vault with the same units.

Tokens: litellm.token_counter(model="gpt-4o-mini") over each request's messages and tool
schemas (tiktoken o200k_base; the tool schemas as litellm renders them for counting), offline
(the tokenizer ships with litellm; every socket connect and name lookup is recorded); the first
request is also counted with cl100k_base (model="gpt-3.5-turbo"), the issue's unit.

    python bench/bench_integrate_cost.py [--notes 2200] [--seed 7] [--before REV]
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
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")

from bench._report import SHARED_DATA, median, pct, python, write_section  # noqa: E402
from bench.genvault import generate  # noqa: E402
from remelink import evidence as ev  # noqa: E402
from remelink.config import Settings, load_settings  # noqa: E402
from remelink.index import NodeIndex  # noqa: E402
from remelink.lint import check_note  # noqa: E402
from remelink.units import Unit  # noqa: E402
from remelink.vault import frontmatter  # noqa: E402
from remelink.vault.notes import Note, read_note  # noqa: E402
from remelink.vault.paths import slugify  # noqa: E402
from remelink.vault.resolve import VaultFiles  # noqa: E402

TODAY = "2026-06-25"
DEMO = ROOT / "fixtures" / "demo-vault"
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


def demo_units(vault: Path) -> list[Unit]:
    """The units the local engine extracts from the demo vault (extraction only)."""
    from remelink.dream.run import DreamOptions, run_dream
    from remelink.dream.state import State
    from remelink.models.local import LocalModel

    settings = load_settings(vault, env={})
    from dataclasses import replace

    settings = replace(settings, auto_dream=replace(settings.auto_dream,
                                                    steps=("dream_extract_step",)))
    run_dream(vault, settings, LocalModel(settings), DreamOptions(today=TODAY))
    units = [rec.unit for rec in State.load(vault).units.values()]
    shutil.rmtree(vault / ".remelink")
    return units


def plan(vault: Path, index: NodeIndex, files: VaultFiles, settings: Settings, unit: Unit,
         n: int) -> dict[str, Any]:
    """What the unit's conversation does, the same under every code version: its recall query,
    its target and action, the text it writes or the line it edits after."""
    zh = ev.detect_language(unit.name + unit.summary) == "zh"
    query = f"{unit.name} {unit.summary}"[:300]
    hits = index.search(query, limit=25, refresh=False)
    sentence = cite(unit, zh)
    bare = f"- [[{unit.paths[0]}]]"
    base = {"query": query, "sentence": sentence, "bare": bare, "name": unit.name,
            "description": unit.summary[:200] or unit.name,
            "kind": {"procedure": "procedure", "personal": "preference"}.get(unit.bucket,
                                                                            "concept")}
    if n % 2 == 1:  # every other unit updates a clean same-topic node, if recall found one
        for hit in hits[:5]:
            node = _clean(files, settings, hit.path)
            line = _unique_sources_line(node) if node is not None else None
            if line is not None and f"[[{unit.paths[0]}" not in node.body:  # type: ignore
                return {**base, "target": hit.path, "action": "CORROBORATE"}
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
    return {**base, "target": target, "action": "CREATE", "content": body}


def plans_for(vault: Path, units: list[Unit]) -> list[dict[str, Any]]:
    settings = load_settings(vault, env={})
    index = NodeIndex(vault, settings)
    index.refresh()
    files = VaultFiles.scan(vault)
    try:
        return [plan(vault, index, files, settings, u, n) for n, u in enumerate(units)]
    finally:
        index.close()
        shutil.rmtree(vault / ".remelink" / "index", ignore_errors=True)


# -- the two code versions ------------------------------------------------------------------------

def export(rev: str, dest: Path) -> str:
    """The remelink package of commit `rev`, exported (not checked out) into `dest`."""
    sha = subprocess.run(["git", "rev-parse", "--short", rev], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout.strip()
    archive = subprocess.run(["git", "archive", rev, "remelink"], cwd=ROOT, check=True,
                             capture_output=True).stdout
    dest.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return sha


def measure(code: Path | None, vault: Path, units: list[Unit], plans: list[dict[str, Any]],
            work: Path, label: str) -> dict[str, Any]:
    spec = work / f"{label}-units.json"
    spec.write_text(json.dumps({"units": [u.as_dict() for u in units], "plans": plans},
                               ensure_ascii=False), encoding="utf-8")
    out = work / f"{label}-out.json"
    argv = [python(), str(ROOT / "bench" / "integrate_flows.py"), "--vault", str(vault),
            "--units", str(spec), "--out", str(out)]
    if code is not None:
        argv += ["--code", str(code)]
    subprocess.run(argv, check=True, cwd=ROOT)
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    for flow in ("clean", "repair"):
        bad = [r for r in result[flow] if not r["ok"]]
        if bad:
            raise SystemExit(f"{label} {flow}: unit {bad[0]['unit']!r} failed: {bad[0]['error']}")
    return result


def hostile_count() -> tuple[int, str]:
    proc = subprocess.run([python(), "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "tests/test_hostile_calls.py"], cwd=ROOT, capture_output=True,
                          text=True, check=False)
    last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-200:]
    sys.path.insert(0, str(ROOT / "tests"))
    from test_hostile_calls import CASES

    return len(CASES), last


# -- report --------------------------------------------------------------------------------------

def _med(rows: list[dict[str, Any]], key: str) -> float:
    return median([float(r[key]) for r in rows])


def _line(label: str, before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    def cell(key: str, flow: str = "clean", fmt: str = "{:,.0f}") -> str:
        b, a = _med(before[flow], key), _med(after[flow], key)
        return f"{fmt.format(b)} -> {fmt.format(a)}"

    return [f"| {label} | {len(after['clean'])} | {cell('tokens')} | {cell('steps')} | "
            f"{cell('tokens', 'repair')} | {cell('steps', 'repair')} | {cell('first')} | "
            f"{cell('first_cl100k')} |"]


# The last commit before issue 14 (prompt tokens per unit): "before" when this runs on main.
ISSUE_14_BASE = "8eadd0b"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=2200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--before", default=None,
                        help="the commit to compare with (default: the merge base with main; on "
                             f"main itself, {ISSUE_14_BASE}, the last commit before issue 14)")
    args = parser.parse_args(argv)
    watch_network()
    def git(*cmd: str) -> str:
        return subprocess.run(["git", *cmd], cwd=ROOT, check=True, capture_output=True,
                              text=True).stdout.strip()

    before_rev = args.before or git("merge-base", "HEAD", "main")
    if before_rev == git("rev-parse", "HEAD"):
        before_rev = ISSUE_14_BASE  # on main: compare with the code before the token work
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="remelink-bench-integrate-") as tmp:
        work = Path(tmp)
        sha = export(before_rev, work / "before")
        demo = work / "demo"
        shutil.copytree(DEMO, demo)
        d_units = demo_units(demo)
        d_plans = plans_for(demo, d_units)
        gen = work / "gen"
        nodes = build_vault(gen, args.notes, args.seed)
        g_units = make_units(gen, args.seed)
        g_plans = plans_for(gen, g_units)
        results = {}
        for label, vault, units, plans in (("demo", demo, d_units, d_plans),
                                           ("gen", gen, g_units, g_plans)):
            results[label] = (measure(work / "before", vault, units, plans, work,
                                      f"{label}-before"),
                              measure(None, vault, units, plans, work, f"{label}-after"))
    count_cases, hostile = hostile_count()
    offline = "none" if not NETWORK else ", ".join(sorted(set(NETWORK)))
    d_before, d_after = results["demo"]
    g_before, g_after = results["gen"]
    rows = g_after["clean"]
    short = [r for r, u in zip(rows, g_units, strict=True)
             if not u.paths[0].startswith("resource/silverbullet/")]
    long = [r for r, u in zip(rows, g_units, strict=True)
            if u.paths[0].startswith("resource/silverbullet/")]
    actions: dict[str, int] = {}
    for r in rows:
        actions[r["action"]] = actions.get(r["action"], 0) + 1
    every = d_after["clean"] + g_after["clean"]
    clean = [float(r["tokens"]) for r in every]
    two = [r for r in every if r["steps"] == 2]
    over = [r for r in every if r["tokens"] >= 5000]
    turns_max = max(r["steps"] for r in every)
    firsts = [float(r["first"]) for r in every]
    overhead = [r["loop_ms"] for r in rows]

    def ex(rs: list[dict[str, Any]]) -> str:
        ratio = sum(r["tokens_full"] for r in rs) / sum(r["tokens"] for r in rs)
        return (f"{_med(rs, 'source_bytes'):,.0f} | {_med(rs, 'first'):,.0f} / "
                f"{_med(rs, 'first_full'):,.0f} | {_med(rs, 'tokens'):,.0f} | "
                f"{_med(rs, 'tokens_full'):,.0f} | {ratio:.2f}x")

    md = "\n".join([
        "## Integrate: cost per unit", "",
        f"Before = commit `{sha}` (exported, run in a child process), after = this tree, on "
        "copies of the same vaults with the same units and targets. Medians per unit; prompt "
        "tokens summed over every request of the unit (litellm.token_counter, model "
        "gpt-4o-mini, o200k_base, messages + tool schemas); the first request also in "
        "cl100k_base. `repair` = the write or edit carries one bare Sources link, fixed by one "
        "edit. Each version plays the shortest conversation it allows (bench/integrate_flows.py):"
        " before, node_search, a read of an update's target, the write or edit, the receipt (a "
        "repair comes after the receipt); after, the recall is in the first message, so the "
        "write or edit comes first and the check in its answer names the problem at once.", "",
        "| units | n | clean: prompt tokens | clean: turns | one repair: prompt tokens | "
        "one repair: turns | first request | first request (cl100k) |",
        "|---|---|---|---|---|---|---|---|",
        *_line("demo vault (local extraction)", d_before, d_after),
        *_line(f"genvault, {nodes:,} nodes", g_before, g_after), "",
        f"Targets (after), over all {len(every)} clean units: prompt tokens median "
        f"{median(clean):,.0f}, p90 {pct(clean, 90):,.0f}, max {max(clean):,.0f}; at most "
        f"{turns_max} turns ({len(two)} units in two); {len(over)} at or over 5,000, "
        f"{sum(1 for r in over if r['steps'] == 3)} of them the units that read their target "
        f"first (its body was not among the first message's short bodies). First request: "
        f"median {median(firsts):,.0f}, p90 {pct(firsts, 90):,.0f}, max {max(firsts):,.0f}. "
        "Genvault actions: "
        f"{', '.join(f'{k} {v}' for k, v in sorted(actions.items()))}. The first request "
        f"(after) holds the system prompt ({_med(rows, 'system'):,.0f}) and the six tool schemas "
        f"({rows[0]['tools']:,}); the rest is the unit, the candidates and the evidence. Network "
        f"during counting: {offline}.", "",
        "**Loop overhead per unit** (after; wall time minus time inside model.complete: tools, "
        f"recall, index searches, guards and checks, commit): median "
        f"{median(overhead):.0f} ms, p90 {pct(overhead, 90):.0f} ms.", "",
        "**Bounded excerpts vs whole source files as evidence** (after, genvault, clean "
        "conversations):", "",
        "| units | n | source bytes | first request, excerpts / whole | conversation, excerpts "
        "| conversation, whole | whole / excerpts |",
        "|---|---|---|---|---|---|---|",
        f"| short raw notes (genvault) | {len(short)} | {ex(short)} |",
        f"| long documents (SilverBullet) | {len(long)} | {ex(long)} |",
        f"| all | {len(rows)} | {ex(rows)} |", "",
        f"**Hostile tool calls:** {count_cases} parametrised cases in "
        "`tests/test_hostile_calls.py`, each an `Error:` with the tree unchanged; last run: "
        f"`{hostile}`.", "",
        f"Load average when the run started: {load:.1f}.", ""])
    print(md)
    write_section("integrate", md, "python bench/bench_integrate_cost.py")
    return 0


if __name__ == "__main__":
    sys.exit(main())
