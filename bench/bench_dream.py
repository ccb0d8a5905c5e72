"""Speed of `remelink dream run` (SPEC §9).

(a) Local engine at scale: 1,000 units (250 generated daily notes, see crash_dream.write_notes)
    into a 10,000-node vault (bench/genvault.py generate(), 80 % digest), the index built
    beforehand as in a vault in use; the run is restricted to the new notes with
    --date/--scan-days. Wall time of the `remelink dream run` process. Target: under 2 minutes.
(b) An LLM through litellm's real request path against a loopback OpenAI-compatible server
    that answers after 200 ms: 100 units (one extraction call, then node_search, write and a
    receipt per unit) at `auto_dream.concurrency` 1 and 8. Wall-time ratio.

    python bench/bench_dream.py [--units 1000] [--nodes 10000] [--llm-units 100] [--skip-local]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

# Before anything can import litellm: no network fetch of its cost map, ever.
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
os.environ["LITELLM_OFFLINE_MODE"] = "true"
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from _report import machine, write_section  # noqa: E402
from crash_dream import remelink, run_env, write_notes  # noqa: E402

LATENCY = 0.2
HISTORY = """**Where the time goes, and what changed.** On 2026-11-29, before issues 12 and 13, the
lexical run took 110 s (108 ms per unit). Linking short units (issue 13) added searches: the
local engine now asks node_search about four times a unit (the unit's text, its name, the names
written in it, and its source notes, which recall nodes distilled from the same notes), about
14 ms each on this vault, and each commit updates the index (about 55 ms). A profile of 246
units (`cProfile` over `remelink dream run`): 44 % in node_search (Whoosh matchers and scoring),
20 % in index updates and the manifest, 22 % in the engine's own decisions. On 2026-12-02
`integrate` stopped running the LLM's first-message recall for the local engine (about 12 % of
a profiled run), and the scorer reads field lengths from a table decoded once per segment (941
searches: 14.3 s -> 13.2 s)."""


# -- (a) local engine at scale -----------------------------------------------------------------
def local_at_scale(work: Path, units: int, nodes: int, embedder: str) -> dict[str, Any]:
    from genvault import generate

    from remelink.config import load_settings
    from remelink.index import NodeIndex

    vault = work / "v10k"
    started = time.perf_counter()
    generate(vault, notes=round(nodes / 0.8), seed=11, digest_share=0.8)
    gen_seconds = time.perf_counter() - started
    n_nodes = sum(1 for _ in (vault / "digest").rglob("*.md"))
    (vault / ".remelink").mkdir(exist_ok=True)
    (vault / ".remelink" / "config.yaml").write_text(
        f"model: local\nauto_dream:\n  max_units: 50\n  batch_tokens: 1\n"
        f"local:\n  embedder: {embedder}\n", encoding="utf-8")
    # Four units a note, less the few the extractor merges or leaves out (about 2 %): a
    # little over `units` are extracted, and the report gives the count.
    notes = -(-units // 4) + units // 100
    write_notes(vault, notes, seed=5, start="2031-01-01")
    days = (notes + 3) // 4
    last = (dt.date(2031, 1, 1) + dt.timedelta(days=days - 1)).isoformat()
    started = time.perf_counter()
    with NodeIndex(vault, load_settings(vault, env={})) as index:
        index.refresh()
    index_seconds = time.perf_counter() - started
    cmd = [*remelink(), "dream", "run", "--vault", str(vault), "--json", "--quiet",
           "--date", last, "--scan-days", str(days), "--today", "2031-06-01"]
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=run_env(), check=False)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    data = json.loads(proc.stdout)
    counts = data["counts"]
    return {"nodes": n_nodes, "notes": notes, "gen_seconds": gen_seconds,
            "index_seconds": index_seconds,
            "seconds": seconds, "cpu_seconds": cpu, "exit": proc.returncode, "counts": counts,
            "errors": data["errors"][:20],
            "command": " ".join(["remelink", *cmd[len(remelink()):]]).replace(str(vault),
                                                                               "VAULT")}


# -- (b) litellm against a slow loopback server ------------------------------------------------
class SlowOpenAI(ThreadingHTTPServer):
    """Answers each chat completion after LATENCY seconds, from the conversation alone, so
    that parallel units can share it: extract -> units; a unit's first turn -> node_search;
    after the search -> write; after the write -> the receipt."""

    daemon_threads = True

    def __init__(self, paths: list[str]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.paths = paths
        self.requests = 0
        self.lock = threading.Lock()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


def _completion(*, tool: tuple[str, dict[str, Any]] | None = None,
                content: str | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool:
        message["tool_calls"] = [{"id": f"call_{tool[0]}", "type": "function",
                                  "function": {"name": tool[0],
                                               "arguments": json.dumps(tool[1])}}]
    return {"id": "chatcmpl-bench", "object": "chat.completion", "created": 0, "model": "bench",
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if tool else "stop"}],
            "usage": {"prompt_tokens": 1000, "completion_tokens": 50, "total_tokens": 1050}}


class _Handler(BaseHTTPRequestHandler):
    server: SlowOpenAI

    def do_POST(self) -> None:  # http.server's naming
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))))
        time.sleep(LATENCY)
        with self.server.lock:
            self.server.requests += 1
        payload = self.reply(body["messages"])
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def reply(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        from remelink.vault.paths import slugify

        first = next(m["content"] for m in messages if m["role"] == "user")
        if '"task": "extract"' in first:
            units = [{"name": f"Bench rule {i}", "bucket": "wiki",
                      "summary": f"Bench rule {i} holds for the service described in {p}.",
                      "paths": [p]} for i, p in enumerate(self.server.paths)]
            return _completion(content=json.dumps({"units": units}))
        name = re.search(r'"name": "([^"]+)"', first)
        path = re.search(r'"paths": \[\s*"([^"]+)"', first)
        assert name and path, first[:300]
        target = f"digest/wiki/{slugify(name.group(1))}.md"
        last = messages[-1]
        if last["role"] == "user":
            return _completion(tool=("node_search", {"query": name.group(1), "limit": 20}))
        if last.get("tool_call_id") == "call_node_search":
            content = (f"{name.group(1)} holds for the service.\n\n## Sources\n\n"
                       f"This rule was recorded in [[{path.group(1)}]].\n")
            return _completion(tool=("write", {"path": target, "name": name.group(1),
                                               "description": f"{name.group(1)} holds.",
                                               "content": content}))
        return _completion(content=json.dumps({"action": "CREATE", "target_path": target,
                                               "note": "bench"}))

    def log_message(self, *args: Any) -> None:
        pass


def llm_concurrency(work: Path, units: int, concurrency: int) -> dict[str, Any]:
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench-dummy")
    from remelink.config import load_settings
    from remelink.dream.run import DreamOptions, run_dream
    from remelink.models.litellm_model import LiteLLMModel

    vault = work / f"llm-{concurrency}"
    shutil.rmtree(vault, ignore_errors=True)
    (vault / ".remelink").mkdir(parents=True)
    (vault / ".remelink" / "config.yaml").write_text(
        f"model: openai/bench\nauto_dream:\n  steps: [dream_extract_step, dream_integrate_step, "
        f"dream_finish_step]\n  max_units: {units}\n  concurrency: {concurrency}\n",
        encoding="utf-8")
    paths = []
    for i in range(units):
        rel = f"daily/2031-02-01/bench-{i:03d}.md"
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(f"# Bench {i}\n\nWe decided on rule {i}.\n", encoding="utf-8")
        paths.append(rel)
    server = SlowOpenAI(paths)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        settings = replace(load_settings(vault, env={}), api_base=server.base, retries=1,
                           timeout=60.0)
        model = LiteLLMModel("openai/bench", settings)
        started = time.perf_counter()
        report = run_dream(vault, settings, model, DreamOptions(today="2031-06-01"))
        seconds = time.perf_counter() - started
    finally:
        server.shutdown()
        server.server_close()
    done = sum(1 for u in report.units if u.status == "done")
    return {"concurrency": concurrency, "seconds": seconds, "done": done,
            "requests": server.requests, "ok": report.ok}


def _local_section(args: argparse.Namespace, embedder: str, local: dict[str, Any]) -> str:
    c = local["counts"]
    actions = ", ".join(f"{k} {v}" for k, v in sorted(c["actions"].items()))
    verdict = "within" if local["seconds"] < 120 else "over"
    failures = "".join(f"\n- {e}" for e in local["errors"][:5])
    failures = f" ({failures}\n)" if failures else ""
    label = "the default config" if embedder == "auto" else "lexical only"
    return f"""**(a) Local engine, embedder `{embedder}` ({label}): {c['units_extracted']} units
