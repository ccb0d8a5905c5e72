"""Basic Memory's `search_notes` over one vault, for bench/bench_memory_search.py. Runs in
Basic Memory's own venv (Python >= 3.12, bench/out/basic-memory-venv):

    python basic_memory_search.py VAULT QUESTIONS.json ANSWERS.json WORK_DIR

Registers VAULT as a Basic Memory project named `bench` (its own `project add`, which indexes
the files; its config and database live under WORK_DIR/home, so nothing of the user's is
touched), then asks each question with the tool's defaults but `page_size=5` (on this host
its semantic search is unavailable, so search is keyword-only: SQLite FTS5) and writes the
file paths of each answer's results, in order, as JSON.
"""

import json
import subprocess
import sys
import time
from pathlib import Path


def main() -> int:
    vault, qfile, out, _work = sys.argv[1:5]  # WORK_DIR: HOME is set there by the caller
    questions = json.loads(Path(qfile).read_text(encoding="utf-8"))
    exe = Path(sys.executable).parent / "basic-memory"
    started = time.perf_counter()
    subprocess.run([str(exe), "project", "add", "bench", vault], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    indexed = time.perf_counter() - started
    from basic_memory.cli.commands.command_utils import run_with_cleanup
    from basic_memory.mcp.tools import search_notes

    async def ask_all() -> list[list[str]]:
        answers = []
        for q in questions:
            result = await search_notes(query=q, project="bench", output_format="json",
                                        page_size=5)
            if isinstance(result, str):  # an error message, or no result
                answers.append([])
                continue
            answers.append([r.get("file_path") or "" for r in result.get("results", [])][:5])
        return answers

    started = time.perf_counter()
    answers = run_with_cleanup(ask_all())
    asked = time.perf_counter() - started
    Path(out).write_text(json.dumps(answers), encoding="utf-8")
    print(json.dumps({"index_seconds": round(indexed, 1), "search_seconds": round(asked, 1)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
