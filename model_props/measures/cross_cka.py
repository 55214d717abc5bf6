"""Cross-model minibatch CKA: every unit of one model against every unit of another, on the same images (Raghu
et al. 2021, Fig. 1-2; Nguyen, Raghu & Kornblith 2021; design Sec. 6).

The estimator is :mod:`.cka`'s, with the two Gram matrices taken from two models: for a batch of n images,
unit a of model A gives K = X_a X_a^T and unit b of model B gives L = Y_b Y_b^T, and

    HSIC_1(K, L) = [ tr(K~ L~) + (1^T K~ 1)(1^T L~ 1) / ((n-1)(n-2)) - 2/(n-2) 1^T K~ L~ 1 ] / (n (n-3))

(K~: K with a zero diagonal), summed over batches as a ratio of sums:

    CKA(a, b) = sum_k HSIC_1(K_k, L_k) / sqrt( sum_k HSIC_1(K_k, K_k) * sum_k HSIC_1(L_k, L_k) ).

The unbiased estimator matters across models: the biased one is high between independent random features
(Davari et al. 2023), the unbiased one is near 0. Per-batch terms are kept so that CKA can be bootstrapped
over batches, the sampling unit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import torch

from .cka import gram

if TYPE_CHECKING:
    import numpy as np

__all__ = ["cross_hsic", "CrossMinibatchCKA"]


def _zero_diagonal(grams: torch.Tensor) -> torch.Tensor:
    k = grams.clone()
    k.diagonal(dim1=-2, dim2=-1).zero_()
    return k


def cross_hsic(grams_a: torch.Tensor, grams_b: torch.Tensor) -> torch.Tensor:
    """Unbiased HSIC between every (Ua, n, n) Gram of A and every (Ub, n, n) Gram of B -> (Ua, Ub). n >= 4."""
    (ua, n, _), ub = grams_a.shape, grams_b.shape[0]
    if grams_b.shape[1:] != (n, n):
        raise ValueError(f"Grams of one batch of the same images expected, got {tuple(grams_a.shape)} and {tuple(grams_b.shape)}")  # fmt: skip
    if n < 4:
        raise ValueError(f"the unbiased HSIC estimator needs a batch of at least 4, got n={n}")
    k, l_ = _zero_diagonal(grams_a), _zero_diagonal(grams_b)
    fk, fl = k.reshape(ua, n * n), l_.reshape(ub, n * n)
    trace = fk @ fl.T  # tr(K~ L~) for symmetric Grams
    sums = torch.outer(fk.sum(dim=1), fl.sum(dim=1))
    rows = k.sum(dim=2) @ l_.sum(dim=2).T  # 1^T K~ L~ 1
    return (trace + sums / ((n - 1) * (n - 2)) - 2.0 / (n - 2) * rows) / (n * (n - 3))


class CrossMinibatchCKA:
    """Accumulates, per batch, the cross HSIC (Ua, Ub) and each model's own HSIC_1(K, K) per unit."""

    def __init__(self) -> None:
        self.cross: list[torch.Tensor] = []
        self.own_a: list[torch.Tensor] = []
        self.own_b: list[torch.Tensor] = []

    def update(self, features_a: Sequence[torch.Tensor], features_b: Sequence[torch.Tensor]) -> None:
        """One batch of the same images: a feature tensor (n, ...) per unit of A and per unit of B."""
        ga = torch.stack([gram(f) for f in features_a])
        gb = torch.stack([gram(f) for f in features_b])
        self.cross.append(cross_hsic(ga, gb))
        self.own_a.append(torch.stack([cross_hsic(g[None], g[None])[0, 0] for g in ga]))
        self.own_b.append(torch.stack([cross_hsic(g[None], g[None])[0, 0] for g in gb]))

    def compute(self, batches: torch.Tensor | np.ndarray | None = None) -> torch.Tensor:
        """CKA (Ua, Ub) from all batches, or from the given batch indices (e.g. a bootstrap resample)."""
        pick = slice(None) if batches is None else torch.as_tensor(batches)
        cross = torch.stack(self.cross)[pick].sum(dim=0)
        own_a = torch.stack(self.own_a)[pick].sum(dim=0).clamp_min(1e-30)
        own_b = torch.stack(self.own_b)[pick].sum(dim=0).clamp_min(1e-30)
        return cross / torch.sqrt(torch.outer(own_a, own_b))
