"""node-search: speed on a generated 10,000-node vault against tantivy and bm25s, and recall on
two real vaults against plain TF-IDF cosine. Writes the `search` section of docs/benchmarks.md.

Speed (bench/search_corpus.py, seed 42: 70 % English, 30 % Chinese, one node in ten mixed):
full build, one-node update, no-op refresh, warm queries (ten words; and 150-word unit
summaries), a cold `remelink node-search` process, index size. Every engine gets the same
terms: remelink's analyzer runs first and tantivy / bm25s index its output (tantivy with its
whitespace tokenizer), so the comparison is about the engines. Wall times on a shared machine
are noisy, so CPU times are reported beside them; compare ratios within one run.

    python bench/bench_search.py [--quick]     (--quick: 2,000 nodes, for a smoke run)
"""

from __future__ import annotations

import cProfile
import io
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import search_corpus, search_recall
from bench._report import OUT, ROOT, machine, write_section
from remelink.config import Settings
from remelink.index import NodeIndex, analysis, core, engine
from remelink.index.nodes import NodeDoc, read_node, scan_digest

SEED = 42
ENGINE_WEIGHTS = (3, 2, 2, 1)  # name, description, tags, body: the same weights everywhere


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
    """CPU seconds of this process and of its finished children (multiprocess writers)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


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


# -- Whoosh through NodeIndex -------------------------------------------------------------------
def whoosh(root: Path, queries: list[str], longs: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    settings = Settings()
    saved = engine.BUILD_PROCS
    try:
        # Both writer set-ups, twice each; the product's default (BUILD_PROCS) goes last so
        # the rest of the measurements run on the index the product builds.
        for procs in (2, 1) if saved == 1 else (1, 2):
            engine.BUILD_PROCS = procs
            phase = "single" if procs == 1 else "mp"
            with NodeIndex(root, settings) as ix:
                out[f"build_{phase}"] = timed(ix.rebuild, repeat=2)
                out[f"segments_{phase}"] = len(ix._store.ix._segments())
                for q in queries:
                    ix.search(q, refresh=False)
                out[f"query10_{phase}"] = run_queries(lambda q: ix.search(q, refresh=False),
                                                      queries)
    finally:
        engine.BUILD_PROCS = saved
    out["maxrss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
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
        out["profile"] = profile(lambda: [ix.search(q, refresh=False) for q in queries])
        out["budget"] = budget_cost(ix, root)
    out["cold"] = cold([str(ROOT / ".venv" / "bin" / "remelink"), "node-search", queries[0],
                        "--vault", str(root)])
    return out


def build_profile() -> str:
    """Where a build's time goes: a single-process build of the 2,000-node corpus, profiled."""
    root = corpus(2000)
    saved = engine.BUILD_PROCS
    engine.BUILD_PROCS = 1
    try:
        with NodeIndex(root, Settings()) as ix:
            return profile(ix.rebuild)
    finally:
        engine.BUILD_PROCS = saved


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
    stats.sort_stats("tottime").print_stats(8)
    lines = [ln for ln in buf.getvalue().splitlines() if ln.strip()]
    start = next(i for i, ln in enumerate(lines) if ln.lstrip().startswith("ncalls"))
    keep = [lines[start], *lines[start + 1:start + 9]]
    site = str(Path(engine.__file__).resolve().parents[2])
    return "\n".join(ln.replace(site, "").replace(sys.prefix, "") for ln in keep)


def known_items(root: Path, count: int = 200) -> list[tuple[str, str]]:
    """(path, query): ten distinct words drawn from one node's body (a unit-summary stand-in)."""
    import re

    rng = random.Random(3)
    files = sorted((root / "digest").rglob("*.md"))
    items = []
    for path in rng.sample(files, count):
        body = path.read_text(encoding="utf-8").split("---\n", 2)[2].split("## Sources")[0]
        body = body.split("\n", 1)[1]
        if path.name.startswith("zh-"):
            words = re.findall(r"[\u4e00-\u9fff]{2,4}", body)
            query = "".join(rng.sample(words, min(6, len(words))))
        else:
            uniq = list(dict.fromkeys(re.findall(r"[a-z]+", body.lower())))
            query = " ".join(rng.sample(uniq, min(10, len(uniq))))
        items.append((path.relative_to(root).as_posix(), query))
    return items


