"""Benchmark of the layout (issue 50): the walk of the model store from ``check_claim`` to a claim's verdict.

One claim test of the bundled suite (``pytest --pyargs model_props.suite -k TEST``) on the tiny profile
(``property_tests/library/tiny.toml``, copied into a scratch recipes folder, its ``[defaults] steps`` raised to
``--steps`` so that its references learn above twice chance: at its own 16 steps every claim is skipped for an
accuracy below twice chance and no verdict is reached) runs twice on one scratch cache: first in a subprocess,
which trains and measures what the test reads, then in this process (``pytest.main``) with
:func:`sys.setprofile` set around the test's call phase (``pytest_runtest_call``: the test body, i.e.
``assert_claim`` -> ``check_claim`` -> the verdict; not the fixtures' set-up). The walk is defined as:

- a **stay**: a Python call event of a function defined in a ``model_props`` file whose frame locals at the call
  (its arguments and closure variables) hold the session's ``ModelStore`` (the test's ``model_store`` fixture),
  directly (``self`` included) or as an attribute of one of them (``vars(x)``, one level: a gatherer's
  ``self.store``); a generator counts once, at its first call, not at each resumption; a list, dict or set
  comprehension is no call (Python 3.12 inlines them); main thread only;
- its **package**: ``model_props.<first component>`` of the function's module (``model_props.cli`` for cli.py);
- a **move**: two consecutive stays in different packages; the **route**: the package of the first stay and of
  every move;
- a **climb**: a move into a package on a higher layer of the layer contract (the first contract of
  ``[tool.importlinter]`` in pyproject.toml, top layer first) than the package it leaves.

The same counts are taken of the **call tree**: every call of a ``model_props`` function in the call phase, whether
or not it holds the store (the judge, the statistics and the reporting the walk hands its results to). The default
test is a ResNet's: the tiny ViT stays below twice chance at 400 steps (0.13), the tiny ResNet does not (0.74).

Prints the counts and the route, and writes the entry ``--entry`` of ``benchmarks/results/layout_walk.json``
(the counts, the route, the stays as ``module.qualname``, the test's outcome, and the stamp with the commit),
keeping the file's other entries (``before`` and ``after`` a change of layout).

    python benchmarks/layout_walk.py [--test "test_claim and park2022.conv-mlp-highpass-resnet"] [--entry after]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
import tomllib
from provenance import REPOSITORY, record

import model_props

OUT = Path(__file__).resolve().parent / "results" / "layout_walk.json"
TINY = REPOSITORY / "property_tests" / "library" / "tiny.toml"
PACKAGE_DIR = Path(model_props.__file__).resolve().parent
INLINED = ("<listcomp>", "<dictcomp>", "<setcomp>")  # comprehensions: no frame of their own from Python 3.12 on
GENERATOR_FLAGS = 0x20 | 0x80 | 0x200  # CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR


def layers(pyproject: Path = REPOSITORY / "pyproject.toml") -> dict[str, int]:
    """Package -> its layer's index in the layer contract, 0 for the top layer."""
    contracts = tomllib.loads(pyproject.read_text())["tool"]["importlinter"]["contracts"]
    contract = next(c for c in contracts if c["type"] == "layers" and "containers" not in c)
    return {name.strip(): i for i, layer in enumerate(contract["layers"]) for name in re.split(r"[|:]", layer)}


def package_of(path: Path) -> str:
    """``model_props.<first component>`` of a file of the package (``model_props`` for its ``__init__.py``)."""
    parts = path.relative_to(PACKAGE_DIR).with_suffix("").parts
    return "model_props" if parts == ("__init__",) else f"model_props.{parts[0]}"


def holds(value: Any, store: object) -> bool:
    """Whether ``value`` is the store or has it as an attribute (one level)."""
    if value is store:
        return True
    try:
        return any(v is store for v in vars(value).values())
    except TypeError:  # no __dict__
        return False


Call = tuple[str, str, str]  # (package, file, module.qualname)


def walk_summary(calls: list[Call], layer_of: dict[str, int]) -> dict[str, Any]:
    """Counts of a sequence of calls: calls, distinct files, moves, climbs; the route; the pairs of packages moved
    between most often (either way)."""
    packages = [p.removeprefix("model_props.") for p, _, _ in calls]
    route = [p for i, p in enumerate(packages) if i == 0 or p != packages[i - 1]]
    moves = list(zip(route, route[1:]))
    layer = {name.removeprefix("model_props."): i for name, i in layer_of.items()}
    climbs = [(a, b) for a, b in moves if a in layer and b in layer and layer[b] < layer[a]]
    bounces = Counter("<->".join(sorted(move)) for move in moves)
    return {
        "calls": len(calls),
        "files": len({f for _, f, _ in calls}),
        "moves": len(moves),
        "climbs": len(climbs),
        "bounces": dict(bounces.most_common(5)),
        "route": route,
    }


