"""Swin (Liu et al. 2021) at 32 px from timm, with window 4 so every stage keeps real windows."""

from __future__ import annotations

from collections.abc import Sequence

from timm.models.swin_transformer import SwinTransformer


def build_swin(
    num_classes: int,
    img_size: int = 32,
    patch_size: int = 2,
    window_size: int = 4,
    embed_dim: int = 48,
    depths: Sequence[int] = (2, 2, 2),
    num_heads: Sequence[int] = (3, 6, 12),
    mlp_ratio: float = 2.0,
    qkv_bias: bool = True,
    drop_path_rate: float = 0.0,
) -> SwinTransformer:
    return SwinTransformer(
        img_size=img_size,
        patch_size=patch_size,
        window_size=window_size,
        embed_dim=embed_dim,
        depths=tuple(depths),
        num_heads=tuple(num_heads),
        mlp_ratio=mlp_ratio,
        qkv_bias=qkv_bias,
        num_classes=num_classes,
        drop_path_rate=drop_path_rate,
    )
