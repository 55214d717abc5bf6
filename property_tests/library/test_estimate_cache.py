"""Checkpoint-scope bootstraps are kept in the cache under a key of everything they are computed from: a warm
judgement reads the stored estimates without resampling and equals the one that computed them, any change of a
report, unit, part, claim or resampling computes anew, and a damaged entry or ``--claims-remeasure`` computes again."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import model_props.claims.evaluation as evaluation
import model_props.session.judge as judge_module
from model_props.claims import get_claim
from model_props.claims.stats import bootstrap
from model_props.session.estimates import estimate_key, estimate_memo
from model_props.session.judge import judge


def _no_resampling(monkeypatch) -> None:
    fail = lambda *a, **k: pytest.fail("resampled although the estimate is stored")  # noqa: E731
    monkeypatch.setattr(evaluation, "bootstrap", fail)
    monkeypatch.setattr(evaluation, "bootstrap_two_sample", fail)


def _estimates(outcome) -> dict:
    return {p.part.name: (p.verdict, p.paired, p.estimate) for p in outcome.parts if p.estimate is not None}


@pytest.mark.parametrize("claim_id, model, paired", [
    ("park2022.msa-lowpass", "vit", None),  # one model, its images
    ("park2022.msa-adversarial-robust", "vit", True),  # ViT - ResNet on the same attacked images
    ("park2022.vit-no-overfit-small-data", "vit", False),  # train NLL on two training sets: two samples
])  # fmt: skip
def test_a_stored_estimate_is_read_without_resampling_and_equals_the_computed_one(
    tmp_path, model_store, monkeypatch, claim_id, model, paired
):
    monkeypatch.setattr(judge_module, "estimate_memo", lambda _, claim, recompute: estimate_memo(tmp_path, claim))
    claim = get_claim(claim_id)
    computed = _estimates(judge(model_store, claim, model_store.get(model)).live)
    assert computed and paired in {p for _, p, _ in computed.values()}
    assert len(list((tmp_path / "estimates").glob("*/estimate.npz"))) == len(computed)
    _no_resampling(monkeypatch)
    stored = _estimates(judge(model_store, claim, model_store.get(model)).live)
    assert stored.keys() == computed.keys()
    for name, (verdict, _, est) in computed.items():
        again = stored[name][2]
        assert stored[name][0] == verdict and again == est, name  # value, interval, level, n, method, dropped
        assert again.replicates is not None and np.array_equal(again.replicates, est.replicates), name


@pytest.fixture(scope="module")
def variance(model_store):
    """The ViT's msa-reduces-variance claim (three parts), its first part and the unit report that part reads."""
    claim = get_claim("park2022.msa-reduces-variance")
    (report,) = judge(model_store, claim, model_store.get("vit")).used.values()
    return claim, claim.parts[0], report


def test_the_key_covers_the_reports_units_part_claim_and_resampling(variance):
    claim, part, report = variance
    shifted = dataclasses.replace(report, high_freq=report.high_freq + 1e-6)
    units = list(report.units)
    units[1] = dataclasses.replace(units[1], kind="conv")  # one unit's kind, all else equal
    relabelled = dataclasses.replace(report, units=tuple(units))
    other = get_claim("park2022.msa-lowpass")
    base = estimate_key(claim, part, (report,), "level=0.95|seed=0|n_boot=2000|one")
    keys = {
        base,
        estimate_key(claim, part, (shifted,), "level=0.95|seed=0|n_boot=2000|one"),
        estimate_key(claim, part, (relabelled,), "level=0.95|seed=0|n_boot=2000|one"),
        estimate_key(claim, claim.parts[-1], (report,), "level=0.95|seed=0|n_boot=2000|one"),
        estimate_key(other, part, (report,), "level=0.95|seed=0|n_boot=2000|one"),
        estimate_key(claim, part, (report,), "level=0.95|seed=1|n_boot=2000|one"),
        estimate_key(claim, part, (report, shifted), "level=0.95|seed=0|n_boot=2000|paired"),
        estimate_key(claim, part, (shifted, report), "level=0.95|seed=0|n_boot=2000|paired"),
    }
    assert len(claim.parts) > 1 and None not in keys and len(keys) == 8
    assert estimate_key(claim, part, (dataclasses.replace(report),), "level=0.95|seed=0|n_boot=2000|one") == base
    outside = dataclasses.replace(claim, id="mypkg.my-claim")  # not in the catalogue: no module holds its code
    assert estimate_key(outside, part, (report,), "level=0.95|seed=0|n_boot=2000|one") is None


def _compute(report, part, calls: list):
    def compute():
        calls.append(1)
        return bootstrap(report.size(part.sampling), lambda i: part.statistic(report, i), n_boot=200)

    return compute


def test_a_damaged_entry_and_remeasure_compute_again_and_outside_claims_are_never_stored(tmp_path, variance):
    claim, part, report = variance
    calls: list = []
    memo = estimate_memo(tmp_path, claim)
    first = memo(part, (report,), "r", _compute(report, part, calls))
    assert memo(part, (report,), "r", _compute(report, part, calls)) == first and len(calls) == 1
    (stored,) = (tmp_path / "estimates").glob("*/estimate.npz")
    stored.write_bytes(b"not an estimate")
    assert memo(part, (report,), "r", _compute(report, part, calls)) == first and len(calls) == 2
    assert estimate_memo(tmp_path, claim)(part, (report,), "r", _compute(report, part, calls)) == first
    assert len(calls) == 2, "the damaged entry was replaced"
    assert estimate_memo(tmp_path, claim, recompute=True)(part, (report,), "r", _compute(report, part, calls)) == first
    assert len(calls) == 3
    outside = estimate_memo(tmp_path / "outside", dataclasses.replace(claim, id="mypkg.my-claim"))
    outside(part, (report,), "r", _compute(report, part, calls))
    assert len(calls) == 4 and not (tmp_path / "outside").exists()
