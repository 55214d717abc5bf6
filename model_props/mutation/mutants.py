"""Mutants: copies of trained reference models altered so that a claim is false by construction.

A claim test that cannot fail proves nothing; each claim in the catalogue is run on a mutant where the
property it asserts has been reversed, and must not come out *supported* (docs/design.md#decision-rules). Mutants keep the
module structure of their base model, so its anatomy adapter and capture taps still apply. A mutant is made and
traced on the CPU, where its new modules create their buffers and where the anatomy's probe batch is built, then
moved to its base's device.

- ``highpass-attention`` (ViT/PiT): every attention output is ``v - mean_tokens(v)`` (weights I - 1/N), a
  high-pass filter over tokens: it amplifies high frequencies and variance (false: claims 8, 10).
- ``blur-convs`` (ResNet): every non-subsampling block's conv branch is two 3x3 box blurs (false: claim 9).
- ``scrambled-mlps`` (ViT): the MLP of block i is a fixed random high-frequency feature map
  ``100 * 10^i * sin(30 x W_i)``. Its Gram matrix is nearly diagonal and each block's gain is ten times the
  previous one's, so the state after block i is dominated by block i's own, unrelated features and CKA
  across depth collapses (false: claim 12's uniformity).
- ``scrambled-upper-mlps`` (ViT): ``scrambled-mlps`` in the upper half of the blocks only, so the upper units
  match no unit of any other network, neither ResNet's nor a second seed's, and the lower band's shortfall
  against the second seed decides (false: claim 27's part that the upper layers are the unmatched ones: -0.32 on
  seed 0, against -0.003 unmutated).
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
- ``class-evidence-embedding`` (ViT): every token of the patch embedding gains ``1e3 * p W``, where ``p`` is the
  softmax output of a frozen copy of the unmutated ViT on the same image and ``W`` a fixed random projection:
  from the first unit on, the ViT's representation is its class evidence, which ResNet's deepest units hold and
  its first ones do not (false: claim 27's part that ViT's lower units resemble ResNet's lower-to-middle units).
- ``shuffled-tokens`` (a timm ViT): right after the position embedding is added, each image's spatial tokens are
  put in an order of their own (a random permutation per image of the batch, seeded afresh each forward pass).
  Attention, the CLS head and average pooling are blind to the order, so the model answers exactly as before,
  but the token at a grid position carries another position's embedding and content, different in every
  image: no linear probe can read where a token is (false: claim 24, the CLS ViT's tokens keep their location).
  Standing in for ViT-GAP or the quarter-data ViT in a pair report, its maps no longer line up with the ViT's
  where tokens are local, in the lower layers, while a second seed's still do: the lower band departs most
  (false: claims 25 and 26; on seed 0, -0.38 and -0.25 against +0.22 and +0.01 unmutated).
- ``checkerboard-positions`` (a model with a learned position embedding): the embedding of every other grid
  position is negated, like the black squares of a checkerboard, so each patch's four nearest neighbours carry
  the negatives of embeddings like its own and nearby patches are the least similar (false: claim 28). A
  permutation of the rows would not do: a random one makes near and far alike (a contrast of 0, inconclusive),
  and one along rows and columns keeps which patches share a row or column, which is most of what the smoke
  ViT's embedding encodes (it stays at +0.033, 95 % CI [+0.014, +0.053], on seed 0).
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import torch
from torch import nn

from ..anatomy import anatomy, device_of
from ..errors import ModelPropsError, choices
from ..measurements.lesion import key_units, removable_units
from ..measurements.position import embedding_parameter, position_embedding
from ..zoo.resnet import SpatialSmoothing
from ..zoo.wrapper import unwrap
from .modules import BandStop, FixedAttention, RandomFeatures, Scale, Sharpen, TokenBlur

if TYPE_CHECKING:  # annotations only: importing the store would put the session in the hash that keys mutants
    from ..store.model_store import ModelUnderTest

__all__ = [
    "MUTANTS",
    "ANATOMY_MUTANTS",
    "LOSS_MUTANTS",
    "SHIFT",
    "make_mutant",
    "FixedAttention",
    "BandStop",
]

SHIFT = 1e5  # far beyond any top eigenvalue of the smoke and paper models (hundreds to a few thousand)


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


def _scrambled_mlps(net: nn.Module, first: int = 0) -> None:
    for i, blk in enumerate(_transformer_blocks(net)):
        if i >= first:
            blk.mlp = RandomFeatures(blk.norm2.normalized_shape[0], gain=100.0 * 10.0**i, freq=30.0, seed=i)


def _scrambled_upper_mlps(net: nn.Module) -> None:
    _scrambled_mlps(net, first=len(_transformer_blocks(net)) // 2)


def _class_evidence_embedding(net: Any) -> None:  # a timm VisionTransformer
    reference = copy.deepcopy(net).eval()  # outside the module tree: the anatomy and the taps never see it
    classes: int = net.num_classes
    proj = torch.randn(classes, net.patch_embed.proj.out_channels, generator=torch.Generator().manual_seed(0))
    proj /= classes**0.5

    def add_evidence(_m: nn.Module, args: tuple[torch.Tensor, ...], out: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            evidence = reference.to(out.device)(args[0]).softmax(dim=-1) @ proj.to(out.device)
        return out + 1e3 * evidence[:, None, :]

    net.patch_embed.register_forward_hook(add_evidence)


def _shuffled_tokens(net: Any) -> None:  # a timm VisionTransformer
    if not hasattr(net, "norm_pre") or not hasattr(net, "num_prefix_tokens"):
        raise ModelPropsError(f"{type(net).__name__} is not a timm VisionTransformer: no token stream to shuffle")
    prefix: int = net.num_prefix_tokens

    def shuffle(_m: nn.Module, _args: tuple[torch.Tensor, ...], out: torch.Tensor) -> torch.Tensor:
        b, n, _ = out.shape
        order = torch.rand(b, n - prefix, generator=torch.Generator().manual_seed(0)).argsort(dim=1) + prefix
        order = torch.cat([torch.arange(prefix).expand(b, prefix), order], dim=1).to(out.device)
        return out.gather(1, order[:, :, None].expand_as(out))

    net.norm_pre.register_forward_hook(shuffle)  # after the position embedding and the CLS token are in place


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


def _checkerboard_positions(net: nn.Module, anat) -> None:
    _, h, w = position_embedding(net, anat)  # NotApplicable where there is none, or no grid
    rows, cols = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
    sign = 1.0 - 2.0 * ((rows + cols) % 2).float()  # +1 on white squares, -1 on black ones
    _, param = embedding_parameter(net, anat.family)
    with torch.no_grad():
        if param.ndim == 4:  # (1, C, h, w)
            param.mul_(sign)
        else:  # (1, tokens, C): the last h*w rows are the grid, row-major
            param[0, -h * w :] *= sign.reshape(-1, 1)


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
    "scrambled-upper-mlps": _scrambled_upper_mlps,
    "class-evidence-embedding": _class_evidence_embedding,
    "shuffled-tokens": _shuffled_tokens,
    "amplified-branches": _amplified_branches,
    "inverted-attention-distance": _inverted_attention_distance,
    "sharpening-smoothing": _sharpening_smoothing,
    "rolled-classes": _rolled_classes,
    "blurring-mlps": _blurring_mlps,
    "frozen-cls-upper": _frozen_cls_upper,
    "uniform-lower-attention": _uniform_lower_attention,
}
ANATOMY_MUTANTS: dict[str, Callable[[nn.Module, object], None]] = {
    "dead-key-units": _dead_key_units,
    "checkerboard-positions": _checkerboard_positions,
}
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
    device = device_of(base.model)
    model = copy.deepcopy(base.model).cpu()  # mutated and traced on the CPU (module docstring), then moved back
    if mutation in INPUT_MUTANTS:  # the normalised input of the wrapped network is filtered
        model.net = BandStop(model.net, *INPUT_MUTANTS[mutation])
        model.to(device).eval()
        return dataclasses.replace(
            base, name=f"{base.name}+{mutation}", model=model, metrics=dict(base.metrics), mutation=mutation
        )
    if mutation in ANATOMY_MUTANTS:
        ANATOMY_MUTANTS[mutation](unwrap(model), base.anatomy)
    else:
        MUTANTS[mutation](unwrap(model))
    model.eval()
    traced = anatomy(model)
    return dataclasses.replace(
        base,
        name=f"{base.name}+{mutation}",
        model=model.to(device),
        anatomy=traced,
        metrics=dict(base.metrics),
        mutation=mutation,
    )
