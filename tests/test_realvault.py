"""Integrity of the realistic vaults' answer keys (bench/realvault/): every annotated path
exists, every needle is in its note verbatim (as code where it says so), corrections and
restatements point at facts that exist, and each vault has the counts its README promises."""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.realvault import key  # noqa: E402

SPLITS = key.SPLITS
DATE_DIR = re.compile(r"^\d{4}-\d{2}-\d{2}$")
WIKILINK = re.compile(r"\[\[([^\]|#]+)")


@pytest.fixture(scope="module", params=SPLITS)
def vault(request: pytest.FixtureRequest) -> key.Vault:
    return key.load(request.param)


def markdown_files(root: Path) -> set[str]:
    return {
        p.relative_to(root).as_posix()
        for p in root.rglob("*.md")
        if not any(part.startswith(".") for part in p.relative_to(root).parts)
    }


def test_every_note_is_annotated_and_every_annotation_exists(vault: key.Vault) -> None:
    on_disk = markdown_files(vault.root) - {"digest/.gitkeep"}
    assert set(vault.notes) == on_disk


def test_layout_follows_the_spec(vault: key.Vault) -> None:
    for path in vault.notes:
        parts = path.split("/")
        assert parts[0] in ("daily", "resource"), path
        if parts[0] == "daily":
            assert len(parts) == 3 and DATE_DIR.match(parts[1]), path
        else:
            assert len(parts) in (2, 3), path
            if len(parts) == 3:
                assert DATE_DIR.match(parts[1]), path
    digest = vault.root / "digest"
    assert digest.is_dir()
    assert [p.name for p in digest.iterdir()] in ([], [".gitkeep"])
    config = yaml.safe_load((vault.root / ".remelink" / "config.yaml").read_text("utf-8"))
    assert config["model"] == "local"
    assert config["links"] == {"resolution": "obsidian"}
    assert sorted(p.name for p in (vault.root / ".remelink").iterdir()) == ["config.yaml"]


def test_needles_occur_verbatim(vault: key.Vault) -> None:
    for fact in vault.facts():
        text = vault.text(fact.note)
        assert fact.needles, fact.id
        for needle in fact.needles:
            assert needle.text in text, f"{fact.id}: {needle.text!r} not in {fact.note}"
            if needle.code:
                assert key.in_code(needle.text, text), \
                    f"{fact.id}: {needle.text!r} is not code in {fact.note}"


def test_chatter_notes_have_no_facts_and_others_do(vault: key.Vault) -> None:
    for note in vault.notes.values():
        assert bool(note.facts) != note.chatter, note.path
        assert note.lang in ("en", "zh"), note.path
        assert note.kind, note.path


def test_ids_are_unique(vault: key.Vault) -> None:
    fact_ids = [f.id for f in vault.facts()]
    assert len(fact_ids) == len(set(fact_ids))
    question_ids = [q.id for q in vault.questions]
    assert len(question_ids) == len(set(question_ids))


def test_fact_ids_are_unique_across_vaults() -> None:
    dev, heldout = (set(f.id for f in key.load(s).facts()) for s in SPLITS)
    assert not dev & heldout


def test_language_is_what_the_note_is_written_in(vault: key.Vault) -> None:
    for note in vault.notes.values():
        text = vault.text(note.path)
        cjk = sum(1 for ch in text if "\u4e00" <= ch <= "\u9fff")
        assert (cjk > 20) == (note.lang == "zh"), (note.path, cjk)


def test_related_pairs(vault: key.Vault) -> None:
    seen = set()
    for rel in vault.related:
        assert rel.a in vault.notes and rel.b in vault.notes, rel
        assert rel.a != rel.b
        assert not vault.notes[rel.a].chatter and not vault.notes[rel.b].chatter, rel
        assert rel.why.strip()
        pair = frozenset((rel.a, rel.b))
        assert pair not in seen, rel
        seen.add(pair)


def _date(path: str) -> str | None:
    parts = path.split("/")
    return parts[1] if len(parts) == 3 else None


def test_corrections(vault: key.Vault) -> None:
    for c in vault.corrections:
        assert c.note in vault.notes and c.corrects in vault.notes, c
        assert c.fact in {f.id for f in vault.notes[c.corrects].facts}, c
        assert c.old in vault.text(c.corrects), c
        assert c.new in vault.text(c.note), c
        assert c.old != c.new
        later, earlier = _date(c.note), _date(c.corrects)
        if later and earlier:
            assert later > earlier, c


def test_restatements(vault: key.Vault) -> None:
    for r in vault.restatements:
        assert r.note in vault.notes and r.restates in vault.notes, r
        assert r.note != r.restates
        assert r.fact in {f.id for f in vault.notes[r.restates].facts}, r
        later, earlier = _date(r.note), _date(r.restates)
        if later and earlier:
            assert later > earlier, r


def test_questions(vault: key.Vault) -> None:
    assert len(vault.questions) == 20
    assert Counter(q.lang for q in vault.questions) == {"en": 10, "zh": 10}
    cross = 0
    for q in vault.questions:
        assert q.answers and q.needles, q.id
        langs = set()
        for path in q.answers:
            assert path in vault.notes and not vault.notes[path].chatter, (q.id, path)
            langs.add(vault.notes[path].lang)
        texts = [vault.text(p) for p in q.answers]
        for needle in q.needles:
            assert any(needle in t for t in texts), (q.id, needle)
        cross += q.lang not in langs
    assert cross >= 4  # some are asked in one language about a note in the other


