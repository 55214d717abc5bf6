"""Pretrained models through their libraries' own loaders, with their labels and evaluation preprocessing.

Specs: ``timm:NAME@pretrained`` (timm's weights for NAME, a tagged name such as
``vit_small_patch16_224.augreg_in21k_ft_in1k`` or an ``hf-hub:`` name, read from the Hugging Face cache or
downloaded; offline with ``HF_HUB_OFFLINE=1``), ``timm:NAME@pretrained=FILE`` (a local weights file through
timm's ``pretrained_cfg_overlay=dict(file=FILE)``, so timm's own key filters apply), and
``torchvision:NAME@WEIGHTS[=FILE]`` (a weights enum member such as ``IMAGENET1K_V2`` or ``DEFAULT``, from torch
hub's cache or downloaded, or a local file of those weights).

The pretrained head is kept (never reset to the dataset's classes, which would put the model at chance): a
folder's class names are mapped onto the model's labels (ImageNet synset ids or class names), and the model's
own evaluation transform (timm's ``resolve_data_config`` + ``create_transform``, torchvision's
``weights.transforms()``) is applied with an identity normalisation, so that images stay in [0, 1] as the
attacks and the noise need; the normalisation is inside the :class:`Classifier`, from the same configuration.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import torch
from torch import nn

from ..cache.source import source_hash
from ..errors import CheckpointError, DatasetError, UnknownModelError, choices
from .explicit_attention import explicit_attention
from .registry import check_model, load_checkpoint
from .wrapper import Classifier

__all__ = [
    "PretrainedSpec",
    "Pretrained",
    "parse_pretrained",
    "load_pretrained",
    "label_indices",
    "weights_sha256",
]

IDENTITY_MEAN, IDENTITY_STD = (0.0, 0.0, 0.0), (1.0, 1.0, 1.0)  # the transform keeps [0, 1]; the wrapper normalises


@dataclass(frozen=True)
class PretrainedSpec:
    library: Literal["timm", "torchvision"]
    name: str  # the library's model name (timm: with its tag or hf-hub: prefix)
    weights: str | None  # torchvision: the weights enum member; timm: None (the name's tag picks them)
    file: Path | None  # a local weights file, else the library's cache (or a download)


@dataclass(frozen=True)
class Pretrained:
    model: Classifier  # eval mode, normalising inside with the pretrained mean/std
    labels: tuple[tuple[str, ...], ...]  # per output: the names it answers to (synset id, class names)
    transform: Callable[[Any], torch.Tensor]  # PIL image -> (3, S, S) float in [0, 1]
    sha256: str  # of the weights' content and of this module: the measurement cache's identity of the model
    notes: tuple[str, ...] = ()  # what the user should know (a default the configuration did not give)


def parse_pretrained(spec: str) -> PretrainedSpec | None:
    """The pretrained weights ``spec`` names, or None when it names none (a reference, ``timm:NAME``, a factory).

    >>> parse_pretrained("timm:resnet18.a1_in1k@pretrained")
    PretrainedSpec(library='timm', name='resnet18.a1_in1k', weights=None, file=None)
    >>> parse_pretrained("torchvision:resnet50@IMAGENET1K_V2").weights
    'IMAGENET1K_V2'
    """
    base, at, weights = spec.partition("@")
    choice, eq, file = weights.partition("=")
    path = Path(file).expanduser() if eq else None
    if eq and not file:
        raise UnknownModelError(f"--model {spec!r}: give the weights file after '='")
    if base.startswith("timm:") and at:
        if choice != "pretrained":
            raise UnknownModelError(f"--model {spec!r}: after '@' give 'pretrained' or 'pretrained=FILE'")
        return PretrainedSpec("timm", base.removeprefix("timm:"), None, path)
    if base.startswith("torchvision:"):
        if not choice:
            raise UnknownModelError(
                f"--model {spec!r}: name the weights, e.g. {base}@DEFAULT or {base}@IMAGENET1K_V1 (a member of its "
                "torchvision weights enum), optionally =FILE for a local copy"
            )
        return PretrainedSpec("torchvision", base.removeprefix("torchvision:"), choice, path)
    return None


def load_pretrained(spec: str) -> Pretrained:
    """Build the model ``spec`` names with its pretrained weights, head, labels and evaluation transform."""
    parsed = parse_pretrained(spec)
    if parsed is None:
        raise UnknownModelError(f"--model {spec!r} names no pretrained weights")
    if parsed.file is not None and not parsed.file.is_file():
        raise CheckpointError(f"--model {spec!r}: the weights file {str(parsed.file)!r} does not exist")
    load = _timm if parsed.library == "timm" else _torchvision
    net, labels, transform, mean, std, notes = load(spec, parsed)
    net = explicit_attention(net)
    size = int(_crop_size(transform))
    model = Classifier(net, name=spec, num_classes=len(labels), img_size=size, mean=mean, std=std).eval()
    check_model(model)
    # the identity covers the weights and this module, which builds the model from them (explicit attention)
    identity = hashlib.sha256(f"{weights_sha256(net)}:{source_hash(__name__)}".encode()).hexdigest()
    return Pretrained(model, labels, transform, identity, notes)


def weights_sha256(net: nn.Module) -> str:
    """sha256 over the state dict's names and bytes: the same weights from a file, a cache or a download agree."""
    digest = hashlib.sha256()
    for name, tensor in sorted(net.state_dict().items()):
        digest.update(name.encode())
        digest.update(tensor.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


def label_indices(classes: Sequence[str], labels: Sequence[Sequence[str]], model: str) -> dict[str, int]:
    """Each folder class -> the model output whose label it names (a synset id such as ``n01440764`` or a class
    name, case-insensitive); a class that names no label is an error that names it."""
    index: dict[str, int] = {}
    for i, names in enumerate(labels):
        for label in names:
            index.setdefault(label.strip().lower(), i)
    unmapped = [c for c in classes if c.strip().lower() not in index]
    if unmapped:
        example = ", ".join(repr(n) for n in labels[0][:2])
        raise DatasetError(
            f"folder classes {unmapped[:5]}{f' (+{len(unmapped) - 5} more)' if len(unmapped) > 5 else ''} "
            f"name none of the {len(labels)} labels of {model!r}; name each class folder by a label's synset id or "
            f"class name (its first label: {example})"
        )
    return {c: index[c.strip().lower()] for c in classes}


def _crop_size(transform: Any) -> int:
    for step in getattr(transform, "transforms", [transform]):
        size = getattr(step, "crop_size", None) or getattr(step, "size", None)
        if type(step).__name__ in ("CenterCrop", "ImageClassification") and size:
            return size[0] if isinstance(size, (list, tuple)) else size
    raise CheckpointError(f"cannot read the input size from the evaluation transform {transform!r}")


Loaded = tuple[nn.Module, tuple[tuple[str, ...], ...], Any, tuple[float, ...], tuple[float, ...], tuple[str, ...]]


def _timm(spec: str, p: PretrainedSpec) -> Loaded:
    import timm
    from timm.data import ImageNetInfo, create_transform, infer_imagenet_subset, resolve_data_config

    architecture = p.name.split(".")[0]
    if not p.name.startswith("hf-hub:") and not timm.is_model(architecture):
        close = difflib.get_close_matches(architecture, timm.list_models(), n=5, cutoff=0.6)
        raise UnknownModelError(f"--model {spec!r}: unknown timm model {architecture!r}" + (
            f"; similar: {choices(close)}" if close else ""))  # fmt: skip
    overlay = {"file": str(p.file)} if p.file else None
    try:
        net = timm.create_model(p.name, pretrained=True, pretrained_cfg_overlay=overlay)
    except RuntimeError as exc:  # load_state_dict: the file holds another architecture's weights
        raise CheckpointError(f"--model {spec!r}: {_mismatch(exc)}") from None
    except Exception as exc:  # the hub: not cached (offline), no such tag, no network
        from huggingface_hub.constants import HF_HUB_CACHE

        raise CheckpointError(
            f"--model {spec!r}: no pretrained weights for {p.name!r} in the Hugging Face cache {HF_HUB_CACHE} and "
            f"none could be downloaded ({type(exc).__name__}: {_first_line(exc)}); give a local file with "
            f"timm:{p.name}@pretrained=FILE"
        ) from None
    config = getattr(net, "pretrained_cfg", {}) or {}
    notes = tuple(
        f"{spec}: its pretrained configuration gives no {k}; timm's default (ImageNet's) is used"
        for k in ("mean", "std")
        if not config.get(k)
    )
    data = resolve_data_config({}, model=net)
    transform = create_transform(**{**data, "mean": IDENTITY_MEAN, "std": IDENTITY_STD}, is_training=False)
    subset = infer_imagenet_subset(net)
    if subset:
        info = ImageNetInfo(subset)
        labels = tuple(
            (synset, *(d.strip() for d in text.split(",")))
            for synset, text in zip(info.label_names(), info.label_descriptions())
        )
    else:  # no ImageNet labels: outputs answer to their index (or the configuration's label names)
        outputs: Any = net.num_classes  # every timm model has it (an int; typed as a Module attribute)
        names = config.get("label_names") or [str(i) for i in range(int(outputs))]
        labels = tuple((str(n),) for n in names)
    return net, labels, transform, tuple(data["mean"]), tuple(data["std"]), notes


def _torchvision(spec: str, p: PretrainedSpec) -> Loaded:
    from torchvision import models
    from torchvision.transforms._presets import ImageClassification

    try:
        enum = models.get_model_weights(p.name)
    except (ValueError, KeyError):
        close = difflib.get_close_matches(p.name, models.list_models(module=models), n=5, cutoff=0.6)
        raise UnknownModelError(f"--model {spec!r}: unknown torchvision classification model {p.name!r}" + (
            f"; similar: {choices(close)}" if close else "")) from None  # fmt: skip
    if p.weights not in enum.__members__:
        raise UnknownModelError(
            f"--model {spec!r}: {enum.__name__} has no {p.weights!r}; valid: {choices(enum.__members__)}"
        )
    weights = enum[p.weights]
    categories = weights.meta["categories"]
    if p.file is not None:
        net = models.get_model(p.name, weights=None, num_classes=len(categories))
        load_checkpoint(net, p.file)
    else:
        try:
            net = models.get_model(p.name, weights=weights)
        except Exception as exc:  # torch hub: not cached and no network
            raise CheckpointError(
                f"--model {spec!r}: {weights} is not in torch hub's cache {torch.hub.get_dir()}/checkpoints and could "
                f"not be downloaded ({type(exc).__name__}: {_first_line(exc)}); give a local file with "
                f"torchvision:{p.name}@{p.weights}=FILE"
            ) from None
    preset = weights.transforms()
    transform = ImageClassification(
        crop_size=preset.crop_size[0],
        resize_size=preset.resize_size[0],
        mean=IDENTITY_MEAN,
        std=IDENTITY_STD,
        interpolation=preset.interpolation,
        antialias=preset.antialias,
    )
    return net, _torchvision_labels(p, categories), transform, tuple(preset.mean), tuple(preset.std), ()


def _torchvision_labels(p: PretrainedSpec, categories: Sequence[str]) -> tuple[tuple[str, ...], ...]:
    """Per output, the names it answers to: torchvision's category name; for ImageNet-1k weights (``IMAGENET1K_*``,
    whose 1,000 categories follow ImageNet-1k's standard order) also the synset id and WordNet names of that
    position, from timm's ImageNet metadata, so that a folder laid out like ImageNet itself (``val/n01440764/``)
    maps onto a torchvision model as it does onto a timm one."""
    if not str(p.weights).startswith("IMAGENET1K") or len(categories) != 1000:
        return tuple((str(c),) for c in categories)
    from timm.data import ImageNetInfo

    info = ImageNetInfo("imagenet-1k")
    return tuple(
        (str(c), synset, *(d.strip() for d in text.split(",")))
        for c, synset, text in zip(categories, info.label_names(), info.label_descriptions())
    )


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [""])[0][:300]


def _mismatch(exc: RuntimeError) -> str:
    """torch's load_state_dict error in one line: which keys are missing, unexpected or of another shape."""
    text = " ".join(str(exc).split())
    found = {
        what: re.findall(r'"([^"]+)"', m.group(1)) if (m := re.search(pattern, text)) else []
        for what, pattern in (
            ("missing keys", r"Missing key\(s\) in state_dict: (.*?)(?:\. Unexpected|$)"),
            ("unexpected keys", r"Unexpected key\(s\) in state_dict: (.*?)(?:\. size mismatch|$)"),
        )
    }
    found["shape mismatch"] = re.findall(r"size mismatch for ([^:]+):", text)
    parts = [f"{what}: {', '.join(keys[:5])}{f' (+{len(keys) - 5} more)' if len(keys) > 5 else ''}"
             for what, keys in found.items() if keys]  # fmt: skip
    if not parts:
        return f"the weights do not load: {_first_line(exc)}"
    return "the weights file does not fit the architecture (made for another model?): " + "; ".join(parts)
