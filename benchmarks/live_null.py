"""The live procedure's false-failure rate under the null, simulated from the committed study's own covariance.

For each reference, the default run's family (the references trained live, every report kind but the release kinds:
:func:`model_props.verdicts.family.default_family`) of the committed smoke study: every
statistic on its scale (a paired difference as the study holds it), the study's mean and covariance of those values
over its seeds taken as the truth. Each replicate draws k study seeds and one live seed from that normal
distribution (kept inside each statistic's range, as real values are), and runs the whole live procedure on them
(:func:`model_props.verdicts.reproduction.reproduce`: the single checks under Holm and the omnibus, whose own
reference distribution is simulated from the replicate's study, as in a run). A replicate fails where any check
fails. The target: each reference's rate at or below its level (5 % / 5 references) within 2 Monte Carlo errors.

python benchmarks/live_null.py [--replicates N] [--draws D]   # writes benchmarks/results/live_null.json
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
from pathlib import Path

import numpy as np
from provenance import record

from model_props.training.profiles import load_profile
from model_props.verdicts import omnibus
from model_props.verdicts.family import default_family
from model_props.verdicts.reproduction import reproduce, run_level
from model_props.verdicts.snapshot import load_snapshot
from model_props.verdicts.study import load_study

OUT = Path(__file__).resolve().parent / "results" / "live_null.json"


def simulate(reference: str, replicates: int, seed: int, shift: float = 0.0, seeds: int | None = None) -> dict:
    """The whole live procedure on ``replicates`` simulated live seeds of ``reference`` (module docstring): the rate
    at which it fails, and its omnibus alone. ``seeds``: study seeds drawn per replicate (default: the study's k);
    ``shift``: the live seed moved that many predictive SDs (of the truth, sqrt(1 + 1/seeds) study SDs) on every
    statistic towards the side its check tests (up for a two-sided one), a broad shift; 0 is the null."""
    profile, study, snapshot = load_profile("smoke"), load_study("smoke"), load_snapshot("smoke")
    assert study is not None, "the smoke profile has a seed study"
    statistics = [
        s for s in default_family(study, profile, reference, snapshot) if all(v is not None for v in s.values)
    ]
    x = np.array(
        [[s.scale.to(v) for v in s.values if v is not None] for s in statistics]
    ).T  # (k, n) on each statistic's scale
    k = x.shape[0]
    drawn = seeds or k
    rng = np.random.default_rng(seed)
    residuals = (x - x.mean(axis=0)) / math.sqrt(k - 1)  # covariance = residualsᵀ residuals
    towards = np.array([s.towards for s in statistics])
    moved = shift * math.sqrt(1 + 1 / drawn) * x.std(axis=0, ddof=1) * towards
    failed = omnibus_failed = 0
    for _ in range(replicates):
        draws = x.mean(axis=0) + rng.standard_normal((drawn + 1, k)) @ residuals
        draws[drawn] += moved
        values = [[float(np.clip(s.scale.back(v), s.scale.low, s.scale.high)) for v in draws[:, j]]
                  for j, s in enumerate(statistics)]  # fmt: skip
        simulated = [dataclasses.replace(s, values=tuple(v[:drawn])) for s, v in zip(statistics, values)]
        live = {s.label: v[drawn] for s, v in zip(statistics, values)}
        found = reproduce(reference, simulated, live, profile)
        failed += bool(found.failed)
        omnibus_failed += any(isinstance(c, omnibus.Omnibus) for c in found.failed)
    return {"reference": reference, "statistics": len(statistics), "seeds": drawn, "replicates": replicates,
            "rate": failed / replicates, "omnibus_rate": omnibus_failed / replicates}  # fmt: skip


def false_failures(reference: str, replicates: int, seed: int) -> dict:
    """One reference's simulated false-failure rate under the null, with its level and Monte Carlo error."""
    level = run_level(load_profile("smoke"))
    return {**simulate(reference, replicates, seed), "level": level,
            "mc_error": math.sqrt(level * (1 - level) / replicates)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replicates", type=int, default=2000, help="simulated live seeds per reference")
    parser.add_argument("--draws", type=int, default=4000, help="draws of each omnibus's reference distribution")
    args = parser.parse_args()
    omnibus.SIMULATIONS = args.draws  # the omnibus's MC resolution (1 / draws) stays far below its level 0.005
    profile = load_profile("smoke")
    rows = [false_failures(r, args.replicates, seed=i) for i, r in enumerate(profile.references)]
    data = {"replicates": args.replicates, "draws": args.draws, "rows": rows, "provenance": record(__file__)}
    OUT.write_text(json.dumps(data, indent=2) + "\n")
    for r in rows:
        print(f"{r['reference']}: {r['rate']:.4f} of {r['replicates']} simulated live seeds fail (omnibus "
              f"{r['omnibus_rate']:.4f}); level {r['level']:.3f}, MC error {r['mc_error']:.4f}")  # fmt: skip


if __name__ == "__main__":
    main()
