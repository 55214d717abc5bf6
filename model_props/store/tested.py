"""The model under test: a trained, loaded or mutated model with what the claims need to know about it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from torch import nn

from ..anatomy import Anatomy, anatomy, device_of
from ..training.recipes import Recipe
from ..zoo import Classifier

if TYPE_CHECKING:
    from ..training.checkpoints import TrainedModel
    from ..training.loop import Checkpoint

__all__ = ["ModelUnderTest", "anatomy_on_cpu"]


def anatomy_on_cpu(model: nn.Module) -> Anatomy:
    """The anatomy of ``model`` traced on the CPU, the model then moved back to the device it came from.

    The mapper could trace on any device (it draws its probe batch on the CPU and moves it to the model's), but the
    one traced forward pass is cheap on the CPU and leaves a GPU's memory to the measurements. An anatomy holds
    module paths and layouts only, no tensors: it is the same whichever device traced it.
    """
    device = device_of(model)
    if device.type == "cpu":
        return anatomy(model)
    model.cpu()
    try:
        return anatomy(model)
    finally:
        model.to(device)


@dataclass
class ModelUnderTest:
    name: str
    model: Classifier  # eval mode
    anatomy: Anatomy
    metrics: dict[str, Any]
    recipe: Recipe | None
    checkpoint: Path | None
    checkpoint_sha256: str | None = None
    from_cache: bool = False
    provenance: dict[str, Any] = field(default_factory=dict)
    checkpoint_name: str = "final"
    dataset: str | None = None  # the dataset it was trained on and is measured on (None: the profile's)
    mutation: str | None = None  # set on mutants (model_props.mutation.mutants)
    loss_shift: float = 0.0  # an extra L2 term in the loss the Hessian reads (a mutation)

    @classmethod
    def of_trained(cls, name: str, trained: TrainedModel) -> ModelUnderTest:
        """A model trained here (or read from the model cache) by its recipe, under the label ``name``."""
        return cls(
            name, trained.model, anatomy_on_cpu(trained.model), trained.metrics, trained.recipe, trained.path,
            trained.sha256, trained.from_cache, trained.provenance, trained.checkpoint, trained.recipe.dataset,
        )  # fmt: skip

    @property
    def parameters(self) -> int:
        return sum(p.numel() for p in self.model.parameters())

    @property
    def identity(self) -> str | None:
        """What a measurement of this model is keyed by: its weights' sha256, plus the mutation of a mutant."""
        if self.checkpoint_sha256 is None:
            return None
        return self.checkpoint_sha256 + (f"+{self.mutation}" if self.mutation else "")

    @property
    def has_training_states(self) -> bool:
        """Trained here by a recipe, so its warm-up and final checkpoints both exist (a --checkpoint is one
        state; a mutant keeps its base's)."""
        return self.recipe is not None or self.mutation is not None

    @property
    def training_state(self) -> Checkpoint:
        """The state of training it is at: "warmup" for a warm-up checkpoint, else "final" (an independent run or a
        seed control of it is taken at the same state)."""
        return "warmup" if self.checkpoint_name == "warmup" else "final"
