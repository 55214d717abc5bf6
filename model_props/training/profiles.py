"""Profiles: named sets of recipes and measurement settings, read from TOML files.

A profile is a TOML file with a ``[defaults]`` table, one ``[recipes.NAME]`` table per recipe (a recipe table
overrides the defaults; ``arch`` holds the architecture keyword arguments) and a ``[measurement]`` table.
The built-in profiles ship inside the package (``model_props.fixtures``: ``smoke`` for a CPU, ``paper`` for a
GPU). A user adds profiles, or extends a built-in one, with a folder of TOML files of their own
(:class:`RecipeSource`): a user file named like a built-in profile overrides its tables key by key. Last
come per-recipe overrides (the ``[tool.model_props.recipes.NAME]`` tables of a user's pyproject). A variant
says ``extends = "vit"`` to start from another recipe's table (its ``arch`` merged key by key), so that it
keeps the base's budget and the hyperparameters chosen for it and changes only what it names.
"""

from __future__ import annotations

import dataclasses
import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import tomllib

from ..errors import RecipeError, choices
from .recipes import REFERENCE_NAMES, MeasurementSettings, Recipe

__all__ = [
    "RecipeSource",
    "Profile",
    "BUILTIN_PACKAGE",
    "available_profiles",
    "load_profile",
    "get_recipe",
    "list_recipes",
]

BUILTIN_PACKAGE = "model_props.fixtures"
_FIELDS = {f.name for f in dataclasses.fields(Recipe)} - {"name", "profile"}
_MEASUREMENT_FIELDS = {f.name for f in dataclasses.fields(MeasurementSettings)}
_SECTIONS = ("defaults", "recipes", "measurement")
_KEYS = ("live_seed",)  # top-level keys beside the tables


@dataclass(frozen=True)
class RecipeSource:
    """Where profiles come from: the built-in ones, a user's folder of ``<profile>.toml`` files, and
    per-recipe field overrides (recipe name -> {field: value}) applied to the selected profile; ``overlay``: a
    ``defaults`` and a ``measurement`` table laid over every file's (the study's canaries shrink a profile so)."""

    user_dir: Path | None = None
    overrides: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    overlay: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

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
    unknown = set(data) - set(_SECTIONS) - set(_KEYS)
    if unknown:
        raise RecipeError(f"{entry}: unknown tables {sorted(unknown)}; valid: {choices(_SECTIONS + _KEYS)}")
    if "live_seed" in data and (not isinstance(data["live_seed"], int) or data["live_seed"] < 0):
        raise RecipeError(f"{entry}: live_seed={data['live_seed']!r}; valid: an integer >= 0")
    return data


def _make(name: str, profile: str, table: dict[str, Any]) -> Recipe:
    unknown = set(table) - _FIELDS
    if unknown:
        raise RecipeError(
            f"recipe {name!r} in profile {profile!r}: unknown fields {sorted(unknown)}; valid: {choices(_FIELDS)}"
        )
    if "model" not in table:  # (Recipe would say "__init__() missing 1 required positional argument")
        raise RecipeError(f"recipe {name!r} in profile {profile!r} names no model; valid: model = a reference "
                          f"({choices(REFERENCE_NAMES)}), 'timm:NAME' or 'package.module:factory', or extends = a recipe")  # fmt: skip
    if not isinstance(table["model"], str):
        raise RecipeError(f"recipe {name!r} in profile {profile!r}: model={table['model']!r}; valid: a reference's "
                          "name, 'timm:NAME' or 'package.module:factory'")  # fmt: skip
    rates = ("lr", "weight_decay", "momentum", "label_smoothing", "mixup_alpha", "cutmix_alpha")
    bad = {k: table[k] for k in rates if k in table and (not isinstance(table[k], (int, float)) or table[k] < 0
                                                          or (k == "lr" and table[k] == 0))}  # fmt: skip
    if bad:
        raise RecipeError(f"recipe {name!r} in profile {profile!r}: {', '.join(f'{k}={v!r}' for k, v in bad.items())}; "
                          "valid: a learning rate above 0, the other rates 0 or more")  # fmt: skip
    if "augment" in table:
        table = {**table, "augment": tuple(table["augment"])}
    try:
        return Recipe(name=name, profile=profile, **table)
    except TypeError as exc:
        raise RecipeError(f"recipe {name!r} in profile {profile!r}: {exc}") from exc


