"""What the seed study's canaries run, and how far they move on one torch thread instead of two.

Two measurements of the first canary seed (:mod:`model_props.study.canaries`), each from a fresh cache:

- **coverage**: the lines of the training, data, model (``zoo``), anatomy and measurement packages (``measurements``,
  its functional core included) that the canary run executes, per package, with ``coverage`` (the ``bench`` extra);
  and the same over the modules of the study's code digest alone (the import closures of the training code and of
  every report kind: what a study's numbers are computed by), with the modules that miss the most lines; and, with
  ``--trace-seed K``, against the lines of that code that building seed K of a study generation executes (the shard
  is built under the tracer, from a fresh cache, with ``seed-study --seed K``): the lines the study runs that no
  canary runs, by module. A seed still to build of a planned generation is written where that command writes it; a
  seed whose shard is committed is built again in a copy of its generation, the committed shard left as it is, and
  the rebuilt estimates are compared with the committed ones (how many statistics came out bit for bit, the largest
  move in seed-to-seed SDs of the study): whether the code of now, on this machine, still builds the study it holds;
- **threads**: the canary run on two torch threads against the committed record (canaries run on one), the largest
  move of any statistic in units of its seed-to-seed SD, and the claims it would stale on the record's machine kind:
  a proxy for what another machine's kernels do to the canaries, since both change the order of float sums.

    python benchmarks/canaries.py     # writes benchmarks/results/canaries.json; docs/verdicts.md quotes it
    python benchmarks/canaries.py --coverage-only   # the coverage entry alone, the threads entry kept with its stamp
    python benchmarks/canaries.py --threads-only    # the threads entry alone, the coverage entry kept with its stamp
    python benchmarks/canaries.py --coverage-only --trace-seed 14   # and builds shard 14 under the tracer (again)
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch
from provenance import record

PACKAGES = ("training", "data", "zoo", "anatomy", "measurements")  # measurements holds its functional core
OUT = Path(__file__).resolve().parent / "results" / "canaries.json"
REPOSITORY = Path(__file__).resolve().parent.parent


def _run(cache: Path) -> dict[str, Any]:
    """The first canary seed from ``cache``, on the torch threads of the moment (the session's canaries use one)."""
    from model_props.config.settings import Settings
    from model_props.study.canaries import canary_settings, load_canaries
    from model_props.study.run import seed_estimates

    canaries = load_canaries("smoke")
    assert canaries is not None
    return seed_estimates(
        canary_settings(Settings(profile="smoke", cache_dir=cache, progress=False)), canaries.seeds[0]
    )


_TRACED = """
import sys
from pathlib import Path
sys.path.insert(0, {here!r})
from canaries import _run
_run(Path(sys.argv[1]))
"""
# model-props itself, behind the guard a spawned Dask worker needs: a spawn imports the parent's main module again
_CLI = """
import sys
from model_props.cli import main
if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
"""
# every process of the run traced (the Dask workers are spawned by multiprocessing), each writing its own data file
_RC = """
[run]
parallel = true
concurrency = multiprocessing, thread
sigterm = true
source = {source}
data_file = {data}
"""


def _executed(
    script: str, args: list[str], tmp: Path, one_thread: bool = True, cwd: Path = REPOSITORY
) -> tuple[dict[str, Any], float]:
    """Coverage's per-file report (``files`` of ``coverage json``) of ``script`` run with ``args`` in ``cwd`` under the
    tracer from interpreter start, so that the lines a module runs when imported count too; on one torch thread (as
    the session's canaries run) or on the threads the command picks itself; and the seconds it took."""
    import model_props

    root = Path(model_props.__file__).parent
    path, data, rc = tmp / "traced.py", tmp / ".coverage", tmp / "coverage.rc"
    path.write_text(script)
    rc.write_text(_RC.format(source=",".join(str(root / p) for p in PACKAGES), data=data))
    env = {**os.environ, "OMP_NUM_THREADS": "1"} if one_thread else None
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "coverage", "run", f"--rcfile={rc}", str(path), *args], check=True, env=env,
                   cwd=cwd)  # fmt: skip
    seconds = time.perf_counter() - start
    report = tmp / "coverage.json"
    for step in (["combine", "-q"], ["json", "-o", str(report)]):
        subprocess.run([sys.executable, "-m", "coverage", *step, f"--rcfile={rc}"], check=True, cwd=tmp,
                       capture_output=True)  # fmt: skip
    return json.loads(report.read_text())["files"], seconds


