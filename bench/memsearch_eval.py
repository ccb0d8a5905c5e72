"""The systems bench/bench_memory_search.py compares, each answering "the top 5 for this
question" over one vault, and the scoring rules (used only by the benchmark).

- `remelink search` (`remelink.search.search`, exactly what the command runs, --limit 5).
- `node-search` over the digest (`NodeIndex.search`, limit 5).
- plain BM25 over the raw notes: Okapi BM25 (k1 1.2, b 0.75, idf ln(1 + (N - df + .5) /
  (df + .5))) over whole daily/resource notes, words of letters and digits lowercased (CJK
  characters as single-character words), no stop list, no stemming: what a simple full-text
  search over the notes gives.
- Basic Memory (`basic-memory` from PyPI, in its own Python 3.12 venv): its `search_notes`
  over the same vault (bench/basic_memory_search.py runs there).

A hit for a question: a returned note is one of the notes that answer it, or a digest node
whose `## Sources` cite one of them.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BM_VENV = ROOT / "bench" / "out" / "basic-memory-venv"
BM_PYTHON312 = Path("/root/.pyenv/versions/3.12.1/bin/python")
BM_VERSION = "0.24.1"
_WORD_RE = re.compile(r"[^\W_]+")
_CJK_RE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_LINK_RE = re.compile(r"\[\[([^\]|#]+)(?:#[^\]|]*)?(?:\|[^\]]*)?\]\]")
_SOURCES_RE = re.compile(r"^##[ \t]+sources\b.*$", re.I | re.M)


def words(text: str) -> list[str]:
    out: list[str] = []
    for w in _WORD_RE.findall(text.lower()):
        if _CJK_RE.search(w):
            out += list(w)
        else:
            out.append(w)
    return out


class BM25:
    def __init__(self, docs: dict[str, str], k1: float = 1.2, b: float = 0.75) -> None:
        self.paths = list(docs)
        self.tf = [Counter(words(docs[p])) for p in self.paths]
        self.len = [sum(t.values()) for t in self.tf]
        self.avg = sum(self.len) / max(len(self.len), 1)
        df: Counter[str] = Counter()
        for t in self.tf:
            df.update(t.keys())
        n = len(self.paths)
        self.idf = {w: math.log(1 + (n - f + 0.5) / (f + 0.5)) for w, f in df.items()}
        self.k1, self.b = k1, b

    def top(self, query: str, k: int) -> list[str]:
        q = set(words(query))
        scores = []
        for i, tf in enumerate(self.tf):
            s = 0.0
            norm = self.k1 * (1 - self.b + self.b * self.len[i] / self.avg)
            for w in q:
                f = tf.get(w)
                if f:
                    s += self.idf[w] * f * (self.k1 + 1) / (f + norm)
            if s > 0:
                scores.append((-s, self.paths[i]))
        scores.sort()
        return [p for _, p in scores[:k]]


def raw_notes(vault: Path) -> dict[str, str]:
    out = {}
    for folder in ("daily", "resource"):
        for p in sorted((vault / folder).rglob("*")):
            if p.is_file() and p.suffix in (".md", ".txt"):
                out[p.relative_to(vault).as_posix()] = p.read_text(encoding="utf-8")
    return out


def digest_cites(vault: Path) -> dict[str, frozenset[str]]:
    """Digest node -> the notes its `## Sources` section links."""
    out = {}
    for p in sorted((vault / "digest").rglob("*.md")):
        text = p.read_text(encoding="utf-8")
        m = _SOURCES_RE.search(text)
        sources = text[m.end():] if m else ""
        nxt = re.search(r"^#{1,2}[ \t]", sources, re.M)
        if nxt:
            sources = sources[:nxt.start()]
        out[p.relative_to(vault).as_posix()] = frozenset(
            link.strip() for link in _LINK_RE.findall(sources))
    return out


@dataclass
class Score:
    questions: int = 0
    hits: int = 0
    rr: float = 0.0

    def add(self, ranked: list[str], wanted: set[str], cites: dict[str, frozenset[str]]) -> None:
        self.questions += 1
        for i, path in enumerate(ranked[:5]):
            if path in wanted or cites.get(path, frozenset()) & wanted:
                self.hits += 1
                self.rr += 1.0 / (i + 1)
                return

    def merge(self, other: Score) -> None:
        self.questions += other.questions
        self.hits += other.hits
        self.rr += other.rr

    @property
    def hit5(self) -> float:
        return self.hits / self.questions if self.questions else 0.0

    @property
    def mrr(self) -> float:
        return self.rr / self.questions if self.questions else 0.0


def remelink_search(vault: Path, questions: Iterable[str], links: bool = False) -> list[list[str]]:
    from remelink.config import load_settings
    from remelink.search import PassageIndex, search

    settings = load_settings(vault)
    out = []
    with PassageIndex(vault, settings) as index:
        for q in questions:
            out.append([h.hit.path for h in search(vault, settings, q, limit=5, links=links,
                                                  index=index).hits])
    return out


def node_search(vault: Path, questions: Iterable[str]) -> list[list[str]]:
    from remelink.config import load_settings
    from remelink.index import NodeIndex

    out = []
    with NodeIndex(vault, load_settings(vault)) as index:
        for q in questions:
            out.append([h.path for h in index.search(q, limit=5)])
    return out


def bm25(vault: Path, questions: Iterable[str]) -> list[list[str]]:
    engine = BM25(raw_notes(vault))
    return [engine.top(q, 5) for q in questions]


def basic_memory_ready() -> bool:
    return (BM_VENV / "bin" / "python").exists() and subprocess.run(
        [str(BM_VENV / "bin" / "python"), "-c", "import basic_memory"],
        capture_output=True, check=False).returncode == 0


def install_basic_memory() -> str | None:
    """Build the venv under bench/out/ (Python 3.12) once; None when ready, else why not."""
    if basic_memory_ready():
        return None
    if not BM_PYTHON312.exists():
        return f"no Python 3.12 at {BM_PYTHON312}"
    subprocess.run([str(BM_PYTHON312), "-m", "venv", str(BM_VENV)], check=False)
    proc = subprocess.run([str(BM_VENV / "bin" / "pip"), "install", "-q",
                           f"basic-memory=={BM_VERSION}"], capture_output=True, text=True,
                          check=False)
    if proc.returncode != 0 or not basic_memory_ready():
        return f"pip install basic-memory=={BM_VERSION} failed: {proc.stderr[-300:]}"
    return None


def basic_memory(vault: Path, questions: list[str], work: Path,
                 folders: tuple[str, ...] = ("daily", "resource", "digest")) -> list[list[str]]:
    """Basic Memory's search_notes (top 5) for each question, over a copy of the vault's
    notes in `folders` (it writes its own files into a project folder)."""
    import shutil

    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    copy = work / "vault"  # Basic Memory may write into its project's notes (permalinks)
    for folder in folders:
        if (vault / folder).is_dir():
            shutil.copytree(vault / folder, copy / folder)
    qfile = work / "questions.json"
    qfile.write_text(json.dumps(questions), encoding="utf-8")
    out = work / "answers.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REMELINK", "VIRTUAL_ENV"))}
    env["HOME"] = str(work / "home")
    env["LOGFIRE_IGNORE_NO_CONFIG"] = "1"
    proc = subprocess.run([str(BM_VENV / "bin" / "python"), str(HERE / "basic_memory_search.py"),
                           str(copy), str(qfile), str(out), str(work)],
                          capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"basic memory failed ({proc.returncode}): {proc.stderr[-3000:]}")
    answers: list[list[str]] = json.loads(out.read_text(encoding="utf-8"))
    return answers


if __name__ == "__main__":  # a quick look: python bench/memsearch_eval.py VAULT "question"
    sys.path.insert(0, str(ROOT))
    v = Path(sys.argv[1])
    for q in sys.argv[2:]:
        print(q, remelink_search(v, [q]), bm25(v, [q]))
