"""`edit` on text whose lines end differently (SPEC §2 byte fidelity, issue 11).

A node may have LF frontmatter over a CRLF body, or a mix line by line (pasted text, two
editors). The model reads lines without their `\r` and writes LF, so its `old` text is matched
against the body with every CRLF read as LF, and the span found is mapped back to the body's
own bytes. The replacement takes the endings of the lines it replaces, one by one; lines
outside the span keep theirs, byte for byte.
"""

from __future__ import annotations

from bisect import bisect_left


def _crlf_positions(body: str) -> tuple[str, list[int]]:
    """The body with CRLF read as LF, and the LF-text index of each newline that was CRLF."""
    if "\r\n" not in body:
        return body, []
    flat = body.replace("\r\n", "\n")
    positions: list[int] = []
    shift = 0
    start = 0
    while (i := body.find("\r\n", start)) != -1:
        positions.append(i - shift)  # the `\n` of this CRLF, in the flat text
        shift += 1
        start = i + 2
    return flat, positions


def find_once(body: str, old: str) -> tuple[int, int] | int:
    """The span `(start, end)` of the body's bytes that `old` matches (CRLF and LF alike), or
    how many times it occurs (0, or 2 and more) when that is not exactly once."""
    flat, crlf = _crlf_positions(body)
    needle = old.replace("\r\n", "\n")
    count = flat.count(needle)
    if count != 1:
        return count
    start = flat.find(needle)
    end = start + len(needle)
    # Each CRLF newline before a flat index adds one `\r` before it in the body.
    return start + bisect_left(crlf, start), end + bisect_left(crlf, end)


def with_endings_of(new: str, body: str, start: int, end: int, default: str) -> str:
    """`new` (LF) with the line endings of the body's span `start:end`: its i-th newline gets
    the i-th ending of the span; any further newline the ending of the span's last line (or of
    the line the span sits in, or `default` for a body with no newline at all)."""
    text = new.replace("\r\n", "\n")
    if "\n" not in text:
        return text
    span = body[start:end]
    endings = ["\r\n" if i > 0 and span[i - 1] == "\r" else "\n"
               for i, ch in enumerate(span) if ch == "\n"]
    if endings:
        rest = endings[-1]
    else:
        after = body.find("\n", end)
        before = body.rfind("\n", 0, start)
        at = after if after != -1 else before
        rest = ("\r\n" if at > 0 and body[at - 1] == "\r" else "\n") if at != -1 else default
    lines = text.split("\n")
    out = [lines[0]]
    for i, line in enumerate(lines[1:]):
        out.append(endings[i] if i < len(endings) else rest)
        out.append(line)
    return "".join(out)