def trace_seed(seed: int) -> dict[str, Any]:
    """Seed ``seed`` of a study generation built under the tracer (module docstring): ``lines``, the lines of the
    study's code (its digest's modules) it executes, per module path relative to the package; ``seconds``; and, where
    the seed's shard is committed and so was built again in a copy, ``rebuilt`` (:func:`compare_shard`). The build is
    ``model-props seed-study --seed`` with two workers, from a fresh cache."""
    import model_props
    from model_props.config.settings import Settings
    from model_props.study.generation import generations

    planned = generations(Settings(profile="smoke"), REPOSITORY / "fixtures")
    to_build = next((g for g in planned if seed in g.missing), None)
    built = next((g for g in planned if seed in g.shards), None)
    if to_build is None and built is None:
        sys.exit(f"seed {seed} is in no study generation: neither one still to build nor a committed shard")
    root = Path(model_props.__file__).parent
    with tempfile.TemporaryDirectory() as tmp:
        args, cwd = (
            ["seed-study", "--seed", str(seed), "--workers", "2", "--cache", str(Path(tmp) / "cache")],
            REPOSITORY,
        )
        if to_build is None:
            assert built is not None
            # the command reads generations from ./fixtures: a copy of this one without the shard, in a folder of its
            # own, so that the committed shard stays as it is (the study and its canary record are the package's)
            cwd = Path(tmp) / "rebuild"
            copy = cwd / built.path.relative_to(REPOSITORY)
            shutil.copytree(built.path, copy, ignore=shutil.ignore_patterns(f"seed-{seed}.json"))
            args += ["--generation", built.name]
        files, seconds = _executed(_CLI, args, Path(tmp), one_thread=False, cwd=cwd)
        rebuilt = None if to_build else json.loads((copy / f"seed-{seed}.json").read_text())
    digest = _digest_files()
    found: dict[str, Any] = {
        "lines": {str(Path(p).relative_to(root)): files[p]["executed_lines"] for p in files if p in digest},
        "seconds": seconds,
    }
    if rebuilt is not None:
        assert built is not None
        found["rebuilt"] = compare_shard(built.shards[seed]["estimates"], rebuilt["estimates"])
    return found


def compare_shard(committed: dict[str, Any], rebuilt: dict[str, Any]) -> dict[str, Any]:
    """A shard's estimates built again against the committed ones: of the statistics defined in both (every claim
    part's value on every model), how many are bit for bit the same, and the largest move in units of that
    statistic's SD over the committed study's seeds; of the recipes' checkpoint metrics (accuracy and NLL on the
    validation and test splits), how many are the same."""
    from model_props.verdicts.study import load_study

    study = load_study("smoke")
    assert study is not None
    stds = {(cid, part, model): statistics.stdev(present)
            for cid, claim in study.claims.items() for part, p in claim["parts"].items()
            for model, values in p["values"].items()
            if len(present := [v for v in values if v is not None]) > 1}  # fmt: skip
    defined = identical = 0
    moves: list[tuple[float, str]] = []
    for cid, claim in committed["claims"].items():
        for part, values in claim["parts"].items():
            for model, value in values["values"].items():
                again = rebuilt["claims"].get(cid, {}).get("parts", {}).get(part, {}).get("values", {}).get(model)
                if value is None or again is None:
                    continue
                defined += 1
                identical += again == value
                sd = stds.get((cid, part, model), 0.0)
                if again != value:
                    moves.append((abs(again - value) / sd if sd > 0 else float("inf"), f"{cid} {part} {model}"))
    metrics = [(v, rebuilt["recipes"].get(name, {}).get(point, {}).get(k))
               for name, points in committed["recipes"].items() for point, m in points.items()
               for k, v in m.items() if k != "train_seconds"]  # fmt: skip
    largest = max(moves, default=(0.0, ""))
    return {"statistics": defined, "identical": identical, "largest_move_sd": largest[0],
            "largest_move": largest[1] or None, "metrics": len(metrics),
            "metrics_identical": sum(a == b for a, b in metrics)}  # fmt: skip


def measure_coverage(study: tuple[int, dict[str, Any]] | None = None) -> dict[str, Any]:
    """Line coverage of the first canary seed (:func:`_executed`), and, where ``study`` (the seed and what its traced
    shard build found: :func:`trace_seed`) is given, of the lines of the study's code that build ran."""
    import model_props

    root = Path(model_props.__file__).parent
    with tempfile.TemporaryDirectory() as tmp:
        script = _TRACED.format(here=str(Path(__file__).resolve().parent))
        files, seconds = _executed(script, [str(Path(tmp) / "cache")], Path(tmp))
    found: dict[str, Any] = {}
    for package in PACKAGES:
        paths = [str(p) for p in sorted((root / package).rglob("*.py"))]
        summaries = [files[p]["summary"] for p in paths if p in files]
        statements = sum(s["num_statements"] for s in summaries)
        found[package] = {"statements": statements, "executed": sum(s["covered_lines"] for s in summaries)}
    digest = _digest_files()
    within = {p: files[p]["summary"] for p in files if p in digest}
    missed = sorted(within, key=lambda p: -within[p]["missing_lines"])[:12]
    closure = {
        "modules": len(within),
        "statements": sum(s["num_statements"] for s in within.values()),
        "executed": sum(s["covered_lines"] for s in within.values()),
        "most_missed": {str(Path(p).relative_to(root)): within[p]["missing_lines"] for p in missed},
    }
    result = {"seconds_traced": round(seconds, 1), "packages": found, "study_code": closure}
    if study is not None:
        seed, traced = study
        canary = {str(Path(p).relative_to(root)): set(files[p]["executed_lines"]) for p in files if p in digest}
        ran = traced["lines"]
        unseen = {m: sorted(set(lines) - canary.get(m, set())) for m, lines in ran.items()}
        result["study_seed"] = {
            "seed": seed, "seconds_traced": round(traced["seconds"], 1), "lines": sum(len(v) for v in ran.values()),
            "executed": sum(len(set(v) & canary.get(m, set())) for m, v in ran.items()),
            "unseen": {m: lines for m, lines in sorted(unseen.items()) if lines},
        } | ({"rebuilt": traced["rebuilt"]} if "rebuilt" in traced else {})  # fmt: skip
    return result


