"""The LLM path end to end, before and after a change, in one run: `remelink dream run` with a
litellm model (litellm's real request path) against a loopback OpenAI-compatible provider whose
model is bench/llm_policy.py's decent tool-calling model.

Each code version (`--before REV`, default cd4920b, the code before issue 23 (the last run
used main 03ff8bf), exported with `git archive`; and the working tree) runs in a child process
on copies of the same vaults: the demo vault (fixtures/demo-vault, English and Chinese) and
a generated vault (bench/genvault.py, `--notes`; its raw notes are the input, its digest nodes
what recall finds). The provider
counts every request's prompt tokens in cl100k (litellm.token_counter, model gpt-3.5-turbo,
messages and tool schemas; the encoding file is the one litellm bundles, no network), and
files each request under its task: extraction, tagging, or the unit it integrates.

Measured per version: prompt tokens per clean unit (median, p90, max; English and Chinese),
its first request, turns; extraction tokens per changed note; tagging calls per tagged node;
the repair cost of each mistake class (the model makes it once per unit on the demo vault:
extra prompt tokens and turns per unit over the clean run); wall time of the generated vault's
run at concurrency 1 and 8 with 200 ms per request; digest-to-digest links the run adds at
concurrency 1 and 8.

    python bench/bench_llm_path.py [--before REV] [--notes 88] [--seed 7] [--latency 0.2]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")

from bench._report import OUT, machine, median, pct, python, write_section  # noqa: E402
from bench.llm_policy import MISTAKES, Decent, first_json, zh  # noqa: E402

BASE = "cd4920b"  # this branch's base: the code before issue 23
DEMO = ROOT / "fixtures" / "demo-vault"
TODAY = "2026-06-25"
LINK_RE = re.compile(r"(?<!!)\[\[(digest/[^\]|#]+)")
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


def cl100k(body: dict[str, Any]) -> int:
    import litellm

    return int(litellm.token_counter(model="gpt-3.5-turbo", messages=body["messages"],
                                     tools=body.get("tools") or None))


# -- the provider -------------------------------------------------------------------------------

@dataclass
class Request:
    task: str           # extract | tag | integrate
    unit: str | None    # the unit's key (integrate)
    lang: str
    tokens: int
    first: bool         # the first request of its conversation
    repair: bool        # the conversation so far holds a refusal or a repair message


def repairing(messages: list[dict[str, Any]]) -> bool:
    users = [m for m in messages if m.get("role") == "user"]
    return len(users) > 1 or any(
        m.get("role") == "tool" and (str(m.get("content") or "").startswith("Error:") or
                                     "Not acceptable yet" in str(m.get("content") or ""))
        for m in messages)


@dataclass
class Provider:
    policy: Decent
    latency: float = 0.0
    requests: list[Request] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def handle(self, body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        first = next((str(m.get("content") or "") for m in messages if m.get("role") == "user"),
                     "")
        task = first_json(first)
        kind = str(task.get("task") or ("integrate" if task.get("paths") else "other"))
        unit = None
        lang = "zh" if zh(first) else "en"
        if kind == "integrate":
            unit = json.dumps([task.get("name"), task.get("paths")], ensure_ascii=False)
            lang = "zh" if zh(f"{task.get('name')} {task.get('summary')}") else "en"
        tokens = cl100k(body)
        answer = self.policy(body)
        answer["usage"] = {"prompt_tokens": tokens, "completion_tokens": 50,
                           "total_tokens": tokens + 50}
        with self.lock:
            self.requests.append(Request(kind, unit, lang, tokens,
                                         first=len([m for m in messages
                                                    if m.get("role") != "system"]) == 1,
                                         repair=repairing(messages)))
        return answer


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:  # http.server's naming
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))))
        if self.server.provider.latency:
            time.sleep(self.server.provider.latency)
        data = json.dumps(self.server.provider.handle(body)).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, provider: Provider) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.provider = provider


@contextmanager
def serving(provider: Provider) -> Iterator[str]:
    server = _Server(provider)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


# -- one dream run in a child process -----------------------------------------------------------

def export(rev: str, dest: Path) -> str:
    sha = subprocess.run(["git", "rev-parse", "--short", rev], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout.strip()
    archive = subprocess.run(["git", "archive", rev, "remelink"], cwd=ROOT, check=True,
                             capture_output=True).stdout
    dest.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return sha


def d2d_links(vault: Path) -> int:
    """Digest-to-digest wikilinks (distinct per node)."""
    total = 0
    for node in (vault / "digest").rglob("*.md"):
        total += len(set(LINK_RE.findall(node.read_text(encoding="utf-8"))))
    return total


@dataclass
class Run:
    envelope: dict[str, Any]
    requests: list[Request]
    seconds: float
    links_added: int
    policy: Decent


def local_links(code: Path, source: Path, work: Path, concurrency: int) -> tuple[int, int]:
    """(digest-to-digest links added, units integrated) by the local engine at `concurrency`."""
    vault = work / "vault"
    shutil.rmtree(vault, ignore_errors=True)
    shutil.copytree(source, vault)
    before = d2d_links(vault)
    (vault / ".remelink").mkdir(exist_ok=True)
    (vault / ".remelink" / "config.yaml").write_text(
        f"model: local\nlocal: {{embedder: none}}\nauto_dream:\n  concurrency: {concurrency}\n",
        encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(code)}
    proc = subprocess.run([python(), "-c", "import sys; from remelink.cli import main; "
                           "main(sys.argv[1:])", "dream", "run", "--vault", str(vault), "--json",
                           "--quiet", "--today", TODAY], env=env, cwd=work, capture_output=True,
                          text=True, check=False)
    envelope = json.loads(proc.stdout)
    return d2d_links(vault) - before, envelope["counts"]["units_integrated"]


def dream(code: Path, source: Path, work: Path, *, mistake: str | None = None,
          concurrency: int = 1, latency: float = 0.0, receipt_with_write: bool = True) -> Run:
    vault = work / "vault"
    shutil.rmtree(vault, ignore_errors=True)
    shutil.copytree(source, vault)
    provider = Provider(Decent(mistake, receipt_with_write=receipt_with_write), latency=latency)
    before = d2d_links(vault)
    with serving(provider) as base:
        (vault / ".remelink").mkdir(exist_ok=True)
        (vault / ".remelink" / "config.yaml").write_text(
            f"model: openai/bench\napi_base: {base}\nretries: 0\ntimeout: 60\n"
            f"local: {{embedder: none}}\nauto_dream:\n  concurrency: {concurrency}\n",
            encoding="utf-8")
        env = {**os.environ, "OPENAI_API_KEY": "sk-bench-dummy", "PYTHONPATH": str(code),
               "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_OFFLINE_MODE": "true"}
        program = ("import sys; from remelink.cli import main; "
                   "main(sys.argv[1:])")
        started = time.perf_counter()
        proc = subprocess.run([python(), "-c", program, "dream", "run", "--vault", str(vault),
                               "--json", "--quiet", "--today", TODAY], env=env, cwd=work,
                              capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - started
    if not proc.stdout.strip():
        raise SystemExit(f"dream run failed ({code}): {proc.stderr[-2000:]}")
    envelope = json.loads(proc.stdout)
    return Run(envelope, provider.requests, seconds, d2d_links(vault) - before, provider.policy)


# -- figures ------------------------------------------------------------------------------------

def units_of(run: Run) -> dict[str, dict[str, Any]]:
    """Per unit: prompt tokens over all its requests, the first request, turns, language."""
    out: dict[str, dict[str, Any]] = {}
    for r in run.requests:
        if r.task != "integrate" or r.unit is None:
            continue
        u = out.setdefault(r.unit, {"tokens": 0, "first": 0, "turns": 0, "lang": r.lang,
                                    "clean": True})
        u["tokens"] += r.tokens
        u["turns"] += 1
        u["clean"] = u["clean"] and not r.repair
        if r.first and not u["first"]:
            u["first"] = r.tokens
    return out


def stats(xs: list[float]) -> str:
    if not xs:
        return "-"
    return f"{median(xs):,.0f} / {pct(xs, 90):,.0f} / {max(xs):,.0f}"


def clean_row(label: str, run: Run) -> dict[str, Any]:
    units = units_of(run)
    done = {u["name"]: u for u in run.envelope["data"]["units"]}
    rows = [u for u in units.values() if u["clean"]]
    counts = run.envelope["counts"]
    notes = max(1, counts["files_changed"])
    extract = sum(r.tokens for r in run.requests if r.task == "extract")
    tags = [r for r in run.requests if r.task == "tag"]
    tagged = len(run.envelope["data"]["tags"]) or 1
    return {
        "label": label, "clean": len(rows), "units": len(units),
        "done": sum(1 for u in done.values() if u["status"] == "done"),
        "all": [u["tokens"] for u in rows],
        "en": [u["tokens"] for u in rows if u["lang"] == "en"],
        "zh": [u["tokens"] for u in rows if u["lang"] == "zh"],
        "first": [u["first"] for u in rows],
        "turns": [u["turns"] for u in rows],
        "extract_per_note": extract / notes, "extract_calls": sum(
            1 for r in run.requests if r.task == "extract"),
        "tag_calls_per_node": len(tags) / tagged, "tagged": tagged,
        "total": sum(r.tokens for r in run.requests), "seconds": run.seconds,
        "exit_ok": run.envelope["ok"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", default=BASE)
    parser.add_argument("--notes", type=int, default=88,
                        help="notes of the generated vault (about 55 %% of them raw notes)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--skip-latency", action="store_true")
    parser.add_argument("--render", metavar="JSON",
                        help="write the section again from a run's saved figures")
    args = parser.parse_args(argv)
    if args.render:
        saved = json.loads(Path(args.render).read_text(encoding="utf-8"))
        md = report(saved["results"], saved["sha"], saved["raw"], saved["nodes"],
                    argparse.Namespace(**saved["args"]), saved["load"], saved["imports"],
                    saved["head"])
        print(md)
        write_section("llm-path", md, "python bench/bench_llm_path.py")
        return 0
    watch_network()
    import litellm  # noqa: F401  (the counter; imported once, offline)

    load = os.getloadavg()[0]
    from bench.genvault import generate

    with tempfile.TemporaryDirectory(prefix="remelink-bench-llm-") as tmp:
        work = Path(tmp)
        sha = export(args.before, work / "before")
        codes = {"before": work / "before", "after": ROOT}
        gen = work / "gen"
        generate(gen, notes=args.notes, seed=args.seed)
        shutil.rmtree(gen / ".remelink", ignore_errors=True)
        raw = sum(1 for p in (gen / "daily").rglob("*.md")) + \
            sum(1 for p in (gen / "resource").rglob("*.md"))
        nodes = sum(1 for _ in (gen / "digest").rglob("*.md"))
        results: dict[str, dict[str, Any]] = {}
        for version, code in codes.items():
            res: dict[str, Any] = {}
            res["demo"] = clean_row("demo", dream(code, DEMO, work / f"{version}-demo"))
            res["gen"] = clean_row("gen", dream(code, gen, work / f"{version}-gen"))
            res["gen-apart"] = clean_row("gen", dream(code, gen, work / f"{version}-gen",
                                                      receipt_with_write=False))
            clean = units_of(dream(code, gen, work / f"{version}-m"))
            res["mistakes"] = {}
            for mistake in MISTAKES:
                run = dream(code, gen, work / f"{version}-m", mistake=mistake)
                units = units_of(run)
                made = {json.dumps([p.unit["name"], p.unit["paths"]], ensure_ascii=False)
                        for p in run.policy.plays.values() if p.made}
                keys = [k for k in units if k in clean and k in made]
                extra = [units[k]["tokens"] - clean[k]["tokens"] for k in keys]
                turns = [units[k]["turns"] - clean[k]["turns"] for k in keys]
                names = {json.loads(k)[0] for k in keys}
                failed = sum(1 for u in run.envelope["data"]["units"]
                             if u["status"] != "done" and u["name"] in names)
                res["mistakes"][mistake] = (median(extra) if extra else 0,
                                            median(turns) if turns else 0, failed, len(keys))
            for label, src in (("demo", DEMO), ("gen", gen)):
                res[f"local-{label}"] = [local_links(code, src, work / f"{version}-l{c}", c)
                                         for c in (1, 8)]
            if not args.skip_latency:
                for c in (1, 8):
                    run = dream(code, gen, work / f"{version}-c{c}", concurrency=c,
                                latency=args.latency)
                    res[f"c{c}"] = (run.envelope["duration_ms"] / 1000, run.links_added,
                                    run.envelope["counts"]["units_integrated"],
                                    len(run.requests), sum(r.tokens for r in run.requests))
            results[version] = res
            print(version, json.dumps({k: v for k, v in res.items() if k != "mistakes"},
                                      default=str)[:2000], file=sys.stderr)

    imports = []
    for _ in range(3):
        proc = subprocess.run([python(), "-c", "import time; t = time.perf_counter(); "
                               "import litellm; print(time.perf_counter() - t)"],
                              capture_output=True, text=True, check=True,
                              env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True",
                                   "LITELLM_OFFLINE_MODE": "true"})
        imports.append(float(proc.stdout.strip().splitlines()[-1]))
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, check=True,
                          capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "remelink"], cwd=ROOT, check=True,
                           capture_output=True, text=True).stdout.strip()
    head += " with uncommitted changes" if dirty else ""
    saved = OUT / "llm-path.json"
    saved.parent.mkdir(parents=True, exist_ok=True)
    saved.write_text(json.dumps({"results": results, "sha": sha, "raw": raw, "nodes": nodes,
                                 "args": vars(args), "load": load, "imports": imports,
                                 "head": head}, default=list), encoding="utf-8")
    md = report(results, sha, raw, nodes, args, load, imports, head)
    print(md)
    write_section("llm-path", md, " ".join(["python bench/bench_llm_path.py",
                                            *(argv if argv is not None else sys.argv[1:])]))
    return 0


def targets(a: dict[str, Any]) -> str:
    """The issue's targets for a clean unit, checked on the after figures."""
    out = []
    for key, name in (("demo", "demo"), ("gen", "generated vault")):
        r = a[key]
        ratio = median(r["zh"]) / median(r["en"]) - 1 if r["zh"] and r["en"] else 0.0
        out.append(f"{name}: median {median(r['all']):,.0f} (< 4,000: "
                   f"{'met' if median(r['all']) < 4000 else 'NOT met'}), max {max(r['all']):,} "
                   f"(< 6,000: {'met' if max(r['all']) < 6000 else 'NOT met'}), first request "
                   f"max {max(r['first']):,} (< 2,500: "
                   f"{'met' if max(r['first']) < 2500 else 'NOT met'}), Chinese {ratio:+.0%} "
                   f"over English (<= 15 %: {'met' if ratio <= 0.15 else 'NOT met'})")
    return "Targets (after, clean units): " + "; ".join(out) + "."


