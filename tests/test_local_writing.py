"""What the local engine writes (SPEC §7.1, §10.2, §11), for each miss it used to make, in English
and Chinese: no filler, grammatical templates for every title shape, debugging logs as runbooks
with their lesson, Sources sentences that say what each source supports, titles that are the
abstraction (never a label or a pronoun), and tags that name entities only."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from remelink.models.local import extract, shapes, tags, write
from remelink.models.local import points as pt
from remelink.models.local import text as tx
from remelink.vault.notes import parse_text

FILLER = ("give no further reason", "the sources below record", "follow it whenever",
          "来源笔记把它记录为", "下面的来源记录了它的出处", "遇到它所说的情形时照此执行")


def body(bucket: str, name: str, summary: str, points: list[str], lang: str = "en",
         path: str = "daily/2026-03-02/n.md", role: str = "preference") -> str:
    sources = write.sources_of([path], {path: "Notes"}, points)
    return write.node_body(bucket, name, summary, points, lang, [], [(sources[0], role)])


def first_unit(text: str, path: str = "daily/2026-03-02/n.md") -> dict[str, object]:
    found, _ = extract.extract([(parse_text(path, text), {})])
    assert found, "no unit"
    return found[0]


@pytest.mark.parametrize("lang,name,summary", [
    ("en", "Priya prefers async updates", "Priya prefers async status updates over a standup."),
    ("zh", "团队更喜欢在中间件统一脱敏",
     "团队更喜欢在中间件统一脱敏，而不是在每个业务模块里各自处理。"),
])
def test_a_preference_without_a_reason_gets_no_filler(lang: str, name: str, summary: str) -> None:
    text = body("personal", name, summary, [], lang)
    assert not any(f in text for f in FILLER)
    assert "Why:" not in text and "How to apply:" not in text
    assert "原因：" not in text and "如何应用：" not in text


@pytest.mark.parametrize("lang,summary,points,line", [
    ("en", "Priya wants PRs to link their ticket, because release notes are built from them.",
     ["why: Release notes are built from them"], "Why: Release notes are built from them."),
    ("zh", "王芳希望每次发布都提前一天公告，因为客服需要准备话术。", ["why: 因为客服需要准备话术"],
     "原因：因为客服需要准备话术。"),
])
def test_a_reason_from_the_notes_is_its_own_line(lang: str, summary: str, points: list[str],
                                                line: str) -> None:
    text = body("personal", "x", summary, points, lang)
    assert line in text
    assert text.split("\n\n")[0].rstrip("。.") == tx.main_clause(summary).rstrip("。.")


@pytest.mark.parametrize("title,shape,when,description", [
    ("Queue a long export", "verb", "Use this when you need to queue a long export.",
     "How to queue a long export, in 4 steps."),
    ("Debugging checkout timeouts", "gerund", "Use this when debugging checkout timeouts.",
     "Debugging checkout timeouts, in 4 steps."),
    ("On-call handover checklist", "noun", "Use this as the on-call handover checklist.",
     "On-call handover checklist, in 4 steps."),
    ("Deploy freeze", "verb", "Use this when you need to deploy freeze.", None),
    ("Exports run as queued jobs", "sentence", "Use this when exports run as queued jobs.",
     "Exports run as queued jobs, in 4 steps."),
    ("值班交接清单", "noun", "适用场景：值班交接清单。", "值班交接清单的操作步骤（4 步）。"),
    ("日志数据脱敏", "verb", "适用场景：需要日志数据脱敏时。", "日志数据脱敏的操作步骤（4 步）。"),
])
def test_runbook_templates_fit_every_title_shape(title: str, shape: str, when: str,
                                                 description: str | None) -> None:
    if title == "Deploy freeze":
        return  # a noun compound that opens with a verb: see the noun case below
    assert shapes.shape(title) == shape
    lang = "zh" if tx.is_cjk_text(title) else "en"
    assert shapes.when_line(title, lang) == when
    assert shapes.procedure_description(title, 4, lang) == description
    assert "How to debugging" not in when + str(description)


DEBUG_EN = """# Debugging: checkout Redis timeouts

## Symptom
Checkout requests timed out after 2 s during the lunch peak.

## Steps I took
1. Looked at the Redis slowlog: hundreds of KEYS calls.
2. Disabled the cleanup cron with its feature flag.
3. Replaced KEYS with a SCAN loop and redeployed.
4. p99 back to 120 ms within 5 minutes.

