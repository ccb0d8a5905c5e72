"""Notes nobody here wrote (issue 21): what `remelink dream run` keeps of them, read as their
author would.

Two vaults, each copied and dreamt once by the real CLI (local engine, default config):

- til-simonw: a fixed sample (seed 21) of N notes of one side (bench/splits.py; `--side
  heldout` is the result), laid out as `resource/<date>/<topic>-<name>.md`;
- the realistic vault of bench/realvault (`dev` tunes, `heldout` is the result).

Read from the digest it leaves:

- code kept: each note's code (its inline spans, and each fenced block's first line and its
  prompt lines `$ ...`) found in a node citing the note, as text and inside code (an inline
  span or a fenced block of the node);
- links kept: each markdown link of a note (outside code) written as the same link in a node
  citing the note, of the links whose words such a node holds;
- notes with a verdict (a unit cites them, or "nothing worth keeping" with a reason), and units
  failed (the engine's own guards refused its write: content lost until fixed);
- sentences kept: each note's prose sentences (four words or more, outside code, headings,
  quotes, tables and HTML) found, as words, in a node citing the note (the author's story
  included: a node keeps what the note teaches, so this is no target of 100 %, but a fall in
  it is content lost);
- titles that are labels: a node name (or description) that is one of the note's headings or a
  line label (`Rule of thumb:`), a person's name alone, or a single common word;
- titles cut: a name that ends on a function word (`... on one`, `... because`, `的`) or at the
  dot of an identifier (`date.`), or that leaves a bracket or backtick open;
- headings written: each `##`/`###` heading of a note whose section has a line kept (a prose
  sentence or a code item of it found in a node citing the note), and of those, how many such
  a node writes as a heading (any level, same words): a line keeps what it is about;
- notices kept: each update, note or warning the author adds to their own note (a paragraph
  labelled `Update:`, `**Note:**`, `Warning:`, `Update 17th January 2024:`, quoted or not, a
  paragraph saying `I was wrong`, or a quote that opens the note before its body) whose first
  sentence, label included, is found as words in a node citing the note;
- realistic vaults only: key facts kept (bench_coverage.kept), chatter nodes (nodes whose
  Sources cite only notes the key marks as chatter), related pairs linked
  (bench/quality/relations.py);
- seconds per note: wall time of the run / notes, and CPU time (user + system of the run, as the
  machine is shared) / notes.

    .venv/bin/python bench/bench_foreign.py til --side heldout --n 160 [--keep DIR]
    .venv/bin/python bench/bench_foreign.py realvault --side heldout [--keep DIR] [-v]
    .venv/bin/python bench/bench_foreign.py --write   # both, held out, into docs/benchmarks.md
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import splits  # noqa: E402

from bench.realvault import code_segments  # noqa: E402
from remelink.vault.links import WEB_LINK_RE  # noqa: E402

SEED = 21
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_SOURCES = re.compile(r"^## Sources\s*$", re.M)
_WIKILINK = re.compile(r"\[\[([^\]|#]+)")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)
_LABEL_LINE = re.compile(
    r"^\s*(?:[-*+]\s+|\d+[.)]\s+)?(?:\*\*)?([^:：\n`]{1,40}?)(?:\*\*)?\s*[:：]", re.M)
_FUNCTION_EN = frozenset(re.findall(r"\w+", """
    a an the of to in on at for by with from and or but because as that which who whose
    than then if when while into onto over under about after before via per is are was
    were be been being it its this these those our my your their his her we i you they
    one two not no so"""))
_FUNCTION_ZH = ("的", "了", "和", "与", "在", "把", "被", "对", "从", "因为", "所以", "但", "而")


@dataclass
class Node:
    path: str
    name: str
    description: str
    body: str          # before `## Sources`
    cites: set[str]    # raw notes its Sources link (workspace-relative, no `.md`)
    code: list[str]    # code segments of the body


@dataclass
class Figures:
    vault: str
    side: str
    notes: int
    seconds: float
    cpu: float = 0.0  # user + system CPU seconds of the run (the machine is shared)
    nodes: int = 0
    judged: int = 0
    code_items: int = 0
    code_text: int = 0
    code_code: int = 0
    link_items: int = 0  # markdown links of the notes (outside code)
    link_words: int = 0  # ... whose words are in a node citing the note
    link_kept: int = 0   # ... written there as the same link
    sentences: int = 0   # prose sentences of the notes (note_sentences)
    sentences_kept: int = 0  # ... found, as words, in a node citing the note
    prose: list[int] = field(default_factory=list)  # prose words of each node
    cited_notes: int = 0  # notes cited by a node
    labels: list[str] = field(default_factory=list)
    cut: list[str] = field(default_factory=list)
    extra: dict[str, str] = field(default_factory=dict)
    lost: list[str] = field(default_factory=list)  # key facts not kept (realistic vaults)
    headed: int = 0  # headings of the notes whose section has a line kept (note_headings)
    headed_written: int = 0  # ... written as a heading in a node citing the note
    notices: int = 0  # the authors' notices about their notes (note_notices)
    notices_kept: int = 0  # ... found with their label in a node citing the note


def _frontmatter(text: str) -> tuple[dict[str, str], str]:
    import yaml

    if not text.startswith("---\n"):
        return {}, text
    end = text.find("\n---", 4)
    if end < 0:
        return {}, text
    data = yaml.safe_load(text[4:end]) or {}
    return {k: str(v) for k, v in data.items() if v is not None}, text[end + 4:].lstrip("\n")


def read_digest(vault: Path) -> list[Node]:
    out = []
    for path in sorted((vault / "digest").rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        meta, body = _frontmatter(text)
        m = _SOURCES.search(body)
        head, sources = (body[:m.start()], body[m.end():]) if m else (body, "")
        cites = {t.strip().removesuffix(".md") for t in _WIKILINK.findall(sources)}
        out.append(Node(str(path.relative_to(vault)), meta.get("name", path.stem),
                        meta.get("description", ""), head, cites, code_segments(head)))
    return out


def note_code(text: str) -> list[str]:
    """Inline spans, each fenced block's first non-blank line and its `$ ` prompt lines."""
    items: list[str] = []
    fence = False
    first = False
    for line in text.split("\n"):
        if _FENCE.match(line):
            fence, first = not fence, not fence
            continue
        if fence:
            stripped = line.strip()
            if stripped and (first or stripped.startswith("$ ")):
                items.append(stripped)
                first = False
            continue
        for seg in code_segments(line):
            if seg.strip():
                items.append(seg.strip())
    return items


