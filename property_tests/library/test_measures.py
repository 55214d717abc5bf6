"""Every measurement against an independent reference (numpy.fft, naive loops, a naive kernel CKA),
with Hypothesis generating the inputs."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from model_props.measurements.functional import (
    MinibatchCKA,
    attention_distance,
    delta_log_amplitude,
    feature_variance,
    hsic_matrix,
    skip_norm_ratio,
)
from model_props.measurements.functional.cka import gram
from model_props.measurements.functional.fourier import EPS, log_amplitude

finite = st.floats(-10, 10, allow_nan=False, width=32)


def maps(min_side=2, max_side=10):
    return st.tuples(st.integers(1, 3), st.integers(1, 4), st.integers(min_side, max_side)).flatmap(
        lambda s: arrays(np.float32, (s[0], s[1], s[2], s[2]), elements=finite)
    )


# ---------------------------------------------------------------- Fourier
def numpy_delta_log_amplitude(x: np.ndarray) -> np.ndarray:
    """The authors' recipe in plain numpy: batch-and-channel mean of centred log|F|, diagonal, minus DC."""
    h = x.shape[-1]
    amp = np.fft.fftshift(np.log(np.abs(np.fft.fft2(x.astype(np.float64))) + EPS), axes=(-2, -1))
    mean = amp.mean(axis=(0, 1))
    diag = np.diagonal(mean)[h // 2 :]
    return diag - diag[0]


@given(maps())
def test_fourier_matches_numpy(x):
    ours = delta_log_amplitude(torch.from_numpy(x)).double().mean(dim=0).numpy()  # batch mean = paper's curve
    np.testing.assert_allclose(ours, numpy_delta_log_amplitude(x), rtol=1e-5, atol=1e-5)


@given(st.floats(0.1, 100), st.integers(2, 12))
def test_constant_map_has_no_high_frequencies(value, side):
    curve = delta_log_amplitude(torch.full((1, 2, side, side), value))[0]
    # every non-DC amplitude is 0, so ΔlogA = log(1e-6) - log(value * side^2 + 1e-6) for k >= 1
    expected = math.log(EPS) - math.log(value * side * side + EPS)
    assert curve[0] == 0
    np.testing.assert_allclose(curve[1:].numpy(), expected, rtol=1e-5)


@given(maps())
def test_parseval(x):
    power = torch.exp(log_amplitude(torch.from_numpy(x))) - EPS
    h = x.shape[-1]
    np.testing.assert_allclose(
        (power**2).sum(dim=(-2, -1)).numpy() / (h * h),
        (x.astype(np.float64) ** 2).sum(axis=(-2, -1)),
        rtol=1e-4,
        atol=1e-3,
    )


def test_fourier_curve_length_and_shift_convention():
    # DC shifted to index h // 2, so the diagonal from the centre has ceil(h / 2) points
    assert delta_log_amplitude(torch.rand(2, 3, 8, 8)).shape == (2, 4)
    assert delta_log_amplitude(torch.rand(2, 3, 7, 7)).shape == (2, 4)


# ---------------------------------------------------------------- variance
@given(maps(), st.randoms())
def test_variance_is_invariant_to_permuting_pixels(x, rnd):
    b, c, h, w = x.shape
    perm = list(range(h * w))
    rnd.shuffle(perm)
    shuffled = x.reshape(b, c, h * w)[:, :, perm].reshape(b, c, h, w)
    torch.testing.assert_close(
        feature_variance(torch.from_numpy(shuffled)), feature_variance(torch.from_numpy(x)), rtol=1e-4, atol=1e-4
    )


@given(maps())
def test_variance_matches_numpy(x):
    expected = x.reshape(*x.shape[:2], -1).astype(np.float64).var(axis=2, ddof=1).mean(axis=1)
    np.testing.assert_allclose(feature_variance(torch.from_numpy(x)).numpy(), expected, rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------- skip ratio
@given(arrays(np.float32, (3, 5), elements=st.floats(-5, 5, width=32)), st.floats(0.1, 10))
def test_skip_ratio_scales(x, k):
    x = torch.from_numpy(x) + 1e-3
    np.testing.assert_allclose(skip_norm_ratio(x * k, x).numpy(), k, rtol=1e-4)


def test_a_branch_that_outputs_zero_has_no_skip_ratio():
    """A zero branch (zero-initialised normalisation, as before training) is NaN, not ||x|| over a clamp; the other
    images of the batch keep numpy's ratio."""
    skip, branch = torch.randn(3, 4, 2, 2), torch.randn(3, 4, 2, 2)
    branch[1] = 0
    ratio = skip_norm_ratio(skip, branch).numpy()
    naive = np.linalg.norm(skip.numpy().reshape(3, -1), axis=1) / np.linalg.norm(branch.numpy().reshape(3, -1), axis=1)
    assert np.isnan(ratio[1]) and np.allclose(ratio[[0, 2]], naive[[0, 2]], rtol=1e-5)


# ---------------------------------------------------------------- CKA
def naive_hsic(k: np.ndarray, m: np.ndarray) -> float:
    """Unbiased HSIC of the Gram matrices K and L (Song et al. 2012, Eq. 5; L is ``m`` here), term by term."""
    n = k.shape[0]
    k, m = k.copy(), m.copy()
    np.fill_diagonal(k, 0)
    np.fill_diagonal(m, 0)
    one = np.ones(n)
    return float(
        (np.trace(k @ m) + (one @ k @ one) * (one @ m @ one) / ((n - 1) * (n - 2)) - 2 / (n - 2) * one @ k @ m @ one)
        / (n * (n - 3))
    )


def naive_cka(x: np.ndarray, y: np.ndarray) -> float:
    kx, ky = x @ x.T, y @ y.T
    return naive_hsic(kx, ky) / math.sqrt(naive_hsic(kx, kx) * naive_hsic(ky, ky))


features = st.integers(6, 16).flatmap(
    lambda n: st.tuples(
        arrays(np.float64, (n, 5), elements=st.floats(-3, 3)), arrays(np.float64, (n, 7), elements=st.floats(-3, 3))
    )
)


def _non_degenerate(x) -> bool:
    """The unbiased self-HSIC is an estimate and can be <= 0 on tiny, degenerate samples; CKA is then
    undefined. Keep inputs whose self-HSIC is clearly positive relative to their scale."""
    k = x @ x.T
    return naive_hsic(k, k) > 1e-6 * max(1.0, float(np.abs(k).max()) ** 2)


def cka_of(*feats) -> np.ndarray:
    acc = MinibatchCKA()
    acc.update([torch.from_numpy(f) for f in feats])
    return acc.compute().numpy()


@given(features)
def test_hsic_matches_the_naive_formula(xy):
    x, y = xy
    grams = torch.stack([gram(torch.from_numpy(x)), gram(torch.from_numpy(y))])
    ours = hsic_matrix(grams).numpy()
    kx, ky = x @ x.T, y @ y.T
    np.testing.assert_allclose(ours[0, 1], naive_hsic(kx, ky), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ours[1, 1], naive_hsic(ky, ky), rtol=1e-6, atol=1e-8)


@given(features)
def test_cka_with_itself_is_one_and_symmetric(xy):
    x, y = xy
    assume(_non_degenerate(x) and _non_degenerate(y))
    m = cka_of(x, y)
    np.testing.assert_allclose(np.diag(m), 1.0, rtol=1e-6)
    np.testing.assert_allclose(m, m.T, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(m[0, 1], naive_cka(x, y), rtol=1e-5, atol=1e-7)


@given(features, st.integers(0, 2**16), st.floats(0.01, 100))
def test_cka_is_invariant_to_orthogonal_maps_and_isotropic_scaling(xy, seed, scale):
    x, y = xy
    assume(_non_degenerate(x) and _non_degenerate(y))
    q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(y.shape[1], y.shape[1])))
    np.testing.assert_allclose(cka_of(x, scale * y @ q)[0, 1], cka_of(x, y)[0, 1], rtol=1e-5, atol=1e-7)


@given(features, st.integers(2, 5))
def test_minibatch_cka_on_equal_batches_equals_the_full_batch_estimate(xy, k):
    x, y = xy
    assume(_non_degenerate(x) and _non_degenerate(y))
    acc = MinibatchCKA()
    for _ in range(k):
        acc.update([torch.from_numpy(x), torch.from_numpy(y)])
    np.testing.assert_allclose(acc.compute().numpy()[0, 1], naive_cka(x, y), rtol=1e-6, atol=1e-8)


def test_cka_bootstrap_selects_batches():
    rng = np.random.default_rng(0)
    acc = MinibatchCKA()
    batches = [(rng.normal(size=(8, 4)), rng.normal(size=(8, 3))) for _ in range(3)]
    for x, y in batches:
        acc.update([torch.from_numpy(x), torch.from_numpy(y)])
    single = MinibatchCKA()
    single.update([torch.from_numpy(v) for v in batches[1]])
    torch.testing.assert_close(acc.compute(torch.tensor([1, 1])), single.compute())


# ---------------------------------------------------------------- attention distance
@given(st.integers(1, 6), st.sampled_from([16, 32, 224]), st.integers(0, 2))
def test_uniform_attention_gives_the_mean_pairwise_distance(k, img, prefix):
    n = k * k
    a = torch.full((1, 2, n + prefix, n + prefix), 1.0 / (n + prefix))
    cell = img / k
    centres = [((r + 0.5) * cell, (c + 0.5) * cell) for r in range(k) for c in range(k)]
    expected = sum(math.dist(p, q) for p, q in itertools.product(centres, centres)) / n**2
    np.testing.assert_allclose(attention_distance(a, img, prefix).numpy(), expected, rtol=1e-5)


@given(st.integers(1, 6), st.integers(0, 2))
def test_identity_attention_gives_zero(k, prefix):
    n = k * k + prefix
    assert attention_distance(torch.eye(n).expand(2, 3, n, n), 32, prefix).abs().max() == 0


def test_attention_to_the_neighbour_is_one_patch_away():
    k, img = 4, 32
    a = torch.zeros(1, 1, k * k, k * k)
    for i in range(k * k):
        a[0, 0, i, (i // k) * k + (i % k + 1) % k] = 1.0  # right neighbour, wrapping at the row end
    row_ends = (k - 1) * (img / k)  # the wrap jumps back k - 1 patches
    expected = ((k - 1) * (img / k) + row_ends) / k
    np.testing.assert_allclose(attention_distance(a, img).item(), expected, rtol=1e-6)


def test_attention_rejects_non_square_grids():
    with pytest.raises(ValueError, match="5 spatial tokens do not form a square grid"):
        attention_distance(torch.ones(1, 1, 6, 6), 32, prefix_tokens=1)
