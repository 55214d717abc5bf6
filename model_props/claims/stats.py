"""Intervals, p-values, decisions and multiplicity: the one statistics module of claims, gate and study (design Sec. 7).

Every part of a claim reduces to a scalar statistic and a rule ``statistic <direction> threshold``. Its
interval depends on what the verdict is about (its *scope*):

- **checkpoint** (one set of weights): a percentile bootstrap over the report's sampling units (images,
  mini-batches). Two models measured on the same samples (the same test images, noise draws or Hessian
  batches) are compared *paired*: one resample of the shared indices feeds both (:func:`bootstrap` of a
  difference); models on different samples (e.g. trained on different subsets) by :func:`bootstrap_two_sample`.
  Resamples on which the statistic is undefined (NaN) are dropped and counted.
- **architecture** (a recipe trained with k >= 3 seeds, the seed the unit of replication): a t interval over
  the per-seed estimates (:func:`t_interval`), and Welch's interval for the difference of two recipes, whose
  seeds are independent (:func:`welch_interval`). Each per-seed estimate carries its own within-seed sampling
  error, so the spread of the k estimates holds the between-seed and within-seed variance together: this is
  the summary-statistics estimator of a one-way random-effects mean (Searle, Casella & McCulloch 1992,
  Sec. 3.6; DerSimonian & Laird 1986), exact under normality for equal within-seed variances, and the
  t quantile with k - 1 degrees of freedom is the small-k correction. ``test_stats.py`` simulates known
  within- and between-seed variances and finds 95 % coverage for k = 3, 5, 10, where one seed's bootstrap
  interval undercovers the architecture's mean.

Verdicts (:func:`decide`): *supported* when the interval lies on the claimed side of the threshold,
*contradicted* when it lies on the other side, else *inconclusive*. Within a claim, parts are combined by an
intersection-union rule (supported only when every applicable part is) and contradictions are controlled by
Holm's step-down procedure (:func:`holm`) on one-sided p-values (:meth:`Estimate.p_value`) at level
(1 - confidence) / 2, the one-sided level that matches the two-sided interval.

A new seed's estimate is predicted by :func:`prediction_interval` (mean +- t s sqrt(1 + 1/k)), which sets and
checks the seed study's expectations. All resampling uses ``numpy.random.Generator(seed)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Literal

import numpy as np
from scipy import stats as sps

__all__ = [
    "Direction", "Verdict", "Scope", "Estimate", "N_BOOT", "MIN_SEEDS", "bootstrap", "bootstrap_two_sample",
    "t_interval", "welch_interval", "decide", "holm", "contradiction_p", "settle_point", "effect_origin", "prediction_interval", "prediction_p",
    "samples_to_settle", "standardized_effect",
]  # fmt: skip

Direction = Literal["greater", "less", "within"]  # within: equivalence, |statistic| < threshold
Verdict = Literal["supported", "contradicted", "inconclusive"]
Scope = Literal["checkpoint", "architecture"]
N_BOOT = 2000
MIN_SEEDS = 3  # an architecture verdict needs at least this many seeds


@dataclass(frozen=True)
class Estimate:
    """A point estimate with an interval at ``level`` over ``n`` sampling units (seeds at architecture scope).

    ``replicates`` (bootstrap) or ``t`` = (estimate, standard error, degrees of freedom) keep what the p-values
    are computed from; ``dropped`` counts bootstrap resamples or seeds where the statistic was undefined."""

    value: float
    low: float
    high: float
    level: float
    n: int
    method: str = "percentile bootstrap"
    replicates: np.ndarray | None = field(default=None, repr=False, compare=False)
    t: tuple[float, float, float] | None = None
    dropped: int = 0
    n_versus: int | None = None  # the other group's size for a two-sample interval

    @property
    def interval(self) -> tuple[float, float]:
        return (self.low, self.high)

    def p_value(self, threshold: float, alternative: Literal["less", "greater"]) -> float:
        """One-sided p-value of H0 "the statistic is on the other side of ``threshold``" against H1 "it is
        ``alternative`` than ``threshold``" (bootstrap: (1 + replicates on H0's side) / (B + 1))."""
        if self.t is not None:
            mean, se, df = self.t
            if se == 0.0:
                return 1.0 if (mean >= threshold if alternative == "less" else mean <= threshold) else 0.0
            cdf = float(sps.t.cdf((mean - threshold) / se, df))
            return cdf if alternative == "less" else 1.0 - cdf
        if self.replicates is None:
            raise ValueError("this estimate keeps no replicates or t parameters to compute a p-value from")
        on_null = np.count_nonzero(
            self.replicates >= threshold if alternative == "less" else self.replicates <= threshold
        )
        return float((1 + on_null) / (1 + len(self.replicates)))


