"""One traced forward pass that records what a model's modules do (the evidence the generic anatomy reads).

Module hooks keep the stack of executing module calls, with each call's first tensor input and output; a
``TorchFunctionMode`` sees every torch operation in between and records:

- **residual additions**: an addition (``+``, ``add``, ``add_``) of two equal-shape tensors inside a module's
  forward where one operand is that call's *stream* - its input, an earlier residual sum of the same call,
  or a reshaped/permuted view of one of them - and the other, the *branch*, was computed by child modules.
  When neither operand is the stream but both are outputs of child modules that read the stream (a
  projection shortcut, MetaFormer's ``res_scale``), the cheaper child (fewer parameters) is the skip.
- **attention**: ``scaled_dot_product_attention``, or a matrix product one of whose operands is (a view or
  dropout of) a softmax output: softmax(QK^T)V. Its key count tells global from windowed attention.
- **spatial mixing**: a convolution whose kernel is larger than 1x1, or a pooling window larger than 1.

Tensors are kept alive for the pass so that their ids stay unique.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn
from torch.overrides import TorchFunctionMode

__all__ = ["Call", "Residual", "Attention", "Trace", "trace_model"]

_ALIAS = {"view", "reshape", "permute", "transpose", "flatten", "unflatten", "contiguous", "view_as", "reshape_as",
          "movedim", "swapaxes"}
_SOFTMAX_PASS = _ALIAS | {"dropout", "to", "type_as", "float", "clone", "__getitem__", "expand", "expand_as",
                          "squeeze", "unsqueeze", "detach"}
_MATMUL = {"matmul", "__matmul__", "__rmatmul__", "bmm", "baddbmm", "mm", "einsum"}
_ADD = {"add", "add_", "__add__", "__iadd__", "__radd__"}
_CONV = {"conv1d", "conv2d", "conv3d", "conv_transpose2d"}
_POOL = {"avg_pool2d", "max_pool2d", "avg_pool1d", "max_pool1d", "lp_pool2d", "max_pool2d_with_indices"}


def _tensors(obj: Any, depth: int = 0):
    if isinstance(obj, torch.Tensor):
        yield obj
    elif depth < 3 and isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _tensors(o, depth + 1)
    elif depth < 3 and isinstance(obj, dict):
        for o in obj.values():
            yield from _tensors(o, depth + 1)


def _first(obj: Any) -> torch.Tensor | None:
    return next(_tensors(obj), None)


@dataclass
class Call:
    """One module call, in the order calls started."""

    index: int
    path: str  # dotted path from the traced root ('' for the root)
    module: nn.Module
    parent: int | None
    input: torch.Tensor | None = None
    output: torch.Tensor | None = None
    end: int = -1  # event counter when the call returned


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


@dataclass
class Trace:
    calls: list[Call]
    residuals: list[Residual]
    attention: list[Attention]
    boundary: dict[int, list[tuple[int, str]]]  # id(tensor) -> [(call, "input" | "output")], in event order
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


class _Tracer(TorchFunctionMode):
    def __init__(self, model: nn.Module):
        super().__init__()
        self.paths = {id(m): n for n, m in model.named_modules()}
        self.calls: list[Call] = []
        self.stack: list[int] = []
        self.stream: dict[int, set[int]] = {}  # call -> ids of its stream tensors
        self.segment: dict[int, dict[str, Any]] = {}  # call -> ops since its last residual add
        self.residuals: list[Residual] = []
        self.attention: list[Attention] = []
        self.spatial: list[tuple[int, int]] = []
        self.boundary: dict[int, list[tuple[int, str]]] = {}
        self.aliases: dict[int, int] = {}
        self.softmax: set[int] = set()
        self.keys_of: dict[int, int] = {}
        self.produced_by: dict[int, int] = {}  # id(tensor) -> call that returned it (latest)
        self.keep: list[Any] = []
        self.event = 0
        self.handles = []
        for m in model.modules():
            self.handles.append(m.register_forward_pre_hook(self._pre, with_kwargs=True))
            self.handles.append(m.register_forward_hook(self._post, with_kwargs=True, always_call=True))

    def close(self) -> None:
        for h in self.handles:
            h.remove()

    def _note(self, tensor: torch.Tensor | None, call: int, where: str) -> None:
        if tensor is not None:
            self.keep.append(tensor)
            self.boundary.setdefault(id(tensor), []).append((call, where))

    def _pre(self, module, args, kwargs):
        index = len(self.calls)
        inp = _first(args) if _first(args) is not None else _first(kwargs)
        self.calls.append(Call(index, self.paths.get(id(module), "?"), module, self.stack[-1] if self.stack else None, inp))
        self.stack.append(index)
        self.stream[index] = {id(inp)} if inp is not None else set()
        self.segment[index] = {"attention": [], "spatial": False, "children": 0}
        self._note(inp, index, "input")

    def _post(self, module, args, kwargs, out):
        if not self.stack:
            return
        index = self.stack.pop()
        call = self.calls[index]
        call.output = _first(out)
        call.end = self.event
        self._note(call.output, index, "output")
        if call.output is not None:
            self.produced_by[id(call.output)] = index
        if self.stack:
            parent = self.segment[self.stack[-1]]
            parent["children"] += 1 if any(p.requires_grad or True for p in module.parameters(recurse=True)) else 0

    def _in_stream(self, tensor: torch.Tensor, call: int) -> bool:
        key = id(tensor)
        while True:
            if key in self.stream[call]:
                return True
            if key not in self.aliases:
                return False
            key = self.aliases[key]

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        self.event += 1
        if not self.stack:
            return out
        name = getattr(func, "__name__", "")
        top = self.stack[-1]
        ins = list(_tensors(args)) + list(_tensors(kwargs))
        result = _first(out)
        if result is not None:
            self.keep.append(result)
        self.keep.extend(ins)
        if name in _ALIAS and ins and result is not None and result is not ins[0]:
            self.aliases[id(result)] = id(ins[0])
        if name == "softmax" and result is not None:
            self.softmax.add(id(result))
            self.keys_of[id(result)] = int(ins[0].shape[-1])
        elif name in _SOFTMAX_PASS and ins and id(ins[0]) in self.softmax and result is not None:
            self.softmax.add(id(result))
            self.keys_of[id(result)] = self.keys_of[id(ins[0])]
        elif name == "scaled_dot_product_attention":
            self._attention(int(ins[1].shape[-2]))
        elif name in _MATMUL:
            hits = [t for t in ins if id(t) in self.softmax]
            if hits:
                self._attention(self.keys_of[id(hits[0])])
        elif name in _CONV and len(ins) > 1 and ins[1].ndim >= 3 and max(ins[1].shape[2:]) > 1:
            self._spatial()
        elif name in _POOL:
            kernel = kwargs.get("kernel_size", args[1] if len(args) > 1 else 1)
            if (max(kernel) if isinstance(kernel, (tuple, list)) else kernel) > 1:
                self._spatial()
        elif name in _ADD and len(ins) >= 2 and result is not None:
            self._add(top, args, ins, result)
        return out

    def _attention(self, keys: int) -> None:
        event = Attention(self.stack[-1], keys, self.event)
        self.attention.append(event)
        for call in self.stack:
            self.segment[call]["attention"].append(event)

    def _spatial(self) -> None:
        self.spatial.append((self.stack[-1], self.event))
        for call in self.stack:
            self.segment[call]["spatial"] = True

    def _add(self, call: int, args: tuple, ins: list[torch.Tensor], result: torch.Tensor) -> None:
        a, b = (t for t in args[:2]) if len(args) >= 2 and all(isinstance(t, torch.Tensor) for t in args[:2]) else (ins[0], ins[1])
        if a.shape != b.shape or a.shape != result.shape:
            return
        seg = self.segment[call]
        if self._in_stream(a, call) and not self._in_stream(b, call):
            skip, branch, projected = a, b, False
        elif self._in_stream(b, call) and not self._in_stream(a, call):
            skip, branch, projected = b, a, False
        else:  # a projection shortcut: both operands come from children that read the stream
            readers = [t for t in (a, b) if id(t) in self.produced_by
                       and self._reads_stream(self.produced_by[id(t)], call)]
            if len(readers) == 0 or seg["children"] == 0:
                return
            cheapest = min(readers, key=lambda t: sum(p.numel() for p in self.calls[self.produced_by[id(t)]].module.parameters()))
            skip, branch, projected = cheapest, (b if cheapest is a else a), True
        if seg["children"] == 0:  # a sum computed inside one layer (e.g. a norm's x + gamma * ...), not a block
            return
        self.residuals.append(Residual(call, skip, branch, result, self.event, list(seg["attention"]), seg["spatial"], projected))
        self.stream[call].add(id(result))
        self.segment[call] = {"attention": [], "spatial": False, "children": 0}

    def _reads_stream(self, child: int, call: int) -> bool:
        inp = self.calls[child].input
        return inp is not None and self.calls[child].parent == call and self._in_stream(inp, call)


def trace_model(model: nn.Module, x: torch.Tensor) -> Trace:
    """Run ``model(x)`` once in eval mode with timm's fused attention off, and return what it did."""
    from .capture import unfused_attention

    tracer = _Tracer(model)
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad(), unfused_attention(model), tracer:
            output = model(x)
    finally:
        tracer.close()
        model.train(was_training)
    return Trace(tracer.calls, tracer.residuals, tracer.attention, tracer.boundary, tracer.aliases, tracer.spatial,
                 output, tracer.keep)


_ = contextlib  # (kept for symmetry with capture's context managers)
