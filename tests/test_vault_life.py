"""A vault's life, scripted in a real git repository with the pre-commit hook installed, from a
shell without remelink's environment on PATH: 20 notes and a first `dream run`, then 2 deleted,
3 renamed (one edited too), 2 edited, 3 added, each step followed by `dream run` and a commit
through the hook. At the end no link is an error, every citation points at a note that exists
or is marked deleted in its node, and nothing was extracted again for a rename.

Each step's output (the run's summary from `--json`, the hook's output, lint-links) is compared
with tests/golden/vault-life/step-N.txt; `REMELINK_UPDATE_GOLDEN=1` rewrites them (review the
diff)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from dream_support import golden_text

from remelink.lint import lint_links, sources_section
from remelink.vault import links as wl
from remelink.vault.marks import deleted_marks
from remelink.vault.notes import parse_text

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900),
              pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")]

HERE = Path(__file__).resolve().parent
FIXTURE = HERE / "fixtures" / "vault-life"
BIN = Path(sys.executable).parent

LUNCH = "daily/2026-06-04/lunch.md"
FLAGS = "daily/2026-06-05/feature-flags.md"
RENAMES = {  # old -> new
    "daily/2026-06-02/redis-timeouts.md": "daily/2026-06-02/checkout-redis-timeouts.md",
    "daily/2026-06-04/code-review.md": "daily/2026-06-04/pr-size.md",
    "daily/2026-06-03/api-keys.md": "daily/2026-06-03/api-key-rotation.md",
}
EDITED_RENAME = "daily/2026-06-03/api-key-rotation.md"


def shell_env(tmp_path: Path) -> dict[str, str]:
    """`env -i` with a PATH of system folders: nothing of this environment (remelink and
    pre-commit are called by their paths; the hook's entry names its own)."""
    (tmp_path / "home").mkdir()
    path = os.pathsep.join(d for d in ("/usr/local/bin", "/usr/bin", "/bin")
                           if Path(d).is_dir() and not (Path(d) / "remelink").exists())
    return {"PATH": path, "HOME": str(tmp_path / "home"), "LANG": "C.UTF-8",
            "PRE_COMMIT_HOME": str(tmp_path / "pre-commit"), "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
            "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org",
            # the lexical engine, as the golden files are; no network for litellm either
            "REMELINK_LOCAL__EMBEDDER": "none", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "LITELLM_OFFLINE_MODE": "true"}


def sh(argv: list[str], cwd: Path, env: dict[str, str],
       check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False,
                          timeout=600)
    if check and proc.returncode:
        raise AssertionError(f"{argv} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return proc


HOOKS = f"""\
repos:
  - repo: local
    hooks:
      - id: remelink-lint-links
        name: remelink lint-links
        entry: {BIN}/remelink-lint-links --staged
        language: system
        types: [markdown]
        always_run: true
        require_serial: true
        verbose: true  # show the warnings of a commit that passes
"""


def delete_two(vault: Path) -> str:
    for rel in (LUNCH, FLAGS):
        (vault / rel).unlink()
    return f"rm {LUNCH} {FLAGS}"


def rename_three(vault: Path) -> str:
    for old, new in RENAMES.items():
        (vault / old).rename(vault / new)
    note = vault / EDITED_RENAME
    note.write_text(note.read_text(encoding="utf-8").replace("every 30 days", "every 14 days"),
                    encoding="utf-8")
    return "mv " + "; mv ".join(f"{o} {n}" for o, n in RENAMES.items()) + \
        f"; edit {EDITED_RENAME} (30 days -> 14 days)"


def edit_two(vault: Path) -> str:
    backups = vault / "daily/2026-06-05/backups.md"
    backups.write_text(backups.read_text(encoding="utf-8") +
                       "\nA restore into staging takes about 40 minutes.\n", encoding="utf-8")
    logging = vault / "daily/2026-06-09/logging.md"
    logging.write_text(logging.read_text(encoding="utf-8").replace("30 days", "90 days"),
                       encoding="utf-8")
    return ("edit daily/2026-06-05/backups.md (a line added); "
            "edit daily/2026-06-09/logging.md (30 days -> 90 days)")


def add_three(vault: Path) -> str:
    added = sorted(p.relative_to(FIXTURE / "added").as_posix()
                   for p in (FIXTURE / "added").rglob("*.md"))
    shutil.copytree(FIXTURE / "added", vault, dirs_exist_ok=True)
    return "add " + " ".join(added)


STEPS: list[tuple[str, Callable[[Path], str]]] = [
    ("20 notes, a first run", lambda vault: "20 notes under daily/ and resource/"),
    ("2 deleted", delete_two),
    ("3 renamed, one edited too", rename_three),
    ("2 edited", edit_two),
    ("3 added", add_three),
]


def summary(text: str) -> str:
    """What a `dream run --json` decided, without its clock and identity."""
    data = json.loads(text)
    d = data["data"]
    counts = {k: v for k, v in data["counts"].items() if v and not k.startswith("tokens")}
    lines = [f"ok: {data['ok']}", f"counts: {json.dumps(counts, sort_keys=True)}"]
    if d["setup"]:
        lines.append(f"set up: {', '.join(d['setup'])}")
    lines += [f"renamed: {r['from']} -> {r['to']} (similarity {r['similarity']}; relinked "
              f"{', '.join(r['nodes']) or 'nothing'})" for r in d["renamed"]]
    lines += [f"deleted: {x['path']} (marked in {', '.join(x['nodes']) or 'nothing'})"
              for x in d["deleted"]]
    lines += [f"input {p}: {i['status']}" for p, i in sorted(d["inputs"].items())
              if i["status"] != "skipped"]
    lines += [f"unit {u['action']} {u['target']} <- {', '.join(u['paths'])}"
              for u in d["units"] if u["status"] == "done"]
    lines += [f"unit {u['status']}: {u['name']}: {u['error']}" for u in d["units"]
              if u["status"] != "done"]
    lines += [f"warning: {w}" for w in d["warnings"]]
    lines += [f"error: {e}" for e in data["errors"]]
    return "\n".join(lines)


def normalise(text: str) -> str:
    text = re.sub(r"\(\d+\.\d+ s\)", "(s)", text)
    text = re.sub(r"- duration: [\d.]+s", "- duration: s", text)
    return text.rstrip()


def test_a_vault_lives_in_git_through_the_hook(tmp_path: Path) -> None:
    env = shell_env(tmp_path)
    assert shutil.which("remelink", path=env["PATH"]) is None  # no environment on PATH
    vault = tmp_path / "notes"
    shutil.copytree(FIXTURE / "initial", vault)
    assert len(list(vault.rglob("*.md"))) == 20
    (vault / ".pre-commit-config.yaml").write_text(HOOKS, encoding="utf-8")
    sh(["git", "init", "-q", "-b", "main"], vault, env)
    sh([str(BIN / "pre-commit"), "install"], vault, env)
    extracted: list[list[str]] = []
    for number, (title, change) in enumerate(STEPS, 1):
        did = change(vault)
        run = sh([str(BIN / "remelink"), "dream", "run", "--json", "--today",
                  f"2026-06-{11 + number:02d}"], vault, env)
        data = json.loads(run.stdout)
        extracted.append(sorted({p for u in data["data"]["units"] for p in u["paths"]}))
        sh(["git", "add", "-A"], vault, env)
        commit = sh(["git", "commit", "-q", "-m", title], vault, env, check=False)
        lint = sh([str(BIN / "remelink"), "lint-links"], vault, env, check=False)
        out = "\n".join([
            f"== step {number}: {title}", f"$ {did}", "$ remelink dream run --json",
            summary(run.stdout), "$ git add -A && git commit  (the pre-commit hook runs)",
            normalise(commit.stdout + commit.stderr), f"exit {commit.returncode}",
            "$ remelink lint-links", normalise(lint.stdout + lint.stderr),
            f"exit {lint.returncode}", ""])
        golden_text(out, f"vault-life/step-{number}.txt")
        assert commit.returncode == 0, out
        assert lint.returncode == 0, out
    log = sh(["git", "log", "--format=%s"], vault, env).stdout.split("\n")
    assert log[:5] == [t for t, _ in reversed(STEPS)]
    assert sh(["git", "status", "--porcelain"], vault, env).stdout == ""

    # No error-level problem anywhere; every citation resolves or is marked deleted.
    report = lint_links(vault)
    assert report.errors == 0
    assert {p.code for p in report.problems} <= {"deleted-source"}
    marked_anywhere: set[str] = set()
    for node in sorted((vault / "digest").rglob("*.md")):
        note = parse_text(node.relative_to(vault).as_posix(), node.read_text(encoding="utf-8"))
        marks = deleted_marks(note.text)
        marked_anywhere |= set(marks)
        scan = wl.scan(note.body, note.body_line)
        section = sources_section(scan.outline.headings)
        assert section is not None, note.path
        for link in scan.links:
            if section[0] < link.line < section[1]:
                assert (vault / link.target).is_file() or link.target in marks, \
                    (note.path, link.target)
                assert link.target not in RENAMES, (note.path, link.target)
    assert FLAGS in marked_anywhere  # a cited note was deleted, and marked
    # Nothing extracted again for a pure rename: the rename step extracted the edited one only.
    assert extracted[2] == [EDITED_RENAME]
    state = json.loads((vault / ".remelink" / "state.json").read_text(encoding="utf-8"))
    for old, new in RENAMES.items():
        assert old not in state["inputs"] and new in state["inputs"]
        assert all(old not in u["paths"] for u in state["units"].values())
        assert any(f"[[{new}" in p.read_text(encoding="utf-8")
                   for p in (vault / "digest").rglob("*.md")), new
