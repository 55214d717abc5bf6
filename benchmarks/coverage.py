"""Coverage of the verdict intervals in simulated two-stage seed studies (each seed its own measurement sample,
two recipes paired by seed index) with known variances; and on a user's seeds as they are now measured (each
replica its own sample), with non-normal effects resampled from the committed smoke study's residuals
(``two_stage`` rows: :func:`model_props.verdicts.coverage.two_stage_coverage`).

python benchmarks/coverage.py      # writes benchmarks/results/coverage.json (the README quotes it)
"""

from __future__ import annotations

import json
from pathlib import Path

from provenance import record

from model_props.verdicts.coverage import IMAGE, MODEL, TAU, N, coverage, two_stage_coverage

OUT = Path(__file__).resolve().parent / "results" / "coverage.json"


def main() -> None:
    rows = [coverage(k, reps=10_000, seed=k) for k in (3, 5, 10)]
    two_stage = [two_stage_coverage(k, reps=10_000, seed=k) for k in (3, 5, 10)]
    data = {"tau": TAU, "image": IMAGE, "model": MODEL, "n": N, "reps": 10_000, "level": 0.95, "rows": rows,
            "two_stage": two_stage, "provenance": record(__file__)}  # fmt: skip
    OUT.write_text(json.dumps(data, indent=2) + "\n")
    for r in rows:
        print(
            f"k = {r['k']:2d}: architecture {r['architecture']:.3f}, paired {r['paired']:.3f} (Welch {r['welch']:.3f}, "
            f"width {r['width']:.2f}), one shared sample {r['shared_sample']:.3f}, one seed {r['one_seed']:.3f}"
        )
    for r in two_stage:
        print(
            f"k = {r['k']:2d}, a user's replicas (study residuals): t over replicas {r['replicas']:.3f}, Welch against "
            f"{r['study_seeds']} study seeds {r['welch']:.3f}, one shared sample {r['shared_sample']:.3f}"
        )


if __name__ == "__main__":
    main()
