"""One forward pass -> the residual-stream state after every unit, and each unit's branch and skip.

Reads every :class:`~model_props.anatomy.Tap` of an :class:`~model_props.anatomy.Anatomy` with forward
hooks, then turns tokens (B, N, C) into maps (B, C, h, w): prefix (CLS/distillation) tokens are dropped
(kept apart in ``*_prefix``) and the rest reshaped row-major, as in Park & Kim's analysis code. NHWC maps
(Swin) are permuted to NCHW. Hooks are removed even when the forward pass raises.
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass, field

import torch
from torch import nn

from ..errors import AnatomyError
from ..zoo.registry import check_finite
from .attention import global_attention_units, unfused_attention
from .model import Anatomy, Tap
from .records import first_tensor
from .taps import resolve_module, to_map

__all__ = ["Capture", "capture"]


@dataclass
class Capture:
    """Tensors of one batch, keyed by unit name. Maps are (B, C, h, w); prefixes (B, P, C)."""

    logits: torch.Tensor
    states: dict[str, torch.Tensor] = field(default_factory=dict)
    branches: dict[str, torch.Tensor] = field(default_factory=dict)
    skips: dict[str, torch.Tensor] = field(default_factory=dict)
    state_prefix: dict[str, torch.Tensor] = field(default_factory=dict)
    branch_prefix: dict[str, torch.Tensor] = field(default_factory=dict)
    skip_prefix: dict[str, torch.Tensor] = field(default_factory=dict)
    attention: dict[str, torch.Tensor] = field(default_factory=dict)  # msa unit -> weights (B, heads, N, N)


def _copy(value: torch.Tensor | None) -> torch.Tensor | None:
    return value.clone() if value is not None else None


def capture(
    model: nn.Module,
    anat: Anatomy,
    x: torch.Tensor,
    *,
    branches: bool = True,
    attention: bool = False,
    grad: bool = False,
) -> Capture:
    """Run ``model(x)`` once and return every unit's state (and, if asked, branch, skip and global
    attention weights)."""
    taps: set[Tap] = set()
    for u in anat.spatial_units:
        taps.add(u.output)
        if branches:
            taps.update(t for t in (u.branch, u.skip) if t is not None)
    keys = {(t.module, t.where) for t in taps}
    attn_paths = global_attention_units(model, anat) if attention else {}
    keys |= {(p, "output") for p in attn_paths.values()}
    seen: dict[tuple[str, str], list] = {k: [] for k in keys}
    handles = []

    def record(key):
        # Copies, not references: a block may later change the tensor in place (timm's ResNet adds the
        # shortcut into its branch output and applies an in-place ReLU), and the copy is what the tap saw.
        def pre(_m, args):
            seen[key].append(_copy(first_tensor(args)))

        def post(_m, _args, out):
            seen[key].append(_copy(first_tensor(out)))

        return pre if key[1] == "input" else post

    try:
        for key in keys:
            mod = resolve_module(model, key[0])
            hook = record(key)
            handles.append(
                mod.register_forward_pre_hook(hook) if key[1] == "input" else mod.register_forward_hook(hook)
            )
        with torch.set_grad_enabled(grad), unfused_attention(model) if attn_paths else nullcontext():
            logits = model(x)
    finally:
        for h in handles:
            h.remove()
    check_finite(logits, f"model {getattr(model, 'name', type(model).__name__)!r} logits")
    out = Capture(logits=logits)

    def once(key: tuple[str, str], occurrence: int = 0) -> torch.Tensor:
        """The value a module's ``occurrence``-th call saw (a module may run twice in a pass: EdgeNeXt reuses
        one DropPath for two residual branches)."""
        values = seen[key]
        if len(values) <= occurrence:
            raise AnatomyError(
                f"module {key[0]!r} ran {len(values)} times in one forward pass; the anatomy reads its "
                f"call number {occurrence + 1}"
            )
        return values[occurrence]

    def read(tap: Tap) -> tuple[torch.Tensor, torch.Tensor | None]:
        return to_map(once((tap.module, tap.where), tap.occurrence), tap)

    for u in anat.spatial_units:
        out.states[u.name], p = read(u.output)
        if p is not None:
            out.state_prefix[u.name] = p
        if branches and u.branch is not None and u.skip is not None:
            out.branches[u.name], bp = read(u.branch)
            out.skips[u.name], sp = read(u.skip)
            if bp is not None:
                if sp is None:  # never: a branch with prefix tokens adds up only to a skip with them (the mapper)
                    raise AnatomyError(f"unit {u.name!r}: its branch has prefix tokens and its skip none")
                out.branch_prefix[u.name], out.skip_prefix[u.name] = bp, sp
    for name, path in attn_paths.items():
        out.attention[name] = once((path, "output"))
    return out
