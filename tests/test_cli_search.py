"""`remelink node-search` and `remelink index rebuild` through Typer's CliRunner (SPEC §5, §13)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import VaultFactory
from typer.testing import CliRunner

from remelink.cli import app
from remelink.index import INDEX_DIR

runner = CliRunner()


def node(name: str, description: str, body: str = "") -> str:
    return f"---\nname: {name}\ndescription: {description}\nmemory_tags: [Acme]\n---\n{body}\n"


@pytest.fixture
def vault(make_vault: VaultFactory) -> Path:
    return make_vault({
        "digest/wiki/idempotency-keys.md": node("Idempotency keys", "Safe retries.",
                                                "Every request carries a key."),
        "digest/procedure/deploy-checklist.md": node("Deploy checklist", "Steps to deploy.",
                                                     "Run the migrations first."),
        "digest/wiki/数据脱敏规则.md": node("数据脱敏规则", "导出前做脱敏。", "手机号保留后四位。"),
    })


def invoke(vault: Path, *args: str) -> Any:
    return runner.invoke(app, [*args, "--vault", str(vault)])


def test_plain_output_when_not_a_tty(vault: Path) -> None:
    result = invoke(vault, "node-search", "deploy migrations")
    assert result.exit_code == 0, result.output
    first = result.stdout.splitlines()[0].split("\t")
    assert first[1:] == ["digest/procedure/deploy-checklist.md", "Deploy checklist",
                         "Steps to deploy."]
    assert float(first[0]) > 0
    assert "node index missing" in result.stderr  # first use builds it, with a notice


def test_json_output(vault: Path) -> None:
    result = invoke(vault, "node-search", "脱敏", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert (doc["ok"], doc["command"], doc["counts"], doc["errors"]) == (
        True, "node-search", {"hits": len(doc["data"])}, [])
    hits = doc["data"]
    assert hits[0] == {"path": "digest/wiki/数据脱敏规则.md", "score": hits[0]["score"],
                       "name": "数据脱敏规则", "description": "导出前做脱敏。", "bucket": "wiki",
                       "memory_tags": ["Acme"]}
    assert set(hits[0]) == {"path", "score", "name", "description", "bucket", "memory_tags"}


def test_no_hits(vault: Path) -> None:
    result = invoke(vault, "node-search", "zebra", "--json")
    assert result.exit_code == 0 and json.loads(result.stdout)["data"] == []
    result = invoke(vault, "node-search", "zebra")
    assert result.exit_code == 0 and result.stdout == ""
    assert "no digest node matches 'zebra'" in result.stderr


def test_table_on_a_terminal(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from remelink.index import render

    monkeypatch.setattr(render, "is_terminal", lambda stream: True)
    monkeypatch.setenv("COLUMNS", "200")
    result = invoke(vault, "node-search", "deploy")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert "┃ score ┃ path" in lines[1] and "name" in lines[1] and "description" in lines[1]
    row = next(line for line in lines if "deploy-checklist" in line)
    assert [c.strip() for c in row.strip("│ ").split("│")][1:] == [
        "digest/procedure/deploy-checklist.md", "Deploy checklist", "Steps to deploy."]
    assert "\t" not in result.stdout


@pytest.mark.parametrize(("args", "message"), [
    (["node-search", ""], "the query is empty"),
    (["node-search", "   "], "the query is empty"),
    (["node-search", "x", "--bucket", "notes"], "--bucket must be one of"),
    (["node-search", "x", "--limit", "0"], "--limit"),
    (["node-search", "x", "--limit", "101"], "--limit"),
])
def test_usage_errors_exit_2(vault: Path, args: list[str], message: str) -> None:
    result = invoke(vault, *args)
    assert result.exit_code == 2
    assert message in result.stderr
    assert "Traceback" not in result.output


@pytest.mark.parametrize("query", ["a:b", "(", "AND", '"', "*", "x" * 10_240])
def test_hostile_queries_exit_0(vault: Path, query: str) -> None:
    result = invoke(vault, "node-search", query, "--json")
    assert result.exit_code == 0, result.output
    assert isinstance(json.loads(result.stdout)["data"], list)


def test_limit_and_bucket(vault: Path) -> None:
    result = invoke(vault, "node-search", "acme", "--json", "--limit", "1")
    assert len(json.loads(result.stdout)["data"]) == 1
    result = invoke(vault, "node-search", "acme", "--json", "--bucket", "procedure")
    assert [h["bucket"] for h in json.loads(result.stdout)["data"]] == ["procedure"]


def test_index_rebuild(vault: Path) -> None:
    result = invoke(vault, "index", "rebuild")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"rebuilt {INDEX_DIR}: 3 digest node(s) indexed in ")
    (vault / "digest/wiki/bad.md").write_bytes(b"\x00binary")
    result = invoke(vault, "index", "rebuild")
    assert "3 digest node(s) indexed, 1 skipped" in result.stdout
    assert "digest/wiki/bad.md" in result.stderr and "binary" in result.stderr


def test_busy_index_exits_3(vault: Path) -> None:
    from remelink.vault.fsio import file_lock

    invoke(vault, "index", "rebuild")
    (vault / "digest/wiki/new.md").write_text(node("New", "Fresh."), encoding="utf-8")
    with file_lock(vault / ".remelink" / "index.lock"):
        import remelink.index.core as core

        old = core.DEFAULT_WAIT
        core.DEFAULT_WAIT = 0.3
        try:
            result = invoke(vault, "node-search", "fresh")
        finally:
            core.DEFAULT_WAIT = old
    assert result.exit_code == 3
    assert "index busy" in result.stderr
