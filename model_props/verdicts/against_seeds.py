"""One set of weights against a recipe's committed seeds: the checkpoint-scope interval of a part that compares the
weights under test with a recipe this session does not train (a variant), read from the seed study.

The weights' statistic x is measured on their own sample; each of the recipe's k seeds on its own. The two sides
share nothing, so the difference is Welch's, with the weights' checkpoint-scope standard error in place of a group's::

    d = sign (x - mean(v)),    SE^2 = SE_x^2 + s_v^2 / k,
    df = SE^4 / (SE_x^4 / (n - 1) + (s_v^2 / k)^2 / (k - 1))        (Welch 1947; Satterthwaite 1946)

``v`` the recipe's per-seed estimates (undefined ones dropped and counted), ``s_v`` their standard deviation, ``n``
the weights' sampling units and ``SE_x`` their interval's standard error (the jackknife's below 30 units, else the
bootstrap replicates' standard deviation: :mod:`.small_sample`); ``sign`` is +1 where the weights are the part's
subject and -1 where they are its ``versus``. The recipe enters through the mean over its training seeds, what the
recipe gives in expectation, not through one draw of it: the verdict stays about these weights, compared with the
recipe (a trained copy, with ``--claims-live=all``, compares them with that one draw instead). The estimate counts
the k seeds as its units: the seeds' term is the floor of its standard error, which more images of the weights do not
lower.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from scipy import stats as sps

from .stats import Estimate, finite_values

__all__ = ["against_seeds"]

_METHOD = "Welch t: these weights against the recipe's seeds"


def against_seeds(weights: Estimate, n: int, seeds: Sequence[float | None], *, weights_first: bool,
                  level: float) -> Estimate:  # fmt: skip
    """The interval of (weights - mean(seeds)), or of (mean(seeds) - weights) where not ``weights_first``, at
    ``level`` (module docstring); ``weights`` is the weights' own checkpoint-scope estimate over ``n`` units."""
    v, dropped = finite_values(seeds)
    k = len(v)
    if k < 2:
        raise ValueError(f"a comparison with a recipe's seeds needs at least 2 defined per-seed values, got {k}")
    sign = 1.0 if weights_first else -1.0
    diff = sign * (weights.value - float(v.mean()))
    var_x, var_v = weights.standard_error**2, float(v.var(ddof=1)) / k
    se = math.sqrt(var_x + var_v)
    if se == 0.0:
        return Estimate(diff, diff, diff, level, k, _METHOD, t=(diff, 0.0, n + k - 2.0), dropped=dropped)
    df = se**4 / (var_x**2 / max(n - 1, 1) + var_v**2 / (k - 1))
    half = float(sps.t.ppf(0.5 + level / 2.0, df)) * se
    return Estimate(diff, diff - half, diff + half, level, k, _METHOD, t=(diff, se, df), dropped=dropped)
