"""The code's shape (issue 71): functions a reader holds in one screen, folders of at most 15
modules, one meaning per public class name, no import cycles, and no branching on the text of a
status, message, reason or label. Measured on the source, as a reader meets it."""

from __future__ import annotations

import ast
import collections
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "physid"
MAX_FUNCTION_LINES = 120
MAX_LONG_FUNCTIONS = 12  # functions over LONG_FUNCTION_LINES
LONG_FUNCTION_LINES = 80
MAX_MODULES_PER_FOLDER = 15
# attributes whose text must never be branched on
TEXT_FIELDS = {"status", "message", "reason", "label", "warnings", "suspect", "note", "notes"}


def _modules() -> list[tuple[Path, ast.Module]]:
    return [(path, ast.parse(path.read_text())) for path in sorted(SRC.rglob("*.py"))]


def test_functions_fit_on_a_screen() -> None:
    lengths = []
    for path, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = node.end_lineno - node.lineno + 1
                lengths.append((lines, f"{path.relative_to(SRC)}:{node.lineno} {node.name}"))
    lengths.sort(reverse=True)
    assert lengths[0][0] <= MAX_FUNCTION_LINES, lengths[:5]
    long = [where for lines, where in lengths if lines > LONG_FUNCTION_LINES]
    assert len(long) <= MAX_LONG_FUNCTIONS, long


def test_folders_hold_at_most_fifteen_modules() -> None:
    counts = collections.Counter(path.parent for path in SRC.rglob("*.py"))
    crowded = {str(folder.relative_to(SRC)): n for folder, n in counts.items()
               if n > MAX_MODULES_PER_FOLDER}  # fmt: skip
    assert not crowded, crowded


def test_a_public_class_name_has_one_meaning() -> None:
    defined = collections.defaultdict(list)
    for path, tree in _modules():
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                defined[node.name].append(str(path.relative_to(SRC)))
    twice = {name: where for name, where in defined.items() if len(where) > 1}
    assert not twice, twice


def _imports(path: Path, tree: ast.Module) -> set[str]:
    module = ".".join(("physid", *path.relative_to(SRC).with_suffix("").parts))
    module = module.removesuffix(".__init__")
    found = set()
    for node in tree.body:  # module-level imports only: a deferred import breaks no cycle
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.startswith("physid") and name != module}


def test_no_import_cycles() -> None:
    modules = {}
    for path, tree in _modules():
        name = ".".join(("physid", *path.relative_to(SRC).with_suffix("").parts))
        modules[name.removesuffix(".__init__")] = (path, tree)
    graph = {name: {i for i in _imports(*modules[name]) if i in modules} for name in modules}
    state: dict[str, int] = {}

    def visit(name: str, trail: list[str]) -> None:
        state[name] = 1
        for nxt in graph[name]:
            if state.get(nxt) == 1:
                pytest.fail("import cycle: " + " -> ".join([*trail, name, nxt]))
            if nxt not in state:
                visit(nxt, [*trail, name])
        state[name] = 2

    for name in graph:
        if name not in state:
            visit(name, [])


def _text_of_field(node: ast.AST) -> bool:
    """``x.status`` (or ``.message``, ...) and the like: an attribute that holds a text."""
    return isinstance(node, ast.Attribute) and node.attr in TEXT_FIELDS


def test_nothing_branches_on_the_text_of_a_status_or_message() -> None:
    found = []
    for path, tree in _modules():
        for node in ast.walk(tree):
            # x.status.startswith(...), "..." in x.message, x.reason.endswith(...)
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("startswith", "endswith", "removeprefix", "split")
                    and _text_of_field(node.func.value)):  # fmt: skip
                found.append(f"{path.relative_to(SRC)}:{node.lineno}")
            if (
                isinstance(node, ast.Compare)
                and any(isinstance(op, ast.In | ast.NotIn) for op in node.ops)
                and isinstance(node.left, ast.Constant)
                and isinstance(node.left.value, str)
                and any(_text_of_field(c) for c in node.comparators)
            ):
                found.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert not found, found