def report(results: dict[str, dict[str, Any]], sha: str, raw: int, nodes: int,
           args: argparse.Namespace, load: float, imports: list[float], head: str) -> str:
    b, a = results["before"], results["after"]
    tree = f"this tree (commit `{head}`)"

    def row(which: str, label: str) -> list[str]:
        out = []
        for version, res in (("before", b), ("after", a)):
            r = res[which]
            out.append(f"| {label} | {version} | {r['clean']} of {r['units']} ({r['done']} done) | "
                       f"{stats(r['all'])} | {stats(r['en'])} | {stats(r['zh'])} | "
                       f"{stats(r['first'])} | {median(r['turns']) if r['turns'] else 0:.0f} / "
                       f"{max(r['turns'], default=0)} | {r['extract_per_note']:,.0f} | "
                       f"{r['tag_calls_per_node']:.2f} | {r['total']:,} |")
        return out

    lines = [
        "## LLM path: tokens, repairs, concurrency (issue 23)", "",
        f"Before = `{sha}` (exported), after = {tree}; both in one run on "
        f"copies of the same vaults, `remelink dream run` through litellm to a loopback provider "
        "whose model is bench/llm_policy.py (a decent tool-calling model: clean conversations, "
        "its write or edit as soon as it has seen the target, the receipt as the text of that "
        "message, as the prompt offers since issue 23, or, where it says so, in a turn of its "
        "own: code that does not judge that text asks for it). Tokens are cl100k prompt tokens "
        "counted "
        "by the provider per request (litellm.token_counter, gpt-3.5-turbo: messages and tool "
        f"schemas; offline, network during the run: {NETWORK if NETWORK else 'none'}). "
        f"Demo vault: fixtures/demo-vault (8 notes, EN and ZH); generated: bench/genvault.py "
        f"--notes {args.notes} --seed {args.seed} ({raw} raw notes in, {nodes} digest nodes "
        "for recall).", "",
        "Per unit: the clean ones (no refusal or repair in their conversation: the model's "
        "repairs are below).", "",
        "| vault | code | clean units | prompt tokens per clean unit: median / p90 / max | "
        "English | Chinese | first request | turns: median / max | extraction tokens per note | "
        "tagging calls per node | all prompt tokens |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        *row("demo", "demo"), *row("gen", "generated"),
        *(row("gen-apart", "generated, receipt in a turn of its own") if "gen-apart" in a
          else []), "",
        "Before, the code does not judge a receipt sent beside the write: that model still "
        "answers with it in a second turn, and its first text is resent (the 'generated' before "
        "row); the row 'receipt in a turn of its own' is the model the before prompt asks for, "
        "and compares the prompt alone. The repair rows for no_receipt and update_action: this "
        "model makes those mistakes in a receipt of its own turn, after the write, so they cost "
        "the turn the receipt beside the write saves as well.", "",
        targets(a), "",
        "**Repair cost per mistake class** (generated vault; the model makes the mistake once on "
        "every unit's first act where it can (a relation field or a link without .md needs a "
        "related node), then repairs it from what it is told; extra prompt tokens and turns per "
        "unit over the same unit's clean run, medians, over the units that made it; of those, the "
        "ones that still failed):", "",
        "| mistake | before: extra tokens | before: extra turns | before: failed | after: extra "
        "tokens | after: extra turns | after: failed |",
        "|---|---|---|---|---|---|---|",
    ]
    for mistake in MISTAKES:
        bt, bn, bf, bu = b["mistakes"][mistake]
        at, an, af, au = a["mistakes"][mistake]
        lines.append(f"| {mistake} | {bt:,.0f} | {bn:.0f} | {bf} of {bu} | {at:,.0f} | "
                     f"{an:.0f} | {af} of {au} |")
    if "c1" in a:
        lines += ["", f"**Concurrency** (generated vault, {args.latency * 1000:.0f} ms per "
                  "request; wall time of the run from its --json envelope, the litellm import "
                  "included; digest-to-digest links the run added):", "",
                  "| code | concurrency 1: seconds | concurrency 8: seconds | speed-up | links at "
                  "1 | links at 8 | units at 1 / 8 | requests at 1 / 8 | prompt tokens at 1 / 8 |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for version, res in (("before", b), ("after", a)):
            s1, l1, u1, r1, t1 = res["c1"]
            s8, l8, u8, r8, t8 = res["c8"]
            lines.append(f"| {version} | {s1:.1f} | {s8:.1f} | {s1 / s8:.1f}x | {l1} | {l8} | "
                         f"{u1} / {u8} | {r1} / {r8} | {t1:,} / {t8:,} |")
    lines += ["", "**Links at concurrency 1 and 8 with the local engine** (digest-to-digest links "
              "the run added / units integrated; before, at concurrency 8 the figure depends on "
              "which thread commits first, so it varies from run to run):", "",
              "| vault | code | concurrency 1 | concurrency 8 |", "|---|---|---|---|"]
    for label, name in (("demo", "demo"), ("gen", "generated")):
        for version, res in (("before", b), ("after", a)):
            (l1, u1), (l8, u8) = res[f"local-{label}"]
            lines.append(f"| {name} | {version} | {l1} / {u1} | {l8} / {u8} |")
    lines += ["", f"`import litellm` in a fresh process (offline switches set): "
              f"{', '.join(f'{x:.2f}' for x in imports)} s. Load average when the run started: "
              f"{load:.1f}; {machine()}.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
