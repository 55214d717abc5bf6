"""What a measurement reads about one model (:class:`MeasureInput`): the input every report kind's compute function
takes, the loss it was trained on included (:class:`~model_props.training.loss.TrainingLoss`, which the Hessian
replays)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..anatomy.model import Anatomy
from ..data import Split
from ..training.loss import TrainingLoss

__all__ = ["MeasureInput"]


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
