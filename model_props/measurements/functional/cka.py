"""Minibatch linear CKA with the unbiased HSIC estimator (Nguyen, Raghu & Kornblith 2021; Raghu et al.
2021; Park & Kim 2022, App. D.3; docs/measurements.md#definitions).

For a mini-batch of n examples, each unit's features X (n, p) give a Gram matrix K = X X^T. With K~ equal
to K with its diagonal set to zero, the unbiased HSIC estimator (Song et al. 2012) is

    HSIC_1(K, L) = [ tr(K~ L~) + (1^T K~ 1)(1^T L~ 1) / ((n-1)(n-2)) - 2/(n-2) 1^T K~ L~ 1 ] / (n (n-3))

and minibatch CKA over batches k is a ratio of sums:

    CKA(X, Y) = sum_k HSIC_1(K_k, L_k) / sqrt( sum_k HSIC_1(K_k, K_k) * sum_k HSIC_1(L_k, L_k) )

:func:`hsic_matrix` computes HSIC_1 for all unit pairs of one batch at once ((U, n, n) Grams -> (U, U));
:class:`MinibatchCKA` keeps the per-batch matrices so that CKA can be bootstrapped over batches.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

__all__ = ["gram", "hsic_matrix", "cka_from_hsic", "resampled_sum", "MinibatchCKA"]


def gram(features: torch.Tensor) -> torch.Tensor:
    """(n, ...) features -> (n, n) linear-kernel Gram matrix, in float64."""
    x = features.flatten(1).double()
    return x @ x.T


def hsic_matrix(grams: torch.Tensor) -> torch.Tensor:
    """Unbiased HSIC between every pair of (U, n, n) Gram matrices -> (U, U). Needs n >= 4."""
    u, n, _ = grams.shape
    if n < 4:
        raise ValueError(f"the unbiased HSIC estimator needs a batch of at least 4, got n={n}")
    k = grams.clone()
    k.diagonal(dim1=-2, dim2=-1).zero_()
    flat = k.reshape(u, n * n)
    trace = flat @ flat.T  # tr(K~_a L~_b) = sum_ij K~_a[i, j] L~_b[j, i]; Grams are symmetric
    sums = flat.sum(dim=1)
    rows = k.sum(dim=2)  # K~ 1
    return (trace + torch.outer(sums, sums) / ((n - 1) * (n - 2)) - 2.0 / (n - 2) * rows @ rows.T) / (n * (n - 3))


def cka_from_hsic(hsic: torch.Tensor) -> torch.Tensor:
    """(..., U, U) summed HSIC -> (..., U, U) CKA: hsic_ab / sqrt(hsic_aa hsic_bb)."""
    diag = hsic.diagonal(dim1=-2, dim2=-1).clamp_min(1e-30)
    return hsic / torch.sqrt(diag[..., :, None] * diag[..., None, :])


def resampled_sum(per_batch: torch.Tensor, batches: torch.Tensor | np.ndarray | None) -> torch.Tensor:
    """The sum over batches of ``per_batch`` (B, ...): over every batch, the batches ``batches`` (n,), or each row of
    an index matrix (rows, n) -> (rows, ...), as (rows, B) counts of each batch times the stacked values (no
    (rows, n, ...) copy)."""
    if batches is None:
        return per_batch.sum(dim=0)
    idx = torch.as_tensor(np.asarray(batches), dtype=torch.long)
    rows = idx.reshape(-1, idx.shape[-1])
    counts = torch.zeros(len(rows), len(per_batch), dtype=per_batch.dtype)
    counts.scatter_add_(1, rows, torch.ones_like(rows, dtype=per_batch.dtype))
    summed = (counts @ per_batch.reshape(len(per_batch), -1)).reshape(len(rows), *per_batch.shape[1:])
    return summed[0] if idx.ndim == 1 else summed


class MinibatchCKA:
    """Accumulates per-batch HSIC matrices over all units; ``compute()`` is the ratio-of-sums CKA."""

    def __init__(self) -> None:
        self.per_batch: list[torch.Tensor] = []

    def update(self, features: Sequence[torch.Tensor]) -> None:
        """One mini-batch: a feature tensor (n, ...) per unit, in a fixed unit order, on any device: the Grams and
        the HSIC are computed there, and only the (U, U) HSIC comes to the host."""
        self.per_batch.append(hsic_matrix(torch.stack([gram(f) for f in features])).cpu())

    def compute(self, batches: torch.Tensor | np.ndarray | None = None) -> torch.Tensor:
        """CKA (U, U) from all batches, or from the given batch indices (a bootstrap resample); (rows, U, U) from an
        index matrix (rows, n) of resamples."""
        return cka_from_hsic(resampled_sum(torch.stack(self.per_batch), batches))
