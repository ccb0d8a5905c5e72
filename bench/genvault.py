"""A deterministic generator of realistic remelink vaults, with ground truth, for benchmarks.

`generate(root, notes=10_000, seed=42, style="path")` writes a vault of `notes` notes:
`daily/` (~45 %: session cards and meeting notes under `daily/YYYY-MM-DD/`, plus some day index
pages), `resource/` (~10 %) and `digest/{procedure,personal,wiki}/` (`digest_share`, 45 %) whose
nodes have valid frontmatter and a `## Sources` section citing daily/resource notes in sentences.
Text is English, Chinese, or both mixed; titles, headings and paths may be Chinese.

It plants, at known places, about one broken target per ten notes and one broken anchor per
twenty (heading, `^block` and line anchors), alongside valid anchors, aliases and embeds, and it
hides fake `[[links]]` where no link may be seen (fenced code, inline code, HTML comments,
`\\[[` escapes, frontmatter values). The returned `GroundTruth` lists every planted problem
with its file, line and column so that a benchmark can score each tool's findings.

`style="path"` writes workspace-relative paths (`[[digest/wiki/retry-budget-12.md]]`, remelink's
default); `style="obsidian"` writes names (`[[retry-budget-12]]`) for tools that only resolve
names, and sets `links.resolution: obsidian` in `.remelink/config.yaml`. For the same seed both
styles plant the same problems at the same lines.

    python bench/genvault.py OUT_DIR --notes N --seed S [--style path|obsidian] [--truth FILE]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
from dataclasses import asdict, dataclass, field
from datetime import date, timedelta
from pathlib import Path

STYLES = ("path", "obsidian")
MIN_LINES = 15  # every note has at least this many lines, so anchors L1..L12 are always valid
VALID_LINE_MAX = 12

TOPICS_EN = [
    "retry budget", "idempotency keys", "deploy checklist", "database migration",
    "rate limiting", "feature flags", "code review", "incident response", "on-call rotation",
    "cache invalidation", "log retention", "secret rotation", "load testing", "canary release",
    "schema evolution", "backup restore", "access review", "cost report", "search ranking",
    "embedding cache", "vector index", "prompt template", "eval harness", "release notes",
    "dependency pinning", "SOC2 evidence", "data masking", "timezone handling",
    "unicode normalisation", "webhook signing", "queue backpressure", "connection pooling",
    "alert fatigue", "capacity planning", "API versioning", "error budget", "blue green deploy",
    "pagination cursor", "audit trail", "token refresh",
]
TOPICS_ZH = [
    "数据脱敏规则", "发布检查清单", "重试预算", "幂等键", "数据库迁移", "限流策略", "功能开关",
    "代码评审", "事故响应", "值班轮换", "缓存失效", "日志保留", "密钥轮换", "压力测试", "灰度发布",
    "备份恢复", "权限审查", "成本报表", "搜索排序", "向量索引", "提示模板", "评测框架", "依赖锁定",
    "时区处理", "接口签名", "监控告警", "容量规划", "性能优化", "数据同步", "用户反馈",
]
QUALIFIERS_EN = ["", "", "for the billing service", "in staging", "on mobile", "for batch jobs",
                 "at the edge", "for the search API", "in the data pipeline", "for new hires"]
QUALIFIERS_ZH = ["", "", "支付服务", "测试环境", "移动端", "批处理任务", "搜索接口", "数据管道"]
HEADINGS_EN = ["Context", "Decision", "Steps", "Failure modes", "Inputs", "Why", "How to apply",
               "Notes", "Open questions", "Follow-ups", "Background", "Details", "Risks",
               "Timeline", "Results", "Action items"]
HEADINGS_ZH = ["背景", "决定", "步骤", "失败模式", "输入", "原因", "如何应用", "备注", "待解决问题",
               "后续行动", "细节", "风险", "时间线", "结果"]
DAILY_KINDS_EN = ["standup", "meeting", "session", "retro", "debug log", "pairing", "review"]
DAILY_KINDS_ZH = ["站会", "会议纪要", "调试日志", "复盘", "结对记录"]
RESOURCE_KINDS_EN = ["design doc", "vendor manual", "paper notes", "runbook draft", "RFC"]
RESOURCE_KINDS_ZH = ["设计文档", "厂商手册", "论文笔记", "方案草稿"]

LINK_SENTENCES_EN = [
    "We decided to follow {l} after the outage.",
    "See {l} for the full checklist.",
    "The retry budget of three attempts comes from {l}.",
    "This extends {l} and keeps the same naming.",
    "{l} describes the failure mode we hit on Tuesday.",
    "Compare with {l}, which uses a shorter timeout.",
    "Alice pointed out that {l} already covers the rollback case.",
    "The numbers in {l} were measured on the staging cluster.",
]
LINK_SENTENCES_ZH = [
    "事故之后我们决定遵循 {l} 的做法。",
    "完整的检查清单见 {l}。",
    "重试三次的预算来自 {l}。",
    "这一条扩展了 {l}，命名保持一致。",
    "{l} 记录了周二遇到的失败模式。",
    "可以对比 {l}，那里的超时更短。",
    "小王指出 {l} 已经覆盖了回滚的情况。",
]
LINK_SENTENCES_MIXED = [
    "学习了 Python 编程，参考 {l} 的 retry 配置。",
    "The 灰度发布 plan in {l} still applies to the mobile app.",
    "按照 {l} 的 runbook 处理了 queue backpressure。",
]
SOURCE_SENTENCES_EN = [
    "The rule that keys expire after 24 h is stated in {l}.",
    "The three-step rollback was first written down in {l}.",
    "Evidence for the timeout value comes from {l}.",
    "The team agreed on this convention in {l}.",
    "{l} records the incident that motivated this rule.",
]
SOURCE_SENTENCES_ZH = [
    "密钥 24 小时过期的规则记录在 {l} 中。",
    "三步回滚流程最早写在 {l}。",
    "超时取值的依据来自 {l}。",
    "团队在 {l} 中约定了这个规范。",
]
FILLER_EN = [
    "The service answered within the usual latency budget.",
    "Nobody objected to the proposal, but the rollout waits for the next sprint.",
    "Keep the change small and reversible.",
    "Measure before and after, on the same machine.",
    "The on-call engineer confirmed the fix in production.",
    "This only applies when the queue is shared between tenants.",
    "Write the decision down so the next person does not have to guess.",
    "A checklist beats memory when everyone is tired.",
]
FILLER_ZH = [
    "服务的响应时间在正常范围内。",
    "大家都同意这个方案，但上线要等到下一个迭代。",
    "改动要小，并且可以回滚。",
    "在同一台机器上测量改动前后的数据。",
    "值班工程师确认线上已经修复。",
    "只有在多个租户共享队列时才适用。",
    "把决定写下来，下一个人就不用猜了。",
]
CODE_SNIPPETS = [
    ("bash", ["./deploy.sh --canary 5%", "echo '[[{f}]]' >> notes.md", "kubectl rollout status"]),
    ("python", ["def link(name):", "    return f\"[[{f}]]\"", "print(link('x'))"]),
    ("markdown", ["A wikilink looks like [[{f}]].", "An embed looks like ![[{f}]]."]),
    ("text", ["retry=3 timeout=30s", "see [[{f}]] in the wiki"]),
]


@dataclass(frozen=True)
class Planted:
    """One planted problem: where it is and what it is."""

    path: str
    line: int
    col: int
    kind: str  # target | heading | block | line
    link: str  # the link as written, e.g. [[digest/wiki/x.md#Nope]]
    target: str  # the target part as written (a path or a name)


@dataclass
class GroundTruth:
    root: str
    style: str
    seed: int
    notes: int
    folders: dict[str, int] = field(default_factory=dict)
    links: int = 0  # real wikilink occurrences (planted problems included)
    valid_anchors: dict[str, int] = field(default_factory=dict)
    fake_links: dict[str, int] = field(default_factory=dict)  # by hiding place
    broken_targets: list[Planted] = field(default_factory=list)
    broken_anchors: list[Planted] = field(default_factory=list)
    bytes: int = 0

    def summary(self) -> dict[str, object]:
        anchors: dict[str, int] = {}
        for p in self.broken_anchors:
            anchors[p.kind] = anchors.get(p.kind, 0) + 1
        return {
            "root": self.root, "style": self.style, "seed": self.seed, "notes": self.notes,
            "folders": self.folders, "links": self.links, "bytes": self.bytes,
            "broken_targets": len(self.broken_targets), "broken_anchors": len(self.broken_anchors),
            "broken_anchors_by_kind": anchors, "valid_anchors": self.valid_anchors,
            "fake_links": self.fake_links,
        }

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, indent=1)

    @classmethod
    def from_json(cls, text: str) -> GroundTruth:
        data = json.loads(text)
        targets = [Planted(**p) for p in data.pop("broken_targets")]
        anchors = [Planted(**p) for p in data.pop("broken_anchors")]
        return cls(**data, broken_targets=targets, broken_anchors=anchors)

    def problem_lines(self) -> set[tuple[str, int]]:
        return {(p.path, p.line) for p in (*self.broken_targets, *self.broken_anchors)}


@dataclass
class _Plan:
    index: int
    kind: str  # daily | day-index | resource | digest
    path: str
    stem: str
    title: str
    lang: str  # en | zh | mixed
    headings: list[str]
    block_ids: list[str]
    day: date | None = None
    bucket: str = ""


def _slug(title: str) -> str:
    out = []
    for ch in title.lower():
        if ch.isascii():
            out.append(ch if ch.isalnum() else "-")
        elif ch.isalnum():
            out.append(ch)
        else:
            out.append("-")
    slug = "-".join(part for part in "".join(out).split("-") if part)
    return slug or "note"


class _Writer:
    """Builds one note line by line, tracking the file line of every link it writes."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def add(self, line: str = "") -> int:
        self.lines.append(line)
        return len(self.lines)  # 1-based line number of the line just added


