"""auto_link on the short units a real `dream run` produces (issue 13), in English and Chinese:
restatements update their node, look-alikes that state another fact never merge, related nodes
end linked through sentences that say how they relate, and the receipt says how many links."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from local_support import integrate_note, local_context

from remelink.config import Settings
from remelink.dream.run import DreamOptions, run_dream
from remelink.integrate import IntegrationContext, UnitResult
from remelink.lint import lint_links
from remelink.models.local import LocalModel, decide, relate, write

DEMO = Path(__file__).resolve().parent.parent / "fixtures" / "demo-vault"
TODAY = "2026-07-03"


@pytest.fixture
def ctx(tmp_path: Path) -> Iterator[IntegrationContext]:
    with local_context(tmp_path, TODAY) as context:
        yield context


def run(ctx: IntegrationContext, name: str, summary: str, path: str, bucket: str = "wiki",
        points: tuple[str, ...] = (), note: str | None = None) -> UnitResult:
    return integrate_note(ctx, path, name, summary, bucket, points,
                          note=note or f"# Note\n\n{summary}\n")


def text(ctx: IntegrationContext, rel: str) -> str:
    return (ctx.vault / rel).read_text(encoding="utf-8")


def assert_clean(ctx: IntegrationContext) -> None:
    report = lint_links(ctx.vault, ctx.settings)
    assert not [p for p in report.problems if p.level == "error"], report.problems


# -- restatements update the node -----------------------------------------------------------------
@pytest.mark.parametrize(("bucket", "first", "again"), [
    # a preference restated with its reason added
    ("personal", ("Alice prefers small pull requests", "Alice prefers small pull requests."),
     ("Alice prefers small pull requests", "Alice prefers small pull requests, because she "
      "reviews them on her phone between meetings.")),
    ("personal", ("团队更喜欢在中间件统一脱敏", "团队更喜欢在中间件统一脱敏。"),
     ("团队更喜欢在中间件统一脱敏",
      "团队更喜欢在中间件统一脱敏，因为这样每个业务模块不用各自处理。")),
    # a rule restated with more detail
    ("wiki", ("Schema migrations ship in their own deploy",
              "Schema migrations ship in their own deploy, before the code that needs them."),
     ("Schema migrations ship alone", "Schema migrations ship in their own deploy, before the "
      "code that needs them, and the pipeline refuses a release that mixes the two.")),
    ("wiki", ("所有写入日志的手机号和身份证号必须先脱敏",
              "所有写入日志的手机号和身份证号必须先脱敏。"),
     ("日志脱敏规则",
      "所有写入日志的手机号和身份证号必须先脱敏，只保留后四位，"
      "上线前用样例日志验证。")),
    # a definition restated from a new note, inside a decision that uses it
    ("wiki", ("Idempotency keys", "An idempotency key lets a server treat a retried request as "
              "the same request. The server stores the key with the first response for 24 hours "
              "and replays it."),
     ("Every POST that creates money movement must carry an idempotency key",
      "Every POST that creates money movement must carry an idempotency key; the server stores "
      "the key with the first response for 24 hours and replays it.")),
    ("wiki", ("幂等键", "幂等键是客户端提供的标识。"
                       "服务器保存幂等键和第一次的响应二十四小时，并在重试时返回它。"),
     ("涉及资金的接口必须带幂等键",
      "每个涉及资金的接口都必须带幂等键；"
      "服务器保存幂等键和第一次的响应二十四小时，并在重试时返回它。")),
])
def test_a_restatement_updates_its_node(ctx: IntegrationContext, bucket: str,
                                         first: tuple[str, str], again: tuple[str, str]) -> None:
    made = run(ctx, first[0], first[1], "daily/2026-06-01/first.md", bucket)
    assert made.action == "CREATE"
    second = run(ctx, again[0], again[1], "daily/2026-06-20/again.md", bucket)
    assert second.target == made.target, "a second node next to the first"
    assert second.action in ("CORROBORATE", "REFINE")
    node = text(ctx, made.target or "")
    assert "[[daily/2026-06-01/first.md]]" in node and "[[daily/2026-06-20/again.md]]" in node
    assert len(list((ctx.vault / "digest").glob("*/*.md"))) == 1
    assert_clean(ctx)


# -- look-alikes that state another fact never merge --------------------------------------------
REFUSALS = [
    ("order", "The staging cluster replaced the production cluster as the failover target.",
     "The production cluster replaced the staging cluster as the failover target."),
    ("order", "小王接替小李担任值班负责人。", "小李接替小王担任值班负责人。"),
    ("number", "Retry the export job up to 3 times before alerting.",
     "Retry the export job up to 5 times before alerting."),
    ("number", "所有对外接口的超时时间统一为 5 秒。", "所有对外接口的超时时间统一为 10 秒。"),
    ("date", "The billing freeze starts on 2026-07-01 for all teams.",
     "The billing freeze starts on 2026-08-15 for all teams."),
    ("date", "计费冻结从2026年7月1日开始，适用于所有团队。",
     "计费冻结从2026年8月15日开始，适用于所有团队。"),
    ("negation", "Cache the session tokens of admin users.",
     "Do not cache the session tokens of admin users."),
    ("negation", "管理员的会话令牌要缓存在内存里。", "管理员的会话令牌不要缓存在内存里。"),
    ("entity", "Alice prefers dark mode in the dashboard.",
     "Bob prefers dark mode in the dashboard."),
    ("entity", "小王喜欢把设计文档写成问答形式。", "小李喜欢把设计文档写成问答形式。"),
    # Latin names in Chinese: one opens the sentence, one follows a Chinese character.
    ("entity", "Delta Lantern 项目的鉴权网关服务的队列深度不得超过 2369 个任务。",
     "我们决定从现在起Kestrel Lantern 项目的鉴权网关服务的队列深度改为 2368 个任务。"),
    ("action", "The treasury team buys euros at the start of each month.",
     "The treasury team sells euros at the start of each month."),
    ("action", "财务团队每月初买入欧元。", "财务团队每月初卖出欧元。"),
]


@pytest.mark.parametrize(("kind", "node", "unit"), REFUSALS)
def test_a_look_alike_with_another_fact_is_never_the_same(kind: str, node: str,
                                                         unit: str) -> None:
    c = decide.compare(unit, node, node)
    assert c.conflict_kind == kind
    assert c.label != "same_abstraction"


@pytest.mark.parametrize(("kind", "node", "unit"), REFUSALS)
def test_a_look_alike_gets_its_own_node_end_to_end(ctx: IntegrationContext, kind: str,
                                                   node: str, unit: str) -> None:
    first = run(ctx, node.rstrip(".。"), node, "daily/2026-06-01/first.md")
    second = run(ctx, unit.rstrip(".。"), unit, "daily/2026-06-20/second.md")
    assert second.action == "CREATE" and second.target != first.target
    assert "[[daily/2026-06-20/second.md]]" not in text(ctx, first.target or "")
    assert_clean(ctx)


def test_the_order_rule_keeps_real_restatements() -> None:
    """Rewording that keeps who does what is not a swap."""
    node = "The payout worker retries a bank API timeout up to 3 times."
    c = decide.compare("The payout worker retries a bank API timeout up to 3 times, then parks "
                       "the payout.", node, node)
    assert c.conflict_kind is None
    assert decide.order_agreement("Carol replaced Dan as the lead.",
                                  "Dan replaced Carol as the lead.") < 0.8
    same = "团队更喜欢在中间件统一脱敏。"
    assert decide.order_agreement(same, same) == 1.0


@given(st.lists(st.sampled_from(["alpha", "beta", "gamma", "delta", "omega", "sigma"]),
                min_size=2, max_size=6, unique=True))
@settings(max_examples=60, deadline=None)
def test_order_agreement_is_one_exactly_for_the_same_order(words: list[str]) -> None:
    text = " ".join(words)
    assert decide.order_agreement(text, text) == 1.0
    flipped = " ".join(reversed(words))
    assert decide.order_agreement(text, flipped) == pytest.approx(1 / len(words))


# -- related nodes end linked ---------------------------------------------------------------------
def test_short_units_from_one_note_and_a_shared_term_end_linked(ctx: IntegrationContext) -> None:
    note = "# PDF export times out\n\nWe move long exports out of the request path.\n"
    idem = run(ctx, "Idempotency keys", "An idempotency key lets a server recognise a retried "
               "request and replay its first response.", "daily/2026-06-01/payments.md")
    decision = run(ctx, "Move long exports out of the request path", "We decided to move long "
                   "exports out of the request path: the API enqueues an export job.",
                   "daily/2026-06-20/export.md", note=note)
    runbook = run(ctx, "Queue a long export", "Queue a long export: accept the request.",
                  "daily/2026-06-20/export.md", "procedure",
                  points=("step: Accept the request.",
                          "step: Enqueue an export job with an idempotency key.",
                          "step: Return 202 with the job id."))
    assert runbook.action == "CREATE"
    body = text(ctx, runbook.target or "")
    assert f"[[{idem.target}|idempotency key]]" in body          # the term, woven where written
    assert f"The same note also records [[{decision.target}|" in body  # the note's decision
    assert "2 related links" in runbook.note
    assert_clean(ctx)


def test_chinese_units_of_one_note_end_linked(ctx: IntegrationContext) -> None:
    path = "daily/2026-06-21/数据脱敏.md"
    note = "# 日志数据脱敏\n\n- 所有写入日志的手机号必须先脱敏。\n"
    rule = run(ctx, "所有写入日志的手机号和身份证号必须先脱敏",
               "所有写入日志的手机号和身份证号必须先脱敏，只保留后四位。", path, note=note)
    steps = run(ctx, "日志数据脱敏", "日志数据脱敏: 在日志中间件里注册脱敏过滤器。", path,
                "procedure", points=("step: 在日志中间件里注册脱敏过滤器。",
                                     "step: 用正则匹配手机号和身份证号，替换为星号。"))
    pref = run(ctx, "团队更喜欢在中间件统一脱敏",
               "团队更喜欢在中间件统一脱敏，而不是在每个业务模块里各自处理。", path, "personal")
    # One note records all three; the links say that much and no more (issue 21).
    assert f"[[{rule.target}|" in text(ctx, steps.target or "")
    assert f"[[{steps.target}|日志数据脱敏]]" in text(ctx, pref.target or "")
    for target in (steps.target, pref.target):
        assert "这是 [[" not in text(ctx, target or "") and "做法见" not in text(ctx, target or "")
    assert "链接了" in pref.note
    assert_clean(ctx)


def test_unrelated_units_of_one_meeting_stay_apart(ctx: IntegrationContext) -> None:
    path = "daily/2026-06-22/周会.md"
    first = run(ctx, "用户不喜欢只看到转圈",
                "导出任务改为异步队列后，需要在前端显示进度百分比。", path, "personal")
    second = run(ctx, "代码评审时每个 PR 不超过 400 行",
                 "代码评审时每个 PR 不超过 400 行，方便评审。", path, "personal")
    assert "[[digest/" not in text(ctx, second.target or "")
    assert "[[digest/" not in text(ctx, first.target or "")
    assert "没有找到可链接的相关节点" in second.note


def test_a_persons_statements_link_and_a_mention_of_her_does_not(
        ctx: IntegrationContext) -> None:
    """Another of Dana's preferences links her first one; a decision Dana only signed off
    does not (issue 21: "Retention goes to 14 days ... Dana OK'd it" linked "Dana prefers not
    to be tagged on PRs")."""
    pref = run(ctx, "Dana prefers not to be tagged on PRs",
               "Dana prefers not to be tagged on PRs unless they touch money movement.",
               "daily/2026-02-04/1on1-dana.md", "personal")
    again = run(ctx, "Dana wants the weekly status in the team channel",
                "Dana wants the weekly status posted in the team channel on Fridays.",
                "daily/2026-02-11/1on1-dana.md", "personal")
    signed = run(ctx, "Retention on the postings topic goes to 14 days",
                 "Retention on the postings topic goes to 14 days. Storage costs 180 EUR a "
                 "month more, Dana OK'd it.", "daily/2026-03-02/platform-sync.md")
    assert f"[[{pref.target}|" in text(ctx, again.target or "")
    assert "[[digest/" not in text(ctx, signed.target or "")
    # 陈静's second preference links her first; a note that only names her does not.
    first = run(ctx, "陈静希望评审在 24 小时内给第一轮反馈",
                "陈静希望 code review 在 24 小时内给第一轮反馈。",
                "daily/2026-02-05/陈静一对一.md", "personal")
    second = run(ctx, "陈静更喜欢在设计文档里直接评论", "陈静更喜欢在设计文档里直接评论。",
                 "daily/2026-02-12/陈静一对一.md", "personal")
    named = run(ctx, "对账任务改到凌晨三点", "对账任务改到凌晨三点跑，陈静同意了。",
                "daily/2026-02-20/周会.md")
    assert f"[[{first.target}|" in text(ctx, second.target or "")
    assert "[[digest/" not in text(ctx, named.target or "")
    assert_clean(ctx)


def test_a_create_without_links_does_not_claim_related_links(ctx: IntegrationContext) -> None:
    r = run(ctx, "Cache pricing lookups", "We cache pricing lookups for 10 minutes in Redis.",
            "daily/2026-06-01/cache.md")
    assert r.action == "CREATE"
    assert "related link" not in r.note
    assert "no related node" in r.note


def _graph(root: Path) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for path in (root / "digest").glob("*/*.md"):
        rel = path.relative_to(root).as_posix()
        for target in re.findall(r"\[\[(digest/[^\]|#]+)", path.read_text(encoding="utf-8")):
            edges.setdefault(rel, set()).add(target)
            edges.setdefault(target, set()).add(rel)
    return edges


def _connected(edges: dict[str, set[str]], nodes: list[str]) -> bool:
    seen, todo = {nodes[0]}, [nodes[0]]
    while todo:
        for nxt in edges.get(todo.pop(), set()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return set(nodes) <= seen


def test_the_demo_related_groups_end_linked(tmp_path: Path) -> None:
    root = tmp_path / "demo"
    shutil.copytree(DEMO, root)
    s = replace(Settings(), embedder="none")
    run_dream(root, s, LocalModel(s), DreamOptions())
    edges = _graph(root)
    masking = ["digest/wiki/所有写入日志的手机号和身份证号必须先脱敏.md",
               "digest/procedure/日志数据脱敏.md",
               "digest/personal/团队更喜欢在中间件统一脱敏.md"]
    exports = ["digest/wiki/move-long-exports-out-of-the-request-path.md",
               "digest/procedure/queue-a-long-export.md"]
    for group in (masking, exports):
        assert all((root / p).exists() for p in group), group
        assert _connected(edges, group), group
    assert "digest/wiki/idempotency-keys.md" in edges["digest/procedure/queue-a-long-export.md"]
    assert "digest/procedure/rotate-api-keys.md" in \
        edges["digest/wiki/rotation-must-be-automated.md"]
    report = lint_links(root, s)
    assert not [p for p in report.problems if p.level == "error"]


# -- how a link is written ------------------------------------------------------------------------
_BUCKETS = st.sampled_from(["procedure", "personal", "wiki"])
_REASONS = st.sampled_from(["mention", "source", "term", "similar", "crosslang"])


@given(bucket=_BUCKETS, lang=st.sampled_from(["en", "zh"]),
       links=st.lists(st.tuples(_BUCKETS, st.text("abcdefghij", min_size=1, max_size=8),
                                _REASONS), min_size=1, max_size=6,
                      unique_by=lambda t: (t[0], t[1])))
@settings(max_examples=120, deadline=None)
def test_related_links_are_sentences_never_a_list(bucket: str, lang: str,
                                                  links: list[tuple[str, str, str]]) -> None:
    related = [write.Related(f"digest/{b}/{n}.md", f"Node {n}", r) for b, n, r in links]
    sentence = write.related_sentence(related, lang, bucket)
    for item in related:
        assert sentence.count(f"[[{item[0]}|") == 1
    assert "\n" not in sentence
    assert sentence.endswith("." if lang == "en" else "。")
    # each sentence has words besides its links: never a bare list of links
    for part in re.split(r"(?<=[.。])\s*", sentence):
        if part:
            assert re.sub(r"\[\[[^\]]*\]\]|[\s,、和.。]|and", "", part), part


def test_relation_sentences_say_only_what_their_reason_evidences() -> None:
    """Issue 21: a link never claims a relation nobody checked ("This is the runbook for",
    "A neighbouring runbook is"): the same note, a name the unit writes, a shared identifier,
    else "see also"."""
    rule = write.Related("digest/wiki/mask-logs.md", "Mask logs", "source")
    steps = write.Related("digest/procedure/mask.md", "日志数据脱敏", "linked")
    assert write.related_sentence([rule], "en", "procedure") == \
        "The same note also records [[digest/wiki/mask-logs.md|Mask logs]]."
    assert write.related_sentence([steps], "zh", "personal") == \
        "另见 [[digest/procedure/mask.md|日志数据脱敏]]。"
    used = write.Related("digest/wiki/idempotency-keys.md", "Idempotency keys", "mention")
    assert write.related_sentence([used], "en", "procedure") == \
        "It refers to [[digest/wiki/idempotency-keys.md|Idempotency keys]]."
    pool = write.Related("digest/procedure/pool.md", "Pool exhaustion", "named", "pgbouncer")
    assert write.related_sentence([pool], "en", "wiki") == \
        "[[digest/procedure/pool.md|Pool exhaustion]] also names pgbouncer."
    assert write.without_related_sentences(
        "Kept.\n\n[[digest/procedure/pool.md|Pool exhaustion]] also names pgbouncer.") == "Kept.\n"


def test_two_links_that_name_the_same_thing_agree_in_number() -> None:
    """"[[a]] and [[b]] also name X", never "also names": two subjects take the plural; the
    sentence is still recognised as a link sentence."""
    pool = write.Related("digest/procedure/pool.md", "Pool exhaustion", "named", "pgbouncer")
    lag = write.Related("digest/procedure/lag.md", "Consumer lag", "named", "pgbouncer")
    both = write.related_sentence([pool, lag], "en", "wiki")
    assert both == ("[[digest/procedure/pool.md|Pool exhaustion]] and "
                    "[[digest/procedure/lag.md|Consumer lag]] also name pgbouncer.")
    assert write.without_related_sentences(f"Kept.\n\n{both}") == "Kept.\n"
    assert write.related_sentence([pool, lag], "zh", "wiki").endswith("也写到 pgbouncer。")


class _CountingEmbedder:
    def __init__(self) -> None:
        self.texts: list[str] = []

    def similarity(self, a: str, others: list[str]) -> list[float]:
        self.texts.append(a)
        return [0.0 for _ in others]


def test_auto_blends_the_embedder_only_where_it_helped(ctx: IntegrationContext) -> None:
    """English decisions use the embedder; Chinese ones stay lexical (docs/benchmarks.md)."""
    assert decide.uses_embedder("en") and not decide.uses_embedder("zh")
    fake = _CountingEmbedder()
    assert isinstance(ctx.model, LocalModel)
    ctx.model.embedder = fake  # type: ignore[assignment]
    run(ctx, "日志脱敏", "所有写入日志的手机号必须先脱敏。", "daily/2026-06-01/a.md")
    run(ctx, "日志脱敏规则", "所有写入日志的手机号必须先脱敏，只保留后四位。",
        "daily/2026-06-02/b.md")
    assert fake.texts == []
    run(ctx, "Cache pricing", "We cache pricing lookups for ten minutes.", "daily/2026-06-03/c.md")
    run(ctx, "Pricing cache", "We cache the pricing lookups for ten minutes in Redis.",
        "daily/2026-06-04/d.md")
    assert fake.texts


@pytest.mark.parametrize(("a", "b", "shared"), [
    # A span that is one word names a thing, however it is spelled; so does an identifier.
    ("Set `noeviction` on the cache.", "Redis 用 `noeviction` 策略。", True),
    ("Raise `max_connections` to 200.", "把 `max_connections` 调到 200。", True),
    # The plain words of two command lines are everyone's: `install` names nothing.
    ("Run `uv tool install jupyterlab` first.", "Then `npm install --save-dev vite`.", False),
    ("用 `pip install -r requirements.txt` 安装。", "Run `brew install tool` once.", False),
    # An abbreviation is how a sentence goes on, not a thing it names (til tune: three nodes
    # were linked as "also names e.g.").
    ("Mock the calls, e.g. with respx, i.e. no network.",
     "Any client works, e.g. a session, i.e. one per test.", False),
])
def test_code_names_a_thing_only_when_written_as_one(a: str, b: str, shared: bool) -> None:
    from remelink.models.local import relate

    assert relate.shares_names(relate.named(a), relate.named(b)) is shared


def test_a_name_most_of_the_vault_writes_links_nothing() -> None:
    """"Datasette" in a vault of Datasette notes is its common word (as SilverBullet in the
    SilverBullet docs): read back from the index's IDF, it evidences no link; a name few
    nodes write still does. With no index statistics bound, nothing is filtered."""
    from remelink.index.core import bm25_idf
    from remelink.models.local import relate

    df = {"datasette": 30, "spatialite": 2, "sqlite": 25, "mod_spatialite": 2}
    idf = lambda term: bm25_idf(40, df.get(term, 0))  # noqa: E731
    assert relate.vault_share("Datasette", idf) == pytest.approx(0.75)
    assert relate.vault_share("spatialite", idf) == pytest.approx(0.05)
    common = ("We load it into Datasette and SQLite.", "It runs in Datasette with SQLite.")
    rare = ("Datasette loads `mod_spatialite`.", "SpatiaLite: `mod_spatialite` again.")
    for (a, b), linked in ((common, False), (rare, True)):
        mine = relate._specific(relate.named(a), idf)
        theirs = relate._specific(relate.named(b), idf)
        assert relate.shares_names(mine, theirs) is linked
    assert relate.shares_names(relate._specific(relate.named(common[0]), decide.default_idf),
                               relate._specific(relate.named(common[1]), decide.default_idf))


@pytest.mark.parametrize("code", [
    "```js\neditor.invokeCommand(\"System: Reload\")\n```",
    "~~~~\nH --> SI[\"System.invokeFunction\"]\n~~~~",
])
def test_a_link_is_never_woven_into_code(code: str) -> None:
    """Weaving a related node's name into code changes the code (the code guard refuses the
    engine's own write): only prose mentions become links, written out or folded."""
    from remelink.models.local import fenced

    body = f"{code}\n\nThe System page says more."
    for text in (body, fenced.fold(code.split("\n")) + "\n\nThe System page says more."):
        woven, rest = write.weave(text, [("digest/wiki/system.md", "System")])
        assert not rest
        assert fenced.unfold(woven).startswith(code), woven
        assert "The [[digest/wiki/system.md|System]] page says more." in woven


@pytest.mark.parametrize("literal", ["True", "False", "None", "null", "`false`", "`None`"])
def test_a_language_literal_names_nothing_two_nodes_share(literal: str) -> None:
    """`False` and `None` are every program's words: a pytest node and a boto node were linked
    through `False` and Python ("... also names python")."""
    a = relate.named(f"The fixture returns {literal} when the Python test is skipped.")
    b = relate.named(f"Set the flag to {literal} in Python before calling boto.")
    assert not relate.shares_names(a, b)
    named = relate.named("Pages go through `incident.io` now, says Dana.")
    assert relate.shares_names(named, relate.named("`incident.io` pages the on-call."))


def test_names_two_nodes_mention_in_passing_relate_nothing() -> None:
    """A link through a shared name needs that name to be what one of the two nodes is about
    (its name or description), not a name both mention in passing (til tune: "... also names
    manage.py", "... also names document")."""
    unit = relate.named("Run `python manage.py collectstatic` and set `DEBUG = False`.")
    node = relate.named("Add the app to `INSTALLED_APPS`, then run `manage.py migrate`.")
    assert relate.shares_names(unit, node)
    assert not relate._topical(unit, node, "Serving static files with WhiteNoise",
                                    "Docker Compose for Django development")
    assert relate._topical(unit, node, "Serving static files with WhiteNoise",
                                "Custom manage.py commands in Django")


def test_a_link_sentence_names_what_the_nodes_are_about() -> None:
    """The evidence a link sentence names is a shared name one of the nodes is about, before a
    longer one both mention in passing ("... also names search_type" between two PostgreSQL
    notes)."""
    unit = relate.named("Set `search_type` when querying PostgreSQL from `manage.py shell`.")
    node = relate.named("PostgreSQL 11 adds `search_type` to the full-text search API.")
    topical = relate._topical(unit, node, "Upgrading a Heroku PostgreSQL database")
    assert topical == {"postgresql"}
    assert relate._spelled("Set `search_type` when querying PostgreSQL.", unit, node,
                           topical) == "PostgreSQL"
