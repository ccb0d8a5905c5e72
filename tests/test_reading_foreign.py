"""Issue 21 (i21n): nodes written from notes nobody here wrote, read as their author would. A
day named relative to the note (`today`, `昨天`) is not in a title or a description read alone;
a tool keeps the note's spelling at a title's start; a tag is a name, never a closed-class
word, a label on a screen, half of a name or a person's first name when the note gives the
full one."""

from __future__ import annotations

import pytest

from remelink.models.local import shapes, tags, titles, write
from remelink.models.local import text as tx


@pytest.mark.parametrize(("statement", "title"), [
    ("card captures are async since this morning, watch journal_posting_duplicates_total",
     "Card captures are async"),
    ("Tomasz: shadow mode deploy tomorrow.", "Shadow mode deploy"),
    ("Month-start peak today, pgbouncer cl_waiting touched 300.", "Month-start peak"),
    ("posting-consumer shadow mode 昨天上线，目前对比结果 100% 一致。",
     "posting-consumer shadow mode 上线"),
    ("今天 recon-nightly 又失败了，原因是银行文件晚到。", "recon-nightly 又失败了"),
])
def test_a_title_names_no_day_relative_to_the_note(statement: str, title: str) -> None:
    assert tx.title_from(statement) == title


def test_a_persons_fact_title_names_no_relative_day() -> None:
    assert titles.fact_title("Joanna printed her first screenplay yesterday", "Joanna") == \
        "Joanna printed her first screenplay"


@pytest.mark.parametrize(("summary", "description"), [
    ("OpenAI announced new models today. They have larger contexts.",
     "OpenAI announced new models."),
    ("Today Datasette started serving an Access-Control-Max-Age header.",
     "Datasette started serving an Access-Control-Max-Age header."),
    # What someone said stays as said; code is never touched.
    ("陈静希望 review 在 24 小时内给反馈，哪怕只是说「今天没空，明天看」。",
     "陈静希望 review 在 24 小时内给反馈，哪怕只是说「今天没空，明天看」。"),
    ("Never call `date.today()` in business logic, pass the clock in.",
     "Never call date.today() in business logic, pass the clock in."),
    ("我们今天把连接池从 40 调到 80。", "我们把连接池从 40 调到 80。"),
])
def test_a_description_names_no_day_relative_to_the_note(summary: str, description: str) -> None:
    assert shapes.description(summary, "zh" if tx.is_cjk_text(summary) else "en") == description


@pytest.mark.parametrize(("title", "body", "expected"), [
    ("Hexdump and hexdump -C", "# hexdump and hexdump -C\n\nRun `hexdump -C file`.\n",
     "hexdump and hexdump -C"),
    ("Scp files to and from Fly", "# How to scp files to and from Fly\n\nusing `scp`.\n",
     "scp files to and from Fly"),
    ("Payout-runner OOMKilled", "# payout-runner OOMKilled — debugging log\n",
     "payout-runner OOMKilled"),
    ("Posting-consumer lag 排查记录", "# posting-consumer lag 排查记录\n",
     "posting-consumer lag 排查记录"),
    # English stays capitalised: a word the prose capitalises, a gerund, an English compound.
    ("Python packaging", "Run `python -m build`, as Python does.\n", "Python packaging"),
    ("Running tests", "```\nrunning tests\n```\n", "Running tests"),
    ("On-call handover", "# on-call handover\n", "On-call handover"),
    ("Subtests in pytest 9.0.0+", "# Subtests in pytest 9.0.0+\n\n`subtests.test(x=1)`\n",
     "Subtests in pytest 9.0.0+"),
])
def test_a_title_spells_a_tool_as_the_note_does(title: str, body: str, expected: str) -> None:
    assert tx.note_case(title, body) == expected


def test_a_name_with_a_capital_inside_keeps_its_case() -> None:
    assert tx.capitalised("macOS Catalina sort-of includes Python 3") == \
        "macOS Catalina sort-of includes Python 3"
    assert tx.capitalised("iPhone home screen") == "iPhone home screen"
    assert tx.capitalised("rotate the vault tokens") == "Rotate the vault tokens"


