"""The local engine (`model: local`, the default): offline, deterministic, no key.

It is a `ChatModel` like any LLM backend and plays the same protocol: it reads its task from the
conversation, calls the same tools (node_search, read, write, edit, frontmatter_update) through
the same loop and guards, and answers with the same receipts. Its state is derived from the
conversation on every turn, so one instance serves parallel units safely.

Integration: recall (node_search) -> read the likely matches and probe the new slug -> decide
same_abstraction / related / unrelated (decide.py) -> CREATE, CORROBORATE, REFINE or CORRECT
with bucket-shaped, additive writing (write.py) -> receipt.
Extraction: read the changed notes -> units from their structure (extract.py) -> `{units: [...]}`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from remelink.config import Settings
from remelink.models.base import AssistantTurn, Message, ToolCall, ToolSpec
from remelink.models.local import decide, embed, extract, write
from remelink.models.local import text as tx
from remelink.vault.notes import Note, parse_text
from remelink.vault.paths import slugify

_JSON_BLOCK_RE = re.compile(r"```json\s*\n(.*?)```", re.S)
_HIT_RE = re.compile(r"^\d+\.\s+\[(-?[\d.]+)\]\s+(\S.*?)\s*$")
_CONTINUE_RE = re.compile(r"call read with start_line=(\d+) to continue\]\s*$")
_TRAILER_RE = re.compile(r"\n\[(?:\.\.\. truncated|lines \d+-\d+ of \d+)[^\n]*\]\s*$")
MAX_READS = 6
MAX_RELATED = 3


@dataclass(frozen=True)
class HitInfo:
    path: str
    score: float
    name: str
    description: str


@dataclass
class _Call:
    id: str
    name: str
    args: dict[str, Any]
    result: str | None


def _task(messages: Sequence[Message]) -> dict[str, Any]:
    for message in messages:
        if message.get("role") == "user":
            m = _JSON_BLOCK_RE.search(str(message.get("content", "")))
            if m:
                try:
                    data = json.loads(m.group(1))
                except ValueError:
                    return {}
                return data if isinstance(data, dict) else {}
            return {}
    return {}


def _calls(messages: Sequence[Message]) -> list[_Call]:
    calls: dict[str, _Call] = {}
    order: list[str] = []
    for message in messages:
        if message.get("role") == "assistant":
            for raw in message.get("tool_calls") or []:
                fn = raw.get("function", {})
                try:
                    args = json.loads(fn.get("arguments") or "{}")
                except ValueError:
                    args = {}
                calls[raw["id"]] = _Call(raw["id"], fn.get("name", ""), args, None)
                order.append(raw["id"])
        elif message.get("role") == "tool" and message.get("tool_call_id") in calls:
            calls[message["tool_call_id"]].result = str(message.get("content", ""))
    return [calls[i] for i in order]


def _parse_hits(result: str) -> list[HitInfo]:
    hits: list[HitInfo] = []
    path = name = description = ""
    score = 0.0
    for line in result.splitlines():
        m = _HIT_RE.match(line)
        if m:
            if path:
                hits.append(HitInfo(path, score, name, description))
            score, path, name, description = float(m.group(1)), m.group(2), "", ""
        elif line.strip().startswith("name:"):
            name = line.split(":", 1)[1].strip()
        elif line.strip().startswith("description:"):
            description = line.split(":", 1)[1].strip()
    if path:
        hits.append(HitInfo(path, score, name, description))
    return hits


def _turn(calls: list[tuple[str, dict[str, Any]]], prefix: str) -> AssistantTurn:
    return AssistantTurn(tool_calls=tuple(
        ToolCall(id=f"{prefix}{i}", name=name, arguments=json.dumps(args, ensure_ascii=False))
        for i, (name, args) in enumerate(calls, 1)))


def _answer(data: dict[str, Any]) -> AssistantTurn:
    return AssistantTurn(text=json.dumps(data, ensure_ascii=False))


def _strip_trailer(text: str) -> str:
    return _TRAILER_RE.sub("", text)


class LocalModel:
    """The built-in engine behind the `ChatModel` seam."""

    def __init__(self, settings: Settings, *, idf: Callable[[str], float] | None = None) -> None:
        self.name = "local"
        self.settings = settings
        self.idf: Callable[[str], float] = idf or decide.default_idf
        self.embedder = embed.make(settings.embedder)

    def bind_index(self, index: Any) -> None:
        """Use the node index's term statistics for IDF weighting (read-only)."""
        idf = getattr(index, "idf", None)
        if callable(idf):
            self.idf = idf

    # -- the seam ----------------------------------------------------------------------------
    def complete(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> AssistantTurn:
        task = _task(messages)
        calls = _calls(messages)
        if task.get("task") == "extract":
            return self._extract(task, calls)
        if task.get("task") == "tag":
            return self._tag(task, calls)
        if task.get("task") == "topics":
            return self._topics(task)
        if "bucket" in task and "paths" in task:
            return self._integrate(task, calls, messages)
        return AssistantTurn(text="The local engine found no task it knows in this conversation.")

    # -- auto_tag and topics -------------------------------------------------------------------
    def _tag(self, task: dict[str, Any], calls: list[_Call]) -> AssistantTurn:
        path = str(task.get("path", ""))
        read = next((c for c in calls if c.name == "read" and c.result is not None), None)
        if read is None:
            return _turn([("read", {"path": path})], "t")
        if read.result is None or read.result.startswith("Error:"):
            return _answer({"tags": []})
        note = parse_text(path, _strip_trailer(read.result))
        existing = [t for t in task.get("existing_tags") or [] if isinstance(t, str)]
        max_tags = int(task.get("max_tags") or 3)
        return _answer({"tags": tx.entity_tags(note.text, existing, max_tags)})

    @staticmethod
    def _topics(task: dict[str, Any]) -> AssistantTurn:
        candidates = [c for c in task.get("candidates") or [] if isinstance(c, dict)]
        ranked = sorted(candidates, key=lambda c: (-int(c.get("sources") or 1), str(c.get("title"))))
        topics = []
        for c in ranked[: int(task.get("count") or 3) * 2]:
            paths = [p for p in c.get("paths") or [] if isinstance(p, str)]
            title, reason = str(c.get("title", "")), str(c.get("reason", ""))
            topics.append({"title": title, "reason": reason,
                           "evidence": paths[0] if paths else "",
                           "keywords": tx.keywords(f"{title} {reason}"), "paths": paths})
        return _answer({"topics": topics})

    # -- extraction --------------------------------------------------------------------------
    def _extract(self, task: dict[str, Any], calls: list[_Call]) -> AssistantTurn:
        paths = [p for p in task.get("changed_paths", []) if isinstance(p, str)]
        texts: dict[str, list[str]] = {p: [] for p in paths}
        pending: list[tuple[str, dict[str, Any]]] = []
        done: set[str] = set()
        for call in calls:
            if call.name != "read" or call.result is None:
                continue
            path = str(call.args.get("path", ""))
            if path not in texts:
                continue
            if call.result.startswith("Error:"):
                done.add(path)
                continue
            more = _CONTINUE_RE.search(call.result)
            texts[path].append(_strip_trailer(call.result))
            if more:
                pending.append(("read", {"path": path, "start_line": int(more.group(1))}))
            else:
                done.add(path)
        asked = {str(c.args.get("path")) for c in calls if c.name == "read"}
        fresh = [("read", {"path": p}) for p in paths if p not in asked]
        if fresh or pending:
            return _turn(fresh + pending, f"x{len(calls)}-")
        notes: list[tuple[Note, dict[str, object]]] = []
        for path in paths:
            if path not in done or not texts[path]:
                continue
            note = parse_text(path, "\n".join(texts[path]))
            try:
                from remelink.vault import frontmatter

                meta: dict[str, object] = dict(frontmatter.load(note))
            except Exception:
                meta = {}
            notes.append((note, meta))
        units = extract.extract(notes, max_units=int(task.get("max_units") or 0),
                                similar=self._similar)
        return _answer({"units": units})

    def _similar(self, a: str, b: str) -> float:
        lexical = decide.cosine(decide.content_terms(a), decide.content_terms(b), self.idf)
        if self.embedder is None:
            return lexical
        try:
            semantic = self.embedder.similarity(a, [b])[0]
        except RuntimeError:
            return lexical
        return decide.BLEND_WEIGHT * semantic + (1 - decide.BLEND_WEIGHT) * lexical

    # -- integration -------------------------------------------------------------------------
    def _integrate(self, unit: dict[str, Any], calls: list[_Call],
                   messages: Sequence[Message]) -> AssistantTurn:
        name = str(unit.get("name", "")).strip()
        summary = str(unit.get("summary", "")).strip()
        points = [str(p) for p in unit.get("points") or []]
        bucket = str(unit.get("bucket", "wiki"))
        paths = [str(p) for p in unit.get("paths") or []]
        lang = "zh" if tx.is_cjk_text(f"{name} {summary} {' '.join(points)}") else "en"
        unit_text = " ".join([name, summary, *(p.partition(": ")[2] or p for p in points)])
        digest = self.settings.folders.digest
        searches = [c for c in calls if c.name == "node_search"]
        reads = [c for c in calls if c.name == "read"]
        writes = [c for c in calls if c.name in ("write", "edit", "frontmatter_update")]
        repair = messages[-1].get("role") == "user" and len(calls) > 0

        if not searches:
            queries = [f"{name} {summary}"[:1500]]
            if name and len(summary) > 40:
                queries.append(name)
            limit = self.settings.auto_dream.node_search_limit
            return _turn([("node_search", {"query": q, "limit": limit}) for q in queries], "s")

        hits = self._hits(searches)
        slug = slugify(name)
        own = f"{digest}/{bucket}/{slug}.md"
        if not reads:
            ranked = self._rank(unit_text, hits)
            wanted = [h.path for h, s in ranked[:MAX_READS] if s >= decide.T_RELATED_LEXICAL / 2]
            probes = [p for p in self._slug_candidates(digest, bucket, slug) if p not in wanted]
            return _turn([("read", {"path": p}) for p in wanted + probes[:3]], "r")

        notes: dict[str, Note] = {}
        missing: set[str] = set()
        for call in reads:
            path = str(call.args.get("path", ""))
            if call.result is None:
                continue
            if call.result.startswith("Error:"):
                if "does not exist" in call.result:
                    missing.add(path)
                continue
            notes[path] = parse_text(path, _strip_trailer(call.result))

        if writes:
            failed = [c for c in writes if c.result and c.result.startswith("Error:")]
            target = str(writes[-1].args.get("path", ""))
            if not target.endswith(".md"):
                target += ".md"
            if repair:
                fix = self._repair(messages, target, notes, paths, lang, calls)
                if fix is not None:
                    return fix
            if failed:
                return AssistantTurn(text=f"The write was refused: {failed[-1].result}")
            action = self._planned_action(messages)
            return _answer({"action": action, "target_path": target,
                            "note": self._note(action, lang)})

        return self._act(unit, unit_text, name, summary, points, bucket, paths, lang, hits, notes,
                         missing, own, messages)

    def _hits(self, searches: list[_Call]) -> list[HitInfo]:
        best: dict[str, HitInfo] = {}
        for call in searches:
            for hit in _parse_hits(call.result or ""):
                if hit.path not in best or hit.score > best[hit.path].score:
                    best[hit.path] = hit
        return sorted(best.values(), key=lambda h: -h.score)

    def _rank(self, unit_text: str, hits: list[HitInfo]) -> list[tuple[HitInfo, float]]:
        u = decide.content_terms(unit_text)
        scored = [(h, decide.cosine(u, decide.content_terms(f"{h.name}. {h.description}"), self.idf))
                  for h in hits]
        return sorted(scored, key=lambda hs: (-hs[1], -hs[0].score))

    @staticmethod
    def _slug_candidates(digest: str, bucket: str, slug: str) -> list[str]:
        return [f"{digest}/{bucket}/{slug}.md"] + [f"{digest}/{bucket}/{slug}-{i}.md" for i in (2, 3)]

    def _compare(self, unit_text: str, note: Note) -> decide.Comparison:
        from remelink.vault import frontmatter

        try:
            meta = frontmatter.load(note)
        except Exception:
            meta = {}
        head = f"{meta.get('name', '')}. {meta.get('description', '')}"
        body = _prose(note.body)
        semantic = None
        if self.embedder is not None:
            try:
                semantic = self.embedder.similarity(unit_text, [f"{head} {body[:1000]}"])[0]
            except RuntimeError:
                semantic = None
        return decide.compare(unit_text, head, body, idf=self.idf, semantic=semantic)

    def _act(self, unit: dict[str, Any], unit_text: str, name: str, summary: str,
             points: list[str], bucket: str, paths: list[str], lang: str, hits: list[HitInfo],
             notes: dict[str, Note], missing: set[str], own: str,
             messages: Sequence[Message]) -> AssistantTurn:
        digest = self.settings.folders.digest + "/"
        compared: list[tuple[str, decide.Comparison]] = []
        for path, note in notes.items():
            if path.startswith(digest):
                compared.append((path, self._compare(unit_text, note)))
        compared.sort(key=lambda pc: -pc[1].score)
        same = [(p, c) for p, c in compared if c.label == "same_abstraction"]
        names = {h.path: h.name for h in hits}
        related = [(p, names.get(p) or p) for p, c in compared if c.label == "related"]
        # Hits not read can still be related on their name and description alone.
        for hit, score in self._rank(unit_text, hits):
            if len(related) >= MAX_RELATED * 2 or score < decide.T_RELATED_LEXICAL:
                break
            if hit.path not in notes and all(hit.path != p for p, _ in related):
                related.append((hit.path, hit.name or hit.path))
        titles = _evidence_titles(messages)
        sources = [write.SourceInfo(p, titles.get(p, "")) for p in paths]
        today = _today(messages)
        if same:
            target, comp = same[0]
            note = notes[target]
            related = [(p, n) for p, n in related if p != target and f"[[{p}" not in note.body]
            return self._update(target, note, comp, name, summary, points, bucket, lang,
                                related[:MAX_RELATED], sources, unit, today)
        path = own if own in missing else next(
            (p for p in self._slug_candidates(self.settings.folders.digest, bucket, slugify(name))
             if p in missing), None)
        if path is None:
            return AssistantTurn(text=f"No free file name for {name!r}: {own} and its variants exist.")
        kind = str(unit.get("kind") or "")
        roles = [(sources[0], kind or _default_role(bucket))] + \
            [(s, "corroborate") for s in sources[1:]]
        body = write.node_body(bucket, name, summary, points, lang, related[:MAX_RELATED], roles)
        description = _description(summary, lang)
        metadata = {"kind": _kind(bucket, kind)}
        return AssistantTurn(
            text="CREATE",
            tool_calls=(ToolCall("w1", "write", json.dumps(
                {"path": path, "name": name, "description": description, "content": body,
                 "metadata": metadata}, ensure_ascii=False)),))

    def _update(self, target: str, note: Note, comp: decide.Comparison, name: str, summary: str,
                points: list[str], bucket: str, lang: str, related: list[tuple[str, str]],
                sources: list[write.SourceInfo], unit: dict[str, Any], today: str) -> AssistantTurn:
        body = note.body.replace("\r\n", "\n")
        cited = {s.path for s in sources if f"[[{s.path}" in body}
        new_sources = [s for s in sources if s.path not in cited]
        statement = summary
        if comp.conflict_kind in ("number", "date", "negation") and comp.old_sentence:
            action = "CORRECT"
            source = (new_sources or sources)[0].path
            line = write.correction_line(statement, comp.old_sentence, source, today, lang)
            new_body = write.insert_after_sentence(body, comp.old_sentence, line)
            roles = [(s, "correct") for s in new_sources]
        else:
            novel = self._novel_points(points or [summary], body)
            if novel:
                action = "REFINE"
                steps = [p.partition(": ")[2] for p in novel if p.startswith("step: ")]
                rest = [p.partition(": ")[2] or p for p in novel if not p.startswith("step: ")]
                new_body = body
                if steps:
                    appended = write.append_steps(new_body, steps, lang)
                    if appended is None:
                        rest = steps + rest
                    else:
                        new_body = appended
                if rest:
                    new_body = write.insert_before_sources(new_body,
                                                           write.refine_paragraph(rest, lang))
                roles = [(s, "refine") for s in new_sources]
            else:
                action = "CORROBORATE"
                new_body = body
                roles = [(s, "corroborate") for s in new_sources]
        if related:
            new_body = write.insert_before_sources(new_body, write.related_sentence(related, lang))
        new_body = write.add_sources(new_body, [write.source_sentence(s, r, lang) for s, r in roles])
        if new_body == body:
            return _answer({"action": action, "target_path": target,
                            "note": self._note(action, lang)})
        if note.newline == "\r\n":
            new_body = new_body.replace("\n", "\r\n")
            body = note.body
        old, new = write.edit_span(body if note.newline != "\r\n" else note.body, new_body)
        return AssistantTurn(text=action, tool_calls=(ToolCall("e1", "edit", json.dumps(
            {"path": target, "old": old, "new": new}, ensure_ascii=False)),))

    def _novel_points(self, points: list[str], body: str) -> list[str]:
        node_terms = decide.content_terms(_prose(body))
        novel = []
        for p in points:
            text = p.partition(": ")[2] or p
            terms = decide.content_terms(text)
            if terms and decide.coverage(terms, node_terms, self.idf) < 1 - decide.NOVELTY_REFINE:
                novel.append(p)
        return novel


    @staticmethod
    def _planned_action(messages: Sequence[Message]) -> str:
        for message in reversed(messages):
            if message.get("role") == "assistant" and message.get("tool_calls"):
                text = str(message.get("content") or "").strip()
                if text in ("CREATE", "CORROBORATE", "REFINE", "CORRECT"):
                    return text
        return "CORROBORATE"

    @staticmethod
    def _note(action: str, lang: str) -> str:
        notes = {
            "en": {"CREATE": "New node with its sources and related links.",
                   "CORROBORATE": "Same abstraction again: added the new source.",
                   "REFINE": "Added the new detail and its source.",
                   "CORRECT": "Recorded the correction, keeping the earlier claim visible."},
            "zh": {"CREATE": "新建节点，附来源和相关链接。",
                   "CORROBORATE": "同一抽象再次出现：补充了新来源。",
                   "REFINE": "补充了新细节及其来源。",
                   "CORRECT": "记录了更正，并保留了原先的说法。"},
        }
        return notes[lang][action]

    def _repair(self, messages: Sequence[Message], target: str, notes: dict[str, Note],
                paths: list[str], lang: str, calls: list[_Call]) -> AssistantTurn | None:
        feedback = str(messages[-1].get("content", ""))
        missing = [p for p in paths if f"[[{p}]]" in feedback and "does not cite" in feedback]
        if not missing or sum(1 for c in calls if c.id.startswith("fix")) >= 1:
            return None
        sentences = [write.source_sentence(write.SourceInfo(p, ""), "fact", lang) for p in missing]
        return _turn([("edit", {"path": target, "old": "## Sources",
                                "new": "## Sources\n\n" + "\n".join(sentences)})], "fix")


def _prose(body: str) -> str:
    """The body without its Sources section and without link syntax."""
    m = re.search(r"^##[ \t]+sources\b.*$", body, re.I | re.M)
    text = body[:m.start()] if m else body
    return tx.clean_statement(text.replace("\n", " "))


def _description(summary: str, lang: str) -> str:
    first = tx.sentences(tx.clean_statement(summary))
    text = first[0] if first else summary
    return text[:240].rstrip() or summary[:240]


def _kind(bucket: str, kind: str) -> str:
    if bucket == "wiki" and kind in ("lesson", "finding", "decision"):
        return "observation"
    return write.KIND_BY_BUCKET[bucket]


def _default_role(bucket: str) -> str:
    return {"procedure": "procedure", "personal": "preference"}.get(bucket, "fact")


_TODAY_RE = re.compile(r"^(?:Today|今天)[:：]\s*(\d{4}-\d{2}-\d{2})", re.M)
_EVIDENCE_RE = re.compile(r"^### (\S+)\n(.*?)(?=^### |\Z)", re.S | re.M)


def _first_user(messages: Sequence[Message]) -> str:
    return next((str(m.get("content", "")) for m in messages if m.get("role") == "user"), "")


def _today(messages: Sequence[Message]) -> str:
    m = _TODAY_RE.search(_first_user(messages))
    if m:
        return m.group(1)
    import time

    return time.strftime("%Y-%m-%d")


def _evidence_titles(messages: Sequence[Message]) -> dict[str, str]:
    """The first heading of each source excerpt in the prompt: what the source is about."""
    titles: dict[str, str] = {}
    for m in _EVIDENCE_RE.finditer(_first_user(messages)):
        heading = re.search(r"^#\s+(.+?)\s*$", m.group(2), re.M)
        if heading:
            titles[m.group(1)] = tx.clean_statement(heading.group(1))
    return titles