class Walk:
    """The stays of one test's call phase, and every call of a ``model_props`` function in it (the call tree
    beneath the test), recorded by a profile function (see the module docstring)."""

    def __init__(self) -> None:
        self.store: object | None = None
        self.stays: list[Call] = []
        self.tree: list[Call] = []
        self._generators: set[int] = set()
        self._frames: list[FrameType] = []  # keeps the generator frames alive, so that their ids are not reused

    def profile(self, frame: FrameType, event: str, arg: Any) -> None:
        if event != "call" or self.store is None:
            return
        code = frame.f_code
        path = Path(code.co_filename)
        if not path.is_relative_to(PACKAGE_DIR) or code.co_name in INLINED:
            return
        if code.co_flags & GENERATOR_FLAGS:
            if id(frame) in self._generators:
                return
            self._generators.add(id(frame))
            self._frames.append(frame)
        call = (
            package_of(path),
            path.relative_to(PACKAGE_DIR).as_posix(),
            f"{frame.f_globals.get('__name__')}.{code.co_qualname}",
        )
        self.tree.append(call)
        if any(holds(v, self.store) for v in frame.f_locals.values()):
            self.stays.append(call)

    @contextmanager
    def recording(self, store: object) -> Iterator[None]:
        self.store = store
        sys.setprofile(self.profile)
        try:
            yield
        finally:
            sys.setprofile(None)
            self.store = None

    def summary(self, layer_of: dict[str, int]) -> dict[str, Any]:
        stays = walk_summary(self.stays, layer_of)
        return {
            "stays": stays.pop("calls"),
            **stays,
            "stay_calls": [q for _, _, q in self.stays],
            "call_tree": {k: v for k, v in walk_summary(self.tree, layer_of).items() if k != "route"},
        }


class _Recorder:
    """The pytest plugin that profiles the selected test's call phase and keeps its outcome."""

    def __init__(self, walk: Walk) -> None:
        self.walk = walk
        self.outcomes: list[str] = []

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Iterator[None]:
        with self.walk.recording(item.funcargs["model_store"]):  # type: ignore[attr-defined]
            yield

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call" or report.outcome != "passed":
            self.outcomes.append(f"{report.nodeid}: {report.when} {report.outcome}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--test", default="test_claim and park2022.conv-mlp-highpass-resnet", help="pytest -k")
    parser.add_argument("--steps", type=int, default=400, help="training steps of the tiny profile's recipes")
    parser.add_argument("--entry", default="walk", help="the entry of the results file to write")
    parser.add_argument("--cache", type=Path, help="a cache folder to keep (default: a scratch one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="layout-walk-") as scratch:
        folder = Path(scratch)
        recipes, cache = folder / "recipes", args.cache or folder / "cache"
        recipes.mkdir()
        tiny = re.sub(r"(?m)^steps = \d+$", f"steps = {args.steps}", TINY.read_text(), count=1)
        (recipes / "tiny.toml").write_text(tiny)
        options = ["--pyargs", "model_props.suite", "-k", args.test, "-p", "no:cacheprovider", "-q",
                   f"--claims-recipes={recipes}", "--claims-profile=tiny", f"--claims-cache={cache}"]  # fmt: skip
        env = {**os.environ, "MODEL_PROPS_CACHE": str(cache)}
        warm = subprocess.run([sys.executable, "-m", "pytest", *options], cwd=folder, env=env, capture_output=True)
        print(f"warm-up run: exit {warm.returncode}", file=sys.stderr)
        walk = Walk()
        recorder = _Recorder(walk)
        os.chdir(folder)
        os.environ["MODEL_PROPS_CACHE"] = str(cache)
        exit_code = pytest.main(options, plugins=[recorder])
        os.chdir(REPOSITORY)
        shutil.rmtree(folder / "reports", ignore_errors=True)
    result = walk.summary(layers()) | {"test": args.test, "steps": args.steps, "outcome": recorder.outcomes,
                                       "exit": int(exit_code)}  # fmt: skip
    print(f"{result['stays']} stays in {result['files']} files, {result['moves']} moves between packages, "
          f"{result['climbs']} climbs; outcome: {result['outcome']}")  # fmt: skip
    print("route: " + " > ".join(result["route"]))
    tree = result["call_tree"]
    print(
        f"call tree: {tree['calls']} calls in {tree['files']} files, {tree['moves']} moves, {tree['climbs']} climbs; "
        f"most moved between: {tree['bounces']}"
    )
    data = json.loads(OUT.read_text()) if OUT.exists() else {}
    data[args.entry] = result | {"provenance": record(__file__, runs=["model_props.plugin", "model_props.suite"])}
    OUT.write_text(json.dumps(data, indent=1) + "\n")


if __name__ == "__main__":
    main()
