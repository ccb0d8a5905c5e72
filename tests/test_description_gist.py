"""Issue 21: a node's description says what the note teaches, not the author's story."""
from remelink.models.local import shapes


def test_story_opening_gives_the_claim_that_follows():
    summary = ("I was thinking about documentation SEO. Django uses rel=canonical on every "
               "page of its older documentation.")
    assert shapes.description(summary, "en", "wiki", "Promoting the stable docs") == \
        "Django uses rel=canonical on every page of its older documentation."


def test_story_only_falls_back_to_the_title():
    summary = "For a friend's wedding I needed to run a Google Photos slideshow on some TVs."
    assert shapes.description(summary, "en", "wiki", "Driving an external display") == \
        "Driving an external display."


def test_first_person_inside_the_sentence_is_story():
    summary = ("When I deploy applications to Fly I build them as Docker containers. "
               "Fly.io lets you deploy Docker containers as Firecracker VMs.")
    assert shapes.description(summary, "en", "wiki", "Fly") == \
        "Fly.io lets you deploy Docker containers as Firecracker VMs."


def test_what_the_author_learned_is_the_claim():
    summary = ("While exploring null bytes I learned that the hexdump command on macOS has a "
               "confusing default output.")
    assert shapes.description(summary, "en", "wiki", "hexdump") == \
        "The hexdump command on macOS has a confusing default output."


def test_lead_in_pointing_at_the_following_keeps_its_claim():
    summary = ("Carelessly including the output of `json.dumps()` in an HTML page can lead to "
               "an XSS hole, thanks to the following:")
    assert shapes.description(summary, "en", "wiki", "Safely outputting JSON") == \
        "Carelessly including the output of json.dumps() in an HTML page can lead to an XSS hole."


def test_authors_aside_after_a_claim_is_dropped():
    summary = ("Fly has a GraphQL API which is used by some of their own tools - I found it "
               "while browsing around their code on GitHub.")
    assert shapes.description(summary, "en", "wiki", "Fly GraphQL") == \
        "Fly has a GraphQL API which is used by some of their own tools."


def test_a_later_sentence_leaning_on_the_one_before_is_no_description():
    summary = "I really like Playwright. It's pretty easy to install and run."
    assert shapes.description(summary, "en", "wiki", "Writing Playwright tests") == \
        "Writing Playwright tests."


def test_the_authors_rule_stays():
    summary = "I always pin the version of every dependency in production."
    assert shapes.description(summary, "en", "wiki", "Pinning") == summary


def test_chinese_story_opening_gives_the_claim():
    summary = "我今天折腾了一下午 pgbouncer。连接池的 default_pool_size 要按数据库连接上限来定。"
    assert shapes.description(summary, "zh", "wiki", "pgbouncer 连接池") == \
        "连接池的 default_pool_size 要按数据库连接上限来定。"


def test_chinese_story_only_falls_back_to_the_title():
    summary = "上周我在家里试了一下这个工具。"
    assert shapes.description(summary, "zh", "wiki", "试用 uv") == "试用 uv。"


def test_a_pointer_at_a_how_to_is_the_how_to():
    summary = ("Here's how to use SQLite's `VALUES` syntax with a CTE to create a temporary "
               "table:")
    assert shapes.description(summary, "en", "wiki", "Combining CTEs") == \
        "How to use SQLite's VALUES syntax with a CTE to create a temporary table."
    summary = "To calculate the size of a SQLite database file using SQL, run this:"
    assert shapes.description(summary, "en", "wiki", "Size") == \
        "How to calculate the size of a SQLite database file using SQL."


def test_what_was_learned_must_stand_alone():
    summary = "I learned a pattern for investigating these that works really well in practice."
    assert shapes.description(summary, "en", "wiki", "Investigating slow queries") == \
        "Investigating slow queries."


def test_a_sentence_about_that_output_leans_on_the_note():
    assert not shapes.stands_alone("Add > /tmp/github.html to write that output to a file.")
    assert not shapes.stands_alone("The result is a jpegs/ directory with a file per photo.")


def test_this_names_a_time_or_a_link_not_the_note_around_it():
    assert shapes.stands_alone("Card captures are async since this morning, watch consumer lag.")
    assert shapes.stands_alone("While exploring null bytes in this issue I learned a lot.")
    assert not shapes.stands_alone("Drop a variant of this decorator onto your failing test.")


def test_a_speakers_line_is_her_claim():
    summary = "刘洋: month-start peak today, pgbouncer cl_waiting touched 300 around 08:00 UTC."
    assert shapes.description(summary, "en", "wiki", "Month-start peak") == \
        "Month-start peak, pgbouncer cl_waiting touched 300 around 08:00 UTC."
    # A label of a document's field stays a label.
    assert shapes.description("分享人：陈静，组内分享", "zh", "wiki", "HNSW 分享") == "HNSW 分享。"


def test_a_labelled_line_with_no_claim_read_keeps_what_it_says():
    """A label whose clause no claim was read in (`提醒：...`, `Onboarding: ...`) still says
    what the line states, label included (as before issue 21q); a short one stays a label."""
    summary = ("Onboarding: Hana changed her mind on shadowing — new engineers now shadow "
               "on-call for two weeks, not one.")
    assert shapes.description(summary, "en", "wiki", "Shadowing") == summary
    summary = "提醒：GPU 新规下周一生效，超过 4 张卡的任务要提前两个工作日申请。"
    assert shapes.description(summary, "zh", "wiki", "GPU 新规") == summary
    assert shapes.description("Status: accepted", "en", "wiki", "ADR-7") == "ADR-7."


def test_a_story_opening_gives_the_first_sentence_further_down_about_the_topic():
    """When the opening is only the author's story, the description is the first sentence of
    the note's body that says how things are about the node's topic (a word of its title); the
    lines before it that lean on the note, tell the story, take a step or name another topic
    are passed over."""
    summary = "I ran into a tricky problem while working on this issue."
    lines = ["Running the above in `bash` caused a file called `*.db` to be created.",
             "Check out the version of `bash` you have.",
             "Docker images are built from a Dockerfile in the project root.",
             "It turns out `bash` passes an unmatched wildcard through as a literal value.",
             "The solution, for `bash`, is to set the `nullglob` shell option.",
             "`zsh` returns an error instead."]
    points = [f"text: {line}" for line in lines]
    assert shapes.description(summary, "en", "wiki", "nullglob in bash", points) == \
        "The solution, for bash, is to set the nullglob shell option."


def test_a_body_with_no_sentence_about_the_topic_leaves_the_title():
    summary = "For a friend's wedding I needed to run a slideshow on some TVs."
    lines = ["Two laptop power supplies (battery only doesn't work)",
             "Uses an HDMI adapter, so needs a spare port",
             "Now the display will wake up on its own when the laptop opens.",
             "Hitting the power button turned the display off again."]
    points = [f"text: {line}" for line in lines]
    assert shapes.description(summary, "en", "wiki", "Driving an external display", points) \
        == "Driving an external display."
