"""The mapper: builds a model's units from one traced forward pass (the rule is in :mod:`.mapping`)."""

from __future__ import annotations

from dataclasses import replace
from functools import cached_property

import torch
from torch import nn

from ..errors import AnatomyError
from ..zoo.wrapper import Classifier, unwrap
from .model import Tap, Unit, UnitKind, Where, unnumbered
from .taps import layout_of, position_count, to_map
from .tracer import device_of, trace_model

__all__ = ["Mapper"]


class Mapper:
    """Builds units from a :class:`~model_props.anatomy.records.Trace` (see the module docstring for the rule)."""

    BATCH = 2

    def __init__(self, model: nn.Module, img_size: int):
        self.model = model
        self.prefix = "" if isinstance(model, Classifier) else "net."
        generator = torch.Generator().manual_seed(0)  # drawn on the CPU: one probe on every device
        probe = torch.rand(self.BATCH, 3, img_size, img_size, generator=generator).to(device_of(model))
        self.trace = trace_model(model, probe)

    def path(self, call: int) -> str:
        return self.prefix + self.trace.calls[call].path

    def tap(self, tensor: torch.Tensor, call: int, where: Where) -> Tap | None:
        found = layout_of(tensor, self.BATCH)
        if found is None:
            return None
        layout, prefix, fold = found
        module = self.trace.calls[call].module
        occurrence = sum(1 for c in self.trace.calls[:call] if c.module is module)
        return Tap(self.path(call), where, layout, prefix, fold=fold, occurrence=occurrence)

    def seen(self, tensor: torch.Tensor, before: int) -> tuple[int, Where] | None:
        """The last module boundary before event ``before`` where ``tensor`` or what it views was seen (the
        last, because a block may still change a tensor in place after the module that produced it)."""
        calls, key = self.trace.calls, id(tensor)
        while True:
            hits = [
                (c, w)
                for c, w in self.trace.boundary.get(key, [])
                if (calls[c].end if w == "output" else calls[c].start) <= before
            ]
            if hits:
                return max(hits, key=lambda h: calls[h[0]].end if h[1] == "output" else calls[h[0]].start)
            if key not in self.trace.aliases:
                return None
            key = self.trace.aliases[key]

    def after(self, r) -> tuple[torch.Tensor, Tap, tuple[int, Where]] | None:
        """Where the state after residual ``r`` is seen: the output of its module when nothing with weights runs
        in it afterwards (a trailing activation included, as in post-activation blocks), else the input of the
        next module that reads the sum."""
        calls, trace = self.trace.calls, self.trace
        m = calls[r.call]
        later = any(x.call == r.call and x.event > r.event for x in self.outermost)
        weighted_later = any(
            c.parent == r.call and c.start >= r.event and any(True for _ in c.module.parameters()) for c in calls
        )
        at: tuple[int, Where]
        if not later and not weighted_later and m.output is not None:
            state, at = m.output, (r.call, "output")
        else:
            consumer = next(
                (
                    c
                    for c in calls
                    if c.start >= r.event and c.input is not None and trace.root(c.input) == trace.root(r.result)
                ),
                None,
            )
            if consumer is None or consumer.input is None:  # (chosen with an input)
                return None
            state, at = consumer.input, (consumer.index, "input")
        t = self.tap(state, *at)
        # a sum on part of the stream (VOLO's class token) is not the stream's state
        if t is None or position_count(state, self.BATCH) != position_count(r.result, self.BATCH):
            return None
        return state, t, at

    def transition(self, r, state: torch.Tensor | None, first: bool, last_event: int) -> tuple[Unit, int] | None:
        """The unit for a change of the stream outside residual units, seen where residual ``r`` reads it."""
        calls, m = self.trace.calls, self.trace.calls[r.call]
        entering = r.entering
        at = self.seen(entering, r.event)
        if at is None:
            return None
        t = self.tap(entering, *at)
        if t is None:
            return None
        positions = position_count(entering, self.BATCH)
        if first:
            return unnumbered("embed", "embed", 0, t), positions
        if state is None:  # never: the stream has a state from the first unit on
            raise AnatomyError(f"{m.path}: a change of the stream before the first unit")
        moved = position_count(state, self.BATCH) != positions
        # named after the module that changed the size (the outermost, which ends last), else what produced it
        changers = [
            c
            for c in calls
            if last_event < c.end <= m.start
            and c.input is not None
            and c.output is not None
            and position_count(c.output, self.BATCH) == positions != position_count(c.input, self.BATCH)
        ]
        producers = [c for c in calls if c.output is entering]
        named = (
            max(changers, key=lambda c: c.end)
            if moved and changers
            else min(producers, key=lambda c: c.end, default=calls[at[0]])
        )
        unit = unnumbered(named.path.removeprefix("net."), "subsample" if moved else "conv", 0, t, subsamples=moved)
        # attention between the previous residual and this one's module: outside any residual unit (LeViT's
        # attention downsampling); it makes the transition an msa unit
        outside = [a for a in self.trace.attention if last_event < a.event < m.start]
        if outside:
            unit = replace(unit, kind="msa", attention=self.path(outside[0].call))
        return unit, positions

    def adds_up(
        self,
        state: Tap,
        state_at: tuple[int, Where],
        skip: Tap,
        skip_at: tuple[int, Where],
        branch: Tap,
        branch_at: tuple[int, Where],
        activation: str | None,
    ) -> bool:
        """On the probe, the state is (the activation of) skip + branch, each read at its tap as a map."""
        values = self.trace.values
        try:
            state_map, skip_map, branch_map = (
                to_map(values[at], tap)[0] for at, tap in ((state_at, state), (skip_at, skip), (branch_at, branch))
            )
        except AnatomyError:  # a tap that does not read as a map of its layout
            return False
        if not state_map.shape == skip_map.shape == branch_map.shape:
            return False
        summed = skip_map + branch_map
        total = summed if activation is None else getattr(torch.nn.functional, activation)(summed)
        return torch.allclose(state_map, total, rtol=1e-4, atol=1e-5 * float(state_map.abs().max().clamp_min(1)))

    def residual_unit(self, r, after: torch.Tensor, out: Tap, out_at: tuple[int, Where], repeated: bool) -> Unit:
        """The unit of residual ``r`` whose state ``after`` is read at ``out``. Its skip and branch taps are kept
        only where they add up to the state on the probe (they do not in multi-branch blocks whose branches are
        summed in place, MobileOne's, or where a cell sums several paths, NASNet's): then the unit is a step of
        the stream without a verified decomposition."""
        calls, m = self.trace.calls, self.trace.calls[r.call]
        kind: UnitKind = "msa" if r.attention else "conv" if r.spatial else "mlp"
        # the branch as the last module that returned it before the sum (an in-place sum and ReLU may follow)
        producer = max(
            (c for c in calls if c.output is r.branch and c.end < r.event), key=lambda c: c.end, default=None
        )
        skip_at = self.seen(r.skip, r.event)
        branch = self.tap(r.branch, producer.index, "output") if producer is not None else None
        skip = self.tap(r.skip, *skip_at) if skip_at is not None else None
        activation = r.activation
        if (
            branch is None
            or skip is None
            or skip_at is None  # (then skip is None)
            or producer is None  # (then branch is None)
            or not self.adds_up(out, out_at, skip, skip_at, branch, (producer.index, "output"), activation)
        ):
            branch = skip = activation = None
        name = m.path.removeprefix("net.") + (f".{kind}" if repeated else "")
        moved = m.input is not None and position_count(m.input, self.BATCH) != position_count(after, self.BATCH)
        return unnumbered(
            name,
            kind,
            0,
            out,
            branch,
            skip,
            subsamples=moved,
            attention=self.path(r.attention[0].call) if r.attention else None,
            activation=activation,
        )

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
            units.append((unit, position_count(after, self.BATCH)))
            if r.attention:
                global_ = r.attention[0].keys >= position_count(after, self.BATCH) // max(1, out.fold)
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
        chosen = [
            c
            for c in calls
            if c.module is not net
            and c.output is not None
            and ((net.get_submodule(c.path.removeprefix("net.")) if c.path else None) is not None)
            and (c.path.removeprefix("net.") in names if names else c.parent == root)
        ]
        found: list[tuple[Unit, int]] = []
        for c in chosen:
            if c.output is None:  # (chosen with an output)
                continue
            t = self.tap(c.output, c.index, "output")
            if t is not None:
                found.append(
                    (unnumbered(c.path.removeprefix("net."), "conv", 0, t), position_count(c.output, self.BATCH))
                )
        if found:
            first = next(
                c for c in chosen if c.output is not None and self.tap(c.output, c.index, "output") is not None
            )
            if first.input is not None and (t := self.tap(first.input, first.index, "input")) is not None:
                found.insert(0, (unnumbered("embed", "embed", 0, t), position_count(first.input, self.BATCH)))
        previous = None
        marked = []
        for unit, positions in found:
            marked.append((replace(unit, subsamples=previous is not None and positions != previous), positions))
            previous = positions
        return marked
