"""Decisions on the realistic vaults' own lines, extraction left out (issue 21, the decision
half): for each correction and restatement of `bench/realvault/<side>/key.yaml`, a fresh vault
gets one node from the earlier note's line and then one unit from the later note's line,
through the real `integrate_unit` and the local engine (embedder none). What the end-to-end
`relations.py` counts depends on what extraction gives; this counts what the engine decides
when it is given the lines a reader would take.

- the earlier line: for a correction, the line of the earlier note holding the old value
  (`old`); for a restatement, the line holding most of the fact's needles;
- the later line: the line of the later note holding the new value (`new`), or most of the
  fact's needles;
- a line is cleaned of its list mark, emphasis and heading marks; the unit's name is
  `tx.title_from(line)` (as a note's title would be), its bucket `wiki`.

Reported: corrections that CORRECT the earlier node (and quote its line), restatements that
update the earlier node (and how many as CORROBORATE, and whether the body got an `Also:`),
by language of the later note. Tune on `dev`, report `heldout`.

    .venv/bin/python bench/quality/decisions.py [dev|heldout ...] [-v]
    .venv/bin/python bench/quality/decisions.py --write   # both, into docs/benchmarks.md
"""

from __future__ import annotations

import re
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.append(str(ROOT))  # after PYTHONPATH: a "before" run may put a checkout first

from bench.realvault import load  # noqa: E402
from remelink.config import Settings  # noqa: E402
from remelink.index import NodeIndex  # noqa: E402
from remelink.integrate import IntegrationContext, UnitResult, integrate_unit  # noqa: E402
from remelink.models.local import LocalModel  # noqa: E402
from remelink.models.local import text as tx  # noqa: E402
from remelink.units import Unit  # noqa: E402
from remelink.vault.resolve import VaultFiles  # noqa: E402

_MARK = re.compile(r"^\s*(?:#+\s*|[-*+]\s+|\d+[.)]\s+|>\s*)")


def clean(line: str) -> str:
    return _MARK.sub("", line).replace("**", "").replace("__", "").strip()


def lines(text: str) -> list[str]:
    return [clean(x) for x in text.splitlines() if clean(x) and not x.startswith("# ")]


def line_with(text: str, value: str) -> str | None:
    return next((x for x in lines(text) if value in x), None)


def line_with_most(text: str, needles: list[str]) -> str | None:
    scored = [(sum(n.casefold() in x.casefold() for n in needles), -i, x)
              for i, x in enumerate(lines(text))]
    best = max(scored, default=(0, 0, ""))
    return best[2] if best[0] > 0 else None


@dataclass
class Case:
    kind: str          # correction | restatement
    lang: str
    earlier: str       # path
    later: str
    node_line: str
    unit_line: str
    action: str = ""
    into_node: bool = False
    quoted: bool = False
    also: bool = False


@dataclass
class Result:
    split: str
    cases: list[Case] = field(default_factory=list)


