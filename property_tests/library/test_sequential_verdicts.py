"""Sequential checkpoint verdicts (docs/design.md#sequential-checkpoint-verdicts): the gatherer's loop on hand-made
looked reports stops at the first look that decides a part and reads no further, the judge refuses evidence stopped at
an undecided look, uses the whole sample when nothing is
decided, and hands Holm a repeated p-value rounded up to Holm's own levels."""

from __future__ import annotations

import numpy as np
import pytest
from toy_reports import Looked, Scores, looks  # this folder is on sys.path (pytest's "prepend" import mode)

from model_props.claims.base import Claim, Part
from model_props.claims.park2022 import PAPER
from model_props.verdicts import Evidence, Measured, OnLooks, OnReports, judge
from model_props.verdicts.sequential import boundaries, critical_t, design, repeated_p

N = 512  # the smoke profile's attack images: 8 looks of 64


def claim(*parts: Part) -> Claim:
    return Claim("toy.claim", 99, PAPER, "s", "statement", "units", "evidence", "attack", parts, lambda a: None)


def part(name: str = "p", direction: str = "greater", **kw) -> Part:
    return Part(name, "mean score", lambda r, i: r.values[i].mean(axis=-1), direction, report="attack", **kw)  # type: ignore[arg-type]


def looked(name: str, values: np.ndarray, asked: list[int]) -> Looked:
    """A model's values whose prefixes record how far the gatherer read."""
    return Looked(name, values, asked)


def test_a_clear_effect_stops_at_the_first_look_and_reads_no_further():
    asked: list[int] = []
    values = np.random.default_rng(0).normal(1.0, 0.5, N)  # 16 standard errors at the first look
    c = claim(part("p"))
    out = judge(Evidence(c, "a", "checkpoint", {"p": looks(c, looked("a", values, asked), n_boot=500)}), n_boot=500)
    p = out.parts[0]
    assert p.verdict == "supported" and max(asked) == 64 and p.estimate.n == 64 and p.sample == N
    assert (p.to_json()["n"], p.to_json()["sample"]) == (64, N)
    assert "look 1 of 8, on 64 of 512 images" in p.note
    assert p.estimate.low > 0.0 and "repeated interval" in p.estimate.method
    less = claim(part("p", "less"))
    wrong = judge(
        Evidence(less, "a", "checkpoint", {"p": looks(less, looked("a", values, []), n_boot=500)}), n_boot=500
    )
    assert wrong.parts[0].verdict == "contradicted" and wrong.parts[0].p_contradiction == pytest.approx(0.025 / 1)


