"""The package's modules import each other without circles, and no module takes another module's private name."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

PACKAGE = "airflow_lineage_governance"
ROOT = Path(__file__).resolve().parents[1] / PACKAGE


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in ROOT.rglob("*.py")}


def _imports(path: Path) -> list[tuple[str, list[str]]]:
    """Returns each module of the package `path` imports (at any depth, also inside functions), with the names
    it takes from it."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names if alias.name.startswith(PACKAGE)]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(PACKAGE):
            modules = [
                f"{node.module}.{alias.name}" for alias in node.names if f"{node.module}.{alias.name}" in MODULES
            ]
            names = [alias.name for alias in node.names if f"{node.module}.{alias.name}" not in MODULES]
            found += [(module, []) for module in modules]
            if names:
                found.append((node.module, names))
    return found


def _graph() -> nx.DiGraph:
    graph = nx.DiGraph()
    for name, path in MODULES.items():
        graph.add_node(name)
        for imported, _ in _imports(path):
            if imported in MODULES and imported != name:
                graph.add_edge(name, imported)
    return graph


def test_no_two_modules_import_each_other_through_any_path():
    circles = [sorted(component) for component in nx.strongly_connected_components(_graph()) if len(component) > 1]
    assert circles == []


def test_no_module_imports_another_modules_private_name():
    private = sorted(
        f"{name} takes {imported}.{taken}"
        for name, path in MODULES.items()
        for imported, names in _imports(path)
        for taken in names
        if taken.startswith("_") and not taken.startswith("__") and imported != name
    )
    assert private == []


def test_the_check_sees_a_circle():
    # The graph is read from the source text: one import back from binding to engine would close a circle.
    assert any(
        module == "airflow_lineage_governance.lineage.binding" for module, _ in _imports(ROOT / "lineage" / "engine.py")
    )
    graph = _graph()
    graph.add_edge("airflow_lineage_governance.lineage.binding", "airflow_lineage_governance.lineage.engine")
    assert any(len(c) > 1 for c in nx.strongly_connected_components(graph))
