"""One node per topic in a daily note (SPEC §7.1, §8): the note's statements, read in order, are
cut into runs, and a run that states something becomes one unit.

The principle: a statement belongs with the one before it unless it can be read alone. It cannot
when it is in the same paragraph (a paragraph is one thought), when it opens by referring back
(`It should return 200`, `This is the wall ...`, `这个要先验证`, a clause with no subject of its
own: `应该返回 200`), when the statement before it is not finished (it ends on a colon or on a
word that needs what follows: `The definition comes from`), or when it is an item of a list that
a lead-in line introduces (`Review notes on PR 2412:` and its points). Anything else starts a
new run, and a new section always does: the unrelated things of one day stay apart, and
consecutive list items (a 1:1's points, a stand-up's lines) stay their own units unless they lean
on each other.

A run's unit is led by its first statement that can be read alone (never by a fragment), and
holds the run's other statements in the note's order as written; a fragment with nothing after
it is left out, and a run made only of fragments and passing mentions gives no unit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from remelink.models.local import decide, fenced
from remelink.models.local import points as pt
from remelink.models.local import text as tx
from remelink.models.local.candidate import Candidate


@dataclass
class Piece:
    """One statement of a daily note as the walk read it."""
    section: int
    block: int         # the block (paragraph, list item) it is in
    kind: str          # that block's kind: `para`, `item`, `num`
    text: str
    cand: Candidate | None  # the candidate it gave, None for a passing mention or a lead-in
    # The labelled part of a debugging log it is in (`fix`, `cause`, ...); "before" ahead of
    # the note's first label, "" in a note with none.
    part: str = ""


# An English statement that opens by pointing back at what came before it; `Remaining ...`
# is the rest of what came before (`Remaining producers to flip: ...` after the migration).
# (`There is ...`, `Here's how` open a statement of their own, or point forward.)
_BACK_EN = tx.word_set("""it its it's this that these those such so which then thus hence
                          otherwise instead remaining""")
# A Chinese statement that opens with a demonstrative, the rest of something (剩下的), or with no
# subject of its own (a modal or a connective first: the subject is the previous statement's).
_BACK_ZH_RE = re.compile(
    r"^(?:这|那|它|其|此|该|剩下|应该|应当|应|需要|必须|得|可以|也|还|就|都|又|但|但是|所以|因此|不过|"
    r"而且|并且|否则|不然|于是|结果|然后)")
_DANGLING_ZH = ("的", "和", "与", "在", "把", "被", "对", "从", "因为", "所以", "但", "而", "是")


def _plain(text: str) -> str:
    return tx.without_code_marks(text).strip()


def refers_back(text: str) -> bool:
    """The statement opens by pointing back (a pro-form, or no subject of its own)."""
    plain = re.sub(r"^[\W_]+", "", _plain(text))
    if not plain:
        return False
    if tx.is_cjk_text(plain):
        return bool(_BACK_ZH_RE.match(plain))
    first = re.match(r"[A-Za-z][A-Za-z'’]*", plain)
    return bool(first and first.group(0).lower().replace("’", "'") in _BACK_EN)


def unfinished(text: str) -> bool:
    """The statement needs what follows it: it ends on a colon, or stops, with no full stop,
    on a word that cannot end a sentence (`The definition comes from`, `原因是`)."""
    if fenced.ends_with_block(text.rstrip()):
        return False  # what it leads in to is its own code block
    plain = fenced.strip(text).rstrip()
    if plain.endswith((":", "：")):
        return True
    if not plain or plain[-1] in ".!?。！？)）\"”'`":
        return False
    if tx.is_cjk_text(plain):
        return plain.endswith(_DANGLING_ZH)
    words = [w.lower() for w in re.findall(r"[A-Za-z']+", plain)]
    if len(words) >= 2 and words[-1] in _AUXILIARY and words[-2] in _PRONOUN:
        return False  # the verb's subject came first: `← there it is`, `that's what it was`
    return bool(words) and words[-1] in tx.DANGLING


_AUXILIARY = tx.word_set("is was are were am do does did has have had can could will would")
_PRONOUN = tx.word_set("it i you he she we they this that there here what who")


# Two statements speak of the same thing when they share this many things (decide.things:
# words, names of systems, two-character Chinese words) besides the people the note names: one
# shared word is a system two agenda points both touch (`refunds`).
SAME_THINGS = 2


def _details(run: list[Piece], piece: Piece, people: frozenset[str]) -> bool:
    """Two items next to each other in one list, one of them making a claim (a candidate) and
    the other none, about the same things: the item without a claim is the claim's detail
    (`Every design doc has a "Non-goals" section` under `She wants design docs to be at most
    four pages`; a status line and the decision taken on it). A run holds one claim at most
    this way: two claims are two topics."""
    prev = run[-1]
    if prev.kind not in ("item", "num") or piece.kind not in ("item", "num") or \
            piece.block != prev.block + 1:
        return False
    claims = sum(p.cand is not None for p in run) + (piece.cand is not None)
    if claims != 1 or (prev.cand is None) == (piece.cand is None):
        return False
    shared = decide.things(prev.text) & decide.things(piece.text)
    return len(shared - people) >= SAME_THINGS


def _continues(run: list[Piece], piece: Piece, people: frozenset[str] = frozenset()) -> bool:
    prev = run[-1]
    if prev.section != piece.section:
        return False
    if prev.block == piece.block:
        return True  # one paragraph, one thought
    if _leads_in(prev.text) or refers_back(piece.text):
        return True
    if _details(run, piece, people):
        return True
    # The items of a list that a lead-in line introduces are its points.
    heads = [i for i, p in enumerate(run) if p.kind not in ("item", "num")]
    return bool(heads) and piece.kind in ("item", "num") and _leads_in(run[heads[-1]].text) \
        and heads[-1] < len(run) - 1


def is_listing(run: list[Piece]) -> bool:
    """The run is a lead-in line and the list it introduces (at least two items)."""
    heads = [i for i, p in enumerate(run) if p.kind not in ("item", "num")]
    return bool(heads) and _leads_in(run[heads[-1]].text) and len(run) - heads[-1] > 2


def _leads_in(text: str) -> bool:
    """It ends on a colon, and what it introduces is not its own code block."""
    return not fenced.ends_with_block(text.rstrip()) and \
        fenced.strip(text).rstrip().endswith((":", "："))


def cut(pieces: list[Piece], people: frozenset[str] = frozenset()) -> list[list[Piece]]:
    """The note's runs, in order (`people`: the names the note names, lower case)."""
    runs: list[list[Piece]] = []
    for piece in pieces:
        if runs and _continues(runs[-1], piece, people):
            runs[-1].append(piece)
        else:
            runs.append([piece])
    return runs


