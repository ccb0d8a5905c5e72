"""The local engine never fails its own guards (issue 21, the link-vault benchmark): a node
longer than one `read` is read to its end before it is edited, and links the unit's words hold
(a page that does not exist, a query written in brackets over several lines) are written as
their text, not as links."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from local_support import integrate_note, local_context

from remelink.integrate import IntegrationContext
from remelink.lint import lint_links
from remelink.tools import vault_tools

READ_LIMIT = 2048  # one read shows this much (50 KiB in use: a smaller node, the same case)


@pytest.fixture
def ctx(tmp_path: Path) -> Iterator[IntegrationContext]:
    with local_context(tmp_path, "2026-07-01") as c:
        yield c


def _errors(ctx: IntegrationContext) -> list[str]:
    """The link errors of the digest (the notes may link pages that do not exist)."""
    return [f"{p.path}: {p.message}" for p in lint_links(ctx.vault, ctx.settings).problems
            if p.level == "error" and p.path.startswith("digest/")]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_node_longer_than_one_read_is_updated_whole(ctx: IntegrationContext, lang: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vault_tools, "READ_LIMIT", READ_LIMIT)
    if lang == "en":
        name, claim = "Rotate vault tokens", "Vault tokens are rotated every 14 days."
        row = "| token-{i} | rotated by the scheduler | owner team-{i} |"
    else:
        name, claim = "轮换 vault token", "vault token 每 14 天由调度器轮换一次。"
        row = "| token-{i} | 由调度器轮换 | 负责团队 {i} |"
    rows = []
    while sum(len(r.encode("utf-8")) + 1 for r in rows) < 3 * READ_LIMIT:
        rows.append(row.format(i=len(rows)))
    old = "daily/2026-06-01/tokens.md"
    (ctx.vault / "daily/2026-06-01").mkdir(parents=True)
    (ctx.vault / old).write_text(f"# {name}\n\n{claim}\n", encoding="utf-8")
    rel = "digest/wiki/rotate-vault-tokens.md"
    table = "| token | rule | owner |\n|---|---|---|\n" + "\n".join(rows)
    (ctx.vault / rel).write_text(
        f"---\nname: {name}\ndescription: {claim}\n---\n{claim}\n\n{table}\n\n## Sources\n\n"
        f"The rule is recorded in [[{old}]].\n", encoding="utf-8")
    ctx.files.add(old)
    ctx.files.add(rel)
    ctx.index.update([rel])
    result = integrate_note(ctx, "daily/2026-07-01/again.md", name, claim)
    text = (ctx.vault / rel).read_text(encoding="utf-8")
    assert result.target == rel and result.action in ("CORROBORATE", "REFINE")
    assert text.count("## Sources") == 1 and f"[[{old}]]" in text
    assert "[[daily/2026-07-01/again.md]]" in text.split("## Sources")[1]
    assert all(r in text for r in rows)
    assert _errors(ctx) == []


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_links_in_the_units_words_are_written_as_text(ctx: IntegrationContext, lang: str) -> None:
    query = ('${query[[\n  from p = index.pages("adr")\n'
             '  select { ADR = "[[" .. p.name .. "]]" }\n]]}')
    if lang == "en":
        name = "Architecture decision records"
        summary = (f"Important [[Architecture]] decisions are captured as records; see "
                   f"[[Health|the health page]] for records due for review.\n\n# Stats\n{query}\n"
                   "Example: [[from index.items() where _.page == editor.getCurrentPage()]]")
    else:
        name = "架构决策记录"
        summary = (f"重要的 [[架构]] 决策都记录为 ADR；到期复审的记录见 [[健康检查|健康页]]。\n\n"
                   f"# 统计\n{query}\n示例：[[from index.items() where _.page == x]]")
    result = integrate_note(ctx, "daily/2026-07-01/adr.md", name, summary,
                            note=f"# {name}\n\n{summary}\n")
    assert result.action == "CREATE"
    assert _errors(ctx) == []
    text = (ctx.vault / str(result.target)).read_text(encoding="utf-8")
    assert ("the health page" in text) if lang == "en" else ("健康页" in text)
