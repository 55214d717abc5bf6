"""Cross-model minibatch CKA against a naive numpy HSIC, and the properties the issue fixes as its reference checks:
a model against itself is 1 on the diagonal; invariant to an orthogonal transform and an isotropic scaling of
either side; changed by an anisotropic scaling; near 0 between independent random features (unbiased)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from model_props.measurements.functional.cka import MinibatchCKA
from model_props.measurements.functional.cross import CrossMinibatchCKA, joint_hsic


def naive_hsic(x: np.ndarray, y: np.ndarray) -> float:
    """Song et al. (2012) unbiased HSIC, term by term with explicit sums, from two (n, p) feature matrices."""
    n = len(x)
    k, l_ = x @ x.T, y @ y.T
    np.fill_diagonal(k, 0.0)
    np.fill_diagonal(l_, 0.0)
    trace = sum(k[i, j] * l_[j, i] for i in range(n) for j in range(n))
    ones = k.sum() * l_.sum() / ((n - 1) * (n - 2))
    middle = sum(k[i, :].sum() * l_[:, i].sum() for i in range(n))  # 1^T K~ L~ 1
    return (trace + ones - 2.0 / (n - 2) * middle) / (n * (n - 3))


@settings(max_examples=30, deadline=None)
@given(st.integers(4, 12), st.integers(1, 3), st.integers(1, 3), st.integers(0, 2**31 - 1))
def test_joint_hsic_equals_naive_sums(n, ua, ub, seed):
    rng = np.random.default_rng(seed)
    xs = [rng.standard_normal((n, int(rng.integers(1, 6)))) for _ in range(ua)]
    ys = [rng.standard_normal((n, int(rng.integers(1, 6)))) for _ in range(ub)]
    grams = [torch.stack([torch.from_numpy(f @ f.T) for f in fs]) for fs in (xs, ys)]
    cross, own_a, own_b = joint_hsic(*grams)
    expected = np.array([[naive_hsic(x, y) for y in ys] for x in xs])
    np.testing.assert_allclose(cross.numpy(), expected, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(own_a.numpy(), [naive_hsic(x, x) for x in xs], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(own_b.numpy(), [naive_hsic(y, y) for y in ys], rtol=1e-9, atol=1e-9)


def _features(rng, batches=6, n=32, units=3, p=8):
    return [[torch.from_numpy(rng.standard_normal((n, p)) @ rng.standard_normal((p, p))) for _ in range(units)]
            for _ in range(batches)]  # fmt: skip


def test_a_model_against_itself_is_one_on_the_diagonal_and_equals_the_single_model_cka():
    batches = _features(np.random.default_rng(0))
    cross, own = CrossMinibatchCKA(), MinibatchCKA()
    for feats in batches:
        cross.update(feats, feats)
        own.update(feats)
    matrix = cross.compute()
    torch.testing.assert_close(matrix.diagonal(), torch.ones(3, dtype=torch.float64), rtol=0, atol=1e-12)
    torch.testing.assert_close(matrix, own.compute(), rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(cross.compute(np.array([0, 0, 2])), own.compute(np.array([0, 0, 2])))


@pytest.mark.parametrize("side", ["a", "b"])
def test_invariant_to_orthogonal_transforms_and_isotropic_scaling_of_either_side(side):
    rng = np.random.default_rng(1)
    q = torch.from_numpy(np.linalg.qr(rng.standard_normal((8, 8)))[0])
    cka = CrossMinibatchCKA()
    for feats in _features(rng):
        moved = [f @ q * 7.5 for f in feats]
        cka.update(*((moved, feats) if side == "a" else (feats, moved)))
    torch.testing.assert_close(cka.compute().diagonal(), torch.ones(3, dtype=torch.float64), rtol=0, atol=1e-10)


def test_an_anisotropic_scaling_changes_it():
    rng = np.random.default_rng(2)
    scale = torch.tensor([10.0, 1.0, 1.0, 0.1, 1.0, 3.0, 1.0, 0.3], dtype=torch.float64)
    cka = CrossMinibatchCKA()
    for feats in _features(rng):
        cka.update(feats, [f * scale for f in feats])
    assert (cka.compute().diagonal() < 1 - 1e-3).all()


def biased_linear_cka(x: np.ndarray, y: np.ndarray) -> float:
    """Kornblith et al. (2019) linear CKA with the biased (centred-Gram) HSIC, on one batch."""
    x, y = x - x.mean(0), y - y.mean(0)
    return float(np.linalg.norm(x.T @ y) ** 2 / (np.linalg.norm(x.T @ x) * np.linalg.norm(y.T @ y)))


def test_unbiased_cka_of_independent_random_features_is_near_zero_where_the_biased_one_is_not():
    """16 batches of 64 images, 32 features: |CKA| < 0.05 for every pair; the biased estimator exceeds 0.25 on
    each batch (about 0.33: why the unbiased one is used across models)."""
    rng = np.random.default_rng(3)
    cka = CrossMinibatchCKA()
    for _ in range(16):
        xs = [rng.standard_normal((64, 32)) for _ in range(2)]
        ys = [rng.standard_normal((64, 32)) for _ in range(2)]
        assert biased_linear_cka(xs[0], ys[0]) > 0.25
        cka.update([torch.from_numpy(x) for x in xs], [torch.from_numpy(y) for y in ys])
    assert cka.compute().abs().max() < 0.05


def test_batches_of_other_images_are_refused():
    with pytest.raises(ValueError, match="same images"):
        joint_hsic(torch.zeros(1, 8, 8), torch.zeros(1, 6, 6))


def test_a_model_against_itself_on_the_same_images_gives_its_own_units_report_cka(model_store, dataset):
    """The pair measurement draws the images exactly as the units report does: ViT (trained, seed 0) against
    itself on the first 4 batches of the session's measurement sample gives the per-batch HSIC terms of its cached units report, to 1e-7 relative
    (float32 features; the units pass also reads attention weights, through timm's explicit attention path)."""
    from model_props.measurements.cross import CrossReport, measure_cross_cka

    vit = model_store.get("vit")
    batch = model_store.profile.measurement.batch_size
    units = model_store.report("vit", "units")
    report = measure_cross_cka(vit.model, vit.anatomy, vit.model, vit.anatomy, dataset.test, n_images=4 * batch,
                               batch_size=batch, seed=model_store.sample_seed)  # fmt: skip
    assert report.size("batches") == 4
    for k in range(4):
        torch.testing.assert_close(report.cka.cross[k], units.cka.per_batch[k], rtol=1e-7, atol=0)
        torch.testing.assert_close(report.cka.own_a[k], units.cka.per_batch[k].diagonal(), rtol=1e-7, atol=0)
    torch.testing.assert_close(report.cka.compute(), units.cka.compute(np.arange(4)), rtol=1e-7, atol=1e-9)
    again = CrossReport.from_arrays(report.to_arrays())
    torch.testing.assert_close(again.cka.compute(np.array([1, 1, 3])), report.cka.compute(np.array([1, 1, 3])))


def test_models_of_other_input_sizes_are_not_applicable(model_store, dataset):
    from model_props.errors import NotApplicable
    from model_props.measurements.cross import measure_cross_cka
    from model_props.zoo import build_model

    vit = model_store.get("vit")
    other = build_model("resnet", num_classes=10, img_size=64)
    with pytest.raises(NotApplicable, match="images of 32 and 64 px"):
        measure_cross_cka(vit.model, vit.anatomy, other, vit.anatomy, dataset.test, n_images=8, batch_size=8)
