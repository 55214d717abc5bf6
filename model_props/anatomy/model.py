"""What an anatomy is: a model as an ordered list of :class:`Unit` s, each with :class:`Tap` s that say where
its tensors are read (docs/design.md#anatomy).

Kinds: ``embed`` (the state before the first unit), ``msa`` (a residual unit whose branch attends),
``conv`` (a residual unit whose branch mixes positions with convolutions or pooling), ``mlp`` (a residual
unit whose branch mixes channels only), ``subsample`` (a change of the stream outside any residual unit that
changes the number of positions: pooling, patch merging) and ``head``. ``stage`` counts the changes of
spatial size; ``depth`` is the unit's index over the non-head units normalised to [0, 1] as in Park & Kim's
Fig. 8/9 (index / (n - 1)); the head gets 1.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

__all__ = ["Tap", "Unit", "Anatomy", "UnitKind", "Layout", "Where", "TRAITS", "unnumbered", "numbered"]

UnitKind = Literal["embed", "msa", "mlp", "conv", "subsample", "head"]
Layout = Literal["nchw", "nhwc", "tokens", "logits"]
Where = Literal["input", "output"]  # which side of a module call a tensor is read at
TRAITS = ("global_msa", "local_msa", "conv", "multi_stage")


@dataclass(frozen=True)
class Tap:
    """Where a tensor is read: the input or output of ``module`` (a dotted path in the wrapped model)."""

    module: str
    where: Where = "output"
    layout: Layout = "nchw"
    prefix_tokens: int = 0  # CLS/distillation tokens in front of the spatial tokens
    fold: int = 1  # images folded into the batch dimension (MobileViT runs attention per patch position)
    occurrence: int = 0  # which call of the module, when it runs more than once in a forward pass


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
    attention: str | None = None  # path of the module that attends, for msa units
    activation: str | None = None  # state = activation(skip + branch) for post-activation blocks (e.g. 'relu')


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
        rows = [
            f"{u.index:3d} {u.kind:9s} stage {u.stage} depth {u.depth:.2f}{' (subsamples)' if u.subsamples else ''}  {u.name}"
            for u in self.units
        ]
        return f"{self.family}: traits {sorted(self.traits)}\n" + "\n".join(rows)


def unnumbered(
    name: str,
    kind: UnitKind,
    stage: int,
    output: Tap,
    branch: Tap | None = None,
    skip: Tap | None = None,
    subsamples: bool = False,
    attention: str | None = None,
    activation: str | None = None,
) -> Unit:
    """A unit before numbering (index and depth are set by :func:`numbered`)."""
    return Unit(0, name, kind, stage, 0.0, output, branch, skip, subsamples, attention, activation)


def numbered(family: str, units: list[Unit], traits: set[str]) -> Anatomy:
    head = unnumbered("head", "head", max(u.stage for u in units), Tap("net", "output", "logits"))
    n = len(units)
    numbered = [replace(u, index=i, depth=i / (n - 1) if n > 1 else 0.0) for i, u in enumerate(units)]
    numbered.append(replace(head, index=n, depth=1.0))
    if len({u.stage for u in units}) > 1:
        traits.add("multi_stage")
    return Anatomy(family, tuple(numbered), frozenset(traits))
