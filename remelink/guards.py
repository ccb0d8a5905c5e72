"""The guarantees of SPEC §7.2 enforced in code, not left to the prompt.

- Additive: an update never removes a wikilink or a Sources sentence the node had.
- Prose conservation: every line of the node's old body (whitespace aside) is still in the new
  body, in order, and still shown as it was (remelink/visible.py: a line wrapped in a comment,
  a strikethrough, a hidden element, a math block, a code fence or a quote it was not in
  before is lost); the one exception is a CORRECT that replaces the wrong line and quotes it
  verbatim, next to the new source, in its correction.
- Valid output: the target passes the lint-links checks (an update: adds no lint error the node
  did not already have), cites every path of the unit, repeats no Sources sentence, and a new
  node is written in the language of its unit.

Every problem is one whole item a model can act on: body-relative line numbers (the model
never wrote the frontmatter) and the offending line quoted.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from remelink import visible
from remelink.config import Settings
from remelink.facts import stated
from remelink.language import BODY_LETTERS
from remelink.lint import Problem, check_note, sources_section
from remelink.units import Unit
from remelink.vault import frontmatter
from remelink.vault import links as wl
from remelink.vault.notes import Note
from remelink.vault.resolve import Resolver, VaultFiles

_WS = re.compile(r"\s+")
_ASCII_WORD = re.compile(r"[A-Za-z0-9]")
_LIST_MARK_RE = re.compile(r"^(?:[ \t]*(?:[-+*]|\d{1,9}[.)]|>)[ \t]+)+")
_RELATION_LINE_RE = re.compile(r"^[^\W\d][\w-]*::\s*!?\[\[")
QUOTE_LIMIT = 300  # characters of an offending line quoted in a validation problem


def _norm(text: str) -> str:
    return _WS.sub(" ", text).strip()


def _shown(note: Note) -> str:
    """The body as shown: what is hidden (comments, strikethrough, hidden elements, math)
    blanked, positions kept."""
    return visible.render(note.body).masked((visible.PROSE, visible.QUOTE, visible.CODE))


def edge_set(note: Note) -> list[tuple[str, str | None]]:
    """The (target, anchor) edges a reader sees in a note (a link in a comment or a hidden
    element is no edge), first occurrence order."""
    return [(lk.target, lk.anchor) for lk in wl.dedupe(wl.parse_links(_shown(note),
                                                                      note.body_line))]


def source_sentences(note: Note) -> list[str]:
    """The paragraphs of the note's `## Sources` section as shown (whitespace folded)."""
    return [text for text, _ in _sources(note)]


_QUOTE_LINE_RE = re.compile(r"[ \t]{0,3}(?:(?:[-+*]|\d{1,9}[.)])[ \t]+)*>")


def _sources(note: Note) -> list[tuple[str, bool]]:
    """(paragraph, whether it is a quote) of the `## Sources` section as shown."""
    shown = _shown(note)
    result = wl.scan(shown, note.body_line)
    section = sources_section(result.outline.headings)
    if section is None:
        return []
    start, end = section
    lines = shown.split("\n")
    out = []
    for para in result.paragraphs:
        if start < para[0][0] < end:
            text = _norm(wl.paragraph_text(para))
            if text:
                first = lines[para[0][0] - note.body_line] if para[0][0] >= note.body_line \
                    else ""
                out.append((text, bool(_QUOTE_LINE_RE.match(first))))
    return out


# -- prose conservation ---------------------------------------------------------------------------

@dataclass(frozen=True)
class LostLine:
    line: int    # 1-based line of the old body (frontmatter not counted)
    text: str    # the line as it was
    quoted: bool = False  # quoted verbatim in a correction citing the unit's source


def _find_word(haystack: str, needle: str, start: int) -> int:
    """First index >= start where `needle` occurs without cutting a Latin word or number at
    either end (`cat` is not found inside `concatenate`; CJK text has no such boundaries)."""
    head = bool(_ASCII_WORD.match(needle[:1]))
    tail = bool(_ASCII_WORD.match(needle[-1:]))
    pos = haystack.find(needle, start)
    while pos != -1:
        before = haystack[pos - 1:pos]
        after = haystack[pos + len(needle):pos + len(needle) + 1]
        if not (head and _ASCII_WORD.match(before)) and not (tail and _ASCII_WORD.match(after)):
            return pos
        pos = haystack.find(needle, pos + 1)
    return -1


