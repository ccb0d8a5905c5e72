"""What a document states anywhere in it is kept (issue 21, SPEC §8; til-simonw tune side):
a caveat under a later heading, a claim after the introduction, a hedged claim. Before, only a
document's introduction, its lists and its lines with code were read, so "Google Calendar polls
for updates to the feed less than once every 24 hours" (the catch of a how-to) and "All other
requests are sent to Django" were left out of their nodes."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from local_support import dream

from remelink.models.local import decide, structure
from remelink.models.local import text as tx

ICS = """# Providing a subscribe link for an ics feed

If you host your own ICS file at a URL it's nice to give Google Calendar users an easy way to
subscribe to that feed.

As far as I can tell this isn't documented anywhere, but it is possible.

The format is `https://www.google.com/calendar/render?cid=webcal://` followed by your URL.

This drops the user into a Google Calendar interface with a prompt to confirm their subscription.

I believe this only works if you are serving your ICS feed over HTTPS.

Maybe they will change that one day?

## The catch: polling frequency

Unfortunately Google Calendar polls for updates to the feed less than once every 24 hours.
"""


def test_a_documents_caveats_and_claims_reach_its_node(tmp_path: Path) -> None:
    digest = dream(tmp_path, {"resource/2020-08-21/ics-subscribe.md": ICS})
    body = "\n".join(digest.values())
    assert "polls for updates to the feed less than once every 24 hours" in body
    assert "This drops the user into a Google Calendar interface" in body
    assert "I believe this only works if you are serving your ICS feed over HTTPS." in body
    assert "Maybe they will change that one day" not in body  # a question states nothing


def test_a_hedged_claim_is_no_story() -> None:
    assert not tx.is_narration("I believe this only works if you are serving the feed over HTTPS.")
    assert not tx.is_narration("I think that the cache is per region.")
    assert tx.is_narration("I think I will try that again tomorrow.")
    assert tx.is_narration("I wanted to redirect the old domain.")


_CLAIM = st.builds(lambda subject, verb, rest: f"{subject} {verb} {rest}.",
                   st.sampled_from(["The proxy", "Every worker", "Cloudflare", "The cache"]),
                   st.sampled_from(["keeps", "sends", "drops", "rewrites"]),
                   st.sampled_from(["all other requests to Django", "the old headers as they are",
                                    "requests that start with a slash", "the query string"]))
_QUESTION = st.builds(lambda s: f"Maybe {s}?", st.sampled_from(
    ["they removed that feature", "this changed in version 2", "nobody uses it"]))
_GOES_ON = st.builds(lambda w, s: f"{w} {s}.",
                     st.sampled_from(["... which", "and", "which", "but"]),
                     st.sampled_from(["didn't work at all for me", "failed on the second run"]))


@settings(max_examples=60, deadline=None)
@given(_CLAIM, _QUESTION, _GOES_ON)
def test_a_document_sentence_states_a_claim_not_a_question_or_a_fragment(
        claim: str, question: str, goes_on: str) -> None:
    assert structure._states(claim)
    assert not structure._states(question)
    assert not structure._states(goes_on)


def test_an_address_is_no_system_a_decision_replaces() -> None:
    """A decision naming a URL puts no system in place of the one a node's line shows in its
    own URL (a Cloudflare Pages note "corrected" a Page Rules node through the hosts of two
    example addresses)."""
    node = ("Since I was running the site behind Cloudflare, I could use a Page Rule.\n\n"
            "This did the right thing - hits to e.g. https://til.example.org/cloudflare?a=1 "
            "redirect to https://til.example.net/cloudflare?a=1\n")
    unit = ("I wanted to redirect https://power-plants.example.com/ to https://example.io/ - "
            "I decided to spin up a Cloudflare Pages site to do the work.")
    found = decide.compare(unit, "Redirecting a whole domain with Cloudflare", node)
    assert found.conflict_kind != "tool"
    assert not found.correction
    # A system written as itself is still one: the rule stands for what it was made for.
    policy = "Pages go through PagerDuty, service ledger-oncall, for every P1."
    decision = "Decision: from 1 April, pages go through incident.io."
    assert decide.compare(decision, "Paging", policy).conflict_kind == "tool"


def test_how_things_stand_at_a_time_is_a_finding_not_a_definition() -> None:
    """A Sources sentence said "The definition comes from" the on-call handover for
    "journaldb-1 is the primary now" and for "Dana is out 23–27 Feb ..., Tomasz is the
    escalation point that week" (realistic dev)."""
    kind = structure._statement_kind
    assert kind("journaldb-1 is the primary now, don't switch back.", "neutral") == "finding"
    assert kind("Tomasz is the escalation point that week while Dana is out.",
                "neutral") == "finding"
    assert kind("An idempotency key is a unique value the client sends with a request.",
                "neutral") == "definition"
    assert kind("幂等键是指客户端随请求发送的唯一值，目前由网关生成。", "neutral") == "finding"


