"""What a measurement reads about one model (:class:`MeasureInput`), and the loss it was trained on, as the Hessian
reads it (:class:`TrainingLoss`): the inputs every report kind's compute function takes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..anatomy.model import Anatomy
from ..data import Split

__all__ = ["TrainingLoss", "MeasureInput"]


@dataclass(frozen=True)
class TrainingLoss:
    """The loss a model was trained on, as the Hessian reads it (from its recipe)."""

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


@dataclass(frozen=True)
class MeasureInput:
    """Everything a measurement reads about one model."""

    name: str
    model: Any  # a Classifier in eval mode
    anatomy: Anatomy
    identity: str | None  # checkpoint sha256 (+ "+mutation"); None: not cacheable
    test: Split
    train: Split  # the model's own training split (for the Hessian batches and the training NLL)
    loss: TrainingLoss
    dataset: str

    @property
    def is_mutant(self) -> bool:
        return self.identity is not None and "+" in self.identity
