"""A decent tool-calling model for the LLM-path benchmark (bench/bench_llm_path.py), played on
the server side of a loopback OpenAI-compatible provider: it reads each request the way a model
does and answers with tool calls or text. It knows only what the conversation tells it, so it
plays the same part against any version of remelink's prompts.

- Extraction: one unit per note (a second one for a note with a numbered procedure), its name
  from the note's title, its summary the note's first sentences, its points the note's list
  items word for word; "nothing" (with a reason) for a note with no sentence of substance.
  Pages follow `max_units`, all units of a note on one page, "continue" turns honoured.
- Integration: the unit and the recalled candidates from the first message; a candidate whose
  name says the same as the unit is updated (an edit that appends a Sources sentence, after
  reading the node when its body was not shown), anything else is a new node that links the
  candidates that share words with the unit. Then the receipt, labelling the candidates.
- Tagging: one node (reads it, then answers) or several at once (their text is in the prompt),
  with the names written in capitals that a node repeats.

`mistakes` makes it commit one mistake class on every unit's first act (then it repairs from
what the tool or the repair message says): the repair cost per mistake class.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from typing import Any

MISTAKES = ("bare_sources", "relation_field", "link_no_md", "missing_args", "no_receipt",
            "update_action", "repeated_refused_call", "cut_output", "refusal")

_JSON_RE = re.compile(r"```json\s*\n")
_CAND_RE = re.compile(r"^\s*(\d+)\.\s+(?:\[[-\d.]+\]\s+)?(\S+\.md)\s*$")
_BODY_OPEN_RE = re.compile(r"^\s*body:\s*$")
_FENCE_RE = re.compile(r"^(~{4,})markdown\s*$")
_WORD_RE = re.compile(r"[a-z0-9]+|[\u4e00-\u9fff]", re.I)
_CJK_RE = re.compile(r"[\u4e00-\u9fff]")
_CJK_RUN_RE = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]+")
_SENT_RE = re.compile(r"[^.!?。！？\n]+[.!?。！？]")
_STOP = frozenset(["a", "an", "the", "of", "to", "in", "on", "for", "and", "or", "with", "is",
                   "are", "be", "by", "at", "as", "it", "this", "that", "from", "we", "our",
                   "use", "when", "how"])


def first_json(text: str) -> dict[str, Any]:
    m = _JSON_RE.search(text)
    if not m:
        return {}
    try:
        data, _ = json.JSONDecoder().raw_decode(text, m.end())
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def words(text: str) -> set[str]:
    return {w.lower() for w in _WORD_RE.findall(text) if w.lower() not in _STOP}


def overlap(a: str, b: str) -> float:
    """How much of the shorter text's words the other has."""
    x, y = words(a), words(b)
    return len(x & y) / max(1, min(len(x), len(y)))


def jaccard(a: str, b: str) -> float:
    x, y = words(a), words(b)
    return len(x & y) / max(1, len(x | y))


def zh(text: str) -> bool:
    return len(_CJK_RE.findall(text)) > len(text) / 8


def slug(name: str) -> str:
    out = re.sub(r"[^\w\u4e00-\u9fff]+", "-", name.lower()).strip("-")
    return out[:60].strip("-") or "node"


