"""Arrows run down (STYLE habit 11): no two modules of `remelink/` import each other, directly
or through others. Read statically from the source: every `import` counts, also one inside a
function (a lazy import is still an arrow) or under `if TYPE_CHECKING:`."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "remelink"


def module_names(package: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package (a package is its
    `__init__.py`)."""
    out: dict[str, Path] = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _owner(name: str, modules: dict[str, Path]) -> str | None:
    """The module of `modules` that `name` (a module or a name inside one) belongs to."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def import_graph(package: Path) -> dict[str, dict[str, int]]:
    """module -> {imported module of the package: line of the first import}."""
    modules = module_names(package)
    graph: dict[str, dict[str, int]] = {}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        here = name if is_package else name.rpartition(".")[0]
        arrows: dict[str, int] = {}
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = here.split(".")
                    parts = parts[:len(parts) - (node.level - 1)]
                    base = ".".join([*parts, *([node.module] if node.module else [])])
                # `from pkg import mod` imports the module `pkg.mod`; `from mod import name`
                # imports `mod`
                targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                           for alias in node.names]
            for target in targets:
                owner = _owner(target, modules)
                if owner is not None and owner != name:
                    arrows.setdefault(owner, node.lineno)
        graph[name] = arrows
    return graph


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, {})))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def describe(graph: dict[str, dict[str, int]], component: list[str]) -> str:
    members = set(component)
    arrows = [f"{a} -> {b} (line {line})" for a in component
              for b, line in sorted(graph[a].items()) if b in members]
    return "; ".join(arrows)


def test_no_import_cycle_inside_remelink() -> None:
    graph = import_graph(PACKAGE)
    assert len(graph) > 50  # the walk found the package
    found = cycles(graph)
    assert not found, "import cycles (give the shared piece one home below both):\n" + \
        "\n".join(describe(graph, c) for c in found)


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "pkg"
    for rel, text in {"__init__.py": "", **files}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_the_check_sees_lazy_type_checking_and_relative_imports(tmp_path: Path) -> None:
    """The detector itself: a cycle closed only by a function-local import, one closed only
    under TYPE_CHECKING, and one through a relative import and a third module are each found;
    a tree whose arrows all run down has none."""
    lazy = _package(tmp_path / "lazy", {
        "a.py": "from pkg import b\n",
        "b.py": "def f():\n    from pkg.a import thing\n    return thing\n",
    })
    typing_only = _package(tmp_path / "typing", {
        "sub/__init__.py": "",
        "sub/a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                    "    from pkg.sub.b import B\n",
        "sub/b.py": "from pkg.sub import a\n",
    })
    relative = _package(tmp_path / "relative", {
        "x.py": "from .y import f\n",
        "y.py": "import pkg.z\n",
        "z.py": "from . import x\n",
    })
    down = _package(tmp_path / "down", {
        "top.py": "from pkg import middle\nfrom pkg.bottom import f\n",
        "middle.py": "def g():\n    from pkg import bottom\n",
        "bottom.py": "import os\n",
    })
    assert cycles(import_graph(lazy)) == [["pkg.a", "pkg.b"]]
    assert cycles(import_graph(typing_only)) == [["pkg.sub.a", "pkg.sub.b"]]
    assert cycles(import_graph(relative)) == [["pkg.x", "pkg.y", "pkg.z"]]
    assert cycles(import_graph(down)) == []
