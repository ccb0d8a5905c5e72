"""The language a node must be written in and the language it is written in are judged on the
same prose (remelink/language.py): code, links and identifiers are in no language. Before,
the unit was judged on all its words and the node on its prose, and the engine's own Chinese
node for `journaldb 的 max_connections 是 200` was refused as "not English" until the unit
failed."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from local_support import dream

from remelink import language
from remelink.evidence import language_of
from remelink.guards import body_language
from remelink.models.local.protocol import stated_language
from remelink.prompts import integrate_messages
from remelink.units import Unit
from remelink.vault.notes import parse_text

POOL_ZH = """# pgb-journal 连接池配置调整

决定：连接池 `default_pool_size` 维持 40，不扩容。journaldb 的 `max_connections` 是 200，\
三个 pgbouncer 实例 × 40 = 120，还要给 replication 和运维留余量。
"""

POOL_EN = """# pgb-journal pool settings

Decision: keep `default_pool_size` at 40 on pgb-journal. journaldb has `max_connections` = 200 \
and three pgbouncer instances × 40 = 120, which leaves room for replication and 运维.
"""


def test_prose_leaves_out_code_links_and_identifiers() -> None:
    text = ("Set worker_max_tasks_per_child=500 with `celery -A app worker`, see "
            "journal.postings.v2, date.today(), src/app/main.py, https://x.io/a, 48h, k8s, "
            "--timeout=10m and [[digest/wiki/x.md]]\n```bash\nkubectl rollout\n```\n## Heading\n"
            "连接池 `default_pool_size` 维持 40")
    words = [w for w in language.prose(text).split() if any(c.isalpha() for c in w)]
    assert words == ["Set", "with", "see", "and", "连接池", "维持"]
    # Prose words stay, whatever their case or hyphens; CJK is never a word to drop.
    assert language.prose("PostgreSQL on-call well-known 的配置").split() == \
        ["PostgreSQL", "on-call", "well-known", "的配置"]


def _unit(name: str, summary: str, path: str = "daily/2026-02-12/x.md") -> Unit:
    return Unit(name=name, bucket="wiki", summary=summary, paths=(path,))


def test_the_unit_mostly_identifiers_is_judged_on_its_prose_as_its_node_is() -> None:
    # The case from the realistic vault: the words are mostly identifiers, the prose Chinese.
    unit = _unit("journaldb 的 max_connections",
                 "journaldb 的 `max_connections` 是 200，三个 pgbouncer 实例 × 40 = 120，"
                 "还要给 replication 和运维留余量。")
    assert language_of(unit, "") == "zh"
    node = parse_text("digest/wiki/n.md", f"---\nname: {unit.name}\n---\n{unit.summary}\n")
    assert body_language(node) == "zh"
    # The English shape: identifiers and a Chinese word in English prose is English, both ways.
    unit = _unit("journaldb max_connections",
                 "journaldb has `max_connections` = 200 and three pgbouncer instances × 40 = "
                 "120, which leaves room for replication.")
    assert language_of(unit, "") == "en"
    node = parse_text("digest/wiki/n.md", f"---\nname: {unit.name}\n---\n{unit.summary}\n")
    assert body_language(node) == "en"


def test_what_the_model_is_told_is_what_the_engine_reads_back() -> None:
    for lang in ("en", "zh"):
        messages = integrate_messages(_unit("u", "s"), "", language=lang, today="2026-02-12")
        assert stated_language(messages) == lang  # type: ignore[arg-type]
    assert stated_language([{"role": "system", "content": "other"}]) is None




def test_the_realistic_note_gives_nodes_in_its_own_language(tmp_path: Path) -> None:
    for lang, text in (("zh", POOL_ZH), ("en", POOL_EN)):
        digest = dream(tmp_path / lang, {f"daily/2026-02-12/pool-{lang}.md": text})
        assert digest
        for rel, node in digest.items():
            assert body_language(parse_text(rel, node)) in (lang, None), node


def test_a_mixed_statement_may_give_a_node_on_either_side_of_the_line(tmp_path: Path) -> None:
    # Found by the property below: the unit (its name repeats its English half) is English by
    # a hair, the node (the note's Chinese title quoted in its Sources) Chinese by a hair.
    dream(tmp_path, {"daily/2026-02-12/note.md": (
        "# 连接池\n\nDecision: 连接池维持不变 连接池维持不变.\nDecision: keep the pool size we "
        "decided not to scale 决定不扩容 决定不扩容 决定不扩容 `max_connections`.\n")})
    assert language.clarity("keep the pool size we decided not to scale 决定不扩容 决定不扩容 "
                            "决定不扩容", 6) == "mixed"
    assert language.clarity("keep the pool size, `决定不扩容`", 6) == "en"
    assert language.clarity("连接池 `default_pool_size` 维持 40，不扩容 (pgbouncer)", 6) == "zh"


_ZH = ["连接池维持不变", "决定不扩容", "还要给运维留余量", "客户端等太久没有意义",
       "明天上午窗口发布", "必须先脱敏再写日志", "的", "和"]
_EN = ["keep the pool size", "we decided not to scale", "leave room for operations",
       "waiting longer makes no sense", "ship it in the morning window", "always mask first"]
_IDENT = ["`max_connections`", "max_connections", "journal.postings.v2", "date.today()",
          "charts/pgb-journal/values-prod.yaml", "https://example.com/a/b", "48h", "10m",
          "--timeout=10m", "k8s", "pgbouncer", "journaldb", "`kubectl -n ledger get pods`",
          "worker_max_tasks_per_child=500", "450 MB", "v2"]
_FENCE = "\n```bash\nkubectl -n ledger rollout status deploy/ledger-api --timeout=10m\n```\n"
_piece = st.one_of(st.sampled_from(_ZH), st.sampled_from(_EN), st.sampled_from(_IDENT))
_sentence = st.lists(_piece, min_size=2, max_size=9).map(" ".join)
_line = st.one_of(_sentence.map(lambda s: f"Decision: {s}."),
                  _sentence.map(lambda s: f"决定：{s}。"),
                  _sentence.map(lambda s: f"- Rule: {s}."),
                  _sentence.map(lambda s: f"- 规则：{s}。"),
                  st.just(_FENCE))


@settings(max_examples=12, deadline=None)
@given(st.lists(_line, min_size=1, max_size=6), st.sampled_from(["连接池", "Pool settings"]))
def test_the_engine_never_fails_its_own_language_guard(tmp_path_factory: object, lines: list[str],
                                                       title: str) -> None:
    root = tmp_path_factory.mktemp("v")  # type: ignore[attr-defined]
    dream(root, {"daily/2026-02-12/note.md": f"# {title}\n\n" + "\n".join(lines) + "\n"})
