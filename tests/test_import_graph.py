"""No import cycle anywhere in ``src/physid`` (issue 25 item 2).

The graph is read from the source with :mod:`ast`, every ``import`` statement counted wherever it
stands: at module level, inside functions (deferred imports) and under ``if TYPE_CHECKING``. A
deferred import does not fail at import time, but a cycle through it still means two modules
that each need the other, which the layers of docs/architecture.md forbid. An edge goes to the
module a name is defined in when the import names a submodule (``from physid import inertia``),
otherwise to the module imported from.
"""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import REPO

SOURCE = REPO / "src"


def _modules() -> dict[str, Path]:
    modules = {}
    for path in sorted((SOURCE / "physid").rglob("*.py")):
        parts = list(path.relative_to(SOURCE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def _imported(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The physid modules ``module`` imports anywhere in its source."""

    def known(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    targets = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            names = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                for alias in node.names
            ]
        else:
            continue
        targets |= {known(name) for name in names if name.split(".")[0] == "physid"}
    return {t for t in targets if t is not None and t != module}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
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


def test_the_checker_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_in_physid():
    modules = _modules()
    assert "physid.offline.pipeline" in modules and "physid.cli" in modules
    graph = {module: _imported(module, path, modules) for module, path in modules.items()}
    assert "physid.body.inertia" in graph["physid.body.expeig"]  # edges are read
    assert _cycles(graph) == []