def _link_only(line: str, kept: set[str]) -> bool:
    """A bare link line or a relation field whose links all survive: not prose, and turning it
    into a sentence is what the lint rules ask for (SPEC §4)."""
    from remelink.lint.checks import is_bare_link_text

    stripped = _LIST_MARK_RE.sub("", line.strip())
    links = [m.group(2) for m in wl.LINK_RE.finditer(stripped)]
    if not links or not all(t in kept for t in links):
        return False
    return bool(_RELATION_LINE_RE.match(stripped)) or is_bare_link_text(stripped)


# Where one old line is tried in the new body: its first HEAD occurrences, and TAIL from the
# end of the longest chain so far (so a node of many identical short lines keeps extending its
# chain). Occurrences are found once per distinct line (text and contexts) and shared.
HEAD = 64
TAIL = 8


@dataclass(frozen=True)
class _Shown:
    """Text with whitespace folded, and the rendering context of each of its characters."""

    text: str
    contexts: bytes


def _fold(text: str, contexts: bytes) -> _Shown:
    """`text` with whitespace runs folded to one space and the ends stripped, as `_norm`
    does, carrying each character's context along (a folded space is context SPACE)."""
    chars: list[str] = []
    ctx = bytearray()
    for m in _WORD_RUN.finditer(text):
        if chars:
            chars.append(" ")
            ctx.append(visible.SPACE)
        chars.append(m.group(0))
        ctx += contexts[m.start():m.end()]
    return _Shown("".join(chars), bytes(ctx))


_WORD_RUN = re.compile(r"\S+")


def _occurrences(flat: _Shown, key: _Shown, cap: int) -> list[tuple[int, int]]:
    """Where `key` occurs in `flat` as text and shown the same way (same contexts), at most
    `cap` places (and at most 4 x `cap` text matches looked at)."""
    out: list[tuple[int, int]] = []
    size = len(key.text)
    pos = _find_word(flat.text, key.text, 0)
    tries = 0
    while pos != -1 and len(out) < cap and tries < 4 * cap:
        tries += 1
        if flat.contexts[pos:pos + size] == key.contexts:
            out.append((pos, pos + size))
        pos = _find_word(flat.text, key.text, pos + 1)
    return out


def _kept_in_order(keys: list[_Shown], flat: _Shown) -> set[int]:
    """The indexes of the most `keys` that occur in `flat` in order, without overlapping: a
    longest chain, as in longest increasing subsequence (patience: `tails[k]` is the chain of
    k+1 keys with the earliest end, `ends[k]` its end). Greedy first-match is not enough: a
    line quoted in a correction at the end would swallow every line before it. Each key is
    tried at HEAD + TAIL places (see HEAD): O(lines x (HEAD + TAIL) x log lines)."""
    from bisect import bisect_left, bisect_right

    tails: list[tuple[int, int, Any]] = []   # (end, index, chain as nested (index, prev))
    ends: list[int] = []
    found: dict[tuple[str, bytes], tuple[list[tuple[int, int]], list[int]]] = {}
    cap = len(keys) + HEAD
    for i, key in enumerate(keys):
        if not key.text:
            continue
        places = found.get((key.text, key.contexts))
        if places is None:
            occ = _occurrences(flat, key, cap)
            places = (occ, [start for start, _ in occ])
            found[(key.text, key.contexts)] = places
        occ, starts = places
        candidates = occ[:HEAD]
        if ends:
            after = bisect_left(starts, ends[-1], lo=min(HEAD, len(starts)))
            candidates = candidates + occ[after:after + TAIL]
        best: dict[int, tuple[int, int, Any]] = {}
        for start, stop in candidates:
            k = bisect_right(ends, start)   # chains that end before this occurrence starts
            prev = tails[k - 1][2] if k else None
            if k not in best or stop < best[k][0]:
                best[k] = (stop, i, (i, prev))
        for k, entry in sorted(best.items()):
            if k == len(tails):
                tails.append(entry)
                ends.append(entry[0])
            elif entry[0] < tails[k][0]:
                tails[k] = entry
                ends[k] = entry[0]
    kept: set[int] = set()
    chain = tails[-1][2] if tails else None
    while chain is not None:
        kept.add(chain[0])
        chain = chain[1]
    return kept


