"""Checkpoint intervals over fewer than 30 units (``model_props.verdicts.small_sample``): on simulated minibatch CKA
over 16 batches the production judge's false verdicts at the threshold stay at or below 2.5 % per side within Monte
Carlo error, where the percentile bootstrap's do not; two independent samples get Welch's interval for a mean.

Each trial draws its units with replacement from a fixed pool, so the truth is the statistic on the whole pool, exact;
the part's threshold is that truth, and a verdict either way (supported: above; contradicted: below) is false. The
bound is the nominal 2.5 % plus 2.576 Monte Carlo standard errors of a 2.5 % rate over the trials (a rate at nominal
passes with 99.5 % probability); the decision rule was fixed before the first run.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import pytest
import torch
from scipy import stats as sps
from toy_reports import Scores  # this folder is on sys.path (pytest's "prepend" import mode)

from model_props.claims.base import Claim, Part
from model_props.claims.park2022 import PAPER
from model_props.measurements.functional.cka import MinibatchCKA, cka_from_hsic, resampled_sum
from model_props.verdicts import Evidence, Measured, OnReports, judge
from model_props.verdicts.small_sample import SMALL_SAMPLE
from model_props.verdicts.stats import bootstrap

NOMINAL = 0.025  # one side of the 95 % interval (and Holm's level for a claim of one part)
TRIALS = 4000
BOUND = NOMINAL + 2.576 * math.sqrt(NOMINAL * (1 - NOMINAL) / TRIALS)  # 0.0314 at 4,000 trials


@dataclass
class Batches:
    """A unit report's minibatch CKA terms: per batch the (U, U) HSIC matrix of three units."""

    per_batch: torch.Tensor

    def size(self, sampling: str) -> int:
        return len(self.per_batch)


def _cka_gap(report: Batches, batches: np.ndarray) -> np.ndarray:
    """CKA(unit 0, unit 1) - CKA(unit 0, unit 2), a ratio of sums over the batches, as the block-structure parts."""
    cka = cka_from_hsic(resampled_sum(report.per_batch, batches)).numpy()
    return cka[..., 0, 1] - cka[..., 0, 2]


def _pool(batches: int = 1024, images: int = 32) -> torch.Tensor:
    """Per-batch HSIC matrices of three ReLU feature maps of one Gaussian input, at decreasing signal to noise."""
    g = torch.Generator().manual_seed(0)
    cka = MinibatchCKA()
    weights = [torch.randn(16, 32, generator=g) for _ in range(3)]
    for _ in range(batches):
        z = torch.randn(images, 16, generator=g)
        cka.update([torch.relu(z @ w + noise * torch.randn(images, 32, generator=g))
                    for w, noise in zip(weights, (0.0, 2.0, 4.0))])  # fmt: skip
    return torch.stack(cka.per_batch)


def _claim(part: Part) -> Claim:
    return Claim("toy.claim", 99, PAPER, "s", "statement", "units", "evidence", "cka", (part,), lambda a: None)


def _rates(verdicts: list[str]) -> tuple[float, float]:
    """(false 'contradicted', false 'supported') shares: below and above a 'greater' part's true threshold."""
    return verdicts.count("contradicted") / len(verdicts), verdicts.count("supported") / len(verdicts)


@pytest.fixture(scope="module")
def cka_trials() -> tuple[list[str], list[tuple[float, float]]]:
    """The judge's verdict on TRIALS draws of 16 batches, and the percentile bootstrap's interval on the first 1,000."""
    pool = _pool()
    truth = float(_cka_gap(Batches(pool), np.arange(len(pool))[None, :])[0])
    part = Part("gap", "CKA gap", _cka_gap, "greater", threshold=truth, sampling="batches")
    rng = np.random.default_rng(1)
    verdicts: list[str] = []
    percentile: list[tuple[float, float]] = []
    for trial in range(TRIALS):
        report = Batches(pool[rng.integers(0, len(pool), 16)])
        outcome = judge(Evidence(_claim(part), "a", "checkpoint", {"gap": OnReports(Measured("a", report, "s"))}))
        verdicts.append(outcome.parts[0].verdict)
        if trial < 1000:
            e = bootstrap(16, functools.partial(_cka_gap, report), seed=trial)
            percentile.append((e.low - truth, e.high - truth))
    return verdicts, percentile


def test_cka_over_16_batches_is_judged_on_a_jackknife_t_interval():
    pool = _pool(batches=16)
    part = Part("gap", "CKA gap", _cka_gap, "greater", sampling="batches")
    outcome = judge(Evidence(_claim(part), "a", "checkpoint", {"gap": OnReports(Measured("a", Batches(pool), "s"))}))
    estimate = outcome.parts[0].estimate
    assert estimate is not None and estimate.t is not None
    assert 16 < SMALL_SAMPLE and estimate.method == "jackknife t" and estimate.t[2] == 15.0
    assert outcome.parts[0].sampling == "batches" and "over 16 batches" in outcome.parts[0].describe()  # not "seeds"


def test_cka_over_16_batches_has_at_most_nominal_false_verdicts_per_side(cka_trials):
    below, above = _rates(cka_trials[0])
    assert below <= BOUND and above <= BOUND, f"false verdicts {below:.4f} below, {above:.4f} above; bound {BOUND:.4f}"


def test_the_percentile_bootstrap_it_replaces_is_liberal_on_the_same_draws(cka_trials):
    """The simulation can tell: over 1,000 of the same draws the percentile interval misses on each side more than
    the nominal rate plus 2.576 Monte Carlo standard errors at 1,000 trials (0.0377; it is about 4 %, combined 8 %)."""
    intervals = np.array(cka_trials[1])
    misses = float(np.mean((intervals[:, 1] < 0) | (intervals[:, 0] > 0)))
    assert misses > 2 * NOMINAL + 2.576 * math.sqrt(2 * NOMINAL * (1 - 2 * NOMINAL) / len(intervals))


def test_two_samples_get_welchs_interval_where_the_statistic_is_a_mean():
    """For a difference of means the two-sample jackknife t is Welch's t interval exactly (the jackknife variance of
    a mean is s^2 / n): the same bounds and degrees of freedom as scipy's, to 1e-9."""
    rng = np.random.default_rng(2)
    a, b = rng.exponential(1.0, 12), rng.gamma(4.0, 0.25, 20)

    def mean(report: Scores, i: np.ndarray) -> np.ndarray:
        return report.values[i].mean(axis=-1)

    part = Part("diff", "mean difference", mean, "greater", versus="b")
    both = OnReports(Measured("a", Scores(a), "s"), Measured("b", Scores(b), "t"))
    estimate = judge(Evidence(_claim(part), "a", "checkpoint", {"diff": both})).parts[0].estimate
    assert estimate is not None and estimate.t is not None
    welch = sps.ttest_ind(a, b, equal_var=False)
    assert estimate.method == "two-sample jackknife t" and estimate.t[2] == pytest.approx(welch.df, rel=1e-9)
    assert estimate.interval == pytest.approx(tuple(welch.confidence_interval(0.95)), rel=1e-9)
