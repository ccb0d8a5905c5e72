"""A deterministic 10,000-node digest vault for the node-search speed benchmark.

English nodes draw words from a Zipf vocabulary (real function words at the top ranks, then
pseudo-words), Chinese nodes from a Zipf vocabulary of one- to three-character words with the
usual function characters on top, written without spaces. About one node in ten mixes the two
(`学习了Python编程`). Every node has the frontmatter and `## Sources` section of a real digest
node. Queries are ten distinct words sampled from the same distribution, like the nouns and
verbs of a unit summary, so they contain common words as real recall queries do.

    python bench/search_corpus.py OUT_DIR [N]
"""

from __future__ import annotations

import itertools
import random
import sys
from dataclasses import dataclass
from pathlib import Path

BUCKETS = ("procedure", "personal", "wiki")


def _words(text: str) -> list[str]:
    return text.split()


EN_FUNCTION = _words(
    "the of and to a in is that for it as with was on be by this are or from at not an but "
    "have has which when if can all will one more use so there their then than its into also "
    "only other any some these each should must after before about over new first may how "
    "what where why who does do run set get make keep see need step file note user team time")
ZH_FUNCTION = _words("的 了 是 在 和 也 就 都 而 及 与 着 或 一个 我们 这个 没有 可以 因为 所以 "
                     "如果 需要 进行 使用 时候 已经 这些 那些 还是 只是 然后")
SYLLABLES = [c + v for c in "bcdfghjklmnprstvwz" for v in ("a", "e", "i", "o", "u", "ai", "ou")]
# Common hanzi first (the ones the function words use are reused here on purpose).
HANZI = ("的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同"
         "工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理"
         "起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义"
         "事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结"
         "解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设"
         "及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决"
         "西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增争济"
         "阶油思术极交受联什认六共权收证改清己美再采转更单风切打白教速花带安场身车例真务具万"
         "每目至达走积示议声报斗完类八离华名确才科张信马节话米整空元况今集温传土许步群广石记"
         "需段研界拉林律叫且究观越织装影算低持音众书布复容儿须际商非验连断深难近矿千周委素技"
         "备半办青省列习响约支般史感劳便团往酸历市克何除消构府称太准精值号率族维划选标写存候"
         "毛亲快效斯院查江型眼王按格养易置派层片始却专状育厂京识适属圆包火住调满县局照参红细"
         "引听该铁价严龙飞索脱敏密钥轮换缓存幂等键")
WIKILINK_TARGETS = 200


@dataclass(frozen=True)
class Vocab:
    words: list[str]
    cum: list[float]

    def sample(self, rng: random.Random, k: int) -> list[str]:
        return rng.choices(self.words, cum_weights=self.cum, k=k)


def _zipf(words: list[str], s: float = 1.0) -> Vocab:
    weights = [1.0 / (rank + 1) ** s for rank in range(len(words))]
    return Vocab(words, list(itertools.accumulate(weights)))


def english_vocab(size: int = 20_000, seed: int = 7) -> Vocab:
    rng = random.Random(seed)
    seen = set(EN_FUNCTION)
    words = list(EN_FUNCTION)
    while len(words) < size:
        word = "".join(rng.choice(SYLLABLES) for _ in range(rng.choice((2, 2, 3, 3, 4))))
        if word not in seen:
            seen.add(word)
            words.append(word)
    return _zipf(words)


def chinese_vocab(size: int = 8_000, seed: int = 11) -> Vocab:
    rng = random.Random(seed)
    seen = set(ZH_FUNCTION)
    words = list(ZH_FUNCTION)
    pool = list(dict.fromkeys(HANZI))
    # Skew character choice gently toward the common end, as real text does.
    char_cum = list(itertools.accumulate(1.0 / (rank + 20) for rank in range(len(pool))))
    while len(words) < size:
        length = rng.choice((1, 2, 2, 2, 2, 3))
        word = "".join(rng.choices(pool, cum_weights=char_cum, k=length))
        if word not in seen:
            seen.add(word)
            words.append(word)
    return _zipf(words)