def lost_lines(original: Note, new: Note, unit_paths: tuple[str, ...] | list[str] = ()
               ) -> list[LostLine]:
    """The lines of `original`'s body that `new` no longer holds, in order (SPEC §7.2).

    A line is kept when its text, whitespace folded, occurs in the new body in the same order
    as the other kept lines (the most lines that can be kept are), and is shown there as it
    was shown before (remelink/visible.py: visible text stays visible text, not wrapped in a
    comment, a strikethrough, a hidden element, a math block, a code fence or a quote):
    inserting before, after or around a line keeps it; rewording, deleting, hiding or moving
    it past another line loses it. A bare link line or relation field whose links all survive
    (as shown) may become a sentence. A lost line that the new body quotes verbatim (its full
    stop aside: “… 30 days”), in a shown paragraph citing one of `unit_paths`, is marked
    `quoted`: a CORRECT may do that."""
    old_body = original.body.replace("\r\n", "\n")
    new_body = new.body.replace("\r\n", "\n")
    old_ctx = visible.render(old_body).contexts
    new_shown = visible.render(new_body)
    flat = _fold(new_body, new_shown.contexts)
    raw_lines = old_body.split("\n")
    keys: list[_Shown] = []
    pos = 0
    for raw in raw_lines:
        keys.append(_fold(raw, old_ctx[pos:pos + len(raw)]))
        pos += len(raw) + 1
    kept = _kept_in_order(keys, flat)
    shown_body = new_shown.masked((visible.PROSE, visible.QUOTE, visible.CODE))
    kept_targets = {lk.target for lk in wl.parse_links(shown_body)}
    paragraphs: list[str] | None = None
    lost: list[LostLine] = []
    for i, (raw, key) in enumerate(zip(raw_lines, keys, strict=True)):
        if not key.text or i in kept or _link_only(raw, kept_targets):
            continue
        quoted = False
        if unit_paths:
            if paragraphs is None:
                paragraphs = [_norm(p) for p in re.split(r"\n[ \t]*\n", new_shown.masked(
                    (visible.PROSE, visible.QUOTE)))]
            said = {key.text, key.text.rstrip(".。!！")} - {""}
            quoted = any(any(_find_word(p, t, 0) != -1 for t in said) and
                         any(f"[[{path}" in p for path in unit_paths) for p in paragraphs)
        lost.append(LostLine(i + 1, raw.strip(), quoted))
    return lost


def conservation_problems(original: Note, new: Note,
                          unit_paths: tuple[str, ...] | list[str] = ()) -> list[str]:
    """What `new` drops from `original`, one whole item each: lines of prose, wikilinks and
    Sources sentences. A line replaced by a quoting correction is not listed (see
    `lost_lines`); `quoted_lines` tells the receipt check about it."""
    problems: list[str] = []
    lines = [ln for ln in lost_lines(original, new, unit_paths) if not ln.quoted]
    for ln in lines:
        problems.append(f"body line {ln.line} would be lost: {quote_line(ln.text, None)}")
    after = set(edge_set(new))
    missing = [e for e in edge_set(original) if e not in after]
    if missing:
        shown = ", ".join(f"[[{t}{'#' + a if a is not None else ''}]]" for t, a in missing[:20])
        more = f" and {len(missing) - 20} more" if len(missing) > 20 else ""
        raw_after = {(lk.target, lk.anchor) for lk in wl.parse_links(new.body)}
        why = " (still written, but where a reader does not see it: in a comment, a " \
            "strikethrough or a hidden element)" if any(e in raw_after for e in missing) else ""
        problems.append(f"it would remove wikilink(s) {shown}{more}{why}")
    # A Sources sentence stays a sentence of the section, shown as it was: a quote that holds
    # it (`> Corrected on ...: ... <sentence>`) does not keep it.
    new_sources = {quote: " \n ".join(t for t, q in _sources(new) if q == quote)
                   for quote in (False, True)}
    gone = {_norm(ln.text) for ln in lines}
    for sentence, quote in _sources(original):
        if sentence in new_sources[quote]:
            continue
        if any(g in sentence for g in gone):  # its lost line is listed above already
            continue
        problems.append(f"it would remove Sources sentence {quote_line(sentence, None)}")
    return problems


