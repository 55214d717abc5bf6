"""Attention modules: timm's fused attention switched off, and where a unit's attention weights are read."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from torch import nn

from .model import Anatomy
from .taps import resolve_module

__all__ = ["unfused_attention", "global_attention_units"]


@contextmanager
def unfused_attention(model: nn.Module) -> Iterator[None]:
    """Switch timm's fused attention off (it hides the weights and has no double backward), then restore."""
    switched: list[Any] = [m for m in model.modules() if getattr(m, "fused_attn", False)]  # timm attention modules
    for m in switched:
        m.fused_attn = False
    try:
        yield
    finally:
        for m in switched:
            m.fused_attn = True


def global_attention_units(model: nn.Module, anat: Anatomy) -> dict[str, str]:
    """msa unit name -> path of the module whose output is its attention weights (B, heads, N, N): the
    ``attn_drop`` of a timm-style attention module. Window attention (Swin, AlterNet; it has a
    ``window_size``) is left out: its weights are per window, not per image."""
    out = {}
    for u in anat.of_kind("msa"):
        mod = resolve_module(model, u.attention) if u.attention else None
        if mod is not None and hasattr(mod, "attn_drop") and not hasattr(mod, "window_size"):
            out[u.name] = f"{u.attention}.attn_drop"
    return out
