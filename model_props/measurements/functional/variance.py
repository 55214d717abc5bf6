"""Feature-map variance (Park & Kim 2022, Fig. 9; docs/measurements.md#definitions).

For a map (B, C, h, w): the unbiased variance over the spatial positions (h, w) per sample and channel
(``torch.var``, N - 1, as in the authors' notebook), then the mean over channels: one value per image.
The batch mean is the paper's statistic.
"""

from __future__ import annotations

import torch

__all__ = ["feature_variance"]


def feature_variance(fmap: torch.Tensor) -> torch.Tensor:
    """(B, C, h, w) -> (B,): mean over channels of the spatial variance.

    >>> feature_variance(torch.ones(2, 4, 3, 3))
    tensor([0., 0.])
    """
    return fmap.flatten(2).var(dim=2, unbiased=True).mean(dim=1)