into a {local['nodes']:,}-node vault.** The vault:
`genvault.generate(notes={round(args.nodes / 0.8)}, seed=11, digest_share=0.8)`
({local['gen_seconds']:.0f} s to generate, index built beforehand in
{local['index_seconds']:.0f} s) plus {local['notes']} generated daily notes of about four units
each (`crash_dream.write_notes`), one note per extraction batch.
Command: `{local['command']}`.

**Wall time {local['seconds']:.0f} s ({local['cpu_seconds']:.0f} s of CPU) for
{c['units_integrated']} units integrated
({local['seconds'] / max(c['units_integrated'], 1) * 1000:.0f} ms per unit), {verdict} the
2-minute target**; exit {local['exit']}; actions: {actions}; {c['nodes_created']} nodes
created, {c['nodes_updated']} updated, {c['units_failed']} units failed{failures}."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--units", type=int, default=1000)
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--llm-units", type=int, default=100)
    parser.add_argument("--embedder", default="auto,none",
                        help="comma-separated: auto (the default config: the sentence embedder "
                             "when installed) and/or none (lexical only)")
    parser.add_argument("--skip-local", action="store_true")
    parser.add_argument("--skip-llm", action="store_true")
    parser.add_argument("--no-report", action="store_true")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="remelink-bench-dream-"))
    sections = []
    try:
        if not args.skip_llm:
            import litellm  # noqa: F401  (imported once, outside the timings)

            serial = llm_concurrency(work, args.llm_units, 1)
            parallel = llm_concurrency(work, args.llm_units, 8)
            ratio = serial["seconds"] / parallel["seconds"]
            print(json.dumps({"serial": serial, "parallel": parallel, "ratio": ratio}),
                  flush=True)
            sections.append(f"""**(b) An LLM through litellm, 200 ms per model call.** A loopback
OpenAI-compatible server (http.server on 127.0.0.1) answers every chat completion after 200 ms;
{args.llm_units} units, each: node_search, write, receipt (3 calls), after one extraction call.
Steps extract, integrate, finish.

| concurrency | wall time | units done | model calls |
|---|---|---|---|
| 1 | {serial['seconds']:.1f} s | {serial['done']} | {serial['requests']} |
| 8 | {parallel['seconds']:.1f} s | {parallel['done']} | {parallel['requests']} |

**Speed-up at concurrency 8: {ratio:.1f}x** (the floor for 3 sequential 200 ms calls per unit
is {args.llm_units * 3 * LATENCY:.0f} s serial, {args.llm_units * 3 * LATENCY / 8:.1f} s at 8).""")
        if not args.skip_local:
            local_parts = []
            for embedder in args.embedder.split(","):
                local = local_at_scale(work, args.units, args.nodes, embedder)
                shutil.rmtree(work / "v10k", ignore_errors=True)
                print(json.dumps(local), flush=True)
                local_parts.append(_local_section(args, embedder, local))
            sections[:0] = local_parts
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if not args.no_report and sections:
        command = "python bench/bench_dream.py " + " ".join(argv or sys.argv[1:])
        sections.append(HISTORY)
        write_section("dream", "## dream run: speed\n\n" + "\n\n".join(sections) +
                      f"\n\nMachine: {machine()}.", command.strip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
