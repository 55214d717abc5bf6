"""The records of one traced forward pass: module calls, residual additions and attention (what the anatomy's
rule reads; :mod:`.tracer` records them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch
from torch import nn

if TYPE_CHECKING:
    from .model import Where

__all__ = ["Call", "Residual", "Attention", "Trace", "first_tensor", "tensors_in"]


def tensors_in(obj: Any, depth: int = 0):
    """The tensors in a module's arguments or output, in order: tuples, lists and dicts searched 3 levels deep."""
    if isinstance(obj, torch.Tensor):
        yield obj
    elif depth < 3 and isinstance(obj, (list, tuple)):
        for o in obj:
            yield from tensors_in(o, depth + 1)
    elif depth < 3 and isinstance(obj, dict):
        for o in obj.values():
            yield from tensors_in(o, depth + 1)


def first_tensor(obj: Any) -> torch.Tensor | None:
    """The first tensor in a module's arguments or output (tuples, lists and dicts searched in order)."""
    return next(tensors_in(obj), None)


@dataclass
class Call:
    """One module call, in the order calls started."""

    index: int
    path: str  # dotted path from the traced root ('' for the root)
    module: nn.Module
    parent: int | None
    input: torch.Tensor | None = None
    output: torch.Tensor | None = None
    start: int = -1  # event counter when the call began
    end: int = -1  # event counter when it returned


@dataclass
class Attention:
    call: int  # the innermost module call it ran in
    keys: int  # number of keys attended over
    event: int


@dataclass
class Residual:
    """``result = skip + branch`` inside module call ``call``."""

    call: int
    skip: torch.Tensor
    branch: torch.Tensor
    result: torch.Tensor
    event: int
    attention: list[Attention] = field(default_factory=list)  # in the branch (since the previous residual of the call)
    spatial: bool = False  # the branch mixed positions (conv > 1x1, pooling)
    projected: bool = False  # the skip went through a module (a projection shortcut)
    entering: torch.Tensor | None = None  # the stream the unit starts from (the skip, or what it was computed from)
    activation: str | None = None  # an elementwise activation applied to the sum next (post-activation blocks)


@dataclass
class Trace:
    calls: list[Call]
    residuals: list[Residual]
    attention: list[Attention]
    boundary: dict[int, list[tuple[int, Where]]]  # id(tensor) -> [(call, "input" | "output")], in event order
    values: dict[tuple[int, str], torch.Tensor]  # (call, "input" | "output") -> a copy of what it saw
    aliases: dict[int, int]  # id(view) -> id(the tensor it is a view of)
    spatial_events: list[tuple[int, int]] = field(default_factory=list)  # (call, event)
    output: Any = None
    keep: list[Any] = field(default_factory=list)

    def root(self, tensor: torch.Tensor) -> int:
        """The id of the tensor a view chain starts from."""
        key = id(tensor)
        while key in self.aliases:
            key = self.aliases[key]
        return key