def _percentile(boot: np.ndarray, level: float) -> tuple[float, float]:
    alpha = (1.0 - level) / 2.0
    return float(np.quantile(boot, alpha)), float(np.quantile(boot, 1.0 - alpha))


def _kept(boot: np.ndarray) -> tuple[np.ndarray, int]:
    finite = np.isfinite(boot)
    if not finite.any():
        raise ValueError("the statistic is undefined on every bootstrap resample")
    return boot[finite], int((~finite).sum())


def bootstrap(
    n: int, statistic: Callable[[np.ndarray], float], *, level: float = 0.95, seed: int = 0, n_boot: int = N_BOOT,
    method: str = "percentile bootstrap",
) -> Estimate:  # fmt: skip
    """Percentile bootstrap of ``statistic(indices)`` over ``n`` exchangeable samples.

    ``statistic`` receives an index array into the samples (``arange(n)`` for the point estimate), so ratio-of-sums
    statistics such as minibatch CKA resample whole batches, and a difference ``A(i) - B(i)`` of two models
    measured on the same samples is a paired bootstrap."""
    if n < 2:
        raise ValueError(f"bootstrap needs at least 2 samples, got n={n}")
    rng = np.random.default_rng(seed)
    boot, dropped = _kept(np.array([statistic(rng.integers(0, n, n)) for _ in range(n_boot)], dtype=float))
    low, high = _percentile(boot, level)
    return Estimate(float(statistic(np.arange(n))), low, high, level, n, method, boot, dropped=dropped)


def bootstrap_two_sample(
    n_a: int, n_b: int, statistic: Callable[[np.ndarray, np.ndarray], float], *, level: float = 0.95,
    seed: int = 0, n_boot: int = N_BOOT,
) -> Estimate:  # fmt: skip
    """Percentile bootstrap of ``statistic(idx_a, idx_b)`` resampling two independent samples."""
    if min(n_a, n_b) < 2:
        raise ValueError(f"bootstrap needs at least 2 samples per group, got {n_a} and {n_b}")
    rng = np.random.default_rng(seed)
    draws = [statistic(rng.integers(0, n_a, n_a), rng.integers(0, n_b, n_b)) for _ in range(n_boot)]
    boot, dropped = _kept(np.array(draws, dtype=float))
    low, high = _percentile(boot, level)
    value = float(statistic(np.arange(n_a), np.arange(n_b)))
    return Estimate(value, low, high, level, n_a, "two-sample percentile bootstrap", boot, None, dropped, n_b)


def _defined(values: Sequence[float | None]) -> tuple[np.ndarray, int]:
    arr = np.array([np.nan if v is None else v for v in values], dtype=float)
    return arr[np.isfinite(arr)], int((~np.isfinite(arr)).sum())


def t_interval(values: Sequence[float | None], *, level: float = 0.95) -> Estimate:
    """Student's t interval of the mean of per-seed estimates (undefined ones dropped and counted)."""
    x, dropped = _defined(values)
    if len(x) < 2:
        raise ValueError(f"a t interval needs at least 2 defined per-seed values, got {len(x)}")
    low, high = sps.ttest_1samp(x, 0.0).confidence_interval(confidence_level=level)
    se = float(x.std(ddof=1) / math.sqrt(len(x)))
    mean = float(x.mean())
    return Estimate(mean, float(low), float(high), level, len(x), "t over seeds", t=(mean, se, len(x) - 1.0),
                    dropped=dropped)  # fmt: skip


def welch_interval(a: Sequence[float | None], b: Sequence[float | None], *, level: float = 0.95) -> Estimate:
    """Welch's interval of mean(a) - mean(b) for two independent groups of per-seed estimates."""
    x, dropped_a = _defined(a)
    y, dropped_b = _defined(b)
    if min(len(x), len(y)) < 2:
        raise ValueError(f"Welch's interval needs at least 2 defined values per group, got {len(x)} and {len(y)}")
    res = sps.ttest_ind(x, y, equal_var=False)
    low, high = res.confidence_interval(confidence_level=level)
    va, vb = x.var(ddof=1) / len(x), y.var(ddof=1) / len(y)
    se, diff = float(math.sqrt(va + vb)), float(x.mean() - y.mean())
    df = float(res.df) if se > 0 else float(len(x) + len(y) - 2)
    if se == 0.0:  # scipy's interval is NaN when both groups are constant
        low = high = diff
    return Estimate(diff, float(low), float(high), level, len(x), "Welch t over seeds", t=(diff, se, df),
                    dropped=dropped_a + dropped_b, n_versus=len(y))  # fmt: skip


