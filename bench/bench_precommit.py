"""The pre-commit case of lint-links (five files of the generated path-10k vault, as
bench/bench_lint.py picks them), before and after lint-links started asking git about staged
deletions and renames: the same five files outside git, in a git repository with nothing else
staged, and with a staged rename and a staged deletion of cited notes. The "before" code is a
git ref of this repository (default `main`), extracted to bench/out/precommit/before and run by
the same interpreter; the two are run alternately, so that both see the same machine load.

    python bench/bench_precommit.py [--repeat N] [--before REF]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._report import OUT, ROOT, median, python, write_section
from bench.bench_lint import _precommit_files
from bench.genvault import generate

WORK = OUT / "precommit"
SEED = 42
ENTRY = "import sys; from remelink.lint import main; sys.exit(main(sys.argv[1:]))"


def extract(ref: str, into: Path) -> None:
    shutil.rmtree(into, ignore_errors=True)
    into.mkdir(parents=True)
    data = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "remelink"],
                          capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(into, filter="data")
    subprocess.run([python(), "-m", "compileall", "-q", str(into)], check=False,
                   capture_output=True)


def git(vault: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(vault), "-c", "user.email=b@example.org", "-c",
                    "user.name=b", *args], check=True, capture_output=True)


def run_once(code: Path, argv: list[str], cwd: Path) -> tuple[float, int]:
    env = {**os.environ, "PYTHONPATH": str(code), "PYTHONDONTWRITEBYTECODE": "1"}
    t = time.perf_counter()
    proc = subprocess.run([python(), "-c", ENTRY, *argv], cwd=cwd, env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - t, proc.returncode


def side_by_side(codes: dict[str, Path], argv: list[str], cwd: Path,
                 repeat: int) -> dict[str, tuple[float, int]]:
    walls: dict[str, list[float]] = {name: [] for name in codes}
    exits: dict[str, int] = {}
    names = list(codes)
    for i in range(repeat):
        for name in names if i % 2 == 0 else reversed(names):
            wall, code = run_once(codes[name], argv, cwd)
            walls[name].append(wall)
            exits[name] = code
    return {name: (median(walls[name]), exits[name]) for name in codes}


def _cited_daily_notes(vault: Path) -> list[str]:
    """Daily notes cited by digest nodes (that exist), most cited first."""
    import re
    from collections import Counter

    counts: Counter[str] = Counter()
    for node in sorted((vault / "digest").rglob("*.md")):
        for target in re.findall(r"\[\[(daily/[^\]|#]+\.md)", node.read_text(encoding="utf-8")):
            if (vault / target).is_file():
                counts[target] += 1
    return [t for t, _ in counts.most_common()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--before", default="main", help="git ref of the code before")
    args = parser.parse_args(argv)
    WORK.mkdir(parents=True, exist_ok=True)
    # Outside this repository's work tree, so that "no git repository" is what it says.
    scratch = Path(tempfile.mkdtemp(prefix="remelink-bench-precommit-"))
    vault = scratch / "path-10k"
    truth = generate(vault, notes=10_000, seed=SEED, style="path")
    five = _precommit_files(truth)
    extract(args.before, WORK / "before")
    subprocess.run([python(), "-m", "compileall", "-q", str(ROOT / "remelink")], check=False,
                   capture_output=True)
    codes = {"before": WORK / "before", "after": ROOT}
    load_start = os.getloadavg()[0]

    rows: list[tuple[str, dict[str, tuple[float, int]]]] = []
    rows.append(("5 files, no git repository", side_by_side(codes, five, vault, args.repeat)))
    git(vault, "init", "-q")
    git(vault, "add", "-A")
    git(vault, "commit", "-q", "-m", "vault")
    rows.append(("5 files, git repository, nothing else staged",
                 side_by_side(codes, five, vault, args.repeat)))
    # A cited daily note renamed and another deleted in the same commit.
    cited = _cited_daily_notes(vault)
    git(vault, "mv", cited[0], cited[0].replace(".md", "-renamed.md"))
    git(vault, "rm", "-q", cited[1])
    rows.append(("5 files, git repository, a rename and a deletion staged",
                 side_by_side(codes, five, vault, args.repeat)))
    only = side_by_side({"after": ROOT}, ["--staged"], vault, args.repeat)
    load_end = os.getloadavg()[0]
    found = subprocess.run([python(), "-c", ENTRY, "--format", "json", *five], cwd=vault,
                           env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True,
                           text=True, check=False).stdout
    gone_links = sum(1 for p in json.loads(found) if p["path"] not in five)
    shutil.rmtree(scratch, ignore_errors=True)

    lines = ["| case | before | after | after / before | exit before / after |",
             "|---|---|---|---|---|"]
    for case, result in rows:
        (b, eb), (a, ea) = result["before"], result["after"]
        lines.append(f"| {case} | {b:.3f} s | {a:.3f} s | {a / b:.2f} | {eb} / {ea} |")
    lines.append(f"| `--staged`, no files: only the links to the rename and the deletion | - | "
                 f"{only['after'][0]:.3f} s | - | - / {only['after'][1]} |")
    text = "\n".join([
        "### lint-links pre-commit: asking git about staged renames and deletions",
        "",
        f"`remelink-lint-links` on the five files of the pre-commit row above (path-10k, seed "
        f"{SEED}), median of {args.repeat} runs each, `before` = `{args.before}` and `after` = "
        "this tree run alternately by the same interpreter. In a git repository `after` runs "
        "`git diff --cached --name-status -M` once; with a rename or deletion staged it also "
        "reads the notes that name the old paths (a byte search first, so only those are "
        "parsed) and reports the links to them, which `before` does not see "
        f"({gone_links} such links in this vault). Load average "
        f"{load_start:.1f} at the start, {load_end:.1f} at the end.",
        "",
        *lines,
    ])
    write_section("precommit", text, "python bench/bench_precommit.py")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
