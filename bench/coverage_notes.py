"""Generated vaults of distinct-fact notes, for the coverage invariant (SPEC §8: every note gets
a verdict) in bench/bench_coverage.py and tests/test_coverage_properties.py.

Each fact note states one fact nobody else states (a decision with its own number, a person's
preference, a rule, a short how-to), in English or Chinese; a chatter note (greetings, an
attendance list) states none. Seeded: the same arguments write the same bytes.

**A regression check, not a measure of extraction**: every fact note comes from one of six
templates written in the engine's own cue words ("We decided to", "prefers", "## Rules",
"# How to", "我们决定"), so the local engine finds a unit in each by construction. What it
guards is the bookkeeping (no note lost, a verdict for each, no cap dropping notes at 600);
how much of a note in its own words is kept is bench/bench_coverage.py's til-simonw and
realistic-vault rows.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass
from pathlib import Path

SYSTEMS = ["billing", "search", "checkout", "export", "ledger", "notifications", "gateway",
           "reporting", "inventory", "payroll", "shipping", "analytics", "onboarding"]
SETTINGS = [("retry budget", "attempts"), ("cache TTL", "minutes"), ("batch size", "records"),
            ("request timeout", "seconds"), ("queue depth", "jobs"), ("log retention", "days")]
PEOPLE = ["Alice", "Bob", "Chen", "Dana", "Emeka", "Farah", "Goran", "Hiro", "Ines", "Jonas"]
STYLES = ["small reviewed pull requests", "a written rollout plan", "pairing on the change",
          "a dry run in staging first", "feature flags over config pushes"]
REASONS = ["the last incident showed the old value was unsafe", "load doubled after the launch",
           "the vendor changed its rate limits", "the on-call team asked for more headroom"]
ZH_SYSTEMS = ["支付", "搜索", "结算", "导出", "账本", "通知", "鉴权网关", "报表"]
ZH_SETTINGS = [("重试次数", "次"), ("缓存时长", "分钟"), ("批量大小", "条"), ("请求超时", "秒")]
WORDS = ["Amber", "Basalt", "Cobalt", "Delta", "Ember", "Fjord", "Granite", "Harbor", "Indigo",
         "Juniper", "Kestrel", "Lumen", "Marble", "Nimbus", "Onyx", "Pylon", "Quartz", "Raven",
         "Sable", "Tundra", "Umber", "Vesper", "Willow", "Xenon", "Yarrow", "Zephyr"]
CHATTER = ["Thanks everyone, see you tomorrow.", "Attendees: {a}, {b}, {c}.",
           "Good morning all, quick sync today.", "Thanks for the help, talk next week."]


@dataclass(frozen=True)
class GeneratedNote:
    path: str
    fact: bool  # states a fact worth keeping (else chatter: "nothing worth keeping")
    kind: str   # decision | preference | rule | howto | zh-decision | chatter


def project(i: int) -> str:
    return f"{WORDS[i % len(WORDS)]}-{i}"


def _fact(rng: random.Random, i: int) -> tuple[str, str]:
    """(kind, text) of note i: its project name and number make the fact its own."""
    name = project(i)
    kind = rng.choice(["decision", "decision", "preference", "rule", "howto", "zh-decision"])
    system = rng.choice(SYSTEMS)
    if kind == "decision":
        setting, unit = rng.choice(SETTINGS)
        return kind, (f"We decided to set the {setting} of the {system} service of project "
                      f"{name} to {10 * (i + 1)} {unit} because {rng.choice(REASONS)}.\n")
    if kind == "preference":
        return kind, (f"{rng.choice(PEOPLE)} prefers {rng.choice(STYLES)} for every change to "
                      f"the {system} service of project {name}.\n")
    if kind == "rule":
        return kind, (f"## Rules\n- The {system} service of project {name} must never keep "
                      f"more than {5 * (i + 2)} jobs in its queue.\n")
    if kind == "howto":
        return kind, (f"# How to restart the {system} service of project {name}\n\n"
                      f"1. Drain the {system} queue of project {name} and wait for it to empty.\n"
                      f"2. Restart the {system} workers of project {name} one zone at a time.\n"
                      f"3. Check the {system} dashboard of project {name} for errors.\n")
    setting, unit = rng.choice(ZH_SETTINGS)
    return kind, (f"我们决定 {name} 项目的{rng.choice(ZH_SYSTEMS)}服务{setting}改为 "
                  f"{10 * (i + 1)} {unit}，因为上次事故说明旧值不安全。\n")


def write_fact_notes(vault: Path, n: int, *, seed: int = 1, chatter: float = 0.1,
                     start: str = "2026-03-01", per_day: int = 5) -> list[GeneratedNote]:
    """Write `n` daily notes under `vault/daily/` (about `chatter` of them chatter)."""
    rng = random.Random(seed)
    day0 = dt.date.fromisoformat(start)
    out = []
    for i in range(n):
        day = (day0 + dt.timedelta(days=i // per_day)).isoformat()
        rel = f"daily/{day}/note-{i:04d}.md"
        if n > 1 and rng.random() < chatter:
            a, b, c = rng.sample(PEOPLE, 3)
            kind, text, fact = "chatter", rng.choice(CHATTER).format(a=a, b=b, c=c) + "\n", False
        else:
            (kind, text), fact = _fact(rng, i), True
        path = vault / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        out.append(GeneratedNote(rel, fact, kind))
    return out


CONFIG = """\
# Generated by bench/coverage_notes.py
model: local
local:
  embedder: none
"""


def make_vault(vault: Path, n: int, *, seed: int = 1, chatter: float = 0.1,
               config: str = CONFIG) -> list[GeneratedNote]:
    (vault / ".remelink").mkdir(parents=True, exist_ok=True)
    (vault / ".remelink" / "config.yaml").write_text(config, encoding="utf-8")
    return write_fact_notes(vault, n, seed=seed, chatter=chatter)