def _node(name: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: x\n---\n{body}\n"


@pytest.mark.parametrize(("name", "body", "tag", "not_tag"), [
    ("Using Fabric with an SSH public key",
     "Inspired by a tweet by Mike Driscoll I tried Fabric. Mike's recipe uses a key.",
     "Mike Driscoll", "Mike"),
    ("Replicating SQLite with rqlite",
     "rqlite author Philip O'Toole confirmed the bug. Datasette runs on it.",
     "Philip O'Toole", "Philip"),
    ("Using pysqlite3 on macOS",
     "The Homebrew SQLite is keg-only on macOS.\n\nAs illustrated by the following:\n",
     "macOS", "As"),
    ("Accessing 1Password items from the terminal",
     "Open 1Password and find the Developer tab in settings and enable the CLI.",
     "1Password", "Developer"),
    ("Reviewing your history with ClickHouse",
     "Code ended up in the AI training data known as The Stack, says ClickHouse.",
     "ClickHouse", "Stack"),
    ("Expanding the Code Interpreter",
     "We tried Deno and Lua.\n\n"
     "> subprocess.run(['chmod', '755', 'php'], capture_output=True, text=True)\n",
     "Deno", "True"),
    ("Journal Posting Design",
     "Producers publish a PostingRequested event that Kafka keeps.\n\n"
     "The `PostingRequested` schema is Avro.",
     "Kafka", "PostingRequested"),
    ("死信重放手册", "Deno 不参与。按 Ctrl-C 停止 Redis 的重放，Shanghai-hours 值班。",
     "Redis", "Ctrl-C"),
])
def test_tags_are_names_not_words_or_halves(name: str, body: str, tag: str, not_tag: str) -> None:
    out = tags.entity_tags(_node(name, body), [], 5)
    assert not_tag not in out, out
    assert tag in out or tag == "1Password", out


def test_a_setting_or_a_class_is_no_tool() -> None:
    ini = _node("连接池 default_pool_size 从 40 调到 80", "```\ndefault_pool_size = 80\n```\n")
    assert tags.tools(ini) == []
    span = _node("连接池 default_pool_size 从 40 调到 80", "| `default_pool_size` | 40 | 80 |\n")
    assert tags.tools(span) == []
    jinja = _node("Turning on Jinja autoescaping when using Template directly",
                  "Using `Template` directly? It takes `autoescape=True`.")
    assert "Template" not in tags.tools(jinja)
    jq = _node("Using jq in a notebook", "```bash\njq '.items' data.json\n```\n")
    assert tags.tools(jq) == ["jq"]


@pytest.mark.parametrize("sentence", [
    "I puzzled over this one for quite a while.",
    "I needed this for VIAL issue 722.",
    "Jinja has a function that avoids this in jinja2.utils.htmlsafe_json_dumps().",
    "The calendar module has a utility function that really helps here.",
    "This inspired me to finally figure out how Click option names work.",
    "I wrote this test to exercise some httpx code, using pytest-mock.",
    "What's with the 953 failed requests?",
    "First, checkout the cpython repo.",
    "The fix was to raise worker_max_tasks_per_child to 500.",
    "Start by outputting a single [ - the opening square bracket for the array.",
])
def test_a_description_never_leans_on_the_note_around_it(sentence: str) -> None:
    assert not shapes.stands_alone(sentence)
    # The node is named instead of quoting a sentence that cannot be read alone.
    assert shapes.description(sentence, "en", name="Safely outputting JSON") == \
        "Safely outputting JSON."


@pytest.mark.parametrize("sentence", [
    "I noticed that one of my Datasette installations had the Geopoly extension enabled.",
    "This recipe commits the file only if it changed.",
    "Datasette is implemented as an ASGI application.",
    "陈静希望 code review 在 24 小时内给第一轮反馈。",
    "Now that I have a tool for release notes, I tried combining it with my LLM CLI tool.",
    "While exploring null bytes in this issue I learned that hexdump has a confusing default.",
])
def test_a_sentence_that_stands_alone_is_a_description(sentence: str) -> None:
    assert shapes.stands_alone(sentence)


@pytest.mark.parametrize(("title", "expected"), [
    ("Runbook: planned switchover of journaldb (Patroni)",
     "Planned switchover of journaldb (Patroni)"),
    ('Reading: "You cannot have exactly-once delivery" + the outbox pattern',
     '"You cannot have exactly-once delivery" + the outbox pattern'),
    ("读书笔记：数据密集型应用设计", "数据密集型应用设计"),
    # A record's own name and a title that only starts with the word stay.
    ("ADR-007: Transactional outbox for payout instructions",
     "ADR-007: Transactional outbox for payout instructions"),
    ("Notes on Redis evictions", "Notes on Redis evictions"),
])
def test_a_title_drops_the_kind_of_note_it_is(title: str, expected: str) -> None:
    assert tx.without_genre_label(title) == expected
    assert tx.procedure_title("Steps", title) == expected


def test_a_dot_inside_a_links_title_ends_no_related_sentence() -> None:
    """`See also [[...|Using io.BufferedReader ...]].` is a link sentence the node grew: a
    tag is never taken from it (it made `Using` a tag)."""
    body = ("Import the file with .import.\n\nSee also [[digest/wiki/using-io.md|Using "
            "io.BufferedReader to peek against a non-peekable stream]].\n")
    assert write.without_related_sentences(body).strip() == "Import the file with .import."
    node = f"---\nname: Importing CSV data into SQLite\ndescription: x\n---\n{body}"
    from remelink.models.local import engine
    assert "Using" not in tags.entity_tags(engine._own_words(node), [], 3)


@pytest.mark.parametrize(("heading", "note_title", "title"), [
    ("Running this in GitHub Actions", "Building Mastodon bots with GitHub Actions and toot",
     "Running Mastodon bots in GitHub Actions"),
    ("Deploying it", "Running Varnish on Fly", "Deploying Varnish"),
    # A determiner is no pronoun; a title with no verb says no object; Chinese is left alone.
    ("Testing this repo", "Running Varnish on Fly", "Testing this repo"),
    ("Running this in CI", "Varnish notes", "Running this in CI"),
    ("部署这个服务", "搭建 Varnish 缓存", "部署这个服务"),
])
def test_a_sections_title_resolves_this_to_what_the_note_is_about(
        heading: str, note_title: str, title: str) -> None:
    assert tx.procedure_title(heading, note_title) == title
