"""node-search: full build, memory, update and query speed on generated vaults of 6,500 and
10,000 digest nodes, beside tantivy and bm25s in the same run. Writes the `search` section of
docs/benchmarks.md (recall on real vaults is bench/search_recall.py, section `search-recall`).

Corpus: bench/search_corpus.py, seed 42 (70 % English, 30 % Chinese, one node in ten mixed).
Every engine gets the same terms: remelink's analyzer runs first and tantivy / bm25s index its
output (tantivy with its whitespace tokenizer), so the comparison is about the engines.

Builds run in a fresh child process each (`NodeIndex.rebuild()`, the code of `remelink index
rebuild`): wall time of the rebuild, CPU of the process and its worker, and the peak of their
RSS summed at one instant (sampled every 10 ms from /proc; the builder's own VmHWM too).
`--baseline DIR` also builds with the code in DIR (a checkout of an earlier commit) in the same
run, for before/after figures.
Wall times on a shared machine are noisy: the load average is printed beside each build and
CPU times beside the walls; compare ratios within one run.

    python bench/bench_search.py [--quick] [--sizes 6500,10000] [--baseline DIR]
"""

from __future__ import annotations

import cProfile
import io
import json
import os
import pstats
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import search_corpus
from bench._report import OUT, ROOT, machine, write_section
from remelink.config import Settings
from remelink.index import NodeIndex, analysis, blocks, build, core, engine, store
from remelink.index.nodes import NodeDoc, read_node, scan_digest

SEED = 42
ENGINE_WEIGHTS = (3, 2, 2, 1)  # name, description, tags, body: the same weights everywhere
TARGETS = {6500: 8.0, 10_000: 12.0}  # full build, seconds (issue 16)
PEAK_TARGET_MB = 300


@dataclass
class Timing:
    wall: list[float]
    cpu: list[float]

    @property
    def p50(self) -> float:
        return statistics.median(self.wall)

    @property
    def p95(self) -> float:
        ys = sorted(self.wall)
        return ys[min(len(ys) - 1, round(0.95 * (len(ys) - 1)))]

    @property
    def cpu50(self) -> float:
        return statistics.median(self.cpu)


def timed(fn: Callable[[], object], repeat: int = 1) -> Timing:
    wall, cpu = [], []
    for _ in range(repeat):
        c0 = _cpu_all()
        t0 = time.perf_counter()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(_cpu_all() - c0)
    return Timing(wall, cpu)


def _cpu_all() -> float:
    """CPU seconds of this process and of its finished children (build workers)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def load() -> float:
    return os.getloadavg()[0]


def dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def ms(x: float) -> str:
    return f"{x * 1000:.1f} ms" if x < 1 else f"{x:.2f} s"


# -- corpus -------------------------------------------------------------------------------------
def corpus(n: int) -> Path:
    root = OUT / "search" / f"vault-{n}"
    marker = root / ".remelink" / f"corpus-{n}-{SEED}"
    if not marker.exists():
        shutil.rmtree(root, ignore_errors=True)
        search_corpus.generate(root, n, SEED)
        marker.write_text("ok\n")
    return root


def load_docs(root: Path) -> list[NodeDoc]:
    docs = []
    for rel, stat in sorted(scan_digest(root, "digest").items()):
        doc = read_node(rel, stat, "digest", 10 << 20).doc
        if doc is not None:
            docs.append(doc)
    return docs


def corpus_words(root: Path) -> tuple[int, int]:
    """(whitespace-separated words, analyzed terms) of the digest, for the report."""
    words = terms = 0
    for doc in load_docs(root):
        text = " ".join((doc.name, doc.description, " ".join(doc.memory_tags), doc.body))
        words += len(text.split())
        terms += len(analysis.terms(text))
    return words, terms


def long_queries(count: int = 20, words: int = 150) -> list[str]:
    rng = random.Random(5)
    en, zh = search_corpus.english_vocab(), search_corpus.chinese_vocab()
    out = []
    for i in range(count):
        if i % 5 == 4:
            out.append("".join(zh.sample(rng, words // 2)))
        else:
            out.append(" ".join(en.sample(rng, words)))
    return out


# -- full builds, each in a fresh process ---------------------------------------------------
BUILD_CHILD = """
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from remelink.config import Settings
from remelink.index import NodeIndex
procs = int(sys.argv[3])
if procs:
    from remelink.index import store
    store.BUILD_PROCS = procs
