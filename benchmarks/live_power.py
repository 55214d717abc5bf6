"""The live procedure's power against a broad shift, simulated from the committed study's own covariance.

The null simulation's model (``live_null.py``: the study's mean and covariance of each reference's family taken as
the truth, the whole procedure run on each replicate) with the live seed moved on every statistic, by the same
number of predictive SDs, towards the side its check tests: the broad shift that no single check sees and the
omnibus is there for. Power is the share of replicates the procedure fails, at the study's k seeds and at twice
as many drawn from the same truth (what more seeds would give if the k seeds' correlation were the truth; a real
larger study would also estimate that correlation better, which no simulation from k seeds can show). The target
of the live-check issue: a broad shift of about 1 predictive SD fails.

python benchmarks/live_power.py [--replicates N] [--draws D]   # writes benchmarks/results/live_power.json
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from live_null import simulate
from provenance import record

from model_props.training.profiles import load_profile
from model_props.verdicts import omnibus
from model_props.verdicts.study import load_study

OUT = Path(__file__).resolve().parent / "results" / "live_power.json"
SHIFTS = (1.0, 1.5, 2.0)  # predictive SDs on every statistic; 1 is the target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replicates", type=int, default=400, help="simulated live seeds per reference and setting")
    parser.add_argument("--draws", type=int, default=4000, help="draws of each omnibus's reference distribution")
    args = parser.parse_args()
    omnibus.SIMULATIONS = args.draws  # as in live_null.py
    study = load_study("smoke")
    assert study is not None, "the smoke profile has a seed study"
    k = len(study.seeds)
    rows = [simulate(reference, args.replicates, seed=100 + i, shift=shift, seeds=seeds) | {"shift": shift}
            for i, reference in enumerate(load_profile("smoke").references)
            for seeds in (k, 2 * k) for shift in SHIFTS]  # fmt: skip
    for r in rows:
        r["mc_error"] = math.sqrt(r["rate"] * (1 - r["rate"]) / r["replicates"])
        print(f"{r['reference']}, {r['seeds']} seeds, shift {r['shift']:g}: power {r['rate']:.3f} (omnibus "
              f"{r['omnibus_rate']:.3f}), MC error {r['mc_error']:.3f}", flush=True)  # fmt: skip
    data = {"replicates": args.replicates, "draws": args.draws, "shifts": SHIFTS, "rows": rows,
            "provenance": record(__file__)}  # fmt: skip
    OUT.write_text(json.dumps(data, indent=2) + "\n")


if __name__ == "__main__":
    main()
