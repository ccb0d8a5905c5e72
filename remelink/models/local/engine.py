"""The local engine (`model: local`, the default): offline, deterministic, no key.

It is a `ChatModel` like any LLM backend and plays the same protocol: it reads its task from the
conversation, calls the same tools (node_search, read, write, edit, frontmatter_update) through
the same loop and guards, and answers with the same receipts. Its state is derived from the
conversation on every turn, so one instance serves parallel units safely.

Integration: recall (node_search) -> read the likely matches and probe the new slug -> decide
same_abstraction / related / unrelated (decide.py) -> CREATE, CORROBORATE, REFINE or CORRECT
with bucket-shaped, additive writing (write.py) -> receipt.
Extraction: read the changed notes -> units from their structure (extract.py) -> pages of
`{units, verdicts, more}`: a verdict for every note, no unit dropped.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from remelink import language
from remelink.agent import MAX_CALLS_PER_TURN
from remelink.config import Settings
from remelink.models.base import AssistantTurn, Message, ToolCall, ToolSpec
from remelink.models.local import (
    decide,
    embed,
    extract,
    fenced,
    relate,
    revise,
    shapes,
    status,
    tags,
    weblinks,
    write,
)
from remelink.models.local import points as pts
from remelink.models.local import text as tx
from remelink.models.local.protocol import (
    CONTINUE_RE,
    Call,
    HitInfo,
    answer,
    calls_of,
    evidence_titles,
    parse_hits,
    stated_language,
    strip_trailer,
    task_of,
    today_of,
    turn,
)
from remelink.vault.notes import Note, parse_text
from remelink.vault.paths import slugify

MAX_READS = 6
PROBES = 4  # file names probed per turn for a new node
PROJECT_PROBE_TURNS = 2  # extraction turns spent looking for the vault's status nodes
SOURCE_READS = 4  # nodes recalled by the unit's source notes, read to see if they cite them
LINKED_QUERIES = 6  # notes linked with the unit's notes, searched for the nodes citing them
LINKED_READS = 8  # ... and the nodes read to see whether they do
NAMED_READS = 3  # nodes recalled by the unit's identifiers and names, read to compare them
SEMANTIC_TOP = 3  # candidates (best lexical first) that the optional embedder also scores
# Above any cosine of two unit vectors (float32 rounding included): a comparison scored with it
# is one no real embedding can beat.
COSINE_CEILING = 1.001
MEMO_SIZE = 4  # extractions kept for the pages of a batch (a few batches run at once at most)


def _document(unit: dict[str, Any], bucket: str, points: Sequence[str]) -> bool:
    """A runbook, a document's topic, a unit of many points: never one statement said again."""
    return str(unit.get("kind") or "") in ("procedure", "topic") or bucket == "procedure" or \
        len(points) > 2