def _sentence(rng: random.Random, vocab: Vocab, zh: bool, low: int, high: int) -> str:
    words = vocab.sample(rng, rng.randint(low, high))
    if zh:
        return "".join(words) + "。"
    text = " ".join(words)
    return text[:1].upper() + text[1:] + "."


def node_text(i: int, rng: random.Random, en: Vocab, zh: Vocab) -> tuple[str, str, str]:
    """(bucket, file stem, full text) of node number i."""
    is_zh = rng.random() < 0.3
    mixed = rng.random() < 0.1
    vocab = zh if is_zh else en
    bucket = BUCKETS[i % 3]
    title_words = vocab.sample(rng, rng.randint(2, 5))
    name = ("".join(title_words) if is_zh else " ".join(title_words).title()) + f" {i}"
    stem = f"{'zh' if is_zh else 'en'}-{i:05d}"
    description = _sentence(rng, vocab, is_zh, 8 if not is_zh else 5, 18 if not is_zh else 10)
    tags = sorted({w.title() + "_Corp" for w in en.sample(rng, rng.randint(0, 3))})
    paragraphs = []
    # 80-320 English words; Chinese at the same content size is about 150-600 characters.
    words_left = rng.randint(150, 600) if is_zh else rng.randint(80, 320)
    while words_left > 0:
        sentences = [_sentence(rng, vocab, is_zh, 6, 20) for _ in range(rng.randint(2, 5))]
        if mixed:
            sentences.append(f"学习了{rng.choice(('Python', 'Rust', 'Whoosh', 'SQLite'))}编程。")
        if rng.random() < 0.5:
            other = rng.randrange(WIKILINK_TARGETS)
            sentences.append(f"See [[digest/{BUCKETS[other % 3]}/en-{other:05d}.md]].")
        para = ("" if is_zh else " ").join(sentences)
        paragraphs.append(para)
        words_left -= sum(len(s) if is_zh else len(s.split()) for s in sentences)
    day = f"2026-0{1 + i % 9}-{10 + i % 19}"
    body = "\n\n".join(paragraphs)
    tag_yaml = "[" + ", ".join(tags) + "]"
    text = (f"---\nname: {name}\ndescription: {description}\nmemory_tags: {tag_yaml}\n---\n"
            f"# {name}\n\n{body}\n\n## Sources\n\n"
            f"- The observation comes from [[daily/{day}/session-{i}.md]].\n")
    return bucket, stem, text


def generate(root: Path, n: int = 10_000, seed: int = 42) -> list[str]:
    """Write n digest nodes under root/digest/ and return their workspace-relative paths."""
    rng = random.Random(seed)
    en, zh = english_vocab(), chinese_vocab()
    (root / ".remelink").mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n):
        bucket, stem, text = node_text(i, rng, en, zh)
        rel = f"digest/{bucket}/{stem}.md"
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        paths.append(rel)
    return paths


def queries(count: int = 50, terms: int = 10, seed: int = 99, zh_share: float = 0.2) -> list[str]:
    """`count` queries of `terms` distinct words each, English or Chinese."""
    rng = random.Random(seed)
    en, zh = english_vocab(), chinese_vocab()
    out = []
    for _ in range(count):
        is_zh = rng.random() < zh_share
        vocab = zh if is_zh else en
        words: list[str] = []
        while len(words) < terms:
            word = vocab.sample(rng, 1)[0]
            if word not in words:
                words.append(word)
        out.append(("" if is_zh else " ").join(words))
    return out


if __name__ == "__main__":
    target = Path(sys.argv[1])
    size = int(sys.argv[2]) if len(sys.argv) > 2 else 10_000
    written = generate(target, size)
    print(f"wrote {len(written)} nodes under {target}/digest")
