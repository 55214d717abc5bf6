"""How much of timm and torchvision the anatomy maps, checked model by model against oracles that do not use the mapper.

For a model, :func:`check_anatomy` maps it and checks the result:

- **attention**: the attention operations of a forward pass, counted by a small counter of its own
  (``scaled_dot_product_attention`` and ``multi_head_attention_forward`` calls, and softmax outputs that feed a
  matrix product), equal the number of ``msa`` units;
- **residuals**: on every residual unit, the captured state equals skip + branch (or the recorded
  activation of it, for post-activation blocks), to float tolerance;
- **stages**: the stage index changes exactly where the number of spatial positions of the state changes;
- **depth**: runs from 0 to 1, strictly increasing over the non-head units.

:func:`coverage` runs it on the smallest model of every architecture module of timm or torchvision at a given size and
returns one row per module (``model-props coverage`` writes them as a table).
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

__all__ = ["AnatomyCheck", "count_attention", "check_anatomy", "coverage", "write_coverage"]

# what may lie between a softmax and the product with V: views, dropout, talking heads (a linear map or 1x1
# conv across heads), elementwise mixing with other weights (ConViT's gating)
_VIEWS = {
    "view",
    "reshape",
    "transpose",
    "permute",
    "contiguous",
    "dropout",
    "to",
    "clone",
    "__getitem__",
    "expand",
    "flatten",
    "squeeze",
    "unsqueeze",
    "type_as",
    "float",
    "linear",
    "conv2d",
    "mul",
    "__mul__",
    "__rmul__",
    "add",
    "__add__",
    "__radd__",
    "sub",
    "__sub__",
    "__rsub__",
    "div",
    "__truediv__",
}


class _AttentionCounter(TorchFunctionMode):
    """Counts the module calls that attend: those in which an SDPA call, or a matrix product fed by a softmax
    output (or a view of it), runs innermost. A module that attends head by head (EfficientViT's cascaded
    group attention) is one attention operation."""

    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.calls: list[int] = []  # the stack of running module calls
        self.attending: set[int] = set()
        self.next_call = 0
        self.softmax: set[int] = set()
        self.keep: list[Any] = []
        self.handles = [
            h
            for m in model.modules()
            for h in (m.register_forward_pre_hook(self._enter), m.register_forward_hook(self._leave))
        ]

    def _enter(self, *_):
        self.calls.append(self.next_call)
        self.next_call += 1

    def _leave(self, *_):
        self.calls.pop()

    @property
    def count(self) -> int:
        return len(self.attending)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        name = getattr(func, "__name__", "")
        tensors = [t for a in args for t in (a if isinstance(a, (list, tuple)) else [a]) if isinstance(t, torch.Tensor)]
        if name in ("scaled_dot_product_attention", "multi_head_attention_forward"):  # fused; nn.MultiheadAttention
            self.attending.add(self.calls[-1])
        elif name == "softmax" and isinstance(out, torch.Tensor):
            self.softmax.add(id(out))
            self.keep.append(out)
        elif name in _VIEWS and any(id(t) in self.softmax for t in tensors) and isinstance(out, torch.Tensor):
            self.softmax.add(id(out))
            self.keep.append(out)
        elif name in ("matmul", "__matmul__", "__rmatmul__", "bmm", "baddbmm", "einsum") and any(
            id(t) in self.softmax for t in tensors
        ):
            self.attending.add(self.calls[-1])
        return out


def count_attention(model: torch.nn.Module, x: torch.Tensor) -> int:
    """The attention operations of one forward pass (fused attention off, so that every one is visible)."""
    from .attention import unfused_attention

    counter = _AttentionCounter(model)
    try:
        with torch.no_grad(), unfused_attention(model), counter:
            model(x)
    finally:
        for h in counter.handles:
            h.remove()
    return counter.count


@dataclass
class AnatomyCheck:
    mapped: bool
    reason: str = ""
    counts: dict[str, int] = field(default_factory=dict)
    traits: list[str] = field(default_factory=list)
    attention_ops: int = 0
    checks: dict[str, bool] = field(default_factory=dict)

    @property
    def correct(self) -> bool:
        return self.mapped and all(self.checks.values())


def _activation(name: str | None):
    return (lambda t: t) if name is None else getattr(F, name)


def check_anatomy(model: torch.nn.Module, img_size: int = 32) -> AnatomyCheck:
    """Map ``model`` (a Classifier) and run the four checks of the module docstring."""
    from ..errors import ModelPropsError
    from .capture import capture
    from .mapping import anatomy

    model.eval()
    x = torch.rand(2, 3, img_size, img_size, generator=torch.Generator().manual_seed(1))
    try:
        anat = anatomy(model, img_size)
        cap = capture(model, anat, x)
    except ModelPropsError as exc:
        return AnatomyCheck(False, str(exc).splitlines()[0])
    ops = count_attention(model, x)
    units = anat.spatial_units
    residual = [u for u in units if u.name in cap.branches]

    def adds_up(u) -> bool:
        state, skip, branch = cap.states[u.name], cap.skips[u.name], cap.branches[u.name]
        if not state.shape == skip.shape == branch.shape:
            return False
        return torch.allclose(
            state,
            _activation(u.activation)(skip + branch),
            rtol=1e-4,
            atol=1e-4 * float(state.abs().max().clamp_min(1)),
        )

    sums = all(adds_up(u) for u in residual)
    positions = [cap.states[u.name].shape[-1] * cap.states[u.name].shape[-2] for u in units]
    stages = [u.stage for u in units]
    follow = all((stages[i] != stages[i - 1]) == (positions[i] != positions[i - 1]) for i in range(1, len(units)))
    depths = [u.depth for u in units]
    return AnatomyCheck(
        True,
        counts=anat.counts(),
        traits=sorted(anat.traits),
        attention_ops=ops,
        checks={
            "attention": ops == len(anat.of_kind("msa")),
            "residual_sums": sums,
            "stages": follow,
            "depth": depths[0] == 0.0
            and math.isclose(depths[-1], 1.0)
            and all(a < b for a, b in zip(depths, depths[1:])),
        },
    )


def coverage(
    img_size: int = 32, modules: list[str] | None = None, progress=print, library: str = "timm"
) -> list[dict[str, Any]]:
    """One row per architecture module of ``library`` (timm, torchvision): its smallest model built at
    ``img_size`` with 10 classes, whether it builds and runs, whether it maps, the unit counts and traits, and
    the checks."""
    from ..errors import ModelPropsError
    from ..zoo import check_model
    from .libraries import LIBRARIES

    candidates = LIBRARIES[library]
    rows = []
    for module, name in candidates.smallest(modules).items():
        start = time.perf_counter()
        row: dict[str, Any] = {"module": module, "model": name, "builds": False}
        try:
            model = candidates.build(name, img_size)
            check_model(model)
            row["builds"] = True
            row.update(asdict(check_anatomy(model, img_size)))
        except ModelPropsError as exc:
            row["reason"] = str(exc).splitlines()[0]
        except Exception as exc:  # a library model that breaks in its own code: recorded, not fatal
            row["reason"] = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        row["correct"] = bool(row.get("mapped")) and all(row.get("checks", {}).values())
        row["seconds"] = round(time.perf_counter() - start, 2)
        rows.append(row)
        progress(f"{module:28s} {name:36s} {'ok' if row['correct'] else row.get('reason', 'checks failed')[:90]}")
    return rows


def write_coverage(rows: list[dict[str, Any]], img_size: int, out: Any, library: str = "timm") -> str:
    """Write ``anatomy-coverage.json`` (timm) or ``anatomy-coverage-<library>.json`` to ``out``, and
    ``anatomy-coverage.md`` with a section per library whose JSON is there; return the headline."""
    import json
    from pathlib import Path

    from ..provenance import provenance

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    builds = [r for r in rows if r["builds"]]
    correct = [r for r in builds if r["correct"]]
    headline = (
        f"{len(correct)} of {len(builds)} modules whose smallest model builds and runs at {img_size} px map "
        f"correctly ({len(correct) / max(1, len(builds)):.0%}); {len(correct)} of {len(rows)} of all modules "
        f"({len(correct) / max(1, len(rows)):.0%})"
    )
    record = {"library": library, "img_size": img_size, "headline": headline, "rows": rows, "provenance": provenance()}
    (out / _json_name(library)).write_text(json.dumps(record, indent=1) + "\n")
    lines = [
        "# Anatomy coverage",
        "",
        "Regenerate: `model-props coverage --library timm` (at 32 px) and `--library torchvision` (at 224 px). "
        "Checks (model_props/anatomy/coverage.py): attention operations counted independently = msa units; state = "
        "(activation of) skip + branch on every residual unit; stages change exactly where the spatial size does; "
        "depth 0 -> 1.",
    ]
    for name in ("timm", "torchvision"):
        if (out / _json_name(name)).is_file():
            lines += _section(json.loads((out / _json_name(name)).read_text()), name)
    (out / "anatomy-coverage.md").write_text("\n".join(lines) + "\n")
    return headline


def _json_name(library: str) -> str:
    return "anatomy-coverage.json" if library == "timm" else f"anatomy-coverage-{library}.json"


def _section(record: dict[str, Any], library: str) -> list[str]:
    lines = [
        "",
        f"## {library} at {record['img_size']} px",
        "",
        record["headline"] + ".",
        "",
        "| module | model | builds | mapped | units (E/A/M/C/S) | traits | attention ops | checks | why not |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in record["rows"]:
        c = r.get("counts", {})
        units = (
            "/".join(str(c.get(k, 0)) for k in ("embed", "msa", "mlp", "conv", "subsample")) if r.get("mapped") else ""
        )
        failed = [k for k, ok in r.get("checks", {}).items() if not ok]
        checks = ("all pass" if not failed else "FAIL " + ", ".join(failed)) if r.get("mapped") else ""
        why = r.get("reason", "").replace("|", "/")[:160] if not r.get("mapped") else ""
        lines.append(
            f"| {r['module']} | {r['model']} | {'yes' if r['builds'] else 'no'} | {'yes' if r.get('mapped') else 'no'} | "
            f"{units} | {', '.join(r.get('traits', []))} | {r.get('attention_ops', '')} | {checks} | {why} |"
        )
    return lines
