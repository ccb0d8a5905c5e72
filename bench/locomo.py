"""LoCoMo conversations as remelink vaults: one daily note per session (reusable by any bench).

`../shared/data/locomo-train/locomo-train.json` (SOURCE.md there) holds 8 long conversations
between two people. Each session becomes the daily note a person would keep of a chat:
`daily/<session date>/<a>-and-<b>.md`, frontmatter with the date and time, a heading, and one
line per turn in a chosen layout (the default is a chat export with turn ids,
`John (D1:2): text`; `--layout` offers the other common ones). A photo shared in a turn is kept
as `[photo: caption]`, as chat exports write attachments.

    python bench/locomo.py OUT_DIR [--layout ids|bold|plain|clock] [--only conv-41]

writes OUT_DIR/<sample_id>/ vaults. `load()`, `Conversation` and `write_vault()` are the API
the benchmarks use; `Conversation.evidence_paths()` maps turn ids (`D8:13`) to their notes.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data" / "locomo-train" / "locomo-train.json"
LAYOUTS = ("ids", "bold", "plain", "clock")
_SESSION_RE = re.compile(r"session_(\d+)$")
_TURN_ID_RE = re.compile(r"D:?(\d+):(\d+)")
# The default configuration: the local engine reads every changed note in one pass, so what a
# person says about one topic in many sessions is grouped at once (profile.py). `batch_tokens`
# gives the batches an LLM would get instead.


def config(batch_tokens: int | None = None) -> str:
    batch = f"auto_dream:\n  batch_tokens: {batch_tokens}\n" if batch_tokens else ""
    return "# A LoCoMo conversation as daily notes (bench/locomo.py).\nmodel: local\n" + batch


@dataclass(frozen=True)
class Turn:
    speaker: str
    turn_id: str
    text: str
    caption: str = ""


@dataclass(frozen=True)
class Session:
    number: int
    when: datetime
    turns: tuple[Turn, ...]

    @property
    def day(self) -> date:
        return self.when.date()


@dataclass(frozen=True)
class Observation:
    session: int
    speaker: str
    text: str
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class Question:
    text: str
    answer: str
    category: int
    evidence: tuple[str, ...]  # turn ids


@dataclass
class Conversation:
    sample_id: str
    speakers: tuple[str, str]
    sessions: list[Session]
    observations: list[Observation]
    questions: list[Question]
    paths: dict[int, str] = field(default_factory=dict)  # session number -> note path

    def note_path(self, session: Session) -> str:
        a, b = (re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-") for s in self.speakers)
        return f"daily/{session.day.isoformat()}/{a}-and-{b}.md"

    def session_of(self, turn_id: str) -> int | None:
        m = _TURN_ID_RE.fullmatch(turn_id)
        return int(m.group(1)) if m else None

    def evidence_paths(self, turn_ids: tuple[str, ...]) -> set[str]:
        """The notes (sessions) that hold these turns."""
        numbers = {self.session_of(t) for t in turn_ids}
        return {self.paths[n] for n in numbers if n is not None and n in self.paths}


def _when(text: str) -> datetime:
    # "1:56 pm on 8 May, 2023"
    return datetime.strptime(text.replace(",", "").strip(), "%I:%M %p on %d %B %Y")


def _turn_ids(raw: object) -> tuple[str, ...]:
    items = raw if isinstance(raw, list) else [raw]
    out: list[str] = []
    for item in items:
        for m in _TURN_ID_RE.finditer(str(item)):
            out.append(f"D{m.group(1)}:{m.group(2)}")
    return tuple(out)


def load(path: Path = DATA) -> list[Conversation]:
    data = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for item in data:
        conv = item["conversation"]
        sessions = []
        for key, turns in conv.items():
            m = _SESSION_RE.fullmatch(key)
            if not m or not isinstance(turns, list):
                continue
            number = int(m.group(1))
            sessions.append(Session(number, _when(conv[f"{key}_date_time"]), tuple(
                Turn(t["speaker"], t["dia_id"], t["text"], t.get("blip_caption") or "")
                for t in turns)))
        sessions.sort(key=lambda s: s.number)
        observations = []
        for key, by_speaker in item["observation"].items():
            number = int(re.search(r"session_(\d+)", key).group(1))  # type: ignore[union-attr]
            for speaker, facts in by_speaker.items():
                for text, evidence in facts:
                    observations.append(Observation(number, speaker, text, _turn_ids(evidence)))
        questions = [Question(q["question"], str(q.get("answer", "")), int(q["category"]),
                              _turn_ids(q.get("evidence") or []))
                     for q in item["qa"]]
        conversation = Conversation(item["sample_id"], (conv["speaker_a"], conv["speaker_b"]),
                                    sessions, observations, questions)
        conversation.paths = {s.number: conversation.note_path(s) for s in sessions}
        out.append(conversation)
    return out


def _line(turn: Turn, layout: str, when: datetime, index: int) -> str:
    text = turn.text.strip()
    if turn.caption:
        text = f"{text} [photo: {turn.caption.strip()}]"
    if layout == "ids":
        return f"{turn.speaker} ({turn.turn_id}): {text}"
    if layout == "bold":
        return f"**{turn.speaker}**: {text}"
    if layout == "clock":
        minute = when.hour * 60 + when.minute + index
        return f"[{minute // 60 % 24:02d}:{minute % 60:02d}] {turn.speaker}: {text}"
    return f"{turn.speaker}: {text}"


def note_text(conv: Conversation, session: Session, layout: str = "ids") -> str:
    a, b = conv.speakers
    day = f"{session.day.day} {session.day:%B %Y}"
    clock = session.when.strftime("%I:%M %p").lstrip("0").lower()
    lines = ["---", f"date: {session.day.isoformat()}", f"time: {clock}",
             f"participants: [{a}, {b}]", "---", f"# {a} and {b}, {day}", ""]
    lines += [_line(t, layout, session.when, i) for i, t in enumerate(session.turns)]
    return "\n".join(lines) + "\n"


def write_vault(conv: Conversation, root: Path, layout: str = "ids",
                batch_tokens: int | None = None) -> dict[int, str]:
    """Write the conversation's sessions as daily notes under `root`; session -> note path.
    `batch_tokens` sets the extraction batches (default: the engine's own, one pass)."""
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {', '.join(LAYOUTS)}")
    (root / ".remelink").mkdir(parents=True, exist_ok=True)
    (root / ".remelink" / "config.yaml").write_text(config(batch_tokens), encoding="utf-8")
    for session in conv.sessions:
        path = root / conv.paths[session.number]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(note_text(conv, session, layout), encoding="utf-8")
    return dict(conv.paths)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--layout", default="ids", choices=LAYOUTS)
    parser.add_argument("--only", action="append", default=[])
    args = parser.parse_args(argv)
    for conv in load():
        if args.only and conv.sample_id not in args.only:
            continue
        write_vault(conv, args.out / conv.sample_id, args.layout)
        print(f"{conv.sample_id}: {len(conv.sessions)} notes in {args.out / conv.sample_id}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
