"""Hessian eigenvalues of the training loss by Hessian-vector products (Park & Kim 2022, Fig. 1c and 4; design
Sec. 6).

For one mini-batch, ``H = d^2 L / d theta^2`` of the loss ``L = NLL(model(x), y) + wd/2 ||theta||^2`` over
every trainable parameter, with the model in eval mode (BN running statistics, no drop path). The gradient
graph is built once per batch; each product ``Hv`` is one more backward pass through it (as PyHessian does).

Two eigen-solvers share that product and return the ``k`` eigenvalues of largest magnitude, negative ones
included:

- :func:`lanczos_top_k` (the fast path): Lanczos with full reorthogonalisation, stopped when the residual
  bound ``beta_m |s_i[m]|`` of each wanted Ritz pair falls below ``tol * |theta_max|``. Lanczos approximates
  both ends of the spectrum at once, which is where the largest-magnitude eigenvalues are. We write it
  rather than call ``scipy.sparse.linalg.eigsh`` because eigsh's reverse-communication loop adds a numpy
  round trip and restart overhead per product that costs more than the product itself on small models,
  and it gives no control over which residuals stop it.
- :func:`power_iteration_top_k` (the PyHessian protocol, the speed baseline): power iteration with
  Gram-Schmidt deflation against the eigenvectors found so far, Rayleigh quotient, stopped when the
  relative change ``|l_t - l_{t-1}| / (|l_{t-1}| + 1e-6)`` falls below 1e-3 or after 100 iterations.

timm's fused attention has no double backward; :func:`hessian_operator` switches it off and restores the
model (mode, flags, parameters, ``.grad``) when it is done.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from ...errors import MeasurementError

__all__ = [
    "HVP",
    "EigenResult",
    "hessian_operator",
    "lanczos_top_k",
    "power_iteration_top_k",
    "dense_hessian",
    "top_k_by_magnitude",
    "nep",
    "ape",
    "negative_magnitude",
    "trainable_size",
]

HVP = Callable[[torch.Tensor], torch.Tensor]  # flat vector (P,) -> H @ v (P,)


@dataclass(frozen=True)
class EigenResult:
    """Eigenvalues sorted by decreasing magnitude, the products they took, and whether the rule was met."""

    eigenvalues: np.ndarray  # (k,)
    hvps: int
    converged: bool


@contextmanager
def _measurement_state(model: nn.Module) -> Iterator[None]:
    """Eval mode and unfused attention for the measurement; every module's mode and flag restored after."""
    modes = [(m, m.training) for m in model.modules()]
    fused: list[Any] = [m for m in model.modules() if getattr(m, "fused_attn", False)]  # timm attention modules
    grads = [(p, p.grad) for p in model.parameters()]
    model.eval()
    for m in fused:
        m.fused_attn = False
    try:
        yield
    finally:
        for m, training in modes:
            m.training = training
        for m in fused:
            m.fused_attn = True
        for p, g in grads:
            p.grad = g


@contextmanager
def hessian_operator(
    model: nn.Module,
    x: torch.Tensor,
    target: torch.Tensor,
    *,
    nll: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    weight_decay: float = 0.0,
    name: str = "model",
) -> Iterator[HVP]:
    """Yield ``hvp(v) = H v`` of ``nll(model(x), target) + weight_decay / 2 * ||theta||^2`` at the model's
    parameters: ``nll`` is the training loss's (:meth:`~model_props.training.loss.TrainingLoss.nll`), ``target``
    class indices (B,) or soft targets (B, C) (mixup, label smoothing)."""
    params = [p for p in model.parameters() if p.requires_grad]
    if not params:
        raise MeasurementError(f"{name} has no trainable parameters: its loss has no Hessian")
    with _measurement_state(model):
        loss = nll(model(x), target)
        if weight_decay:
            loss = loss + 0.5 * weight_decay * sum(p.pow(2).sum() for p in params)
        if not torch.isfinite(loss):
            raise MeasurementError(
                f"{name}: the training loss is {loss.item()} on this batch; its Hessian is undefined"
            )
        grads = torch.autograd.grad(loss, params, create_graph=True)
        shapes = [p.shape for p in params]
        sizes = [p.numel() for p in params]

        def hvp(v: torch.Tensor) -> torch.Tensor:
            chunks = [c.view(s).to(params[0].dtype) for c, s in zip(v.split(sizes), shapes)]
            try:
                out = torch.autograd.grad(grads, params, grad_outputs=chunks, retain_graph=True, allow_unused=True)
            except RuntimeError as exc:
                raise MeasurementError(
                    f"{name} cannot be differentiated twice (its Hessian needs a double backward): "
                    f"{str(exc).splitlines()[0]}"
                ) from exc
            return torch.cat([(torch.zeros_like(p) if o is None else o).reshape(-1) for o, p in zip(out, params)]).to(
                v.dtype
            )

        yield hvp


def top_k_by_magnitude(values: np.ndarray, k: int) -> np.ndarray:
    return values[np.argsort(-np.abs(values), kind="stable")[:k]]


