"""Random patch occlusion (Naseer et al. 2021, "Intriguing Properties of Vision Transformers", Sec. 3.1; design
Sec. 7, ``naseer2021.occlusion-robust``).

Per image, a grid of ``cell x cell`` pixel cells is laid at an offset drawn from the odd pixel offsets
1, 3, ..., cell - 1 on each axis (so a cell edge never falls on the boundary of an even-sized patch: the masks
align with no model's tokens; cells at the image border are cut by it), and a seeded random ``fraction`` of
the grid's cells, rounded to whole cells, is set to a fill colour (the data's mean). The masks depend on the
generator alone, so every model compared sees the same occluded images (paired).
"""

from __future__ import annotations

import torch

__all__ = ["occlusion_masks", "occlude"]


def occlusion_masks(
    n: int, size: int, *, cell: int = 8, fraction: float = 0.5, generator: torch.Generator
) -> torch.Tensor:  # fmt: skip
    """(n, size, size) bool, True where a pixel is occluded (module docstring)."""
    if cell < 2 or cell % 2:
        raise ValueError(f"cell={cell}: an even cell of at least 2 pixels is needed (odd offsets inside it)")
    odd = torch.arange(1, cell, 2)
    offsets = odd[torch.randint(len(odd), (n, 2), generator=generator)]  # (n, 2): row and column offsets
    pixels = torch.arange(size)
    masks = torch.empty(n, size, size, dtype=torch.bool)
    for i, (oy, ox) in enumerate(offsets.tolist()):
        rows = torch.div(pixels - oy, cell, rounding_mode="floor") + 1  # cell index, 0 = the cut cell before oy
        cols = torch.div(pixels - ox, cell, rounding_mode="floor") + 1
        m_rows, m_cols = int(rows.max()) + 1, int(cols.max()) + 1
        chosen = torch.zeros(m_rows * m_cols, dtype=torch.bool)
        chosen[torch.randperm(m_rows * m_cols, generator=generator)[: round(fraction * m_rows * m_cols)]] = True
        masks[i] = chosen.reshape(m_rows, m_cols)[rows[:, None], cols[None, :]]
    return masks


def occlude(x: torch.Tensor, masks: torch.Tensor, fill: torch.Tensor) -> torch.Tensor:
    """(B, C, H, W) images with the pixels of (B, H, W) ``masks`` set to the (C,) ``fill``."""
    return torch.where(masks[:, None], fill.to(x.dtype)[None, :, None, None], x)
