"""Training recipes as data: frozen :class:`Recipe` dataclasses grouped in named profiles.

A profile is a TOML file with a ``[defaults]`` table, one ``[recipes.NAME]`` table per recipe (a recipe table
overrides the defaults; ``arch`` holds the architecture keyword arguments) and a ``[measurement]`` table.
The built-in profiles ship inside the package (``model_props.fixtures``: ``smoke`` for a CPU, ``paper`` for a
GPU). A user adds profiles, or extends a built-in one, with a folder of TOML files of their own
(:class:`RecipeSource`): a user file named like a built-in profile overrides its tables key by key. Last
come per-recipe overrides (the ``[tool.model_props.recipes.NAME]`` tables of a user's pyproject).

Recipes named after a reference model (``vit``, ``pit``, ``swin``, ``resnet``, ``alternet``) are the
references; ``custom`` is the template that trains a user's ``--model`` given without a ``--checkpoint``;
every other recipe is a *variant* that a claim compares against (e.g. ``vit_gap``). A variant says
``extends = "vit"`` to start from another recipe's table (its ``arch`` merged key by key), so that it keeps
the base's budget and the hyperparameters chosen for it and changes only what it names.
"""
from __future__ import annotations

import dataclasses
import fnmatch
import hashlib
import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from .errors import RecipeError, choices

__all__ = ["Recipe", "MeasurementSettings", "RecipeSource", "Profile", "BUILTIN_PACKAGE", "REFERENCE_NAMES",
           "available_profiles", "load_profile", "get_recipe", "list_recipes"]

BUILTIN_PACKAGE = "model_props.fixtures"
REFERENCE_NAMES = ("vit", "pit", "swin", "resnet", "alternet")
AUGMENTATIONS = ("crop", "flip", "mixup", "cutmix", "randaugment")


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
            raise RecipeError(f"recipe {self.name!r}: give exactly one budget, steps or epochs "
                              f"(got steps={self.steps}, epochs={self.epochs})")
        if self.warmup_steps is not None and self.warmup_epochs is not None:
            raise RecipeError(f"recipe {self.name!r}: give warmup_steps or warmup_epochs, not both")
        if (self.steps or 1) < 1 or (self.epochs or 1) <= 0 or self.batch_size < 1:
            raise RecipeError(f"recipe {self.name!r}: steps={self.steps}, epochs={self.epochs} and "
                              f"batch_size={self.batch_size} must be positive")
        if not 0.0 < self.subset <= 1.0:
            raise RecipeError(f"recipe {self.name!r}: subset={self.subset} must be in (0, 1]")

    def schedule(self, n_train: int) -> tuple[int, int]:
        """(total steps, warm-up steps) for a training split of ``n_train`` images."""
        per_epoch = n_train / self.batch_size
        total = self.steps if self.steps is not None else max(1, round(self.epochs * per_epoch))
        warmup = self.warmup_steps if self.warmup_steps is not None else round((self.warmup_epochs or 0.0) * per_epoch)
        if not 0 <= warmup < total:
            raise RecipeError(f"recipe {self.name!r}: warm-up of {warmup} steps must be shorter than the {total}-step budget")
        return total, warmup

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def fingerprint(self) -> str:
        """A hash of every field that affects training except the seed: what a seed study is keyed by."""
        fields = {k: v for k, v in self.to_dict().items() if k not in ("description", "seed", "name", "profile")}
        return hashlib.sha256(json.dumps(fields, sort_keys=True, default=str).encode()).hexdigest()[:12]

    def key(self, code_hash: str = "") -> str:
        """``NAME-<12 hex>``: a hash of every field that affects training (not the description)."""
        fields = {k: v for k, v in self.to_dict().items() if k != "description"}
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


_FIELDS = {f.name for f in dataclasses.fields(Recipe)} - {"name", "profile"}
_MEASUREMENT_FIELDS = {f.name for f in dataclasses.fields(MeasurementSettings)}
_SECTIONS = ("defaults", "recipes", "measurement")


@dataclass(frozen=True)
class RecipeSource:
    """Where profiles come from: the built-in ones, a user's folder of ``<profile>.toml`` files, and
    per-recipe field overrides (recipe name -> {field: value}) applied to the selected profile."""

    user_dir: Path | None = None
    overrides: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def files(self) -> dict[str, list[Any]]:
        """profile name -> its files, built-in first (importlib Traversables or Paths)."""
        found: dict[str, list[Any]] = {}
        for entry in sorted(resources.files(BUILTIN_PACKAGE).iterdir(), key=lambda e: e.name):
            if entry.name.endswith(".toml"):
                found.setdefault(entry.name.removesuffix(".toml"), []).append(entry)
        if self.user_dir is not None:
            if not self.user_dir.is_dir():
                raise RecipeError(f"recipes folder {str(self.user_dir)!r} does not exist")
            for path in sorted(self.user_dir.glob("*.toml")):
                found.setdefault(path.stem, []).append(path)
        return found


