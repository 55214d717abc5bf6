"""Mutants: copies of trained reference models altered so that a claim is false by construction.

A claim test that cannot fail proves nothing; each claim in the catalogue is run on a mutant where the
property it asserts has been reversed, and must not come out *supported* (design Sec. 7). Mutants keep the
module structure of their base model, so its anatomy adapter and capture taps still apply.

- ``highpass-attention`` (ViT/PiT): every attention output is ``v - mean_tokens(v)`` (weights I - 1/N), a
  high-pass filter over tokens: it amplifies high frequencies and variance (false: claims 8, 10).
- ``blur-convs`` (ResNet): every non-subsampling block's conv branch is two 3x3 box blurs (false: claim 9).
- ``scrambled-mlps`` (ViT): the MLP of block i is a fixed random high-frequency feature map
  ``100 * 10^i * sin(30 x W_i)``. Its Gram matrix is nearly diagonal and each block's gain is ten times the
  previous one's, so the state after block i is dominated by block i's own, unrelated features and CKA
  across depth collapses (false: claim 12's uniformity).
- ``amplified-branches`` (ViT): the k-th residual branch (msa and mlp units in order) is scaled by
  10^(k+2), ten times everything added before it, so ||x|| / ||f(x)|| is about 0.1 everywhere (false:
  claim 17). A constant gain would not do: the stream would grow with the branches.
- ``inverted-attention-distance`` (ViT): lower-half MSAs attend uniformly (global), upper-half MSAs attend
  only to themselves (distance 0) (false: claim 18).
- ``sharpened-loss`` / ``concave-loss`` (any model): the loss the Hessian reads gains a term
  ``+-SHIFT/2 ||theta||^2``, which moves every eigenvalue by exactly ``+-SHIFT``. Sharpened: no negative
  eigenvalues and a huge APE; concave: only negative eigenvalues and a huge negative magnitude (false: the
  loss-landscape claims 1-6, 15, 21, 22, whichever way each one points).
- ``sharpening-smoothing`` (ResNet with spatial smoothing): every smoothing block boosts high frequencies
  (``x + 3 (x - blur(x))``) instead of blurring them (false: claim 15).
- ``rolled-classes`` (any classifier): the rows of the final linear layer are rolled by one class, so the
  model always answers the next class: accuracy about 0, and nothing left for an attack to take (false,
  standing in for the model compared with: claims 7, 14, 16, 19).
- ``dead-key-units`` (multi-stage): the branches of the first conv unit and the last MSA unit of every stage
  output zeros, so lesioning them costs nothing (false: claim 13).
- ``blurring-mlps`` (ViT): every MLP branch is ``blur(n) - n`` over the token grid, ``n`` its normalised input
  (the block's LayerNorm stays, so the anatomy still maps the unit), so each MLP unit removes the high
  frequencies of ``n`` from the stream: low-pass (false: claim 9's conv/MLP part; claim 10's variance part it
  does not reverse, see ``property_tests/claims/test_mutants.py``).
- ``frozen-cls-upper`` (ViT): in the upper half of the blocks, the branches' CLS rows are scaled by 1e-3, so the
  CLS token's skip ratio there is a thousand times the spatial tokens' (false: claim 17's upper-layer pattern).
- ``uniform-lower-attention`` (ViT): lower-half MSAs attend uniformly in every head, so their heads no longer
  differ in distance (false: claim 18's mixed lower heads).
- ``highcut-input`` (any model): an exact Fourier band-stop removes the input frequencies of L-infinity
  radius in (0.5 pi, pi] (the 0.7-0.9 pi noise bands), so noise there cannot change a prediction: a ResNet
  that ignores high frequencies loses less than the ViT under high-frequency noise (false: claim 11). (A ViT
  made immune to low frequencies cannot show claim 11 false: the smoke ResNet already loses nothing there.)
"""

from __future__ import annotations

import copy
import dataclasses
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

import torch
import torch.nn.functional as F
from torch import nn

from ..anatomy import anatomy
from ..errors import ModelPropsError, choices
from ..measurements.lesion import key_units, removable_units
from ..zoo.resnet import SpatialSmoothing
from ..zoo.wrapper import unwrap

if TYPE_CHECKING:  # annotations only: importing the store would put the session in the hash that keys mutants
    from ..session.store import ModelUnderTest

__all__ = ["MUTANTS", "ANATOMY_MUTANTS", "LOSS_MUTANTS", "SHIFT", "make_mutant", "FixedAttention", "BandStop"]

SHIFT = 1e5  # far beyond any top eigenvalue of the smoke and paper models (hundreds to a few thousand)


