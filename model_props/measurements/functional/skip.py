"""Skip-connection norm ratio ||x|| / ||f(x)|| (Raghu et al. 2021, Sec. 5 / Fig. 10; docs/measurements.md#definitions).

For a residual unit computing x + f(x): the ratio of the norm of the skip input x to the norm of the
branch output f(x), per image. Spatial positions and channels are pooled into one norm per image; the
CLS token(s) are measured apart (Raghu et al. plot the CLS token separately from the spatial tokens).
A large ratio means the skip connection dominates the unit's output.
"""

from __future__ import annotations

import torch

__all__ = ["skip_norm_ratio"]


def skip_norm_ratio(skip: torch.Tensor, branch: torch.Tensor) -> torch.Tensor:
    """(B, ...) x (B, ...) -> (B,): ||x_b|| / ||f(x)_b|| over all non-batch dimensions; NaN where the branch
    outputs exactly zero (zero-initialised normalisation weights in it, as before training), which has no ratio.

    >>> skip_norm_ratio(torch.ones(2, 4, 2, 2) * 3, torch.ones(2, 4, 2, 2))
    tensor([3., 3.])
    >>> skip_norm_ratio(torch.ones(1, 4), torch.zeros(1, 4))
    tensor([nan])
    """
    if skip.shape != branch.shape:
        raise ValueError(f"skip {tuple(skip.shape)} and branch {tuple(branch.shape)} shapes differ")
    branch_norm = branch.flatten(1).norm(dim=1)
    # NaN, not ||x|| / a clamp: a fresh timm ResNet's zero branches read 1e13 that way, and swamped the mean
    return torch.where(branch_norm > 0, skip.flatten(1).norm(dim=1) / branch_norm, torch.nan)