def _context(root: Path) -> tuple[IntegrationContext, NodeIndex]:
    for folder in ("daily", "resource", "digest/wiki", "digest/personal", "digest/procedure",
                   ".remelink"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    s = replace(Settings(), embedder="none")
    index = NodeIndex(root, s)
    index.refresh()
    model = LocalModel(s)
    model.bind_index(index)
    return IntegrationContext(vault=root, settings=s, model=model, index=index,
                              files=VaultFiles.scan(root), today="2026-04-01"), index


def _integrate(ctx: IntegrationContext, path: str, line: str) -> UnitResult:
    file = ctx.vault / path
    file.parent.mkdir(parents=True, exist_ok=True)
    name = tx.title_from(line) or line[:60]
    file.write_text(f"# {Path(path).stem}\n\n{line}\n", encoding="utf-8")
    ctx.files.add(path)
    return integrate_unit(ctx, Unit(name=name, bucket="wiki", summary=line, paths=(path,)))


def play(case: Case) -> Case:
    with tempfile.TemporaryDirectory(prefix="remelink-decisions-") as tmp:
        ctx, index = _context(Path(tmp) / "vault")
        try:
            made = _integrate(ctx, case.earlier, case.node_line)
            later = _integrate(ctx, case.later, case.unit_line)
            case.action = later.action or later.error or "?"
            case.into_node = bool(made.target) and later.target == made.target
            if case.into_node and made.target:
                text = (ctx.vault / made.target).read_text(encoding="utf-8")
                body = text.split("## Sources")[0]
                quote = tx.clean_statement(case.node_line).rstrip("。.")
                case.quoted = quote[:40] in text.split("\n---\n", 1)[-1].split("## Sources")[0] \
                    and ("Corrected on" in body or "更正" in body)
                case.also = "Also:" in body or "又说" in body
        finally:
            index.close()
    return case


def cases(split: str) -> list[Case]:
    vault = load(split)
    out: list[Case] = []
    for c in vault.corrections:
        node_line = line_with(vault.text(c.corrects), c.old)
        unit_line = line_with(vault.text(c.note), c.new)
        if node_line and unit_line:
            out.append(Case("correction", vault.notes[c.note].lang, c.corrects, c.note,
                            node_line, unit_line))
    for r in vault.restatements:
        fact = vault.fact(r.fact)
        needles = [n.text for n in fact.needles]
        node_line = line_with_most(vault.text(r.restates), needles)
        unit_line = line_with_most(vault.text(r.note), needles)
        if node_line and unit_line:
            out.append(Case("restatement", vault.notes[r.note].lang, r.restates, r.note,
                            node_line, unit_line))
    return out


def run(split: str) -> Result:
    return Result(split, [play(c) for c in cases(split)])


def _by_lang(items: list[Case], ok: list[bool]) -> str:
    total = Counter(c.lang for c in items)
    good = Counter(c.lang for c, o in zip(items, ok, strict=True) if o)
    cells = [f"{lang} {good[lang]}/{total[lang]}" for lang in sorted(total)]
    return ", ".join([*cells, f"all {sum(good.values())}/{len(items)}"])


def table(results: list[Result]) -> str:
    rows = ["| vault | corrections: CORRECT of the earlier node | ... quoting its line "
            "| restatements: update of the earlier node | ... as CORROBORATE | `Also:` in a body |",
            "|---|---|---|---|---|---|"]
    for r in results:
        cor = [c for c in r.cases if c.kind == "correction"]
        res = [c for c in r.cases if c.kind == "restatement"]
        rows.append(
            f"| {r.split} | {_by_lang(cor, [c.into_node and c.action == 'CORRECT' for c in cor])} "
            f"| {_by_lang(cor, [c.quoted for c in cor])} "
            f"| {_by_lang(res, [c.into_node for c in res])} "
            f"| {_by_lang(res, [c.into_node and c.action == 'CORROBORATE' for c in res])} "
            f"| {sum(c.also for c in r.cases)} |")
    return "\n".join(rows)


def main(argv: list[str]) -> None:
    if "-h" in argv or "--help" in argv:  # else it would run every split
        print(__doc__)
        raise SystemExit(0)
    splits = [a for a in argv if a in ("dev", "heldout")] or ["heldout", "dev"]
    results = [run(s) for s in splits]
    print(table(results))
    if "--write" in argv:
        from bench._report import write_section

        text = table(results).replace("| heldout |", "| heldout (**held out**) |").replace(
            "| dev |", "| dev (tuning) |")
        write_section("realvault-decisions", f"""## Decisions on the realistic vaults' own lines

For each correction and restatement of the answer key of `bench/realvault/<split>/key.yaml`, a
fresh vault gets one node from the earlier note's line, then one unit from the later note's
line, through the real `integrate_unit` and the local engine (embedder none): what the engine
decides when it is given the lines a reader would take, extraction left out (the end-to-end
figures are in the realistic-vault relations section). A correction is right when it CORRECTs
the earlier node (and quotes its line); a restatement when it updates the earlier node. By the
language of the later note. `dev` is tuning data, `heldout` the result.

{text}""", "python bench/quality/decisions.py --write")
    if "-v" in argv:
        for r in results:
            print(f"\n## {r.split}")
            for c in r.cases:
                mark = "ok " if c.into_node and (c.kind == "restatement"
                                                 or c.action == "CORRECT") else "MISS"
                print(f"{mark} {c.kind} {c.action}: {c.node_line!r} <- {c.unit_line!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
