"""`auto_tag_step` (SPEC §10.2): entity tags in `memory_tags` on every digest node created or
modified in this run.

Tags are entities (people, organisations, projects, products), not topics: at most `max_tags`
(3), each at most 64 characters, whitespace runs become `_`, case-insensitive duplicates
dropped, spellings already used in the vault reused. `memory_tags: []` is allowed.

The model (LLM or local engine) proposes tags through the same protocol as everything else: it
may `read` the node, then answers `{"tags": [...]}`. This step normalises the answer and writes
only the `memory_tags` key, byte-faithfully. A tagging failure is reported and never undoes the
checkpoint.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from remelink.agent import Accept, Feedback, parse_object, run_loop
from remelink.dream.context import RunContext
from remelink.errors import RemelinkError
from remelink.tools.vault_tools import toolbox
from remelink.vault import frontmatter
from remelink.vault.fsio import atomic_write
from remelink.vault.notes import read_note
from remelink.workspace import UnitWorkspace

TAG_KEY = "memory_tags"
MAX_TAG_CHARS = 64

SYSTEM = """\
You tag one digest node of a markdown memory vault with entity tags: the people, organisations,
companies, projects and products it is about (e.g. Alice, Project_A, Stripe). Not topics, not
generic words. Usually one primary entity; several only if the node is genuinely about several;
none is fine. At most {max_tags}. Reuse the existing spelling when an existing tag names the same
entity. You may call read or frontmatter_read on the node. Answer with only {{"tags": [...]}}.
"""


def normalize_tags(raw: Iterable[Any], existing: Iterable[str], max_tags: int) -> list[str]:
    """Clean a tag list: strings only, whitespace runs to `_`, no empty, over-long or
    non-alphanumeric tags, case-insensitive duplicates dropped (first kept), existing
    spellings reused, capped."""
    known = {t.casefold(): t for t in existing}
    out: list[str] = []
    seen: set[str] = set()
    for item in raw:
        if not isinstance(item, str):
            continue
        tag = re.sub(r"\s+", "_", item.strip().lstrip("#"))
        if not tag or len(tag) > MAX_TAG_CHARS or not any(ch.isalnum() for ch in tag):
            continue
        key = tag.casefold()
        if key in seen:
            continue
        seen.add(key)
        out.append(known.get(key, tag))
        if len(out) >= max_tags:
            break
    return out


def vault_tags(ctx: RunContext) -> list[str]:
    """Every tag already used in the digest, in first-seen order."""
    tags: list[str] = []
    seen: set[str] = set()
    digest = ctx.vault / ctx.settings.folders.digest
    if not digest.is_dir():
        return tags
    for path in sorted(digest.rglob("*.md")):
        rel = path.relative_to(ctx.vault).as_posix()
        try:
            meta = frontmatter.load(read_note(ctx.vault, rel))
        except RemelinkError:
            continue
        value = meta.get(TAG_KEY)
        if isinstance(value, list):
            for tag in value:
                if isinstance(tag, str) and tag.casefold() not in seen:
                    seen.add(tag.casefold())
                    tags.append(tag)
    return tags


def _propose(ctx: RunContext, rel: str, existing: list[str]) -> list[Any]:
    max_tags = ctx.settings.auto_dream.max_tags
    task = {"task": "tag", "path": rel, "existing_tags": existing[:200], "max_tags": max_tags}
    messages = [
        {"role": "system", "content": SYSTEM.format(max_tags=max_tags)},
        {"role": "user", "content": f"```json\n{json.dumps(task, ensure_ascii=False)}\n```\n"
                                    f"Tag the node {rel}."},
    ]
    ws = UnitWorkspace(ctx.vault, ctx.settings, None, lambda q, n, b: [])

    def judge(text: str) -> Accept[list[Any]] | Feedback:
        data = parse_object(text, ("tags",))
        if data is None or not isinstance(data.get("tags"), list):
            return Feedback('Answer with only {"tags": [...]}.')
        return Accept(list(data["tags"]))

    tags, transcript = run_loop(ctx.model, messages, toolbox(ws, read_only=True), judge,
                                max_steps=6, max_repairs=1)
    ctx.report.tokens_in += transcript.usage.prompt_tokens
    ctx.report.tokens_out += transcript.usage.completion_tokens
    return tags


def auto_tag_step(ctx: RunContext) -> None:
    """Tag the nodes integration wrote (kept in the checkpoint, so a run killed before tagging
    is finished by the next one)."""
    if ctx.dry_run:
        return
    targets = list(dict.fromkeys(ctx.state.pending_tags))
    ctx.reporter.start("tag", len(targets))
    if not targets:
        return
    existing = vault_tags(ctx)
    for rel in targets:
        if not (ctx.vault / rel).is_file():
            _done(ctx, rel)
            continue
        try:
            proposed = _propose(ctx, rel, existing)
            tags = normalize_tags(proposed, existing, ctx.settings.auto_dream.max_tags)
            note = read_note(ctx.vault, rel)
            current = frontmatter.load(note).get(TAG_KEY)
            if current != tags:
                updated = frontmatter.update(note, {TAG_KEY: tags})
                atomic_write(ctx.vault / rel, updated.render())
                ctx.index.update([rel])
            ctx.report.tags[rel] = tags
            for tag in tags:
                if tag.casefold() not in {t.casefold() for t in existing}:
                    existing.append(tag)
        except RemelinkError as exc:
            ctx.report.warnings.append(f"{rel}: tagging failed: {exc}")
        _done(ctx, rel)
        ctx.reporter.advance("tag", rel)


def _done(ctx: RunContext, rel: str) -> None:
    """Tagging is attempted once per write; a failure is reported, not retried."""
    with ctx.state_lock:
        if rel in ctx.state.pending_tags:
            ctx.state.pending_tags.remove(rel)
        ctx.save_state()