class LocalModel:
    """The built-in engine behind the `ChatModel` seam."""

    # No context window: extraction reads every changed note in one pass (dream/extract.py).
    extraction_budget = 0
    # The recall shown in the first message saves an LLM a turn; this engine runs its own
    # searches (several, phrased for decisions and links), so integrate does not run that one.
    prompt_recall = False
    # Nor does it pay for tokens: the first message carries every linked note of the unit, each
    # of which it searches (prompts.linked_rows bounds them for an LLM).
    prompt_budget = False
    # A status line said alone in its run is held in the checkpoint (units.HELD_KIND) and given
    # back to later extractions: a workstream forms when a later night's note reports on it.
    takes_held = True

    def __init__(self, settings: Settings, *, idf: Callable[[str], float] | None = None) -> None:
        self.name = "local"
        self.settings = settings
        self._idf: Callable[[str], float] = idf or decide.default_idf
        self._bound = threading.local()  # a worker thread's own view (bind_index)
        self.embedder = embed.make(settings.embedder)
        self._memo: dict[str, tuple[list[dict[str, object]], dict[str, str]]] = {}
        self._memo_lock = threading.Lock()

    def notices(self) -> list[str]:
        """What the user must hear about this engine after a run: the embedder `auto` asked
        for was missing or failed to load (embed.problem), so decisions were lexical."""
        line = embed.problem(self.settings.embedder, self.embedder)
        return [line] if line else []

    @property
    def idf(self) -> Callable[[str], float]:
        bound: Callable[[str], float] | None = getattr(self._bound, "idf", None)
        return bound if bound is not None else self._idf

    def bind_index(self, index: Any) -> None:
        """Use the node index's term statistics for IDF weighting (read-only), memoised from
        now on, for the calling thread: units integrated side by side each bind at their
        start, so that each decides on the statistics of the vault it starts on, as one at a
        time would (a view shared by the threads held what the first lookup of a term saw)."""
        idf = getattr(index, "idf", None)
        if callable(idf):
            # Memoised until bound again: the index empties its own cache on every commit, and
            # a committed node moves a document frequency by one, which no decision notices.
            self._idf = self._bound.idf = decide.memo(idf)

    # -- the seam ----------------------------------------------------------------------------
    def complete(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> AssistantTurn:
        task = task_of(messages)
        calls = calls_of(messages)
        if task.get("task") == "extract":
            return self._extract(task, calls, messages)
        if task.get("task") == "tag":
            return self._tag(task, calls)
        if task.get("task") == "topics":
            return self._topics(task)
        if "bucket" in task and "paths" in task:
            return self._integrate(task, calls, messages)
        return AssistantTurn(text="The local engine found no task it knows in this conversation.")

    # -- auto_tag and topics -------------------------------------------------------------------
    def _tag(self, task: dict[str, Any], calls: list[Call]) -> AssistantTurn:
        path = str(task.get("path", ""))
        read = next((c for c in calls if c.name == "read" and c.result is not None), None)
        if read is None:
            return turn([("read", {"path": path})], "t")
        if read.result is None or read.result.startswith("Error:"):
            return answer({"tags": []})
        note = parse_text(path, strip_trailer(read.result))
        existing = [t for t in task.get("existing_tags") or [] if isinstance(t, str)]
        max_tags = int(task.get("max_tags") or 3)
        return answer({"tags": tags.entity_tags(_own_words(note.text), existing, max_tags)})

    @staticmethod
    def _topics(task: dict[str, Any]) -> AssistantTurn:
        candidates = [c for c in task.get("candidates") or [] if isinstance(c, dict)]
        ranked = sorted(candidates,
                        key=lambda c: (-int(c.get("sources") or 1), str(c.get("title"))))
        topics = []
        for c in ranked[: int(task.get("count") or 3) * 2]:
            paths = [p for p in c.get("paths") or [] if isinstance(p, str)]
            title, reason = str(c.get("title", "")), str(c.get("reason", ""))
            topics.append({"title": title, "reason": reason,
                           "evidence": paths[0] if paths else "",
                           "keywords": tx.keywords(f"{title} {reason}"), "paths": paths})
        return answer({"topics": topics})

    # -- extraction --------------------------------------------------------------------------
    def _extract(self, task: dict[str, Any], calls: list[Call],
                 messages: Sequence[Message]) -> AssistantTurn:
        """Read every note of the batch (a bounded number of reads a turn, continuing long
        notes), then answer one page of `{units, verdicts, more}`: a verdict for every note
        read, units paged by the task's `max_units`. A note that cannot be read gets no verdict:
        the pipeline keeps it pending."""
        paths = [p for p in task.get("changed_paths", []) if isinstance(p, str)]
        texts: dict[str, list[str]] = {p: [] for p in paths}
        done: set[str] = set()
        unreadable: set[str] = set()
        want: dict[str, int | None] = {}  # path -> line to read from (None: the start)
        for call in calls:
            path = str(call.args.get("path", ""))
            if call.name != "read" or call.result is None or path not in texts:
                continue
            if call.result.startswith("Error: not run"):
                continue  # over the loop's calls-per-turn bound: asked again below
            if call.result.startswith("Error:"):
                if "not run" in call.result:  # over the calls-per-turn bound: ask again
                    start = call.args.get("start_line")
                    want[path] = int(start) if isinstance(start, int) else None
                else:
                    unreadable.add(path)
                    want.pop(path, None)
                continue
            texts[path].append(strip_trailer(call.result))
            rest = CONTINUE_RE.search(call.result)
            if rest:
                want[path] = int(rest.group(1))
            else:
                want.pop(path, None)
                done.add(path)
        asked = {str(c.args.get("path")) for c in calls if c.name == "read"}
        reads = [("read", {"path": p} if want.get(p) is None else
                  {"path": p, "start_line": want[p]})
                 for p in paths if p in want or p not in asked]
        if reads:
            return turn(reads[:MAX_CALLS_PER_TURN], f"x{len(calls)}-")
        readable = [p for p in paths if p in done and p not in unreadable]
        notes = _parsed(readable, texts)
        known, probes = self._projects_known(notes, calls)
        if probes:  # is a status node kept for these keys already? (status.projects)
            return turn([("frontmatter_read", {"path": p}) for p in probes[:MAX_CALLS_PER_TURN]],
                        f"p{len(calls)}-")
        held = [h for h in task.get("held") or [] if isinstance(h, dict)]
        units, skipped = self._extraction(notes, texts, known, held)
        verdicts: list[dict[str, str]] = []
        cited = {p for u in units for p in u["paths"]}  # type: ignore[attr-defined]
        for path in readable:
            if path in cited:
                verdicts.append({"path": path, "verdict": "units"})
            else:
                verdicts.append({"path": path, "verdict": "nothing",
                                 "reason": skipped.get(path) or "nothing worth keeping"})
        page = int(task.get("max_units") or 0)
        after = _continue_after(messages)
        shown = units[after:after + page] if page else units[after:]
        more = bool(page) and after + page < len(units)
        return answer({"units": shown, "verdicts": verdicts, "more": more})

    def _projects_known(self, notes: list[tuple[Note, dict[str, object]]], calls: list[Call]
                        ) -> tuple[set[str], list[str]]:
        """The status keys of these notes that the vault keeps a status node for (its
        frontmatter `project` is the key), and the file names still to look at to know: each
        key's name, then its numbered variants while another node holds the name. Only keys
        that fewer than two notes report on need it, in at most PROJECT_PROBE_TURNS turns (a
        key not looked at by then counts as no project: its line stays where it was)."""
        from remelink.vault import frontmatter

        digest = self.settings.folders.digest
        asked = [c for c in calls if c.name == "frontmatter_read"]
        seen = {str(c.args.get("path", "")): c.result for c in asked
                if c.result is not None and not c.result.startswith("Error: not run")}
        known: set[str] = set()
        probes: list[str] = []
        spent = len({c.id.rsplit("-", 1)[0] for c in asked}) >= PROJECT_PROBE_TURNS
        for normal, key in extract.lone_status_keys(notes).items():
            for path, _ in _project_paths(digest, key):
                result = seen.get(path)
                if result is None:
                    if not spent:
                        probes.append(path)
                    break
                if result.startswith("Error:"):
                    break  # no node there: none further on either
                try:
                    meta = frontmatter.load(parse_text(
                        path, f"---\n{strip_trailer(result)}\n---\n"))
                except Exception:
                    meta = {}
                held = str(meta.get(status.PROJECT_KEY) or "")
                if held and status.normal_key(held) == normal:
                    known.add(normal)
                    break
        return known, list(dict.fromkeys(probes))

    def _extraction(self, notes: list[tuple[Note, dict[str, object]]],
                    texts: dict[str, list[str]], known: set[str],
                    held: Sequence[dict[str, Any]] = ()
                    ) -> tuple[list[dict[str, object]], dict[str, str]]:
        """The units and skip reasons of these notes, memoised by content: the pages of one
        batch are one extraction (a pure function of the notes, of the status keys the vault
        keeps a node for and of the held status lines, so the memo is safe to share between
        parallel conversations)."""
        key = hashlib.sha256(json.dumps([[[n.path, texts[n.path]] for n, _ in notes],
                                         sorted(known), list(held)],
                                        ensure_ascii=False).encode("utf-8")).hexdigest()
        with self._memo_lock:
            hit = self._memo.get(key)
        if hit is not None:
            return hit
        result = extract.extract(notes, same=self._same_statement, projects=known, held=held)
        with self._memo_lock:
            self._memo[key] = result
            while len(self._memo) > MEMO_SIZE:
                self._memo.pop(next(iter(self._memo)))
        return result

    def _same_statement(self, a: str, b: str) -> bool:
        use = self.embedder is not None and decide.uses_embedder(decide.language(a))
        if use and self.embedder is not None and self.embedder.ready():
            # Embedding is most of a run's time, and most pairs fail even with the highest
            # cosine there is: judged with that ceiling first, they are told apart without
            # embedding anything (the answer is the one the real cosine would give).
            best = decide.compare(a, b, b, idf=self.idf, semantic=COSINE_CEILING)
            if best.conflict_kind is not None or decide.classify(best) != "same_abstraction":
                return False
        semantic = self._semantic if use else None
        return extract.same_statement(a, b, idf=self.idf, semantic=semantic)

    # -- integration -------------------------------------------------------------------------
    def _integrate(self, unit: dict[str, Any], calls: list[Call],
                   messages: Sequence[Message]) -> AssistantTurn:
        # The unit's words, without the links they may hold: the engine writes its own.
        name = tx.unlinked(str(unit.get("name", "")).strip())
        summary = tx.unlinked(str(unit.get("summary", "")).strip())
        # The lead-in a line is said under is no point of what it says (`cued` below).
        # (Nor is a link of the notes: weblinks puts it back on its words in what is written.)
        points = [tx.unlinked(str(p)) for p in unit.get("points") or []
                  if pts.parse(str(p)).role not in ("under", "link")]
        bucket = str(unit.get("bucket", "wiki"))
        paths = [str(p) for p in unit.get("paths") or []]
        linked = relate.linked_entries(unit.get("linked_notes"))
        # Written in the language the prompt states (evidence.language_of: what the guard
        # expects); without one, judged the same way on the unit's own prose.
        lang = stated_language(messages) or language.detect(
            language.prose(f"{name} {summary} {' '.join(points)}"))
        # What the unit states, for comparisons: its abstraction (name and summary: for a
        # runbook, its trigger). Reasons ("..., because X"), steps and supporting points are
        # refinements: they decide REFINE over CORROBORATE, not which node is the same.
        unit_text = decide.text_of(name, tx.main_clause(summary))
        digest = self.settings.folders.digest
        searches = [c for c in calls if c.name == "node_search"]
        reads = [c for c in calls if c.name == "read"]
        writes = [c for c in calls if c.name in ("write", "edit", "frontmatter_update")]
        repair = messages[-1].get("role") == "user" and len(calls) > 0

        if not searches:
            # The steps and points name what the unit touches (`idempotency key`): they recall
            # the nodes it should link, which the name and summary alone may not mention.
            details = " ".join(p.partition(": ")[2] or p for p in points)
            queries = [f"{name} {summary} {details}".strip()[:1500]]
            # A line's unit is named after the line, and its names are in the query of its
            # names below: it searches neither again (searches are most of its cost).
            echo = str(unit.get("kind") or "") == extract.ECHO
            if name and len(summary) > 40 and not echo:
                queries.append(name)
            phrases = tx.name_phrases(" ".join([summary, *points])) if not echo else []
            if phrases:
                # Names written in the text (`Space Script`, `block-anchors`): recall the nodes
                # they may name, which a long query's rarest terms can miss.
                queries.append(" ".join(phrases)[:1500])
            source = self._source_query(paths, messages)
            if source:
                # Nodes distilled from the same notes: their Sources sentences carry the notes'
                # paths and titles, which a short unit's own words may share with nothing.
                queries.append(source)
            # Nodes that name the unit's identifiers and names, in either language.
            by_name = relate.named_query(" ".join([name, summary, *points]))
            if by_name:
                queries.append(by_name)
            # Nodes citing the notes that the unit's notes link (or are linked from): their
            # Sources carry those notes' paths.
            queries += [_linked_query(n.path) for n in linked[:LINKED_QUERIES]]
            limit = self.settings.auto_dream.node_search_limit
            return turn([("node_search", {"query": q, "limit": limit}) for q in queries], "s")

        hits = self._hits(searches)
        own = f"{digest}/{bucket}/{slugify(name)}.md"
        revises = unit.get("revises") if isinstance(unit.get("revises"), dict) else None
        if not reads:
            ranked = self._rank(unit_text, hits)
            related_t = decide.thresholds(False, lang)[1]
            # A unit that changes a value ("design docs can be two pages now", "封版改成四天")
            # may share few words with the node it changes, whose value it replaces: any node
            # among the best that shares a term and states another value of the same counted
            # thing (`1 page` / `2 pages`) is read.
            changes = _changes_values(f"{name} {summary}")
            wanted = [h.path for h, s in ranked[:MAX_READS] if s >= related_t / 2 or
                      (s > 0 and _other_value(changes, f"{h.name}. {h.description}"))]
            # A statement (a unit that is no document) may say again a line of a node that its
            # name and description do not announce (an incident's lesson, a document's rule):
            # the index, which reads bodies, ranks that node for the statement's own words.
            # Its best hits fill the reads left. (A document's unit is compared with what nodes
            # are named: filled for those too, the reads only added links through a shared
            # name, "also names bin/bash", on the til tune sample.)
            if not _document(unit, bucket, points):
                own_words = parse_hits(searches[0].result or "")
                wanted += [h.path for h in own_words
                           if h.path not in wanted][:max(0, MAX_READS - len(wanted))]
            source = self._source_query(paths, messages)
            by_source = [h.path for c in searches if c.args.get("query") == source
                         for h in parse_hits(c.result or "")]
            wanted += [p for p in by_source if p not in wanted][:SOURCE_READS]
            by_name = relate.named_query(" ".join([name, summary, *points]))
            wanted += [h.path for c in searches if by_name and c.args.get("query") == by_name
                       for h in parse_hits(c.result or "")[:NAMED_READS] if h.path not in wanted]
            by_link = [h.path for q in (_linked_query(n.path) for n in linked[:LINKED_QUERIES])
                       for c in searches if c.args.get("query") == q
                       for h in parse_hits(c.result or "")[:3]]
            wanted += [p for p in dict.fromkeys(by_link) if p not in wanted][:LINKED_READS]
            choices = _project_paths(digest, name) if unit.get("kind") == status.KIND else \
                self._create_candidates(digest, bucket, name, summary)
            probes = [p for p, _ in choices if p not in wanted]
            if revises is not None:  # the node to update is known: read it, create nothing
                hinted = str(revises.get("target"))
                wanted, probes = [hinted, *(p for p in wanted if p != hinted)], []
            probes = probes[:PROBES]
            wanted = wanted[:MAX_CALLS_PER_TURN - len(probes)]
            return turn([("read", {"path": p}) for p in wanted + probes], "r")

        # A node longer than one read is read on to its end before anything is decided or
        # written: an edit made on its first page put a second `## Sources` in the middle of
        # a long node and dropped the first (a refusal, three times over: the unit failed).
        pages: dict[str, dict[int, str]] = {}
        more: dict[str, int] = {}
        missing: set[str] = set()
        for call in reads:
            path = str(call.args.get("path", ""))
            if call.result is None:
                continue
            if call.result.startswith("Error:"):
                if "does not exist" in call.result:
                    missing.add(path)
                continue
            start = call.args.get("start_line")
            start = start if isinstance(start, int) else 1
            if start == 1:  # read again from the top: the pages read before are stale
                pages[path] = {}
                more.pop(path, None)
            pages.setdefault(path, {})[start] = strip_trailer(call.result)
            rest = CONTINUE_RE.search(call.result)
            if rest:
                more[path] = max(more.get(path, 0), int(rest.group(1)))
        asked = {(str(c.args.get("path", "")), c.args.get("start_line")) for c in reads}
        unread = [(p, n) for p, n in more.items() if (p, n) not in asked]
        if unread and not writes:
            return turn([("read", {"path": p, "start_line": n})
                         for p, n in unread[:MAX_CALLS_PER_TURN]], f"c{len(calls)}-")
        notes: dict[str, Note] = {
            path: parse_text(path, "\n".join(text for _, text in sorted(parts.items())))
            for path, parts in pages.items()}

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
            action, classes, links = self._planned_action(messages)
            return answer({"action": action, "target_path": target,
                            "note": self._note(action, lang, links), "classification": classes})

        return self._act(unit, unit_text, name, summary, points, bucket, paths, lang, hits, notes,
                         missing, own, messages)

    @staticmethod
    def _source_query(paths: Sequence[str], messages: Sequence[Message]) -> str:
        """A query made of the unit's source notes (paths and titles)."""
        titles = evidence_titles(messages)
        parts = [p for path in paths for p in (path.rsplit("/", 1)[-1].removesuffix(".md"),
                                                 path.rsplit("/", 2)[-2] if "/" in path else "",
                                                 titles.get(path, "")) if p]
        return " ".join(parts)[:1500]

    def _hits(self, searches: list[Call]) -> list[HitInfo]:
        best: dict[str, HitInfo] = {}
        for call in searches:
            for hit in parse_hits(call.result or ""):
                if hit.path not in best or hit.score > best[hit.path].score:
                    best[hit.path] = hit
        return sorted(best.values(), key=lambda h: -h.score)

    def _rank(self, unit_text: str, hits: list[HitInfo]) -> list[tuple[HitInfo, float]]:
        u = decide.bag(unit_text)
        scored = [(h, decide.cosine(u, decide.bag(f"{h.name}. {h.description}"), self.idf))
                  for h in hits]
        return sorted(scored, key=lambda hs: (-hs[1], -hs[0].score))

    @staticmethod
    def _create_candidates(digest: str, bucket: str, name: str, summary: str
                           ) -> list[tuple[str, str]]:
        """(path, title) choices for a new node, best first: the unit's name; when another
        node has that name already, a longer title from the summary, which usually tells the
        two apart; then numbered variants of it."""
        titles = [name]
        longer = tx.title_from(summary, max_words=18, cut_words=14)
        if longer and slugify(longer) != slugify(name):
            titles.append(longer)
        out = [(f"{digest}/{bucket}/{slugify(t)}.md", t) for t in titles]
        last = titles[-1]
        # A numbered name stays within the slug length limit, or it would not be a slug.
        out += [(f"{digest}/{bucket}/{slugify(last, max_length=80 - len(str(i)) - 1)}-{i}.md",
                 last) for i in range(2, 20)]
        return out

    def _compare(self, unit_text: str, note: Note, paths: Sequence[str] = (), *,
                 semantic: bool = True, links: Sequence[str] = (),
                 document: bool = False, cued: bool = False,
                 whole_note: bool = False) -> decide.Comparison:
        meta = _meta(note)
        head = decide.text_of(str(meta.get("name") or ""), str(meta.get("description") or ""))
        embed = self._semantic if semantic and self.embedder is not None else None
        # In any language, the embedder may tell whether a unit saying it is said again states
        # a line of a node in the other language (never blended into its score).
        across = self._semantic if self.embedder is not None else None
        body = write.without_related_sentences(note.body.replace("\r\n", "\n"))
        # The unit's notes link a note this node cites: the later note refers to the earlier.
        linked = any(f"[[{p}" in body for p in links if p not in paths)
        return decide.compare(unit_text, head, body, idf=self.idf, semantic=embed,
                              unit_paths=paths, linked=linked, document=document, cued=cued,
                              whole_note=whole_note, across_semantic=across)

    def _semantic(self, text: str, others: Sequence[str]) -> list[float]:
        if self.embedder is None:
            raise RuntimeError("no embedder")
        return self.embedder.similarity(text, others)

    def _act(self, unit: dict[str, Any], unit_text: str, name: str, summary: str,
             points: list[str], bucket: str, paths: list[str], lang: str, hits: list[HitInfo],
             notes: dict[str, Note], missing: set[str], own: str,
             messages: Sequence[Message]) -> AssistantTurn:
        digest = self.settings.folders.digest + "/"
        revises = unit.get("revises")
        if isinstance(revises, dict) and str(revises.get("target")) in notes and not (
                str(unit.get("kind") or "") == status.KIND and
                _keeps(notes[str(revises["target"])], name)):
            # (A status line's edited note updates its dated entry there: `_status`.)
            return self._revise(revises, unit_text, name, summary, points, bucket, paths, lang,
                                notes[str(revises["target"])], messages)
        return self._decide_and_write(unit, unit_text, name, summary, points, bucket, paths,
                                      lang, hits, notes, missing, own, messages, digest)

    def _revise(self, revises: dict[str, Any], unit_text: str, name: str, summary: str,
                points: list[str], bucket: str, paths: list[str], lang: str, note: Note,
                messages: Sequence[Message]) -> AssistantTurn:
        """The unit restates what its edited note said before: update that node (SPEC §9.3),
        a CORRECT when a fact changed, else an ordinary update of it."""
        target = str(revises["target"])
        titles = evidence_titles(messages)
        sources = write.sources_of(paths, titles, points)
        classes = {target: "same_abstraction"}
        today = today_of(messages)
        if not revises.get("changed"):
            comp = replace(self._compare(unit_text, note, paths, semantic=False),
                           conflict_kind=None, old_sentence=None)
            return self._update(target, note, comp, name, summary, points, bucket, lang, [],
                                sources, today, classes)
        description = _description(summary, lang, bucket, name, points)
        fix = revise.correct_turn(target=target, note=note, revises=revises, name=name,
                                  summary=summary, description=description, sources=sources,
                                  lang=lang, today=today, idf=self.idf,
                                  plan=lambda action: _plan(action, classes))
        if fix is not None:
            return fix
        done = "节点已记录这一更正。" if lang == "zh" else \
            "The node already records this correction."
        return answer({"action": "CORRECT", "target_path": target, "note": done,
                       "classification": classes})

    def _decide_and_write(self, unit: dict[str, Any], unit_text: str, name: str, summary: str,
                          points: list[str], bucket: str, paths: list[str], lang: str,
                          hits: list[HitInfo], notes: dict[str, Note], missing: set[str],
                          own: str, messages: Sequence[Message], digest: str) -> AssistantTurn:
        compared: list[tuple[str, decide.Comparison]] = []
        # The notes' own markdown links, put back on their words in what is written (SPEC §4).
        web = weblinks.of_points([str(p) for p in unit.get("points") or []])
        linked_paths = [n.path for n in relate.linked_entries(unit.get("linked_notes"))
                        if n.direction == "out"]
        document = _document(unit, bucket, points)
        echo = str(unit.get("kind") or "") == extract.ECHO
        # A whole note (its topic, runbook or log): no one statement that decides.
        whole_note = str(unit.get("kind") or "") in ("topic", "procedure", "debug")
        # Said under a lead-in that says its list is said again ("Agreed / reminders").
        cued = any(pts.parse(str(p)).role == "under" for p in unit.get("points") or [])
        # A line's unit only updates a node of another note: its own note's nodes (those
        # drawn from it: their first source) are not compared (the comparison is most of a
        # unit's cost). A node of another note that cites it as restating or correcting it
        # still is (another line of the note may change that node's value).
        home = [p for p, n in notes.items() if p.startswith(digest) and
                any(f"[[{s}" in n.body for s in paths)] if echo else []
        own_nodes = [p for p in home if relate.first_source(notes[p].body) in paths]
        home = own_nodes + [p for p in home if p not in own_nodes]
        for path, note in notes.items():
            if path.startswith(digest) and path not in own_nodes:
                compared.append((path, self._compare(unit_text, note, paths, semantic=False,
                                                     links=linked_paths, document=document,
                                                     cued=cued, whole_note=whole_note)))
        compared.sort(key=lambda pc: -pc[1].lexical)
        semantic = self.embedder is not None and decide.uses_embedder(lang)
        lexical_labels = {p: c.label for p, c in compared}
        if semantic:
            # The embedding costs ~10 ms a text: only the best lexical candidates get it.
            compared = [(p, self._compare(unit_text, notes[p], paths, links=linked_paths,
                                          document=document, cued=cued,
                                          whole_note=whole_note)
                          if i < SEMANTIC_TOP else c)
                        for i, (p, c) in enumerate(compared)]
        labels = {p: c.label for p, c in compared}
        for path, label in lexical_labels.items():
            # Related on either score: the blend decides merges; for a link, lexical evidence
            # is enough (with the blend alone, short units on the Foam docs got 0.6 links each).
            if label != "unrelated" and labels[path] == "unrelated":
                labels[path] = "related"
        related_t = decide.thresholds(False, lang)[1]
        details = [p.partition(": ")[2] or p for p in points]
        if details:
            # Steps and points say what else the unit touches: a node they share enough with
            # is related (linked), though it is never the same node on their account alone.
            whole = decide.bag(decide.text_of(name, summary, *details))
            for path, _ in compared:
                if labels[path] == "unrelated" and path.startswith(digest):
                    node = notes[path]
                    if decide.cosine(whole, decide.bag(node.body), self.idf) >= related_t:
                        labels[path] = "related"
        order = {"same_abstraction": 0, "related": 1, "unrelated": 2}
        compared.sort(key=lambda pc: (order[labels[pc[0]]], -pc[1].score))
        same = [(p, c) for p, c in compared if labels[p] == "same_abstraction"]
        if echo:
            # A line of a document that changes a value or says a point again: it updates the
            # node of another note that holds the point (CORRECT, or CORROBORATE when said
            # again), never its own note's node, and creates nothing when there is none: it
            # stays in its note's node (nothing written: no action of the run, units.quiet).
            # A CORRECT only of a sentence that names a thing the line names (a system, a
            # setting, a person): two lines sharing only a measure ("p99 11 ms" of one index,
            # "p99 12 ms" of another server) are about different things.
            same = [(p, c) for p, c in same
                    if (c.conflict_kind in decide.CORRECTABLE and c.old_sentence and
                        _names_shared(summary, c.old_sentence)) or c.restated]
            if not same and home:
                stays = "这一行留在其笔记的节点中。" if lang == "zh" else \
                    "The line stays in its note's node."
                return answer({"action": "CORROBORATE", "target_path": home[0], "note": stays,
                               "classification": {h.path: labels.get(h.path, "unrelated")
                                                  for h in hits}})
        target = same[0][0] if same else ""
        links = relate.choose(
            raw_text=" ".join([name, summary, *points]), lang=lang, paths=paths, hits=hits,
            unit_name=name,
            notes={p: n for p, n in notes.items() if p.startswith(digest)}, labels=labels,
            digest=digest, idf=self.idf, exclude=[target] if target else [],
            # Links may use the embedder in every language (it places translations close);
            # merges use it only where it helped (decide.EMBED_LANGUAGES).
            semantic=self._semantic if self.embedder is not None else None,
            ranked=[(h, s) for h, s in self._rank(unit_text, hits) if h.path not in notes],
            linked_notes=relate.linked_entries(unit.get("linked_notes")))
        related: list[tuple[str, str]] = [write.Related(k.path, k.name, k.reason, k.evidence)
                                           for k in links]
        classes = {h.path: labels.get(h.path, "unrelated") for h in hits}
        classes.update({p: "related" for p, _ in related})
        titles = evidence_titles(messages)
        sources = write.sources_of(paths, titles, points)
        today = today_of(messages)
        if str(unit.get("kind") or "") == status.KIND:
            revises = unit.get("revises")
            return self._status(name, summary, points, paths, lang, notes, missing, related,
                                sources, today, classes,
                                revises if isinstance(revises, dict) else None)
        if same:
            target, comp = same[0]
            note = notes[target]
            # Not again, and not to a node that links here already: the two are connected, and
            # the same unit integrated twice must change nothing.
            related = [r for r in related if r[0] != target and f"[[{r[0]}" not in note.body
                       and not (r[0] in notes and f"[[{target}" in notes[r[0]].body)]
            if not any(relate.drawn_from(note.body, p) for p in paths):
                # "The same note also records ..." says the node's own note records the other:
                # not so of a node that only gains this unit's note as restating or correcting
                # it (an English guide a Chinese review restates). Related, said as such.
                related = [write.Related(r[0], r[1], "similar") if getattr(r, "reason", "") ==
                           "source" else r for r in related]
            classes[target] = "same_abstraction"
            return self._update(target, note, comp, name, summary, points, bucket, lang,
                                related, sources, today, classes, web)
        choices = self._create_candidates(self.settings.folders.digest, bucket, name, summary)
        free = next(((p, t) for p, t in choices if p in missing), None)
        if free is None:
            probed = missing | set(notes)
            unprobed = [p for p, _ in choices if p not in probed]
            if unprobed:  # every name probed so far is taken: probe the next ones
                return turn([("read", {"path": p}) for p in unprobed[:PROBES]], f"r{len(probed)}-")
            return AssistantTurn(
                text=f"No free file name for {name!r}: {own} and its variants exist.")
        free_path, title = free
        if title != name:
            name = title
        # A stale hit may name the very file being created: a node never links to itself.
        related = [r for r in related if r[0] != free_path]
        kind = str(unit.get("kind") or "")
        kind = "" if kind == extract.ECHO else kind
        role = kind or _default_role(bucket)
        if role == "rule" and not tx.states_rule(summary):
            role = "fact"  # a Sources sentence calls nothing a rule the note does not state as one
        roles = [(sources[0], role)] + \
            [(s, "corroborate") for s in sources[1:]]
        body = weblinks.relink(write.node_body(bucket, name, summary, points, lang, related,
                                               roles), web)
        description = _description(summary, lang, bucket, name, points)
        metadata = {"kind": _kind(bucket, kind)}
        return AssistantTurn(
            text=_plan("CREATE", classes, len(related)),
            tool_calls=(ToolCall("w1", "write", json.dumps(
                {"path": free_path, "name": name, "description": description, "content": body,
                 "metadata": metadata}, ensure_ascii=False)),))

    def _status(self, key: str, summary: str, points: list[str], paths: list[str], lang: str,
                notes: dict[str, Note], missing: set[str], related: list[tuple[str, str]],
                sources: list[write.SourceInfo], today: str,
                classes: dict[str, str], revises: dict[str, Any] | None = None
                ) -> AssistantTurn:
        """A workstream's status lines (status.py): REFINE the node keeping that workstream's
        status (frontmatter `project`, the same key), each line dated and in date order, or
        CREATE it. Never merged into another node, whatever it shares with one. A line of an
        edited note (`revises`) updates that note's dated entry: CORRECT when a fact changed."""
        digest = self.settings.folders.digest
        entries = status.dated(paths, summary, points, today)
        hinted = str(revises.get("target")) if revises else ""
        target = hinted if hinted in notes and _keeps(notes[hinted], key) else next(
            (p for p, _ in _project_paths(digest, key) if p in notes and _keeps(notes[p], key)),
            "")
        related = [r for r in related if r[0] != target]
        roles = [(s, KIND_ROLE) for s in sources]
        if target:
            note = notes[target]
            body = note.body.replace("\r\n", "\n")
            classes[target] = "same_abstraction"
            edited = paths[0] if revises and target == hinted and len(paths) == 1 else ""
            new_body = status.revise_entries(body, entries, lang, edited, str(
                revises.get("old_statement") or "")) if edited and revises else \
                status.add_entries(body, entries, lang)
            if new_body is None:  # its status list was edited away: the lines go before Sources
                new_body = write.insert_before_sources(body, status.body_list(entries, lang))
            related = [r for r in related if f"[[{r[0]}" not in note.body
                       and not (r[0] in notes and f"[[{target}" in notes[r[0]].body)]
            if related:
                new_body = write.insert_before_sources(
                    new_body, write.related_sentence(related, lang, "wiki"))
            new_body = write.add_sources(new_body, [write.source_sentence(s, r, lang)
                                                    for s, r in roles if f"[[{s.path}" not in body])
            if new_body == body:
                unchanged = "节点已记录这些进展及其来源：无需改动。" if lang == "zh" else \
                    "The node already records this status, from these sources: nothing to add."
                action = "CORRECT" if revises and revises.get("changed") else "REFINE"
                return answer({"action": action, "target_path": target, "note": unchanged,
                               "classification": classes})
            if note.newline == "\r\n":
                new_body = new_body.replace("\n", "\r\n")
                body = note.body
            old, new = write.edit_span(body, new_body)
            edit = json.dumps({"path": target, "old": old, "new": new}, ensure_ascii=False)
            action = "CORRECT" if revises and revises.get("changed") else "REFINE"
            calls = [ToolCall("e1", "edit", edit)]
            # The description says where the project stands: its latest entry.
            stands = status.latest(new_body.replace("\r\n", "\n"), key, lang)
            if stands and stands != _description_of(note):
                calls.append(ToolCall("e2", "frontmatter_update", json.dumps(
                    {"path": target, "metadata": {"description": stands}}, ensure_ascii=False)))
            return AssistantTurn(text=_plan(action, classes, len(related)),
                                 tool_calls=tuple(calls))
        choices = _project_paths(digest, key)
        free = next((p for p, _ in choices if p in missing), None)
        if free is None:
            unprobed = [p for p, _ in choices if p not in missing and p not in notes]
            if unprobed:
                return turn([("read", {"path": p}) for p in unprobed[:PROBES]],
                            f"r{len(missing) + len(notes)}-")
            return AssistantTurn(text=f"No free file name for the status of {key!r}.")
        related = [r for r in related if r[0] != free]
        parts = [status.body_list(entries, lang)]
        if related:
            parts.append(write.related_sentence(related, lang, "wiki"))
        parts += ["## Sources", "\n".join(write.source_sentence(s, r, lang) for s, r in roles)]
        body = "\n\n".join(parts) + "\n"
        title, description = status.title(key, lang)
        description = status.latest(body, key, lang) or description
        metadata = {"kind": "observation", status.PROJECT_KEY: key}
        return AssistantTurn(
            text=_plan("CREATE", classes, len(related)),
            tool_calls=(ToolCall("w1", "write", json.dumps(
                {"path": free, "name": title, "description": description, "content": body,
                 "metadata": metadata}, ensure_ascii=False)),))

    def _update(self, target: str, note: Note, comp: decide.Comparison, name: str, summary: str,
                points: list[str], bucket: str, lang: str, related: list[tuple[str, str]],
                sources: list[write.SourceInfo], today: str,
                classes: dict[str, str], web: Sequence[tuple[str, str]] = ()
                ) -> AssistantTurn:
        body = note.body.replace("\r\n", "\n")
        cited = {s.path for s in sources if f"[[{s.path}" in body}
        new_sources = [s for s in sources if s.path not in cited]
        statement = summary
        if comp.conflict_kind in decide.CORRECTABLE and comp.old_sentence:
            action = "CORRECT"
            source = (new_sources or sources)[0].path
            # Dated by its evidence (daily/2026-06-21/... -> 2026-06-21), else by today.
            when = re.search(r"(?<!\d)(\d{4}-\d{2}-\d{2})(?!\d)", source)
            # The statement that sets the new value, when the unit says several things.
            statement = comp.new_sentence or summary
            date = when.group(1) if when else today
            line = write.correction_line(statement, comp.old_sentence, source, date, lang)
            old_quote = tx.clean_statement(comp.old_sentence).rstrip("。.")
            if any(f"[[{source}]]" in held and f"\u201c{old_quote}\u201d" in held
                   for held in body.split("\n") if held.startswith(">")):
                # The note's correction of this line is recorded already (another line of the
                # note says the same change): nothing to add.
                done = "节点已记录这一更正。" if lang == "zh" else \
                    "The node already records this correction."
                return answer({"action": "CORRECT", "target_path": target, "note": done,
                               "classification": classes})
            new_body = write.insert_after_sentence(body, comp.old_sentence, line)
            # The old line stays, struck through and dated: a reader meets it as superseded.
            new_body = write.strike_superseded(new_body, comp.old_sentence, date, lang,
                                                 quote=line)
            # What else the correcting note says on the point ("PagerDuty stays as a backup
            # until 30 April") is kept too, after the correction, not dropped.
            # So is what the unit says besides the statement that sets the new value (a review's
            # item: "`GET /v1/refunds`: cursor pagination with `page_token`, fine. ... Decision:
            # page_size max is one hundred ..."): the node is where the unit's content goes.
            besides = [] if statement == summary else \
                [s for s in tx.sentences(summary, clauses=False)
                 if s.strip() and s.strip() not in statement and statement not in s]
            prose = besides + [pts.parse(p).text for p in points
                               if pts.parse(p).role not in (*pts.META_ROLES, "context",
                                                            "followup")]
            rest = [p for p in self._novel_points(_distinct(prose), new_body)
                    if p not in (statement, summary)]
            if rest:
                new_body = write.insert_before_sources(new_body,
                                                       write.refine_paragraph(rest, lang))
            # A note the node cites already (as restating it) is the correction's source too.
            sources_part = body[m.end():] if (m := re.search(r"^##[ \t]+sources\b.*$", body,
                                                             re.I | re.M)) else ""
            roles = [(s, "correct") for s in new_sources] + \
                [(s, "correct") for s in sources if s.path in cited and s.path == source and
                 not any(f"[[{s.path}" in held and ("correction" in held or "更正" in held)
                         for held in sources_part.split("\n"))]
        else:
            # Background a note gives for its claim (its context, a follow-up) is not new
            # material for a node that already holds the claim.
            prose = [p for p in points
                     if pts.parse(p).role not in (*pts.META_ROLES, "context", "followup")]
            # A restatement ("Dana said it once more: ...") says the node again: its Sources
            # sentence quotes what was said, the body gets no "Also: ... said it again".
            novel = [] if comp.restated else \
                self._novel_points(_distinct([summary, *prose]), body)
            if summary not in novel and lang == "zh" and not comp.restated:
                # The claim is known; a clause of it may still be new ("数据库迁移先于代码单独
                # 发布，迁移脚本要在预发环境用生产规模的数据演练": the second half). Chinese
                # joins with "，" what English writes as two sentences, which are points of
                # their own there.
                clauses = tx.clauses(summary)
                if len(clauses) > 1:
                    novel = [*self._novel_points(clauses, body), *novel]
            parsed = [pts.parse(p) if p in points else pts.Point("point", 0, p) for p in novel]
            if novel:
                action = "REFINE"
                steps = [p.text for p in parsed if p.role == "step"]
                failures = [p.text for p in parsed if p.role == "failure"]
                rest = [p.text for p in parsed if p.role not in ("step", "failure")]
                new_body = body
                if failures:
                    listed = write.append_to_list(new_body, "Failure modes:", "失败方式：",
                                                  failures, lang)
                    if listed is None:
                        rest += failures
                    else:
                        new_body = listed
                if steps:
                    appended = write.append_steps(new_body, steps, lang)
                    if appended is None:
                        rest = steps + rest
                    else:
                        new_body = appended
                if rest:
                    new_body = write.insert_before_sources(new_body,
                                                           write.refine_paragraph(rest, lang))
            else:
                action = "CORROBORATE"
                new_body = body
            # What was said again: the unit's statement that says the node's line again
            # (the runbook's "... canary 5% -> 25% -> 100%", not its opening "How we ship").
            said_again = comp.new_sentence if comp.restated and comp.new_sentence else summary
            roles = write.update_roles(sources, new_sources, said_again, points, parsed)
            if comp.restated and not new_sources:
                # A note the node cites as restating one of its lines says another again: a
                # Sources sentence of its own quotes that one.
                roles += [(replace(s, claim=summary), "corroborate") for s in sources
                          if s.path in cited and write.restates_more(body, s.path, summary)]
        # The sentences the engine words itself stand in the target node: in its language when
        # its prose is clearly in one (a Chinese meeting restating an English policy gets
        # "... restates this: 复盘文档五个工作日内完成", the note's words quoted as written).
        frame = language.clarity(write.without_sources(body), language.BODY_LETTERS)
        frame = frame if frame in ("en", "zh") else lang
        if related:
            # ... and from that node's bucket.
            own_bucket = target.split("/")[-2] if target.count("/") >= 2 else bucket
            new_body = write.insert_before_sources(
                new_body, write.related_sentence(related, frame, own_bucket))
        new_body = write.add_sources(new_body,
                                     [write.source_sentence(s, r, frame) for s, r in roles])
        new_body = fenced.unfold(weblinks.relink(new_body, web, kept=body))
        if new_body == body:  # the node already says it, from these very sources
            unchanged = "节点已记录这一点及其来源：无需改动。" if lang == "zh" else \
                "The node already records this, from these sources: nothing to add."
            return answer({"action": action, "target_path": target, "note": unchanged,
                           "classification": classes})
        if note.newline == "\r\n":
            new_body = new_body.replace("\n", "\r\n")
            body = note.body
        old, new = write.edit_span(body if note.newline != "\r\n" else note.body, new_body)
        edit = json.dumps({"path": target, "old": old, "new": new}, ensure_ascii=False)
        calls = [ToolCall("e1", "edit", edit)]
        if action == "CORRECT" and comp.old_sentence:
            head = self._handed_head(note, comp) if comp.conflict_kind == "owner" else \
                self._corrected_head(note, comp.old_sentence, name, summary, bucket, lang,
                                     points)
            if head:
                calls.append(ToolCall("e2", "frontmatter_update", json.dumps(
                    {"path": target, "metadata": head}, ensure_ascii=False)))
        return AssistantTurn(text=_plan(action, classes, len(related)), tool_calls=tuple(calls))

    @staticmethod
    def _handed_head(note: Note, comp: decide.Comparison) -> dict[str, str]:
        """A node whose holder was handed over: its name and description say the new holder
        where they named the old one holding the thing ("Tomasz owns the migration" -> "Ines
        owns the migration"); the description, when it did, becomes the handover. A name
        that names the old holder but not the thing ("Olu is stretched") was not wrong: it
        stays (issue 21: a CORRECT keeps the node's name unless the name itself was wrong)."""
        from remelink.vault import frontmatter

        handed = decide.handed_over(comp.new_sentence)
        if handed is None:
            return {}
        new, old, thing = handed
        try:
            meta = frontmatter.load(note)
        except Exception:
            return {}
        out: dict[str, str] = {}
        pattern = re.compile(rf"(?<![\w]){re.escape(old)}(?![\w])") if old.isascii() else \
            re.compile(re.escape(old))
        current_name = str(meta.get("name") or "")
        if pattern.search(current_name) and decide.names_thing(current_name, thing):
            out["name"] = pattern.sub(new, current_name, count=1)
        current = str(meta.get("description") or "")
        if pattern.search(current) and comp.new_sentence and decide.names_thing(current, thing):
            out["description"] = comp.new_sentence
        return out

    @staticmethod
    def _corrected_head(note: Note, old_sentence: str, name: str, summary: str, bucket: str,
                        lang: str, points: Sequence[str]) -> dict[str, str]:
        """The name and description of a corrected node, set to the current value where they
        stated the value the correction replaces (so node-search shows what is true now); the
        old claim stays visible in the body's correction line."""
        from remelink.facts import facts, stated, values
        from remelink.vault import frontmatter

        # What the unit asserts: "14 days, not 30 days" does not state 30 days.
        stale = values(facts(old_sentence) - facts(decide._assertive(f"{name} {summary}")))
        if not stale:
            return {}
        try:
            meta = frontmatter.load(note)
        except Exception:
            return {}
        out: dict[str, str] = {}
        # The name and description stated the old value: the same words with the new one ("at
        # most four pages" -> "at most six pages", "on Thursday" -> "on Wednesday"). The unit
        # may say more than the one change ("The doc was nine pages. ... So: design docs can be
        # up to six pages now"): its clause most like the corrected line gives the new value.
        # The node keeps its name, with the new value, rather than take the unit's (a clause
        # of it, "从 4 月开始"); only a name with no value to replace becomes the unit's.
        said = decide._assertive(f"{name} {summary}")
        old_bag = decide.bag(old_sentence)
        clauses = sorted(tx.clauses(decide._assertive(summary)), key=lambda c: -decide.cosine(
            decide.bag(c), old_bag, decide.default_idf))

        old_parts = tx.clauses(old_sentence) or [old_sentence]

        def with_new_value(text: str) -> str | None:
            for clause in [*clauses, said]:
                # ... against the corrected line's clause on the same point ("封版两天", not
                # "期间只修 P0"), then the whole line.
                new_bag = decide.bag(clause)
                part = max(old_parts, key=lambda c: decide.cosine(decide.bag(c), new_bag,
                                                                  decide.default_idf))
                changed = revise.with_value(text, part, clause) or \
                    revise.with_value(text, old_sentence, clause)
                # A name put in place of a word ("Hana agreed": `Offline gate` -> `Hana gate`)
                # is no new value of the corrected point; a day for a day is (`on Thursday` ->
                # `on Wednesday`). A person handed a thing over is `_handed_head`'s.
                swapped = [v for v in values(facts(changed) ^ facts(text)) if v[:1].isupper()] \
                    if changed else []
                if changed and all(v.casefold() in decide._CALENDAR for v in swapped):
                    return changed
            return None

        current_name = str(meta.get("name") or "")
        in_name = stated(current_name, stale)
        if name and name != current_name and in_name:
            # A name that states an old number and cannot take the new one is the unit's; one
            # that only names a thing the unit does not repeat ("Offline gate ..." against
            # "From now on a new ranker has to ...") is not wrong: it stays.
            renamed = with_new_value(current_name)
            if renamed or any(not v[:1].isupper() for v in in_name):
                out["name"] = renamed or name
        current = str(meta.get("description") or "")
        description = with_new_value(current) or _description(summary, lang, bucket, name,
                                                               points)
        if description and description != current and stated(current, stale):
            out["description"] = description
        return out

    def _novel_points(self, points: list[str], body: str) -> list[str]:
        return decide.novel(points, _prose(body) + " " + decide._sources_prose(body), self.idf)

    @staticmethod
    def _planned_action(messages: Sequence[Message]) -> tuple[str, dict[str, str], int]:
        """The action, classification and number of related links this engine announced with
        its write or edit."""
        for message in reversed(messages):
            if message.get("role") == "assistant" and message.get("tool_calls"):
                try:
                    plan = json.loads(str(message.get("content") or ""))
                except ValueError:
                    continue
                if isinstance(plan, dict) and plan.get("plan") in ACTIONS:
                    classes = plan.get("classification")
                    links = plan.get("links")
                    return (str(plan["plan"]), classes if isinstance(classes, dict) else {},
                            links if isinstance(links, int) else 0)
        return "CORROBORATE", {}, 0

    @staticmethod
    def _note(action: str, lang: str, links: int = 0) -> str:
        """The receipt's note: the action, and how many related links were written (never
        "related links" when there are none)."""
        notes = {
            "en": {"CREATE": "New node with its sources",
                   "CORROBORATE": "Same abstraction again: added the new source",
                   "REFINE": "Added the new detail and its source",
                   "CORRECT": "Recorded the correction, keeping the earlier claim visible"},
            "zh": {"CREATE": "新建节点，附来源",
                   "CORROBORATE": "同一抽象再次出现：补充了新来源",
                   "REFINE": "补充了新细节及其来源",
                   "CORRECT": "记录了更正，并保留了原先的说法"},
        }
        head = notes[lang][action]
        if lang == "zh":
            if links:
                return f"{head}，并链接了 {links} 个相关节点。"
            return f"{head}；没有找到可链接的相关节点。" if action == "CREATE" else f"{head}。"
        if links:
            return f"{head}, and {links} related link{'s' if links > 1 else ''}."
        return f"{head}; no related node found to link." if action == "CREATE" else f"{head}."

    def _repair(self, messages: Sequence[Message], target: str, notes: dict[str, Note],
                paths: list[str], lang: str, calls: list[Call]) -> AssistantTurn | None:
        feedback = str(messages[-1].get("content", ""))
        missing = [p for p in paths if f"[[{p}]]" in feedback and "does not cite" in feedback]
        if not missing or sum(1 for c in calls if c.id.startswith("fix")) >= 1:
            return None
        sentences = [write.source_sentence(write.SourceInfo(p, ""), "fact", lang) for p in missing]
        return turn([("edit", {"path": target, "old": "## Sources",
                                "new": "## Sources\n\n" + "\n".join(sentences)})], "fix")


ACTIONS = ("CREATE", "CORROBORATE", "REFINE", "CORRECT")


def _continue_after(messages: Sequence[Message]) -> int:
    """How many units the pipeline has had so far: `{"continue": {"after": N}}` in its latest
    continue turn (a repair turn after it asks for the same page again), else 0. The first
    user message is the task and the notes, never a continue turn."""
    users = [m for m in messages if m.get("role") == "user"][1:]
    for message in reversed(users):
        m = re.search(r'"continue":\s*\{\s*"after":\s*(\d+)', str(message.get("content", "")))
        if m:
            return int(m.group(1))
    return 0


def _changes_values(text: str) -> frozenset[tuple[str, float]]:
    """The values a text sets, counted (`("page", 2.0)`), when it says it changes or corrects
    them (a correction cue, a decision, a new value "now"); else none."""
    if not (tx.has_word_cue(text, decide.CORRECTION_CUES) or decide.decides(text)):
        return frozenset()
    return tx.facts(decide._assertive(text)).quantities


def _other_value(values: frozenset[tuple[str, float]], text: str) -> bool:
    """`text` states another value of a thing `values` counts (not a bare number)."""
    theirs = tx.facts(text).quantities
    return any(unit and unit == other and value != number and (unit, number) not in values
               for unit, value in values for other, number in theirs)


_MEASURE_RE = re.compile(r"^(?:p\d{2,4}|\d[\d.,]*\w{0,3})$", re.I)  # p99, 12ms, 5xx


def _names_shared(line: str, sentence: str) -> bool:
    """The line and the sentence name one thing (an identifier, a product, a person), not
    only a measure (`p99`)."""
    def named(text: str) -> set[str]:
        return {t.casefold() for t in decide.named_tokens(text) if not _MEASURE_RE.match(t)}

    # A name that opens a sentence is not told from a capitalised word by itself ("Dana
    # pushed back"): one side names it, the other need only say it.
    return any(decide.says(line, t) for t in named(sentence)) or \
        any(decide.says(sentence, t) for t in named(line))


KIND_ROLE = "status"  # the Sources role of a note that reported a status line


def _parsed(paths: list[str], texts: dict[str, list[str]]
            ) -> list[tuple[Note, dict[str, object]]]:
    """The notes read for an extraction, with their frontmatter ({} when it cannot be read)."""
    return [(note, _meta(note)) for note in (parse_text(path, "\n".join(texts[path]))
                                             for path in paths)]


def _meta(note: Note) -> dict[str, object]:
    """A note's frontmatter, {} when it cannot be read."""
    from remelink.vault import frontmatter

    try:
        return dict(frontmatter.load(note))
    except Exception:
        return {}


def _description_of(note: Note) -> str:
    return str(_meta(note).get("description") or "")


def _keeps(note: Note, key: str) -> bool:
    """`note` keeps the status of workstream `key` (its frontmatter `project`)."""
    held = str(_meta(note).get(status.PROJECT_KEY) or "")
    return bool(held) and status.normal_key(held) == status.normal_key(key)


def _project_paths(digest: str, key: str) -> list[tuple[str, str]]:
    """Where the node keeping a workstream's status lives: the key's slug, then numbered
    variants (another node may hold the plain slug)."""
    slug = slugify(key)
    return [(f"{digest}/wiki/{slug}.md", key)] + \
        [(f"{digest}/wiki/{slugify(key, max_length=80 - len(str(i)) - 1)}-{i}.md", key)
         for i in range(2, 12)]


def _linked_query(path: str) -> str:
    """A node_search query for the nodes citing raw note `path`: its file name and folder
    (a node's Sources sentence holds the path)."""
    parts = path.removesuffix(".md").split("/")
    return " ".join(parts[1:])


def _plan(action: str, classes: dict[str, str], links: int = 0) -> str:
    """The text that goes with a write or edit: the action, the classification of every
    recalled node and how many related links it writes, read back for the receipt (the engine
    keeps no state between turns)."""
    return json.dumps({"plan": action, "classification": classes, "links": links},
                      ensure_ascii=False)


def _distinct(items: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for item in items:
        key = tx.clean_statement(pts.text_of(item)).lower()
        if key and key not in seen:
            seen.add(key)
            out.append(item)
    return out


def _prose(body: str) -> str:
    """The body without its Sources section and without link syntax."""
    m = re.search(r"^##[ \t]+sources\b.*$", body, re.I | re.M)
    text = body[:m.start()] if m else body
    return tx.clean_statement(text.replace("\n", " "))


def _description(summary: str, lang: str, bucket: str = "", name: str = "",
                 points: Sequence[str] = ()) -> str:
    return shapes.description(summary, lang, bucket, name, points)


_LINK_RE = re.compile(r"!?\[\[([^\]|]*)(?:\|([^\]]*))?\]\]")


def _own_words(text: str) -> str:
    """A node's text as what it says itself, for tagging: without the sentences that link
    related nodes (their titles are what those nodes are about), a link woven into a sentence
    keeping the words it shows."""
    body = write.without_related_sentences(text)
    return _LINK_RE.sub(lambda m: m.group(2) or "", body)


def _kind(bucket: str, kind: str) -> str:
    return shapes.frontmatter_kind(bucket, kind)


def _default_role(bucket: str) -> str:
    return {"procedure": "procedure", "personal": "preference"}.get(bucket, "fact")