@dataclass(frozen=True)
class Profile:
    """The recipes and measurement settings of one profile, with the files they were read from; ``bases``: per
    recipe, the recipe at the root of its ``extends`` chain (a variant's reference; a recipe without one is its own).

    ``live_seed`` (the TOML's top-level ``live_seed``, default 0) is the training seed a session trains the recipes
    with: the *live* run, held out of the profile's seed study (``seed-study`` refuses it), so that a run's own
    weights are a fresh draw that the study predicts rather than one of the draws it was built from. Every recipe
    trains with it unless its table names a ``seed``."""

    name: str
    recipes: Mapping[str, Recipe]
    measurement: MeasurementSettings
    files: tuple[str, ...]
    bases: Mapping[str, str] = field(default_factory=dict)
    live_seed: int = 0

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
    live_seed = 0
    for entry in files[name]:
        data = _read(entry)
        live_seed = data.get("live_seed", live_seed)
        defaults.update(data.get("defaults", {}))
        for recipe, table in data.get("recipes", {}).items():
            tables.setdefault(recipe, {}).update(table)
        measurement.update(data.get("measurement", {}))
    defaults.update(source.overlay.get("defaults", {}))
    measurement.update(source.overlay.get("measurement", {}))
    unknown = set(source.overrides) - set(tables)
    if unknown:
        raise RecipeError(
            f"recipe overrides name {sorted(unknown)}, not recipes of profile {name!r}; valid: {choices(tables)}"
        )
    for recipe, fields in source.overrides.items():
        tables[recipe] = _overlay(tables[recipe], fields)
    bad = set(measurement) - _MEASUREMENT_FIELDS
    if bad:
        raise RecipeError(
            f"profile {name!r} [measurement]: unknown fields {sorted(bad)}; valid: {choices(_MEASUREMENT_FIELDS)}"
        )
    defaults = {"seed": live_seed, **defaults}
    recipes = {r: _make(r, name, _overlay(defaults, _extended(r, tables, name))) for r in tables}
    bases = {r: _base(r, tables) for r in tables}
    return Profile(
        name, recipes, MeasurementSettings(**measurement), tuple(str(e) for e in files[name]), bases, live_seed
    )


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


def _extended(
    recipe: str, tables: Mapping[str, Mapping[str, Any]], profile: str, seen: tuple[str, ...] = ()
) -> dict[str, Any]:
    """A recipe table with its ``extends`` chain resolved: the base's fields overlaid by its own."""
    table = dict(tables[recipe])
    base = table.pop("extends", None)
    if base is None:
        return table
    if base not in tables or base in seen + (recipe,):
        problem = "extends itself" if base in seen + (recipe,) else "extends an unknown recipe"
        raise RecipeError(
            f"recipe {recipe!r} in profile {profile!r} {problem}: extends={base!r}; valid: {choices(tables)}"
        )
    inherited = _extended(base, tables, profile, seen + (recipe,))
    inherited.pop("description", None)
    return _overlay(inherited, table)


def _base(recipe: str, tables: Mapping[str, Mapping[str, Any]]) -> str:
    """The recipe at the root of ``recipe``'s ``extends`` chain (:func:`_extended` has checked the chain)."""
    while (parent := tables[recipe].get("extends")) is not None:
        recipe = parent
    return recipe


def get_recipe(profile: str, name: str) -> Recipe:
    """A built-in recipe, e.g. ``get_recipe('smoke', 'vit')``."""
    return load_profile(profile).recipe(name)


def list_recipes(profile: str, pattern: str = "*") -> list[str]:
    """Recipe names of a built-in profile matching a glob, e.g. ``list_recipes('smoke', 'vit*')``."""
    return sorted(n for n in load_profile(profile).recipes if fnmatch.fnmatchcase(n, pattern))