def test_no_effect_reads_the_whole_sample_and_is_inconclusive_with_the_last_looks_interval():
    asked: list[int] = []
    values = np.tile([1.0, -1.0], N // 2)  # mean exactly 0 at every look
    c = claim(part("p"))
    out = judge(Evidence(c, "a", "checkpoint", {"p": looks(c, looked("a", values, asked), n_boot=500)}), n_boot=500)
    p = out.parts[0]
    assert p.verdict == "inconclusive" and max(asked) == N and p.estimate.n == N
    assert "undecided at look 8 of 8" in p.note and p.p_contradiction == 1.0
    se = p.estimate.standard_error  # the last look's interval is c_8 (carried to t) standard errors wide a side
    assert p.estimate.high - p.estimate.value == pytest.approx(critical_t(design(N))[-1] * se)


def test_a_paired_comparison_is_judged_on_both_models_prefixes():
    rng = np.random.default_rng(1)
    shared = rng.normal(0.0, 1.0, N)
    a, b = shared + 0.3 + rng.normal(0, 0.1, N), shared
    asked_a: list[int] = []
    asked_b: list[int] = []
    c = claim(part("p", versus="b"))
    found = looks(c, looked("a", a, asked_a), looked("b", b, asked_b), n_boot=500)
    out = judge(Evidence(c, "a", "checkpoint", {"p": found}), n_boot=500)
    assert out.parts[0].verdict == "supported" and out.parts[0].paired
    assert asked_a == asked_b == [64]  # the paired difference has sd 0.1: decided at once


def test_the_repeated_p_value_is_rounded_up_to_holms_levels():
    d = design(N)
    levels = [0.025 / j for j in (1, 2, 3)]
    nominal = critical_t(d)[2]
    assert repeated_p(d, 2, nominal + 1e-6, levels) == 0.025  # just outside the 95 % repeated interval
    assert repeated_p(d, 2, nominal - 1e-6, levels) == 1.0  # inside it: not rejected at any level
    strict = critical_t(type(d)(d.sizes, tuple(boundaries(d.fractions, 2 * 0.025 / 3)), 2 * 0.025 / 3))[2]
    assert repeated_p(d, 2, strict + 1e-6, levels) == pytest.approx(0.025 / 3)
    assert repeated_p(d, 2, (nominal + strict) / 2, levels) in (0.025 / 2, 0.025)


def test_holm_turns_a_marginal_sequential_contradiction_among_three_parts_inconclusive():
    """Each part just contradicted at its first look's 95 % repeated interval, not at 2.5 % / 3: Holm keeps none."""
    d = design(N)
    c1 = critical_t(d)[0]
    base = np.tile([1.0, -1.0], N // 2)
    se = base[:64].std(ddof=1) / 8  # the first look's standard error (bootstrap: about it)
    values = base - (c1 + 0.6) * se  # about 0.6 standard errors past the first look's bound
    c = claim(part("p1"), part("p2"), part("p3"))
    ev = {n: looks(c, looked("a", values, []), n_boot=2000, name=n) for n in ("p1", "p2", "p3")}
    one = claim(part("p1"))
    single = judge(Evidence(one, "a", "checkpoint", {"p1": looks(one, looked("a", values, []), n_boot=2000, name="p1")}),
                   n_boot=2000)  # fmt: skip
    assert single.verdict == "contradicted"
    three = judge(Evidence(c, "a", "checkpoint", ev), n_boot=2000)
    assert three.verdict == "inconclusive" and "before Holm's correction" in three.parts[0].note


class Correct:
    """An attack report's stand-in: per image, correct (1) or not on the clean image and under PGD at 1/255."""

    def __init__(self, clean: np.ndarray, pgd: np.ndarray):
        self.clean, self.pgd = clean, pgd

    def size(self, sampling: str) -> int:
        return len(self.clean)

    def drop(self, attack: str, eps: float, idx: np.ndarray) -> np.ndarray:
        return (self.clean[idx] - self.pgd[idx]).mean(axis=-1)


def gate(candidate: Correct, baseline: Correct, asked: list[int]):
    from model_props.gate import check_tolerance

    def reports(n: int | None) -> tuple[Correct, Correct]:
        asked.append(n or N)
        cut = slice(0, n)
        return (Correct(candidate.clean[cut], candidate.pgd[cut]), Correct(baseline.clean[cut], baseline.pgd[cut]))

    return check_tolerance("pgd_drop_1", 0.02, reports, candidate="new", baseline="old", size=N, n_boot=500)


def test_the_gate_stops_once_the_tolerance_is_passed_or_plainly_exceeded():
    rng = np.random.default_rng(3)
    clean = np.ones(N)
    old = Correct(clean, (rng.random(N) < 0.7).astype(float))
    asked: list[int] = []
    same = gate(old, old, asked)  # an unchanged model: every paired difference is 0
    assert same.passed and asked == [64] and "look 1 of 8" in same.message
    broken = Correct(clean, np.zeros(N))  # PGD now breaks every image: its drop rises by about 0.7
    asked = []
    worse = gate(broken, old, asked)
    assert not worse.passed and asked == [64] and "EXCEEDS" in worse.message
    slightly = Correct(clean, np.where(rng.random(N) < 0.03, 0.0, old.pgd))  # 2 points worse: near the tolerance
    asked = []
    near = gate(slightly, old, asked)
    assert max(asked) > 64 and near.difference.n == max(asked)  # not decided at the first look


def test_the_gates_repeated_interval_on_a_mean_is_the_t_interval():
    """One look of 4 paired images: the gate's interval on the mean difference is mean +- t(3) sd / sqrt(4), sd with
    n - 1, as a checkpoint verdict's repeated interval is (the bootstrap's standard error, whose variance divides by
    n, scaled by sqrt(n / (n - 1))); unscaled, it would be 13 % narrower."""
    from scipy import stats

    from model_props.gate import check_tolerance

    baseline, candidate = Correct(np.ones(4), np.ones(4)), Correct(np.ones(4), np.array([0.0, 1.0, 0.0, 1.0]))
    outcome = check_tolerance("pgd_drop_1", 0.02, lambda n: (candidate, baseline), candidate="new", baseline="old",
                              size=4, n_boot=20000)  # fmt: skip
    d, differences = outcome.difference, np.array([1.0, 0.0, 1.0, 0.0])
    assert d.n == 4 and d.value == pytest.approx(0.5)
    assert (d.high - d.low) / 2 == pytest.approx(stats.t.ppf(0.975, 3) * differences.std(ddof=1) / 2, rel=0.02)


def test_the_judges_bootstrap_looks_agree_with_the_analytic_rule_on_a_mean():
    """The judge reads any statistic's bootstrap standard error; on a mean it must decide as the analytic repeated
    interval of :func:`decide_sequential` (mean +- c_k sd / sqrt(n_k)) does, up to bootstrap noise at a bound."""
    from model_props.verdicts.sequential import decide_sequential, look_statistics

    rng = np.random.default_rng(4)
    d = design(N)
    values = rng.normal(3.0 / np.sqrt(N), 1.0, (40, N))  # 3 standard errors of the full sample: stops anywhere
    analytic = decide_sequential(*look_statistics(values, d.sizes), d, "greater", 0.0)
    same = 0
    for row, verdict, used in zip(values, analytic.verdict, analytic.used):
        c = claim(part("p"))
        out = judge(Evidence(c, "a", "checkpoint", {"p": looks(c, looked("a", row, []), n_boot=1000)}), n_boot=1000)
        same += out.parts[0].verdict == verdict and out.parts[0].estimate.n == used
    assert same >= 36, f"{same} of 40 replicates decided alike"
    assert len(set(analytic.used)) > 2  # the replicates stop at several looks


def test_an_equivalence_stops_once_its_repeated_interval_is_inside_the_margin_or_wholly_outside():
    rng = np.random.default_rng(6)
    c = Claim("toy.equivalent", 98, PAPER, "s", "statement", "units", "evidence", "attack",
              (part("p", "within", threshold=0.05),), lambda a: None, level=0.90)  # fmt: skip
    asked: list[int] = []
    found = looks(c, looked("a", rng.normal(0, 0.05, N), asked), n_boot=500)
    inside = judge(Evidence(c, "a", "checkpoint", {"p": found}), n_boot=500)
    assert inside.parts[0].verdict == "supported" and asked == [64]
    assert -0.05 < inside.parts[0].estimate.low and inside.parts[0].estimate.high < 0.05
    asked = []
    found = looks(c, looked("a", rng.normal(0.3, 0.05, N), asked), n_boot=500)
    outside = judge(Evidence(c, "a", "checkpoint", {"p": found}), n_boot=500)
    assert outside.parts[0].verdict == "contradicted" and asked == [64]
    assert outside.parts[0].p_contradiction == pytest.approx(0.05)  # the claim's level 0.90: 5 % a side


def test_the_judge_refuses_evidence_stopped_at_an_undecided_look():
    """The evidence is plain data: one stopped before the rule stops (an undecided look that is not the last), or
    with reports of another size than its look's, is an error, not a verdict."""
    c = claim(part("p"))
    values = np.tile([1.0, -1.0], N // 2)  # undecided at every look
    early = OnLooks(OnReports(Measured("a", Scores(values[:64]), "test")), 0, N)
    with pytest.raises(ValueError, match="undecided at look 1 of 8"):
        judge(Evidence(c, "a", "checkpoint", {"p": early}), n_boot=500)
    short = OnLooks(OnReports(Measured("a", Scores(values[:60]), "test")), 0, N)
    with pytest.raises(ValueError, match=r"look 1 reads 64 images, and its reports have \[60\]"):
        judge(Evidence(c, "a", "checkpoint", {"p": short}), n_boot=500)
