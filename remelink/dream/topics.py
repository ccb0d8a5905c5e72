"""`dream_topics_step` (SPEC §10.1, optional): `daily/<date>/interests.yaml` with at most
`topic_count` topics `{title, reason, evidence, keywords, paths}` for the target date, never
repeating a topic of the same day or of the previous `topic_diversity_days` days (titles compared
lowercased with punctuation folded).

Candidates are the integrated units (from the checkpoint) whose notes belong to the date. The
model (LLM or local engine) selects and words them (`{"topics": [...]}`); a deterministic merge
always has the last word. An existing file that is invalid is reported and left untouched; an
unchanged result does not rewrite the file. This file is the one thing remelink writes under
`daily/`: it is its own output, never a raw note.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from pathlib import Path
from typing import Any

from remelink.agent import Accept, Feedback, LoopError, parse_object, run_loop
from remelink.dream.context import RunContext
from remelink.errors import ModelError, NoteError, SandboxError
from remelink.tools.base import ToolBox
from remelink.vault.boundary import read_file, vault_real
from remelink.vault.fsio import replace_if

TOPIC_KEYS = ("title", "reason", "evidence", "keywords", "paths")

SYSTEM = """\
You choose today's interest topics from candidate memory units: specific, recurring or actionable
interests, not summaries of files. At most {count}. Do not repeat a topic from the same day or the
recent days listed. Titles concise; reasons grounded in the candidates; keywords short; paths
only from the candidates. Answer with only {{"topics": [{{"title": ..., "reason": ...,
"evidence": ..., "keywords": [...], "paths": [...]}}]}}.
"""


def fold_title(title: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9\u4e00-\u9fff]+", " ", title.lower()).split())


class TopicsFileError(Exception):
    pass


MAX_TOPICS_BYTES = 1 << 20


def _read(vault: Path, path: Path) -> str | None:
    """The file's text through the vault boundary (never a link out of the vault, a FIFO or a
    device; never more than 1 MiB); None when it does not exist. Raises TopicsFileError."""
    if not os.path.lexists(path):
        return None
    try:
        got = read_file(path, root_real=vault_real(vault), limit=MAX_TOPICS_BYTES)
    except FileNotFoundError:
        return None
    except (OSError, NoteError) as exc:
        raise TopicsFileError(f"not read: {getattr(exc, 'strerror', None) or exc}") from None
    if got.data is None:
        raise TopicsFileError(f"{got.size} bytes; not read (over {MAX_TOPICS_BYTES} bytes)")
    try:
        return got.data.decode("utf-8")
    except UnicodeDecodeError:
        raise TopicsFileError("not valid UTF-8") from None


def _load(vault: Path, path: Path, *, strict: bool) -> list[dict[str, Any]]:
    try:
        text = _read(vault, path)
    except TopicsFileError:
        if strict:
            raise
        return []
    return _parse(text, strict=strict)


def _parse(text: str | None, *, strict: bool) -> list[dict[str, Any]]:
    import yaml

    from remelink.decoding import yaml_load

    if text is None:
        return []
    try:
        data = yaml_load(text)
    except (yaml.YAMLError, RecursionError) as exc:
        if strict:
            raise TopicsFileError(f"invalid YAML: {str(exc).splitlines()[0]}") from None
        return []
    topics = data.get("topics") if isinstance(data, dict) else None
    if not isinstance(topics, list):
        if strict:
            raise TopicsFileError("`topics` is not a list")
        return []
    out = []
    for t in topics:
        try:
            out.append(_clean(t, None))
        except TopicsFileError:
            if strict:
                raise
    return out


def _clean(t: Any, allowed_paths: set[str] | None) -> dict[str, Any]:
    if not isinstance(t, dict) or set(t) - set(TOPIC_KEYS):
        raise TopicsFileError(f"a topic must be a mapping of {', '.join(TOPIC_KEYS)}")
    title, reason = t.get("title"), t.get("reason")
    if not isinstance(title, str) or not title.strip() or not isinstance(reason, str) \
            or not reason.strip():
        raise TopicsFileError("a topic needs a title and a reason")
    keywords = [k.strip() for k in t.get("keywords") or [] if isinstance(k, str) and k.strip()]
    paths = [p.strip() for p in t.get("paths") or [] if isinstance(p, str) and p.strip()]
    if allowed_paths is not None:
        paths = [p for p in paths if p in allowed_paths]
    evidence = t.get("evidence")
    return {"title": title.strip(), "reason": reason.strip(),
            "evidence": evidence.strip() if isinstance(evidence, str)
            else (paths[0] if paths else ""),
            "keywords": keywords[:8], "paths": paths}


def _candidates(ctx: RunContext, date: str) -> list[dict[str, Any]]:
    """Integrated units whose notes belong to `date`, in extraction order. Taken from the
    checkpoint rather than this run's report, so a run resumed after a crash, or a rerun that
    found nothing new, sees the same candidates (and writes nothing new)."""
    daily = ctx.settings.folders.daily
    prefixes = (f"{daily}/{date}/", f"{daily}/{date}.")
    out = []
    for rec in ctx.state.units.values():
        if rec.status != "done":
            continue
        paths = [p for p in rec.unit.paths if p.startswith(prefixes)]
        if not paths:
            continue
        out.append({"title": rec.unit.name, "reason": rec.unit.summary, "paths": paths,
                    "sources": len(rec.unit.paths), "bucket": rec.unit.bucket})
    return out


def _keywords(text: str) -> list[str]:
    from remelink.models.local.decide import STOP

    words = [w for w in re.findall(r"[A-Za-z][A-Za-z-]{3,}|[\u4e00-\u9fff]{2,4}", text)
             if w.lower() not in STOP]
    seen: list[str] = []
    for w in words:
        if w.lower() not in (s.lower() for s in seen):
            seen.append(w)
    return seen[:5]


MAX_REDO = 3  # a day file a person keeps saving while the topics are chosen


def topics_step(ctx: RunContext) -> None:
    date = ctx.window.date if ctx.window else ctx.today
    rel = f"{ctx.settings.folders.daily}/{date}/interests.yaml"
    candidates = _candidates(ctx, date)
    ctx.reporter.start("topics", 1)
    for _ in range(MAX_REDO):
        if _topics_once(ctx, date, rel, candidates):
            return
    ctx.report.topics_path = None
    ctx.report.errors.append(f"{rel}: changed on disk {MAX_REDO} times while the topics were "
                             "chosen; left untouched")


def _topics_once(ctx: RunContext, date: str, rel: str,
                 candidates: list[dict[str, Any]]) -> bool:
    """Choose and write the day's topics; False when the file changed between its read and
    the write (a compare-and-swap: nothing written, the caller chooses again on the new
    content)."""
    path = ctx.vault / rel
    try:
        before = _read(ctx.vault, path)
        same_day = _parse(before, strict=True)
    except TopicsFileError as exc:
        ctx.report.errors.append(f"{rel}: {exc}; left untouched")
        return True
    if not candidates:
        ctx.report.topics = [t["title"] for t in same_day]
        return True
    recent: list[dict[str, Any]] = []
    end = dt.date.fromisoformat(date)
    for i in range(1, ctx.settings.auto_dream.topic_diversity_days + 1):
        day = (end - dt.timedelta(days=i)).isoformat()
        recent += _load(ctx.vault, ctx.vault / ctx.settings.folders.daily / day /
                        "interests.yaml", strict=False)
    count = ctx.settings.auto_dream.topic_count
    allowed = {p for c in candidates for p in c["paths"]}
    selected: list[dict[str, Any]]
    try:
        selected = _select(ctx, candidates, same_day, recent, count, allowed)
    except (LoopError, ModelError) as exc:
        ctx.report.warnings.append(f"topics: the model failed ({exc}); used the candidates as is")
        selected = []
    if not selected:
        ranked = sorted(candidates, key=lambda c: (-c["sources"], c["title"]))
        selected = [{"title": c["title"], "reason": c["reason"], "evidence": c["paths"][0],
                     "keywords": _keywords(f"{c['title']} {c['reason']}"), "paths": c["paths"]}
                    for c in ranked]
    # The deterministic merge: same-day topics first, then new, non-recent titles, capped.
    final = list(same_day)
    taken = {fold_title(t["title"]) for t in same_day} | {fold_title(t["title"]) for t in recent}
    for t in selected:
        if len(final) >= count:
            break
        key = fold_title(t["title"])
        if key and key not in taken:
            taken.add(key)
            final.append(t)
    ctx.report.topics = [t["title"] for t in final]
    ctx.report.topics_path = rel
    if final == same_day or ctx.dry_run:
        return True
    import yaml

    text = yaml.safe_dump({"date": date, "topic_count": count,
                           "diversity_days": ctx.settings.auto_dream.topic_diversity_days,
                           "topics": final}, allow_unicode=True, sort_keys=False, width=1 << 30)
    if before == text:
        return True
    try:
        # Never through a symlinked day folder: that would write outside the vault.
        return replace_if(path, text, before.encode("utf-8") if before is not None else None,
                          root=ctx.vault, rel=rel)
    except SandboxError as exc:
        ctx.report.topics_path = None
        ctx.report.errors.append(f"{rel}: not written: {str(exc).removeprefix(rel + ': ')}")
        return True


def _select(ctx: RunContext, candidates: list[dict[str, Any]], same_day: list[dict[str, Any]],
            recent: list[dict[str, Any]], count: int, allowed: set[str]) -> list[dict[str, Any]]:
    task = {"task": "topics", "candidates": candidates, "same_day": same_day,
            "recent": [t["title"] for t in recent], "count": count}
    messages = [{"role": "system", "content": SYSTEM.format(count=count)},
                {"role": "user",
                 "content": f"```json\n{json.dumps(task, ensure_ascii=False)}\n```"}]

    def judge(text: str) -> Accept[list[dict[str, Any]]] | Feedback:
        data = parse_object(text, ("topics",))
        if data is None or not isinstance(data.get("topics"), list):
            return Feedback('Answer with only {"topics": [...]}.')
        out = []
        for t in data["topics"]:
            try:
                out.append(_clean(t, allowed))
            except TopicsFileError:
                continue
        return Accept(out)

    topics, transcript = run_loop(ctx.model, messages, ToolBox([]), judge, max_steps=3,
                                  max_repairs=1)
    ctx.report.tokens_in += transcript.usage.prompt_tokens
    ctx.report.tokens_out += transcript.usage.completion_tokens
    return topics