with NodeIndex(Path(sys.argv[2]), Settings()) as ix:
    c0 = time.process_time()
    t0 = time.perf_counter()
    stats = ix.rebuild()
    wall = time.perf_counter() - t0
    segments = len(ix._store.ix._segments())
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
# VmHWM, not ru_maxrss: a process started by vfork + exec inherits its parent's high-water
# mark in ru_maxrss (the benchmark process is large by the 10,000-node round).
hwm = next(int(line.split()[1]) * 1024 for line in open("/proc/self/status")
           if line.startswith("VmHWM:"))
print(json.dumps({"wall": wall, "cpu": time.process_time() - c0,
                  "child_cpu": kids.ru_utime + kids.ru_stime, "hwm": hwm,
                  "docs": stats.added, "segments": segments, "notices": list(stats.notices)}))
"""


@dataclass
class Builds:
    label: str
    runs: list[dict[str, Any]] = field(default_factory=list)

    def best(self, key: str) -> float:
        return min(float(r[key]) for r in self.runs)

    @property
    def wall(self) -> float:
        return self.best("wall")

    @property
    def cpu(self) -> float:
        return min(float(r["cpu"]) + float(r["child_cpu"]) for r in self.runs)

    @property
    def peak(self) -> float:
        """The highest RSS of the builder and its worker together, sampled at one instant."""
        return max(float(r["peak"]) for r in self.runs)

    @property
    def peak_parts(self) -> str:
        r = max(self.runs, key=lambda r: float(r["peak"]))
        if not r["worker_peak"]:
            return f"{max(r['hwm'], r['builder_peak']) / 1e6:.0f} MB, one process"
        return (f"builder {max(r['hwm'], r['builder_peak']) / 1e6:.0f} MB, worker "
                f"{r['worker_peak'] / 1e6:.0f} MB at their highest")

    @property
    def notices(self) -> list[str]:
        return [n for r in self.runs for n in r["notices"]]

    @property
    def loads(self) -> str:
        return ", ".join(f"{r['load']:.1f}" for r in self.runs)

    def walls(self) -> str:
        return " / ".join(f"{r['wall']:.2f}" for r in self.runs)


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            return [int(x) for x in fh.read().split()]
    except OSError:
        return []


def child_builds(label: str, code: Path, root: Path, procs: int, repeat: int) -> Builds:
    """Builds in a fresh process each; RSS of the builder and of its worker sampled every
    10 ms (their sum at one instant is the memory the build needs)."""
    out = Builds(label)
    for _ in range(repeat):
        before = load()
        proc = subprocess.Popen([sys.executable, "-c", BUILD_CHILD, str(code), str(root),
                                 str(procs)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        peak = builder_peak = worker_peak = 0
        while proc.poll() is None:
            mine = _rss(proc.pid)
            kids = sum(_rss(k) for k in _children(proc.pid))
            peak = max(peak, mine + kids)
            builder_peak = max(builder_peak, mine)
            worker_peak = max(worker_peak, kids)
            time.sleep(0.01)
        stdout, stderr = proc.communicate()
        if proc.returncode != 0:
            raise RuntimeError(f"build child failed: {stderr[-2000:]}")
        run = json.loads(stdout.strip().splitlines()[-1])
        run.update(load=before, peak=max(peak, run["hwm"]), builder_peak=builder_peak,
                   worker_peak=worker_peak)
        if run["notices"]:
            print(f"  {label}: {run['notices']}", flush=True)
        out.runs.append(run)
    return out


# -- Whoosh through NodeIndex, in this process --------------------------------------------------
def whoosh(root: Path, queries: list[str], longs: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    settings = Settings()
    saved = store.BUILD_PROCS
    try:
        # Query speed on the index of a one-process build, then on the product's (both one
        # segment; the rest runs on the product's).
        for procs, phase in ((1, "single"), (saved or build.default_procs(), "product")):
            store.BUILD_PROCS = procs
            with NodeIndex(root, settings) as ix:
                ix.rebuild()
                out[f"segments_{phase}"] = len(ix._store.ix._segments())
                for q in queries:
                    ix.search(q, refresh=False)
                out[f"query10_{phase}"] = run_queries(
                    lambda q: ix.search(q, refresh=False), queries * 3)
    finally:
        store.BUILD_PROCS = saved
    out["size"] = dir_size(root / core.INDEX_DIR)
    with NodeIndex(root, settings) as ix:
        ix.refresh()
        out["refresh_noop"] = timed(ix.refresh, repeat=10)
        target = root / "digest" / "wiki" / "en-00002.md"
        rel = "digest/wiki/en-00002.md"
        original = target.read_text(encoding="utf-8")
        upd = Timing([], [])
        for i in range(20):
            target.write_text(original + f"\nEdit number {i}.\n", encoding="utf-8")
            t = timed(lambda: ix.update([rel]))
            upd.wall += t.wall
            upd.cpu += t.cpu
        target.write_text(original, encoding="utf-8")
        ix.update([rel])
        out["update"] = upd
        for q in queries:  # warm-up pass
            ix.search(q, refresh=False)
        out["query10"] = run_queries(lambda q: ix.search(q, refresh=False), queries * 3)
        out["query150"] = run_queries(lambda q: ix.search(q, refresh=False), longs * 3)
        out["query10_refresh"] = run_queries(lambda q: ix.search(q), queries)
        out["lock"] = lock_cost(ix, queries)
        out["profile"] = profile(lambda: [ix.search(q, refresh=False) for q in queries])
    out["cold"] = cold([str(ROOT / ".venv" / "bin" / "remelink"), "node-search", queries[0],
                        "--vault", str(root)])
    return out


def lock_cost(ix: NodeIndex, queries: list[str]) -> tuple[float, float]:
    """CPU p50 of a warm query through NodeIndex.search (which holds the index's lock) and
    through the same method without the lock, interleaved."""
    bare = NodeIndex.search.__wrapped__  # type: ignore[attr-defined]
    locked: list[float] = []
    unlocked: list[float] = []
    for _ in range(3):
        for q in queries:
            locked += timed(lambda q=q: ix.search(q, refresh=False)).cpu
            unlocked += timed(lambda q=q: bare(ix, q, refresh=False)).cpu
    return statistics.median(locked), statistics.median(unlocked)


def phases(root: Path) -> dict[str, Any]:
    """Where a one-process full build's CPU goes, phase by phase (the product's code, timed
    piece by piece; the garbage collector paused as in the product)."""
    import gc

    from remelink.index.segment import SegmentBuilder, _weighted_counts

    cpu = time.process_time
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="remelink-phases-") as tmp:
        gc.disable()
        try:
            t = cpu()
            files = sorted(scan_digest(root, "digest").items())
            out["walk and stat"] = cpu() - t
            t = cpu()
            results = [read_node(rel, st, "digest", 10 << 20) for rel, st in files]
            out["read, fingerprint, frontmatter, wikilinks"] = cpu() - t
            docs = [engine.fields_of(r.doc) for r in results if r.doc is not None]
            t = cpu()
            for f in docs:
                _weighted_counts(f["text"], engine.WEIGHTS)
                _weighted_counts(f["name"], (1.0,))
            analysed = cpu() - t
            out["analysis (CJK bigrams, words, plural stemmer)"] = analysed
            ix = engine.create(Path(tmp), "ix")
            writer = engine.writer(ix, wait=5)
            builder = SegmentBuilder(writer.schema)
            t = cpu()
            for f in docs:
                builder.add(f)
            added = cpu() - t
            out["postings lists, stored fields, lengths"] = added - analysed
            out["postings"] = sum(len(p) // 3 for posts in builder.postings.values()
                                  for p in posts.values())
            out["terms"] = sum(len(posts) for posts in builder.postings.values())
            t = cpu()
            run = builder.encode()
            out["encode blocks and term infos"] = cpu() - t
            t = cpu()
            blocks.write_runs(writer, [run])
            out["write records, postings file, term table"] = cpu() - t
            t = cpu()
            writer.commit(merge=False)
            out["commit (columns, term hash tables, TOC)"] = cpu() - t
        finally:
            gc.enable()
    return out


def build_profile() -> str:
    """The top functions of a one-process build of the 2,000-node corpus."""
    root = corpus(2000)
    saved = store.BUILD_PROCS
    store.BUILD_PROCS = 1
    try:
        with NodeIndex(root, Settings()) as ix:
            return profile(ix.rebuild)
    finally:
        store.BUILD_PROCS = saved


def run_queries(fn: Callable[[str], object], queries: Sequence[str]) -> Timing:
    wall, cpu = [], []
    for q in queries:
        t = timed(lambda q=q: fn(q))
        wall += t.wall
        cpu += t.cpu
    return Timing(wall, cpu)


def profile(fn: Callable[[], object]) -> str:
    prof = cProfile.Profile()
    prof.runcall(fn)
    buf = io.StringIO()
    stats = pstats.Stats(prof, stream=buf)
    stats.sort_stats("tottime").print_stats(10)
    lines = [ln for ln in buf.getvalue().splitlines() if ln.strip()]
    start = next(i for i, ln in enumerate(lines) if ln.lstrip().startswith("ncalls"))
    keep = [lines[start], *lines[start + 1:start + 11]]
    site = str(Path(engine.__file__).resolve().parents[2])
    return "\n".join(ln.replace(site, "").replace(sys.prefix, "") for ln in keep)


def cold(argv: list[str], repeat: int = 7, env: dict[str, str] | None = None) -> Timing:
    wall, cpu = [], []
    for _ in range(repeat):
        kids0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True,
                       env=env)
        wall.append(time.perf_counter() - t0)
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(kids.ru_utime + kids.ru_stime - kids0.ru_utime - kids0.ru_stime)
    return Timing(wall, cpu)


# -- reference engines --------------------------------------------------------------------------
def analyzed(docs: list[NodeDoc]) -> list[tuple[str, list[list[str]]]]:
    return [(d.path, [analysis.terms(d.name), analysis.terms(d.description),
                      analysis.terms(" ".join(d.memory_tags)), analysis.terms(d.body)])
            for d in docs]


def tantivy_bench(work: Path, docs: list[tuple[str, list[list[str]]]], queries: list[str],
                  longs: list[str]) -> dict[str, Any]:
    import tantivy

    fields = ("name", "description", "tags", "body")
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("path", stored=True, tokenizer_name="raw")
    for f in fields:
        sb.add_text_field(f, tokenizer_name="whitespace", index_option="freq")
    schema = sb.build()
    path = work / "tantivy"
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    out: dict[str, Any] = {}

    def build() -> None:
        ix = tantivy.Index(schema, path=str(path))
        w = ix.writer(heap_size=256_000_000, num_threads=2)
        for rel, parts in docs:
            w.add_document(tantivy.Document(path=rel, **{f: " ".join(p)
                                                         for f, p in zip(fields, parts,
                                                                         strict=True)}))
        w.commit()
        w.wait_merging_threads()

    out["build"] = timed(build)
    out["size"] = dir_size(path)
    ix = tantivy.Index.open(str(path))
    ix.reload()

    def search(text: str) -> list[str]:
        terms = list(dict.fromkeys(analysis.terms(text, query=True)))
        clauses = [(tantivy.Occur.Should,
                    tantivy.Query.boost_query(tantivy.Query.term_query(schema, f, t), float(w)))
                   for t in terms for f, w in zip(fields, ENGINE_WEIGHTS, strict=True)]
        if not clauses:
            return []
        s = ix.searcher()
        res = s.search(tantivy.Query.boolean_query(clauses), 20)
        return [s.doc(addr)["path"][0] for _, addr in res.hits]

    for q in queries:
        search(q)
    out["query10"] = run_queries(search, queries * 3)
    out["query150"] = run_queries(search, longs * 3)
    rel, parts = docs[2]
    writer = ix.writer(heap_size=50_000_000, num_threads=1)

    def update() -> None:
        writer.delete_documents_by_term("path", rel)
        writer.add_document(tantivy.Document(path=rel, **{f: " ".join(p)
                                                     for f, p in zip(fields, parts,
                                                                     strict=True)}))
        writer.commit()
        ix.reload()

    out["update"] = timed(update, repeat=20)
    script = ("import sys, tantivy; from remelink.index import analysis as a\n"
              "ix = tantivy.Index.open(sys.argv[1]); s = ix.searcher(); sc = ix.schema\n"
              "qs = [(tantivy.Occur.Should, tantivy.Query.term_query(sc, 'body', t))"
              " for t in a.terms(sys.argv[2], query=True)]\n"
              "r = s.search(tantivy.Query.boolean_query(qs), 20)\n"
              "print([s.doc(d)['path'][0] for _, d in r.hits])\n")
    out["cold"] = cold([sys.executable, "-c", script, str(path), queries[0]])
    return out


def bm25s_bench(work: Path, docs: list[tuple[str, list[list[str]]]], queries: list[str],
                longs: list[str]) -> dict[str, Any]:
    import bm25s

    # No fields in bm25s: the weighted sections are repeated (name x3, description x2, ...).
    corpus_tokens = [[t for part, w in zip(parts, ENGINE_WEIGHTS, strict=True)
                      for _ in range(w) for t in part] for _, parts in docs]
    paths = [rel for rel, _ in docs]
    out: dict[str, Any] = {}
    holder: dict[str, Any] = {}

    def build() -> None:
        r = bm25s.BM25()
        r.index(corpus_tokens, show_progress=False)
        holder["r"] = r

    out["build"] = timed(build)
    retriever = holder["r"]
    path = work / "bm25s"
    shutil.rmtree(path, ignore_errors=True)
    retriever.save(str(path))
    out["size"] = dir_size(path)
    vocab = set(retriever.vocab_dict)

    def search(text: str) -> list[str]:
        terms = [t for t in dict.fromkeys(analysis.terms(text, query=True)) if t in vocab]
        if not terms:
            return []
        ids, _ = retriever.retrieve([terms], k=20, show_progress=False, n_threads=1)
        return [paths[i] for i in ids[0]]

    for q in queries:
        search(q)
    out["query10"] = run_queries(search, queries * 3)
    out["query150"] = run_queries(search, longs * 3)
    out["update"] = timed(build)  # no incremental update: a one-node change is a rebuild
    script = ("import sys, bm25s; from remelink.index import analysis as a\n"
              "r = bm25s.BM25.load(sys.argv[1]); v = set(r.vocab_dict)\n"
              "q = [t for t in a.terms(sys.argv[2], query=True) if t in v]\n"
              "print(r.retrieve([q], k=20, show_progress=False)[0])\n")
    out["cold"] = cold([sys.executable, "-c", script, str(path), queries[0]])
    return out


# -- report -------------------------------------------------------------------------------------
def ratio(a: float, c: float) -> str:
    r = a / c
    return f"{r:.0f}x" if r >= 10 else f"{r:.1f}x" if r >= 0.1 else f"{r:.2f}x"


def build_table(sizes: dict[int, dict[str, Any]]) -> list[str]:
    base = all("baseline" in r for r in sizes.values())
    cols = ["nodes (words / analysed terms)"]
    cols += ["before: Whoosh's writer, 1 process"] if base else []
    cols += ["now: 1 process", "now: 2 processes (default)", "target", "tantivy 0.27.0",
             "bm25s 0.3.16"]
    cols += ["peak RSS before"] if base else []
    cols += ["peak RSS now", "load average (each build)"]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for n, r in sizes.items():
        prod, single = r["product"], r["single"]
        target = TARGETS.get(n)
        cells = [f"{n:,} ({r['words'][0] / 1e6:.1f} M / {r['words'][1] / 1e6:.1f} M)"]
        if base:
            cells.append(f"{r['baseline'].wall:.2f} s ({r['baseline'].cpu:.2f} s CPU)")
        cells += [f"{single.wall:.2f} s ({single.cpu:.2f} s CPU)",
                  f"**{prod.wall:.2f} s** ({prod.cpu:.2f} s CPU)",
                  "" if target is None else
                  f"{target:g} s: {'yes' if prod.wall < target else 'no'}",
                  ms(r["tantivy"]["build"].p50), ms(r["bm25s"]["build"].p50)]
        if base:
            cells.append(f"{r['baseline'].peak / 1e6:.0f} MB")
        met = "yes" if prod.peak < PEAK_TARGET_MB * 1e6 else "no"
        cells.append(f"**{prod.peak / 1e6:.0f} MB** ({prod.peak_parts}; "
                     f"{PEAK_TARGET_MB} MB: {met})")
        cells.append("; ".join(b.loads for b in (r.get("baseline"), single, prod) if b))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def speed_table(n: int, w: dict[str, Any], t: dict[str, Any], b: dict[str, Any]) -> list[str]:
    rows = [
        ("one-node update", w["update"], t["update"], b["update"], 0.1),
        ("warm query p50, 10 words", w["query10"], t["query10"], b["query10"], 0.015),
        ("warm query p50, 150 words", w["query150"], t["query150"], b["query150"], None),
        ("cold process + 1 query", w["cold"], t["cold"], b["cold"], 0.3),
    ]
    lines = [
        f"| {n:,} nodes | node-search (Whoosh): wall / CPU | tantivy 0.27.0 | bm25s 0.3.16 | "
        "Whoosh/tantivy | Whoosh/bm25s | target: met (wall / CPU) |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, wv, tv, bv, target in rows:
        verdict = ("" if target is None else
                   f"{ms(target)}: {'yes' if wv.p50 <= target else 'no'} / "
                   f"{'yes' if wv.cpu50 <= target else 'no'}")
        lines.append(f"| {label} | {ms(wv.p50)} / {ms(wv.cpu50)} | {ms(tv.p50)} | "
                     f"{ms(bv.p50)} | {ratio(wv.p50, tv.p50)} | {ratio(wv.p50, bv.p50)} | "
                     f"{verdict} |")
    lines.append(f"| warm query p95, 10 words | {ms(w['query10'].p95)} | {ms(t['query10'].p95)} "
                 f"| {ms(b['query10'].p95)} | {ratio(w['query10'].p95, t['query10'].p95)} | "
                 f"{ratio(w['query10'].p95, b['query10'].p95)} | |")
    lines.append(f"| index on disk | {w['size'] / 1e6:.1f} MB | {t['size'] / 1e6:.1f} MB | "
                 f"{b['size'] / 1e6:.1f} MB | {ratio(w['size'], t['size'])} | "
                 f"{ratio(w['size'], b['size'])} | |")
    return lines


def cold_note(r: dict[str, Any]) -> str:
    if "cold_before" not in r:
        return ""
    before, now = r["cold_before"], r["cold_now"]
    return (f" Cold `node-search` through the same `python -c` call, before / now: "
            f"{ms(before.p50)} / {ms(now.p50)} ({ms(before.cpu50)} / {ms(now.cpu50)} CPU).")


def cold_code(code: Path, root: Path, query: str) -> tuple[list[str], dict[str, str]]:
    """A cold `node-search` with the code in `code` (for before/after), through that code's
    console entry point (`remelink.edge` since it exists, `remelink.cli` before)."""
    entry = "edge" if (code / "remelink" / "edge.py").exists() else "cli"
    argv = [sys.executable, "-c",
            f"import sys; sys.argv = ['remelink', 'node-search', {query!r}, '--vault', "
            f"{str(root)!r}]; from remelink.{entry} import main; main()"]
    return argv, {**os.environ, "PYTHONPATH": str(code)}


def report(sizes: dict[int, dict[str, Any]], phase: tuple[int, dict[str, Any]],
           build_prof: str, baseline: str | None) -> str:
    lines = [
        "### node-search: full build",
        "",
        "`NodeIndex.rebuild()` (what `remelink index rebuild` runs), each in a fresh process, "
        "two runs each: best wall (best CPU of the process plus its build worker), worst peak "
        "RSS (the builder's and the worker's summed at one instant, sampled every 10 ms). "
        f"tantivy and bm25s index the same analysed terms in the same run.{baseline or ''}",
        "",
        *build_table(sizes),
        "",
    ]
    for n, r in sizes.items():
        for note in r["product"].notices:
            lines += [f"- {n:,} nodes, a default build said: {note}", ""]
    n, ph = phase
    total = sum(v for k, v in ph.items() if k not in ("postings", "terms"))
    lines += [
        f"Where a one-process build's CPU goes ({n:,} nodes, {ph['postings']:,} postings, "
        f"{ph['terms']:,} terms; each phase timed on its own):",
        "",
        "| phase | CPU | share |",
        "|---|---|---|",
    ]
    for key, value in ph.items():
        if key not in ("postings", "terms"):
            lines.append(f"| {key} | {value:.2f} s | {100 * value / total:.0f} % |")
    lines += [
        f"| total | {total:.2f} s | {1e6 * total / ph['postings']:.2f} µs per posting |",
        "",
        "Top functions of a one-process build of the 2,000-node corpus (own time):",
        "",
        "```text",
        build_prof,
        "```",
        "",
        "### node-search: updates and queries",
        "",
        "Medians; ratio = Whoosh / reference engine (wall); CPU beside the wall because the "
        "machine is shared. Queries run on the index the default build leaves (one segment, "
        "as a one-process build leaves).",
        "",
    ]
    for n, r in sizes.items():
        w = r["whoosh"]
        lines += speed_table(n, w, r["tantivy"], r["bm25s"])
        locked, unlocked = w["lock"]
        lines += [
            "",
            f"- {n:,} nodes: 10-word query p50 on the one-process build "
            f"({w['segments_single']} segment): {ms(w['query10_single'].p50)} "
            f"({ms(w['query10_single'].cpu50)} CPU); on the two-process build "
            f"({w['segments_product']} segment): {ms(w['query10_product'].p50)} "
            f"({ms(w['query10_product'].cpu50)} CPU).{cold_note(r)} No-op refresh (walk + stat): "
            f"{ms(w['refresh_noop'].p50)}; a 10-word search with refresh=True: "
            f"{ms(w['query10_refresh'].p50)}. One-node update p95 {ms(w['update'].p95)}. "
            f"The index lock (thread safety): query CPU p50 {ms(locked)} with it, "
            f"{ms(unlocked)} without.",
            "",
        ]
    lines += [
        f"Profile of 50 warm 10-word queries, {max(sizes):,} nodes (top functions by own time):",
        "",
        "```text",
        sizes[max(sizes)]["whoosh"]["profile"],
        "```",
    ]
    return "\n".join(lines)


def option(argv: list[str], name: str) -> str | None:
    if name in argv:
        i = argv.index(name)
        if i + 1 < len(argv):
            return argv[i + 1]
    return None


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    sizes_arg = option(argv, "--sizes")
    sizes = [int(x) for x in sizes_arg.split(",")] if sizes_arg else \
        ([2000] if quick else [6500, 10_000])
    baseline = option(argv, "--baseline")
    started = time.perf_counter()
    print(f"machine: {machine()}", flush=True)
    queries = search_corpus.queries(50)
    longs = long_queries()
    results: dict[int, dict[str, Any]] = {}
    for n in sizes:
        root = corpus(n)
        print(f"corpus ready: {root} (load {load():.1f})", flush=True)
        r: dict[str, Any] = {"words": corpus_words(root)}
        if baseline:
            r["baseline"] = child_builds("before", Path(baseline), root, 0, 2)
            print(f"  before: {r['baseline'].walls()} s", flush=True)
        r["single"] = child_builds("1 process", ROOT, root, 1, 2)
        r["product"] = child_builds("default", ROOT, root, 0, 2)
        print(f"  now: 1 process {r['single'].walls()} s, default {r['product'].walls()} s",
              flush=True)
        r["whoosh"] = whoosh(root, queries, longs)
        if baseline:
            for key, code in (("cold_before", Path(baseline)), ("cold_now", ROOT)):
                argv, env = cold_code(code, root, queries[0])
                r[key] = cold(argv, env=env)
        docs = analyzed(load_docs(root))
        with tempfile.TemporaryDirectory(prefix="remelink-search-bench-") as tmp:
            work = Path(tmp)
            r["tantivy"] = tantivy_bench(work, docs, queries, longs)
            r["bm25s"] = bm25s_bench(work, docs, queries, longs)
        results[n] = r
        print(f"  {n} done (load {load():.1f})", flush=True)
    largest = max(sizes)
    phase = (largest, phases(corpus(largest)))
    build_prof = build_profile()
    note = None
    if baseline:
        note = (f" \"Before\" is the code of `{Path(baseline).name}` (the commit before issue "
                "16: Whoosh's own writer, one process), built in the same run.")
    text = report(results, phase, build_prof, note)
    print(text)
    if not quick and sizes == [6500, 10_000]:
        write_section("search", text, "python bench/bench_search.py" +
                      (" --baseline BASELINE" if baseline else ""))
    print(f"done in {time.perf_counter() - started:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