class FixedAttention(nn.Module):
    """Attention with fixed weights over all tokens: ``identity`` (A = I), ``uniform`` (A = 1/N) or
    ``highpass`` (A = I - 1/N). Weights pass through ``attn_drop`` so that capture can read them."""

    def __init__(self, num_heads: int, mode: Literal["identity", "uniform", "highpass"]):
        super().__init__()
        self.num_heads = num_heads
        self.mode = mode
        self.attn_drop = nn.Identity()

    def forward(self, x: torch.Tensor, **_: object) -> torch.Tensor:
        b, n, c = x.shape
        # both weight matrices come out of a softmax, as real attention weights do, so that the anatomy's
        # tracer sees attention (softmax(.) V) and the mutant keeps its base model's msa units
        eye = torch.eye(n, dtype=torch.bool, device=x.device)
        identity = torch.zeros(n, n, dtype=x.dtype, device=x.device).masked_fill(~eye, float("-inf")).softmax(-1)
        uniform = torch.zeros(n, n, dtype=x.dtype, device=x.device).softmax(-1)  # exactly 1/N
        weights = {"identity": identity, "uniform": uniform, "highpass": identity - uniform}[self.mode]
        weights = self.attn_drop(weights.expand(b, self.num_heads, n, n))
        v = x.reshape(b, n, self.num_heads, c // self.num_heads).transpose(1, 2)
        return (weights @ v).transpose(1, 2).reshape(b, n, c)


class Scale(nn.Module):
    def __init__(self, factor: float):
        super().__init__()
        self.factor = factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.factor


class RandomFeatures(nn.Module):
    """x -> gain * sin(freq * x W), W ~ N(0, 1/C), fixed by a seed (random Fourier features of small bandwidth)."""

    weight: torch.Tensor  # a buffer, registered in __init__

    def __init__(self, dim: int, gain: float, freq: float, seed: int):
        super().__init__()
        w = torch.randn(dim, dim, generator=torch.Generator().manual_seed(seed)) / dim**0.5
        self.register_buffer("weight", w)
        self.gain, self.freq = gain, freq

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.gain * torch.sin(self.freq * (x @ self.weight))


def _transformer_blocks(net: nn.Module) -> list[Any]:
    """Every module that has a transformer block's parts (any class: found by its attributes, used by them)."""
    blocks = [m for m in net.modules() if all(hasattr(m, a) for a in ("attn", "mlp", "norm1", "norm2"))]
    if not blocks:
        raise ModelPropsError(f"{type(net).__name__} has no transformer blocks to mutate")
    return blocks


def _highpass_attention(net: nn.Module) -> None:
    for blk in _transformer_blocks(net):
        blk.attn = FixedAttention(blk.attn.num_heads, "highpass")


def _inverted_attention_distance(net: nn.Module) -> None:
    blocks = _transformer_blocks(net)
    for i, blk in enumerate(blocks):
        blk.attn = FixedAttention(blk.attn.num_heads, "uniform" if i < len(blocks) / 2 else "identity")


def _amplified_branches(net: nn.Module) -> None:
    for i, blk in enumerate(_transformer_blocks(net)):
        blk.ls1, blk.ls2 = Scale(10.0 ** (2 * i + 2)), Scale(10.0 ** (2 * i + 3))


def _scrambled_mlps(net: nn.Module) -> None:
    for i, blk in enumerate(_transformer_blocks(net)):
        blk.mlp = RandomFeatures(blk.norm2.normalized_shape[0], gain=100.0 * 10.0**i, freq=30.0, seed=i)


class Sharpen(SpatialSmoothing):
    """The smoothing block turned around: ``x + 3 (x - blur(x))`` amplifies what the blur would remove."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + 3.0 * (x - super().forward(x))


def _sharpening_smoothing(net: nn.Module) -> None:
    blocks = [(name, m) for name, m in net.named_modules() if isinstance(m, SpatialSmoothing)]
    if not blocks:
        raise ModelPropsError(f"{type(net).__name__} has no spatial smoothing blocks to mutate")
    for name, _ in blocks:
        parent, _, child = name.rpartition(".")
        setattr(net.get_submodule(parent), child, Sharpen())


def _rolled_classes(net: nn.Module) -> None:
    heads = [m for m in net.modules() if isinstance(m, nn.Linear)]
    if not heads:
        raise ModelPropsError(f"{type(net).__name__} has no linear classifier to mutate")
    head = heads[-1]
    with torch.no_grad():
        head.weight.copy_(head.weight.roll(1, dims=0))
        if head.bias is not None:
            head.bias.copy_(head.bias.roll(1, dims=0))


def _dead_key_units(net: nn.Module, anat) -> None:

    units = removable_units(anat)
    key = key_units(tuple(u.kind for u in units), [u.stage for u in units])
    for unit, dead in zip(units, key):
        if dead and unit.branch is not None:  # (every removable unit has a branch)
            net.get_submodule(unit.branch.module.removeprefix("net.")).register_forward_hook(
                lambda _m, _a, out: torch.zeros_like(out)
            )


class TokenBlur(nn.Module):
    """``blur(x) - x`` over the spatial token grid (3x3 box blur), prefix tokens left at zero change."""

    def __init__(self, prefix_tokens: int):
        super().__init__()
        self.prefix = prefix_tokens

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, c = x.shape
        side = math.isqrt(n - self.prefix)
        grid = x[:, self.prefix :].transpose(1, 2).reshape(b, c, side, side)
        blurred = F.avg_pool2d(grid, 3, 1, 1, count_include_pad=False).reshape(b, c, -1).transpose(1, 2)
        return torch.cat([x[:, : self.prefix] * 0.0, blurred - x[:, self.prefix :]], dim=1)


def _blurring_mlps(net: nn.Module) -> None:
    for blk in _transformer_blocks(net):
        blk.mlp = TokenBlur(getattr(net, "num_prefix_tokens", 0))


def _frozen_cls_upper(net: nn.Module) -> None:
    blocks = _transformer_blocks(net)
    prefix = getattr(net, "num_prefix_tokens", 0)
    if not prefix:
        raise ModelPropsError(f"{type(net).__name__} has no CLS token to mutate")

    def scale_prefix(_m, _args, out: torch.Tensor) -> torch.Tensor:
        return torch.cat([out[:, :prefix] * 1e-3, out[:, prefix:]], dim=1)

    for blk in blocks[len(blocks) // 2 :]:
        blk.attn.register_forward_hook(scale_prefix)
        blk.mlp.register_forward_hook(scale_prefix)


def _uniform_lower_attention(net: nn.Module) -> None:
    blocks = _transformer_blocks(net)
    for blk in blocks[: len(blocks) // 2]:
        blk.attn = FixedAttention(blk.attn.num_heads, "uniform")


class BandStop(nn.Module):
    """An exact Fourier band-stop on the input: frequencies of L-infinity radius in (low, high] (units of pi) go."""

    def __init__(self, net: nn.Module, low: float, high: float):
        super().__init__()
        self.net, self.low, self.high = net, low, high

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        k = torch.fft.fftfreq(x.shape[-1], device=x.device) * 2.0
        radius = torch.maximum(k.abs()[:, None], k.abs()[None, :])
        keep = ~((radius > self.low + 1e-9) & (radius <= self.high + 1e-9))
        return self.net(torch.fft.ifft2(torch.fft.fft2(x) * keep).real)


def _blur_convs(net: nn.Module) -> None:
    from timm.models.resnet import BasicBlock

    blocks: list[nn.Module] = [m for m in net.modules() if isinstance(m, BasicBlock) and m.downsample is None]
    if not blocks:
        raise ModelPropsError(f"{type(net).__name__} has no non-subsampling timm BasicBlocks to mutate")
    for blk in blocks:
        blk.conv1 = nn.AvgPool2d(3, 1, 1, count_include_pad=False)
        blk.conv2 = nn.AvgPool2d(3, 1, 1, count_include_pad=False)
        blk.bn1, blk.act1, blk.bn2 = nn.Identity(), nn.Identity(), nn.Identity()


MUTANTS: dict[str, Callable[[nn.Module], None]] = {
    "highpass-attention": _highpass_attention,
    "blur-convs": _blur_convs,
    "scrambled-mlps": _scrambled_mlps,
    "amplified-branches": _amplified_branches,
    "inverted-attention-distance": _inverted_attention_distance,
    "sharpening-smoothing": _sharpening_smoothing,
    "rolled-classes": _rolled_classes,
    "blurring-mlps": _blurring_mlps,
    "frozen-cls-upper": _frozen_cls_upper,
    "uniform-lower-attention": _uniform_lower_attention,
}
ANATOMY_MUTANTS: dict[str, Callable[[nn.Module, object], None]] = {"dead-key-units": _dead_key_units}
LOSS_MUTANTS: dict[str, float] = {"sharpened-loss": SHIFT, "concave-loss": -SHIFT}
INPUT_MUTANTS: dict[str, tuple[float, float]] = {"highcut-input": (0.5, 1.0)}


def make_mutant(base: ModelUnderTest, mutation: str) -> ModelUnderTest:
    """A mutated copy of ``base`` (the base is untouched), named ``BASE+MUTATION``. Its measurements are
    cached under the base's weights plus the mutation."""
    if mutation in LOSS_MUTANTS:
        return dataclasses.replace(
            base, name=f"{base.name}+{mutation}", mutation=mutation, loss_shift=base.loss_shift + LOSS_MUTANTS[mutation]
        )
    valid = [*MUTANTS, *ANATOMY_MUTANTS, *LOSS_MUTANTS, *INPUT_MUTANTS]
    if mutation not in valid:
        raise ModelPropsError(f"unknown mutation {mutation!r}; valid: {choices(valid)}")
    model = copy.deepcopy(base.model)
    if mutation in INPUT_MUTANTS:  # the normalised input of the wrapped network is filtered
        model.net = BandStop(model.net, *INPUT_MUTANTS[mutation])
        model.eval()
        return dataclasses.replace(
            base, name=f"{base.name}+{mutation}", model=model, metrics=dict(base.metrics), mutation=mutation
        )
    if mutation in ANATOMY_MUTANTS:
        ANATOMY_MUTANTS[mutation](unwrap(model), base.anatomy)
    else:
        MUTANTS[mutation](unwrap(model))
    model.eval()
    return dataclasses.replace(
        base,
        name=f"{base.name}+{mutation}",
        model=model,
        anatomy=anatomy(model),
        metrics=dict(base.metrics),
        mutation=mutation,
    )
