"""Coverage of the verdict intervals in simulated two-stage seed studies (each seed its own measurement sample,
two recipes paired by seed index) with known variances.

python benchmarks/coverage.py      # writes benchmarks/results/coverage.json (the README quotes it)
"""

from __future__ import annotations

import json
from pathlib import Path

from model_props.testing.coverage import IMAGE, MODEL, TAU, N, coverage

OUT = Path(__file__).resolve().parent / "results" / "coverage.json"


def main() -> None:
    rows = [coverage(k, reps=10_000, seed=k) for k in (3, 5, 10)]
    data = {"tau": TAU, "image": IMAGE, "model": MODEL, "n": N, "reps": 10_000, "level": 0.95, "rows": rows}
    OUT.write_text(json.dumps(data, indent=2) + "\n")
    for r in rows:
        print(
            f"k = {r['k']:2d}: architecture {r['architecture']:.3f}, paired {r['paired']:.3f} (Welch {r['welch']:.3f}, "
            f"width {r['width']:.2f}), one shared sample {r['shared_sample']:.3f}, one seed {r['one_seed']:.3f}"
        )


if __name__ == "__main__":
    main()
