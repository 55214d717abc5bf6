"""Group-sequential against fixed-sample checkpoint verdicts, simulated on the production path: the rate of each
verdict and the samples used, for true effects of 0, 2, 4, 6 and 10 standard errors of the full sample.

Each replicate draws a part's per-unit values in their fixed order and decides it twice: once on the full sample
(the fixed design: mean +- t_{0.975, n-1} se, :func:`~model_props.verdicts.stats.decide`), and once by the judge
itself (:func:`~model_props.verdicts.judge.judge` on :class:`~model_props.verdicts.evidence.OnLooks` evidence, as a
checkpoint test calls it: the bootstrap at each look of :func:`~model_props.verdicts.sequential.design`, its
repeated interval, its stopping). The rule is ``statistic > 0``, so at effect 0 both "supported" and
"contradicted" are false verdicts (each nominally at most 2.5 %), and above 0 "contradicted" is. Three kinds of
statistic, at the sample sizes of the smoke profile:

- ``images``: a mean over 2,000 images of normal per-image values (noise, corruption accuracy, fit);
- ``paired accuracy``: two models' correctness on 512 attack images, 30 % of images discordant, compared paired
  (the paired drop under attack of two models);
- ``Hessian batches``: a mean over 16 per-batch NEP values (4 looks of 4 batches, t-carried boundaries).

Each row states its replicates and the Monte Carlo error of a 2.5 % rate; the judge's bootstrap makes a replicate
cost 10 ms (16 batches) to 0.3 s (2,000 images), so the kinds run with different replicate counts (``REPS``).

    python benchmarks/sequential.py          # writes benchmarks/results/sequential.json; RESULTS.md quotes it
                                             # (its rows two at a time on a local Dask cluster: --workers)
    python benchmarks/sequential.py --kinds "Hessian batches" --effects 0 --reps 20000 --out /tmp/sequential.json
"""

from __future__ import annotations

import argparse
import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from provenance import record
from scipy import stats as sps

from model_props.claims.base import Claim, Part
from model_props.claims.park2022 import PAPER
from model_props.execution import executor
from model_props.verdicts import Evidence, Measured, OnReports, gather_looks, judge
from model_props.verdicts.sequential import crossing, design

OUT = Path(__file__).resolve().parent / "results" / "sequential.json"
EFFECTS = (0, 2, 4, 6, 10)  # true effect in standard errors of the full sample
DISCORDANT = 0.3


@dataclass(frozen=True)
class Units:
    """A report of one value per sampling unit (an image's or a Hessian batch's), in the measurement's order."""

    values: np.ndarray

    def size(self, sampling: str) -> int:
        return len(self.values)


def _mean(report: Units, idx: np.ndarray) -> np.ndarray:
    return report.values[idx].mean(axis=-1)


def normal(rng: np.random.Generator, n: int, mu: float) -> tuple[np.ndarray, None]:
    return rng.normal(mu, 1.0, n), None


def paired_accuracy(rng: np.random.Generator, n: int, mu: float) -> tuple[np.ndarray, np.ndarray]:
    """Two models' correctness: only the model is right with probability (d + mu) / 2, only the other with
    (d - mu) / 2 (d discordant), so that the paired difference has mean mu."""
    u = rng.random(n)
    up = (DISCORDANT + mu) / 2
    return (u < up).astype(float), ((u >= up) & (u < DISCORDANT)).astype(float)


@dataclass(frozen=True)
class Kind:
    n_max: int
    draw: Callable[[np.random.Generator, int, float], tuple[np.ndarray, np.ndarray | None]]
    sampling: str
    sd: float  # per-unit sd of the statistic's values (of the paired difference) at effect 0
    reps: int


KINDS = {
    "images": Kind(2000, normal, "images", 1.0, 1_000),
    "paired accuracy": Kind(512, paired_accuracy, "images", float(np.sqrt(DISCORDANT)), 2_000),
    "Hessian batches": Kind(16, normal, "batches", 1.0, 20_000),
}


def judged(kind: Kind, subject: np.ndarray, versus: np.ndarray | None) -> tuple[str, int]:
    """The judge's sequential verdict of one replicate and the units it read."""
    part = Part("p", "mean", _mean, "greater", sampling=kind.sampling, report="attack",  # type: ignore[arg-type]
                versus="other" if versus is not None else None)  # fmt: skip
    claim = Claim("sim.sequential", 0, PAPER, "s", "statement", "units", "evidence", "attack", (part,), lambda a: None)

    def reports_at(n: int) -> OnReports:  # each replicate's first n units
        return OnReports(*(Measured(name, Units(v[:n]), "the replicate's units") for name, v in (("model", subject),
                         ("other", versus)) if v is not None))  # fmt: skip

    evidence = gather_looks(claim, part, len(subject), reports_at)  # the session's gatherer's loop
    outcome = judge(Evidence(claim, "model", "checkpoint", {"p": evidence})).parts[0]
    return outcome.verdict, outcome.estimate.n if outcome.estimate is not None else kind.n_max