def _digest_files() -> set[str]:
    """The files of :func:`_digest_modules`, as coverage's report names them."""
    return {importlib.util.find_spec(m).origin for m in _digest_modules()}  # type: ignore[union-attr,misc]


def _digest_modules() -> set[str]:
    """The modules of the six packages in the study's code digest (:func:`~model_props.verdicts.canaries.code_digest`:
    the training code's import closure and every report kind's)."""
    from model_props.cache.source import import_closure
    from model_props.measurements.registry import REPORT_KINDS, code_modules
    from model_props.training.checkpoints import TRAINING_CODE

    modules = set(import_closure(TRAINING_CODE))
    for kind in REPORT_KINDS:
        modules |= set(import_closure(*code_modules(kind)))
    return {m for m in modules if m.count(".") and m.split(".")[1] in PACKAGES}


def measure_threads() -> dict[str, Any]:
    from model_props.study.canaries import CANARY, load_canaries
    from model_props.training.profiles import load_profile
    from model_props.verdicts.study import load_study

    canaries, study = load_canaries("smoke"), load_study("smoke")
    assert canaries is not None and study is not None
    torch.set_num_threads(2)
    with tempfile.TemporaryDirectory() as cache:
        start = time.perf_counter()
        now = _run(Path(cache))
        seconds = time.perf_counter() - start
    moves, identical, defined = [], 0, 0
    for cid, parts in canaries.claims.items():
        for part, models in parts.items():
            for model, recorded in models.items():
                value = now["claims"][cid]["parts"][part]["values"].get(model)
                if recorded[0] is None or value is None:
                    continue
                defined += 1
                identical += value == recorded[0]
                values = [v for v in recorded if v is not None]
                if len(values) > 1 and statistics.stdev(values) > 0:
                    moves.append(abs(value - recorded[0]) / statistics.stdev(values))
    moved = canaries.moved(now, load_profile("smoke"), study.identity, CANARY)
    return {"seconds": round(seconds, 1), "statistics": defined, "identical": identical,
            "largest_move_sd": max(moves, default=0.0), "claims_moved": sorted(moved),
            "threads": 2, "recorded_threads": canaries.provenance["machine"]["torch_threads"]}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    only = parser.add_mutually_exclusive_group()
    only.add_argument("--coverage-only", action="store_true", help="keep the threads entry of --out as it is")
    only.add_argument("--threads-only", action="store_true", help="keep the coverage entry of --out as it is")
    parser.add_argument("--trace-seed", type=int, metavar="K",
                        help="build seed K of a study generation under the tracer (a committed one in a copy, compared "
                             "with it) and compare its lines")  # fmt: skip
    args = parser.parse_args()
    if args.threads_only and args.trace_seed is not None:
        parser.error("--trace-seed measures coverage: it does not go with --threads-only")
    # each entry carries its own stamp: --coverage-only and --threads-only re-measure one and keep the other's
    if args.coverage_only:
        threads = json.loads(args.out.read_text())["threads"]
    else:
        threads = measure_threads() | {
            "provenance": record(__file__, command="python benchmarks/canaries.py --threads-only")
        }
    if args.threads_only:
        coverage = json.loads(args.out.read_text())["coverage"]
    else:
        study = None if args.trace_seed is None else (args.trace_seed, trace_seed(args.trace_seed))
        command = "python benchmarks/canaries.py --coverage-only" + (" --trace-seed K" if study else "")
        coverage = measure_coverage(study) | {
            "provenance": record(__file__, runs=("model_props.cli",) if study else (), command=command)
        }
    result = {"threads": threads, "coverage": coverage}
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: {n: v for n, v in e.items() if n != "provenance"} for k, e in result.items()}, indent=1))


if __name__ == "__main__":
    main()