def completion(content: str | None = None, calls: list[tuple[str, dict[str, Any]]] = (),
               *, finish: str | None = None, refusal: str | None = None,
               raw_args: str | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if refusal is not None:
        message["refusal"] = refusal
    if calls:
        message["tool_calls"] = [
            {"id": f"call_{i}_{abs(hash(json.dumps(a, sort_keys=True))) % 10**8}",
             "type": "function",
             "function": {"name": n, "arguments": raw_args if raw_args is not None
                          else json.dumps(a, ensure_ascii=False)}}
            for i, (n, a) in enumerate(calls)]
    return {"id": "chatcmpl-bench", "object": "chat.completion", "created": 1767225600,
            "model": "bench", "choices": [{"index": 0, "message": message,
                                           "finish_reason": finish or ("tool_calls" if calls
                                                                       else "stop")}]}


# -- extraction ---------------------------------------------------------------------------------

def _strip_frontmatter(text: str) -> str:
    return re.sub(r"\A---\n.*?\n---\n", "", text, flags=re.S)


def note_units(path: str, text: str) -> tuple[list[dict[str, Any]], str | None]:
    """The units a decent model takes from one note, or the reason it keeps nothing."""
    body = _strip_frontmatter(text)
    lines = [ln.rstrip() for ln in body.splitlines()]
    title = next((ln.lstrip("#").strip() for ln in lines if ln.startswith("#")), "")
    kept, fenced = [], False
    for ln in lines:  # code blocks are not prose
        if ln.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced:
            kept.append(ln)
    lines = kept
    prose = " ".join(re.sub(r"!?\[\[[^\]]*\]\]?|`[^`]*`|<!--.*?-->", " ", ln).strip()
                     for ln in lines
                     if ln.strip() and not ln.startswith(("#", "-", "*", "|", ">"))
                     and not re.match(r"\s*\d+\.", ln))
    sentences = [s.strip() for s in _SENT_RE.findall(prose)]
    items = [re.sub(r"^\s*(?:[-*]|\d+\.)\s+", "", ln) for ln in lines
             if re.match(r"\s*(?:[-*]|\d+\.)\s+\S", ln) and "[[" not in ln and "`" not in ln]
    steps = [re.sub(r"^\s*\d+\.\s+", "", ln) for ln in lines if re.match(r"\s*\d+\.\s+\S", ln)]
    if len(" ".join(sentences)) < 40 and len(items) < 2:
        return [], "chatter or a recap with nothing to reuse"
    title = title or (sentences[0][:60] if sentences else path.rsplit("/", 1)[-1][:-3])
    summary = " ".join(sentences[:2])[:400] or "; ".join(items[:3])[:400]
    is_zh = zh(title + summary)
    bucket = "wiki"
    if re.search(r"prefers|preference|偏好|喜欢", prose, re.I):
        bucket = "personal"
    units = [{"name": title[:80], "bucket": bucket, "summary": summary, "paths": [path],
              "points": [i[:200] for i in items if i not in steps][:4]}]
    if len(steps) >= 2:
        name = (f"{title} 的步骤" if is_zh else f"How to: {title}")[:80]
        units.append({"name": name, "bucket": "procedure",
                      "summary": (f"{title}：按以下步骤操作。" if is_zh else
                                  f"The steps for {title}, as the note lists them."),
                      "paths": [path], "points": [f"step: {s[:200]}" for s in steps[:8]]})
    return units, None


def chinese_only(text: str) -> str:
    """`text` without its sentences and list items that hold no Chinese (links and headings
    kept): what a model told to write a mixed-language node in Chinese keeps of it, as it
    cannot translate here."""
    out = []
    for line in text.split("\n"):
        if not line.strip() or line.startswith("#"):
            out.append(line)
            continue
        kept = [s for s in re.split(r"(?<=[.!?。！？])\s+", line)
                if _CJK_RE.search(re.sub(r"\[\[[^\]]*\]\]", "", s)) or
                (s.startswith("这") and "[[" in s)]
        if kept:
            out.append(" ".join(kept))
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out))


def materials(first: str, paths: list[str]) -> dict[str, str]:
    """Each note's text in the extraction prompt (`### <path>` headers, in order)."""
    spots = []
    for path in paths:
        at = first.find(f"### {path}\n")
        if at >= 0:
            spots.append((at, path))
    spots.sort()
    out = {}
    for i, (at, path) in enumerate(spots):
        end = spots[i + 1][0] if i + 1 < len(spots) else len(first)
        out[path] = first[at + len(path) + 5:end]
    return out