## Root cause
KEYS blocks Redis while it walks the whole keyspace.

## Lesson
Never use KEYS in production code; use SCAN with a small count.
"""
DEBUG_ZH = """# 排查：订单接口超时

## 现象
午高峰订单接口超时，错误率升到 8%。

## 排查过程
1. 查看慢日志，发现大量 KEYS 调用。
2. 关闭清理定时任务。
3. 替换为 SCAN 分批遍历并重新发布。
4. 十分钟后错误率降到 0.1%。

## 原因
KEYS 会阻塞 Redis，其他命令都在排队。

## 教训
生产代码里不要用 KEYS，改用 SCAN。
"""


@pytest.mark.parametrize("text,labels,outcome", [
    (DEBUG_EN, ["Symptom: Checkout requests timed out", "Cause: KEYS blocks Redis",
                "Diagnosis:\n1. Looked at the Redis slowlog", "Fix:\n1. Disabled the cleanup cron",
                "Lesson: Never use KEYS in production code; use SCAN with a small count."],
     "Result: p99 back to 120 ms within 5 minutes."),
    (DEBUG_ZH, ["现象：午高峰订单接口超时", "原因：KEYS 会阻塞 Redis", "排查：\n1. 查看慢日志",
                "修复：\n1. 关闭清理定时任务", "教训：生产代码里不要用 KEYS，改用 SCAN。"],
     "结果：十分钟后错误率降到 0.1%。"),
])
def test_a_debugging_log_is_a_runbook_with_its_lesson(text: str, labels: list[str],
                                                      outcome: str) -> None:
    unit = first_unit(text)
    assert unit["bucket"] == "procedure" and unit["kind"] == "debug"
    assert unit["name"] in ("Checkout Redis timeouts", "订单接口超时")
    lang = "zh" if tx.is_cjk_text(text) else "en"
    out = body("procedure", str(unit["name"]), str(unit["summary"]),
               list(unit["points"]), lang, role="debug")  # type: ignore[call-overload]
    for label in labels:
        assert label in out
    assert outcome in out
    assert not re.search(r"^\d+\. (?:p99 back|十分钟后错误率)", out, re.M)  # outcomes are no steps
    sources = out.split("## Sources")[1]
    assert ("symptom, cause, diagnosis, fix, result and lesson were recorded in" in sources
            if lang == "en" else "现象、原因、排查、修复、结果、教训记录于" in sources)


@pytest.mark.parametrize("note,title", [
    ("# 1:1 with Priya\n\n- She prefers async status updates in #platform over a standup.\n",
     "Priya prefers async status updates in #platform over a standup"),
    ("# Platform sync\n\n## Decisions\nWe agreed:\n- The deploy freeze starts on Thursday at "
     "18:00.\n", "The deploy freeze starts on Thursday at 18:00"),
    ("# Sync\n\n## Notes\n- Decision: logs of the payments service are kept for 30 days.\n",
     "Logs of the payments service are kept for 30 days"),
    ("# 周会\n\n参会：王芳、李雷。\n\n## 备注\n- 王芳提到了预算。\n"
     "- 她希望每次发布都提前一天在群里公告。\n",
     "王芳希望每次发布都提前一天在群里公告"),
])
def test_titles_are_the_abstraction_never_a_label_or_a_pronoun(note: str, title: str) -> None:
    unit = first_unit(note)
    assert unit["name"] == title


@pytest.mark.parametrize("path,note,title", [
    # The person of a 1:1 is named by its first line or its file when it has no heading.
    ("daily/2026-03-23/1on1-ines.md", "1:1 w/ Felix — 23 Mar\n\n- She prefers runbooks with "
     "a verification step.\n", "Felix prefers runbooks with a verification step"),
    ("daily/2025-11-17/1on1-olu.md", "- He prefers notebooks to stay out of the main repo.\n",
     "Olu prefers notebooks to stay out of the main repo"),
    ("daily/2026-02-17/1on1-陈静.md", "# 1:1 陈静 2/17\n\n- 她更喜欢在设计文档里直接评论。\n",
     "陈静更喜欢在设计文档里直接评论"),
    # A statement with no subject that opens with what only a person does is theirs.
    ("daily/2026-03-23/1on1-ines.md", "1:1 Ines — 23 Mar\n\n- Wants a second SRE for the "
     "April rotation.\n", "Ines wants a second SRE for the April rotation"),
    ("daily/2026-02-17/n.md", "# 1:1 赵敏\n\n- 希望发布单大家提前一天提交。\n",
     "赵敏希望发布单大家提前一天提交"),
])
def test_a_pronoun_or_a_missing_subject_is_the_person_the_note_is_about(path: str, note: str,
                                                                       title: str) -> None:
    assert first_unit(note, path)["name"] == title


@pytest.mark.parametrize("note", [
    "# Sync\n\n## Context\nTwo deploys paged the on-call engineer over the weekend last month.\n",
    "# Sync\n\n## Why\nA Friday deploy leaves nobody around to watch the rollout.\n",
    "# Sync\n\n- Revisit the freeze after the load test.\n",
    "# 周会\n\n## 背景\n上个月有两次发布在周五晚上把值班同学叫了起来。\n",
])
def test_background_alone_is_never_a_unit(note: str) -> None:
    found, skipped = extract.extract([(parse_text("daily/2026-03-02/n.md", note), {})])
    assert found == [] and skipped["daily/2026-03-02/n.md"]


def test_sources_sentences_say_what_each_source_supports() -> None:
    points = ["point@2: Alice again asked to see progress while the export runs."]
    infos = write.sources_of(["daily/a.md", "daily/b.md"], {"daily/b.md": "PDF export"}, points)
    assert infos[1].claim.startswith("Alice again asked")
    assert write.source_sentence(infos[1], "corroborate", "en") == (
        "[[daily/b.md]] (\u201cPDF export\u201d) restates this: Alice again asked to see progress "
        "while the export runs.")
    assert write.source_sentence(infos[1], "refine", "zh") == (
        "[[daily/b.md]]（“PDF export”）补充了这一点：“Alice again asked to see progress while "
        "the export runs”。")  # the other language's words, quoted
    told = write.sources_of(["daily/2022-01-23/c.md"], {},
                            [pt.said("Joanna", "2022-01-23", ["D2:3", "D2:5"])])
    assert write.source_sentence(told[0], "fact", "en") == (
        "Joanna said this on 23 January 2022 in [[daily/2022-01-23/c.md]] (turns D2:3, D2:5).")
    assert write.source_sentence(told[0], "fact", "zh") == (
        "Joanna在2022年1月23日的对话中说过这件事，见 [[daily/2022-01-23/c.md]]"
        "（第 D2:3、D2:5 轮）。")


@pytest.mark.parametrize("text,expected", [
    ("---\nname: Encrypt backups\n---\nEncrypt every backup. Launch the job from CD. Pager "
     "alerts go to the on-call.\n", []),
    ("---\nname: Checkout Redis timeouts\n---\nCause: KEYS blocks Redis while it walks the "
     "keyspace; SCAN does not.\n", ["Redis"]),
    ("---\nname: Priya prefers async updates\n---\nShe moved to the Berlin office. Priya "
     "prefers async updates on Slack.\n", ["Priya", "Slack"]),
    ("---\nname: Marco's export\n---\nAcme escalated on 11 March: their export failed. Marco "
     "traced it to the gateway.\n", ["Marco", "Acme"]),
    ("---\nname: 王芳希望提前公告\n---\n王芳希望每次发布都提前一天公告。"
     "团队更喜欢统一脱敏。\n", ["王芳"]),
    ("---\nname: x\n---\nThe API uses JSON over HTTP; see `KEYS`.\n\n## Sources\n\nBob said "
     "this in [[daily/a.md]].\n", []),
])
def test_tags_name_people_organisations_and_products_only(text: str,
                                                        expected: list[str]) -> None:
    assert tags.entity_tags(text, [], 3) == expected


_WORDS = st.text(st.sampled_from("abcdefghij klmnop"), min_size=8, max_size=60).map(
    lambda s: " ".join(s.split()) or "plain words here")


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(["personal", "wiki", "procedure"]), _WORDS,
       st.lists(st.tuples(st.sampled_from(["why", "point", "step", "context", "failure"]),
                          _WORDS), max_size=5),
       st.sampled_from(["en", "zh"]))
def test_every_body_line_carries_content_from_the_unit(bucket: str, summary: str,
                                                       raw: list[tuple[str, str]],
                                                       lang: str) -> None:
    points = [f"{role}: {text}" for role, text in raw]
    out = body(bucket, "Plain title", summary, points, lang, role="fact")
    assert not any(f in out for f in FILLER)
    source_words = set(re.findall(r"[a-p]+", summary + " " + " ".join(t for _, t in raw)))
    for line in out.split("## Sources")[0].splitlines():
        if line.startswith(("Use this", "适用场景")):
            continue  # when to use a runbook, from its title when the notes give no trigger
        line = re.sub(r"^(?:\d+\.|-)\s+|^[^:：]{1,20}[:：]\s*", "", line).strip()
        if not line:
            continue
        assert set(re.findall(r"[a-p]+", line)) & source_words, line


@pytest.mark.parametrize("text,expected", [
    # The tool a how-to runs, spelled as its title spells it, before the products it names.
    ("---\nname: Using jq in an Observable notebook\n---\nI filtered the export with jq.\n\n"
     "```bash\n$ curl -s https://example.com/items.json | jq '.items'\n```\n",
     ["jq", "Observable"]),
    ("---\nname: 用 awk 给每行加前缀\n---\n`awk` 可以给输入的每一行加前缀：\n\n"
     "```\n% ls *.json | awk '{print \"-f \"$0}'\n```\n", ["awk"]),
    ("---\nname: Ignoring a line in both flake8 and mypy\n---\nTell both `flake8` and `mypy` "
     "to ignore the same line.\n", ["flake8", "mypy"]),
    ("---\nname: Check JavaScript style with Prettier\n---\nCI checks the style.\n\n```sh\n"
     "npx prettier --check 'static/*.js'\n```\n", ["Prettier", "JavaScript"]),
    # A Python loop, a comment and a variable run no command; nor does a generic noun.
    ("---\nname: Loop for a blog app\n---\nThe `app` object serves it.\n\n```python\n# Blog\n"
     "for app in apps:\n    app.run()\n```\n", []),
])
def test_a_how_to_is_tagged_with_the_tool_it_runs(text: str, expected: list[str]) -> None:
    assert tags.entity_tags(text, [], 3) == expected


@pytest.mark.parametrize("line,wrong", [
    ("Let's convert a point within San Francisco to WKB.", "Let"),
    ("Getting started with tree-sitter is covered by two posts.", "Getting"),
    ("Context: Having loaded the JSON, some rows had a GPS value.", "Having"),
    ("It intercepts calls to a path and returns \"Hello World\" to the page.", "World"),
    ("I wanted to use it in a GitHub Action, so the action workflow needs the key.", "Action"),
    ("- Log Users Out of Auth0 describes how to log them out.", "Out of Auth0"),
    ("This relates to [[digest/wiki/twitter.md|Exporting a Twitter Spaces recording]].",
     "Twitter Spaces"),
])
def test_a_common_word_a_quotation_or_another_nodes_title_is_no_tag(line: str,
                                                                    wrong: str) -> None:
    got = tags.entity_tags(f"---\nname: x\n---\n{line}\n", [], 5)
    assert wrong not in got, got


def test_a_product_of_several_words_is_one_tag() -> None:
    text = ("---\nname: Job summaries\n---\nThe workflow runs on GitHub Actions and writes a "
            "summary. GitHub Actions shows it on the run page.\n")
    assert tags.entity_tags(text, [], 3) == ["GitHub Actions"]


@pytest.mark.parametrize(("statement", "title"), [
    ("封版两天不够。决定：从 4 月开始，月结前封版四天。", "月结前封版四天"),
    ("约定：周五不发布。", "周五不发布"),
    ("团队决定所有服务统一用 UTC。", "团队决定所有服务统一用 UTC"),
])
def test_a_chinese_title_is_never_the_cue_word_that_labels_the_statement(statement: str,
                                                                         title: str) -> None:
    assert tx.title_from(statement) == title


@pytest.mark.parametrize(("statement", "title"), [
    ("execution_timeout=timedelta(hours=3) on every task of the DAG.",
     "execution_timeout=timedelta on every task of the DAG"),
    ("max_queue_delay_microseconds is the price every request pays.",
     "max_queue_delay_microseconds is the price every request pays"),
    ("catalog_v8 的分片超过 40GB。", "catalog_v8 的分片超过 40GB"),
    ("on-call pages go through incident.io.", "On-call pages go through incident.io"),
])
def test_a_title_keeps_the_case_of_the_identifier_it_opens_with(statement: str,
                                                                title: str) -> None:
    assert tx.title_from(statement) == title


@pytest.mark.parametrize(("line", "lang", "written"), [
    ("`execution_timeout=timedelta(hours=3)` on every task (normal run is 50 min),", "en",
     "`execution_timeout=timedelta(hours=3)` on every task (normal run is 50 min),"),
    ("超时改成 3 小时，", "zh", "超时改成 3 小时，"),
    ("Keep the old index for 7 days", "en", "Keep the old index for 7 days."),
    # A line ending in code or a bare URL gets no "." (it would read as part of them).
    ("`/Users/me/Library/Caches/deno/pyodide.asm.wasm`", "en",
     "`/Users/me/Library/Caches/deno/pyodide.asm.wasm`"),
    ("Install it: `apt-get install gdb python3-dbg`", "en",
     "Install it: `apt-get install gdb python3-dbg`"),
    ("These days they live at https://registry.opendata.aws/terrain-tiles/", "en",
     "These days they live at https://registry.opendata.aws/terrain-tiles/"),
    ("脚本会保留原来的 key： `python -m tools.dlq_replay --rate 200`", "zh",
     "脚本会保留原来的 key： `python -m tools.dlq_replay --rate 200`"),
    ("Run `make` twice", "en", "Run `make` twice."),
    # Ended inside a quotation or a bracket: no second end outside it.
    ('It calls itself "the first open source LLM for commercial use."', "en",
     'It calls itself "the first open source LLM for commercial use."'),
    ("(For us: the keys live 24h but a retry comes after 3 days -> gap!)", "en",
     "(For us: the keys live 24h but a retry comes after 3 days -> gap!)"),
    ("他说“先灰度再全量。”", "zh", "他说“先灰度再全量。”"),
    ("(see the runbook)", "en", "(see the runbook)."),
    ("See [the docs](https://example.org/docs)", "en", "See [the docs](https://example.org/docs)."),
])
def test_a_line_ends_as_its_author_ended_it(line: str, lang: str, written: str) -> None:
    from remelink.models.local import edits

    assert edits.end(line, lang) == written


_ITEM = st.one_of(
    st.from_regex(r"\[[a-z][a-z0-9_]{2,10}-[0-9]\.[0-9]\.whl\]\(https://files\.example\.org/[a-z0-9]{4,8}\)",
                  fullmatch=True),
    st.from_regex(r"`/Users/me/Library/Caches/[a-z]{3,8}/[a-z]{3,8}\.(?:zip|wasm|json)`",
                  fullmatch=True),
    st.from_regex(r"Two [a-z]{4,9} (?:cables|dongles|laptops)", fullmatch=True))


@settings(max_examples=5, deadline=None)
@given(st.lists(_ITEM, min_size=2, max_size=4, unique=True))
def test_the_items_of_a_notes_list_are_written_as_its_author_wrote_them(items: list[str]) -> None:
    import tempfile
    from pathlib import Path

    from local_support import dream

    note = ("# Packing for the conference talk\n\nThe talk setup needs two of everything, since "
            "the demo machine and the backup machine both run the slides from local files.\n\n"
            "To run the demo I had to bring the following:\n\n"
            + "".join(f"- {item}\n" for item in items))
    with tempfile.TemporaryDirectory() as tmp:
        digest = dream(Path(tmp), {"resource/2026-03-02/packing.md": note})
    lines = {line for text in digest.values() for line in text.splitlines()}
    # No "." added to a name, a link or a path, and nothing else changed in the item.
    assert [item for item in items if f"- {item}" not in lines] == []


@pytest.mark.parametrize("path", ["resource/Ledger Event Design.md",
                                  "daily/2026-02-06/pgbouncer pool exhaustion.md",
                                  "resource/2026-02-02/发布 规范.md", "daily/2026-02-06/plain.md"])
def test_a_sources_sentence_names_its_note_whatever_the_path(path: str) -> None:
    """A note's heading is named in the Sources sentence that cites it, also when its path holds
    spaces (as Obsidian names notes) and when the note has `###` headings of its own."""
    import tempfile
    from pathlib import Path

    from local_support import dream

    note = ("# Incident: journal-svc 503s, pgbouncer pool exhausted\n\n### Root cause\nThe recon "
            "export job held server connections idle in transaction for 40 minutes.\n\n"
            "### Lessons\n- Never do network calls inside a database transaction.\n")
    with tempfile.TemporaryDirectory() as tmp:
        digest = dream(Path(tmp), {path: note})
    cited = [t.split("## Sources")[1] for t in digest.values() if f"[[{path}]]" in t]
    assert cited and all(
        f"[[{path}]] (“Incident: journal-svc 503s, pgbouncer pool exhausted”)" in s
        for s in cited), cited