def available_profiles(source: RecipeSource = RecipeSource()) -> list[str]:
    return sorted(source.files())


def _read(entry: Any) -> dict[str, Any]:
    try:
        data = tomllib.loads(entry.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise RecipeError(f"{entry}: invalid TOML: {exc}") from exc
    unknown = set(data) - set(_SECTIONS)
    if unknown:
        raise RecipeError(f"{entry}: unknown tables {sorted(unknown)}; valid: {choices(_SECTIONS)}")
    return data


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


@dataclass(frozen=True)
class Profile:
    """The recipes and measurement settings of one profile, with the files they were read from."""

    name: str
    recipes: Mapping[str, Recipe]
    measurement: MeasurementSettings
    files: tuple[str, ...]

    def recipe(self, name: str) -> Recipe:
        if name not in self.recipes:
            raise RecipeError(f"profile {self.name!r} has no recipe {name!r}; valid: {choices(self.recipes)}")
        return self.recipes[name]

    @property
    def references(self) -> list[str]:
        """The reference recipes, in the order of :data:`REFERENCE_NAMES`."""
        return [n for n in REFERENCE_NAMES if n in self.recipes]

    @property
    def variants(self) -> list[str]:
        return [n for n in self.recipes if n not in REFERENCE_NAMES and n != "custom"]

    def custom(self, model_spec: str) -> Recipe:
        """The ``custom`` template applied to a user's model spec."""
        return dataclasses.replace(self.recipe("custom"), name=f"custom-{model_spec}", model=model_spec)


def load_profile(name: str = "smoke", source: RecipeSource = RecipeSource()) -> Profile:
    """A profile by name, from the built-in files, the user's folder and the overrides of ``source``."""
    files = source.files()
    if name not in files:
        where = f" (built-in, and the user's recipes folder {str(source.user_dir)!r})" if source.user_dir else ""
        raise RecipeError(f"unknown profile={name!r}; valid: {choices(files)}{where}")
    defaults: dict[str, Any] = {}
    tables: dict[str, dict[str, Any]] = {}
    measurement: dict[str, Any] = {}
    for entry in files[name]:
        data = _read(entry)
        defaults.update(data.get("defaults", {}))
        for recipe, table in data.get("recipes", {}).items():
            tables.setdefault(recipe, {}).update(table)
        measurement.update(data.get("measurement", {}))
    unknown = set(source.overrides) - set(tables)
    if unknown:
        raise RecipeError(f"recipe overrides name {sorted(unknown)}, not recipes of profile {name!r}; valid: {choices(tables)}")
    for recipe, fields in source.overrides.items():
        tables[recipe] = _overlay(tables[recipe], fields)
    bad = set(measurement) - _MEASUREMENT_FIELDS
    if bad:
        raise RecipeError(f"profile {name!r} [measurement]: unknown fields {sorted(bad)}; valid: {choices(_MEASUREMENT_FIELDS)}")
    recipes = {r: _make(r, name, _overlay(defaults, _extended(r, tables, name))) for r in tables}
    return Profile(name, recipes, MeasurementSettings(**measurement), tuple(str(e) for e in files[name]))


_ALTERNATIVES = (("steps", "epochs"), ("warmup_steps", "warmup_epochs"))


def _overlay(base: Mapping[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    """``top`` over ``base``: ``arch`` merged key by key, and a budget given in one unit replaces the other."""
    merged = {**base, **top}
    if "arch" in base or "arch" in top:
        merged["arch"] = {**base.get("arch", {}), **top.get("arch", {})}
    for a, b in _ALTERNATIVES:
        if a in top and b not in top:
            merged.pop(b, None)
        if b in top and a not in top:
            merged.pop(a, None)
    return merged


def _extended(recipe: str, tables: Mapping[str, Mapping[str, Any]], profile: str, seen: tuple[str, ...] = ()) -> dict[str, Any]:
    """A recipe table with its ``extends`` chain resolved: the base's fields overlaid by its own."""
    table = dict(tables[recipe])
    base = table.pop("extends", None)
    if base is None:
        return table
    if base not in tables or base in seen + (recipe,):
        problem = "extends itself" if base in seen + (recipe,) else "extends an unknown recipe"
        raise RecipeError(f"recipe {recipe!r} in profile {profile!r} {problem}: extends={base!r}; valid: {choices(tables)}")
    inherited = _extended(base, tables, profile, seen + (recipe,))
    inherited.pop("description", None)
    return _overlay(inherited, table)


def get_recipe(profile: str, name: str) -> Recipe:
    """A built-in recipe, e.g. ``get_recipe('smoke', 'vit')``."""
    return load_profile(profile).recipe(name)


def list_recipes(profile: str, pattern: str = "*") -> list[str]:
    """Recipe names of a built-in profile matching a glob, e.g. ``list_recipes('smoke', 'vit*')``."""
    return sorted(n for n in load_profile(profile).recipes if fnmatch.fnmatchcase(n, pattern))
