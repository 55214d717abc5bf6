"""Pair reports (cross-model CKA of the model under test against another model, a seed control and an untrained
null): their cache key, the null's initialisation, a stand-in for the other model, the training state they are read
at (and a lost report refused at it), and claims 25 and 27's statistics against naive loops."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from model_props.claims import get_claim
from model_props.claims.raghu2021_similarity import (
    RESNET_DEPTH,
    best_match,
    lower_band_depth,
    lower_minus_upper,
    matched_depth,
    weighted_depth,
)
from model_props.errors import ExecutorError, MeasurementError, NotApplicable
from model_props.measurements.cross import CrossReport, PairReports
from model_props.measurements.functional.cross import CrossMinibatchCKA
from model_props.measurements.registry import measure
from model_props.session.live import needs_switch, not_live_claim
from model_props.store.lost import LostTasks
from model_props.store.pairs import pair_reports, seed_control, untrained
from model_props.zoo import build_model
from model_props.zoo.pretrained import weights_sha256


def _report(matrices: list[np.ndarray], depth_a: np.ndarray, depth_b: np.ndarray) -> CrossReport:
    """A report whose per-batch cross HSIC terms are ``matrices`` and own terms 1 (its CKA: their sum over k)."""
    cka = CrossMinibatchCKA()
    cka.cross = [torch.as_tensor(m, dtype=torch.float64) for m in matrices]
    cka.own_a = [torch.ones(len(depth_a), dtype=torch.float64) for _ in matrices]
    cka.own_b = [torch.ones(len(depth_b), dtype=torch.float64) for _ in matrices]
    return CrossReport(depth_a, depth_b, cka)


def _cka(report: CrossReport, idx: np.ndarray) -> np.ndarray:
    """Naive CKA of the resampled batches: sum of cross terms over the square root of the sums of own terms."""
    cross = sum(report.cka.cross[i].numpy() for i in idx)
    own_a = sum(report.cka.own_a[i].numpy() for i in idx)
    own_b = sum(report.cka.own_b[i].numpy() for i in idx)
    return cross / np.sqrt(np.outer(own_a, own_b))


@pytest.fixture
def pair() -> PairReports:
    rng = np.random.default_rng(0)
    depth_a, depth_b = np.linspace(0, 1, 7), np.linspace(0, 1, 5)
    make = lambda: _report([rng.uniform(-0.1, 1, (7, 5)) for _ in range(4)], depth_a, depth_b)  # noqa: E731
    return PairReports(make(), _report([rng.uniform(-0.1, 1, (7, 7)) for _ in range(4)], depth_a, depth_a), make())


def test_claim_27_statistics_equal_naive_loops(pair):
    idx = np.array([0, 2, 2, 3])
    against, control = _cka(pair.against, idx), _cka(pair.control, idx)
    lower = [i for i, d in enumerate(pair.against.depth_a) if d <= 1 / 3]
    upper = [i for i, d in enumerate(pair.against.depth_a) if d >= 2 / 3]
    diff = [max(against[u]) - max(control[u]) for u in range(7)]
    naive = np.mean([diff[u] for u in lower]) - np.mean([diff[u] for u in upper])
    assert lower_minus_upper(best_match)(pair, idx) == pytest.approx(naive, abs=1e-12)
    depths = []
    for u in lower:
        w = [max(c, 0.0) for c in against[u]]
        depths.append(sum(wi * d for wi, d in zip(w, pair.against.depth_b, strict=True)) / sum(w))
    assert lower_band_depth()(pair, idx) == pytest.approx(np.mean(depths) - RESNET_DEPTH, abs=1e-12)
    np.testing.assert_allclose(best_match(pair.against, idx), against.max(axis=1), atol=1e-12)
    assert weighted_depth(pair.against, idx).shape == (7,)


def test_claim_25_matched_depth_equals_naive_loops(pair):
    """Per unit of A (7 units), the CKA with B's unit nearest in depth (5 units; ties to the shallower one); the
    diagonal when both have the same units (the control)."""
    idx = np.array([1, 1, 3])
    against = _cka(pair.against, idx)
    depth_a, depth_b = pair.against.depth_a, pair.against.depth_b
    naive = [against[a, min(range(5), key=lambda b: (abs(depth_a[a] - depth_b[b]), b))] for a in range(7)]
    np.testing.assert_allclose(matched_depth(pair.against, idx), naive, atol=1e-12)
    np.testing.assert_allclose(matched_depth(pair.control, idx), np.diag(_cka(pair.control, idx)), atol=1e-12)
    lower, upper = depth_a <= 1 / 3, depth_a >= 2 / 3
    diff = matched_depth(pair.against, idx) - matched_depth(pair.control, idx)
    expected = diff[lower].mean() - diff[upper].mean()
    assert lower_minus_upper(matched_depth)(pair, idx) == pytest.approx(expected, abs=1e-12)


def test_the_statistics_read_the_other_model_and_the_control_never_the_null(pair):
    """The figure's null value is a statistic with the null in place of the other model, so the statistics
    themselves must not read ``null``: another null leaves them unchanged, the null in place changes them."""
    idx = np.arange(4)
    for stat in (lower_minus_upper(best_match), lower_band_depth(), lower_minus_upper(matched_depth)):
        assert stat(dataclasses.replace(pair, null=pair.control), idx) == stat(pair, idx)
        assert stat(dataclasses.replace(pair, against=pair.null), idx) != stat(pair, idx)


def test_a_model_without_a_lower_or_upper_band_is_not_applicable(pair):
    shallow = dataclasses.replace(pair.against, depth_a=np.full(7, 0.5))
    with pytest.raises(NotApplicable, match="no unit in its lower"):
        lower_minus_upper(best_match)(PairReports(shallow, pair.control, pair.null), np.arange(4))


def test_pair_reports_are_cached_under_both_identities_in_order(model_store, tmp_path):
    """A pair report is measured once and read back equal; the other model's identity, or the order of the two,
    is another entry; a pair kind without a second model (or a single kind with one) is refused."""
    vit, null = model_store.get("vit"), untrained(model_store, "resnet")
    m = dataclasses.replace(model_store.profile.measurement, n_images=128)
    a, b = model_store.measure_input(vit), model_store.measure_input(null)
    first = measure("cross", a, m, seed=0, cache_dir=tmp_path, other=b)
    again = measure("cross", a, m, seed=0, cache_dir=tmp_path, other=b)
    torch.testing.assert_close(again.cka.compute(), first.cka.compute())
    entries = lambda: [p for p in (tmp_path / "measurements" / "cross").iterdir() if p.is_dir()]  # noqa: E731
    assert len(entries()) == 1
    swapped = measure("cross", b, m, seed=0, cache_dir=tmp_path, other=a)
    torch.testing.assert_close(swapped.cka.compute(), first.cka.compute().T, rtol=1e-5, atol=1e-6)
    assert len(entries()) == 2
    with pytest.raises(MeasurementError, match="measured on two models"):
        measure("cross", a, m, seed=0, cache_dir=tmp_path)
    with pytest.raises(MeasurementError, match="measured on one model"):
        measure("fit", a, m, seed=0, cache_dir=tmp_path, other=b)


def test_a_stand_in_replaces_the_other_model_only(model_store):
    """A mutant standing in for the partner is what the model is compared with; the seed control and the null
    stay the partner recipe's (the mutant test of claim 25 reads ViT against a mutated ViT-GAP)."""
    from model_props.mutation.mutants import make_mutant

    if missing := not_live_claim(model_store.settings, get_claim("raghu2021.cls-vs-gap-late-layers"), "vit"):
        pytest.skip(needs_switch("the test", missing))
    vit = model_store.get("vit")
    stand_in = make_mutant(model_store.get("vit_gap"), "scrambled-mlps")
    own, swapped = (
        pair_reports(model_store, vit, "cross", "vit_gap"),
        pair_reports(model_store, vit, "cross", "vit_gap", stand_in=stand_in),
    )
    torch.testing.assert_close(swapped.control.cka.compute(), own.control.cka.compute())
    torch.testing.assert_close(swapped.null.cka.compute(), own.null.cka.compute())
    assert not torch.allclose(swapped.against.cka.compute(), own.against.cka.compute(), atol=0.05)


