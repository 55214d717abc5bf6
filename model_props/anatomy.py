"""A model as an ordered list of residual units (Park & Kim 2022, App. A; design Sec. 4).

Kinds: ``embed`` (patch embedding / stem), ``msa`` and ``mlp`` (the two residual steps of a transformer
block), ``conv`` (a residual conv block), ``subsample`` (a pooling or patch-merging layer) and ``head``. A
conv block with stride 2 is a ``conv`` unit with ``subsamples=True``. ``depth`` is the unit's index over
the non-head units, normalised to [0, 1] as in the paper's Fig. 8/9 (index / (n - 1)); the head gets 1.

A unit says *where* its tensors live as :class:`Tap` s (module path, input or output, memory layout), not
how to compute them: :mod:`model_props.capture` reads every tap of every unit in one forward pass.

Family adapters cover the five references (ViT, PiT, Swin, ResNet from timm; our AlterNet); a generic
adapter maps other models whose transformer blocks look like timm's (``norm1, attn, norm2, mlp``) or whose
residual conv blocks are classes named ``*Block``/``*Bottleneck``.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal

from torch import nn

from .errors import AnatomyError
from .zoo.alternet import AlterNet, AttentionBlock, ConvBlock
from .zoo.wrapper import unwrap

__all__ = ["Tap", "Unit", "Anatomy", "anatomy", "UnitKind", "TRAITS"]

UnitKind = Literal["embed", "msa", "mlp", "conv", "subsample", "head"]
Layout = Literal["nchw", "nhwc", "tokens", "tokens_or_nhwc", "logits"]
TRAITS = ("global_msa", "local_msa", "conv", "multi_stage")


@dataclass(frozen=True)
class Tap:
    """Where a tensor is read: the input or output of ``module`` (a dotted path in the wrapped model)."""

    module: str
    where: Literal["input", "output"] = "output"
    layout: Layout = "nchw"
    prefix_tokens: int = 0  # CLS/distillation tokens in front of the spatial tokens
    item: int | None = None  # element of a tuple input/output (PiT passes (x, cls) tuples)


@dataclass(frozen=True)
class Unit:
    index: int
    name: str
    kind: UnitKind
    stage: int
    depth: float
    output: Tap  # residual-stream state after the unit
    branch: Tap | None = None  # f(x), for residual units
    skip: Tap | None = None  # x, the summand f(x) is added to
    subsamples: bool = False
    attention: str | None = None  # path of the attention module of an msa unit


@dataclass(frozen=True)
class Anatomy:
    family: str
    units: tuple[Unit, ...]
    traits: frozenset[str]

    def of_kind(self, *kinds: UnitKind) -> tuple[Unit, ...]:
        return tuple(u for u in self.units if u.kind in kinds)

    @property
    def spatial_units(self) -> tuple[Unit, ...]:
        """Every unit with a feature map (all but the head)."""
        return tuple(u for u in self.units if u.kind != "head")

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for u in self.units:
            out[u.kind] = out.get(u.kind, 0) + 1
        return out

    def __str__(self) -> str:
        rows = [f"{u.index:3d} {u.kind:9s} stage {u.stage} depth {u.depth:.2f}{' (subsamples)' if u.subsamples else ''}  {u.name}" for u in self.units]
        return f"{self.family}: traits {sorted(self.traits)}\n" + "\n".join(rows)


def _u(name: str, kind: UnitKind, stage: int, output: Tap, branch: Tap | None = None, skip: Tap | None = None,
       subsamples: bool = False, attention: str | None = None) -> Unit:
    """A unit before numbering (index and depth are set by :func:`_finish`)."""
    return Unit(0, name, kind, stage, 0.0, output, branch, skip, subsamples, attention)


def _finish(family: str, units: list[Unit], traits: set[str]) -> Anatomy:
    head = _u("head", "head", max(u.stage for u in units), Tap("net", "output", "logits"))
    n = len(units)
    numbered = [replace(u, index=i, depth=i / (n - 1) if n > 1 else 0.0) for i, u in enumerate(units)]
    numbered.append(replace(head, index=n, depth=1.0))
    if len({u.stage for u in units}) > 1:
        traits.add("multi_stage")
    return Anatomy(family, tuple(numbered), frozenset(traits))


def _transformer_block(path: str, stage: int, layout_in: Layout, layout_mid: Layout, prefix: int,
                       drop_paths: bool = True) -> list[Unit]:
    """msa and mlp units of a timm-style block ``x = x + dp1(ls1(attn(norm1(x)))); x = x + dp2(ls2(mlp(norm2(x))))``."""
    def tap(mod: str, where: str, layout: Layout) -> Tap:
        return Tap(f"{path}.{mod}" if mod else path, where, layout, prefix)  # type: ignore[arg-type]

    return [
        _u(f"{path.removeprefix('net.')}.msa", "msa", stage, tap("norm2", "input", layout_mid),
           tap("drop_path1", "output", layout_in) if drop_paths else None, tap("norm1", "input", layout_in),
           attention=f"{path}.attn"),
        _u(f"{path.removeprefix('net.')}.mlp", "mlp", stage, tap("", "output", layout_in),
           tap("drop_path2", "output", layout_mid) if drop_paths else None, tap("norm2", "input", layout_mid)),
    ]


def _vit(net) -> Anatomy:
    p = net.num_prefix_tokens
    units = [_u("embed", "embed", 0, Tap("net.blocks", "input", "tokens", p))]
    for i in range(len(net.blocks)):
        units += _transformer_block(f"net.blocks.{i}", 0, "tokens", "tokens", p)
    return _finish("vit", units, {"global_msa"})


def _pit(net) -> Anatomy:
    p = net.num_tokens
    units = [_u("embed", "embed", 0, Tap("net.transformers.0", "input", "nchw", item=0))]
    for s, tr in enumerate(net.transformers):
        if tr.pool is not None:
            units.append(_u(f"transformers.{s}.pool", "subsample", s, Tap(f"net.transformers.{s}.pool", "output", "nchw", item=0), subsamples=True))
        for j in range(len(tr.blocks)):
            units += _transformer_block(f"net.transformers.{s}.blocks.{j}", s, "tokens", "tokens", p)
    return _finish("pit", units, {"global_msa"})


def _swin(net) -> Anatomy:
    units = [_u("embed", "embed", 0, Tap("net.patch_embed", "output", "nhwc"))]
    for s, layer in enumerate(net.layers):
        if not isinstance(layer.downsample, nn.Identity):
            units.append(_u(f"layers.{s}.downsample", "subsample", s, Tap(f"net.layers.{s}.downsample", "output", "nhwc"), subsamples=True))
        for j in range(len(layer.blocks)):
            # the attention branch works on (B, H, W, C); the MLP branch on (B, H*W, C)
            units += _transformer_block(f"net.layers.{s}.blocks.{j}", s, "nhwc", "tokens", 0)
    return _finish("swin", units, {"local_msa"})


def _strided(block: nn.Module) -> bool:
    return any(isinstance(m, nn.Conv2d) and max(m.stride) > 1 for m in block.modules())


def _resnet(net) -> Anatomy:
    from timm.models.resnet import BasicBlock, Bottleneck

    units = [_u("embed", "embed", 0, Tap("net.maxpool", "output"))]
    for s in range(4):
        for j, blk in enumerate(getattr(net, f"layer{s + 1}")):
            if not isinstance(blk, (BasicBlock, Bottleneck)):  # a smoothing block: no residual unit of its own
                continue
            path = f"net.layer{s + 1}.{j}"
            last = "drop_path" if blk.drop_path is not None else "se" if blk.se is not None else ("bn3" if hasattr(blk, "bn3") else "bn2")
            skip = Tap(f"{path}.downsample") if blk.downsample is not None else Tap(path, "input")
            units.append(_u(path.removeprefix("net."), "conv", s, Tap(path), Tap(f"{path}.{last}"), skip, subsamples=_strided(blk)))
    return _finish("resnet", units, {"conv"})


def _alternet(net: AlterNet) -> Anatomy:
    units = [_u("embed", "embed", 0, Tap("net.stem"))]
    for s, stage in enumerate(net.stages):
        for j, blk in enumerate(stage):
            path = f"net.stages.{s}.{j}"
            is_msa = isinstance(blk, AttentionBlock)
            units.append(_u(path.removeprefix("net."), "msa" if is_msa else "conv", s, Tap(path), Tap(f"{path}.branch_out"),
                            Tap(f"{path}.skip_out"), subsamples=isinstance(blk, ConvBlock) and _strided(blk),
                            attention=f"{path}.attn" if is_msa else None))
    return _finish("alternet", units, {"conv", "local_msa"})


_CONV_BLOCK = re.compile(r"(Block|Bottleneck)$")


def _is_transformer_block(m: nn.Module) -> bool:
    return all(hasattr(m, a) for a in ("norm1", "attn", "norm2", "mlp"))


def _generic(net: nn.Module) -> Anatomy:
    """Transformer blocks (``norm1, attn, norm2, mlp``) and residual conv blocks, in module order."""
    found: list[tuple[str, str]] = []  # (path, "transformer" | "conv")
    taken: list[str] = []
    for name, m in net.named_modules():
        if any(name.startswith(t + ".") for t in taken):
            continue
        if _is_transformer_block(m):
            found.append((name, "transformer"))
            taken.append(name)
        elif _CONV_BLOCK.search(type(m).__name__) and any(isinstance(c, nn.Conv2d) for c in m.children()):
            found.append((name, "conv"))
            taken.append(name)
    if not found:
        top = ", ".join(f"{n}: {type(c).__name__}" for n, c in net.named_children()) or "no submodules"
        raise AnatomyError(
            f"cannot map {type(net).__name__} into units: found no transformer blocks (modules with norm1, attn, "
            f"norm2 and mlp) and no residual conv blocks (classes named *Block or *Bottleneck holding a Conv2d). "
            f"Its top-level modules are: {top}"
        )
    prefix = int(getattr(net, "num_prefix_tokens", 0))
    stage_keys: list[str] = []
    units: list[Unit] = []
    traits: set[str] = set()
    for name, what in found:
        key = re.sub(r"\.\d+$", "", name)
        if key not in stage_keys:
            stage_keys.append(key)
        stage = stage_keys.index(key)
        path = f"net.{name}"
        if what == "transformer":
            block = net.get_submodule(name)
            drop_paths = hasattr(block, "drop_path1") and hasattr(block, "drop_path2")
            units += _transformer_block(path, stage, "tokens_or_nhwc", "tokens_or_nhwc", prefix, drop_paths)
            traits.add("local_msa" if hasattr(block, "window_size") else "global_msa")
        else:
            units.append(_u(name, "conv", stage, Tap(path), subsamples=_strided(net.get_submodule(name))))
            traits.add("conv")
    first_name, first_kind = found[0]
    embed = _u("embed", "embed", 0, Tap(f"net.{first_name}", "input", "tokens_or_nhwc" if first_kind == "transformer" else "nchw", prefix))
    return _finish(f"generic:{type(net).__name__}", [embed, *units], traits)


def _adapters() -> list[tuple[type, Callable[[nn.Module], Anatomy]]]:
    from timm.models.pit import PoolingVisionTransformer
    from timm.models.resnet import ResNet
    from timm.models.swin_transformer import SwinTransformer
    from timm.models.vision_transformer import Block, VisionTransformer

    def vit(net):  # only timm's standard Block has the taps the ViT adapter reads
        return _vit(net) if all(type(b) is Block for b in net.blocks) else _generic(net)

    return [(VisionTransformer, vit), (PoolingVisionTransformer, _pit), (SwinTransformer, _swin),
            (ResNet, _resnet), (AlterNet, _alternet)]


def anatomy(model: nn.Module) -> Anatomy:
    """The ordered units of ``model`` (a :class:`~model_props.zoo.Classifier` or a bare network)."""
    net = unwrap(model)
    for cls, adapter in _adapters():
        if type(net) is cls:
            return adapter(net)
    return _generic(net)