class _Gen:
    def __init__(self, root: Path, notes: int, seed: int, style: str, digest_share: float) -> None:
        if style not in STYLES:
            raise ValueError(f"style must be one of {STYLES}, got {style!r}")
        if notes < 20:
            raise ValueError("notes must be at least 20")
        if not 0.05 <= digest_share <= 0.9:
            raise ValueError("digest_share must lie between 0.05 and 0.9")
        self.root = root
        self.n = notes
        self.rng = random.Random(seed)
        self.style = style
        self.digest_share = digest_share
        self.truth = GroundTruth(root=str(root), style=style, seed=seed, notes=notes)
        self.plans: list[_Plan] = []
        self.by_kind: dict[str, list[_Plan]] = {}
        self.missing_counter = 0
        self.fake_counter = 0

    # -- planning ------------------------------------------------------------------------
    def _lang(self) -> str:
        r = self.rng.random()
        return "en" if r < 0.55 else "zh" if r < 0.85 else "mixed"

    def _title(self, lang: str, kind_words_en: list[str] | None = None,
               kind_words_zh: list[str] | None = None) -> str:
        rng = self.rng
        if lang == "zh":
            topic = rng.choice(TOPICS_ZH)
            qual = rng.choice(QUALIFIERS_ZH)
            kind = rng.choice(kind_words_zh) if kind_words_zh else ""
            return f"{qual}{topic}{kind}"
        if lang == "mixed":
            return f"{rng.choice(TOPICS_ZH)} {rng.choice(TOPICS_EN)}"
        topic = rng.choice(TOPICS_EN)
        qual = rng.choice(QUALIFIERS_EN)
        kind = rng.choice(kind_words_en) if kind_words_en else ""
        words = " ".join(w for w in (topic, qual, kind) if w)
        return words[0].upper() + words[1:]

    def _headings(self, lang: str, k: int) -> list[str]:
        pool = HEADINGS_ZH if lang == "zh" else HEADINGS_EN if lang == "en" else \
            HEADINGS_EN + HEADINGS_ZH
        return self.rng.sample(pool, k)

    def plan(self) -> None:
        rng = self.rng
        n = self.n
        n_digest = round(n * self.digest_share)
        rest = n - n_digest
        n_resource = round(rest * 0.10 / 0.55)
        n_daily = rest - n_resource
        n_dayindex = max(1, n_daily // 25)
        n_daily_notes = n_daily - n_dayindex
        start = date(2025, 1, 1)
        days = [start + timedelta(days=d) for d in range(max(30, n_daily_notes // 12))]
        kinds = (["daily"] * n_daily_notes + ["day-index"] * n_dayindex
                 + ["resource"] * n_resource + ["digest"] * n_digest)
        index_days = rng.sample(days, min(n_dayindex, len(days)))
        while len(index_days) < n_dayindex:  # tiny vaults with more index pages than days
            index_days.append(days[len(index_days) % len(days)] + timedelta(days=400 * (
                len(index_days) // len(days) + 1)))
        for index, kind in enumerate(kinds):
            lang = self._lang()
            bucket = ""
            day: date | None = None
            if kind == "daily":
                day = rng.choice(days)
                title = self._title(lang, DAILY_KINDS_EN, DAILY_KINDS_ZH)
                path = f"daily/{day.isoformat()}/{_slug(title)}-{index}.md"
            elif kind == "day-index":
                day = index_days.pop()
                title = day.isoformat()
                path = f"daily/{title}.md"
            elif kind == "resource":
                title = self._title(lang, RESOURCE_KINDS_EN, RESOURCE_KINDS_ZH)
                if rng.random() < 0.6:
                    day = rng.choice(days)
                    path = f"resource/{day.isoformat()}/{_slug(title)}-{index}.md"
                else:
                    path = f"resource/{_slug(title)}-{index}.md"
            else:
                bucket = rng.choices(("procedure", "personal", "wiki"), (3, 2, 5))[0]
                title = self._title(lang)
                path = f"digest/{bucket}/{_slug(title)}-{index}.md"
            stem = path.rsplit("/", 1)[1][:-3]
            headings = self._headings(lang, rng.randint(2, 4))
            block_ids = [f"b{index:x}{j}" for j in range(rng.choice((0, 0, 1, 2)))]
            plan = _Plan(index, kind, path, stem, title, lang, headings, block_ids, day, bucket)
            self.plans.append(plan)
            self.by_kind.setdefault(kind, []).append(plan)
        self.truth.folders = {
            "daily": n_daily, "resource": n_resource, "digest": n_digest,
            **{f"digest/{b}": sum(1 for p in self.by_kind.get("digest", []) if p.bucket == b)
               for b in ("procedure", "personal", "wiki")},
        }

    # -- links ---------------------------------------------------------------------------
    def _ref(self, plan: _Plan) -> str:
        return plan.path if self.style == "path" else plan.stem

    def _fmt(self, target: str, anchor: str | None = None, alias: str | None = None,
             embed: bool = False) -> str:
        inner = target + (f"#{anchor}" if anchor is not None else "")
        inner += f"|{alias}" if alias is not None else ""
        return ("!" if embed else "") + f"[[{inner}]]"

    def _missing_target(self, like: _Plan) -> str:
        self.missing_counter += 1
        k = 1_000_000 + self.missing_counter
        folder = like.path.rsplit("/", 1)[0]
        name = f"{_slug(like.title)}-gone-{k}"
        return f"{folder}/{name}.md" if self.style == "path" else name

    def _valid_link(self, target: _Plan, source: _Plan) -> str:
        """A link to `target`, sometimes with a valid anchor, an alias or as an embed."""
        rng = self.rng
        r = rng.random()
        anchor: str | None = None
        va = self.truth.valid_anchors
        if r < 0.06:
            heading = rng.choice(target.headings)
            anchor = heading.lower() if rng.random() < 0.3 else heading
            va["heading"] = va.get("heading", 0) + 1
        elif r < 0.08 and target.block_ids:
            anchor = "^" + rng.choice(target.block_ids)
            va["block"] = va.get("block", 0) + 1
        elif r < 0.10:
            a = rng.randint(1, VALID_LINE_MAX - 2)
            anchor = f"L{a}" if rng.random() < 0.5 else f"L{a}-L{a + rng.randint(0, 2)}"
            va["line"] = va.get("line", 0) + 1
        alias = None
        if rng.random() < 0.08:
            alias = rng.choice(("see here", "the runbook", "这里", "原文", target.title[:20]))
        embed = source.kind != "digest" and rng.random() < 0.02
        self.truth.links += 1
        return self._fmt(self._ref(target), anchor, alias, embed)

    def _broken_anchor(self, target: _Plan) -> tuple[str, str]:
        rng = self.rng
        self.missing_counter += 1
        k = self.missing_counter
        r = rng.random()
        if r < 0.5:
            kind = "heading"
            anchor = (f"Section that was removed {k}" if target.lang == "en"
                      else f"已删除的章节 {k}")
        elif r < 0.75:
            kind = "block"
            anchor = f"^gone{k}"
        else:
            kind = "line"
            a = 5000 + k
            anchor = f"L{a}" if rng.random() < 0.5 else f"L{a}-L{a + 4}"
        return kind, self._fmt(self._ref(target), anchor)

    def _fake(self) -> str:
        self.fake_counter += 1
        target = f"fake-note-{self.fake_counter}"
        if self.style == "path":
            target = f"digest/wiki/{target}.md"
        return target

    def _count_fake(self, where: str) -> None:
        self.truth.fake_links[where] = self.truth.fake_links.get(where, 0) + 1

    # -- sentences -----------------------------------------------------------------------
    def _sentence(self, lang: str, link: str, source: bool = False) -> tuple[str, int]:
        """A sentence holding `link`, and the 0-based index of the link in it."""
        rng = self.rng
        if source:
            pool = SOURCE_SENTENCES_ZH if lang == "zh" else SOURCE_SENTENCES_EN
        else:
            pool = LINK_SENTENCES_ZH if lang == "zh" else LINK_SENTENCES_EN if lang == "en" \
                else LINK_SENTENCES_MIXED + LINK_SENTENCES_EN
        template = rng.choice(pool)
        return template.replace("{l}", link), template.index("{l}")

    def _filler(self, lang: str, k: int = 1) -> str:
        pool = FILLER_ZH if lang == "zh" else FILLER_EN if lang == "en" else FILLER_EN + FILLER_ZH
        sep = "" if lang == "zh" else " "
        return sep.join(self.rng.choice(pool) for _ in range(k))

    # -- notes ---------------------------------------------------------------------------
    def _pick(self, kinds: tuple[str, ...], weights: tuple[int, ...], avoid: _Plan) -> _Plan:
        rng = self.rng
        for _ in range(10):
            kind = rng.choices(kinds, weights)[0]
            pool = self.by_kind.get(kind) or self.by_kind["daily"]
            plan = rng.choice(pool)
            if plan is not avoid:
                return plan
        return plan

    def _emit_link_line(self, w: _Writer, plan: _Plan, link: str, prefix: str = "",
                        source: bool = False, planted: tuple[str, str] | None = None) -> None:
        sentence, at = self._sentence(plan.lang, link, source)
        line = prefix + sentence
        lineno = w.add(line)
        if planted is not None:
            kind, target = planted
            record = Planted(plan.path, lineno, len(prefix) + at + 1, kind, link, target)
            if kind == "target":
                self.truth.broken_targets.append(record)
            else:
                self.truth.broken_anchors.append(record)

    def _emit_planted(self, w: _Writer, plan: _Plan, n_targets: int, n_anchors: int,
                      pool_kinds: tuple[str, ...]) -> None:
        rng = self.rng
        for _ in range(n_targets):
            like = self._pick(pool_kinds, (1,) * len(pool_kinds), plan)
            target = self._missing_target(like)
            self.truth.links += 1
            link = self._fmt(target, None, rng.choice((None, None, None, "old notes")))
            prefix = rng.choice(("", "- "))
            self._emit_link_line(w, plan, link, prefix, planted=("target", target))
            w.add("")
        for _ in range(n_anchors):
            target_plan = self._pick(pool_kinds, (1,) * len(pool_kinds), plan)
            kind, link = self._broken_anchor(target_plan)
            self.truth.links += 1
            prefix = rng.choice(("", "- "))
            self._emit_link_line(w, plan, link, prefix, planted=(kind, self._ref(target_plan)))
            w.add("")

    def _emit_fakes(self, w: _Writer, plan: _Plan) -> None:
        rng = self.rng
        r = rng.random()
        if r < 0.22:
            lang, lines = rng.choice(CODE_SNIPPETS)
            fence = rng.choice(("```", "```", "~~~"))
            w.add(f"{fence}{lang}")
            for line in lines:
                if "{f}" in line:
                    line = line.replace("{f}", self._fake())
                    self._count_fake("fenced code")
                w.add(line)
            w.add(fence)
            w.add("")
        if rng.random() < 0.25:
            fake = self._fake()
            self._count_fake("inline code")
            w.add(f"Write links as `[[{fake}]]` in prose; {self._filler(plan.lang)}")
            w.add("")
        if rng.random() < 0.05:
            fake = self._fake()
            self._count_fake("html comment")
            w.add(f"<!-- moved to [[{fake}]] later -->")
            w.add("")
        if rng.random() < 0.03:
            fake = self._fake()
            self._count_fake("escaped")
            w.add(f"Literal brackets: \\[[{fake}]] are not a link.")
            w.add("")

    def _paragraph_with_block(self, w: _Writer, plan: _Plan, block_id: str) -> None:
        w.add(f"{self._filler(plan.lang, 2)} ^{block_id}")
        w.add("")

    def _frontmatter(self, w: _Writer, plan: _Plan) -> None:
        rng = self.rng
        if plan.kind == "digest":
            w.add("---")
            w.add(f"name: {json.dumps(plan.title, ensure_ascii=False)}")
            topic = plan.title
            desc = (f"关于{topic}的规则、原因和做法。" if plan.lang == "zh" else
                    f"What we know about {topic.lower()}: the rule, why, and how to apply it.")
            w.add(f"description: {json.dumps(desc, ensure_ascii=False)}")
            kind = {"procedure": "procedure", "personal": "preference"}.get(plan.bucket, "concept")
            w.add(f"kind: {kind}")
            tags = rng.sample(["Alice", "Bob", "billing", "search", "ACME", "小王", "Kafka"], 2)
            w.add(f"memory_tags: [{', '.join(tags)}]")
            if rng.random() < 0.05:
                fake = self._fake()
                self._count_fake("frontmatter")
                w.add(f'see_also: "[[{fake}]]"')
            w.add("---")
        elif rng.random() < 0.7:
            w.add("---")
            if plan.day is not None:
                w.add(f"date: {plan.day.isoformat()}")
            w.add(f"tags: [{rng.choice(('standup', 'meeting', 'notes', 'ops', '会议'))}]")
            if rng.random() < 0.05:
                fake = self._fake()
                self._count_fake("frontmatter")
                w.add(f'related: "[[{fake}]]"')
            w.add("---")

    def _note(self, plan: _Plan, n_targets: int, n_anchors: int) -> str:
        rng = self.rng
        w = _Writer()
        self._frontmatter(w, plan)
        w.add(f"# {plan.title}")
        w.add("")
        if plan.kind == "digest":
            self._digest_body(w, plan, n_targets, n_anchors)
        elif plan.kind == "day-index":
            self._day_index_body(w, plan, n_targets, n_anchors)
        else:
            self._raw_body(w, plan, n_targets, n_anchors)
        while len(w.lines) < MIN_LINES:
            w.add(self._filler(plan.lang))
        if w.lines[-1] != "":
            w.add("")
        newline = "\r\n" if rng.random() < 0.02 else "\n"
        return newline.join(w.lines)

    def _digest_body(self, w: _Writer, plan: _Plan, n_targets: int, n_anchors: int) -> None:
        rng = self.rng
        w.add(self._filler(plan.lang, 2))
        w.add("")
        related = rng.choices((0, 1, 2, 3, 4, 5, 6), (1, 2, 3, 4, 3, 2, 1))[0]
        body_headings = plan.headings
        for i, heading in enumerate(body_headings):
            w.add(f"## {heading}")
            w.add("")
            if plan.bucket == "procedure" and i == 0:
                for step in range(1, rng.randint(3, 5)):
                    w.add(f"{step}. {self._filler(plan.lang)}")
                w.add("")
            per = related // len(body_headings) + (1 if i < related % len(body_headings) else 0)
            for _ in range(per):
                target = self._pick(("digest",), (1,), plan)
                self._emit_link_line(w, plan, self._valid_link(target, plan))
            if i < len(plan.block_ids):
                self._paragraph_with_block(w, plan, plan.block_ids[i])
            else:
                w.add(self._filler(plan.lang, rng.randint(1, 3)))
                w.add("")
            if i == 0:
                self._emit_planted(w, plan, n_targets, n_anchors, ("digest",))
                self._emit_fakes(w, plan)
            if i == 1 and rng.random() < 0.05:
                same = rng.choice(plan.headings)
                self.truth.links += 1
                va = self.truth.valid_anchors
                va["heading"] = va.get("heading", 0) + 1
                self._emit_link_line(w, plan, self._fmt("", same))
                w.add("")
        w.add("## Sources")
        w.add("")
        for _ in range(rng.choices((1, 2, 3, 4), (2, 4, 3, 1))[0]):
            target = self._pick(("daily", "resource"), (4, 1), plan)
            prefix = "- " if rng.random() < 0.7 else ""
            self._emit_link_line(w, plan, self._valid_link(target, plan), prefix, source=True)
        w.add("")

    def _raw_body(self, w: _Writer, plan: _Plan, n_targets: int, n_anchors: int) -> None:
        rng = self.rng
        n_links = rng.choices(range(10), (1, 2, 3, 3, 3, 3, 3, 3, 2, 1))[0]
        if plan.kind == "resource":
            n_links = max(0, n_links - 2)
        per_section = [0] * len(plan.headings)
        for _ in range(n_links):
            per_section[rng.randrange(len(per_section))] += 1
        w.add(self._filler(plan.lang, rng.randint(1, 3)))
        w.add("")
        for i, heading in enumerate(plan.headings):
            w.add(f"## {heading}")
            w.add("")
            for _ in range(per_section[i]):
                target = self._pick(("daily", "digest", "resource"), (4, 4, 2), plan)
                link = self._valid_link(target, plan)
                if rng.random() < 0.3:
                    w.add(f"- {link}")  # a bare list of links is fine in a raw note
                else:
                    self._emit_link_line(w, plan, link, rng.choice(("", "- ", "> ")))
            if per_section[i]:
                w.add("")
            if i < len(plan.block_ids):
                self._paragraph_with_block(w, plan, plan.block_ids[i])
            else:
                for _ in range(rng.randint(1, 3)):
                    w.add(f"- {self._filler(plan.lang)}")
                w.add("")
            if i == 0:
                self._emit_planted(w, plan, n_targets, n_anchors, ("daily", "digest", "resource"))
                self._emit_fakes(w, plan)

    def _day_index_body(self, w: _Writer, plan: _Plan, n_targets: int, n_anchors: int) -> None:
        rng = self.rng
        same_day = [p for p in self.by_kind.get("daily", []) if p.day == plan.day][:12]
        w.add(f"Notes of {plan.title}." if plan.lang != "zh" else f"{plan.title} 的笔记。")
        w.add("")
        for heading in plan.headings[:1]:
            w.add(f"## {heading}")
            w.add("")
        for other in same_day:
            w.add(f"- {self._valid_link(other, plan)}")
        w.add("")
        for block_id in plan.block_ids:
            self._paragraph_with_block(w, plan, block_id)
        for heading in plan.headings[1:]:
            w.add(f"## {heading}")
            w.add("")
            w.add(self._filler(plan.lang, rng.randint(1, 2)))
            w.add("")
        self._emit_planted(w, plan, n_targets, n_anchors, ("daily", "digest"))
        self._emit_fakes(w, plan)

    # -- driver --------------------------------------------------------------------------
    def run(self) -> GroundTruth:
        self.plan()
        rng = self.rng
        n = self.n
        broken_targets = [0] * n
        broken_anchors = [0] * n
        for i in rng.choices(range(n), k=round(n * 0.10)):
            broken_targets[i] += 1
        for i in rng.choices(range(n), k=round(n * 0.05)):
            broken_anchors[i] += 1
        if self.root.exists():
            shutil.rmtree(self.root)
        (self.root / ".remelink").mkdir(parents=True)
        if self.style == "obsidian":
            (self.root / ".remelink" / "config.yaml").write_text(
                "links: {resolution: obsidian}\n", encoding="utf-8")
        made: set[str] = set()
        total = 0
        for plan in self.plans:
            text = self._note(plan, broken_targets[plan.index], broken_anchors[plan.index])
            data = text.encode("utf-8")
            if rng.random() < 0.01:
                data = b"\xef\xbb\xbf" + data
            full = self.root / plan.path
            folder = full.parent.as_posix()
            if folder not in made:
                full.parent.mkdir(parents=True, exist_ok=True)
                made.add(folder)
            full.write_bytes(data)
            total += len(data)
        self.truth.bytes = total
        return self.truth


def generate(root: Path, notes: int = 10_000, seed: int = 42, style: str = "path",
             digest_share: float = 0.45) -> GroundTruth:
    """Write a vault of `notes` notes into `root` (replacing it) and return what was planted."""
    return _Gen(Path(root), notes, seed, style, digest_share).run()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="genvault", description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="vault folder to create (replaced if it exists)")
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--style", choices=STYLES, default="path")
    parser.add_argument("--digest-share", type=float, default=0.45)
    parser.add_argument("--truth", type=Path, help="also write the full ground truth (JSON) here")
    args = parser.parse_args(argv)
    truth = generate(args.out, args.notes, args.seed, args.style, args.digest_share)
    if args.truth:
        args.truth.write_text(truth.to_json(), encoding="utf-8")
    print(json.dumps(truth.summary(), ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