def extract_answer(messages: list[dict[str, Any]]) -> dict[str, Any]:
    users = [str(m.get("content") or "") for m in messages if m.get("role") == "user"]
    task = first_json(users[0])
    paths = [str(p) for p in task.get("changed_paths") or []]
    texts = materials(users[0], paths)
    per_note = []
    verdicts = []
    for path in paths:
        units, why = note_units(path, texts.get(path, ""))
        if units:
            per_note.append(units)
            verdicts.append({"path": path, "verdict": "units"})
        else:
            verdicts.append({"path": path, "verdict": "nothing", "reason": why})
    after = 0
    for text in users[1:]:
        m = re.search(r'"continue":\s*\{\s*"after":\s*(\d+)', text)
        if m:
            after = int(m.group(1))
    flat = [u for units in per_note for u in units]
    page = int(task.get("max_units") or 0)
    shown: list[dict[str, Any]] = []
    if page:
        count = 0
        for units in per_note:  # all units of a note on one page
            if count >= after and (not shown or len(shown) + len(units) <= page):
                shown += units
            count += len(units)
    else:
        shown = flat[after:]
    more = after + len(shown) < len(flat)
    return completion(json.dumps({"units": shown, "verdicts": verdicts, "more": more},
                                 ensure_ascii=False))


# -- integration --------------------------------------------------------------------------------

@dataclass
class Candidate:
    path: str
    name: str = ""
    description: str = ""
    body: str | None = None


def candidates(first: str) -> list[Candidate]:
    out: list[Candidate] = []
    lines = first.splitlines()
    i = 0
    while i < len(lines):
        m = _CAND_RE.match(lines[i])
        if m and m.group(2).startswith("digest/"):
            cand = Candidate(m.group(2))
            i += 1
            while i < len(lines) and lines[i].startswith("   ") and not _CAND_RE.match(lines[i]):
                line = lines[i].strip()
                if line.startswith("name:"):
                    cand.name = line[5:].strip()
                elif line.startswith("description:"):
                    cand.description = line[12:].strip()
                elif _BODY_OPEN_RE.match(lines[i]) and i + 1 < len(lines):
                    fence = _FENCE_RE.match(lines[i + 1])
                    if fence:
                        end = lines.index(fence.group(1), i + 2) if fence.group(1) in \
                            lines[i + 2:] else len(lines)
                        cand.body = "\n".join(lines[i + 2:end])
                        i = end
                i += 1
            out.append(cand)
            continue
        i += 1
    return out


@dataclass
class UnitPlay:
    """What the model decided for one unit, and what it has done so far."""

    unit: dict[str, Any]
    target: str = ""
    action: str = ""
    related: list[str] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)
    made: set[str] = field(default_factory=set)
    last_call: tuple[str, dict[str, Any]] | None = None
    repeats: int = 0
    english: bool = False  # told to write in English: CJK text left out
    chinese: bool = False  # told to write in Chinese: sentences without CJK text left out