GUIDE = """# API style guide

- Listings use cursor pagination with `page_token`; page_size max is 500, default 50.
- Money fields are `amount_minor` plus `currency`.
"""

REVIEW = """# API review, 10 Apr

- The exports listing timed out twice last week at page_size=200 (every item carries its
  manifest). Decision: page_size max is 100 from now on, for every listing. Sam updates the
  style guide by Friday.
"""


def test_a_correction_keeps_what_else_its_unit_says(tmp_path: Path) -> None:
    """A unit of several sentences that corrects a node: the node gets the correction, and the
    unit's other sentences (why, who follows up) too. Before, only the deciding sentence was
    written, and the rest of the review's item was in no node."""
    (tmp_path / "resource").mkdir(parents=True)
    digest = dream(tmp_path, {"resource/2026-03-01/api-style-guide.md": GUIDE})
    digest = dream(tmp_path, {"daily/2026-04-10/api-review.md": REVIEW})
    text = "\n".join(digest.values())
    assert "Corrected on 2026-04-10" in text
    assert "timed out twice last week at page_size=200" in text
    assert "Sam updates the style guide by Friday" in text


def test_the_authors_story_left_in_the_note_is_nothing_left_out() -> None:
    """"The note has the full walkthrough." closed 39 of the til tune sample's nodes, most of
    which had left out only the author's story ("I wanted to ...", "So I tried ..."): the line
    says what the node does not teach, the story is not that."""
    from remelink.models.local import write

    story = ["I wanted to try this on my laptop before the talk last week.",
             "So I tried a couple of approaches first, none of which I liked."]
    kept, left = write._taught(["Cloudflare caches HTML only with a cache rule.", *story])
    assert kept == ["Cloudflare caches HTML only with a cache rule."]
    assert left == 0
    ordinals = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth",
                "ninth", "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth"]
    prose = [f"The {w} claim is about caching and what a reader needs to know of it."
             for w in ordinals]
    assert write._taught(prose)[1] > 0  # what it teaches, over the budget: left out, counted


RECIPE = """# Pisco sour

Here's the recipe I've landed on, after some experimentation, for two drinks.

* 3/4oz simple syrup (1/1 ratio sugar to water by weight) - brown sugar works too
* 1oz lemon juice
* 3oz pisco
* 1 egg white
* Bitters (Angostura or other)

Dry shake the egg white, lemon juice and simple syrup for about ten seconds.
"""


def test_a_documents_list_is_kept_whole(tmp_path: Path) -> None:
    """A list is one thing: a recipe's node kept its one long ingredient and none of the four
    short ones ("1oz lemon juice", "3oz pisco"): every item of a list one item of which is
    kept is kept."""
    digest = dream(tmp_path, {"resource/2022-10-08/pisco-sour.md": RECIPE})
    body = "\n".join(digest.values())
    for item in ("1oz lemon juice", "3oz pisco", "1 egg white", "Bitters (Angostura or other)"):
        assert f"- {item}" in body, body
