"""How large an effect is, and how large one a design could see: the standardized effect of an estimate, the samples
(or seeds) that would likely settle an inconclusive part, and its minimum detectable effect. Each uses the quantile
of the interval it describes: Student's t at the estimate's degrees of freedom over seeds, the normal for a
bootstrap."""

from __future__ import annotations

import math

from scipy import stats as sps

from .stats import POWER, Estimate

__all__ = ["samples_to_settle", "standardized_effect", "minimum_detectable_effect"]


def samples_to_settle(est: Estimate, threshold: float) -> int | None:
    """Sampling units (images, batches or seeds) needed for the interval to exclude ``threshold`` if the estimate
    and the spread stay where they are: the smallest n' whose half-width q(n') sd / sqrt(n') falls below
    |estimate - threshold|, with sd = SE sqrt(n) and q the interval's quantile: Student's t with n' - 1 degrees of
    freedom over seeds (so that 3 seeds are not promised a normal interval's width), the normal for a bootstrap.
    None when the estimate sits on the threshold (no sample size settles it).

    A figure for planning the next study, not an invitation to top this one up: adding seeds or samples after an
    inconclusive verdict and judging again is a second look at the same question, and the stated level then holds
    only when the looks are corrected for (a group-sequential design, or Bonferroni over the looks: each judged at
    the level divided by their number)."""
    gap = abs(est.value - threshold)
    if gap == 0.0:
        return None
    sd = est.standard_error * math.sqrt(est.n)
    p = 0.5 + est.level / 2.0
    if est.t is None:
        return max(est.n + 1, math.ceil(est.n * (((est.high - est.low) / 2.0) / gap) ** 2))
    n = est.n + 1
    while float(sps.t.ppf(p, n - 1)) * sd / math.sqrt(n) >= gap:
        n = max(n + 1, math.ceil(n * 1.05))  # grows geometrically: a tiny gap needs no million iterations
    return n


def standardized_effect(est: Estimate, threshold: float = 0.0) -> float:
    """Cohen's d-style effect size of a mean statistic: (estimate - threshold) / (sample standard deviation).

    The standard deviation is SE sqrt(n): the t interval's own standard error over seeds (what the t quantile at
    k gives back from the interval), the bootstrap replicates' standard deviation over images or batches. For a
    plain mean this is Cohen's d against the threshold; for a paired difference, d of the differences; for a
    two-sample difference with ``n`` the first group it is an approximate d."""
    sd = est.standard_error * math.sqrt(est.n)
    if sd == 0.0:
        return math.copysign(math.inf, est.value - threshold) if est.value != threshold else 0.0
    return (est.value - threshold) / sd


def minimum_detectable_effect(est: Estimate, power: float = POWER) -> float:
    """The smallest distance from the threshold (a margin's end, for ``within``) at which a true effect would be
    decided by this design with probability ``power``: (q_{1-alpha} + q_power) x SE, with alpha = (1 - level) / 2
    the one-sided level of the interval and q the quantiles of Student's t at the estimate's degrees of freedom
    (seeds: the study's k) or of the normal (a bootstrap); for a sequential part q_{1-alpha} is the last look's
    critical value c_K, where its undecided interval ends. An inconclusive part whose estimate lies closer to the
    threshold than this was too small for the design to see; one whose interval is this wide needs more samples or
    seeds to tell."""
    alpha = (1.0 - est.level) / 2.0
    bound = est.repeated.critical if est.repeated is not None else est.quantile(1.0 - alpha)
    return (bound + est.quantile(power)) * est.standard_error