class Decent:
    """The policy: call it with a request body, get a chat.completion body back."""

    def __init__(self, mistake: str | None = None, *, receipt_with_write: bool = True) -> None:
        self.mistake = mistake
        # As the prompt offers: the receipt as the text of the write or edit message (one turn
        # less when the node passes); False answers with the receipt in a turn of its own.
        self.receipt_with_write = receipt_with_write
        self.plays: dict[str, UnitPlay] = {}
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        users = [str(m.get("content") or "") for m in messages if m.get("role") == "user"]
        first = users[0] if users else ""
        task = first_json(first)
        if task.get("task") == "extract":
            return extract_answer(messages)
        if task.get("task") == "tag":
            return self.tag(task, messages, first)
        if task.get("bucket") and task.get("paths"):
            return self.integrate(task, messages, first)
        return completion("I do not know this task.")

    # -- tagging -----------------------------------------------------------------------------
    @staticmethod
    def entities(text: str) -> list[str]:
        found: dict[str, int] = {}
        for m in re.finditer(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-z]+(?:[A-Z][a-z]+)*|[A-Z]{2,}\d*)\b",
                             text, re.M):
            found[m.group(1)] = found.get(m.group(1), 0) + 1
        return [w for w, n in sorted(found.items(), key=lambda kv: -kv[1]) if n >= 2][:3]

    def tag(self, task: dict[str, Any], messages: list[dict[str, Any]],
            first: str) -> dict[str, Any]:
        if "paths" in task:  # several nodes, their text in the prompt
            texts = materials(first, [str(p) for p in task["paths"]])
            return completion(json.dumps({"tags": {p: self.entities(t)
                                                   for p, t in texts.items()}}))
        results = [str(m.get("content") or "") for m in messages if m.get("role") == "tool"]
        if not results:
            return completion(None, [("read", {"path": task.get("path")})])
        return completion(json.dumps({"tags": self.entities(results[-1])}))

    # -- integration -------------------------------------------------------------------------
    def play_of(self, unit: dict[str, Any], first: str) -> UnitPlay:
        # One play per conversation (a model remembers nothing between two of them): a unit
        # run again sees other candidates and decides again.
        key = json.dumps([unit, first], sort_keys=True, ensure_ascii=False)
        with self.lock:
            play = self.plays.get(key)
            if play is None:
                play = self.plays[key] = UnitPlay(unit)
        if not play.target:
            self.decide(play, candidates(first))
        return play

    @staticmethod
    def decide(play: UnitPlay, cands: list[Candidate]) -> None:
        unit = play.unit
        text = f"{unit['name']} {unit.get('summary', '')}"
        same = [c for c in cands if c.name and jaccard(unit["name"], c.name) >= 0.75]
        if same:
            play.target, play.action = same[0].path, "CORROBORATE"
        else:
            base = f"digest/{unit['bucket']}/{slug(unit['name'])}"
            taken = {c.path for c in cands}
            path, k = f"{base}.md", 2
            while path in taken:
                path, k = f"{base}-{k}.md", k + 1
            play.target, play.action = path, "CREATE"
        for c in cands:
            if c.path == play.target:
                play.labels[c.path] = "same"
            elif overlap(text, f"{c.name} {c.description}") >= 0.3 and len(play.related) < 3:
                play.related.append(c.path)
                play.labels[c.path] = "related"
            else:
                play.labels[c.path] = "unrelated"

    def once(self, play: UnitPlay, mistake: str) -> bool:
        if self.mistake == mistake and mistake not in play.made:
            play.made.add(mistake)
            return True
        return False

    def integrate(self, unit: dict[str, Any], messages: list[dict[str, Any]],
                  first: str) -> dict[str, Any]:
        play = self.play_of(unit, first)
        tail = messages[-1]
        said = str(tail.get("content") or "")
        if len(messages) == 2:
            if self.once(play, "refusal"):
                return completion(None, refusal="I can't help with that.")
            return self.act(play, first, messages)
        if tail["role"] == "user":
            if "cut at" in said or "not valid JSON" in said:
                return self.act(play, first, messages)
            if "receipt" in said.lower() or "回执" in said:
                staged = any(str(m.get("content") or "").startswith("Staged")
                             for m in messages if m.get("role") == "tool")
                return self.receipt(play) if staged else self.act(play, first, messages)
            if "cannot be accepted yet" in said or "还不能接受" in said:
                return self.fix(play, said)
            return self.act(play, first, messages)  # a refusal answered: act now
        # tool results
        results = [str(m.get("content") or "") for m in messages[messages.index(
            next(m for m in reversed(messages) if m.get("role") == "assistant")) + 1:]]
        last = results[-1] if results else ""
        if last.startswith("Staged") and "Not acceptable yet" not in last:
            return self.receipt(play)
        if "Not acceptable yet" in last or "cannot be accepted yet" in last:
            return self.fix(play, last)
        if last.startswith("Error:"):
            if play.last_call is not None and self.mistake == "repeated_refused_call" and \
                    play.repeats < 2:
                play.repeats += 1
                return completion(None, [play.last_call])
            if "read the node" in last and play.action != "CREATE":
                return completion(None, [("read", {"path": play.target})])  # as it is told
            return self.act(play, first, messages)
        return self.act(play, first, messages)  # a read: act now

    def body_seen(self, play: UnitPlay, first: str, messages: list[dict[str, Any]]) -> str | None:
        """The node's body as last shown: its latest read, else its candidate block."""
        for m in reversed(messages):
            text = str(m.get("content") or "")
            if m.get("role") == "tool" and text.startswith("---\n") and "\n---\n" in text[4:]:
                body = text.split("\n---\n", 1)[1]
                return re.sub(r"\n\[lines \d+-\d+ of \d+[^\]]*\]\s*$", "", body)
        for c in candidates(first):
            if c.path == play.target and c.body is not None:
                return c.body
        return None

    def sentence(self, play: UnitPlay, bare: bool = False) -> str:
        paths = play.unit["paths"]
        if bare:
            return f"- [[{paths[0]}]]"
        if (play.chinese or zh(play.unit["name"] + play.unit.get("summary", ""))) and \
                not play.english:
            return "".join(f"这一点记录在 [[{p}]]。" for p in paths)
        return " ".join(f"The note [[{p}]] records this." for p in paths)

    def related_sentence(self, play: UnitPlay, *, no_md: bool = False,
                         field_line: bool = False) -> str:
        if not play.related:
            return ""
        links = [f"[[{p[:-3] if no_md and i == 0 else p}]]" for i, p in enumerate(play.related)]
        if field_line:
            return f"related:: {links[0]}"
        if (play.chinese or zh(play.unit["name"] + play.unit.get("summary", ""))) and \
                not play.english:
            return "这与 " + "、".join(links) + " 相关。"
        return "This relates to " + " and ".join(links) + "."

    def call(self, play: UnitPlay, name: str, args: dict[str, Any]) -> dict[str, Any]:
        play.last_call = (name, args)
        if self.once(play, "cut_output"):
            raw = json.dumps(args, ensure_ascii=False)
            return completion(None, [(name, args)], finish="length", raw_args=raw[:len(raw) // 2])
        return completion(self.beside(play), [(name, args)])

    def beside(self, play: UnitPlay) -> str | None:
        """The receipt sent with a write or edit, unless the mistake of this run is one of the
        receipt's and is still to be made (it is made in the receipt answered alone)."""
        if not self.receipt_with_write or (
                self.mistake in ("no_receipt", "update_action") and
                self.mistake not in play.made):
            return None
        return json.dumps({"action": play.action, "target_path": play.target,
                           "note": "integrated", "classification": play.labels},
                          ensure_ascii=False)

    def act(self, play: UnitPlay, first: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
        unit = play.unit
        if self.once(play, "repeated_refused_call"):
            # A call the tool refuses (a new node in another bucket, an edit of a line the node
            # does not have), sent again unchanged twice before the model changes it.
            if play.action == "CREATE":
                other = "wiki" if unit["bucket"] != "wiki" else "procedure"
                args = {"path": f"digest/{other}/{play.target.rsplit('/', 1)[-1]}",
                        "name": unit["name"], "description": unit["name"],
                        "content": f"{unit['name']}\n\n## Sources\n\n{self.sentence(play)}\n"}
                return self.call(play, "write", args)
            return self.call(play, "edit", {"path": play.target, "old": "no such line here",
                                            "new": self.sentence(play)})
        bare = self.once(play, "bare_sources")
        no_md = self.mistake == "link_no_md" and "link_no_md" not in play.made and \
            bool(play.related)
        fieldl = self.mistake == "relation_field" and "relation_field" not in play.made and \
            bool(play.related)
        if no_md:
            play.made.add("link_no_md")
        if fieldl:
            play.made.add("relation_field")
        related = self.related_sentence(play, no_md=no_md, field_line=fieldl)
        if play.action == "CREATE":
            points = unit.get("points") or []
            steps = [p.split(": ", 1)[1] for p in points if p.startswith("step: ")]
            rest = [p for p in points if not p.startswith("step: ")]
            parts = [unit.get("summary") or unit["name"]]
            if steps:
                parts.append("\n".join(f"{i}. {s}" for i, s in enumerate(steps, 1)))
            if rest:
                parts.append("\n".join(f"- {p}" for p in rest))
            if related:
                parts.append(related)
            parts.append("## Sources\n\n" + self.sentence(play, bare))
            args = {"path": play.target, "name": unit["name"],
                    "description": (unit.get("summary") or unit["name"])[:160],
                    "content": "\n\n".join(parts) + "\n"}
            if play.english:
                for key in ("name", "description", "content"):
                    parts = re.split(r"(\[\[[^\]]*\]\])", args[key])  # links stay whole
                    text = "".join(p if p.startswith("[[") else _CJK_RUN_RE.sub(" ", p)
                                   for p in parts)
                    args[key] = re.sub(r"[ \t]+", " ", text).strip() + \
                        ("\n" if key == "content" else "") or "Note"
            if play.chinese:
                args["content"] = chinese_only(args["content"])
                args["description"] = chinese_only(args["description"]) or unit["name"]
            if self.once(play, "missing_args"):
                args.pop("description")
            return self.call(play, "write", args)
        body = self.body_seen(play, first, messages)
        if body is None:
            return completion(None, [("read", {"path": play.target})])
        if all(f"[[{p}" in body for p in unit["paths"]):
            return self.receipt(play)  # the node already cites these notes: nothing to add
        lines = [ln for ln in body.split("\n") if ln.strip()]
        anchor = next((ln for ln in reversed(lines) if body.count(ln) == 1), lines[-1])
        addition = self.sentence(play, bare)
        heading = "## Sources"
        prose_edit = None
        if related and f"[[{play.related[0]}" not in body:
            if lines.count(heading) == 1 and anchor != heading and \
                    lines.index(anchor) > lines.index(heading):
                # The anchor is in the Sources: the related link goes into the prose above.
                prose_edit = {"path": play.target, "old": heading,
                              "new": f"{related}\n\n{heading}"}
            else:
                addition = f"{related}\n\n{addition}" if not bare else \
                    f"{addition}\n\n{related}"
        args = {"path": play.target, "old": anchor, "new": f"{anchor}\n\n{addition}"}
        if self.once(play, "missing_args"):
            args.pop("new")
        if prose_edit is not None:
            play.last_call = ("edit", args)
            return completion(self.beside(play), [("edit", prose_edit), ("edit", args)])
        return self.call(play, "edit", args)

    def fix(self, play: UnitPlay, feedback: str) -> dict[str, Any]:
        """Repair from what the check quoted: each problem line names a body line; a node in
        the wrong language is written again in the one asked for."""
        if "write the name, description and body in English" in feedback and \
                play.action == "CREATE" and not play.english:
            play.english = True
            return self.act(play, "", [])
        if "write the name, description and body in Chinese" in feedback and \
                play.action == "CREATE" and not play.chinese:
            play.chinese = True
            return self.act(play, "", [])
        calls = []
        for m in re.finditer(r'^- body line \d+: ([a-z-]+): (.*): ("(?:[^"\\]|\\.)*")$',
                             feedback, re.M):
            code, message, quoted = m.group(1), m.group(2), json.loads(m.group(3))
            if code == "bare-source-link":
                new = self.sentence(play)
            elif code == "relation-field":
                new = self.related_sentence(play)
            elif code == "broken-link":
                hint = re.search(r"\[\[([^\]]+)\]\]: target does not exist \(did you mean "
                                 r"(\S+)\?\)", message)
                if hint is None:
                    continue
                new = quoted.replace(f"[[{hint.group(1)}]]", f"[[{hint.group(2)}]]")
            else:
                continue
            if quoted != new:
                calls.append(("edit", {"path": play.target, "old": quoted, "new": new}))
        if not calls:
            return self.receipt(play)
        play.last_call = calls[0]
        return completion(self.beside(play), calls)

    def receipt(self, play: UnitPlay) -> dict[str, Any]:
        action = play.action
        if self.once(play, "no_receipt"):
            return completion("Done: the node now cites the new note.")
        if self.once(play, "update_action"):
            action = "UPDATE"
        return completion(json.dumps({"action": action, "target_path": play.target,
                                      "note": "integrated", "classification": play.labels},
                                     ensure_ascii=False))
