"""Source hashes for cache keys, taken from the import closure of the code that computed an entry.

A cache entry is valid only while the code that produced it is unchanged. Instead of a hand-kept list of
files (which drifts: a list that forgot the module the anatomy reads its evidence from kept stale unit
reports), :func:`source_hash` follows imports. From each entry module it parses every import of a module of
this package, at module level and inside functions, absolute and relative, and follows them transitively;
importing ``a.b.c`` also runs ``a/__init__.py`` and ``a/b/__init__.py``, so those enter the closure too.
Imports under ``if TYPE_CHECKING:`` never run and are left out. The hash covers the files' paths and code in
sorted order plus the installed versions of torch, timm and numpy. The code is the syntax tree without its
docstrings (:func:`code_of`): comments, docstrings and formatting never invalidate a cache, a changed line of code
always does.

These hashes key local caches (trained models, measured reports), where being conservative is right. A committed
seed study is judged by behaviour instead: its canaries (:mod:`model_props.verdicts.canaries`).

A module that computes no cached value (it moves or verifies bytes, words or versions: the entry protocol,
file locks, error messages, provenance) says so with a module-level ``__not_in_cache_keys__ = "<why>"``; a
cache key's closure leaves it out and does not follow its imports, so changing how entries are stored or how
errors read invalidates no cache and no committed seed study. Leaving a module out can only stop a change to it
from invalidating; a test checks that such a module imports only others of its kind, so no computing code hides
behind one. The executor's check that workers run the same source hashes every module (``whole=True``).

The walk is static (:mod:`ast`), so hashing imports nothing, and an entry module may sit in a layer above
the code that calls the hash (the measurement cache names the mutants' module without importing it).
"""

from __future__ import annotations

import ast
import functools
import hashlib
from importlib import metadata
from pathlib import Path

__all__ = [
    "PACKAGE",
    "ROOT",
    "HASHED_VERSIONS",
    "NOT_IN_CACHE_KEYS",
    "import_closure",
    "not_in_cache_keys",
    "code_of",
    "package_modules",
    "source_hash",
]

__not_in_cache_keys__ = "hashes sources; computes no cached value"

PACKAGE = "model_props"
HASHED_VERSIONS = ("torch", "timm", "numpy")  # libraries whose kernels and defaults shape a trained model
NOT_IN_CACHE_KEYS = "__not_in_cache_keys__"  # the module-level name by which a module leaves cache keys


ROOT = Path(__file__).resolve().parents[1]  # the package's folder


def _file(module: str, root: Path) -> Path | None:
    """The source file of a module of this package (``__init__.py`` for a package), None if there is none."""
    parts = module.split(".")
    if parts[0] != PACKAGE:
        return None
    base = root.joinpath(*parts[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def package_modules(root: Path = ROOT) -> tuple[str, ...]:
    """The name of every module of this package (a package by its ``__init__``), sorted."""
    names = (p.relative_to(root.parent).with_suffix("").as_posix().replace("/", ".") for p in root.rglob("*.py"))
    return tuple(sorted(n.removesuffix(".__init__") for n in names))


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    """Names of the modules an AST imports, relative imports resolved against ``module``."""
    found: set[str] = set()
    package = module if is_package else module.rpartition(".")[0]

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)  # kept only where a module of that name exists
        for node_child in ast.iter_child_nodes(node):
            visit(node_child)

    visit(tree)
    return found


def _with_parents(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


def not_in_cache_keys(tree: ast.Module) -> bool:
    """Whether a module's AST assigns :data:`NOT_IN_CACHE_KEYS` a non-empty reason at module level."""
    return any(
        isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == NOT_IN_CACHE_KEYS for t in node.targets)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
        and bool(node.value.value.strip())
        for node in tree.body
    )


def _without_docstrings(tree: ast.Module) -> ast.Module:
    """``tree`` with the docstring of the module and of every class and function removed (in place)."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                node.body = node.body[1:] or [ast.Pass()]
    return tree


@functools.lru_cache(maxsize=4096)
def code_of(source: bytes, filename: str = "<source>") -> bytes:
    """What a source hash reads of a module: its syntax tree without docstrings (``ast.dump``, no line numbers), so
    that a comment, a docstring or a reflow changes nothing and any change to what runs changes it."""
    return ast.dump(_without_docstrings(ast.parse(source, filename=filename))).encode()


@functools.lru_cache(maxsize=4096)
def _read(source: bytes, filename: str, module: str, is_package: bool) -> tuple[bool, frozenset[str]]:
    """(whether the module leaves cache keys, the modules it imports) of a module's source: parsed once per content,
    so that hashing closures that share most of their files (every report kind, copies edited by tests) parses
    each file once."""
    tree = ast.parse(source, filename=filename)
    return not_in_cache_keys(tree), frozenset(_imports(tree, module, is_package))


@functools.cache
def import_closure(*entries: str, root: Path = ROOT, whole: bool = False, within: str | None = None) -> tuple[str, ...]:
    """Every module of this package that importing ``entries`` may run, sorted by name (``root``: the package's
    folder, another copy of it in tests), less the modules that leave cache keys and what only they import,
    unless ``whole``. ``within`` (a subpackage) follows only the imports of modules under it, and not their parent
    packages: e.g. a claim's catalogue module and the catalogue modules it takes helpers from, without the
    catalogue's ``__init__`` that imports every claim."""
    visited: set[str] = set()
    kept: set[str] = set()
    todo = [m for e in entries for m in (_with_parents(e) if within is None else [e])]
    missing = [e for e in entries if _file(e, root) is None]
    if missing:
        raise ValueError(f"no module {missing} in package {PACKAGE!r}")
    while todo:
        module = todo.pop()
        if module in visited:
            continue
        visited.add(module)
        path = _file(module, root)
        if path is None:  # a name imported from a module (not a module), or a module of another package
            continue
        leaves, imports = _read(path.read_bytes(), str(path), module, path.name == "__init__.py")
        if not whole and leaves:
            continue
        kept.add(module)
        for name in imports:
            if within is not None:
                todo.extend([name] if name.startswith(within + ".") and name not in visited else [])
            elif name.split(".")[0] == PACKAGE:
                todo.extend(m for m in _with_parents(name) if m not in visited)
    return tuple(sorted(kept))


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "absent"


@functools.cache
def source_hash(*entries: str, root: Path = ROOT, whole: bool = False, within: str | None = None) -> str:
    """16 hex digits of sha256 over the import closure of ``entries`` (:func:`import_closure`) and the versions of
    :data:`HASHED_VERSIONS`."""
    h = hashlib.sha256("|".join(f"{d}={_version(d)}" for d in HASHED_VERSIONS).encode())
    for module in import_closure(*entries, root=root, whole=whole, within=within):
        path = _file(module, root)
        assert path is not None  # import_closure keeps modules with a file only
        h.update(path.relative_to(root).as_posix().encode() + b"\0")
        h.update(code_of(path.read_bytes(), str(path)))
    return h.hexdigest()[:16]