def test_the_untrained_null_has_no_identity_residual_blocks_and_a_stable_identity(model_store):
    """zero_init_last=False: the last BatchNorm of every ResNet block is not zero (else each block starts as an
    identity and the null would be the stem's features repeated); the same seed gives the same weights."""
    null = untrained(model_store, "resnet")
    last_bns = [m.bn2.weight for m in null.model.modules() if type(m).__name__ == "BasicBlock"]
    assert last_bns and all(w.abs().min() > 0 for w in last_bns)
    torch.manual_seed(12345)  # the null does not depend on (nor change) the global generator
    state = torch.get_rng_state()
    rebuilt = untrained(dataclasses.replace(model_store, _models={}), "resnet")
    assert torch.equal(torch.get_rng_state(), state)
    assert rebuilt.identity == null.identity == weights_sha256(null.model)
    assert null.identity != model_store.get("resnet").identity


def test_a_user_model_with_one_checkpoint_has_no_seed_control(model_store):
    mine = dataclasses.replace(model_store.get("vit"), name="mine", recipe=None)
    with pytest.raises(NotApplicable, match="give one --checkpoint per training seed, 3 or more"):
        seed_control(model_store, mine)


def test_the_independent_runs_the_catalogue_reads_are_trained_ahead(model_store):
    """Claims 25-27 read the single-stage ViT against a second seed of itself, ViT-GAP, the quarter-data ViT and
    ResNet: each trained with seed + 1000 (none shares the ViT's initial weights), at its final checkpoint; the
    untrained null too is initialised from that seed."""
    from model_props.store.pairs import CONTROL_SEED_OFFSET, independent_runs

    runs = independent_runs(model_store, model_store.profile.references)
    seed = model_store.profile.live_seed + CONTROL_SEED_OFFSET  # the session trains the live seed
    assert sorted((r.name, r.seed, at) for r, at in runs) == [
        (name, seed, "final") for name in ("resnet", "vit", "vit_gap", "vit_quarter")
    ]
    for recipe, _ in runs:
        assert recipe == dataclasses.replace(model_store.recipe(recipe.name), seed=seed)
    data, recipe = model_store.dataset(), model_store.recipe("vit")
    mean, std = model_store.channel_stats(data.name)
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        fresh = build_model(recipe.model, num_classes=data.num_classes, img_size=data.image_size,
                            arch_kwargs=recipe.arch, mean=mean, std=std)  # fmt: skip
    assert untrained(model_store, "vit").identity == weights_sha256(fresh)


