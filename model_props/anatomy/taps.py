"""Reading a tap: the module a path names, and a tensor seen there as a map (B, C, h, w).

Tokens (B, N, C) become maps row-major after the prefix (CLS/distillation) tokens are dropped (kept apart),
as in Park & Kim's analysis code; NHWC maps (Swin) are permuted to NCHW.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from ..errors import AnatomyError
from ..zoo.wrapper import Classifier
from .model import Layout, Tap

__all__ = ["to_map", "resolve_module", "layout_of", "position_count"]


def to_map(t: torch.Tensor, tap: Tap) -> tuple[torch.Tensor, torch.Tensor | None]:
    """(map (B, C, h, w), prefix tokens (B, P, C) or None) for a tensor read at ``tap``."""
    layout = tap.layout
    if tap.fold > 1:  # (B * fold, ...) -> channels * fold: the positions folded into the batch become channels
        b = t.shape[0] // tap.fold
        if layout == "nchw":
            t = t.reshape(b, tap.fold * t.shape[1], *t.shape[2:])
        else:
            t = t.reshape(b, tap.fold, *t.shape[1:]).movedim(1, -1).flatten(-2)
    expected = 3 if layout == "tokens" else 4
    if t.ndim != expected:
        raise AnatomyError(
            f"tap {tap.module} ({tap.where}) gave shape {tuple(t.shape)}; layout {layout!r} needs {expected} dims"
        )
    if layout == "nchw":
        return t, None
    if layout == "nhwc":
        return t.permute(0, 3, 1, 2), None
    prefix = t[:, : tap.prefix_tokens] if tap.prefix_tokens else None
    spatial = t[:, tap.prefix_tokens :]
    b, n, c = spatial.shape
    h = math.isqrt(n)
    if h * h != n:
        raise AnatomyError(
            f"tap {tap.module}: {n} spatial tokens do not form a square grid (prefix_tokens={tap.prefix_tokens})"
        )
    return spatial.transpose(1, 2).reshape(b, c, h, h), prefix


def resolve_module(model: nn.Module, path: str) -> nn.Module:
    """The module at an anatomy path; paths start at the :class:`Classifier`, whose network is ``net``."""
    if isinstance(model, Classifier):
        return model.get_submodule(path)
    return model.get_submodule(path.removeprefix("net").removeprefix("."))  # a bare network


def layout_of(t: torch.Tensor, batch: int) -> tuple[Layout, int, int] | None:
    """(layout, prefix tokens, batch fold) of a map-like tensor seen in a probe pass of ``batch`` images."""
    if t.shape[0] % batch:
        return None
    fold = t.shape[0] // batch
    if t.ndim == 3:
        n = t.shape[1]
        return "tokens", n - math.isqrt(n) ** 2, fold
    if t.ndim == 4:  # (B, H, W, C) when the two middle sizes agree and the last differs
        return ("nhwc" if t.shape[1] == t.shape[2] != t.shape[3] else "nchw"), 0, fold
    return None


def position_count(t: torch.Tensor, batch: int) -> int:
    """Spatial positions of a map-like tensor (0 if it is not one)."""
    found = layout_of(t, batch)
    if found is None:
        return 0
    layout, prefix, fold = found
    if layout == "tokens":
        return (t.shape[1] - prefix) * fold
    return (t.shape[1] * t.shape[2] if layout == "nhwc" else t.shape[2] * t.shape[3]) * fold
