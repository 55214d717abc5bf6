"""The models whose anatomy coverage is measured: the smallest model of every timm architecture module and of
every torchvision classification family, and how each is built (untrained, 10 classes, wrapped to take [0, 1]
images). Parameters are counted on the meta device, so choosing builds no weights."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from ..zoo.wrapper import Classifier

__all__ = ["Library", "LIBRARIES"]


def _parameters(build: Callable[[], nn.Module], devices: tuple[str, ...]) -> int | None:
    """Parameters of the model ``build`` makes, on the first of ``devices`` it builds on, None if it builds on
    none."""
    for device in devices:
        try:
            with torch.device(device):
                return sum(p.numel() for p in build().parameters())
        except Exception:  # a model that cannot be built on this device: try the next, or it is no candidate
            continue
    return None


def _smallest(
    groups: dict[str, list[str]], build: Callable[[str], nn.Module], devices: tuple[str, ...] = ("meta",)
) -> dict[str, str]:
    chosen = {}
    for module, names in groups.items():
        sizes = {n: p for n in names if (p := _parameters(functools.partial(build, n), devices)) is not None}
        if sizes:
            chosen[module] = min(sizes, key=sizes.__getitem__)
    return chosen


def _timm_smallest(modules: list[str] | None) -> dict[str, str]:
    import timm

    groups = {}
    for module in modules or timm.list_modules():
        names = timm.list_models(module=module)
        groups[module] = [n for n in names if not n.startswith("test_")] or names  # test_* only where alone
    return _smallest(groups, lambda n: timm.create_model(n, pretrained=False, num_classes=10))


def _timm_build(name: str, img_size: int) -> Classifier:
    from ..zoo import build_model

    return build_model(f"timm:{name}", num_classes=10, img_size=img_size)


def _torchvision_smallest(modules: list[str] | None) -> dict[str, str]:
    from torchvision import models

    groups: dict[str, list[str]] = {}
    for name in models.list_models(module=models):
        module = models.get_model_builder(name).__module__.rsplit(".", 1)[-1]
        if modules is None or module in modules:
            groups.setdefault(module, []).append(name)
    # RegNet's builders cannot initialise on the meta device: those are counted on the CPU
    return _smallest(groups, lambda n: models.get_model(n, num_classes=10), devices=("meta", "cpu"))


def _torchvision_build(name: str, img_size: int) -> Classifier:
    from torchvision import models

    from ..zoo.explicit_attention import explicit_attention

    net = explicit_attention(models.get_model(name, num_classes=10))  # as the pretrained path builds it
    return Classifier(net, name=f"torchvision:{name}", num_classes=10, img_size=img_size)


@dataclass(frozen=True)
class Library:
    smallest: Callable[[list[str] | None], dict[str, str]]  # architecture module -> its smallest model
    build: Callable[[str, int], Classifier]  # (model, img_size) -> an untrained Classifier of 10 classes
    img_size: int  # the size the coverage is measured at by default


LIBRARIES = {
    "timm": Library(_timm_smallest, _timm_build, 32),
    "torchvision": Library(_torchvision_smallest, _torchvision_build, 224),
}
