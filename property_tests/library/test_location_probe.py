"""Location probes (claim 24) against ``numpy.linalg.lstsq`` on the same ridge problem, on tokens whose answer
is known, and on the zoo's models; the shuffled-tokens mutant hides every token's position by construction."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from model_props.anatomy import anatomy
from model_props.data import Split
from model_props.measurements.functional.probe import RIDGE, ProbeFit, image_accuracy, tokens_and_positions
from model_props.measurements.probe import ProbeReport, probe_report
from model_props.mutation.mutants import MUTANTS
from model_props.training.profiles import get_recipe
from model_props.zoo import build_model
from model_props.zoo.wrapper import unwrap


def lstsq_probe(x: np.ndarray, positions: np.ndarray, classes: int) -> np.ndarray:
    """The ridge probe as an ordinary least-squares problem: rows sqrt(lambda) e_j appended below [X, 1] (none
    for the intercept), one-hot targets, solved by numpy's SVD-based lstsq."""
    a = np.hstack([x, np.ones((len(x), 1))])
    centred = x - x.mean(axis=0)
    lam = RIDGE * np.trace(centred.T @ centred) / x.shape[1]
    ridge = np.sqrt(lam) * np.eye(x.shape[1] + 1)[:-1]
    y = np.eye(classes)[positions]
    solution, *_ = np.linalg.lstsq(np.vstack([a, ridge]), np.vstack([y, np.zeros((len(ridge), classes))]), rcond=None)
    return solution


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 9), st.integers(1, 12), st.integers(2, 5), st.integers(0, 2**31 - 1))
def test_probe_equals_lstsq_on_the_augmented_system(classes, channels, batches, seed):
    """Accumulated over batches of tokens, the probe's weights and predictions are those of lstsq."""
    rng = np.random.default_rng(seed)
    xs = [rng.standard_normal((classes * 3, channels)) * rng.uniform(0.1, 10) for _ in range(batches)]
    ps = [rng.integers(0, classes, classes * 3) for _ in range(batches)]
    probe = ProbeFit(channels, classes)
    for x, p in zip(xs, ps, strict=True):
        probe.update(torch.from_numpy(x), torch.from_numpy(p))
    probe.solve()
    expected = lstsq_probe(np.vstack(xs), np.concatenate(ps), classes)
    assert probe.weights is not None
    np.testing.assert_allclose(probe.weights.numpy(), expected, rtol=1e-6, atol=1e-8)
    test = rng.standard_normal((50, channels))
    scores = np.hstack([test, np.ones((50, 1))]) @ expected
    clear = np.sort(scores, axis=1)[:, -1] - np.sort(scores, axis=1)[:, -2] > 1e-6  # no near-tie to break
    np.testing.assert_array_equal(probe.predict(torch.from_numpy(test)).numpy()[clear], scores.argmax(1)[clear])


def _tokens(images: int, side: int, channels: int, signal: float, seed: int) -> torch.Tensor:
    """(images, channels, side, side) maps: a fixed random code of each position times ``signal``, plus noise."""
    g = torch.Generator().manual_seed(seed)
    code = torch.randn(channels, side, side, generator=g)
    return signal * code + torch.randn(images, channels, side, side, generator=g)


def _score(maps: torch.Tensor) -> np.ndarray:
    half = len(maps) // 2
    probe = ProbeFit(maps.shape[1], maps.shape[2] * maps.shape[3])
    probe.update(*tokens_and_positions(maps[:half]))
    probe.solve()
    return image_accuracy(probe.predict(tokens_and_positions(maps[half:])[0]), maps.shape[2] * maps.shape[3])


def test_known_answers_position_code_is_read_noise_is_chance():
    """64 positions, 32 channels: a position code 3x the noise is read on > 99 % of held-out tokens; tokens with no
    position in them are placed right at about chance (1/64), under 3x chance."""
    assert _score(_tokens(200, 8, 32, signal=3.0, seed=0)).mean() > 0.99
    assert _score(_tokens(200, 8, 32, signal=0.0, seed=1)).mean() < 3 / 64


def test_tokens_are_row_major_per_image_and_accuracy_is_per_image():
    maps = torch.arange(2 * 3 * 2 * 2, dtype=torch.float32).reshape(2, 3, 2, 2)
    tokens, positions = tokens_and_positions(maps)
    np.testing.assert_array_equal(tokens[5].numpy(), maps[1, :, 0, 1].numpy())  # image 1, row 0, column 1
    assert positions.tolist() == [0, 1, 2, 3] * 2
    assert image_accuracy(torch.tensor([0, 1, 2, 3, 3, 2, 1, 0]), 4).tolist() == [1.0, 0.0]


def _model(name: str):
    recipe = get_recipe("smoke", name)
    return build_model(recipe.model, num_classes=10, arch_kwargs=recipe.arch).eval()


@pytest.fixture(scope="module")
def images() -> Split:
    g = torch.Generator().manual_seed(0)
    return Split(torch.randint(0, 256, (256, 3, 32, 32), dtype=torch.uint8, generator=g), torch.zeros(256).long())


def test_report_scores_the_second_half_and_round_trips(images):
    """An untrained ViT: 13 spatial units of 64 tokens; 128 images fit, 128 scored; its position embedding alone
    puts the embedding's tokens at their place (> 0.9)."""
    model = _model("vit")
    report = probe_report(model, anatomy(model), images, n_images=256, batch_size=64)
    assert report.accuracy.shape == (13, 128) and report.size("images") == 128
    assert (report.tokens == 64).all() and report.depth[0] == 0 and report.depth[-1] == 1
    assert report.accuracy[0].mean() > 0.9
    again = ProbeReport.from_arrays(report.to_arrays())
    np.testing.assert_array_equal(again.accuracy, report.accuracy)
    with pytest.raises(ValueError, match="no batch of 64 to score"):
        probe_report(model, anatomy(model), images, n_images=100, batch_size=64)


def test_shuffled_tokens_mutant_keeps_the_answers_and_hides_every_position(images):
    """The mutant's logits equal the ViT's (attention and the CLS head ignore order), and every unit after the
    position embedding is probed at under 3x chance, where the ViT is above 0.9."""
    model = _model("vit")
    mutant = copy.deepcopy(model)
    MUTANTS["shuffled-tokens"](unwrap(mutant))
    x = images.batch(slice(0, 32))[0]
    with torch.no_grad():
        torch.testing.assert_close(mutant(x), model(x), rtol=1e-5, atol=1e-5)
    base = probe_report(model, anatomy(model), images, n_images=256, batch_size=64)
    shuffled = probe_report(mutant, anatomy(mutant), images, n_images=256, batch_size=64)
    assert base.accuracy.mean(axis=1).min() > 0.9
    assert shuffled.accuracy.mean(axis=1).max() < 3 / 64


def test_shuffled_tokens_needs_a_token_stream():
    with pytest.raises(Exception, match="not a timm VisionTransformer"):
        MUTANTS["shuffled-tokens"](unwrap(_model("resnet")))
