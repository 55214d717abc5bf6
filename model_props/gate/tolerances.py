"""The release gate: gating claims and non-inferiority tolerances against a baseline (docs/design.md#who-uses-it).

The ``[tool.model_props.gate]`` table of the project's pyproject is the single source::

    [tool.model_props.gate]
    claims = ["park2022.msa-lowpass", "raghu2021.skip-dominates"]  # must be supported on the candidate
    baseline = "runs/release-1.safetensors"                        # the previous release's weights (optional)

    [tool.model_props.gate.tolerances]                              # needs a baseline
    high_frequency_noise_drop = 0.02   # upper bound of (candidate - baseline) <= 0.02 (2 points)
    nep = 0.05                         # upper bound of the NEP difference <= 0.05
    accuracy = 0.01                    # a higher-is-better statistic: lower bound of the difference >= -0.01

The candidate is the model under test (``--model``/``--checkpoint`` or the table's ``models``); the baseline is
the same model spec loaded from ``baseline``, measured in the same run with the same code on the same samples
(test images, Hessian batches and noise draws follow the session seed). Each tolerance is a non-inferiority
test on the paired percentile-bootstrap interval of (candidate - baseline), resampling the shared samples:
the worse-direction end of the 95 % interval may not pass the tolerance. A statistic of a report measured in
chunks (attacks, noise, corruptions, the Hessian batches) is tested group-sequentially, look by look, and stops
measuring once the tolerance is passed or plainly exceeded (:func:`check_tolerance`). Pairing removes the
between-image variance both models share, so an unchanged model passes any tolerance and a real regression shows
early. ``pytest -m gate`` runs the gating claims and one test per tolerance, and exits non-zero exactly when a
gating claim is not supported or a tolerance is exceeded.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ConfigError, MeasurementError, choices

__all__ = ["GateStatistic", "GATE_STATISTICS", "Gate", "read_gate", "GateOutcome", "check_tolerance"]


@dataclass(frozen=True)
class GateStatistic:
    """A per-model statistic that a tolerance can bound: which report it reads and which way is worse."""

    report: str
    sampling: str
    statistic: Callable[[Any, np.ndarray], np.ndarray]  # (report, (rows, n) index matrix) -> (rows,)
    higher_is_worse: bool
    description: str
    eps_255: int | None = None  # the attack radius it reads (1/255 units): the profile must attack at it


def _band(frequencies: tuple[float, ...]):
    return lambda r, i: np.mean([r.band_drop(f, i) for f in frequencies], axis=0)


def _pgd(eps_255: int):
    return lambda r, i: r.drop("pgd", eps_255 / 255, i)


def _spectrum(fn_name: str):
    from ..measurements.functional import spectrum

    fn = getattr(spectrum, fn_name)
    return lambda r, i: fn(r.pooled(i))


GATE_STATISTICS: dict[str, GateStatistic] = {
    "accuracy": GateStatistic("fit", "images", lambda r, i: r.accuracy(i), False, "test accuracy"),
    "nll": GateStatistic("fit", "images", lambda r, i: r.nll(i), True, "test NLL"),
    "ece": GateStatistic("fit", "images", lambda r, i: r.ece(i), True, "test ECE (10 bins)"),
    "train_nll": GateStatistic("fit", "train_images", lambda r, i: r.train_nll_mean(i), True, "train NLL"),
    "nep": GateStatistic(
        "spectrum", "batches", _spectrum("nep"), True, "NEP (fraction of negative top Hessian eigenvalues)"
    ),
    "ape": GateStatistic("spectrum", "batches", _spectrum("ape"), True, "APE (mean positive top Hessian eigenvalue)"),
    "low_frequency_noise_drop": GateStatistic(
        "noise", "images", _band((0.1,)), True, "accuracy drop under noise at 0.1π"
    ),
    "high_frequency_noise_drop": GateStatistic(
        "noise", "images", _band((0.7, 0.8, 0.9)), True, "mean accuracy drop under noise at 0.7π-0.9π"
    ),
    "corruption_accuracy": GateStatistic(
        "corruption", "images", lambda r, i: r.mean_accuracy(i), False, "mean corruption accuracy"
    ),
    **{
        f"pgd_drop_{e}": GateStatistic(
            "attack", "images", _pgd(e), True, f"accuracy drop under PGD at eps {e}/255", eps_255=e
        )
        for e in (1, 2, 4, 8)
    },
}


@dataclass(frozen=True)
class Gate:
    claims: tuple[str, ...] = ()
    baseline: Path | None = None
    tolerances: Mapping[str, float] = field(default_factory=dict)

    @property
    def active(self) -> bool:
        return bool(self.claims or self.tolerances)


_KEYS = ("claims", "baseline", "tolerances")


def read_gate(table: Mapping[str, Any], base: Path) -> Gate:
    """The gate of a ``[tool.model_props.gate]`` table (paths relative to ``base``), validated: unknown keys,
    claim ids and statistics are errors that list the valid ones."""
    from ..claims import CLAIMS

    where = "[tool.model_props.gate]"
    unknown = set(table) - set(_KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown keys {sorted(unknown)}; valid: {choices(_KEYS)}")
    claims = table.get("claims", [])
    if not isinstance(claims, list) or not all(isinstance(c, str) for c in claims):
        raise ConfigError(f"{where}: claims={claims!r} must be a list of claim ids")
    bad = [c for c in claims if c not in CLAIMS]
    if bad:
        raise ConfigError(f"{where}: unknown claims {bad}; valid: {choices(CLAIMS)}")
    tolerances = table.get("tolerances", {})
    if not isinstance(tolerances, dict):
        raise ConfigError(f"{where}: tolerances must be a table of statistic = tolerance")
    bad = [s for s in tolerances if s not in GATE_STATISTICS]
    if bad:
        raise ConfigError(f"{where}.tolerances: unknown statistics {bad}; valid: {choices(GATE_STATISTICS)}")
    for name, tol in tolerances.items():
        if isinstance(tol, bool) or not isinstance(tol, (int, float)) or tol < 0:
            raise ConfigError(f"{where}.tolerances: {name}={tol!r} must be a number >= 0")
    baseline = table.get("baseline")
    if tolerances and baseline is None:
        raise ConfigError(f'{where}: tolerances compare with a baseline; give baseline = "path/to/weights"')
    return Gate(
        tuple(claims),
        None if baseline is None else base / Path(baseline).expanduser(),
        {k: float(v) for k, v in tolerances.items()},
    )


@dataclass(frozen=True)
class GateOutcome:
    statistic: str
    tolerance: float
    passed: bool
    candidate: Any  # stats.Estimate
    baseline: Any
    difference: Any
    message: str


def _paired(name: str, spec: GateStatistic, candidate: Any, baseline: Any, level: float, seed: int,
            n_boot: int) -> tuple[Any, Any, Any]:  # fmt: skip
    """The candidate's, the baseline's and the paired difference's bootstrap estimates of ``spec``."""
    from ..verdicts.stats import bootstrap

    n_c, n_b = candidate.size(spec.sampling), baseline.size(spec.sampling)
    if n_c != n_b:
        raise MeasurementError(
            f"gate {name}: the candidate was measured on {n_c} {spec.sampling} and the baseline on {n_b}; "
            "a paired comparison needs the same samples (same profile, seed and measurement settings)"
        )
    stat = spec.statistic
    return (
        bootstrap(n_c, lambda i: stat(candidate, i), level=level, seed=seed, n_boot=n_boot),
        bootstrap(n_b, lambda i: stat(baseline, i), level=level, seed=seed, n_boot=n_boot),
        bootstrap(n_c, lambda i: stat(candidate, i) - stat(baseline, i), level=level, seed=seed, n_boot=n_boot),
    )


