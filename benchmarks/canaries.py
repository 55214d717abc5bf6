"""What the seed study's canaries run, and how far they move on one torch thread instead of two.

Two measurements of the first canary seed (:mod:`model_props.study.canaries`), each from a fresh cache:

- **coverage**: the lines of the training, data, model (``zoo``), anatomy and measurement packages (``measurements``,
  its functional core included) that the canary run executes, per package, with ``coverage`` (the ``bench`` extra);
  and the same over the modules of the study's code digest alone (the import closures of the training code and of
  every report kind: what a study's numbers are computed by), with the modules that miss the most lines;
- **threads**: the canary run on two torch threads against the committed record (canaries run on one), the largest
  move of any statistic in units of its seed-to-seed SD, and the claims it would stale on the record's machine kind:
  a proxy for what another machine's kernels do to the canaries, since both change the order of float sums.

    python benchmarks/canaries.py     # writes benchmarks/results/canaries.json; docs/verdicts.md quotes it
    python benchmarks/canaries.py --coverage-only   # the coverage entry alone, the threads entry kept with its stamp
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
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


def measure_coverage() -> dict[str, Any]:
    """Line coverage of the first canary seed, traced from interpreter start in a child process (``coverage run``),
    so that the lines a module runs when imported count too; on one torch thread, as the session's canaries run."""
    import model_props

    root = Path(model_props.__file__).parent
    with tempfile.TemporaryDirectory() as tmp:
        script, data = Path(tmp) / "traced.py", Path(tmp) / ".coverage"
        script.write_text(_TRACED.format(here=str(Path(__file__).resolve().parent)))
        source = ",".join(str(root / p) for p in PACKAGES)
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        start = time.perf_counter()
        run = [sys.executable, "-m", "coverage", "run", f"--data-file={data}", f"--source={source}", str(script)]
        subprocess.run([*run, str(Path(tmp) / "cache")], check=True, env=env, cwd=tmp)
        seconds = time.perf_counter() - start
        report = Path(tmp) / "coverage.json"
        subprocess.run([sys.executable, "-m", "coverage", "json", f"--data-file={data}", "-o", str(report)],
                       check=True, cwd=tmp, capture_output=True)  # fmt: skip
        files = json.loads(report.read_text())["files"]
    found: dict[str, Any] = {}
    for package in PACKAGES:
        paths = [str(p) for p in sorted((root / package).rglob("*.py"))]
        summaries = [files[p]["summary"] for p in paths if p in files]
        statements = sum(s["num_statements"] for s in summaries)
        found[package] = {"statements": statements, "executed": sum(s["covered_lines"] for s in summaries)}
    digest = {importlib.util.find_spec(m).origin for m in _digest_modules()}  # type: ignore[union-attr]
    within = {p: files[p]["summary"] for p in files if p in digest}
    missed = sorted(within, key=lambda p: -within[p]["missing_lines"])[:12]
    closure = {
        "modules": len(within),
        "statements": sum(s["num_statements"] for s in within.values()),
        "executed": sum(s["covered_lines"] for s in within.values()),
        "most_missed": {str(Path(p).relative_to(root)): within[p]["missing_lines"] for p in missed},
    }
    return {"seconds_traced": round(seconds, 1), "packages": found, "study_code": closure}


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
    parser.add_argument("--coverage-only", action="store_true", help="keep the threads entry of --out as it is")
    args = parser.parse_args()
    # each entry carries its own stamp: --coverage-only re-measures one and keeps the other's, measured earlier
    if args.coverage_only:
        threads = json.loads(args.out.read_text())["threads"]
    else:
        threads = measure_threads() | {"provenance": record(__file__, command="python benchmarks/canaries.py")}
    coverage = measure_coverage() | {
        "provenance": record(__file__, command="python benchmarks/canaries.py --coverage-only")
    }
    result = {"threads": threads, "coverage": coverage}
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: {n: v for n, v in e.items() if n != "provenance"} for k, e in result.items()}, indent=1))


if __name__ == "__main__":
    main()
