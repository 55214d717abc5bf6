"""A recipe's training loss, built once: for the training loop and for the Hessian batches that replay it.

Park & Kim (2022, Sec. 2.2 and App. C) measure the Hessian of the *training* loss, so the spectrum report
(:mod:`model_props.measurements.spectrum`) must see batches made the way the loop trains on them: RandAugment
(torchvision, where the recipe names it), random crop and flip (:func:`~model_props.data.augment.crop_flip`), then
the targets: mixup/cutmix with timm's ``Mixup`` on an even batch (label smoothing inside it), else label-smoothed
one-hot targets, else the class indices. The loss of either kind of target is :meth:`TrainingLoss.nll`,
``-mean_i sum_c t_ic log softmax(z_i)_c``; the Hessian adds ``weight_decay / 2 ||theta||^2``. Every random draw
of a batch is seeded: the crops and flips by the caller's generator, RandAugment and the mixing by the batch's own
seed (:func:`mixing_seed`), so that a batch can be drawn again.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from ..data.augment import crop_flip, randaugment

__all__ = ["TrainingLoss", "mixing_seed"]


def mixing_seed(seed: int, batch: int) -> int:
    """The seed of batch ``batch``'s RandAugment and mixup draws in a run (or a Hessian sample) seeded ``seed``."""
    return seed * 100_003 + batch


@functools.cache
def _mixup(mixup_alpha: float, cutmix_alpha: float, label_smoothing: float, num_classes: int) -> Any:
    from timm.data import Mixup

    return Mixup(mixup_alpha=mixup_alpha, cutmix_alpha=cutmix_alpha, label_smoothing=label_smoothing,
                 num_classes=num_classes)  # fmt: skip


@dataclass(frozen=True)
class TrainingLoss:
    """The loss a model is trained on (from its recipe): how a batch and its targets are made, and the L2 term."""

    augment: tuple[str, ...] = ("crop", "flip")
    label_smoothing: float = 0.0
    weight_decay: float = 0.0
    mixup_alpha: float = 1.0
    cutmix_alpha: float = 0.8
    shift: float = 0.0  # an extra shift/2 ||theta||^2 term: every eigenvalue moves by +shift (mutants only)

    @classmethod
    def of(cls, recipe: Any) -> TrainingLoss:
        return cls(
            tuple(recipe.augment), recipe.label_smoothing, recipe.weight_decay, recipe.mixup_alpha, recipe.cutmix_alpha
        )

    def batch(self, images: torch.Tensor, labels: torch.Tensor, *, num_classes: int, gen: torch.Generator,
              seed: int, device: str | torch.device = "cpu") -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
        """One training batch from uint8 ``images``: inputs in [0, 1] on ``device`` and their targets, class indices
        (B,) or soft targets (B, C). ``gen`` draws the crops and flips, ``seed`` (:func:`mixing_seed`) the
        RandAugment ops and the mixing."""
        images = images.to(device)
        if "randaugment" in self.augment:
            images = randaugment(images, torch.Generator().manual_seed(seed))
        x = crop_flip(images.float().div_(255.0), self.augment, gen)
        y = labels.to(device)
        if {"mixup", "cutmix"} & set(self.augment) and len(y) % 2 == 0:  # timm mixes pairs: an even batch
            mixup = _mixup(self.mixup_alpha if "mixup" in self.augment else 0.0,
                           self.cutmix_alpha if "cutmix" in self.augment else 0.0, self.label_smoothing, num_classes)  # fmt: skip
            state = np.random.get_state()  # timm's Mixup draws from numpy's global generator
            np.random.seed(seed % 2**32)
            try:
                return mixup(x, y)
            finally:
                np.random.set_state(state)
        if self.label_smoothing:
            eps = self.label_smoothing
            target = torch.full((len(y), num_classes), eps / num_classes, device=y.device)
            return x, target.scatter_(1, y[:, None], 1.0 - eps + eps / num_classes)
        return x, y

    @staticmethod
    def nll(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """The mean negative log-likelihood of ``target``: class indices (B,) or soft targets (B, C)."""
        if target.ndim == 1:
            return F.cross_entropy(logits, target)
        return torch.sum(-target * F.log_softmax(logits, dim=-1), dim=-1).mean()
