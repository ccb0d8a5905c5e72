"""Conversation transcripts in daily notes (SPEC §8, §11): every common turn layout, facts about
each person under their name with dates resolved against the note's day, chatter left out,
topics merged across sessions, English and Chinese."""

from __future__ import annotations

from datetime import date

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from remelink.models.local import extract, transcript, when
from remelink.models.local import points as pt
from remelink.vault.notes import parse_text

TURNS = [("Maria", "Hey John! Long time no see!"),
         ("John", "Hey Maria! Good to see you. Just got back from a family road trip yesterday."),
         ("Maria", "Wow, that sounds fun! Where did you go?"),
         ("John", "We drove along the coast to Big Sur with my kids and camped for three nights."),
         ("Maria", "That's awesome. I adopted a puppy named Coco last Friday, she is a beagle."),
         ("John", "Congrats! Thanks for sharing."),
         ("Maria", "Thanks! Talk soon!")]


def layout(name: str) -> str:
    lines = []
    for i, (who, text) in enumerate(TURNS, 1):
        lines.append({"ids": f"{who} (D1:{i}): {text}", "bold": f"**{who}**: {text}",
                      "bold-in": f"**{who}:** {text}", "plain": f"{who}: {text}",
                      "clock": f"[10:{i:02d}] {who}: {text}", "irc": f"<{who}> {text}",
                      "list": f"- {who}: {text}", "stamp": f"[2023-01-23 10:{i:02d}] {who}: {text}"
                      }[name])
    return "# Chat with John\n\n" + "\n".join(lines) + "\n"


def units(text: str, path: str = "daily/2023-01-23/chat.md") -> tuple[list[dict[str, object]],
                                                                       dict[str, str]]:
    return extract.extract([(parse_text(path, text), {})])


def prose(found: list[dict[str, object]]) -> str:
    return "\n".join(f"{u['name']} {u['summary']} " + " ".join(
        pt.text_of(str(p)) for p in u["points"]) for u in found)  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", ["ids", "bold", "bold-in", "plain", "clock", "irc", "list",
                                  "stamp"])
def test_every_common_layout_is_read_as_a_conversation(name: str) -> None:
    turns = transcript.parse(layout(name))
    assert turns is not None and [t.speaker for t in turns] == [w for w, _ in TURNS]
    found, skipped = units(layout(name))
    assert found and not skipped
    text = prose(found)
    assert "John just got back from a family road trip on 22 January 2023" in text  # yesterday
    assert "Maria adopted a puppy named Coco on Friday 20 January 2023" in text  # "last Friday"
    assert all(u["bucket"] == "personal" and u["kind"] == "fact" for u in found)


@pytest.mark.parametrize("left_out", ["Long time no see", "sounds fun", "Where did you go",
                                      "Congrats", "Thanks", "Talk soon", "awesome"])
def test_greetings_questions_reactions_and_thanks_are_dropped(left_out: str) -> None:
    found, _ = units(layout("ids"))
    assert left_out not in prose(found)


def test_facts_are_told_in_the_third_person_under_the_speakers_name() -> None:
    found, _ = units(layout("ids"))
    text = prose(found)
    assert "I " not in text and " my " not in text and "We " not in text
    assert "John and their kids drove along the coast to Big Sur" in text or \
        "John drove along the coast" in text or "John and others drove" in text
    names = [str(u["name"]) for u in found]
    assert all(n.startswith(("John", "Maria")) for n in names), names


def test_sources_say_who_said_it_when_and_in_which_turns() -> None:
    found, _ = units(layout("ids"))
    said = [pt.said_of(u["points"]) for u in found]  # type: ignore[arg-type]
    assert any(s[0].speaker == "Maria" and s[0].turns == ("D1:5",) and s[0].day == "2023-01-23"
               for s in said)


def test_a_meeting_note_with_labels_is_not_a_transcript() -> None:
    note = ("# Sync\n\nDecision: we ship on Tuesday.\nAlice: the release notes are ready.\n"
            "Why: the freeze starts Wednesday.\n\n- Bob will check the dashboards.\n")
    assert transcript.parse(note) is None


def test_a_conversation_of_chatter_gets_a_reason() -> None:
    chatter = "\n".join(["Ann: Hi Bob!", "Bob: Hey Ann! How are you?", "Ann: Great, thanks!",
                         "Bob: Awesome! Talk soon!", "Ann: Bye!"])
    found, skipped = units(chatter)
    assert found == [] and "greetings" in skipped["daily/2023-01-23/chat.md"]