def decide(est: Estimate, direction: Direction, threshold: float) -> Verdict:
    """Supported if the interval excludes the threshold on the claimed side; contradicted if on the other.

    ``within`` is an equivalence rule, decided by two one-sided tests (Schuirmann 1987) at the interval's level:
    supported when the interval lies inside (-threshold, threshold), so that both "statistic <= -threshold" and
    "statistic >= threshold" are rejected; contradicted when it lies wholly outside, on either side; else
    inconclusive (an equivalence claim at level 0.90 is a pair of one-sided tests at 0.05 each)."""
    if direction == "within":
        margin = abs(threshold)
        if -margin < est.low and est.high < margin:
            return "supported"
        return "contradicted" if est.low > margin or est.high < -margin else "inconclusive"
    above, below = est.low > threshold, est.high < threshold
    if direction == "greater":
        return "supported" if above else "contradicted" if below else "inconclusive"
    return "supported" if below else "contradicted" if above else "inconclusive"


def contradiction_p(est: Estimate, direction: Direction, threshold: float) -> float:
    """The one-sided p-value of the evidence against the claimed side (for Holm's procedure). For ``within``, the
    evidence that the statistic lies outside the margin: the smaller of the one-sided p-values of "above the
    margin" and "below it". Under the null |statistic| <= threshold at most one side can reject (the sides are
    2 x threshold apart), so this test has the one-sided level, and the part is contradicted exactly when its
    interval lies wholly outside the margin, as the rule says."""
    if direction == "within":
        margin = abs(threshold)
        return min(est.p_value(margin, "greater"), est.p_value(-margin, "less"))
    return est.p_value(threshold, "less" if direction == "greater" else "greater")


def settle_point(est: Estimate, direction: Direction, threshold: float) -> float:
    """The value the interval must clear for a verdict: the threshold, or for ``within`` the margin's end on the
    estimate's side (clearing it settles the part either way: inside, supported; outside, contradicted)."""
    return math.copysign(abs(threshold), est.value) if direction == "within" else threshold


def effect_origin(direction: Direction, threshold: float) -> float:
    """Where a part's effect size is measured from: the threshold, or 0 (no difference) for ``within``."""
    return 0.0 if direction == "within" else threshold


def holm(p_values: Sequence[float], alpha: float) -> list[bool]:
    """Holm's step-down procedure: which hypotheses are rejected at family-wise level ``alpha`` (Holm 1979).

    scipy has no Holm correction (``scipy.stats.false_discovery_control`` controls the false discovery rate,
    not the family-wise error this needs), hence these lines."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    rejected = [False] * len(p_values)
    for rank, i in enumerate(order):
        if p_values[i] > alpha / (len(p_values) - rank):
            break
        rejected[i] = True
    return rejected


def prediction_interval(values: Sequence[float | None], *, level: float = 0.95) -> tuple[float, float]:
    """Where a new seed's estimate should fall: mean +- t_{k-1} s sqrt(1 + 1/k) of the k defined values."""
    x, _ = _defined(values)
    if len(x) < 2:
        raise ValueError(f"a prediction interval needs at least 2 defined values, got {len(x)}")
    half = float(sps.t.ppf(0.5 + level / 2, len(x) - 1) * x.std(ddof=1) * math.sqrt(1 + 1 / len(x)))
    return float(x.mean() - half), float(x.mean() + half)


def prediction_p(values: Sequence[float | None], new: float) -> float:
    """Two-sided p-value of a new seed's estimate under the predictive t distribution of ``values``."""
    x, _ = _defined(values)
    scale = float(x.std(ddof=1) * math.sqrt(1 + 1 / len(x)))
    if scale == 0.0:
        return 1.0 if math.isclose(new, float(x.mean()), rel_tol=1e-9, abs_tol=1e-12) else 0.0
    return float(2 * sps.t.sf(abs(new - x.mean()) / scale, len(x) - 1))


def samples_to_settle(est: Estimate, threshold: float) -> int | None:
    """Sampling units (images, batches or seeds) needed for the interval to exclude ``threshold`` if the estimate
    stays where it is: the half-width shrinks like 1/sqrt(n), n' = n (half-width / |estimate - threshold|)^2.
    None when the estimate sits on the threshold (no sample size settles it)."""
    gap = abs(est.value - threshold)
    if gap == 0.0:
        return None
    half = (est.high - est.low) / 2.0
    return max(est.n + 1, math.ceil(est.n * (half / gap) ** 2))


def standardized_effect(est: Estimate, threshold: float = 0.0) -> float:
    """Cohen's d-style effect size of a mean statistic: (estimate - threshold) / (sample standard deviation).

    The standard deviation is recovered from the interval: SE = (high - low) / (2 z_level) and SD = SE sqrt(n).
    For a plain mean this is Cohen's d against the threshold; for a two-sample difference with ``n`` the
    first group it is an approximate d."""
    z = NormalDist().inv_cdf(0.5 + est.level / 2.0)
    sd = (est.high - est.low) / (2.0 * z) * math.sqrt(est.n)
    if sd == 0.0:
        return math.copysign(math.inf, est.value - threshold) if est.value != threshold else 0.0
    return (est.value - threshold) / sd
