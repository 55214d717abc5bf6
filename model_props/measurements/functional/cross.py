"""Cross-model minibatch CKA: every unit of one model against every unit of another, on the same images (Raghu
et al. 2021, Fig. 1-2; Nguyen, Raghu & Kornblith 2021; docs/measurements.md#definitions).

The estimator is :mod:`.cka`'s (:func:`~.cka.hsic_matrix` over both models' Gram matrices at once), with the two
Gram matrices taken from two models: for a batch of n images,
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

from .cka import gram, hsic_matrix, resampled_sum

if TYPE_CHECKING:
    import numpy as np

__all__ = ["joint_hsic", "CrossMinibatchCKA"]


def joint_hsic(grams_a: torch.Tensor, grams_b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Unbiased HSIC of one batch: (Ua, Ub) between every Gram of A (Ua, n, n) and every Gram of B (Ub, n, n),
    and each unit's own HSIC_1(K, K) for A (Ua,) and B (Ub,): blocks of one :func:`~.cka.hsic_matrix`. n >= 4."""
    if grams_a.shape[1:] != grams_b.shape[1:]:
        raise ValueError(f"Grams of one batch of the same images expected, got {tuple(grams_a.shape)} and {tuple(grams_b.shape)}")  # fmt: skip
    ua = len(grams_a)
    hsic = hsic_matrix(torch.cat([grams_a, grams_b]))
    own = hsic.diagonal()
    return hsic[:ua, ua:], own[:ua], own[ua:]


class CrossMinibatchCKA:
    """Accumulates, per batch, the cross HSIC (Ua, Ub) and each model's own HSIC_1(K, K) per unit."""

    def __init__(self) -> None:
        self.cross: list[torch.Tensor] = []
        self.own_a: list[torch.Tensor] = []
        self.own_b: list[torch.Tensor] = []

    def update(self, features_a: Sequence[torch.Tensor], features_b: Sequence[torch.Tensor]) -> None:
        """One batch of the same images: a feature tensor (n, ...) per unit of A and per unit of B, on any device:
        the Grams and the HSIC are computed there, and only the HSIC comes to the host."""
        cross, own_a, own_b = joint_hsic(torch.stack([gram(f) for f in features_a]),
                                         torch.stack([gram(f) for f in features_b]))  # fmt: skip
        self.cross.append(cross.cpu())
        self.own_a.append(own_a.cpu())
        self.own_b.append(own_b.cpu())

    def compute(self, batches: torch.Tensor | np.ndarray | None = None) -> torch.Tensor:
        """CKA (Ua, Ub) from all batches, or from the given batch indices (a bootstrap resample); (rows, Ua, Ub) from
        an index matrix (rows, n) of resamples."""
        cross = resampled_sum(torch.stack(self.cross), batches)
        own_a = resampled_sum(torch.stack(self.own_a), batches).clamp_min(1e-30)
        own_b = resampled_sum(torch.stack(self.own_b), batches).clamp_min(1e-30)
        return cross / torch.sqrt(own_a[..., :, None] * own_b[..., None, :])
