"""Debugging logs and incident notes as runbooks (SPEC §7.1, §11): when it applies (the symptom),
what caused it, how it was found and fixed, what was measured afterwards, and the lesson.

A note is a debugging log when it has steps (what was tried, or the fix) and at least one of a
symptom, a cause or a lesson, as sections (`## Symptom`, `## Root cause`, `## 现象`) or as
labelled lines (`Root cause: ...`). The steps a person took are split into checks (what they
looked at and found), fixes (what they changed) and outcomes: "p99 back to 120 ms within 5
minutes" is what the fix achieved, not a step.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from remelink.models.local import text as tx

DEBUG_KINDS = ("symptom", "cause", "fix", "investigation", "lesson")
_OUTCOME_RE = re.compile(
    r"\b(?:back to|back under|recovered|resolved|returned to|dropped (?:back )?to|went (?:down|"
    r"back)|is back|are back|normal again|stable again|no (?:more|further) (?:errors|timeouts|"
    r"alerts)|error rate (?:fell|dropped)|within \d+ (?:s|sec|seconds|min|minutes))\b|恢复|降到|"
    r"回落|正常了|降至", re.I)
_FIX_RE = re.compile(
    r"^(?:disabled?|replaced?|rolled back|roll back|restarted|restart|redeployed|redeploy|fixed|"
    r"fix|patched|patch|reverted|revert|increased|increase|added|add|removed|remove|scaled|scale|"
    r"bumped|bump|switched|switch|moved|move|set|changed|change|raised|raise|lowered|lower|"
    r"killed|kill|drained|drain|flushed|flush|upgraded|upgrade|pinned|pin|throttled|throttle|"
    r"blocked|block|rotated|rotate|deployed|deploy|enabled|enable|purged|purge)\b|"
    r"^(?:关闭|替换|回滚|重启|修复|扩容|升级|删除|增加|改为|切换|禁用|重新发布)", re.I)
_LABEL_RE = re.compile(
    r"^(?P<label>symptoms?|root cause|cause|fix(?:ed by)?|resolution|solution|mitigation|"
    r"lessons?(?: learned)?|takeaways?|result|outcome|impact|"
    r"现象|症状|根因|原因|修复|解决|处理|教训|经验|改进|结果)\s*[:：]\s*"
    r"(?P<text>.+)$", re.I)
_LABEL_KIND = {"symptom": "symptom", "symptoms": "symptom", "impact": "symptom", "现象": "symptom",
               "症状": "symptom", "root cause": "cause", "cause": "cause", "根因": "cause",
               "原因": "cause", "fix": "fix", "fixed by": "fix", "resolution": "fix",
               "solution": "fix", "mitigation": "fix", "修复": "fix", "解决": "fix",
               "处理": "fix", "result": "outcome",
               "outcome": "outcome", "结果": "outcome"}


def label_of(text: str) -> tuple[str, str] | None:
    """(kind, text) of a labelled line (`Root cause: KEYS blocks Redis`), if it is one."""
    m = _LABEL_RE.match(tx.clean_statement(text))
    if not m:
        return None
    label = m.group("label").lower()
    kind = _LABEL_KIND.get(label, "lesson" if label.startswith(("lesson", "takeaway", "教训",
                                                                 "经验", "改进")) else "")
    return (kind, m.group("text").strip()) if kind else None


def is_debug_log(kinds: Sequence[str], has_steps: bool) -> bool:
    """Steps, a symptom, cause or lesson, and a fix or what was checked: and the note tells
    more than a problem and its answer. A log tells what was found out or what came of it (a
    cause, what was checked, a lesson, an outcome); `Problem: this contains both single AND
    double quotes` then `Solution: use heredoc syntax` explains a problem and its solution:
    a how-to (issue 21: a til how-to written as a debugging log, `Symptom: ...`)."""
    present = set(kinds) & {*DEBUG_KINDS, "outcome"}
    return has_steps and bool(present & {"symptom", "cause", "lesson"}) and \
        bool(present & {"fix", "investigation"}) and bool(present - {"symptom", "fix"})


def step_role(step: str) -> str:
    """`outcome`, `step` (a fix) or `check` (what was looked at and found)."""
    text = tx.clean_statement(step)
    if _OUTCOME_RE.search(text) and not _FIX_RE.match(text):
        return "outcome"
    return "step" if _FIX_RE.match(text) else "check"


def runbook_title(note_title: str) -> str:
    """`Debugging: checkout Redis timeouts` -> `Checkout Redis timeouts`."""
    text = tx.clean_statement(note_title).strip("# ").strip()
    text = re.sub(r"^(?:debug(?:ging)?|incident|postmortem|post-mortem|investigation|排查|故障)"
                  r"\s*(?:log|notes?|记录)?\s*[:：-]\s*", "", text, flags=re.I)
    return text[:1].upper() + text[1:] if text else note_title
