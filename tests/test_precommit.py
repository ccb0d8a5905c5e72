"""The README's pre-commit snippets, run by the real `pre-commit` (4.7.0) in a temporary git vault,
offline, from a shell whose PATH does not hold the environment remelink is installed in: a
`git mv` or `git rm` of a cited note fails the commit that breaks the link.

- `repo: local` with `language: system` and the console script's absolute path (no activated
  environment needed): in the default suite. The shell is `env -i` with a PATH of system
  folders (`clean_env`), and the real `pre-commit` installed in this environment, called by
  its path, installs the git hook and runs it on `git commit`.
- The remote snippet (`language: python`), pointed at a local copy of this repository that
  carries the release tag the README names (`v<version>`, the convention of the project's
  release tags). pre-commit builds a virtual environment and `pip install`s the hook
  repository, whose build needs setuptools from an index: here a wheelhouse built from what
  is installed (setuptools from virtualenv's bundled wheels, the runtime dependencies repacked
  from site-packages), with PIP_NO_INDEX and pip's own configuration switched off, inside a
  network namespace without network when the machine allows one. Marked slow (about 40 s on
  this shared 2-core machine).
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata as md
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from remelink import __version__

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
BIN = Path(sys.executable).parent

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")

CITING_NODE = """\
---
name: Standup format
description: How the standup runs.
---
The standup is fifteen minutes.

## Sources

The format was agreed in [[daily/2026-03-02/standup.md]].
"""


def readme_snippet(marker: str) -> str:
    """The README's pre-commit YAML block that contains `marker`."""
    section = README.split("### As a pre-commit hook", 1)[1].split("\n## ", 1)[0]
    blocks = [b for b in re.findall(r"```yaml\n(.*?)```", section, re.S) if marker in b]
    assert len(blocks) == 1, f"one README pre-commit snippet with {marker!r}"
    return blocks[0]


# The shell a commit runs from when nothing was activated: `env -i` and the system's own
# folders on PATH, nothing of this environment (git is looked up there; so is the interpreter
# pre-commit's `language: python` hooks need when pre-commit is called by its path).
MINIMAL_PATH = os.pathsep.join(d for d in ("/usr/local/bin", "/usr/bin", "/bin")
                               if Path(d).is_dir() and Path(d).resolve() != BIN.resolve())


def clean_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """A shell without the environment, as `env -i PATH=/usr/bin:/bin` gives: no variable of
    this process (no VIRTUAL_ENV, no PIP_*, no PYTHONPATH), a PATH of system folders only, so
    nothing on it holds remelink's console scripts (pre-commit is called by its path)."""
    env = {"PATH": MINIMAL_PATH, "HOME": str(tmp_path / "home"), "LANG": "C.UTF-8",
           "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org", **extra}
    (tmp_path / "home").mkdir(exist_ok=True)
    return env


