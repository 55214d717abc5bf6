"""Position-embedding similarity (claim 28) against naive loops, on embeddings whose answer is known, and on the
layouts of the model zoo; the checkerboard mutant reverses it by construction."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from model_props.anatomy import anatomy
from model_props.errors import NotApplicable
from model_props.measurements.functional.position import near_far_contrast
from model_props.measurements.position import PositionReport, position_embedding, position_report
from model_props.mutation.mutants import ANATOMY_MUTANTS
from model_props.training.profiles import get_recipe
from model_props.zoo import build_model
from model_props.zoo.wrapper import unwrap


def naive_contrast(e: np.ndarray, h: int, w: int) -> dict[int, float]:
    """Per query, by loops over pairs: mean cosine of Chebyshev neighbours minus mean cosine of far pairs."""
    far = max(2.0, max(h, w) / 2)
    out = {}
    for q in range(h * w):
        near_c, far_c = [], []
        for p in range(h * w):
            d = max(abs(p // w - q // w), abs(p % w - q % w))
            c = float(e[p] @ e[q] / (np.linalg.norm(e[p]) * np.linalg.norm(e[q])))
            (near_c if d == 1 else far_c if d >= far else []).append(c)
        if near_c and far_c:
            out[q] = np.mean(near_c) - np.mean(far_c)
    return out


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 7), st.integers(2, 7), st.integers(1, 6), st.integers(0, 2**31 - 1))
def test_contrast_equals_naive_loops(h, w, channels, seed):
    e = np.random.default_rng(seed).standard_normal((h * w, channels))
    queries, contrast = near_far_contrast(e, h, w)
    expected = naive_contrast(e, h, w)
    assert list(queries) == sorted(expected)
    np.testing.assert_allclose(contrast, [expected[q] for q in queries], atol=1e-12)


def smooth_grid_embedding(h: int, w: int, channels: int = 32) -> np.ndarray:
    """Random Fourier features of the (row, column) position at low frequency: similar where positions are near."""
    rng = np.random.default_rng(0)
    freqs, phase = rng.normal(0, 0.3, (2, channels)), rng.uniform(0, 2 * np.pi, channels)
    rows, cols = np.divmod(np.arange(h * w), w)
    return np.cos(np.stack([rows, cols], 1) @ freqs + phase)


def test_grid_aware_embedding_positive_random_near_zero():
    """Known answers on an 8x8 grid: every query of a smooth embedding has contrast > 0; i.i.d. random vectors
    (64 dims) average within 0.05 of 0."""
    assert (near_far_contrast(smooth_grid_embedding(8, 8), 8, 8)[1] > 0).all()
    random = np.random.default_rng(1).standard_normal((64, 64))
    assert abs(near_far_contrast(random, 8, 8)[1].mean()) < 0.05


def _model(name: str):
    recipe = get_recipe("smoke", name)
    return build_model(recipe.model, num_classes=10, arch_kwargs=recipe.arch).eval()


@pytest.mark.parametrize(
    ("name", "grid"),
    [("vit", (8, 8)), ("vit_gap", (8, 8)), ("vit_p8", (4, 4)), ("pit", (15, 15))],
)
def test_embedding_found_on_the_grid_of_each_layout(name, grid):
    """ViT (1, 1 + 64, C) with its CLS row dropped, ViT-GAP (1, 64, C), PiT (1, C, 15, 15)."""
    model = _model(name)
    e, h, w = position_embedding(model, anatomy(model))
    assert (h, w) == grid
    param = unwrap(model).pos_embed.detach()
    expected = param[0].flatten(1).T if param.ndim == 4 else param[0, -h * w :]
    np.testing.assert_array_equal(e, expected.numpy())


@pytest.mark.parametrize("name", ["resnet", "swin", "alternet"])
def test_model_without_learned_position_embedding_is_not_applicable(name):
    model = _model(name)
    with pytest.raises(NotApplicable, match="no learned position embedding"):
        position_report(model, anatomy(model))


def test_embedding_on_no_grid_is_not_applicable():
    model = _model("vit")
    with torch.no_grad():
        unwrap(model).pos_embed = torch.nn.Parameter(torch.zeros(1, 63, 96))
    with pytest.raises(NotApplicable, match="63 rows, which lie on no square grid"):
        position_embedding(model, anatomy(_model("vit")))


def test_report_round_trip_and_random_baseline():
    model = _model("vit")
    report = position_report(model, anatomy(model), seed=3)
    again = PositionReport.from_arrays(report.to_arrays())
    assert report.size("positions") == len(report.queries) == 64
    for key, value in report.to_arrays().items():
        np.testing.assert_array_equal(value, again.to_arrays()[key])
    assert abs(report.random_contrast.mean()) < 0.05  # a 96-dim i.i.d. embedding reads no grid


@pytest.mark.parametrize("name", ["vit", "pit"])
def test_checkerboard_mutant_reverses_a_grid_aware_embedding(name):
    """Given a smooth grid embedding, the mutant's contrast is negative where the original's is positive, and
    the CLS row is untouched."""
    model = _model(name)
    anat = anatomy(model)
    _, h, w = position_embedding(model, anat)
    param = unwrap(model).pos_embed
    smooth = torch.from_numpy(smooth_grid_embedding(h, w, param.shape[1 if param.ndim == 4 else 2])).float()
    with torch.no_grad():
        if param.ndim == 4:
            param.copy_(smooth.T.reshape(1, -1, h, w))
        else:
            param[0, -h * w :] = smooth
    before = param.detach().clone()
    assert near_far_contrast(position_embedding(model, anat)[0], h, w)[1].mean() > 0.1
    ANATOMY_MUTANTS["checkerboard-positions"](unwrap(model), anat)
    assert near_far_contrast(position_embedding(model, anat)[0], h, w)[1].mean() < -0.05
    if param.ndim == 3:
        torch.testing.assert_close(param[0, 0], before[0, 0])  # the CLS row