def budget_cost(ix: NodeIndex, root: Path) -> list[tuple[str, float, float, float]]:
    """Known-item recall@10 / MRR / CPU p50 with and without the postings budget."""
    items = known_items(root)
    rows = []
    saved = core.POSTINGS_BUDGET
    try:
        for label, budget in (("no budget (all terms under the common-term cut)", 1 << 62),
                              (f"budget {saved:,} postings (default)", saved)):
            core.POSTINGS_BUDGET = budget
            found, rr, cpu = 0, 0.0, []
            for path, query in items:
                t = timed(lambda q=query: ix.search(q, limit=10, refresh=False))
                cpu += t.cpu
                hits = [h.path for h in ix.search(query, limit=10, refresh=False)]
                if path in hits:
                    found += 1
                    rr += 1 / (hits.index(path) + 1)
            rows.append((label, found / len(items), rr / len(items), statistics.median(cpu)))
    finally:
        core.POSTINGS_BUDGET = saved
    return rows


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
def postings_count(docs: list[tuple[str, list[list[str]]]]) -> int:
    total = 0
    for _, parts in docs:
        total += len({t for part in parts for t in part}) + len(set(parts[0]))
    return total


def report(n: int, w: dict[str, Any], t: dict[str, Any], b: dict[str, Any], postings: int,
           recall: dict[str, dict[str, search_recall.Metrics]],
           ablation: list[tuple[str, list[search_recall.Metrics]]]) -> str:
    default = "mp" if engine.BUILD_PROCS > 1 else "single"
    default_build = w[f"build_{default}"]

    def ratio(a: float, c: float) -> str:
        r = a / c
        return f"{r:.0f}x" if r >= 10 else f"{r:.1f}x" if r >= 0.1 else f"{r:.2f}x"

    rows = [
        ("full build", default_build, t["build"], b["build"], 10.0),
        ("one-node update", w["update"], t["update"], b["update"], 0.1),
        ("warm query p50, 10 words", w["query10"], t["query10"], b["query10"], 0.015),
        ("warm query p50, 150 words", w["query150"], t["query150"], b["query150"], None),
        ("cold process + 1 query", w["cold"], t["cold"], b["cold"], 0.5),
    ]
    lines = [
        f"### node-search speed: {n:,} generated digest nodes (70 % English, 30 % Chinese)",
        "",
        "Medians; ratio = Whoosh / reference engine (wall). The machine was shared (see the "
        "load average below), so Whoosh's CPU time is given too: it is what the target "
        "would be on an idle core.",
        "",
        "| | node-search (Whoosh): wall / CPU | tantivy 0.27.0 | bm25s 0.3.16 | "
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
    lines += [
        "",
        "Whoosh details:",
        "",
        f"- Build (two runs each, min wall / min CPU), one process: "
        f"{ms(min(w['build_single'].wall))} wall, {ms(min(w['build_single'].cpu))} CPU, "
        f"1 segment, then 10-word query p50 {ms(w['query10_single'].p50)}. Two processes "
        f"(`procs=2, multisegment=True`): {ms(min(w['build_mp'].wall))} wall, "
        f"{ms(min(w['build_mp'].cpu))} CPU, {w['segments_mp']} segments, then 10-word query "
        f"p50 {ms(w['query10_mp'].p50)}. The product builds with "
        f"{'one process' if engine.BUILD_PROCS == 1 else 'two processes'} "
        f"(`engine.BUILD_PROCS`, limitmb {engine.LIMITMB}); peak RSS of this process after "
        f"the builds: {w['maxrss'] / 1e6:.0f} MB. The index holds {postings:,} postings "
        "(unique terms per node, text and name fields): "
        f"{min(w['build_single'].cpu) / postings * 1e6:.1f} µs of CPU per posting in "
        "Whoosh's pure-Python writer, which is what a build costs "
        "(profile below).",
        f"- One-node update (`update([path])`: read, commit, manifest, new searcher): "
        f"p50 {ms(w['update'].p50)} ({ms(w['update'].cpu50)} CPU), "
        f"p95 {ms(w['update'].p95)}.",
        f"- No-op refresh (walk + stat {n:,} files, nothing to index): "
        f"p50 {ms(w['refresh_noop'].p50)} ({ms(w['refresh_noop'].cpu50)} CPU); a 10-word "
        f"search with refresh=True: p50 {ms(w['query10_refresh'].p50)}.",
        f"- Warm 10-word query: p50 {ms(w['query10'].p50)} ({ms(w['query10'].cpu50)} CPU), "
        f"p95 {ms(w['query10'].p95)}; 150-word query: p50 {ms(w['query150'].p50)} "
        f"({ms(w['query150'].cpu50)} CPU).",
        f"- Cold `remelink node-search`: p50 {ms(w['cold'].p50)} wall, "
        f"{ms(w['cold'].cpu50)} CPU (interpreter, Typer, Whoosh import, open, no-op refresh, "
        "query, print).",
        "",
        "What the postings budget costs (known-item search: ten distinct words from one node's "
        "body; the node should come back in the top 10; 200 nodes):",
        "",
        "| term selection | known-item recall@10 | MRR | CPU p50 |",
        "|---|---|---|---|",
    ]
    for label, rec, mrr, cpu in w["budget"]:
        lines.append(f"| {label} | {rec:.3f} | {mrr:.3f} | {ms(cpu)} |")
    lines += [
        "",
        "Profile of 50 warm 10-word queries (top functions by own time):",
        "",
        "```text",
        w["profile"],
        "```",
        "",
        "Profile of a one-process build of the 2,000-node corpus (top functions by own "
        "time; every posting passes through the pool, a sort and the block writer):",
        "",
        "```text",
        w["build_profile"],
        "```",
        "",
        "### node-search recall: hidden links of real vaults",
        "",
        "Each note's links are hidden; the other notes are the digest; the note's name and "
        "text (links shown as their display text) are the query; the answer is the set of notes "
        "it linked to. Same settings for both vaults. (bench/search_recall.py; the shared data "
        "README quotes the TF-IDF floor as 0.60 / 0.71 on a count of 899 / 183 links.)",
        "",
        search_recall.table(recall),
        "",
        "Each tuned setting changed alone (bench/search_recall.py --ablation; all notes indexed "
        "once and the query note dropped from its own results, its terms staying in the "
        "statistics: the defaults row is close to, not equal to, the exact figures above). "
        "Foam's long notes gain from more query "
        "terms than the default cap of 96 keeps, SilverBullet's do not; the cap bounds the cost "
        "of long queries.",
        "",
        search_recall.ablation_table(ablation),
    ]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    n = 2000 if "--quick" in argv else 10_000
    started = time.perf_counter()
    print(f"machine: {machine()}", flush=True)
    root = corpus(n)
    queries = search_corpus.queries(50)
    longs = long_queries()
    print(f"corpus ready: {root}", flush=True)
    w = whoosh(root, queries, longs)
    w["build_profile"] = build_profile()
    print("whoosh done", flush=True)
    docs = analyzed(load_docs(root))
    postings = postings_count(docs)
    with tempfile.TemporaryDirectory(prefix="remelink-search-bench-") as tmp:
        work = Path(tmp)
        t = tantivy_bench(work, docs, queries, longs)
        print("tantivy done", flush=True)
        b = bm25s_bench(work, docs, queries, longs)
        print("bm25s done", flush=True)
    recall = search_recall.main([])
    ablation = search_recall.ablation(search_recall.SHARED_LINK_VAULTS)
    text = report(n, w, t, b, postings, recall, ablation)
    print(text)
    if n == 10_000:
        write_section("search", text, "python bench/bench_search.py")
    print(f"done in {time.perf_counter() - started:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