def test_required_counts(vault: key.Vault) -> None:
    notes = list(vault.notes.values())
    # dev grew by a later batch of restating / correcting notes (issue 21)
    assert 40 <= len(notes) <= (60 if vault.split == "dev" else 50)
    zh = sum(n.lang == "zh" for n in notes) / len(notes)
    assert 0.28 <= zh <= 0.40, zh
    chatter = [n for n in notes if n.chatter]
    assert 5 <= len(chatter) <= 7
    assert sum(n.lang == "zh" for n in chatter) >= 2
    assert len(vault.corrections) >= 4
    assert len(vault.restatements) >= 4
    # at least one restatement and one correction across languages
    lang = {p: n.lang for p, n in vault.notes.items()}
    assert any(lang[r.note] != lang[r.restates] for r in vault.restatements)
    assert any(lang[c.note] == "zh" and lang[c.corrects] == "zh" for c in vault.corrections)
    kinds = Counter(n.kind for n in notes)
    for kind in ("incident", "debuglog", "runbook", "policy", "styleguide", "design",
                 "reading", "talk", "preference"):
        assert kinds[kind] >= 1, kind
    dates = sorted({d for p in vault.notes if (d := _date(p))})
    first, last = (int(d.replace("-", "")) for d in (dates[0], dates[-1]))
    assert last - first >= 100  # spread over about two months


def test_wikilinks_resolve_by_name(vault: key.Vault) -> None:
    """Obsidian resolution: every link target is a path or the unique stem of a note."""
    stems = Counter(Path(p).stem.casefold() for p in vault.notes)
    for path in vault.notes:
        body = vault.text(path)
        for target in WIKILINK.findall(body):
            target = target.strip()
            if target.removesuffix(".md") + ".md" in vault.notes:
                continue
            assert stems[target.casefold()] == 1, (path, target)


def test_pairs() -> None:
    everything = key.pairs("all")
    ids = [p.id for p in everything]
    assert len(ids) == len(set(ids))
    by_lang = Counter(p.lang for p in everything)
    assert by_lang == {"zh": 150, "en": 100}
    for lang in ("zh", "en"):
        subset = [p for p in everything if p.lang == lang]
        share = sum(p.same for p in subset) / len(subset)
        assert 0.4 <= share <= 0.6, (lang, share)
    for p in everything:
        assert p.a.strip() and p.b.strip() and p.a != p.b, p.id
        assert (p.kind == "paraphrase") == p.same, p.id
    kinds = {"paraphrase", "number", "unit", "person", "role", "negation", "bound", "system",
             "action", "time", "scope", "value"}
    assert {p.kind for p in everything} <= kinds
    assert {p.vault for p in everything} == {"dev", "heldout"}
    tune, test = key.pairs("tune"), key.pairs("test")
    assert len(tune) + len(test) == len(everything)
    assert {p.id for p in tune}.isdisjoint({p.id for p in test})
    for split in (tune, test):
        for lang in ("zh", "en"):
            subset = [p for p in split if p.lang == lang]
            assert abs(2 * sum(p.same for p in subset) - len(subset)) <= 2, (lang, len(subset))
    # the pairs of one source sentence stay in one split
    splits_of: dict[str, set[str]] = {}
    for p in everything:
        splits_of.setdefault(p.a, set()).add(p.split)
    assert all(len(s) == 1 for s in splits_of.values())
    assert all(p.vault == "dev" for p in key.pairs("tune", vault="dev"))


def test_question_pairs() -> None:
    everything = key.questions("all")
    assert len({p.id for p in everything}) == len(everything) == 64
    kinds = {"paraphrase", "number", "unit", "person", "role", "negation", "bound", "system",
             "action", "time", "scope", "value"}
    for p in everything:
        assert p.lang == "zh" and p.vault == "dev", p.id
        assert p.a.strip() and p.b.strip() and p.a != p.b, p.id
        assert p.a.endswith("？") and p.b.endswith("？"), p.id
        assert (p.kind == "paraphrase") == p.same, p.id
        assert p.kind in kinds, p.id
    sources: dict[str, list[key.Pair]] = {}
    for p in everything:
        sources.setdefault(p.a, []).append(p)
    # each source question: one paraphrase, one hard negative, both in one split
    assert len(sources) == 32
    for group in sources.values():
        assert sorted(p.same for p in group) == [False, True]
        assert len({p.split for p in group}) == 1
    for split in ("tune", "test"):
        subset = key.questions(split)
        assert len(subset) == 32 and sum(p.same for p in subset) == 16


@given(st.text(alphabet="ab`c ~\n", max_size=60))
def test_code_segments_are_substrings_of_the_text(text: str) -> None:
    for segment in key.code_segments(text):
        for line in segment.split("\n"):
            assert line in text


@given(st.text(alphabet=st.characters(blacklist_characters="`\n\r"), min_size=1, max_size=30))
def test_an_inline_span_is_found(code: str) -> None:
    text = f"before `{code}` after"
    padded = len(code) >= 2 and code[0] == code[-1] == " " and code.strip(" ") != ""
    assert key.code_segments(text) == [code[1:-1] if padded else code]


def test_code_segments_examples() -> None:
    text = ("Run `a b` then\n\n```bash\nx --y=1\n```\n\n"
            "``c ` d`` and `unclosed\n   ~~~\n   z\n   ~~~\n")
    assert key.code_segments(text) == ["a b", "x --y=1", "c ` d", "   z"]
    assert not key.in_code("then", text)
    with pytest.raises(ValueError):
        key.load("test")
    assert key.pair_split("zh-012") == "tune" and key.pair_split("en-007") == "test"