def quoted_lines(original: Note, new: Note, unit_paths: tuple[str, ...] | list[str]
                 ) -> list[LostLine]:
    """Lines `new` replaced by a correction that quotes them: only a CORRECT may do that."""
    return [ln for ln in lost_lines(original, new, unit_paths) if ln.quoted]


def quote_line(text: str, limit: int | None = QUOTE_LIMIT) -> str:
    """A line shown to the model, in double quotes (JSON-escaped, so it can be copied into an
    edit call as it is); cut only when `limit` is given (lint problems, not lost lines)."""
    import json

    if limit is not None and len(text) > limit:
        text = text[:limit - 3] + "..."
    return json.dumps(text, ensure_ascii=False)


_SENTENCE_END_RE = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])\s*")


def _citing_sentences(note: Note) -> list[str]:
    """The sentences of `## Sources` that cite something, one by one (a repeated edit appends
    the same sentence to the same paragraph, which a paragraph-level count does not see)."""
    out = []
    for para in source_sentences(note):
        out += [s for s in _SENTENCE_END_RE.split(para) if "[[" in s and s.strip()]
    return out


def duplicate_sources(original: Note | None, new: Note) -> list[str]:
    """Sources sentences `new` holds more often than `original` did (and more than once)."""
    before = Counter(_citing_sentences(original)) if original is not None else Counter()
    seen = Counter(_citing_sentences(new))
    return [s for s, n in seen.items() if n > max(1, before.get(s, 0))]


def cited_sources(files: VaultFiles, settings: Settings, note: Note) -> set[str]:
    """Resolved paths linked from the note's Sources section."""
    result = wl.scan(note.body, note.body_line)
    section = sources_section(result.outline.headings)
    if section is None:
        return set()
    resolver = Resolver(files, settings.resolution)
    out = set()
    for link in result.links:
        if section[0] < link.line < section[1]:
            res = resolver.resolve(link.target, note.path)
            if res.status == "ok" and res.path:
                out.add(res.path)
    return out


@dataclass(frozen=True)
class Validation:
    problems: list[str]   # why the node cannot be accepted yet (empty: it can)
    inherited: list[str]  # lint errors it keeps from the node as it was: accepted, worth a warning


def validate(files: VaultFiles, settings: Settings, unit: Unit, note: Note,
             original: Note | None = None, *, language: str | None = None,
             action: str | None = None) -> Validation:
    """Judge `note` as the unit's node.

    An update is judged on what it changes: a lint error the node `original` already had (a
    link to a note renamed since, say) is not the unit's, and the additive rule forbids
    removing the link, so demanding a clean node would fail every unit that touches it. Such
    errors are kept, and left to lint-links.

    `language` (en | zh), when given, is the unit's: a new node must be written in it. With
    `action` (the receipt's), a line replaced by a quoting correction is accepted only for a
    CORRECT; a tool checking a staged node passes none and names the rule itself."""
    new, kept = _split_errors(files, settings, note, original)
    problems = [_show(p, note) for p in new]
    cited = cited_sources(files, settings, note)
    uncited = [p for p in unit.paths if p not in cited]
    if uncited:
        problems.append("## Sources does not cite " + ", ".join(f"[[{p}]]" for p in uncited) +
                        " - add a sentence saying what each supports")
    for sentence in duplicate_sources(original, note):
        problems.append(f"## Sources repeats the sentence {quote_line(sentence)}; keep it once")
    if original is not None and original is not note:
        problems += conservation_problems(original, note, unit.paths)
        if action is not None and action != "CORRECT":
            for ln in quoted_lines(original, note, unit.paths):
                problems.append(
                    f"body line {ln.line} ({quote_line(ln.text)}) is replaced by a correction that "
                    f"quotes it; only a CORRECT may replace a line, and the receipt says "
                    f"{action}: answer with action CORRECT if the new source corrects it, else "
                    "put the line back")
    if language is not None and original is None:
        written = _wrong_language(unit, note, language)
        if written is not None:
            want = "Chinese (中文)" if language == "zh" else "English"
            got = "Chinese" if written == "zh" else "English"
            problems.append(f"the node is written in {got}, but its unit and sources are in "
                            f"{want}: write the name, description and body in {want}")
    # Kept problems go to the run's warnings, for a person: file line numbers, as lint-links.
    return Validation(problems, [f"line {p.line}: {p.code}: {p.message}" for p in kept])


