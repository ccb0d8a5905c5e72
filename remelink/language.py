"""The language of a text, judged on its prose alone (SPEC §7.1: a node is written in the
language of its sources).

One function, `prose`, decides what counts as prose, for both sides of the check: the language
a unit's node must be written in (evidence.language_of, which the LLM is told in its prompt and
the local engine writes in) and the language a node is written in (guards.body_language). Code
and names are in no language: `journaldb 的 max_connections 是 200` is a Chinese sentence, but
counted letter by letter its identifiers made it English, and the guard, which counted only the
node's prose, refused the engine's own Chinese node. So both sides leave out the same things:

- fenced code blocks and inline code spans (CommonMark's way, mdblocks.code_spans);
- wikilinks, markdown link targets, URLs and heading lines;
- identifiers: words holding `_`, `/` or `\\`, a dot or colon between letters or digits
  (`journal.postings.v2`, `date.today()`, `a::b`), letters and digits mixed (`v2`, `48h`,
  `k8s`, `10m`), calls (`f()`) and command-line flags (`--timeout=10m`, `-n`).

Each word is judged by itself (a scan, no backtracking pattern), so the cost stays linear in
the text.
"""

from __future__ import annotations

import re

from remelink.mdblocks import mask_code

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_CJK_RUN_RE = re.compile(f"[{_CJK}]+")
# A word: a run of characters that are neither space nor CJK (letters or punctuation).
_WORD_RE = re.compile(f"[^\\s{_CJK}\u3000-\u303f\uff00-\uffef]+")
_FENCE_RE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
_WIKILINK_RE = re.compile(r"!?\[\[[^\]\n]*\]\]")
_LINK_TARGET_RE = re.compile(r"\]\([^)\s]*\)")
_HEADING_RE = re.compile(r"^[ \t]{0,3}#{1,6}(?:[ \t].*)?$", re.M)
_INNER_SEP_RE = re.compile(r"[A-Za-z0-9][.:][A-Za-z0-9]")
_DIGIT_RE = re.compile(r"\d")
_LETTER_RE = re.compile(r"[A-Za-z]")
_FLAG_RE = re.compile(r"--?[A-Za-z]")


def _is_identifier(word: str) -> bool:
    """Whether a word (no space, no CJK) is code or a name rather than prose."""
    if "_" in word or "/" in word or "\\" in word or "://" in word or "()" in word:
        return True
    if _FLAG_RE.match(word):
        return True
    if _INNER_SEP_RE.search(word):
        return True
    return bool(_DIGIT_RE.search(word) and _LETTER_RE.search(word))


def _without_fences(text: str) -> str:
    out: list[str] = []
    fence = ""
    for line in text.split("\n"):
        m = _FENCE_RE.match(line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and \
                    not line.strip()[len(m.group(1)):].strip():
                fence = ""
            continue
        if m:
            fence = m.group(1)
            continue
        out.append(line)
    return "\n".join(out)


def prose(text: str) -> str:
    """`text` with its code, links, headings and identifiers left out: what a reader would call
    its language by."""
    text = _without_fences(text.replace("\r\n", "\n"))
    text = mask_code(text) if "`" in text else text
    text = _WIKILINK_RE.sub(" ", text)
    text = _LINK_TARGET_RE.sub("] ", text)
    text = _HEADING_RE.sub(" ", text)
    return _WORD_RE.sub(lambda m: " " if _is_identifier(m.group(0)) else m.group(0), text)


def letters(text: str) -> int:
    """The letters of `text` (CJK characters count one each)."""
    return sum(1 for ch in text if ch.isalpha())


ZH_SHARE = 0.2          # CJK characters' share of the letters from which a text is Chinese
CLEAR = (0.1, 0.4)      # below the first share a text is clearly English, from the second
                        # clearly Chinese; between them it is mixed, and either is its language


def cjk_share(text: str) -> float:
    """CJK characters' share of the letters of `text` (as given), 0 when it has none."""
    cjk = sum(len(m.group(0)) for m in _CJK_RUN_RE.finditer(text))
    if not cjk:
        return 0.0
    latin = sum(1 for ch in text if ch.isascii() and ch.isalpha())
    return cjk / (cjk + latin)


def detect(text: str) -> str:
    """`zh` when CJK characters make up a fifth or more of the letters, else `en` (on the text
    as given: pass `prose(text)` to judge its prose)."""
    return "zh" if cjk_share(text) >= ZH_SHARE else "en"


BODY_LETTERS = 20  # a node's prose tells its language once it holds this many letters


def of_prose(text: str, least: int) -> str | None:
    """The language of `text`'s prose, or None when its prose holds fewer than `least`
    letters."""
    words = prose(text)
    return detect(words) if letters(words) >= least else None


def clarity(text: str, least: int) -> str | None:
    """`en` or `zh` when `text`'s prose is clearly in that language, `mixed` when it holds a
    real share of both (`journaldb 的 max_connections 是 200` is Chinese by a hair), None when
    its prose holds fewer than `least` letters. The language guard refuses a node only when
    the node and its unit are each clearly in one language and they differ: a node written
    from a mixed statement may come out either side of the line by a connective or a quoted
    title, and neither side is wrong."""
    words = prose(text)
    if letters(words) < least:
        return None
    share = cjk_share(words)
    return "en" if share < CLEAR[0] else "zh" if share >= CLEAR[1] else "mixed"


__all__ = ["cjk_share", "clarity", "detect", "letters", "of_prose", "prose"]