def test_a_topic_across_sessions_is_one_unit_citing_each_session() -> None:
    first = "\n".join(["Nate: I've had my turtles for 3 years now.", "Jo: Cute! Names?",
                       "Nate: Hi!", "Jo: Hi there!"])
    second = "\n".join(["Nate: I took my turtles to the beach in Tampa last weekend.",
                        "Jo: Wow!", "Nate: Thanks!", "Jo: Bye!"])
    found, _ = extract.extract([(parse_text("daily/2022-01-23/a.md", first), {}),
                                (parse_text("daily/2022-05-20/b.md", second), {})])
    turtles = [u for u in found if u["name"] == "Nate's turtles"]
    assert len(turtles) == 1
    assert turtles[0]["paths"] == ["daily/2022-01-23/a.md", "daily/2022-05-20/b.md"]
    said = pt.said_of(turtles[0]["points"])  # type: ignore[arg-type]
    assert said[1].day == "2022-05-20"
    assert any(p.startswith("point@2: Nate took their turtles to the beach in Tampa on the "
                            "weekend before 20 May 2022") for p in turtles[0]["points"])  # type: ignore[union-attr]


def test_chinese_conversation() -> None:
    chat = "\n".join(["小王：早啊！好久不见！", "小李：早！最近怎么样？",
                      "小王：我昨天刚搬到杭州，新公司在西湖边上。", "小李：哇，太好了！",
                      "小王：我下个月开始负责支付系统的重构。", "小李：恭喜恭喜！你还在跑步吗？",
                      "小王：还在跑，我每周跑三次，每次十公里。", "小王：谢谢！回头聊。"])
    found, _ = units(chat, "daily/2026-04-02/聊天.md")
    text = prose(found)
    assert "小王2026年4月1日刚搬到杭州" in text  # 昨天
    assert "小王2026年5月开始负责支付系统的重构" in text  # 下个月
    assert "小王每周跑三次" in text
    for chatter in ("好久不见", "恭喜", "谢谢", "回头聊", "怎么样"):
        assert chatter not in text
    assert all(str(u["name"]).startswith("小王") for u in found)


@pytest.mark.parametrize(("said", "day", "meant"), [
    ("I printed it last Friday.", date(2022, 1, 23), "I printed it on Friday 21 January 2022."),
    ("We met two weeks ago.", date(2023, 5, 24), "We met 2 weeks before 24 May 2023."),
    ("Last summer we went to France.", date(2022, 10, 1),
     "In the summer of 2022 we went to France."),
    ("I start next month.", date(2022, 12, 17), "I start in January 2023."),
    ("The fix is due by Friday.", date(2026, 3, 12), "The fix is due by Friday 13 March 2026."),
    ("我前天到的。", date(2026, 4, 2), "我2026年3月31日到的。"),
    ("上周末我们去爬山了。", date(2026, 4, 2), "2026年4月2日之前的周末我们去爬山了。"),
])
def test_relative_dates_are_resolved(said: str, day: date, meant: str) -> None:
    assert when.resolve(said, day, "zh" if said[0] > "\u3000" else "en") == meant


_FACTS = st.sampled_from(["I adopted a puppy named Coco last week.",
                          "I started a new job at the bakery downtown yesterday.",
                          "My sister is moving to Denver next month for her nursing job.",
                          "I finished my first marathon in under four hours on Sunday."])
_CHATTER = st.sampled_from(["Hey!", "Thanks so much!", "How are you?", "That sounds amazing!",
                            "Wow, congrats!", "Talk soon!", "I'm so happy for you!"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["Ann", "Bob"]), st.one_of(_FACTS, _CHATTER)),
                min_size=4, max_size=12))
def test_units_are_facts_under_a_name_never_chatter(turns: list[tuple[str, str]]) -> None:
    text = "\n".join(f"{who}: {said}" for who, said in turns)
    if len({who for who, _ in turns}) < 2 or min(
            sum(1 for w, _ in turns if w == who) for who in ("Ann", "Bob")) < 2:
        return
    found, skipped = units(text)
    assert bool(found) != bool(skipped)  # a unit, or a reason: every note has a verdict
    for u in found:
        assert str(u["name"]).startswith(("Ann", "Bob"))
        said = prose([u])
        for chatter in ("Thanks", "How are you", "sounds amazing", "congrats", "Talk soon",
                        "happy for you", "Hey"):
            assert chatter not in said