def test_a_comparator_of_your_own_takes_the_partners_place_in_a_pair_claim(inprocess, model_store):
    """``--claims-versus resnet=resnet_smooth``: claim 27 reads the ViT against the smoothed ResNet in place of the
    reference ResNet (the ViT's seed control and the untrained null stay), judged about these weights."""
    import json

    from model_props.session.judging import judge_claim

    claim = get_claim("raghu2021.vit-lower-like-resnet-mid")
    settings = model_store.settings
    comparator = [] if settings.trains_live("resnet_smooth") else ["resnet_smooth"]
    if missing := [*comparator, *not_live_claim(settings, claim, "vit")]:
        pytest.skip(needs_switch("the test", missing))
    inprocess.makepyfile(test_versus_claims="from model_props.suite.test_claims import *\n")
    inprocess.runpytest("-p", "no:cacheprovider", f"--claims-cache={settings.cache_dir}", "--model", "vit",
                        f"--claims-live={settings.live}",  # the live mode this session runs the test in
                        "--claims-versus=resnet=resnet_smooth", "-k", "vit-lower-like")  # fmt: skip
    (record,) = json.loads((inprocess.path / "reports" / "summary.json").read_text())["results"]
    assert (record["claim"], record["scope"]) == (claim.id, "checkpoint")
    against_smooth = {p["part"]: p["value"] for p in record["parts"]}
    against_resnet = {
        p.part.name: p.estimate.value
        for p in judge_claim(model_store, claim, model_store.get("vit")).verdict.live.parts
    }
    assert against_smooth.keys() == against_resnet.keys() and None not in against_smooth.values()
    assert all(abs(against_smooth[k] - against_resnet[k]) > 1e-4 for k in against_smooth), (
        against_smooth,
        against_resnet,
    )


@pytest.mark.parametrize("state", ["warmup", "final"])
def test_a_model_is_read_against_its_seed_control_and_partner_at_its_own_training_state(model_store, monkeypatch,
                                                                                         state):  # fmt: skip
    """A warm-up checkpoint's seed control and partner are independent runs at warm-up too, a final one's final:
    a similarity across two training states would mix training progress into the similarity of two seeds."""
    import model_props.store.pairs as pairs

    tested = dataclasses.replace(model_store.get("vit"), checkpoint_name=state)
    asked: list[tuple[str, str]] = []

    def independent_run(store, recipe, checkpoint):
        asked.append((recipe.name, checkpoint))
        return recipe.name

    monkeypatch.setattr(pairs, "independent_run", independent_run)
    monkeypatch.setattr(pairs, "untrained", lambda store, name: f"untrained {name}")
    monkeypatch.setattr(pairs, "measured", lambda store, kind, tested, other, cached_only: other)  # nothing measured
    reports = pair_reports(model_store, tested, "cross", "resnet")
    assert (reports.against, reports.control, reports.null) == ("resnet", "vit", "untrained resnet")
    assert asked == [("vit", state), ("resnet", state)]


def test_a_lost_report_is_refused_at_the_training_state_it_was_lost_at_only(model_store):
    """A report that killed every worker is refused for that model, kind and training state; another state or kind
    of the model, or a mutant of it, is measured."""
    final = model_store.get("vit")
    warmup, seed = dataclasses.replace(final, checkpoint_name="warmup"), final.recipe.seed
    lost = LostTasks()
    said = lost.report((seed, "vit", "fit", "warmup"), RuntimeError("aborted"))
    assert said.startswith(f"measuring the fit report of vit (seed {seed}, warmup) killed every worker that ran it "
                           "(RuntimeError); ")  # fmt: skip
    lost.check_report(final, "fit")
    lost.check_report(warmup, "noise")
    lost.check_report(dataclasses.replace(warmup, mutation="shuffle-patches"), "fit")
    with pytest.raises(ExecutorError, match=r"^measuring the fit report of vit \(seed \d+, warmup\) killed every "
                       "worker that ran it: not measured again in this process"):  # fmt: skip
        lost.check_report(warmup, "fit")