def check_tolerance(
    name: str,
    tolerance: float,
    reports: Callable[[int | None], tuple[Any, Any]],
    *,
    candidate: str,
    baseline: str,
    size: int | None = None,
    level: float = 0.95,
    seed: int = 0,
    n_boot: int = 2000,
) -> GateOutcome:
    """Non-inferiority of ``name`` (candidate - baseline) at ``tolerance``, from the two models' reports:
    ``reports(None)`` gives both whole reports. Where the statistic's report is measured in chunks (``size``: its
    whole sample), ``reports(n)`` gives both on their first n units, and the test is group-sequential like a
    checkpoint verdict (docs/design.md#sequential-checkpoint-verdicts): it stops at the first look whose repeated
    interval passes the tolerance or lies wholly past it, and at the last look passes only inside it."""
    from ..verdicts.sequential import critical_t, design

    spec = GATE_STATISTICS[name]
    looks = design(size, alpha=1.0 - level) if size is not None else None
    critical = [float(c) for c in critical_t(looks)] if looks is not None else []
    for k, n in enumerate(looks.sizes if looks is not None else (None,)):
        candidate_report, baseline_report = reports(n)
        est_c, est_b, diff = _paired(name, spec, candidate_report, baseline_report, level, seed, n_boot)
        if looks is not None:  # the repeated interval, as a checkpoint verdict's
            diff = diff.at_look(critical[k], k, looks.sizes)
            worse = diff.low > tolerance if spec.higher_is_worse else diff.high < -tolerance
            better = diff.high <= tolerance if spec.higher_is_worse else diff.low >= -tolerance
            if worse or better:
                break
    if spec.higher_is_worse:
        end, bound, passed, limit = "upper", diff.high, diff.high <= tolerance, f"<= +{tolerance:g}"
    else:
        end, bound, passed, limit = "lower", diff.low, diff.low >= -tolerance, f">= -{tolerance:g}"
    over = f"over {diff.n} paired {spec.sampling}"
    if looks is not None:
        over = (f"repeated interval at look {k + 1} of {len(looks.sizes)}, {over} of {looks.sizes[-1]} (sequential, "
                "O'Brien-Fleming spending)")  # fmt: skip
    message = (
        f"gate {name} ({spec.description}; {'higher' if spec.higher_is_worse else 'lower'} is worse): "
        f"candidate {candidate} {est_c.value:.4g} [{est_c.low:.4g}, {est_c.high:.4g}], baseline {baseline} "
        f"{est_b.value:.4g} [{est_b.low:.4g}, {est_b.high:.4g}]; difference (candidate - baseline) "
        f"{diff.value:+.4g}, {level:.0%} CI [{diff.low:+.4g}, {diff.high:+.4g}] {over}: "
        f"its {end} bound {bound:+.4g} {'is within' if passed else 'EXCEEDS'} the tolerance ({end} bound {limit})"
    )
    return GateOutcome(name, tolerance, passed, est_c, est_b, diff, message)
