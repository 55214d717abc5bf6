"""PiT (Heo et al. 2021) at 32 px from timm: ViT stages joined by depthwise stride-2 pooling."""

from __future__ import annotations

from collections.abc import Sequence

from timm.models.pit import PoolingVisionTransformer


def build_pit(
    num_classes: int,
    img_size: int = 32,
    patch_size: int = 4,
    stride: int = 2,
    base_dims: Sequence[int] = (16, 16, 16),
    depth: Sequence[int] = (2, 4, 2),
    heads: Sequence[int] = (2, 4, 8),
    mlp_ratio: float = 2.0,
    drop_path_rate: float = 0.0,
) -> PoolingVisionTransformer:
    """Stage widths are ``base_dims[i] * heads[i]``; the token grid is ``(img_size - patch_size) // stride + 1``."""
    return PoolingVisionTransformer(
        img_size=img_size,
        patch_size=patch_size,
        stride=stride,
        base_dims=list(base_dims),
        depth=list(depth),
        heads=list(heads),
        mlp_ratio=mlp_ratio,
        num_classes=num_classes,
        drop_path_rate=drop_path_rate,
    )
