"""Where a benchmark's numbers come from: the stamp every benchmark writes into its results file.

:func:`record` returns ``{"commit", "date", "machine", "versions", "code", "script", "runs", "command"}``:

- ``commit``: ``git rev-parse --short HEAD``, plus ``+dirty`` where the tracked tree differs from it;
  ``$MODEL_PROPS_COMMIT`` names it on a copy of the tree without its history (a lent GPU machine's);
- ``machine`` and ``versions``: :func:`model_props.provenance.provenance` (CPU model, cores, torch threads, device);
- ``code``: :func:`code_hash`, ``ast:`` and 16 hex digits of sha256 over the package modules the benchmark
  exercises: the import closure (:func:`model_props.cache.import_closure`, ``whole=True``) of every ``model_props``
  module the script imports, at module level or inside functions, directly or through another benchmark script it
  imports (``gpu.py`` runs ``run_times.py``'s code), plus ``runs``: the modules it starts in subprocesses (the
  pytest plugin and the suite). Each module's path and syntax tree without docstrings
  (:func:`model_props.cache.source.code_of`, as the local caches' source hashes read it), so that a comment, a
  docstring or a reflow leaves a figure current; not library versions (``versions`` records those), so the hash is
  a function of the tree: ``docs/stamps.py`` compares it with the tree's (:func:`current`) to say when the code
  changed since. A stamp of 16 bare hex digits hashed the modules' bytes (stamps before 2026-12-05), and is compared
  as it was made.

``python benchmarks/provenance.py --restamp`` rewrites every bytes stamp of ``benchmarks/results/`` and of the
quickstart output that is current for the tree as the same tree's ``ast:`` stamp (one that is not stays as it is).
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import re
import shlex
import sys
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Any

from model_props.cache import import_closure
from model_props.cache.source import PACKAGE, code_of
from model_props.cache.source import ROOT as PACKAGE_ROOT
from model_props.provenance import commit as tree_commit
from model_props.provenance import provenance

__all__ = ["PYTEST_RUNS", "code_hash", "commit", "current", "record", "restamp", "script_modules"]

REPOSITORY = Path(__file__).resolve().parent.parent
BENCHMARKS = REPOSITORY / "benchmarks"
PYTEST_RUNS = ("model_props.plugin", "model_props.suite", "model_props.cli")  # a pytest or model-props subprocess


def commit() -> str:
    """The commit the measured tree is at ("+dirty" with uncommitted changes to tracked files,
    :func:`model_props.provenance.commit`), or ``$MODEL_PROPS_COMMIT`` where set."""
    return os.environ.get("MODEL_PROPS_COMMIT") or tree_commit(REPOSITORY) or ""


def _module_file(module: str, root: Path) -> Path | None:
    """The file of a module of the package under ``root`` (its ``__init__.py`` for a package), None if none."""
    base = root.joinpath(*module.split(".")[1:])
    return next((p for p in (base.with_suffix(".py"), base / "__init__.py") if p.is_file()), None)


def script_modules(script: Path, root: Path = PACKAGE_ROOT) -> set[str]:
    """The package modules a benchmark script imports, and those of the benchmark scripts beside it that it
    imports, transitively, less this module's own (``from a.b import c`` names ``a.b``, and ``a.b.c`` where that is
    a module)."""
    found: set[str] = set()
    todo, seen = [script.resolve()], set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for node in ast.walk(ast.parse(path.read_bytes(), filename=str(path))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            for name in names:
                sibling = path.parent / f"{name}.py"
                if name.split(".")[0] == PACKAGE and _module_file(name, root) is not None:
                    found.add(name)
                elif "." not in name and sibling.is_file() and sibling != Path(__file__).resolve():  # not this helper
                    todo.append(sibling)
    return found


def code_hash(script: Path, runs: Sequence[str] = (), root: Path = PACKAGE_ROOT, form: str = "ast") -> str:
    """``ast:`` and 16 hex digits of sha256 over the path and the docstring-free syntax tree of each module in the
    import closure of :func:`script_modules` and ``runs`` (``root``: the package's folder, a copy of it in tests);
    ``form="bytes"``: the bare 16 hex digits over the paths and bytes that stamps before the ``ast:`` form record."""
    h = hashlib.sha256()
    for module in import_closure(*sorted(script_modules(script, root) | set(runs)), root=root, whole=True):
        path = _module_file(module, root)
        assert path is not None  # import_closure keeps modules with a file only
        source = path.read_bytes()
        h.update(path.relative_to(root).as_posix().encode() + b"\0" + (source if form == "bytes" else code_of(source)))
    return h.hexdigest()[:16] if form == "bytes" else "ast:" + h.hexdigest()[:16]


def current(recorded: str, script: Path, runs: Sequence[str] = (), root: Path = PACKAGE_ROOT) -> bool:
    """Whether a stamp's ``code`` is the tree's, hashed in the form it was recorded in (module docstring)."""
    return code_hash(script, runs, root, "ast" if recorded.startswith("ast:") else "bytes") == recorded


def record(
    script: str | Path, device: str = "cpu", runs: Sequence[str] = (), command: str | None = None
) -> dict[str, Any]:
    """The stamp of numbers ``script`` (a benchmark, ``__file__``) measures now on ``device`` (see the module
    docstring); ``command``, the one that re-measures them, defaults to this process's ``python benchmarks/...``."""
    path = Path(script).resolve()
    relative = path.relative_to(REPOSITORY).as_posix()
    return {
        "commit": commit(),
        "date": date.today().isoformat(),
        **provenance(device),
        "code": code_hash(path, runs),
        "script": relative,
        "runs": list(runs),
        "command": command or shlex.join(["python", relative, *sys.argv[1:]]),
    }


def restamp(
    results: Path = BENCHMARKS / "results", quickstart: Path = REPOSITORY / "docs" / "quickstart-output.txt"
) -> list[str]:
    """Rewrite each bytes stamp (of a results file, of its entries, of a quickstart run) that is current for the tree
    as the tree's ``ast:`` stamp, the same code in the newer form, in place (only the hash's text changes); return
    what it rewrote."""
    done: list[str] = []
    for path in sorted(results.glob("*.json")):
        text = path.read_text()
        data, before = json.loads(text), text
        for name, item in [("", data), *((f"[{k}]", v) for k, v in data.items() if isinstance(v, dict))]:
            stamp = item.get("provenance") if isinstance(item.get("provenance"), dict) else {}
            code, script = stamp.get("code"), REPOSITORY / stamp.get("script", "-")
            if isinstance(code, str) and not code.startswith("ast:") and script.is_file():
                if current(code, script, stamp.get("runs", ())):
                    text = text.replace(f'"{code}"', f'"{code_hash(script, stamp.get("runs", ()))}"')
                    done.append(path.name + name)
        if text != before:
            path.write_text(text)
    script = BENCHMARKS / "quickstart.py"

    def header(found: re.Match) -> str:
        code = found.group(1)
        if code.startswith("ast:") or not current(code, script, PYTEST_RUNS):
            return found.group(0)
        done.append(f"{quickstart.name} ({code})")
        return f" | code: {code_hash(script, PYTEST_RUNS)}"

    if quickstart.is_file():
        quickstart.write_text(re.sub(r" \| code: ([\w:]+)$", header, quickstart.read_text(), flags=re.M))
    return done


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Benchmark stamps (module docstring).")
    parser.add_argument("--restamp", action="store_true", help="rewrite current bytes stamps in the ast: form")
    if parser.parse_args().restamp:
        print("\n".join(restamp()) or "no current bytes stamp")
