"""The package layout stays readable: layers import only downwards (the import-linter contracts in
pyproject.toml, whose layers name every subpackage), no module imports itself through a circle, no module grows past
300 lines (the claim catalogue's paper modules, which are data, excepted), every subpackage says what it owns and what
it may import, and no module imports another's private name."""

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


def _unplaced(config: dict) -> set[str]:
    """The subpackages of model_props that no layer of the ``[tool.importlinter]`` layers contract names."""
    (layers,) = [
        c["layers"] for c in config["tool"]["importlinter"]["contracts"] if "layers" in c and "containers" not in c
    ]
    placed = {name.strip() for layer in layers for name in layer.split("|")}
    return {f"model_props.{p.parent.name}" for p in PACKAGE.glob("*/__init__.py")} - placed


def test_the_layers_contract_places_every_subpackage():
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert _unplaced(config) == set(), "subpackages that no layer names, so that no contract checks their imports"
    top = config["tool"]["importlinter"]["contracts"][0]["layers"]
    top[0] = top[0].replace(" | model_props.mutation", "")
    assert _unplaced(config) == {"model_props.mutation"}  # a room left out of the contract is found


def test_there_are_no_import_circles():
    graph = _graph()
    circles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    circles += [[m] for m in graph if graph.has_edge(m, m)]
    assert circles == [], f"modules that import each other (directly or through others): {circles}"


def test_the_circle_check_finds_a_circle():
    graph = nx.DiGraph([("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")])
    assert [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1] == [["a", "b", "c"]]


CATALOGUE_CODE = {"__init__.py", "base.py", "controls.py", "unit_statistics.py"}  # claims/: code, not a paper's data


def _bounded(path: Path) -> bool:
    """Whether the size bound applies: every module but the claim catalogue's paper modules (data: a paper's claims
    and their statistics, split by topic where a paper has several, never by length)."""
    return not (path.parent.name == "claims" and path.name not in CATALOGUE_CODE)


@pytest.mark.parametrize("path", sorted(p for p in PACKAGE.rglob("*.py") if _bounded(p)),
                         ids=lambda p: p.relative_to(ROOT).as_posix())  # fmt: skip
def test_no_module_is_longer_than_300_lines(path):
    assert len(path.read_text().splitlines()) <= MAX_LINES


@pytest.mark.parametrize("init", sorted(p for p in PACKAGE.glob("*/__init__.py")), ids=lambda p: p.parent.name)
def test_every_subpackage_says_what_it_owns_and_may_import(init):
    doc = ast.get_docstring(ast.parse(init.read_text())) or ""
    assert "May import" in doc, f"{init.parent.name}/__init__.py: say what it owns and what it may import"


def private_imports(root: Path) -> set[tuple[str, str]]:
    """(module path, name) for each private name (``_x``, not a dunder) a module under ``root`` imports."""
    found = set()
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module != "__future__":
                found |= {(path.relative_to(root.parent).as_posix(), a.name) for a in node.names
                          if a.name.startswith("_") and not a.name.startswith("__")}  # fmt: skip
    return found


def test_no_module_imports_another_modules_private_name():
    """A helper another module needs is public in the module that owns it (issue 50)."""
    assert private_imports(PACKAGE) == set()


def test_the_private_import_check_finds_one(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "a.py").write_text("from __future__ import annotations\n\nfrom .b import __all__, _helper, public\n")
    assert private_imports(package) == {("pkg/a.py", "_helper")}
