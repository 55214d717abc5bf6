"""Training recipes as data: the frozen :class:`Recipe` (everything that determines a trained model) and
:class:`MeasurementSettings` (how much data the claims measure), both read from a profile's TOML file
(:mod:`.profiles`).

Recipes named after a reference model (``vit``, ``pit``, ``swin``, ``resnet``, ``alternet``) are the
references; ``custom`` is the template that trains a user's ``--model`` given without a ``--checkpoint``;
every other recipe is a *variant* that a claim compares against (e.g. ``vit_gap``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from importlib import util
from pathlib import Path
from typing import Any, Literal

from ..cache.source import PACKAGE, source_hash
from ..errors import RecipeError, choices

__all__ = ["Recipe", "MeasurementSettings", "REFERENCE_NAMES", "AUGMENTATIONS", "model_source_hash"]

REFERENCE_NAMES = ("vit", "pit", "swin", "resnet", "alternet")
AUGMENTATIONS = ("crop", "flip", "mixup", "cutmix", "randaugment")


def model_source_hash(spec: str) -> str:
    """The source of a ``package.module:factory`` model spec: the import closure of a module of this package
    (:func:`~model_props.cache.source_hash`), the sha256 of another package's module file (its own imports are not
    followed); "" for a reference name or a ``timm:`` spec (the training code's hash covers those) or a module
    that cannot be found (building it fails later, in one line)."""
    module, sep, attr = spec.partition(":")
    if not sep or module == "timm" or not attr:
        return ""
    if module.split(".")[0] == PACKAGE:
        try:
            return source_hash(module)
        except ValueError:
            return ""
    try:
        found = util.find_spec(module)
    except (ImportError, ValueError):
        return ""
    if found is None or not found.origin or not Path(found.origin).is_file():
        return ""
    return hashlib.sha256(Path(found.origin).read_bytes()).hexdigest()[:16]


@dataclass(frozen=True)
class Recipe:
    """Everything that determines a trained model. Its :meth:`key` names the cache entry.

    The budget is counted in optimizer steps (``steps``) or in passes over the training split (``epochs``),
    never in wall-clock time; the linear warm-up likewise (``warmup_steps`` or ``warmup_epochs``), followed
    by a cosine decay to zero. Every step sees a full batch.
    """

    name: str
    profile: str
    model: str
    steps: int | None = None
    epochs: float | None = None
    arch: dict[str, Any] = field(default_factory=dict)
    dataset: str = "deadleaves"
    subset: float = 1.0
    batch_size: int = 64
    optimizer: Literal["adamw", "sgd"] = "adamw"
    lr: float = 1e-3
    weight_decay: float = 0.05
    momentum: float = 0.9
    warmup_steps: int | None = None
    warmup_epochs: float | None = None
    label_smoothing: float = 0.0
    augment: tuple[str, ...] = ("crop", "flip")
    mixup_alpha: float = 1.0
    cutmix_alpha: float = 0.8
    grad_clip: float | None = None
    seed: int = 0
    description: str = ""

    def __post_init__(self) -> None:
        if self.optimizer not in ("adamw", "sgd"):
            raise RecipeError(f"recipe {self.name!r}: optimizer={self.optimizer!r}; valid: 'adamw', 'sgd'")
        bad = [a for a in self.augment if a not in AUGMENTATIONS]
        if bad:
            raise RecipeError(f"recipe {self.name!r}: augment={bad}; valid: {choices(AUGMENTATIONS)}")
        if (self.steps is None) == (self.epochs is None):
            raise RecipeError(
                f"recipe {self.name!r}: give exactly one budget, steps or epochs "
                f"(got steps={self.steps}, epochs={self.epochs})"
            )
        if self.warmup_steps is not None and self.warmup_epochs is not None:
            raise RecipeError(f"recipe {self.name!r}: give warmup_steps or warmup_epochs, not both")
        if (self.steps or 1) < 1 or (self.epochs or 1) <= 0 or self.batch_size < 1:
            raise RecipeError(
                f"recipe {self.name!r}: steps={self.steps}, epochs={self.epochs} and "
                f"batch_size={self.batch_size} must be positive"
            )
        if not 0.0 < self.subset <= 1.0:
            raise RecipeError(f"recipe {self.name!r}: subset={self.subset} must be in (0, 1]")

    def schedule(self, n_train: int) -> tuple[int, int]:
        """(total steps, warm-up steps) for a training split of ``n_train`` images."""
        per_epoch = n_train / self.batch_size
        if self.steps is not None:
            total = self.steps
        elif self.epochs is not None:
            total = max(1, round(self.epochs * per_epoch))
        else:  # __post_init__ requires exactly one budget: never reached
            raise RecipeError(f"recipe {self.name!r}: give exactly one budget, steps or epochs")
        warmup = self.warmup_steps if self.warmup_steps is not None else round((self.warmup_epochs or 0.0) * per_epoch)
        if not 0 <= warmup < total:
            raise RecipeError(
                f"recipe {self.name!r}: warm-up of {warmup} steps must be shorter than the {total}-step budget"
            )
        return total, warmup

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def fingerprint(self) -> str:
        """A hash of every field that affects training except the seed, and of the model's source where it is a
        ``package.module:factory`` (:func:`model_source_hash`): what a seed study is keyed by."""
        fields = {k: v for k, v in self.to_dict().items() if k not in ("description", "seed", "name", "profile")}
        fields["model_source"] = model_source_hash(self.model)
        return hashlib.sha256(json.dumps(fields, sort_keys=True, default=str).encode()).hexdigest()[:12]

    def key(self, code_hash: str = "") -> str:
        """``NAME-<12 hex>``: a hash of every field that affects training (not the description), of the training
        code (``code_hash``) and of the model's source where it is a ``package.module:factory``
        (:func:`model_source_hash`), which the training code's hash does not reach."""
        fields = {k: v for k, v in self.to_dict().items() if k != "description"}
        fields["model_source"] = model_source_hash(self.model)
        digest = hashlib.sha256(json.dumps([fields, code_hash], sort_keys=True, default=str).encode())
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in self.name)
        return f"{safe}-{digest.hexdigest()[:12]}"