def unit_of(run: list[Piece]) -> Candidate | None:
    """The run's unit: its lead candidate, holding the run's other statements in order (as
    `text:` points, list items marked as such); None when it states nothing."""
    cands = [p.cand for p in run if p.cand is not None]
    if not cands:
        return None
    whole = [c for c in cands if not unfinished(c.statement)]
    if not whole:
        return None  # fragments only: nothing is said
    lead = next((c for c in whole if not refers_back(c.statement)), whole[0])
    if len(run) == 1:
        return lead
    at = next(i for i, p in enumerate(run) if p.cand is lead)
    if refers_back(lead.statement):
        # Its antecedent is the statement before it: the two are read together.
        start = next((i for i in range(at - 1, -1, -1) if not refers_back(run[i].text)
                      and not unfinished(run[i].text)), at)
        if start < at:
            joined = [*(p.text for p in run[start:at]), lead.statement]
            lead.statement = ("" if tx.is_cjk_text(lead.statement) else " ").join(joined)
            lead.name = tx.title_from(lead.statement)
            if refers_back(lead.name):
                lead.name = tx.title_from(run[start].text)
    points: list[str] = []
    listing = is_listing(run)
    if listing:
        # A list and what introduces it: the list reads in its order, first item first; the
        # lines before it (who reviewed, what the points are about) are its context.
        first = next(p for p in run if p.kind in ("item", "num") and not unfinished(p.text))
        if first.cand is not lead:
            own = lead.statement
            lead.statement = first.cand.statement if first.cand is not None else first.text
            for p in run:
                if p.cand is lead:
                    p.text = own
        heads = [p for p in run if p.kind not in ("item", "num")]
        points += [f"context: {p.text.rstrip().rstrip(':：').rstrip()}" for p in heads]
    for p in run:
        if (p.cand is lead and not listing) or p.text in lead.statement:
            continue
        if listing and p.kind not in ("item", "num"):
            continue
        if unfinished(p.text) and not p.text.rstrip().endswith((":", "：")):
            continue  # a fragment with nothing after it says nothing
        mark = "- " if p.kind in ("item", "num") else ""
        statement = p.text if p.cand is lead or p.cand is None else p.cand.statement
        points.append(f"text: {mark}{statement}")
        if p.cand is not None:
            points += [q for q in p.cand.points if not q.startswith("text: ") and
                       pt.text_of(q).lower() not in statement.lower()]
    lead.points += points
    lead.weight += 0.5 * (len(cands) - 1)
    return lead
