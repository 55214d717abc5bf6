"""What the seed study's canaries run, and how far they move on one torch thread instead of two.

Two measurements of the first canary seed (:mod:`model_props.session.canaries`), each from a fresh cache:

- **coverage**: the lines of the training, data, model (``zoo``), anatomy and measurement packages (``measurements``
  and ``measures``) that the canary run executes, per package, with ``coverage`` (the ``bench`` extra);
- **threads**: the canary run on two torch threads against the committed record (canaries run on one), the largest
  move of any statistic in units of its seed-to-seed SD, and the claims it would stale on the record's machine kind:
  a proxy for what another machine's kernels do to the canaries, since both change the order of float sums.

    python benchmarks/canaries.py     # writes benchmarks/results/canaries.json; docs/verdicts.md quotes it
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import torch
from provenance import record

PACKAGES = ("training", "data", "zoo", "anatomy", "measurements", "measures")
OUT = Path(__file__).resolve().parent / "results" / "canaries.json"


def _run(cache: Path) -> dict[str, Any]:
    """The first canary seed from ``cache``, on the torch threads of the moment (the session's canaries use one)."""
    from model_props.session.canaries import canary_settings, load_canaries
    from model_props.session.settings import Settings
    from model_props.session.study import seed_estimates

    canaries = load_canaries("smoke")
    assert canaries is not None
    return seed_estimates(
        canary_settings(Settings(profile="smoke", cache_dir=cache, progress=False)), canaries.seeds[0]
    )


def measure_coverage() -> dict[str, Any]:
    import coverage  # the bench extra's, so that importing this script needs only the test extra

    import model_props

    root = Path(model_props.__file__).parent
    cov = coverage.Coverage(source=[str(root / p) for p in PACKAGES], data_file=None)
    with tempfile.TemporaryDirectory() as cache:
        start = time.perf_counter()
        torch.set_num_threads(1)
        cov.start()
        _run(Path(cache))
        cov.stop()
        seconds = time.perf_counter() - start
    found: dict[str, Any] = {}
    for package in PACKAGES:
        statements = missing = 0
        for path in sorted((root / package).rglob("*.py")):
            _, lines, _, absent, _ = cov.analysis2(str(path))
            statements, missing = statements + len(lines), missing + len(absent)
        found[package] = {"statements": statements, "executed": statements - missing}
    return {"seconds_traced": round(seconds, 1), "packages": found}


def measure_threads() -> dict[str, Any]:
    from model_props.session.canaries import CANARY, load_canaries
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
    moved = canaries.moved(now, load_profile("smoke"), {"date": study.date, "seeds": list(study.seeds)}, CANARY)
    return {"seconds": round(seconds, 1), "statistics": defined, "identical": identical,
            "largest_move_sd": max(moves, default=0.0), "claims_moved": sorted(moved),
            "threads": 2, "recorded_threads": canaries.provenance["machine"]["torch_threads"]}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    result = {"threads": measure_threads(), "coverage": measure_coverage(), "provenance": record(__file__)}
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "provenance"}, indent=1))


if __name__ == "__main__":
    main()
