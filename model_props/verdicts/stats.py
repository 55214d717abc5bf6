"""Intervals, p-values, decisions and multiplicity: the one statistics module of verdicts, gate and study.

Every part of a claim reduces to a scalar statistic and a rule ``statistic <direction> threshold``. Its
interval depends on what the verdict is about (its *scope*):

- **checkpoint** (one set of weights): a percentile bootstrap over the report's sampling units (images,
  mini-batches). A statistic is evaluated on every resample at once: it takes a ``(resamples, n)`` matrix of
  indices into its samples and returns one value per row (:data:`~model_props.claims.base.Statistic`), so 2,000
  resamples cost one vectorised call instead of 2,000 Python calls. Two models measured on the same samples (the
  same test images, noise draws or Hessian batches) are compared *paired*: one resample of the shared indices
  feeds both (:func:`bootstrap` of a difference); models on different samples by :func:`bootstrap_two_sample`.
  Resamples on which the statistic is undefined (NaN) are dropped and counted.
- **architecture** (a recipe trained with k >= 3 seeds, the seed the unit of replication): a t interval over the
  per-seed estimates (:func:`t_interval`). The seed study is a two-stage sample: each training seed draws its own
  measurement sample (test images, noise, attack starts, Hessian batches), so each per-seed estimate carries its
  within-seed sampling error and the spread of the k estimates holds the between-seed and within-seed variance
  together (the summary-statistics estimator of a one-way random-effects mean: Searle, Casella & McCulloch 1992,
  Sec. 3.6; exact under normality with equal within-seed variances; the t quantile with k - 1 degrees of freedom
  is the small-k correction). Two recipes of one seed index share that seed's data order and measurement sample,
  so a comparison is **paired by seed index**: a t interval over the per-seed differences
  (:func:`paired_interval`). Welch's interval (:func:`welch_interval`) is only for two groups that share nothing
  (a user's checkpoints against a reference's study seeds).

Verdicts (:func:`decide`): *supported* when the interval lies on the claimed side of the threshold, *contradicted*
when it lies on the other side, else *inconclusive*. Within a claim, parts are combined by an intersection-union
rule (supported only when every applicable part is) and contradictions are controlled by Holm's step-down procedure
(:func:`holm`) on one-sided p-values (:meth:`Estimate.p_value`) at level (1 - confidence) / 2, the one-sided level
that matches the two-sided interval; an inconclusive part reports its minimum detectable effect at 80 % power
(:func:`~.effects.minimum_detectable_effect`). All resampling uses ``numpy.random.Generator(seed)``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Literal

import numpy as np
from scipy import stats as sps

from ..claims.base import Direction

__all__ = [
    "Direction", "Verdict", "Scope", "Repeated", "Estimate", "N_BOOT", "MIN_SEEDS", "POWER", "bootstrap",
    "bootstrap_two_sample", "resamples", "t_interval", "paired_interval", "welch_interval", "decide", "holm",
    "contradiction_p", "settle_point", "effect_origin", "finite_values",
]  # fmt: skip

Verdict = Literal["supported", "contradicted", "inconclusive"]
Scope = Literal["checkpoint", "architecture"]
N_BOOT = 2000
MIN_SEEDS = 3  # an architecture verdict needs at least this many seeds
POWER = 0.8  # the power at which a minimum detectable effect is stated


@dataclass(frozen=True)
class Repeated:
    """A sequential look's repeated interval ``value +- critical x se``: look ``look`` (0-based) of a design over
    ``sizes`` sampling units, ``critical`` its c_k carried to Student's t (:func:`~.sequential.critical_t`)."""

    se: float
    critical: float
    look: int
    sizes: tuple[int, ...]


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
    repeated: Repeated | None = None  # a sequential look's repeated interval (:mod:`.sequential`)

    @property
    def interval(self) -> tuple[float, float]:
        return (self.low, self.high)

    @property
    def standard_error(self) -> float:
        """A sequential look's standard error, the t interval's, or the bootstrap replicates' standard deviation."""
        if self.repeated is not None:
            return self.repeated.se
        if self.t is not None:
            return self.t[1]
        if self.replicates is not None and len(self.replicates) > 1:
            return float(np.std(self.replicates, ddof=1))
        return (self.high - self.low) / (2.0 * NormalDist().inv_cdf(0.5 + self.level / 2.0))

    def at_look(self, critical: float, look: int, sizes: Sequence[int]) -> Estimate:
        """Look ``look`` of a group-sequential design over ``sizes`` (:mod:`.sequential`): value +- critical x se, se
        the bootstrap's x sqrt(n / (n - 1)), the t SE ``critical`` is carried to (a bootstrap variance of a mean is
        the plug-in (n - 1) / n of s^2 / n: Efron & Tibshirani 1993, Ch. 5; liberal at 4 Hessian batches a look)."""
        n = sizes[look]
        if self.n != n:
            raise ValueError(f"look {look + 1} reads {n} units, and this estimate is over {self.n}")
        se = self.standard_error * math.sqrt(n / (n - 1))
        return dataclasses.replace(self, low=self.value - critical * se, high=self.value + critical * se,
                                   method=f"repeated interval of the {self.method}'s standard error",
                                   repeated=Repeated(se, critical, look, tuple(sizes)))  # fmt: skip

    def quantile(self, p: float) -> float:
        """The ``p`` quantile of the estimate's reference distribution, in standard errors: Student's t with the
        interval's degrees of freedom, or the normal for a bootstrap."""
        return float(sps.t.ppf(p, self.t[2])) if self.t is not None else NormalDist().inv_cdf(p)

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