def revision_problems(unit: Unit, action: str, target: str, note: Note | None) -> list[str]:
    """A unit that revises what its edited note said before updates the node its earlier unit
    went into, as a CORRECT when a fact changed, and leaves no stale value in the node's name or
    description (SPEC §9.3): node-search shows the current value."""
    r = unit.revises
    if r is None:
        return []
    if target != r.target:
        return [f"this unit revises {r.target} (its note was edited): update that node, not "
                f"{target}"]
    if r.changed and action != "CORRECT":
        return [f"a fact changed (the note said \"{r.old_statement}\", it now says "
                f"\"{r.new_statement}\"): the action is CORRECT, not {action}"]
    if not r.changed or note is None:
        return []
    try:
        meta = frontmatter.load(note)
    except Exception:  # the lint checks report an unreadable frontmatter
        return []
    problems = []
    for key in ("name", "description"):
        old = stated(str(meta.get(key) or ""), r.stale)
        if old:
            problems.append(f"the node's {key} still states {', '.join(old)}; set it to the "
                            "current value with frontmatter_update")
    return problems




def _wrong_language(unit: Unit, note: Note, expected: str) -> str | None:
    """The language a new node is written in when it is clearly not `expected` (the unit's,
    evidence.language_of) and the unit's own prose is not mixed, else None. Both are judged
    on their prose by the same function (language.clarity), so the engine's own node for a
    statement is never refused for the language of that statement."""
    from remelink import language
    from remelink.evidence import OWN_LETTERS

    written = language.clarity(note.body, BODY_LETTERS)
    if written in (None, "mixed", expected):
        return None
    if language.clarity(" ".join([unit.name, unit.summary, *unit.points]), OWN_LETTERS) == \
            "mixed":
        return None
    return written


def body_language(note: Note) -> str | None:
    """The language of a node's prose (language.prose: code, links, headings and identifiers
    left out, as for the unit it is judged against), or None when it holds too little prose
    to tell."""
    from remelink import language

    return language.of_prose(note.body, BODY_LETTERS)


def _show(problem: Problem, note: Note) -> str:
    """A lint problem as the model can act on it: where in the body it wrote (the frontmatter
    it did not write is not counted), what is wrong, and the line itself."""
    where = problem.line - note.body_line + 1
    if where < 1:
        return f"frontmatter: {problem.code}: {problem.message}"
    lines = note.body.split("\n")
    text = lines[where - 1].rstrip("\r") if where <= len(lines) else ""
    shown = f": {quote_line(text.strip())}" if text.strip() else ""
    return f"body line {where}: {problem.code}: {problem.message}{shown}"


def _split_errors(files: VaultFiles, settings: Settings, note: Note, original: Note | None
                  ) -> tuple[list[Problem], list[Problem]]:
    """The lint errors of `note`: (new ones, ones `original` had too). Matched on code and
    message, as many times as `original` had each, since an edit moves lines."""
    errors = [p for p in check_note(files, settings, note) if p.level == "error"]
    if original is None or not errors:  # the common case costs one check
        return errors, []
    left = Counter((p.code, p.message) for p in check_note(files, settings, original)
                   if p.level == "error")
    new, kept = [], []
    for p in errors:
        key = (p.code, p.message)
        if left[key] > 0:
            left[key] -= 1
            kept.append(p)
        else:
            new.append(p)
    return new, kept


def new_errors(files: VaultFiles, settings: Settings, note: Note, original: Note) -> list[str]:
    """The lint errors `note` has that `original` did not, one item each: what an edit made
    outside a unit (a relinked or marked citation, dream/citations.py) may not add."""
    new, _ = _split_errors(files, settings, note, original)
    return [_show(p, note) for p in new]