def sh(argv: list[str], cwd: Path, env: dict[str, str], check: bool = True,
       prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([*prefix, *argv], cwd=cwd, env=env, capture_output=True, text=True,
                          check=False, timeout=300)
    if check and proc.returncode:
        raise AssertionError(f"{argv} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return proc


def make_vault(tmp_path: Path, env: dict[str, str], config: str) -> Path:
    vault = tmp_path / "vault"
    sh([str(BIN / "remelink"), "init", str(vault)], tmp_path, env)
    for rel, text in {
        "daily/2026-03-02/standup.md": "# Standup\n\nWe agreed on fifteen minutes.\n",
        "daily/2026-03-23/standup.md": "# Standup\n\nNothing new.\n",
        "digest/procedure/standup-format.md": CITING_NODE,
    }.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    (vault / ".pre-commit-config.yaml").write_text(config, encoding="utf-8")
    sh(["git", "init", "-q", "-b", "main"], vault, env)
    return vault


def commit(vault: Path, env: dict[str, str],
           prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    return sh(["git", "commit", "-q", "-m", "change"], vault, env, check=False, prefix=prefix)


def check_commits(vault: Path, env: dict[str, str], prefix: tuple[str, ...] = ()) -> None:
    """The scenario of the issue, through `git commit` with the hook installed."""
    sh([str(BIN / "pre-commit"), "install"], vault, env, prefix=prefix)
    sh(["git", "add", "-A"], vault, env)
    first = commit(vault, env, prefix)
    assert first.returncode == 0, first.stdout + first.stderr

    # A rename of the cited note: caught, with the new name as the hint.
    sh(["git", "mv", "daily/2026-03-02/standup.md", "daily/2026-03-02/standup-renamed.md"],
       vault, env)
    renamed = commit(vault, env, prefix)
    assert renamed.returncode == 1, renamed.stdout + renamed.stderr
    assert ("digest/procedure/standup-format.md:9:26: error broken-link "
            "[[daily/2026-03-02/standup.md]]: target does not exist (did you mean "
            "daily/2026-03-02/standup-renamed.md? the commit renames it)") in \
        renamed.stdout + renamed.stderr
    sh(["git", "mv", "daily/2026-03-02/standup-renamed.md", "daily/2026-03-02/standup.md"],
       vault, env)

    # A deletion alone passes no markdown file to the hook: still caught.
    sh(["git", "rm", "-q", "daily/2026-03-02/standup.md"], vault, env)
    deleted = commit(vault, env, prefix)
    assert deleted.returncode == 1, deleted.stdout + deleted.stderr
    assert "[[daily/2026-03-02/standup.md]]: target does not exist (the commit deletes it" \
        in deleted.stdout + deleted.stderr
    sh(["git", "reset", "-q", "--hard"], vault, env)

    # The rename with the link updated in the same commit: accepted.
    sh(["git", "mv", "daily/2026-03-02/standup.md", "daily/2026-03-02/standup-renamed.md"],
       vault, env)
    node = vault / "digest/procedure/standup-format.md"
    node.write_text(CITING_NODE.replace("standup.md]]", "standup-renamed.md]]"),
                    encoding="utf-8")
    sh(["git", "add", "-A"], vault, env)
    fixed = commit(vault, env, prefix)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert sh(["git", "status", "--porcelain"], vault, env).stdout == ""


INSTALLED = "/home/me/.venv/bin/"  # where the README's local hook says remelink is installed


def test_the_local_system_hook_catches_renames_and_deletions(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    assert shutil.which("remelink-lint-links", path=env["PATH"]) is None
    assert shutil.which("remelink", path=env["PATH"]) is None
    snippet = readme_snippet("repo: local")
    assert f"entry: {INSTALLED}remelink-lint-links --staged" in snippet
    vault = make_vault(tmp_path, env, snippet.replace(INSTALLED, f"{BIN}/"))
    check_commits(vault, env)


# -- the remote snippet, language: python, offline ------------------------------------------

def _runtime_distributions() -> list[str]:
    """remelink's runtime dependencies, transitively (no extras), as installed here."""
    from packaging.requirements import Requirement

    seen: set[str] = set()
    todo = ["remelink"]
    while todo:
        for text in md.distribution(todo.pop()).requires or []:
            req = Requirement(text)
            if req.marker is not None and not req.marker.evaluate({"extra": ""}):
                continue
            name = req.name.lower()
            if name not in seen:
                seen.add(name)
                todo.append(name)
    return sorted(seen)


def repack(name: str, out: Path) -> Path:
    """A wheel of the installed distribution `name`, from the files its RECORD lists (scripts
    outside site-packages are left out: pip writes them again from entry_points.txt)."""
    dist = md.distribution(name)
    files = [f for f in dist.files or [] if not str(f).startswith("..")
             and "__pycache__" not in f.parts and not str(f).endswith(".pyc")]
    info = next(f.parts[0] for f in files if str(f).endswith(".dist-info/METADATA"))
    tags = [line.split(":", 1)[1].strip().split("-")
            for line in (dist.read_text("WHEEL") or "").splitlines() if line.startswith("Tag:")]
    # The compressed tag set of the file name (py2.py3-none-any): pip expands it again.
    tag = "-".join(".".join(dict.fromkeys(t[k] for t in tags)) for k in range(3))
    stem = re.sub(r"[-_.]+", "_", dist.metadata["Name"])
    path = out / f"{stem}-{dist.version}-{tag}.whl"
    record: list[str] = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as wheel:
        for f in files:
            rel = f.as_posix()
            if rel.startswith(info + "/") and f.name in ("RECORD", "INSTALLER", "REQUESTED",
                                                          "direct_url.json"):
                continue
            data = Path(f.locate()).read_bytes()
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            wheel.writestr(rel, data)
            record.append(f"{rel},sha256={digest.decode()},{len(data)}")
        record.append(f"{info}/RECORD,,")
        wheel.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    return path


def wheelhouse(out: Path) -> Path:
    from virtualenv.seed.wheels.embed import get_embed_wheel

    out.mkdir()
    setuptools = get_embed_wheel("setuptools", f"{sys.version_info[0]}.{sys.version_info[1]}")
    assert setuptools is not None, "virtualenv bundles no setuptools for this Python"
    shutil.copy(setuptools.path, out)
    for name in _runtime_distributions():
        repack(name, out)
    return out


def hook_repository(tmp_path: Path, env: dict[str, str]) -> Path:
    """This project's files as a git repository of their own (a clone would miss uncommitted
    work; the hook needs only what `pip install .` builds)."""
    repo = tmp_path / "remelink-hooks"
    repo.mkdir()
    for name in ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml"):
        shutil.copy(ROOT / name, repo / name)
    shutil.copytree(ROOT / "remelink", repo / "remelink",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    sh(["git", "init", "-q", "-b", "main"], repo, env)
    sh(["git", "add", "-A"], repo, env)
    sh(["git", "commit", "-q", "-m", "hooks"], repo, env)
    sh(["git", "tag", RELEASE_TAG], repo, env)  # the release tag convention: v<version>
    return repo


RELEASE_TAG = f"v{__version__}"


def _no_network_prefix() -> tuple[str, ...]:
    """`unshare -n` (a network namespace with only loopback) when the machine allows it."""
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "-n", "true"], capture_output=True).returncode == 0:
        return (unshare, "-n")
    return ()


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_remote_python_hook_works_offline_from_a_wheelhouse(tmp_path: Path) -> None:
    env = clean_env(tmp_path, PIP_NO_INDEX="1", PIP_CONFIG_FILE=os.devnull,
                    PIP_DISABLE_PIP_VERSION_CHECK="1")
    env["PIP_FIND_LINKS"] = str(wheelhouse(tmp_path / "wheels"))
    repo = hook_repository(tmp_path, env)
    snippet = readme_snippet("rev:")
    url = re.search(r"repo: (\S+)", snippet)
    assert url is not None
    vault = make_vault(tmp_path, env, snippet.replace(url.group(1), str(repo)))
    offline = _no_network_prefix()
    check_commits(vault, env, prefix=offline)


def test_the_readme_names_the_release_tag_of_this_version() -> None:
    rev = re.search(r"rev: (\S+)", readme_snippet("rev:"))
    assert rev is not None and rev.group(1) == RELEASE_TAG