def fixed(values: np.ndarray) -> str:
    """The fixed design's verdict: mean +- t_{0.975, n-1} s / sqrt(n) on the whole sample."""
    half = sps.t.isf(0.025, len(values) - 1) * values.std(ddof=1) / np.sqrt(len(values))
    mean = values.mean()
    return "supported" if mean - half > 0 else "contradicted" if mean + half < 0 else "inconclusive"


def rates(verdicts: list[str]) -> dict[str, float]:
    return {v: float(np.mean([x == v for x in verdicts])) for v in ("supported", "contradicted", "inconclusive")}


def simulate(name: str, effect: float, reps: int, seed: int) -> dict:
    kind = KINDS[name]
    d = design(kind.n_max)
    mu = effect * kind.sd / np.sqrt(kind.n_max)
    rng = np.random.default_rng(seed)
    on_fixed, on_looks, used = [], [], []
    for _ in range(reps):
        subject, versus = kind.draw(rng, kind.n_max, mu)
        on_fixed.append(fixed(subject - versus if versus is not None else subject))
        verdict, n = judged(kind, subject, versus)
        on_looks.append(verdict)
        used.append(n / kind.n_max)
    up, low = crossing(d.fractions, d.critical, effect)
    stop = up + low
    analytic_used = float(np.sum(stop * np.array(d.fractions)) + (1 - stop.sum()))
    return {
        "kind": name, "n_max": kind.n_max, "looks": list(d.sizes), "effect": effect, "reps": reps,
        "mc_error": float(np.sqrt(0.025 * 0.975 / reps)), "fixed": rates(on_fixed), "sequential": rates(on_looks),
        "used": float(np.mean(used)), "analytic_used": analytic_used, "analytic_supported": float(up.sum()),
    }  # fmt: skip


def checks(row: dict) -> dict[str, bool]:
    """The targets: false verdicts at or below nominal (2.5 % each side, within 2 Monte Carlo errors), power
    within 2 points of the fixed design, at least 35 % fewer samples at 4 SE and above."""
    s, f, mc = row["sequential"], row["fixed"], row["mc_error"]
    false_ok = s["contradicted"] <= 0.025 + 2 * mc and (row["effect"] > 0 or s["supported"] <= 0.025 + 2 * mc)
    power_ok = row["effect"] == 0 or s["supported"] >= f["supported"] - 0.02
    saving_ok = row["effect"] < 4 or row["used"] <= 0.65
    return {"false_verdicts": bool(false_ok), "power": bool(power_ok), "saving": bool(saving_ok)}


def _row(reps: int | None, kind_effect: tuple[str, int]) -> dict:
    """One row: ``simulate`` of the kind at the effect (its ``REPS`` unless ``reps``), with its checks."""
    name, effect = kind_effect
    row = simulate(name, effect, reps or KINDS[name].reps, seed=1000 * list(KINDS).index(name) + effect)
    return {**row, "checks": checks(row)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kinds", nargs="+", choices=list(KINDS), default=list(KINDS))
    parser.add_argument("--effects", nargs="+", type=int, default=list(EFFECTS))
    parser.add_argument("--reps", type=int, default=None, help="replicates per row (default: the kind's REPS)")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--workers", type=int, default=2, help="rows simulated at a time (a local Dask cluster)")
    args = parser.parse_args()
    todo = [(name, effect) for name in args.kinds for effect in args.effects]
    done = {}
    with executor(workers=args.workers, threads=1) as runner:  # each row is seeded by its kind and effect alone
        for (name, effect), row in runner.map(functools.partial(_row, args.reps), todo):
            done[name, effect] = row
            s, f = row["sequential"], row["fixed"]
            print(f"{name:16s} {effect:2d} SE, {row['reps']} reps (MC error {row['mc_error']:.2%}): fixed sup "
                  f"{f['supported']:.3f} con {f['contradicted']:.4f} | sequential sup {s['supported']:.4f} con "
                  f"{s['contradicted']:.4f} used {row['used']:.3f} (analytic {row['analytic_used']:.3f}) "
                  f"{row['checks']}", flush=True)  # fmt: skip
    rows = [done[kind_effect] for kind_effect in todo]
    fewest = min(r["reps"] for r in rows)  # the least precise row: what a single figure can state
    data = {"reps": fewest, "mc_error_at_2.5%": float(np.sqrt(0.025 * 0.975 / fewest)), "rows": rows,
            "provenance": record(__file__)}  # fmt: skip
    args.out.write_text(json.dumps(data, indent=1) + "\n")


if __name__ == "__main__":
    main()