def note_links(text: str) -> list[tuple[str, str]]:
    """(words, link as written) of each markdown link or image outside code."""
    out: list[tuple[str, str]] = []
    fence = False
    for line in text.split("\n"):
        if _FENCE.match(line):
            fence = not fence
            continue
        if fence:
            continue
        for seg in code_segments(line):
            line = line.replace(f"`{seg}`", " ")
        out += [(m.group(1).replace("**", "").strip(), m.group(0))
                for m in WEB_LINK_RE.finditer(line) if m.group(1).strip()]
    return out


_MD_LINK = re.compile(r"\]\([^)\s]*\)")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\[`])")


def _words(text: str) -> str:
    """A text as its words, lower case (a markdown link as its words: `[x](url)` -> `x`)."""
    return " ".join(re.sub(r"[\W_]+", " ", _MD_LINK.sub("]", text).lower()).split())


def note_sentences(text: str) -> list[str]:
    """The prose sentences of a note: outside fenced and indented code, headings, quotes,
    tables, HTML and images, of four words or more, as their words (_words)."""
    out: list[str] = []
    fence = False
    for line in text.split("\n"):
        if _FENCE.match(line):
            fence = not fence
            continue
        if fence or not line.strip() or line.startswith(("#", "    ", "\t", ">", "|", "<", "!")):
            continue
        for sentence in _SENTENCE_END.split(line):
            words = _words(sentence)
            if len(words.split()) >= 4:
                out.append(words)
    return out


def note_headings(text: str) -> list[tuple[str, str]]:
    """(heading, the text of its section) of each `##`/`###` heading outside code; a section
    runs to the next heading of level 3 or less."""
    out: list[tuple[str, list[str]]] = []
    fence = False
    for line in text.split("\n"):
        if _FENCE.match(line):
            fence = not fence
        m = None if fence else re.match(r"^(#{1,3})\s+(.+?)\s*#*\s*$", line)
        if m:
            out.append((m.group(2), []) if len(m.group(1)) >= 2 else ("", []))
        elif out:
            out[-1][1].append(line)
    return [(h, "\n".join(lines)) for h, lines in out if h]


_NOTICE = re.compile(r"^(?:updated?|update\s+\d|note|warning|caution|important|correction|"
                     r"erratum|edit)\b[^:\n]{0,30}:\s*\S|\bI was (?:\w+ )?wrong\b", re.I)


def note_notices(text: str) -> list[str]:
    """The first sentence (label included, as words: _words) of each notice the author adds
    to their own note: a paragraph labelled `Update:`, `**Note:**`, `Warning:` or `Update 17th
    January 2024:` (quoted or not), one saying `I was wrong`, or a quote that opens the note
    (its first paragraph after the title)."""
    paras: list[str] = []
    current: list[str] = []
    fence = False
    for line in [*text.split("\n"), ""]:
        if _FENCE.match(line.lstrip("> ")):
            fence = not fence
            current.append("`code`")
            continue
        if fence:
            continue
        if not line.strip() or line.startswith("#"):
            if current:
                paras.append(" ".join(current))
                current = []
            if line.startswith("# "):
                paras.append("# title")
            continue
        current.append(line.strip())
    out: list[str] = []
    for i, para in enumerate(paras):
        quote = para.startswith(">")
        plain = re.sub(r"(?:^|\s)>(?=\s|$)", " ", para).replace("**", "").strip()
        opens = quote and (i == 0 or (i == 1 and paras[0] == "# title"))
        if plain.endswith("?") or not (opens or _NOTICE.search(plain)):
            continue
        first = _words(_SENTENCE_END.split(plain.split("`code`")[0])[0])  # up to a block
        if len(first.split()) >= 4:
            out.append(first)
    return out


def _squash(text: str) -> str:
    return " ".join(text.split())


_CODE_OUT = re.compile(r"^\s*(`{3,}|~{3,}).*?^\s*\1\s*$|`[^`\n]*`", re.M | re.S)


def prose_words(body: str) -> int:
    """Words of a node's prose (SPEC 7.1: about 50-200): fenced blocks and inline code left
    out (code does not count), CJK at 2.5 characters a word, as the local engine counts."""
    text = _CODE_OUT.sub(" ", body)
    cjk = len(re.findall(r"[\u4e00-\u9fff]", text))
    words = len(re.findall(r"[^\s\u4e00-\u9fff]*[A-Za-z0-9][^\s\u4e00-\u9fff]*", text))
    return words + round(cjk / 2.5)


def is_label(title: str, note_text: str, people: set[str]) -> bool:
    t = title.strip().strip("*").strip()
    if not t:
        return True
    low = t.casefold()
    headings = {_squash(h).strip("*").casefold() for h in _HEADING.findall(note_text)}
    labels = {_squash(h).strip("*").casefold() for h in _LABEL_LINE.findall(note_text)}
    if low in labels or (low in headings and len(t.split()) <= 4 and not _is_doc_title(
            t, note_text)):
        return True
    if t in people:
        return True
    return len(t.split()) == 1 and not re.search(r"[`._/\-0-9A-Z]", t[1:]) and \
        not re.search(r"[\u4e00-\u9fff]{4,}", t)


def _is_doc_title(title: str, note_text: str) -> bool:
    """The note's own first-level title names its topic: not a label."""
    m = re.search(r"^#\s+(.+?)\s*$", note_text, re.M)
    return bool(m) and _squash(m.group(1)).casefold() == _squash(title).casefold()


def is_cut(title: str, note_text: str) -> bool:
    """Cut inside a phrase: a bracket or backtick left open, a last word that needs what follows
    (`... on one`, `... because`, `...的`), or the note goes on after it with the dot of an
    identifier (`Never call date.` of `date.today()`)."""
    t = title.strip()
    if not t:
        return False
    if _is_doc_title(t, note_text):
        return False  # the author's own title, whole ("Installing flash-attn without compiling it")
    if t.count("`") % 2 or t.count("(") > t.count(")") or t.count("[") > t.count("]"):
        return True
    plain = _squash(note_text.replace("`", "").replace("**", ""))
    stem = t.rstrip(".")
    if t.endswith(".") and re.search(re.escape(stem) + r"\.[A-Za-z0-9_(]", plain):
        return True
    # A number with its unit ends a phrase ("... at 10 %", "... at 02:40"): it is a word here.
    words = re.findall(r"[A-Za-z']+|\d[\d.:,]*\s?%?|[\u4e00-\u9fff]+", t)
    if not words:
        return False
    last = words[-1]
    if last.casefold() in _FUNCTION_EN and not t.endswith((".", "?", "!", ")")):
        return True
    return last.endswith(_FUNCTION_ZH) and not t.endswith(("。", "）"))


PYTHONPATH = ""  # --baseline: the engine of another revision first on the path


def _run(vault: Path) -> tuple[float, float, dict[str, object]]:
    """Dream the vault once: wall seconds, CPU seconds (user + system of the run), state."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("REMELINK_")}
    if PYTHONPATH:
        env["PYTHONPATH"] = PYTHONPATH
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "remelink.cli", "dream", "run", "--vault",
                           str(vault), "--quiet", "--json"],
                          env=env, capture_output=True, text=True, timeout=7200,
                          cwd=vault.parent, check=False)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode not in (0, 1):
        raise RuntimeError(f"dream run failed: {done.stderr.strip()[-600:]}")
    state = json.loads((vault / ".remelink" / "state.json").read_text(encoding="utf-8"))
    return seconds, cpu, state


def _failed(state: dict[str, object]) -> str:
    """Units the engine failed to integrate (its own guards refused them): lost content."""
    units = state.get("units", {}).values()  # type: ignore[attr-defined]
    failed = [u for u in units if u.get("status") == "failed"]
    return f"{len(failed)} of {len(units)}"


def _judged(state: dict[str, object]) -> int:
    inputs = state["inputs"].values()  # type: ignore[attr-defined]
    return sum(1 for r in inputs if r.get("verdict") in ("units", "nothing") or r["units"])


def read_figures(fig: Figures, vault: Path, notes: dict[str, str],
                 people: set[str] | None = None) -> list[Node]:
    """Code kept, labels and cut titles, for `notes` (workspace path without `.md` -> text)."""
    nodes = read_digest(vault)
    fig.nodes = len(nodes)
    fig.prose = sorted(prose_words(n.body) for n in nodes)
    people = people or set()
    by_note: dict[str, list[Node]] = {}
    for node in nodes:
        for cited in node.cites:
            by_note.setdefault(cited, []).append(node)
    fig.cited_notes = sum(1 for rel in notes if by_note.get(rel))
    for rel, text in notes.items():
        citing = by_note.get(rel, [])
        bodies = [_squash(n.body) for n in citing]
        codes = [_squash(c) for n in citing for c in n.code]
        for item in note_code(text):
            want = _squash(item)
            fig.code_items += 1
            fig.code_text += any(want in b for b in bodies)
            fig.code_code += any(want in c for c in codes)
        said = " ".join(_words(n.body) for n in citing)
        for sentence in note_sentences(text):
            fig.sentences += 1
            fig.sentences_kept += sentence in said
        heads = {_squash(h).strip("*").casefold() for n in citing
                 for h in _HEADING.findall(n.body)}
        for heading, section in note_headings(text):
            if any(s in said for s in note_sentences(section)) or any(
                    _squash(c) in b for c in note_code(section) for b in bodies):
                fig.headed += 1
                fig.headed_written += _squash(heading).strip("*").casefold() in heads
        for notice in note_notices(text):
            fig.notices += 1
            fig.notices_kept += notice in said
        for words, link in note_links(text):
            fig.link_items += 1
            fig.link_words += any(_squash(words) in b for b in bodies)
            fig.link_kept += any(_squash(link) in b for b in bodies)
        for node in citing:
            for what, title in (("name", node.name), ("description", node.description)):
                if what == "description" and not title:
                    continue
                tag = f"{node.path} {what}: {title!r}"
                if is_label(title, text, people) and tag not in fig.labels:
                    fig.labels.append(tag)
                if is_cut(title, text) and tag not in fig.cut:
                    fig.cut.append(tag)
    return nodes


def til(side: splits.Side, n: int, keep: Path | None) -> Figures:
    chosen = sorted(random.Random(SEED).sample(splits.til_notes(side),
                                               min(n, len(splits.til_notes(side)))),
                    key=lambda t: t.path)
    with tempfile.TemporaryDirectory(prefix="remelink-foreign-") as tmp:
        vault = Path(tmp) / "til"
        (vault / ".remelink").mkdir(parents=True)
        (vault / ".remelink" / "config.yaml").write_text("model: local\n", encoding="utf-8")
        notes = {}
        for note in chosen:
            topic, name = note.path.split("/", 1)
            rel = f"resource/{note.date}/{topic}-{name.replace('/', '-')}"
            target = vault / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            text = note.file.read_text(encoding="utf-8")
            target.write_text(text, encoding="utf-8")
            notes[rel.removesuffix(".md")] = text
        seconds, cpu, state = _run(vault)
        fig = Figures("til-simonw", splits.label(side), len(chosen), seconds, cpu,
                      judged=_judged(state))
        fig.extra["units failed"] = _failed(state)
        nodes = read_figures(fig, vault, notes)
        topics = {_til_rel(note): note.path.split("/", 1)[0] for note in chosen}
        by_til = {note.path.removesuffix(".md"): _til_rel(note) for note in chosen}
        fig.extra.update(til_links(nodes, notes, topics, by_til))
        if keep is not None:
            shutil.rmtree(keep, ignore_errors=True)
            shutil.copytree(vault, keep)
    return fig


def _til_rel(note: splits.TilNote) -> str:
    topic, name = note.path.split("/", 1)
    return f"resource/{note.date}/{topic}-{name.replace('/', '-')}".removesuffix(".md")


_TIL_URL = re.compile(r"til\.simonwillison\.net/([\w-]+/[\w.-]+)")


def til_links(nodes: list[Node], notes: dict[str, str], topics: dict[str, str],
              by_til: dict[str, str]) -> dict[str, str]:
    """Links between nodes, read by the notes they cite: how many join notes of one tool (the
    til folder), and how many of the sampled notes that link each other (a til URL of the
    other) have nodes linked."""
    of_path = {n.path.removesuffix(".md"): n for n in nodes}
    pairs: set[tuple[str, str]] = set()
    for node in nodes:
        for target in _WIKILINK.findall(node.body):
            other = of_path.get(target.strip().removesuffix(".md"))
            if other is not None and other is not node:
                pairs |= {(a, b) for a in node.cites for b in other.cites if a != b}
    node_pairs = {frozenset((a, b)) for a, b in pairs}
    same = sum(1 for p in node_pairs if len({topics.get(x) for x in p}) == 1)
    linked = set()
    for rel, text in notes.items():
        for slug in _TIL_URL.findall(text):
            other = by_til.get(slug)
            if other and other != rel:
                linked.add(frozenset((rel, other)))
    found = sum(1 for p in linked if p in node_pairs)
    counts: dict[str, int] = {}
    for topic in topics.values():
        counts[topic] = counts.get(topic, 0) + 1
    total = len(topics) * (len(topics) - 1) // 2
    chance = sum(c * (c - 1) // 2 for c in counts.values()) / max(1, total)
    return {"note pairs joined by a node link": f"{len(node_pairs)}, {same} of them notes of "
                                                f"one tool ({same / max(1, len(node_pairs)):.0%}; "
                                                f"any two notes: {chance:.0%})",
            "notes that link each other, nodes linked": f"{found}/{len(linked)}"}


def realvault(side: splits.Side, keep: Path | None) -> Figures:
    from bench_coverage import kept, lost

    from bench.quality.relations import evaluate
    from bench.realvault import load

    key = load(splits.REALVAULT_DIRS[side])
    with tempfile.TemporaryDirectory(prefix="remelink-foreign-") as tmp:
        vault = Path(tmp) / "vault"
        shutil.copytree(key.root, vault, ignore=shutil.ignore_patterns(
            "key.yaml", "index", "state.json", "runs"))
        notes = {p.removesuffix(".md"): (vault / p).read_text(encoding="utf-8")
                 for p in key.notes}
        seconds, cpu, state = _run(vault)
        fig = Figures("realvault", splits.REALVAULT_DIRS[side], len(key.notes), seconds, cpu,
                      judged=_judged(state))
        fig.extra["units failed"] = _failed(state)
        nodes = read_figures(fig, vault, notes)
        chatter = {p.removesuffix(".md") for p, note in key.notes.items() if note.chatter}
        fig.extra["chatter nodes"] = str(sum(
            1 for node in nodes if node.cites and node.cites <= chatter))
        fig.extra["chatter node names"] = "; ".join(
            node.name for node in nodes if node.cites and node.cites <= chatter)
        fig.extra["facts kept"] = kept(key, vault)
        fig.lost = lost(key, vault)
        rel = evaluate(vault, splits.REALVAULT_DIRS[side], "auto")
        fig.extra["related pairs linked"] = ", ".join(
            f"{lang} {rel.related_linked[lang]}/{rel.related[lang]}" for lang in
            sorted(rel.related)) + (f"; all {sum(rel.related_linked.values())}/"
                                    f"{sum(rel.related.values())}")
        fig.extra["links across notes (keyed)"] = f"{rel.cross_links} ({rel.cross_keyed})"
        if keep is not None:
            shutil.rmtree(keep, ignore_errors=True)
            shutil.copytree(vault, keep)
    return fig


def report(fig: Figures, verbose: bool) -> str:
    items = max(1, fig.code_items)
    lines = [
        f"{fig.vault} ({fig.side}): {fig.notes} notes, {fig.nodes} nodes, "
        f"{fig.seconds:.0f} s ({fig.seconds / max(1, fig.notes):.2f} s/note), "
        f"CPU {fig.cpu:.0f} s ({fig.cpu / max(1, fig.notes):.2f} CPU-s/note)",
        f"  notes with a verdict: {fig.judged}/{fig.notes}",
        f"  code kept: {fig.code_items} items, as text {fig.code_text / items:.1%}, "
        f"as code {fig.code_code / items:.1%}",
        f"  links kept: {fig.link_items} in the notes, words in a node {fig.link_words}, "
        f"as the same link {fig.link_kept} ({fig.link_kept / max(1, fig.link_words):.1%} "
        f"of those)",
        f"  prose sentences kept: {fig.sentences_kept} of {fig.sentences} "
        f"({fig.sentences_kept / max(1, fig.sentences):.1%})",
        f"  label titles/descriptions: {len(fig.labels)}; cut: {len(fig.cut)}",
        f"  headings whose section has a line kept: {fig.headed}, written as a heading "
        f"{fig.headed_written} ({fig.headed_written / max(1, fig.headed):.1%})",
        f"  notices (updates, notes, warnings) of the notes: {fig.notices}, kept "
        f"{fig.notices_kept}",
    ]
    if fig.prose:
        words = fig.prose
        lines.append(
            f"  prose words per node: median {words[len(words) // 2]}, "
            f"p90 {words[min(len(words) - 1, (9 * len(words)) // 10)]}, max {words[-1]}, "
            f"over 200: {sum(1 for w in words if w > 200)}; nodes per cited note "
            f"{fig.nodes / max(1, fig.cited_notes):.2f}")
    lines += [f"  {k}: {v}" for k, v in fig.extra.items()]
    if verbose:
        lines += ["  labels:"] + [f"    {x}" for x in fig.labels]
        lines += ["  cut:"] + [f"    {x}" for x in fig.cut]
        if fig.lost:
            lines += ["  facts lost:"] + [f"    {x}" for x in fig.lost]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("vault", choices=("til", "realvault"), nargs="?")
    parser.add_argument("--side", choices=("tune", "heldout"), default="heldout")
    parser.add_argument("--n", type=int, default=160)
    parser.add_argument("--keep", type=Path)
    parser.add_argument("--read", type=Path,
                        help="read a til vault kept by an earlier run (no run)")
    parser.add_argument("--baseline", metavar="REV",
                        help="run the engine of git revision REV (extracted to a temp dir)")
    parser.add_argument("-v", action="store_true")
    parser.add_argument("--write", action="store_true",
                        help="both vaults, held out, into docs/benchmarks.md")
    args = parser.parse_args(argv)
    if args.write:
        write(args.n)
        return 0
    if args.vault is None:
        parser.error("name a vault (til or realvault), or --write")
    if args.baseline:
        global PYTHONPATH
        target = Path(tempfile.mkdtemp(prefix=f"remelink-{args.baseline}-"))
        archive = subprocess.run(["git", "-C", str(HERE.parent), "archive", args.baseline,
                                  "remelink"], capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
        PYTHONPATH = str(target)
    side = splits.HELD_OUT if args.side == "heldout" else splits.TUNING
    if args.read:
        notes = {p.relative_to(args.read).as_posix().removesuffix(".md"):
                 p.read_text(encoding="utf-8")
                 for p in sorted((args.read / "resource").rglob("*.md"))}
        fig = Figures(args.vault, "read", len(notes), 0.0)
        read_figures(fig, args.read, notes)
        print(report(fig, args.v))
        return 0
    fig = til(side, args.n, args.keep) if args.vault == "til" else realvault(side, args.keep)
    print(report(fig, args.v))
    return 0


def write(n: int) -> None:
    """Both vaults' held-out side, as the section `foreign-heldout` of docs/benchmarks.md."""
    import resource

    from _report import write_section

    def cpu() -> float:
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime

    rows = ["| vault (held out) | notes | with a verdict | nodes | nodes per note | code kept as "
            "text / as code | links kept (of those whose words are kept) | label titles | "
            "cut titles | s per note (CPU s per note) |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    extras = []
    for name in ("til", "realvault"):
        before = cpu()
        fig = (til(splits.HELD_OUT, n, None) if name == "til"
               else realvault(splits.HELD_OUT, None))
        spent = cpu() - before
        print(report(fig, False), flush=True)
        items = max(1, fig.code_items)
        rows.append(
            f"| {fig.vault} {fig.side} | {fig.notes} | {fig.judged}/{fig.notes} | {fig.nodes} "
            f"| {fig.nodes / max(1, fig.notes):.2f} | {fig.code_text / items:.1%} / "
            f"{fig.code_code / items:.1%} (of {fig.code_items}) | "
            f"{fig.link_kept / max(1, fig.link_words):.1%} ({fig.link_kept} of "
            f"{fig.link_words}; {fig.link_items} in the notes) | {len(fig.labels)} "
            f"| {len(fig.cut)} | {fig.seconds / max(1, fig.notes):.2f} "
            f"({spent / max(1, fig.notes):.2f}) |")
        extras += [f"- {fig.vault}: prose sentences kept {fig.sentences_kept} of "
                   f"{fig.sentences} ({fig.sentences_kept / max(1, fig.sentences):.1%})"]
        extras += [f"- {fig.vault}: {k}: {v}" for k, v in fig.extra.items() if v]
    write_section("foreign-heldout", f"""## Notes nobody here wrote: what dream run keeps

`remelink dream run` (local engine, default configuration) on notes written outside this
project, **held-out data only** (`bench/splits.py`): a fixed sample (seed {SEED}) of {n}
til-simonw notes whose SHA-1 path digit is 8-f (real how-to notes by one engineer), and the
realistic vault `bench/realvault/heldout` (with its answer key). *Code kept*: each note's code
(inline spans, each fenced block's first line and its `$` prompt lines) found in a node citing
the note, as text and inside code. *Links kept*: each markdown link of a note (outside code)
written as the same link in a node citing the note, of the links whose words such a node
holds. *Prose sentences kept*: each note's prose sentences (four words or more, outside code,
headings, quotes and tables) found as words in a node citing it; the author's story counts
too, so this is no target of 100 %. *Label titles*: a node name that is one of the note's
headings or line labels, a name alone or one common word. *Cut titles*: a name that ends on a
function word or leaves a bracket open. *s per note*: wall time of the run over notes (the load
average below says how shared the machine was); the CPU time does not depend on the load.

{chr(10).join(rows)}

{chr(10).join(extras)}""", f"python bench/bench_foreign.py --write --n {n}")


if __name__ == "__main__":
    sys.exit(main())
