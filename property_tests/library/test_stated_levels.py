"""Each rule at the level it states: a sequential look's standard error is the t standard error its critical value
is carried with (not the bootstrap's plug-in, sqrt((n-1)/n) of it), a sequential part's minimum detectable effect
uses the last look's critical value, an estimate's interval moves to another level by the method that made it, and
the number of seeds that would settle a part comes with the correction a second look needs."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps
from toy_reports import Looked, looks  # this folder is on sys.path (pytest's "prepend" import mode)

from model_props.claims.base import Claim, Part
from model_props.claims.park2022 import PAPER
from model_props.verdicts import Evidence, PerSeed, judge
from model_props.verdicts.disputed import at_level
from model_props.verdicts.sequential import critical_t, design
from model_props.verdicts.stats import bootstrap, t_interval

BATCHES = 16  # the smoke profile's Hessian batches: 4 looks of 4


def _part(direction: str = "greater") -> Part:
    return Part("nep", "mean NEP", lambda r, i: r.values[i].mean(axis=-1), direction, sampling="batches",  # type: ignore[arg-type]
                report="spectrum")  # fmt: skip


def _claim(part: Part) -> Claim:
    return Claim("toy.levels", 97, PAPER, "s", "statement", "units", "evidence", "spectrum", (part,), lambda a: None)


def _judged(values: np.ndarray, n_boot: int = 20_000):
    claim = _claim(_part())
    found = looks(claim, Looked("a", values), n_boot=n_boot)
    return judge(Evidence(claim, "a", "checkpoint", {"nep": found}), n_boot=n_boot).parts[0]


def test_a_sequential_look_reads_the_t_standard_error():
    """Decided at its first look of 4 batches: the bootstrap's standard deviation of a mean is sqrt(3/4) = 0.87 of
    s / sqrt(4), which would make the look's interval 13 % too narrow; within 3 % (20,000 resamples: about 0.5 %)."""
    values = np.random.default_rng(0).normal(1.0, 0.05, BATCHES)
    p = _judged(values)
    assert p.verdict == "supported" and p.estimate.n == 4
    t_se = values[:4].std(ddof=1) / 2
    assert p.estimate.standard_error == pytest.approx(t_se, rel=0.03)
    assert p.estimate.high - p.estimate.value == pytest.approx(
        critical_t(design(BATCHES))[0] * p.estimate.standard_error
    )


def test_a_sequential_parts_minimum_detectable_effect_uses_the_last_looks_critical_value():
    p = _judged(np.tile([1.0, -1.0], BATCHES // 2))  # mean 0 at every look: undecided at the last
    assert p.verdict == "inconclusive" and p.estimate.n == BATCHES
    c_last = float(critical_t(design(BATCHES))[-1])
    assert c_last > 2.1  # not the fixed interval's 1.96
    se = p.estimate.standard_error
    assert p.minimum_detectable_effect == pytest.approx((c_last + sps.norm.ppf(0.8)) * se, rel=1e-9)


def test_an_interval_moves_to_another_level_by_the_method_that_made_it():
    seeds = [0.1, -0.05, 0.2, 0.0, 0.05]
    t90 = t_interval(seeds, level=0.90)
    assert at_level(t90, 0.95).interval == pytest.approx(t_interval(seeds, level=0.95).interval, rel=1e-12)
    values = np.random.default_rng(1).normal(0.0, 1.0, 200)
    boot = bootstrap(200, lambda i: values[i].mean(axis=-1), level=0.90, n_boot=4000)
    assert at_level(boot, 0.90).interval == pytest.approx(boot.interval, rel=1e-12)
    wide = at_level(boot, 0.99)
    assert wide.low < boot.low and wide.high > boot.high
    looked = _judged(np.tile([1.0, -1.0], BATCHES // 2))  # a sequential look's repeated interval
    assert at_level(looked.estimate, 0.95).interval == pytest.approx(looked.estimate.interval, rel=1e-9)
    assert at_level(looked.estimate, 0.99).high > looked.estimate.high


def test_the_seeds_that_would_settle_a_part_come_with_the_correction_a_second_look_needs():
    claim = _claim(_part())
    out = judge(Evidence(claim, "a", "architecture", {"nep": PerSeed("a", (0.1, -0.05, 0.2, 0.0, 0.05))},
                         seeds=(0, 1, 2, 3, 4)))  # fmt: skip
    p = out.parts[0]
    assert p.verdict == "inconclusive" and p.samples_to_settle is not None and p.samples_to_settle > 5
    text = p.describe()
    assert f"about {p.samples_to_settle} seeds" in text and "second look" in text and "corrected for" in text
