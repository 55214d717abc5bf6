"""The package layout stays readable: layers import only downwards (the import-linter contracts in
pyproject.toml), no module imports itself through a circle, no module grows past 300 lines, and every
subpackage says what it owns and what it may import."""

from __future__ import annotations

import ast
from pathlib import Path

import grimp
import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "model_props"
MAX_LINES = 300


def _graph() -> nx.DiGraph:
    imports = grimp.build_graph("model_props")
    graph = nx.DiGraph()
    for module in imports.modules:
        graph.add_node(module)
        graph.add_edges_from((module, imported) for imported in imports.find_modules_directly_imported_by(module))
    return graph


def test_import_contracts_are_kept():
    from importlinter.cli import lint_imports

    assert lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True) == 0, (
        "an import runs from a lower layer to a higher one: see `lint-imports` and [tool.importlinter] in pyproject.toml"
    )


def test_there_are_no_import_circles():
    graph = _graph()
    circles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    circles += [[m] for m in graph if graph.has_edge(m, m)]
    assert circles == [], f"modules that import each other (directly or through others): {circles}"


def test_the_circle_check_finds_a_circle():
    graph = nx.DiGraph([("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")])
    assert [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1] == [["a", "b", "c"]]


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_module_is_longer_than_300_lines(path):
    assert len(path.read_text().splitlines()) <= MAX_LINES


@pytest.mark.parametrize("init", sorted(p for p in PACKAGE.glob("*/__init__.py")), ids=lambda p: p.parent.name)
def test_every_subpackage_says_what_it_owns_and_may_import(init):
    doc = ast.get_docstring(ast.parse(init.read_text())) or ""
    assert "May import" in doc, f"{init.parent.name}/__init__.py: say what it owns and what it may import"
