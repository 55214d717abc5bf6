"""Group-sequential against fixed-sample checkpoint verdicts, simulated: the rate of each verdict and the samples
used, for true effects of 0, 2, 4, 6 and 10 standard errors of the full sample.

Each replicate draws a part's per-unit values in their fixed order and decides it twice: once on the full sample
(the fixed design: mean +- t_{0.975, n-1} se, :func:`~model_props.verdicts.stats.decide`), once by the looks of
:func:`~model_props.verdicts.sequential.design` (repeated intervals, O'Brien-Fleming-type spending). The rule is
``statistic > 0``, so at effect 0 both "supported" and "contradicted" are false verdicts (each nominally at most
2.5 %), and above 0 "contradicted" is. Three kinds of statistic, at the sample sizes of the smoke profile:

- ``images``: a mean over 2,000 images of normal per-image values (noise, corruption accuracy, fit);
- ``paired accuracy``: per-image differences of two correctness indicators in {-1, 0, 1} over 512 attack images,
  30 % of images discordant (the paired drop under attack of two models);
- ``Hessian batches``: a mean over 16 per-batch NEP values (4 looks of 4 batches, t-carried boundaries).

    python benchmarks/sequential.py          # writes benchmarks/results/sequential.json; RESULTS.md quotes it
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
from scipy import stats as sps

from model_props.verdicts.sequential import crossing, decide_sequential, design, look_statistics

OUT = Path(__file__).resolve().parent / "results" / "sequential.json"
EFFECTS = (0, 2, 4, 6, 10)  # true effect in standard errors of the full sample
REPS = 40_000
CHUNK = 2_000
DISCORDANT = 0.3


def normal(rng: np.random.Generator, shape: tuple[int, int], mu: float) -> np.ndarray:
    return rng.normal(mu, 1.0, shape)


def paired_accuracy(rng: np.random.Generator, shape: tuple[int, int], mu: float) -> np.ndarray:
    """Differences in {-1, 0, 1}: +1 with probability (d + mu) / 2, -1 with (d - mu) / 2 (d discordant)."""
    u = rng.random(shape)
    up = (DISCORDANT + mu) / 2
    return np.where(u < up, 1.0, np.where(u < DISCORDANT, -1.0, 0.0))


def sd_of(kind: str) -> float:
    return np.sqrt(DISCORDANT) if kind == "paired accuracy" else 1.0  # per-unit sd at effect 0


KINDS: dict[str, tuple[int, Callable[[np.random.Generator, tuple[int, int], float], np.ndarray]]] = {
    "images": (2000, normal),
    "paired accuracy": (512, paired_accuracy),
    "Hessian batches": (16, normal),
}


def rates(verdicts: np.ndarray) -> dict[str, float]:
    return {v: float(np.mean(verdicts == v)) for v in ("supported", "contradicted", "inconclusive")}


def simulate(kind: str, effect: float, seed: int) -> dict:
    n_max, draw = KINDS[kind]
    d = design(n_max)
    mu = effect * sd_of(kind) / np.sqrt(n_max)
    rng = np.random.default_rng(seed)
    fixed, seq, used = [], [], []
    t_full = sps.t.isf(0.025, n_max - 1)
    for _ in range(REPS // CHUNK):
        values = draw(rng, (CHUNK, n_max), mu)
        mean, se = look_statistics(values, (n_max,))
        low, high = mean[:, 0] - t_full * se[:, 0], mean[:, 0] + t_full * se[:, 0]
        fixed.append(np.where(low > 0, "supported", np.where(high < 0, "contradicted", "inconclusive")))
        mean, se = look_statistics(values, d.sizes)
        out = decide_sequential(mean, se, d, "greater", 0.0)
        seq.append(out.verdict)
        used.append(out.used / n_max)
    up, low_ = crossing(d.fractions, d.critical, effect)
    stop = up + low_
    analytic_used = float(np.sum(stop * np.array(d.fractions)) + (1 - stop.sum()))
    return {
        "kind": kind, "n_max": n_max, "looks": list(d.sizes), "effect": effect,
        "fixed": rates(np.concatenate(fixed)), "sequential": rates(np.concatenate(seq)),
        "used": float(np.mean(np.concatenate(used))), "analytic_used": analytic_used,
        "analytic_supported": float(up.sum()),
    }  # fmt: skip


def checks(row: dict, mc: float) -> dict[str, bool]:
    """The targets: false verdicts at or below nominal (2.5 % each side, within 2 Monte Carlo errors), power
    within 2 points of the fixed design, at least 35 % fewer samples at 4 SE and above."""
    s, f = row["sequential"], row["fixed"]
    false_ok = s["contradicted"] <= 0.025 + 2 * mc and (row["effect"] > 0 or s["supported"] <= 0.025 + 2 * mc)
    power_ok = row["effect"] == 0 or s["supported"] >= f["supported"] - 0.02
    saving_ok = row["effect"] < 4 or row["used"] <= 0.65
    return {"false_verdicts": bool(false_ok), "power": bool(power_ok), "saving": bool(saving_ok)}


def main() -> None:
    mc = float(np.sqrt(0.025 * 0.975 / REPS))
    rows = []
    for i, kind in enumerate(KINDS):
        for effect in EFFECTS:
            row = simulate(kind, effect, seed=1000 * i + effect)
            row["checks"] = checks(row, mc)
            rows.append(row)
            s, f = row["sequential"], row["fixed"]
            print(f"{kind:16s} {effect:2d} SE: fixed sup {f['supported']:.3f} con {f['contradicted']:.4f} | "
                  f"sequential sup {s['supported']:.3f} con {s['contradicted']:.4f} used {row['used']:.3f} "
                  f"(analytic {row['analytic_used']:.3f}) {row['checks']}", flush=True)  # fmt: skip
    OUT.write_text(json.dumps({"reps": REPS, "mc_error_at_2.5%": mc, "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