def lanczos_top_k(
    hvp: HVP,
    dim: int,
    k: int = 5,
    *,
    tol: float = 1e-3,
    max_iter: int = 100,
    seed: int = 0,
    dtype: torch.dtype = torch.float64,
    device: str | torch.device = "cpu",
) -> EigenResult:
    """The ``k`` largest-magnitude eigenvalues by Lanczos with full reorthogonalisation.

    Stops when every one of the ``k`` wanted Ritz values has a residual bound below ``tol * |theta_max|``, or
    at ``max_iter`` products (then ``converged`` is False), or when the Krylov space is exhausted (exact).
    """
    gen = torch.Generator(device="cpu").manual_seed(seed)
    limit = min(max_iter, dim)
    basis = torch.empty(limit + 1, dim, dtype=dtype, device=device)  # the Lanczos vectors, one per row
    q = torch.randn(dim, generator=gen, dtype=dtype).to(device)
    basis[0] = q / q.norm()
    alphas: list[float] = []
    betas: list[float] = []
    theta = np.zeros(0)
    for j in range(limit):
        w = hvp(basis[j])
        alphas.append(float(w @ basis[j]))
        Q = basis[: j + 1]
        for _ in range(2):  # full reorthogonalisation, twice ("twice is enough")
            w -= Q.T @ (Q @ w)
        beta = float(w.norm())
        theta, s = np.linalg.eigh(np.diag(alphas) + np.diag(betas, 1) + np.diag(betas, -1))
        order = np.argsort(-np.abs(theta), kind="stable")[:k]
        scale = max(float(np.abs(theta).max()), 1e-30)
        exhausted = beta <= 1e-12 * scale  # the Krylov space is invariant: its Ritz values are exact
        if exhausted or (len(alphas) >= k and np.all(beta * np.abs(s[-1, order]) <= tol * scale)):
            return EigenResult(theta[order], j + 1, True)
        betas.append(beta)
        basis[j + 1] = w / beta
    order = np.argsort(-np.abs(theta), kind="stable")[:k]
    return EigenResult(theta[order], limit, limit == dim)


def power_iteration_top_k(
    hvp: HVP,
    dim: int,
    k: int = 5,
    *,
    tol: float = 1e-3,
    max_iter: int = 100,
    seed: int = 0,
    dtype: torch.dtype = torch.float32,
    device: str | torch.device = "cpu",
) -> EigenResult:
    """The PyHessian protocol: for each of ``k`` eigenvalues, power iteration from a normalised Gaussian
    vector, deflated (Gram-Schmidt) against the eigenvectors found so far, eigenvalue = Rayleigh quotient,
    stopped at relative change < ``tol`` or ``max_iter`` iterations."""
    gen = torch.Generator(device="cpu").manual_seed(seed)
    found: list[torch.Tensor] = []
    values: list[float | None] = []  # None only where max_iter is 0
    hvps = 0
    converged = True
    for _ in range(k):
        v = torch.randn(dim, generator=gen, dtype=dtype).to(device)
        v /= v.norm()
        value = None
        done = False
        for _ in range(max_iter):
            for u in found:
                v = v - (v @ u) * u
            v = v / v.norm()
            hv = hvp(v)
            hvps += 1
            current = float(hv @ v)
            v = hv / hv.norm()
            if value is not None and abs(value - current) / (abs(value) + 1e-6) < tol:
                value, done = current, True
                break
            value = current
        converged &= done
        values.append(value)
        found.append(v)
    return EigenResult(top_k_by_magnitude(np.array(values), k), hvps, converged)


def dense_hessian(hvp: HVP, dim: int, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """The full (dim, dim) matrix from ``dim`` products with the unit vectors (tests and tiny models only)."""
    eye = torch.eye(dim, dtype=dtype)
    return torch.stack([hvp(eye[i]) for i in range(dim)])


def _mean_where(values: np.ndarray, where: np.ndarray) -> Any:
    """The mean of ``values`` over the last axis where ``where`` holds; NaN where it holds nowhere."""
    count = where.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(count > 0, np.where(where, values, 0.0).sum(axis=-1) / np.maximum(count, 1), np.nan)


def nep(eigenvalues: np.ndarray) -> Any:
    """Negative eigenvalue proportion: the fraction of the pooled eigenvalues below zero (over the last axis: one
    value per row of a (rows, pooled) array)."""
    return np.mean(eigenvalues < 0, axis=-1)


def ape(eigenvalues: np.ndarray) -> Any:
    """Average positive eigenvalue: the mean of the pooled eigenvalues above zero; undefined (NaN) if none is."""
    return _mean_where(eigenvalues, eigenvalues > 0)


def negative_magnitude(eigenvalues: np.ndarray) -> Any:
    """Mean |lambda| of the pooled negative eigenvalues; undefined (NaN) if none is negative (0 would read as
    "no negative curvature at all", a smaller magnitude than any model that has some)."""
    return -_mean_where(eigenvalues, eigenvalues < 0)


def trainable_size(model: nn.Module) -> int:
    """The number of trainable parameters: the Hessian's side."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
