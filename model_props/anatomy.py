"""A model as an ordered list of units, mapped from what its modules do (Park & Kim 2022, App. A; design Sec. 4).

Kinds: ``embed`` (the state before the first unit), ``msa`` (a residual unit whose branch attends),
``conv`` (a residual unit whose branch mixes positions with convolutions or pooling), ``mlp`` (a residual
unit whose branch mixes channels only), ``subsample`` (a change of the stream outside any residual unit that
changes the number of positions: pooling, patch merging) and ``head``. A residual unit whose output has
fewer positions than its input (a strided block with a projection shortcut) is a ``conv`` unit with
``subsamples=True``. ``stage`` counts the changes of spatial size; ``depth`` is the unit's index over the
non-head units normalised to [0, 1] as in the paper's Fig. 8/9 (index / (n - 1)); the head gets 1.

**The rule.** One probe forward pass is traced (:mod:`model_props.tracing`). Every *residual addition* -
``x + f(x)`` inside a module's forward, where ``x`` is that module's input (or a view of it, or an earlier
residual sum of the same call) and ``f(x)`` was computed by its children; or, for projection and
pre-activated shortcuts, the cheaper of two operands computed from the input - is a unit, in forward order.
Its kind comes from the operations of the branch: attention (``softmax(QK^T) V`` or
``scaled_dot_product_attention``) makes ``msa``, a convolution wider than 1x1 or a pooling window makes
``conv``, anything else ``mlp``. Where the stream between two residual units is changed by modules outside
them, that change is a unit of its own (``subsample`` if the number of positions changes, else ``conv``;
``msa`` if it attends, as LeViT's attention downsampling does). A model without residual additions (VGG,
Inception, DenseNet) has as units the outputs of its stages (timm's ``feature_info``), else of its top-level
layers. Attention over as many keys as the map has positions is global, over fewer (windows) local; a model
with any local attention is ``local_msa``.

No family adapters: the rule reproduces the units, taps and traits of the five references (a test captures
identical tensors), and it sees what class names hide (MobileViT's transformer inside a conv block, EdgeNeXt's
cross-covariance attention, MetaFormer token mixers, RegNet's post-activated projections).

A unit says *where* its tensors live as :class:`Tap` s (module path, input or output, memory layout), not
how to compute them: :mod:`model_props.capture` reads every tap of every unit in one forward pass.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Literal

import torch
from torch import nn

from .errors import AnatomyError
from .zoo.wrapper import Classifier, unwrap

__all__ = ["Tap", "Unit", "Anatomy", "anatomy", "UnitKind", "TRAITS"]

UnitKind = Literal["embed", "msa", "mlp", "conv", "subsample", "head"]
Layout = Literal["nchw", "nhwc", "tokens", "logits"]
TRAITS = ("global_msa", "local_msa", "conv", "multi_stage")


@dataclass(frozen=True)
class Tap:
    """Where a tensor is read: the input or output of ``module`` (a dotted path in the wrapped model)."""

    module: str
    where: Literal["input", "output"] = "output"
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
        rows = [f"{u.index:3d} {u.kind:9s} stage {u.stage} depth {u.depth:.2f}{' (subsamples)' if u.subsamples else ''}  {u.name}" for u in self.units]
        return f"{self.family}: traits {sorted(self.traits)}\n" + "\n".join(rows)


def _u(name: str, kind: UnitKind, stage: int, output: Tap, branch: Tap | None = None, skip: Tap | None = None,
       subsamples: bool = False, attention: str | None = None, activation: str | None = None) -> Unit:
    """A unit before numbering (index and depth are set by :func:`_finish`)."""
    return Unit(0, name, kind, stage, 0.0, output, branch, skip, subsamples, attention, activation)


def _finish(family: str, units: list[Unit], traits: set[str]) -> Anatomy:
    head = _u("head", "head", max(u.stage for u in units), Tap("net", "output", "logits"))
    n = len(units)
    numbered = [replace(u, index=i, depth=i / (n - 1) if n > 1 else 0.0) for i, u in enumerate(units)]
    numbered.append(replace(head, index=n, depth=1.0))
    if len({u.stage for u in units}) > 1:
        traits.add("multi_stage")
    return Anatomy(family, tuple(numbered), frozenset(traits))


def _layout(t: torch.Tensor, batch: int) -> tuple[Layout, int, int] | None:
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


def _positions(t: torch.Tensor, batch: int) -> int:
    """Spatial positions of a map-like tensor (0 if it is not one)."""
    found = _layout(t, batch)
    if found is None:
        return 0
    layout, prefix, fold = found
    if layout == "tokens":
        return (t.shape[1] - prefix) * fold
    return (t.shape[1] * t.shape[2] if layout == "nhwc" else t.shape[2] * t.shape[3]) * fold


class _Mapper:
    """Builds units from a :class:`~model_props.tracing.Trace` (see the module docstring for the rule)."""

    BATCH = 2

    def __init__(self, model: nn.Module, img_size: int):
        from .tracing import trace_model

        self.model = model
        self.prefix = "" if isinstance(model, Classifier) else "net."
        probe = torch.rand(self.BATCH, 3, img_size, img_size, generator=torch.Generator().manual_seed(0))
        self.trace = trace_model(model, probe)

    def path(self, call: int) -> str:
        return self.prefix + self.trace.calls[call].path

    def tap(self, tensor: torch.Tensor, call: int, where: Literal["input", "output"]) -> Tap | None:
        found = _layout(tensor, self.BATCH)
        if found is None:
            return None
        layout, prefix, fold = found
        module = self.trace.calls[call].module
        occurrence = sum(1 for c in self.trace.calls[:call] if c.module is module)
        return Tap(self.path(call), where, layout, prefix, fold=fold, occurrence=occurrence)

    def seen(self, tensor: torch.Tensor, before: int) -> tuple[int, str] | None:
        """The last module boundary before event ``before`` where ``tensor`` or what it views was seen (the
        last, because a block may still change a tensor in place after the module that produced it)."""
        calls, key = self.trace.calls, id(tensor)
        while True:
            hits = [(c, w) for c, w in self.trace.boundary.get(key, [])
                    if (calls[c].end if w == "output" else calls[c].start) <= before]
            if hits:
                return max(hits, key=lambda h: calls[h[0]].end if h[1] == "output" else calls[h[0]].start)
            if key not in self.trace.aliases:
                return None
            key = self.trace.aliases[key]

    def after(self, r) -> tuple[torch.Tensor, Tap, tuple[int, str]] | None:
        """Where the state after residual ``r`` is seen: the output of its module when nothing with weights runs
        in it afterwards (a trailing activation included, as in post-activation blocks), else the input of the
        next module that reads the sum."""
        calls, trace = self.trace.calls, self.trace
        m = calls[r.call]
        later = any(x.call == r.call and x.event > r.event for x in self.outermost)
        weighted_later = any(c.parent == r.call and c.start >= r.event and any(True for _ in c.module.parameters())
                             for c in calls)
        if not later and not weighted_later and m.output is not None:
            state, at = m.output, (r.call, "output")
        else:
            consumer = next((c for c in calls if c.start >= r.event and c.input is not None
                             and trace.root(c.input) == trace.root(r.result)), None)
            if consumer is None:
                return None
            state, at = consumer.input, (consumer.index, "input")
        t = self.tap(state, *at)
        # a sum on part of the stream (VOLO's class token) is not the stream's state
        if t is None or _positions(state, self.BATCH) != _positions(r.result, self.BATCH):
            return None
        return state, t, at

    def transition(self, r, state: torch.Tensor | None, first: bool, last_event: int) -> tuple[Unit, int] | None:
        """The unit for a change of the stream outside residual units, seen where residual ``r`` reads it."""
        calls, m = self.trace.calls, self.trace.calls[r.call]
        entering = r.entering
        at = self.seen(entering, r.event)
        t = self.tap(entering, *at) if at else None
        if t is None:
            return None
        positions = _positions(entering, self.BATCH)
        if first:
            return _u("embed", "embed", 0, t), positions
        moved = _positions(state, self.BATCH) != positions
        # named after the module that changed the size (the outermost, which ends last), else what produced it
        changers = [c for c in calls if last_event < c.end <= m.start and c.input is not None and c.output is not None
                    and _positions(c.output, self.BATCH) == positions != _positions(c.input, self.BATCH)]
        producers = [c for c in calls if c.output is entering]
        named = max(changers, key=lambda c: c.end) if moved and changers else min(producers, key=lambda c: c.end,
                                                                                     default=calls[at[0]])
        unit = _u(named.path.removeprefix("net."), "subsample" if moved else "conv", 0, t, subsamples=moved)
        # attention between the previous residual and this one's module: outside any residual unit (LeViT's
        # attention downsampling); it makes the transition an msa unit
        outside = [a for a in self.trace.attention if last_event < a.event < m.start]
        if outside:
            unit = replace(unit, kind="msa", attention=self.path(outside[0].call))
        return unit, positions

    def adds_up(self, state: Tap, state_at: tuple[int, str], skip: Tap, skip_at: tuple[int, str], branch: Tap,
                branch_at: tuple[int, str], activation: str | None) -> bool:
        """On the probe, the state is (the activation of) skip + branch, each read at its tap as a map."""
        from .capture import to_map

        values = self.trace.values
        try:
            state, skip, branch = (to_map(values[at], tap)[0] for at, tap in ((state_at, state), (skip_at, skip),
                                                                              (branch_at, branch)))
        except AnatomyError:  # a tap that does not read as a map of its layout
            return False
        if not state.shape == skip.shape == branch.shape:
            return False
        total = skip + branch if activation is None else getattr(torch.nn.functional, activation)(skip + branch)
        return torch.allclose(state, total, rtol=1e-4, atol=1e-5 * float(state.abs().max().clamp_min(1)))

    def residual_unit(self, r, after: torch.Tensor, out: Tap, out_at: tuple[int, str], repeated: bool) -> Unit:
        """The unit of residual ``r`` whose state ``after`` is read at ``out``. Its skip and branch taps are kept
        only where they add up to the state on the probe (they do not in multi-branch blocks whose branches are
        summed in place, MobileOne's, or where a cell sums several paths, NASNet's): then the unit is a step of
        the stream without a verified decomposition."""
        calls, m = self.trace.calls, self.trace.calls[r.call]
        kind: UnitKind = "msa" if r.attention else "conv" if r.spatial else "mlp"
        # the branch as the last module that returned it before the sum (an in-place sum and ReLU may follow)
        producer = max((c for c in calls if c.output is r.branch and c.end < r.event), key=lambda c: c.end, default=None)
        skip_at = self.seen(r.skip, r.event)
        branch = self.tap(r.branch, producer.index, "output") if producer is not None else None
        skip = self.tap(r.skip, *skip_at) if skip_at is not None else None
        activation = r.activation
        if branch is None or skip is None or not self.adds_up(out, out_at, skip, skip_at, branch, (producer.index, "output"),
                                                              activation):
            branch = skip = activation = None
        name = m.path.removeprefix("net.") + (f".{kind}" if repeated else "")
        moved = m.input is not None and _positions(m.input, self.BATCH) != _positions(after, self.BATCH)
        return _u(name, kind, 0, out, branch, skip, subsamples=moved,
                  attention=self.path(r.attention[0].call) if r.attention else None, activation=activation)

    @cached_property
    def outermost(self) -> list:
        """The residuals that are not inside the branch of another: a sum within an attention module or a
        block's branch (EfficientFormerV2 adds a local conv of V to the attention output) is part of it."""
        calls, residuals = self.trace.calls, self.trace.residuals
        starts = {}
        for r in residuals:  # each residual's branch runs from its call's start or the call's previous residual
            previous = [x.event for x in residuals if x.call == r.call and x.event < r.event]
            starts[id(r)] = max(previous, default=calls[r.call].start)

        def inside(inner, outer) -> bool:
            parent = calls[inner.call].parent
            while parent is not None and parent != outer.call:
                parent = calls[parent].parent
            return parent == outer.call and starts[id(outer)] < inner.event < outer.event

        return [r for r in residuals if not any(inside(r, o) for o in residuals if o is not r)]

    def units(self) -> tuple[list[tuple[Unit, int]], set[str]]:
        """(unit, spatial positions of its state) in forward order, and the traits they show."""
        trace = self.trace
        units: list[tuple[Unit, int]] = []
        traits: set[str] = set()
        state: torch.Tensor | None = None
        last_event = -1
        residuals = self.outermost
        per_call: dict[int, int] = {}
        for r in residuals:
            per_call[r.call] = per_call.get(r.call, 0) + 1
        for r in residuals:
            found = self.after(r)
            if found is None:
                continue
            after, out, out_at = found
            entering = r.entering
            if state is None or trace.root(state) != trace.root(entering):  # the stream changed outside a residual
                if (step := self.transition(r, state, not units, last_event)) is not None:
                    units.append(step)
            unit = self.residual_unit(r, after, out, out_at, per_call[r.call] > 1)
            units.append((unit, _positions(after, self.BATCH)))
            if r.attention:
                global_ = r.attention[0].keys >= _positions(after, self.BATCH) // max(1, out.fold)
                traits.add("global_msa" if global_ else "local_msa")
            if unit.kind == "conv":
                traits.add("conv")
            state, last_event = after, r.event
        if "local_msa" in traits:  # windowed attention is local even where a window covers a whole small map
            traits.discard("global_msa")
        return units, traits

    def layer_units(self) -> list[tuple[Unit, int]]:
        """For a model without residual additions: the outputs of its stages (timm's ``feature_info``), else of
        its top-level layers, as conv units, with the input of the first as the embedding."""
        calls = self.trace.calls
        net = unwrap(self.model)
        root = next((c.index for c in calls if c.module is net), None)
        info = getattr(net, "feature_info", None)
        names = [f.get("module") for f in info] if info is not None else []
        chosen = [c for c in calls if c.module is not net and c.output is not None
                  and ((net.get_submodule(c.path.removeprefix("net.")) if c.path else None) is not None)
                  and (c.path.removeprefix("net.") in names if names else c.parent == root)]
        found: list[tuple[Unit, int]] = []
        for c in chosen:
            t = self.tap(c.output, c.index, "output")
            if t is not None:
                found.append((_u(c.path.removeprefix("net."), "conv", 0, t), _positions(c.output, self.BATCH)))
        if found:
            first = next(c for c in chosen if self.tap(c.output, c.index, "output") is not None)
            t = self.tap(first.input, first.index, "input") if first.input is not None else None
            if t is not None:
                found.insert(0, (_u("embed", "embed", 0, t), _positions(first.input, self.BATCH)))
        previous = None
        marked = []
        for unit, positions in found:
            marked.append((replace(unit, subsamples=previous is not None and positions != previous), positions))
            previous = positions
        return marked


