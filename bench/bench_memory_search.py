"""Memory search for people and agents: `remelink search` and `remelink mcp` (issue 22).

    python bench/bench_memory_search.py [--part locomo|realvault|latency|size] [--reuse]
                                        [--no-basic-memory] [--no-doc]

One command reruns everything at HEAD (the digests come from this checkout's `dream run`):

1. LoCoMo (../shared/data/locomo-train/, written as vaults by bench/locomo.py and distilled by
   `remelink dream run`): every question of categories 1-4, asked of `remelink search
   --limit 5`, `node-search --limit 5` over the digest, plain BM25 over the raw session notes,
   and Basic Memory's `search_notes` over the same vault (bench/memsearch_eval.py): evidence-
   hit@5 (a hit: the evidence session's note, or a digest node citing it) and MRR. Reported on
   the held-out conversations conv-49 and conv-50; the tuning side (conv-41..48) separately.
2. The realistic vaults (bench/realvault/{dev,heldout}/, `key.yaml` questions with the notes
   that answer them), each distilled by `dream run`: hit@5 and MRR of the same systems (no
   BM25 row: its tokens do not split Chinese). Reported on `heldout`; `dev` is the tuning side.
3. Latency on a 10,000-note vault (bench/genvault.py): the passage index's full build, a warm
   search (index open, vault unchanged), the incremental update after one note changes,
   `remelink mcp` ready to answer, and a tool call's round trip through the SDK's stdio client.
4. Characters per `search` call at limit 5 (the text an agent gets), with and without link
   expansion, on the LoCoMo held-out and realistic vaults.
Timings are medians of repeated runs in one process; the load average is printed with them.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import memsearch_eval as me  # noqa: E402
import splits  # noqa: E402
from _report import OUT, machine, write_section  # noqa: E402

WORK = OUT / "memsearch"
HELD_OUT = splits.LOCOMO_HELD_OUT
CATEGORIES = (1, 2, 3, 4)
REALVAULT = HERE / "realvault"
SYSTEMS = ("remelink search", "node-search (digest)", "BM25 (raw notes)", "Basic Memory")


def git_head() -> str:
    proc = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE.parent,
                          capture_output=True, text=True, check=False)
    return proc.stdout.strip() or "?"


def dream(vault: Path) -> float:
    exe = Path(sys.executable).parent / "remelink"
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True", LITELLM_OFFLINE_MODE="true")
    started = time.perf_counter()
    proc = subprocess.run([str(exe), "dream", "run", "--vault", str(vault), "--quiet"],
                          capture_output=True, text=True, env=env, check=False)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"dream run failed on {vault}: {proc.stderr[-2000:]}")
    return time.perf_counter() - started


def ask(vault: Path, questions: list[str], wanted: list[set[str]], *, bm: bool,
        bm25: bool = True) -> dict[str, me.Score]:
    cites = me.digest_cites(vault)
    runs: dict[str, list[list[str]]] = {
        "remelink search": me.remelink_search(vault, questions),
        "node-search (digest)": me.node_search(vault, questions),
    }
    if bm25:
        runs["BM25 (raw notes)"] = me.bm25(vault, questions)
    if bm:
        runs["Basic Memory"] = me.basic_memory(vault, questions, WORK / "bm" / vault.name)
    scores = {}
    for name, ranked in runs.items():
        s = me.Score()
        for r, w in zip(ranked, wanted, strict=True):
            s.add(r, w, cites)
        scores[name] = s
    return scores


def table(rows: list[tuple[str, dict[str, me.Score]]], systems: tuple[str, ...]) -> list[str]:
    shown = [s for s in systems if any(s in r for _, r in rows)]
    out = ["| | questions | " + " | ".join(f"{s} hit@5 / MRR" for s in shown) + " |",
           "|---|---|" + "---|" * len(shown)]
    for label, scores in rows:
        n = next(iter(scores.values())).questions if scores else 0
        cells = []
        for s in shown:
            sc = scores.get(s)
            cells.append(f"{sc.hit5:.3f} / {sc.mrr:.3f}" if sc else "-")
        out.append(f"| {label} | {n} | " + " | ".join(cells) + " |")
    return out


def total(parts: list[dict[str, me.Score]]) -> dict[str, me.Score]:
    out: dict[str, me.Score] = {}
    for scores in parts:
        for name, s in scores.items():
            out.setdefault(name, me.Score()).merge(s)
    return out


# -- 1. LoCoMo ---------------------------------------------------------------------------------
def locomo_part(reuse: bool, bm: bool) -> tuple[list[str], list[Path]]:
    from locomo import load, write_vault

    per: dict[str, dict[str, me.Score]] = {}
    vaults = []
    for conv in load():
        vault = WORK / "locomo" / conv.sample_id
        if not (reuse and (vault / "digest").is_dir()):
            shutil.rmtree(vault, ignore_errors=True)
            write_vault(conv, vault)
            dream(vault)
        qs = [q for q in conv.questions if q.category in CATEGORIES and q.evidence]
        per[conv.sample_id] = ask(vault, [q.text for q in qs],
                                  [conv.evidence_paths(q.evidence) for q in qs], bm=bm)
        if conv.sample_id in HELD_OUT:
            vaults.append(vault)
        print(conv.sample_id, {k: f"{v.hit5:.3f}" for k, v in per[conv.sample_id].items()},
              flush=True)
    held = [(c, per[c]) for c in per if splits.locomo(c) == splits.HELD_OUT]
    tune = [(c, s) for c, s in per.items() if splits.locomo(c) == splits.TUNING]
    lines = ["### 1. LoCoMo after `dream run`: evidence-hit@5 and MRR", "",
             "Held-out conversations (the reported figures):", "",
             *table([*held, ("**held-out total**", total([s for _, s in held]))], SYSTEMS), "",
             "Tuning side (conv-41..48, where the passage size and query weighting were "
             "chosen; not a result):", "",
             *table([*tune, ("tuning total", total([s for _, s in tune]))], SYSTEMS)]
    return lines, vaults


# -- 2. realistic vaults ---------------------------------------------------------------------
def realvault_questions(key: Path) -> list[tuple[str, set[str]]]:
    import yaml

    data = yaml.safe_load(key.read_text(encoding="utf-8")) or {}
    out = []
    for item in data.get("questions") or []:
        if not isinstance(item, dict):
            continue
        text = item.get("question") or item.get("q") or item.get("text")
        notes = (item.get("notes") or item.get("answers") or item.get("answered_by")
                 or item.get("paths") or item.get("answer_notes") or [])
        if isinstance(notes, str):
            notes = [notes]
        if text and notes:
            out.append((str(text), {str(n) for n in notes}))
    return out


def realvault_part(reuse: bool, bm: bool) -> tuple[list[str], list[Path]]:
    rows = []
    vaults = []
    for split in (splits.REALVAULT_DIRS[splits.HELD_OUT], splits.REALVAULT_DIRS[splits.TUNING]):
        src = REALVAULT / split
        key = src / "key.yaml"
        if not key.is_file():
            continue
        vault = WORK / "realvault" / split
        if not (reuse and (vault / "digest").is_dir()):
            shutil.rmtree(vault, ignore_errors=True)
            vault.mkdir(parents=True)
            for name in ("daily", "resource", "digest", ".remelink"):
                if (src / name).is_dir():
                    shutil.copytree(src / name, vault / name)
            (vault / ".remelink").mkdir(exist_ok=True)
            dream(vault)
        qa = realvault_questions(key)
        scores = ask(vault, [q for q, _ in qa], [w for _, w in qa], bm=bm, bm25=False)
        side = splits.HELD_OUT if split == splits.REALVAULT_DIRS[splits.HELD_OUT] \
            else splits.TUNING
        label = f"{split} ({splits.label(side)})"
        rows.append((label, scores))
        vaults.append(vault)
        print(split, {k: f"{v.hit5:.3f}" for k, v in scores.items()}, flush=True)
    if not rows:
        return ["### 2. Realistic vaults", "", "Not run: `bench/realvault/*/key.yaml` is not in "
                "this checkout."], []
    where = REALVAULT.relative_to(HERE.parent) if REALVAULT.is_relative_to(HERE.parent) \
        else REALVAULT
    return ["### 2. Realistic vaults after `dream run`: hit@5 and MRR", "",
            f"`{where}` (20 questions per vault, 10 English and 10 Chinese; `heldout` is the "
            "reported one).", "", *table(rows, SYSTEMS)], vaults


# -- 3. latency ------------------------------------------------------------------------------
def ms(xs: list[float], cpu: list[float] | None = None) -> str:
    p95 = sorted(xs)[int(0.95 * (len(xs) - 1))]
    text = f"{statistics.median(xs) * 1000:.1f} ms (p95 {p95 * 1000:.1f})"
    if cpu:
        text += f"; CPU {statistics.median(cpu) * 1000:.1f} ms"
    return text


class Clock:
    """Wall and CPU time of repeated calls (CPU time depends less on the machine's load)."""

    def __init__(self) -> None:
        self.wall: list[float] = []
        self.cpu: list[float] = []

    def __enter__(self) -> Clock:
        self._t, self._c = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall.append(time.perf_counter() - self._t)
        self.cpu.append(time.process_time() - self._c)

    def __str__(self) -> str:
        return ms(self.wall, self.cpu)


QUERIES = ["retry budget for the billing service", "how do we roll back a canary release",
           "数据脱敏规则", "what does the team want for code review", "feature flags in staging",
           "幂等键 重试", "cache invalidation on mobile", "incident response timeline",
           "who owns the on-call rotation", "webhook signing secret rotation"]


def latency_part(reuse: bool) -> list[str]:
    from genvault import generate

    from remelink.config import load_settings
    from remelink.search import PassageIndex, search

    vault = WORK / "gen10k"
    if not (reuse and (vault / "digest").is_dir()):
        generate(vault, 10_000)
    shutil.rmtree(vault / ".remelink" / "index" / "passages", ignore_errors=True)
    settings = load_settings(vault)
    index = PassageIndex(vault, settings)
    t, c = time.perf_counter(), time.process_time()
    stats = index.refresh()
    build, build_cpu = time.perf_counter() - t, time.process_time() - c
    for q in QUERIES:  # first touches: segment tables, caches
        search(vault, settings, q, index=index)
    warm: dict[str, Clock] = {}
    live = PassageIndex(vault, settings, recheck=1.0)  # as the MCP server keeps it
    for key, idx, links in (("every", index, True), ("live", live, True),
                            ("live-bare", live, False)):
        clock = warm[key] = Clock()
        for _ in range(3):
            for q in QUERIES:
                with clock:
                    search(vault, settings, q, links=links, index=idx)
    live.close()
    bare = Clock()
    for _ in range(3):
        for q in QUERIES:
            with bare:
                index.search(q, refresh=False)
    check = Clock()
    for _ in range(10):
        with check:
            index.refresh()
    note = next(p for p in sorted((vault / "daily").rglob("*.md")))
    rel = note.relative_to(vault).as_posix()
    refresh_one, update_one = Clock(), Clock()
    for i in range(5):
        note.write_text(note.read_text(encoding="utf-8") + f"\nwombat{i} appended.\n",
                        encoding="utf-8")
        os.utime(note, ns=(time.time_ns() + 3_000_000_000 * (i + 1),) * 2)
        with refresh_one:
            index.refresh()
        assert [h.path for h in index.search(f"wombat{i}", refresh=False)][:1] == [rel]
        note.write_text(note.read_text(encoding="utf-8") + f"\nnumbat{i} appended.\n",
                        encoding="utf-8")
        with update_one:
            index.update([rel])
        assert [h.path for h in index.search(f"numbat{i}", refresh=False)][:1] == [rel]
    index.close()
    cold = []
    exe = str(Path(sys.executable).parent / "remelink")
    for q in QUERIES[:5]:
        t = time.perf_counter()
        subprocess.run([exe, "search", q, "--vault", str(vault)], capture_output=True,
                       check=False)
        cold.append(time.perf_counter() - t)
    mcp_lines = mcp_latency(vault)
    return ["### 3. Latency on a 10,000-note vault (`bench/genvault.py`, "
            f"{stats.added:,} notes indexed)", "",
            "| what | time |", "|---|---|",
            f"| full build of the passage index (one process) | {build:.1f} s; CPU "
            f"{build_cpu:.1f} s |",
            f"| warm `search`, limit 5, with link expansion, in a live index as the MCP "
            f"server keeps it (notes checked for changes at most once a second) | "
            f"{warm['live']} |",
            f"| the same without link expansion | {warm['live-bare']} |",
            f"| warm `search` with link expansion, checking the notes at every call | "
            f"{warm['every']} |",
            f"| the ranking alone (no change check, no expansion) | {bare} |",
            f"| the change check alone (walk and stat every note; nothing changed) | "
            f"{check} |",
            f"| one note changed: `refresh()` (walk, then re-index that note) | "
            f"{refresh_one} |",
            f"| one note changed, path known (`update([path])`, as `remember` does) | "
            f"{update_one} |",
            f"| cold `remelink search` process (5 queries) | {ms(cold)} |",
            *mcp_lines]


def mcp_latency(vault: Path) -> list[str]:
    try:
        import anyio
        from mcp import Client
        from mcp.client.stdio import StdioServerParameters
    except ImportError:
        return ["| `remelink mcp` | not measured: the mcp extra is not installed |"]
    exe = str(Path(sys.executable).parent / "remelink")
    params = StdioServerParameters(command=exe, args=["mcp", "--vault", str(vault)])
    ready: list[float] = []
    first: list[float] = []
    search_rt: list[float] = []
    read_rt: list[float] = []

    async def once(measure_calls: bool) -> None:
        t = time.perf_counter()
        async with Client(params, read_timeout_seconds=300) as client:
            await client.list_tools()
            ready.append(time.perf_counter() - t)
            t = time.perf_counter()
            await client.call_tool("search", {"query": QUERIES[0]})
            first.append(time.perf_counter() - t)
            if measure_calls:
                for _ in range(3):
                    for q in QUERIES:
                        t = time.perf_counter()
                        await client.call_tool("search", {"query": q})
                        search_rt.append(time.perf_counter() - t)
                        t = time.perf_counter()
                        await client.call_tool("read", {"path": "digest/wiki/"
                                                        + next((vault / "digest" / "wiki")
                                                               .glob("*.md")).name,
                                                        "start_line": 1, "end_line": 5})
                        read_rt.append(time.perf_counter() - t)

    for i in range(5):  # the warm calls in the last session: every index is built by then
        anyio.run(once, i == 4)
    cpu = []
    for _ in range(5):  # the CPU a start costs: start, read EOF on stdin, exit
        proc = subprocess.Popen([exe, "mcp", "--vault", str(vault)], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, _, usage = os.wait4(proc.pid, 0)
        cpu.append(usage.ru_utime + usage.ru_stime)
    return [f"| `remelink mcp`: spawn to tools listed (ready to answer) | {ms(ready)} |",
            f"| `remelink mcp`: CPU time of a start (start, read end of input, exit; what "
            f"the machine's load does not change) | {ms(cpu)} |",
            f"| `remelink mcp`: its first `search` (opens the index) | {ms(first)} |",
            f"| `remelink mcp`: warm `search` round trip (stdio, JSON-RPC, links) | "
            f"{ms(search_rt)} |",
            f"| `remelink mcp`: warm `read` round trip (5 lines) | {ms(read_rt)} |"]


# -- 4. size ---------------------------------------------------------------------------------
def size_part(vaults: list[Path]) -> list[str]:
    from locomo import load

    from remelink.config import load_settings
    from remelink.search import PassageIndex, search
    from remelink.search.render import hits_text

    convs = {c.sample_id: c for c in load()}
    rows = ["### 4. Characters per `search` call at limit 5 (the text an agent gets)", "",
            "| vault | calls | with link expansion: median / p95 / max | without: median / "
            "p95 / max |", "|---|---|---|---|"]
    for vault in vaults:
        if vault.name in convs:
            qs = [q.text for q in convs[vault.name].questions if q.category in CATEGORIES]
        else:
            qs = [q for q, _ in realvault_questions(REALVAULT / vault.name / "key.yaml")]
        settings = load_settings(vault)
        sizes: dict[bool, list[int]] = {True: [], False: []}
        with PassageIndex(vault, settings) as index:
            for q in qs:
                for links in (True, False):
                    hits = search(vault, settings, q, limit=5, links=links, index=index).hits
                    sizes[links].append(len(hits_text(hits)))

        def fmt(xs: list[int]) -> str:
            ys = sorted(xs)
            p95 = ys[int(0.95 * (len(ys) - 1))]
            return f"{statistics.median(ys):,.0f} / {p95:,} / {ys[-1]:,}"

        rows.append(f"| {vault.parent.name}/{vault.name} | {len(qs)} | {fmt(sizes[True])} | "
                    f"{fmt(sizes[False])} |")
    rows += ["", "The MCP `search` tool cuts a result at 20,000 characters, at a hit boundary, "
             "and says so."]
    return rows


def main(argv: list[str] | None = None) -> int:
    global REALVAULT
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", action="append", choices=("locomo", "realvault", "latency",
                                                            "size"))
    parser.add_argument("--reuse", action="store_true",
                        help="reuse the vaults already distilled under bench/out/memsearch/")
    parser.add_argument("--no-basic-memory", action="store_true")
    parser.add_argument("--realvault", type=Path, default=REALVAULT,
                        help="the realistic vaults (default bench/realvault/)")
    parser.add_argument("--no-doc", action="store_true")
    args = parser.parse_args(argv)
    REALVAULT = args.realvault.resolve()
    parts = args.part or ["locomo", "realvault", "latency", "size"]
    load = os.getloadavg()[0]
    bm = not args.no_basic_memory
    if bm:
        why = me.install_basic_memory()
        if why:
            print(f"Basic Memory left out: {why}", file=sys.stderr)
            bm = False
    started = time.perf_counter()
    lines = ["## Memory search: `remelink search` and `remelink mcp`", "",
             f"At commit {git_head()}; load average {load:.1f} at start (2 cores shared with "
             "other work: timings are noisy, compare within a row). Basic Memory "
             f"{me.BM_VERSION if bm else '(not run)'}, keyword search (its semantic search is "
             "unavailable offline), `search_notes` with `page_size=5`.", ""]
    size_vaults: list[Path] = []
    if "locomo" in parts:
        more, vaults = locomo_part(args.reuse, bm)
        lines += [*more, ""]
        size_vaults += vaults
    if "realvault" in parts:
        more, vaults = realvault_part(args.reuse, bm)
        lines += [*more, ""]
        size_vaults += [v for v in vaults if v.name == "heldout"]
    if "latency" in parts:
        lines += [*latency_part(args.reuse), ""]
    if "size" in parts:
        if not size_vaults:
            size_vaults = [WORK / "locomo" / c for c in HELD_OUT
                           if (WORK / "locomo" / c / "digest").is_dir()]
            size_vaults += [WORK / "realvault" / "heldout"] if (
                WORK / "realvault" / "heldout" / "digest").is_dir() else []
        lines += [*size_part(size_vaults), ""]
    lines.append(f"Whole run: {time.perf_counter() - started:.0f} s.")
    text = "\n".join(lines)
    print(text)
    if not args.no_doc and set(parts) == {"locomo", "realvault", "latency", "size"}:
        write_section("memory-search", text, "python bench/bench_memory_search.py")
    elif not args.no_doc and parts == ["latency"]:  # a later, quieter measurement of it
        write_section("memory-search-latency", text.replace(
            "## Memory search: `remelink search` and `remelink mcp`",
            "## Memory search: latency, measured again"),
            "python bench/bench_memory_search.py --part latency --reuse")
    print(machine())
    return 0


if __name__ == "__main__":
    sys.exit(main())
