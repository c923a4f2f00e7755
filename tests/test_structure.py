"""The package's shape: no module imports another in a cycle, and nothing imports the CLI."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "talker_cli"


def imports() -> dict[str, set[str]]:
    """Each module -> the package modules it imports, at the top or inside functions."""
    graph = {}
    for path in PACKAGE.glob("*.py"):
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                if node.module:
                    found.add(node.module.split(".")[0])
                else:
                    found |= {alias.name for alias in node.names}
        graph[path.stem] = found & {p.stem for p in PACKAGE.glob("*.py")}
    return graph


def test_the_import_graph_has_no_cycle():
    graph, state = imports(), {}

    def visit(module, path):
        if state.get(module) == "open":
            raise AssertionError("import cycle: " + " -> ".join(path + [module]))
        if state.get(module) == "done":
            return
        state[module] = "open"
        for other in sorted(graph[module]):
            visit(other, path + [module])
        state[module] = "done"

    for module in sorted(graph):
        visit(module, [])


def test_only_the_entry_point_imports_the_cli():
    assert {m for m, deps in imports().items() if "cli" in deps} == {"__main__"}