def _traced(model: nn.Module, img_size: int) -> Anatomy:
    """The units of any model, from what its modules do in one traced forward pass (module docstring)."""
    try:
        mapper = _Mapper(model, img_size)
    except Exception as exc:  # the probe pass itself failed: say so in one line
        raise AnatomyError(f"cannot map {type(unwrap(model)).__name__} into units: its forward pass on "
                           f"3x{img_size}x{img_size} images raised {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from exc
    units, traits = mapper.units()
    if not units:
        units, traits = mapper.layer_units(), {"conv"}
    if len(units) < 2:
        net = unwrap(model)
        top = ", ".join(f"{n}: {type(c).__name__}" for n, c in net.named_children()) or "no submodules"
        raise AnatomyError(f"cannot map {type(net).__name__} into units: a traced forward pass found no residual "
                           f"additions (x + f(x)) and no stage outputs with feature maps; its top-level modules are: {top}")
    staged, stage, previous = [], 0, None
    for unit, positions in units:  # a new stage wherever the number of spatial positions changes
        if previous is not None and positions != previous:
            stage += 1
        staged.append(replace(unit, stage=stage))
        previous = positions
    return _finish(getattr(model, "name", None) or type(unwrap(model)).__name__, staged, traits)


def anatomy(model: nn.Module, img_size: int | None = None) -> Anatomy:
    """The ordered units of ``model`` (a :class:`~model_props.zoo.Classifier` or a bare network), traced at
    ``img_size`` (default: the Classifier's, else 32)."""
    return _traced(model, img_size or getattr(model, "img_size", 32))