@dataclass(frozen=True)
class MeasurementSettings:
    """How much data the claims measure: the profile's ``[measurement]`` table."""

    n_images: int = 1024  # test images for the unit measurements, chosen by a permutation seeded with --claims-seed
    batch_size: int = 64  # also the CKA mini-batch
    n_boot: int = 2000  # bootstrap resamples
    hessian_batches: int = 16  # training mini-batches whose top eigenvalues are pooled
    hessian_batch_size: int = 16  # images per Hessian batch (the paper's training batch is 96)
    hessian_top_k: int = 5  # eigenvalues per batch, by magnitude (PyHessian top_n=5 in the paper)
    hessian_tol: float = 1e-3  # Lanczos residual bound, relative to the largest |eigenvalue|
    fit_images: int = 2000  # test images for accuracy, NLL and ECE (and as many training images for train NLL)
    noise_images: int = 2000  # test images under band-limited noise (9 bands + white)
    corruption_images: int = 1000  # test images under 8 corruptions x 5 severities
    attack_images: int = 512  # test images under FGSM and PGD
    attack_epsilons_255: tuple[int, ...] = (1, 2, 4)  # attack radii in units of 1/255
    pgd_steps: int = 10  # PGD steps of size eps/4
    lesion_images: int = 1000  # test images per lesioned unit

    def __post_init__(self) -> None:
        object.__setattr__(self, "attack_epsilons_255", tuple(self.attack_epsilons_255))

    @property
    def attack_epsilons(self) -> tuple[float, ...]:
        return tuple(e / 255 for e in self.attack_epsilons_255)

    def select(self, *names: str) -> dict[str, Any]:
        """The named settings, as a measurement's cache key reads them."""
        return {n: getattr(self, n) for n in names}
