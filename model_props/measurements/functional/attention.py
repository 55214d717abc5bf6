"""Attention mean distance (Raghu et al. 2021, Fig. 3/4; Dosovitskiy et al. 2021, Fig. 7; docs/measurements.md#definitions).

For each head: sum_j a_ij * d(i, j), the attention-weighted distance in input pixels between the centres
of query patch i and key patch j, averaged over queries and images. Prefix (CLS) tokens are excluded as
queries and keys and each row is renormalised over the spatial keys. Patch centres of a g x g grid over an
S-pixel image sit at ((r + 0.5) S / g, (c + 0.5) S / g), row-major.
"""

from __future__ import annotations

import functools

import torch

__all__ = ["patch_distances", "attention_distance"]


@functools.lru_cache(maxsize=32)
def patch_distances(grid: int, img_size: int) -> torch.Tensor:
    """(g*g, g*g) Euclidean distances in pixels between patch centres, row-major token order."""
    centre = (torch.arange(grid, dtype=torch.float64) + 0.5) * (img_size / grid)
    yy, xx = torch.meshgrid(centre, centre, indexing="ij")
    pos = torch.stack([yy.flatten(), xx.flatten()], dim=1)
    return torch.cdist(pos, pos)


def attention_distance(attn: torch.Tensor, img_size: int, prefix_tokens: int = 0) -> torch.Tensor:
    """Attention weights (B, H, N, N) -> mean distance per image and head (B, H), in pixels.

    >>> a = torch.eye(5).expand(1, 2, 5, 5)  # every query attends to itself (after one CLS token)
    >>> attention_distance(a, img_size=32, prefix_tokens=1)
    tensor([[0., 0.]])
    """
    a = attn[:, :, prefix_tokens:, prefix_tokens:].float()
    n = a.shape[-1]
    grid = int(round(n**0.5))
    if grid * grid != n:
        raise ValueError(f"{n} spatial tokens do not form a square grid (prefix_tokens={prefix_tokens})")
    d = patch_distances(grid, img_size).to(device=a.device, dtype=a.dtype)
    weighted = (a * d).sum(dim=-1) / a.sum(dim=-1).clamp_min(1e-12)  # rows renormalised over spatial keys
    return weighted.mean(dim=-1)
