"""Hessian eigenvalues checked against independent references: the dense Hessian of tiny float64 nets
(``torch.autograd.functional.hessian``), central finite differences of gradients, and the model left as it was."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from torch import nn
from torch.func import functional_call

from model_props.errors import MeasurementError
from model_props.measurements.functional.spectrum import (
    ape,
    dense_hessian,
    hessian_operator,
    lanczos_top_k,
    negative_magnitude,
    nep,
    power_iteration_top_k,
    top_k_by_magnitude,
    trainable_size,
)
from model_props.measurements.spectrum import hessian_spectrum
from model_props.training.loss import TrainingLoss

K = 5
TIGHT = 1e-8  # eigenvalues agree to this, relative to the largest |eigenvalue|


def tiny_net(kind: str, width: int, seed: int) -> nn.Module:
    torch.manual_seed(seed)
    if kind == "mlp":
        net = nn.Sequential(nn.Flatten(), nn.Linear(12, width), nn.Tanh(), nn.Linear(width, 3))
    else:
        net = nn.Sequential(
            nn.Conv2d(3, width, 2), nn.Softplus(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(width, 3)
        )
    return net.double()


def batch(seed: int, n: int = 6) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(n, 3, 2, 2, generator=gen, dtype=torch.float64), torch.randint(0, 3, (n,), generator=gen)


def reference_hessian(net: nn.Module, x: torch.Tensor, y: torch.Tensor, wd: float) -> np.ndarray:
    """The dense Hessian by torch.autograd.functional.hessian of the loss as a function of the flat parameters."""
    names = [n for n, _ in net.named_parameters()]
    shapes = [p.shape for _, p in net.named_parameters()]
    flat = torch.cat([p.detach().reshape(-1) for p in net.parameters()])

    def loss(theta: torch.Tensor) -> torch.Tensor:
        params, i = {}, 0
        for name, shape in zip(names, shapes):
            n = int(np.prod(shape))
            params[name] = theta[i : i + n].view(shape)
            i += n
        return F.cross_entropy(functional_call(net, params, (x,)), y) + 0.5 * wd * (theta**2).sum()

    return torch.autograd.functional.hessian(loss, flat).numpy()


nets = st.tuples(st.sampled_from(["mlp", "cnn"]), st.integers(3, 12), st.integers(0, 10_000))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(net=nets, wd=st.sampled_from([0.0, 0.05]))
def test_hvp_builds_the_dense_hessian(net, wd):
    model = tiny_net(*net)
    x, y = batch(net[2])
    with hessian_operator(model, x, y, nll=TrainingLoss.nll, weight_decay=wd) as hvp:
        dense = dense_hessian(hvp, trainable_size(model)).numpy()
    assert np.allclose(dense, reference_hessian(model, x, y, wd), atol=1e-10)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(net=nets)
def test_lanczos_equals_the_dense_spectrum_including_negative_eigenvalues(net):
    model = tiny_net(*net)
    x, y = batch(net[2])
    expected = top_k_by_magnitude(np.linalg.eigvalsh(reference_hessian(model, x, y, 0.0)), K)
    with hessian_operator(model, x, y, nll=TrainingLoss.nll) as hvp:
        result = lanczos_top_k(hvp, trainable_size(model), K, tol=1e-10, max_iter=500, seed=net[2])
    assert result.converged
    scale = np.abs(expected).max()
    assert np.allclose(np.sort(result.eigenvalues), np.sort(expected), atol=TIGHT * scale), (
        result.eigenvalues,
        expected,
    )


def test_the_tiny_hessians_are_indefinite():
    """The property above is exercised on indefinite Hessians: most tiny nets have negative top eigenvalues."""
    signs = []
    for seed in range(10):
        model = tiny_net("mlp", 8, seed)
        x, y = batch(seed)
        signs.append((top_k_by_magnitude(np.linalg.eigvalsh(reference_hessian(model, x, y, 0.0)), K) < 0).any())
    assert sum(signs) >= 5


@settings(max_examples=30, deadline=None)
@given(dim=st.integers(8, 40), seed=st.integers(0, 10_000), gap=st.floats(1.3, 3.0))
def test_power_iteration_converges_to_the_spectrum_of_a_symmetric_matrix(dim, seed, gap):
    """The baseline's algorithm (deflated power iteration, Rayleigh quotient), run to a tight tolerance, finds
    the top-k eigenvalues by magnitude of ``Q diag(l) Q^T``, signs included, where their magnitudes are
    separated (power iteration converges at the rate of the magnitude ratio)."""
    rng = np.random.default_rng(seed)
    magnitudes = gap ** -np.arange(dim, dtype=np.float64)
    eigenvalues = magnitudes * rng.choice([-1.0, 1.0], dim)
    q, _ = np.linalg.qr(rng.standard_normal((dim, dim)))
    matrix = torch.from_numpy(q @ np.diag(eigenvalues) @ q.T)
    result = power_iteration_top_k(
        lambda v: matrix @ v, dim, K, tol=1e-14, max_iter=20_000, seed=seed, dtype=torch.float64
    )
    assert np.allclose(result.eigenvalues, top_k_by_magnitude(eigenvalues, K), atol=1e-7)
    fast = lanczos_top_k(lambda v: matrix @ v, dim, K, tol=1e-12, seed=seed)
    assert np.allclose(fast.eigenvalues, top_k_by_magnitude(eigenvalues, K), atol=1e-9)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(net=nets, direction_seed=st.integers(0, 1000))
def test_hvp_equals_central_finite_differences_of_gradients(net, direction_seed):
    model = tiny_net(*net)
    x, y = batch(net[2])
    params = list(model.parameters())
    v = torch.randn(trainable_size(model), generator=torch.Generator().manual_seed(direction_seed), dtype=torch.float64)
    with hessian_operator(model, x, y, nll=TrainingLoss.nll) as hvp:
        hv = hvp(v)

    def grad_at(shift: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            for p, d in zip(params, shift.split([p.numel() for p in params])):
                p.add_(d.view_as(p))
        g = torch.autograd.grad(F.cross_entropy(model(x), y), params)
        with torch.no_grad():
            for p, d in zip(params, shift.split([p.numel() for p in params])):
                p.sub_(d.view_as(p))
        return torch.cat([t.reshape(-1) for t in g])

    eps = 1e-5
    fd = (grad_at(eps * v) - grad_at(-eps * v)) / (2 * eps)
    assert torch.allclose(hv, fd, atol=1e-6 * max(1.0, float(fd.abs().max())))


def test_measuring_leaves_the_model_as_it_was():
    from model_props.zoo import build_model

    model = build_model("vit", num_classes=10, arch_kwargs={"depth": 1, "embed_dim": 24, "num_heads": 2})
    model.train()
    fused = [m for m in model.modules() if hasattr(m, "fused_attn")]
    fused_before = [m.fused_attn for m in fused]
    assert any(fused_before), "timm's fused attention is on by default: the test must see it switched"
    before = {k: v.clone() for k, v in model.state_dict().items()}
    params = list(model.parameters())
    params[0].grad = torch.full_like(params[0], 7.0)
    x, y = torch.rand(4, 3, 32, 32), torch.tensor([0, 1, 2, 3])
    with hessian_operator(model, x, y, nll=TrainingLoss.nll, weight_decay=0.05) as hvp:
        assert not model.training and not any(m.fused_attn for m in fused)
        hvp(torch.randn(trainable_size(model)))
    assert model.training and all(m.training for m in model.modules())
    assert [m.fused_attn for m in fused] == fused_before
    assert all(torch.equal(v, model.state_dict()[k]) for k, v in before.items())
    assert torch.equal(params[0].grad, torch.full_like(params[0], 7.0)) and all(p.grad is None for p in params[1:])


def test_bad_inputs_are_named():
    frozen = nn.Linear(3, 2)
    frozen.requires_grad_(False)
    with (
        pytest.raises(MeasurementError, match="has no trainable parameters"),
        hessian_operator(frozen, torch.randn(2, 3), torch.tensor([0, 1]), nll=TrainingLoss.nll),
    ):
        pass

    class NaN(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 2)

        def forward(self, x):
            return self.fc(x) * float("nan")

    with (
        pytest.raises(MeasurementError, match=r"the training loss is nan on this batch"),
        hessian_operator(NaN(), torch.randn(2, 3), torch.tensor([0, 1]), nll=TrainingLoss.nll),
    ):
        pass

    class FusedOnly(nn.Module):  # attention through the fused CPU kernel, which has no double backward
        def __init__(self):
            super().__init__()
            self.qkv, self.head = nn.Linear(8, 24), nn.Linear(8, 3)

        def forward(self, x):
            q, k, v = self.qkv(x).view(x.shape[0], 1, 4, 24).split(8, -1)
            return self.head(F.scaled_dot_product_attention(q, k, v).mean(2)[:, 0])

    model = FusedOnly()
    with (
        pytest.raises(MeasurementError, match=r"cannot be differentiated twice .*derivative for"),
        hessian_operator(model, torch.randn(5, 4, 8), torch.randint(0, 3, (5,)), nll=TrainingLoss.nll) as hvp,
    ):
        hvp(torch.randn(trainable_size(model)))


def test_spectrum_statistics():
    values = np.array([3.0, -1.0, 2.0, -3.0, 5.0])
    assert nep(values) == 0.4 and ape(values) == pytest.approx(10 / 3) and negative_magnitude(values) == 2.0
    assert np.isnan(ape(np.array([-1.0]))) and np.isnan(negative_magnitude(np.array([1.0])))  # undefined, not 0


def test_spectrum_protocol_is_seeded_and_needs_full_batches(dataset):
    from model_props.data import class_balanced_subset

    split = class_balanced_subset(dataset.train, 0.01, seed=0)  # 120 images
    model = tiny_net("cnn", 4, 0).float()
    model.num_classes = 3
    loss = TrainingLoss(augment=("crop", "flip"), weight_decay=0.05)
    small = class_balanced_subset(dataset.train, 0.001, seed=0)
    with pytest.raises(MeasurementError, match=r"a Hessian batch of 16 images needs at least that many"):
        hessian_spectrum(model, small, loss, n_batches=2, batch_size=16)
    split_3 = type(split)(split.images, split.labels % 3)
    a = hessian_spectrum(model, split_3, loss, n_batches=3, batch_size=8, seed=1)
    b = hessian_spectrum(model, split_3, loss, n_batches=3, batch_size=8, seed=1)
    assert a.eigenvalues.shape == (3, K) and np.array_equal(a.eigenvalues, b.eigenvalues)
    assert np.all(np.diff(np.abs(a.eigenvalues), axis=1) <= 1e-9), "sorted by decreasing magnitude"
    shift = 100.0 * np.abs(a.eigenvalues).max()  # moves every eigenvalue far above zero
    shifted = hessian_spectrum(
        model,
        split_3,
        TrainingLoss(augment=("crop", "flip"), weight_decay=0.05, shift=shift),
        n_batches=3,
        batch_size=8,
        seed=1,
    )
    assert nep(shifted.pooled()) == 0.0 and np.allclose(
        shifted.eigenvalues[:, 0], shift + a.eigenvalues.max(axis=1), rtol=1e-3
    )
