"""One traced forward pass that records what a model's modules do (the evidence the generic anatomy reads).

Module hooks keep the stack of executing module calls, with each call's first tensor input and output; a
``TorchFunctionMode`` sees every torch operation in between and records:

- **residual additions**: an addition (``+``, ``add``, ``add_``) of two equal-shape tensors inside a module's
  forward where one operand is that call's *stream* - its input, an earlier residual sum of the same call,
  or a reshaped/permuted view of one of them - and the other, the *branch*, was computed by child modules.
  When neither operand is the stream but both were computed from it (a projection shortcut, a
  pre-activated shortcut, MetaFormer's ``res_scale``), the operand that went through fewer computing module
  calls inside the block is the skip; operands of equal cost (two symmetric branches) make no residual.
- **attention**: ``scaled_dot_product_attention``, or a matrix product one of whose operands is (a view or
  dropout of) a softmax output: softmax(QK^T)V. Its key count tells global from windowed attention.
- **spatial mixing**: a convolution whose kernel is larger than 1x1, a pooling window larger than 1, or a
  linear layer across positions (its input's last size is the number of tokens the call received: MLP-Mixer's
  token mixing).

Tensors are kept alive for the pass so that their ids stay unique.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch
from torch import nn
from torch.overrides import TorchFunctionMode

from . import operations as ops
from .attention import unfused_attention
from .records import Attention, Call, Residual, Trace, first_tensor, tensors_in

if TYPE_CHECKING:
    from .model import Where

__all__ = ["trace_model", "device_of"]

_first = first_tensor


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
        self.boundary: dict[int, list[tuple[int, Where]]] = {}
        self.aliases: dict[int, int] = {}
        self.softmax: set[int] = set()
        self.keys_of: dict[int, int] = {}
        # id(tensor) -> (the calls whose input it derives from, the computing module calls it went through)
        self.lineage: dict[int, tuple[frozenset[int], frozenset[int]]] = {}
        self.keep: list[Any] = []
        self.weighted: dict[int, bool] = {}
        self.pending: dict[int, Residual] = {}
        self.head: dict[int, torch.Tensor | None] = {}  # call -> the latest tensor of its stream
        self.values: dict[tuple[int, str], torch.Tensor] = {}
        self.quiet = False
        self.event = 0
        self.handles = []
        for m in model.modules():
            self.handles.append(m.register_forward_pre_hook(self._pre, with_kwargs=True))
            self.handles.append(m.register_forward_hook(self._post, with_kwargs=True, always_call=True))

    def close(self) -> None:
        for h in self.handles:
            h.remove()

    def _note(self, tensor: torch.Tensor | None, call: int, where: Where) -> None:
        if tensor is not None:
            self.keep.append(tensor)
            self.boundary.setdefault(id(tensor), []).append((call, where))
            self.quiet = True  # the copy is the tracer's own operation, not the model's
            try:
                self.values[(call, where)] = tensor.detach().clone()  # what the boundary saw (later in-place ops aside)
            finally:
                self.quiet = False

    def _pre(self, module, args, kwargs):
        index = len(self.calls)
        inp = _first(args) if _first(args) is not None else _first(kwargs)
        self.calls.append(
            Call(
                index,
                self.paths.get(id(module), "?"),
                module,
                self.stack[-1] if self.stack else None,
                inp,
                start=self.event,
            )
        )
        self.stack.append(index)
        self.stream[index] = {id(inp)} if inp is not None else set()
        self.head[index] = inp
        if inp is not None:  # the call's input derives from the call's input
            sources, weights = self.lineage.get(id(inp), (frozenset(), frozenset()))
            self.lineage[id(inp)] = (sources | {index}, weights)
        self.segment[index] = {"attention": [], "spatial": False, "children": 0}
        self._note(inp, index, "input")

    def _post(self, module, args, kwargs, out):
        if not self.stack:
            return
        index = self.stack.pop()
        call = self.calls[index]
        call.output = _first(out)
        call.end = self.event
        for key in [k for k, r in self.pending.items() if r.call == index]:  # an activation must act inside the block
            del self.pending[key]
        self._note(call.output, index, "output")
        if call.output is not None and call.output is not call.input and self._is_leaf(module):  # a computing layer
            sources, steps = self.lineage.get(id(call.output), (frozenset(), frozenset()))
            self.lineage[id(call.output)] = (sources, steps | {index})
        if self.stack and self._has_parameters(module):  # a child with weights ran in the parent's segment
            self.segment[self.stack[-1]]["children"] += 1

    def _parameters(self, call: int) -> int:
        return sum(p.numel() for p in self.calls[call].module.parameters(recurse=False))

    def _is_leaf(self, module: nn.Module) -> bool:
        return next(module.children(), None) is None

    def _has_parameters(self, module: nn.Module) -> bool:
        key = id(module)
        if key not in self.weighted:
            self.weighted[key] = any(True for _ in module.parameters())
        return self.weighted[key]

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
        if self.quiet:
            return out
        self.event += 1
        if not self.stack:
            return out
        name = getattr(func, "__name__", "")
        top = self.stack[-1]
        ins = list(tensors_in(args)) + list(tensors_in(kwargs))
        result = _first(out)
        for t in ins:  # the first operation on a residual sum: an activation makes the block post-activated
            residual = self.pending.pop(id(t), None)
            if residual is not None and name.rstrip("_") in ops.ACTIVATIONS:
                residual.activation = name.rstrip("_")
        if result is not None:
            self.keep.append(result)
        self.keep.extend(ins)
        if name in ops.ALIAS and ins and result is not None and result is not ins[0]:
            self.aliases[id(result)] = id(ins[0])
        if result is not None and not any(result is t for t in ins):
            known = [self.lineage[id(t)] for t in ins if id(t) in self.lineage]
            if known:
                self.lineage[id(result)] = (
                    frozenset().union(*(k[0] for k in known)),
                    frozenset().union(*(k[1] for k in known)),
                )
        if name == "softmax" and result is not None:
            self.softmax.add(id(result))
            self.keys_of[id(result)] = int(ins[0].shape[-1])
        elif name in ops.SOFTMAX_PASS and result is not None and any(id(t) in self.softmax for t in ins):
            self.softmax.add(id(result))
            self.keys_of[id(result)] = next(self.keys_of[id(t)] for t in ins if id(t) in self.softmax)
        elif name == "scaled_dot_product_attention":
            self._attention(int(ins[1].shape[-2]))
        elif name in ops.MATMUL:
            hits = [t for t in ins if id(t) in self.softmax]
            if hits:
                self._attention(self.keys_of[id(hits[0])])
        elif name in ops.CONV and len(ins) > 1 and ins[1].ndim >= 3 and max(ins[1].shape[2:]) > 1:
            self._spatial()
        elif name == "linear" and ins and self._across_positions(ins[0], top):
            self._spatial()
        elif name in ops.POOL:
            kernel = kwargs.get("kernel_size", args[1] if len(args) > 1 else 1)
            if (max(kernel) if isinstance(kernel, (tuple, list)) else kernel) > 1:
                self._spatial()
        elif name in ops.ADD and len(ins) >= 2 and result is not None:
            self._add(top, args, ins, result)
        return out

    def _across_positions(self, x: torch.Tensor, call: int) -> bool:
        """A linear layer applied along the token axis of an enclosing call's (B, tokens, channels) input."""
        for frame in reversed(self.stack[:-1]):
            inp = self.calls[frame].input
            if inp is not None and inp.ndim == 3 and x.shape[-1] == inp.shape[1] != inp.shape[2]:
                return True
        return False

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
        if len(args) < 2 or not all(isinstance(t, torch.Tensor) for t in args[:2]):
            return
        a, b = args[0], args[1]
        if a.shape != b.shape or a.shape != result.shape:
            return
        seg = self.segment[call]
        if self._in_stream(a, call) and not self._in_stream(b, call):
            skip, branch, projected = a, b, False
        elif self._in_stream(b, call) and not self._in_stream(a, call):
            skip, branch, projected = b, a, False
        else:  # a shortcut through modules: both operands derive from the call's input, the cheaper is the skip
            empty: tuple[frozenset[int], frozenset[int]] = (frozenset(), frozenset())
            (sa, wa), (sb, wb) = self.lineage.get(id(a), empty), self.lineage.get(id(b), empty)
            # the cost of each operand inside this call: its computing layers, then their parameters
            ca, cb = (
                (len(inside), sum(self._parameters(c) for c in inside))
                for inside in ([w for w in ws if w > call] for ws in (wa, wb))
            )
            if call not in sa or call not in sb or ca == cb:
                return
            skip, branch, projected = (a, b, True) if ca < cb else (b, a, True)
        if seg["children"] == 0:  # a sum computed inside one layer (e.g. a norm's x + gamma * ...), not a block
            return
        # a projected "residual" whose sum becomes the branch of the next was one branch of a multi-branch block
        earlier = next((r for r in self.residuals if r.call == call and r.projected and r.result is branch), None)
        if earlier is not None:
            self.residuals.remove(earlier)
        residual = Residual(
            call,
            skip,
            branch,
            result,
            self.event,
            list(seg["attention"]),
            seg["spatial"],
            projected,
            entering=skip if not projected else self.head[call],
        )
        self.residuals.append(residual)
        self.pending[id(result)] = residual
        self.head[call] = result
        self.stream[call].add(id(result))
        self.segment[call] = {"attention": [], "spatial": False, "children": 0}


def device_of(model: nn.Module) -> torch.device:
    """The device of ``model``'s first parameter (else buffer); the CPU for a model with neither: where a probe
    batch for it goes."""
    for tensor in (*model.parameters(), *model.buffers()):
        return tensor.device
    return torch.device("cpu")


def trace_model(model: nn.Module, x: torch.Tensor) -> Trace:
    """Run ``model(x)`` once in eval mode with timm's fused attention off, and return what it did."""
    tracer = _Tracer(model)
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad(), unfused_attention(model), tracer:
            output = model(x)
    finally:
        tracer.close()
        model.train(was_training)
    return Trace(
        tracer.calls,
        tracer.residuals,
        tracer.attention,
        tracer.boundary,
        tracer.values,
        tracer.aliases,
        tracer.spatial,
        output,
        tracer.keep,
    )
