"""Training recipes as data: frozen :class:`Recipe` dataclasses loaded from ``fixtures/<profile>.toml``.

A profile file has a ``[defaults]`` table and one ``[recipes.NAME]`` table per recipe; a recipe table
overrides the defaults. ``arch`` holds the architecture keyword arguments. The ``custom`` recipe is the
template used to train a user's ``--model`` that comes without a ``--checkpoint``.
"""
from __future__ import annotations

import dataclasses
import fnmatch
import hashlib
import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .errors import RecipeError, choices

__all__ = ["Recipe", "MeasurementSettings", "PROFILES", "FIXTURES_DIR", "load_profile", "get_recipe", "list_recipes",
           "custom_recipe", "measurement_settings"]

FIXTURES_DIR = Path(__file__).resolve().parent.parent / "fixtures"
PROFILES = ("smoke", "paper")
AUGMENTATIONS = ("crop", "flip", "mixup", "cutmix", "randaugment")


@dataclass(frozen=True)
class Recipe:
    """Everything that determines a trained model. Its :meth:`key` names the cache entry."""

    name: str
    profile: str
    model: str
    epochs: int
    arch: dict[str, Any] = field(default_factory=dict)
    dataset: str = "deadleaves"
    subset: float = 1.0
    batch_size: int = 64
    optimizer: Literal["adamw", "sgd"] = "adamw"
    lr: float = 1e-3
    weight_decay: float = 0.05
    momentum: float = 0.9
    warmup_epochs: float = 0.0
    label_smoothing: float = 0.0
    augment: tuple[str, ...] = ("crop", "flip")
    mixup_alpha: float = 1.0
    cutmix_alpha: float = 0.8
    grad_clip: float | None = None
    seed: int = 0
    min_test_accuracy: float = 0.0
    description: str = ""

    def __post_init__(self) -> None:
        if self.optimizer not in ("adamw", "sgd"):
            raise RecipeError(f"recipe {self.name!r}: optimizer={self.optimizer!r}; valid: 'adamw', 'sgd'")
        bad = [a for a in self.augment if a not in AUGMENTATIONS]
        if bad:
            raise RecipeError(f"recipe {self.name!r}: augment={bad}; valid: {choices(AUGMENTATIONS)}")
        if self.epochs < 1 or self.batch_size < 1:
            raise RecipeError(f"recipe {self.name!r}: epochs={self.epochs} and batch_size={self.batch_size} must be >= 1")
        if not 0.0 < self.subset <= 1.0:
            raise RecipeError(f"recipe {self.name!r}: subset={self.subset} must be in (0, 1]")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def key(self, code_hash: str = "") -> str:
        """``NAME-<12 hex>``: a hash of every field that affects training (not the description/floor)."""
        fields = {k: v for k, v in self.to_dict().items() if k not in ("description", "min_test_accuracy")}
        digest = hashlib.sha256(json.dumps([fields, code_hash], sort_keys=True, default=str).encode())
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in self.name)
        return f"{safe}-{digest.hexdigest()[:12]}"


@dataclass(frozen=True)
class MeasurementSettings:
    """How much data the claims measure: the profile's ``[measurement]`` table."""

    n_images: int = 1024  # test images, chosen by a permutation seeded with --claims-seed
    batch_size: int = 64  # also the CKA mini-batch
    n_boot: int = 2000  # bootstrap resamples


_FIELDS = {f.name for f in dataclasses.fields(Recipe)}


def _make(name: str, profile: str, table: dict[str, Any]) -> Recipe:
    unknown = set(table) - _FIELDS
    if unknown:
        raise RecipeError(f"recipe {name!r} in profile {profile!r}: unknown fields {sorted(unknown)}; valid: {choices(_FIELDS)}")
    if "augment" in table:
        table = {**table, "augment": tuple(table["augment"])}
    try:
        return Recipe(name=name, profile=profile, **table)
    except TypeError as exc:
        raise RecipeError(f"recipe {name!r} in profile {profile!r}: {exc}") from exc


def _read(profile: str, fixtures_dir: Path) -> dict[str, Any]:
    path = fixtures_dir / f"{profile}.toml"
    if not path.is_file():
        available = sorted(p.stem for p in fixtures_dir.glob("*.toml"))
        raise RecipeError(f"unknown profile={profile!r}; valid: {choices(available)}")
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise RecipeError(f"{path}: invalid TOML: {exc}") from exc
    return data


def measurement_settings(profile: str, fixtures_dir: Path = FIXTURES_DIR) -> MeasurementSettings:
    table = _read(profile, fixtures_dir).get("measurement", {})
    try:
        return MeasurementSettings(**table)
    except TypeError as exc:
        raise RecipeError(f"profile {profile!r} [measurement]: {exc}") from exc


def load_profile(profile: str, fixtures_dir: Path = FIXTURES_DIR) -> dict[str, Recipe]:
    """All recipes of a profile, by name."""
    data = _read(profile, fixtures_dir)
    defaults = data.get("defaults", {})
    return {
        name: _make(name, profile, {**defaults, **table}) for name, table in data.get("recipes", {}).items()
    }


def get_recipe(profile: str, name: str) -> Recipe:
    recipes = load_profile(profile)
    if name not in recipes:
        raise RecipeError(f"profile {profile!r} has no recipe {name!r}; valid: {choices(recipes)}")
    return recipes[name]


def list_recipes(profile: str, pattern: str = "*") -> list[str]:
    """Recipe names matching a glob, e.g. ``list_recipes('smoke', 'vit*')``."""
    return sorted(n for n in load_profile(profile) if fnmatch.fnmatchcase(n, pattern))


def custom_recipe(profile: str, model_spec: str) -> Recipe:
    """The profile's ``custom`` template, applied to a user's model spec."""
    template = get_recipe(profile, "custom")
    return dataclasses.replace(template, name=f"custom-{model_spec}", model=model_spec)
