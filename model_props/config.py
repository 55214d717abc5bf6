"""Session settings: defaults, then the ``[tool.model_props]`` table of the project's pyproject.toml, then the
command line (later wins).

The table (paths are relative to the pyproject's folder)::

    [tool.model_props]
    profile = "smoke"                   # a built-in profile or one of recipes_dir
    models = ["mypkg.models:build"]     # the models under test (default: the profile's references)
    checkpoints = { "mypkg.models:build" = "runs/best.safetensors" }
    cache = ".model-props-cache"        # default: $MODEL_PROPS_CACHE or ~/.cache/model-props
    data_root = "data"                  # CIFAR-10/100 for profiles that use them
    device = "cpu"
    seed = 0                            # measurement sampling seed
    train_seed = 1                      # train every recipe with this seed instead of its own
    recipes_dir = "recipes"             # the user's profiles: <profile>.toml (+ <profile>-seeds.json)
    remeasure = false                   # ignore the measurement cache
    img_size = 64                       # train and measure your models at this size (the references stay at 32)

    [tool.model_props.recipes.custom]   # field overrides of the selected profile's recipes
    steps = 2000

An unknown key is an error that lists the valid ones. Later features extend the table (e.g. ``gate``).
"""
from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from .cache import default_cache_dir
from .errors import ConfigError, choices
from .recipes import Profile, RecipeSource, load_profile

__all__ = ["TABLE", "Settings", "read_table", "validate_device"]

# key -> (type, description); the schema of [tool.model_props]
TABLE: dict[str, tuple[type, str]] = {
    "profile": (str, "recipe profile"),
    "models": (list, "model specs under test"),
    "checkpoints": (dict, "model spec -> weights file"),
    "cache": (str, "cache folder"),
    "data_root": (str, "folder of CIFAR-10/100"),
    "device": (str, "torch device"),
    "seed": (int, "measurement sampling seed"),
    "train_seed": (int, "training seed for every recipe"),
    "recipes_dir": (str, "folder of the user's profiles"),
    "recipes": (dict, "per-recipe field overrides"),
    "remeasure": (bool, "ignore the measurement cache"),
    "img_size": (int, "image size for your models (their native resolution)"),
    "gate": (dict, "release gate"),
}


def validate_device(device: str) -> str:
    if device in ("cpu", "cuda", "mps") or (device.startswith("cuda:") and device[5:].isdigit()):
        return device
    raise ConfigError(f"device={device!r} (--claims-device or [tool.model_props] device); valid: 'cpu', 'cuda', 'cuda:N', 'mps'")


def read_table(pyproject: Path) -> dict[str, Any]:
    """The ``[tool.model_props]`` table of ``pyproject`` (empty if absent), checked against :data:`TABLE`."""
    if not pyproject.is_file():
        return {}
    try:
        data = tomllib.loads(pyproject.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{pyproject}: invalid TOML: {exc}") from exc
    table = data.get("tool", {}).get("model_props", {})
    unknown = set(table) - set(TABLE)
    if unknown:
        raise ConfigError(f"{pyproject} [tool.model_props]: unknown keys {sorted(unknown)}; valid: {choices(TABLE)}")
    for key, value in table.items():
        kind, what = TABLE[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise ConfigError(f"{pyproject} [tool.model_props]: {key}={value!r} must be a {kind.__name__} ({what})")
    return table


@dataclass(frozen=True)
class Settings:
    profile: str = "smoke"
    recipes: RecipeSource = field(default_factory=RecipeSource)
    cache_dir: Path = field(default_factory=default_cache_dir)
    data_root: Path | None = None
    device: str = "cpu"
    seed: int = 0
    train_seed: int | None = None
    progress: bool = True
    models: tuple[str, ...] = ()
    checkpoints: Mapping[str, Path] = field(default_factory=dict)
    remeasure: bool = False
    gate: Mapping[str, Any] = field(default_factory=dict)
    img_size: int | None = None

    @cached_property
    def profile_data(self) -> Profile:
        return load_profile(self.profile, self.recipes)

    @classmethod
    def resolve(cls, table: Mapping[str, Any], base: Path, cli: Mapping[str, Any]) -> Settings:
        """Merge the pyproject ``table`` (its paths relative to ``base``) and the command line ``cli`` (values
        that are None or empty were not given; its paths are relative to the working directory)."""
        merged = dict(table)
        for key in ("cache", "data_root", "recipes_dir"):
            if key in merged:
                merged[key] = base / Path(merged[key]).expanduser()
        merged["checkpoints"] = {m: base / Path(c).expanduser() for m, c in table.get("checkpoints", {}).items()}
        given = {k: v for k, v in cli.items() if v is not None and v != []}
        for key in ("cache", "data_root", "recipes_dir"):
            if key in given:
                given[key] = Path(given[key]).expanduser()
        if "models" in given:  # models from the command line come with their own checkpoints, or none
            ckpts = given.pop("checkpoints", [])
            if ckpts and len(ckpts) != len(given["models"]):
                raise ConfigError(f"got {len(ckpts)} --checkpoint for {len(given['models'])} --model; give one "
                                  "--checkpoint per --model, in order")
            merged["checkpoints"] = {m: Path(c).expanduser() for m, c in zip(given["models"], ckpts)}
        elif "checkpoints" in given:
            raise ConfigError("--checkpoint needs a --model at the same position")
        steps = given.pop("custom_steps", None)
        merged.update(given)
        if steps is not None:  # --claims-steps: the budget of the custom recipe that trains a user's model
            custom = {**merged.get("recipes", {}).get("custom", {}), "steps": steps, "warmup_steps": steps // 8}
            merged["recipes"] = {**merged.get("recipes", {}), "custom": custom}
        models = tuple(merged.get("models", ()))
        stray = set(merged["checkpoints"]) - set(models)
        if stray:
            raise ConfigError(f"[tool.model_props] checkpoints name {sorted(stray)}, which are not among the models {list(models)}")
        return cls(
            profile=merged.get("profile", "smoke"),
            recipes=RecipeSource(merged.get("recipes_dir"), merged.get("recipes", {})),
            cache_dir=merged.get("cache") or default_cache_dir(),
            data_root=merged.get("data_root"),
            device=validate_device(merged.get("device", "cpu")),
            seed=merged.get("seed", 0),
            train_seed=merged.get("train_seed"),
            progress=bool(merged.get("progress", True)),
            models=models,
            checkpoints=merged["checkpoints"],
            remeasure=bool(merged.get("remeasure", False)),
            gate=merged.get("gate", {}),
            img_size=merged.get("img_size"),
        )
