"""Model specs -> :class:`Classifier`: reference names, ``timm:NAME`` and ``package.module:factory``.

Also loads checkpoints (safetensors or a torch state dict) and probes a model once so that a wrong input
size, a wrong output shape or NaN outputs are reported in one line instead of deep inside a measurement.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

import torch
from torch import nn

from ..errors import CheckpointError, InputSizeError, ModelBuildError, ModelOutputError, UnknownModelError, choices
from .alternet import AlterNet
from .pit import build_pit
from .resnet import build_resnet
from .swin import build_swin
from .vit import build_vit
from .wrapper import Classifier, unwrap

__all__ = [
    "REFERENCE_MODELS",
    "SpecKind",
    "parse_spec",
    "build_model",
    "load_checkpoint",
    "check_model",
    "check_finite",
    "spec_help",
]

SpecKind = Literal["reference", "timm", "factory"]

REFERENCE_MODELS: dict[str, Callable[..., nn.Module]] = {
    "vit": build_vit,
    "pit": build_pit,
    "swin": build_swin,
    "resnet": build_resnet,
    "alternet": AlterNet,
}


def spec_help() -> str:
    return (
        f"a reference name ({choices(REFERENCE_MODELS)}), 'timm:NAME' (any timm model, e.g. timm:resnet18) "
        "or 'package.module:factory' (a function returning a torch.nn.Module)"
    )


def parse_spec(spec: str) -> SpecKind:
    """Which form a --model value has; raises :class:`UnknownModelError` for none of them (nothing is built)."""
    if spec in REFERENCE_MODELS:
        return "reference"
    if spec.startswith("timm:") and len(spec) > len("timm:"):
        return "timm"
    module, sep, attr = spec.partition(":")
    if sep and attr.isidentifier() and all(p.isidentifier() for p in module.split(".")):
        return "factory"
    raise UnknownModelError(f"unknown --model {spec!r}; expected {spec_help()}")


def _build_timm(name: str, num_classes: int, img_size: int, kwargs: Mapping[str, Any]) -> nn.Module:
    import timm

    known = timm.list_models()
    if name not in known:
        close = difflib.get_close_matches(name, known, n=5, cutoff=0.6)
        hint = f"; similar: {choices(close)}" if close else ""
        raise UnknownModelError(f"unknown timm model {name!r}{hint}")
    try:
        return timm.create_model(name, pretrained=False, num_classes=num_classes, img_size=img_size, **kwargs)
    except TypeError:  # this architecture takes no img_size (e.g. CNNs): build it at its natural size
        return timm.create_model(name, pretrained=False, num_classes=num_classes, **kwargs)


def _build_factory(spec: str, num_classes: int, kwargs: Mapping[str, Any]) -> nn.Module:
    module_name, _, attr = spec.partition(":")
    try:
        factory = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise UnknownModelError(f"--model {spec!r}: cannot import {attr!r} from {module_name!r} ({exc})") from exc
    params = inspect.signature(factory).parameters
    call_kwargs = dict(kwargs)
    if "num_classes" in params or any(p.kind is p.VAR_KEYWORD for p in params.values()):
        call_kwargs["num_classes"] = num_classes
    try:
        net = factory(**call_kwargs)
    except Exception as exc:
        raise ModelBuildError(f"--model {spec!r}: the factory raised {type(exc).__name__}: {exc}") from exc
    if not isinstance(net, nn.Module):
        raise ModelBuildError(
            f"--model {spec!r}: the factory returned {type(net).__name__}, expected a torch.nn.Module"
        )
    return net


def build_model(
    spec: str,
    *,
    num_classes: int,
    img_size: int = 32,
    arch_kwargs: Mapping[str, Any] | None = None,
    mean: tuple[float, ...] = (0.5, 0.5, 0.5),
    std: tuple[float, ...] = (0.25, 0.25, 0.25),
) -> Classifier:
    """Build the model named by ``spec`` (see :func:`spec_help`), wrapped to take [0, 1] images."""
    kwargs = dict(arch_kwargs or {})
    kind = parse_spec(spec)
    if kind == "reference":
        builder = REFERENCE_MODELS[spec]
        if "img_size" in inspect.signature(builder).parameters:
            kwargs["img_size"] = img_size
        net = builder(num_classes=num_classes, **kwargs)
    elif kind == "timm":
        net = _build_timm(spec.removeprefix("timm:"), num_classes, img_size, kwargs)
    else:
        net = _build_factory(spec, num_classes, kwargs)
    return Classifier(net, name=spec, num_classes=num_classes, img_size=img_size, mean=mean, std=std)


def _read_state_dict(path: Path) -> dict[str, torch.Tensor]:
    if not path.is_file():
        raise CheckpointError(f"--checkpoint {str(path)!r} does not exist")
    try:
        if path.suffix == ".safetensors":
            from safetensors.torch import load_file

            state: Any = load_file(str(path))  # checked to be a state dict of tensors below
        else:
            state = torch.load(str(path), map_location="cpu", weights_only=True)
    except Exception as exc:
        raise CheckpointError(
            f"--checkpoint {str(path)!r} cannot be read (corrupt or not a checkpoint): {exc}"
        ) from exc
    for key in ("state_dict", "model", "model_state_dict"):  # common training-loop wrappers
        if isinstance(state, dict) and isinstance(state.get(key), dict):
            state = state[key]
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise CheckpointError(f"--checkpoint {str(path)!r} holds {type(state).__name__}, not a state dict of tensors")
    for prefix in ("module.", "net."):  # DataParallel / our own wrapper
        if state and all(k.startswith(prefix) for k in state):
            state = {k.removeprefix(prefix): v for k, v in state.items()}
    return state


def load_checkpoint(model: nn.Module, path: str | Path) -> None:
    """Load a safetensors file or torch state dict into ``model`` (into the net inside a Classifier)."""
    path = Path(path).expanduser()
    net = unwrap(model)
    state = _read_state_dict(path)
    own = net.state_dict()
    missing = sorted(set(own) - set(state))
    unexpected = sorted(set(state) - set(own))
    mismatched = [k for k in own if k in state and own[k].shape != state[k].shape]
    if missing or unexpected or mismatched:

        def head(keys: list[str]) -> str:
            return ", ".join(keys[:5]) + (f" (+{len(keys) - 5} more)" if len(keys) > 5 else "")

        parts = [
            f"missing keys: {head(missing)}" if missing else "",
            f"unexpected keys: {head(unexpected)}" if unexpected else "",
            "shape mismatch: " + head([f"{k} {tuple(state[k].shape)} vs {tuple(own[k].shape)}" for k in mismatched])
            if mismatched
            else "",
        ]
        raise CheckpointError(
            f"--checkpoint {str(path)!r} does not fit {getattr(model, 'name', type(net).__name__)!r} "
            f"(made for another architecture?): " + "; ".join(p for p in parts if p)
        )
    net.load_state_dict(state)


def check_model(model: Classifier, batch: int = 2) -> None:
    """Probe one forward pass on random [0, 1] images: it must run and return finite (B, num_classes)."""
    x = torch.rand(batch, 3, model.img_size, model.img_size, generator=torch.Generator().manual_seed(0))
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            out = model(x.to(next(model.buffers()).device))
    except Exception as exc:
        raise InputSizeError(
            f"model {model.name!r} cannot take images of size 3x{model.img_size}x{model.img_size}: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    finally:
        model.train(was_training)
    if not isinstance(out, torch.Tensor) or tuple(out.shape) != (batch, model.num_classes):
        shape = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
        raise ModelOutputError(
            f"model {model.name!r} returned {shape} for a batch of {batch}; expected ({batch}, {model.num_classes}) logits"
        )
    check_finite(out, f"model {model.name!r} output")


def check_finite(t: torch.Tensor, what: str) -> None:
    if not torch.isfinite(t).all():
        bad = (~torch.isfinite(t)).sum().item()
        raise ModelOutputError(f"{what} has {bad} non-finite values (NaN/inf) out of {t.numel()}")