def resamples(n: int, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """A ``(n_boot, n)`` matrix of indices drawn with replacement: row b is resample b."""
    return rng.integers(0, n, (n_boot, n))


def _rows(statistic: Callable[..., np.ndarray], *idx: np.ndarray) -> np.ndarray:
    values = np.asarray(statistic(*idx), dtype=float)
    if values.shape != (len(idx[0]),):
        raise ValueError(f"a statistic returns one value per resample: shape {values.shape} for {len(idx[0])} rows")
    return values


def bootstrap(
    n: int, statistic: Callable[[np.ndarray], np.ndarray], *, level: float = 0.95, seed: int = 0,
    n_boot: int = N_BOOT, method: str = "percentile bootstrap",
) -> Estimate:  # fmt: skip
    """Percentile bootstrap of ``statistic`` over ``n`` exchangeable samples.

    ``statistic`` receives a ``(rows, n)`` index matrix into the samples, each row one resample (``arange(n)``
    as the single row of the point estimate), and returns one value per row: ratio-of-sums statistics such as
    minibatch CKA resample whole batches, and a difference ``A(i) - B(i)`` of two models measured on the same
    samples is a paired bootstrap."""
    if n < 2:
        raise ValueError(f"bootstrap needs at least 2 samples, got n={n}")
    rng = np.random.default_rng(seed)
    boot, dropped = _kept(_rows(statistic, resamples(n, n_boot, rng)))
    low, high = _percentile(boot, level)
    value = float(_rows(statistic, np.arange(n)[None, :])[0])
    return Estimate(value, low, high, level, n, method, boot, dropped=dropped)


def bootstrap_two_sample(
    n_a: int, n_b: int, statistic: Callable[[np.ndarray, np.ndarray], np.ndarray], *, level: float = 0.95,
    seed: int = 0, n_boot: int = N_BOOT,
) -> Estimate:  # fmt: skip
    """Percentile bootstrap of ``statistic(idx_a, idx_b)`` resampling two independent samples (index matrices of
    ``n_boot`` rows each)."""
    if min(n_a, n_b) < 2:
        raise ValueError(f"bootstrap needs at least 2 samples per group, got {n_a} and {n_b}")
    rng = np.random.default_rng(seed)
    boot, dropped = _kept(_rows(statistic, resamples(n_a, n_boot, rng), resamples(n_b, n_boot, rng)))
    low, high = _percentile(boot, level)
    value = float(_rows(statistic, np.arange(n_a)[None, :], np.arange(n_b)[None, :])[0])
    return Estimate(value, low, high, level, n_a, "two-sample percentile bootstrap", boot, None, dropped, n_b)


def _array(values: Sequence[float | None]) -> np.ndarray:
    return np.array([np.nan if v is None else v for v in values], dtype=float)


def finite_values(values: Sequence[float | None]) -> tuple[np.ndarray, int]:
    """The finite values of per-seed estimates (None, NaN and inf are undefined), and how many were dropped."""
    arr = _array(values)
    return arr[np.isfinite(arr)], int((~np.isfinite(arr)).sum())


def t_interval(values: Sequence[float | None], *, level: float = 0.95, method: str = "t over seeds") -> Estimate:
    """Student's t interval of the mean of per-seed estimates (undefined ones dropped and counted)."""
    x, dropped = finite_values(values)
    if len(x) < 2:
        raise ValueError(f"a t interval needs at least 2 defined per-seed values, got {len(x)}")
    mean = float(x.mean())
    se = 0.0 if np.ptp(x) == 0 else float(x.std(ddof=1) / math.sqrt(len(x)))
    if se == 0.0:  # scipy's interval is NaN for a constant sample
        low = high = mean
    else:
        low, high = sps.ttest_1samp(x, 0.0).confidence_interval(confidence_level=level)
    return Estimate(mean, float(low), float(high), level, len(x), method, t=(mean, se, len(x) - 1.0),
                    dropped=dropped)  # fmt: skip


def paired_interval(a: Sequence[float | None], b: Sequence[float | None], *, level: float = 0.95) -> Estimate:
    """The t interval of mean(a_i - b_i) over the seed indices i where both are defined: two recipes of one seed
    index share its data order and measurement sample (a paired design); a seed undefined on either side is
    dropped and counted."""
    if len(a) != len(b):
        raise ValueError(f"a paired interval needs one value per seed on both sides, got {len(a)} and {len(b)}")
    return t_interval(list(_array(a) - _array(b)), level=level, method="paired t over seeds")


def welch_interval(a: Sequence[float | None], b: Sequence[float | None], *, level: float = 0.95) -> Estimate:
    """Welch's interval of mean(a) - mean(b) for two independent groups of per-seed estimates (groups that share
    nothing: no seed index, no sample)."""
    x, dropped_a = finite_values(a)
    y, dropped_b = finite_values(b)
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
