"""Session settings: the declared defaults, then the ``[tool.model_props]`` table of the project's
pyproject.toml, then the command line (later wins). The options themselves are declared in :mod:`.options`.
"""

from __future__ import annotations

import glob
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from ..cache.files import default_cache_dir
from ..errors import ConfigError
from ..training.profiles import Profile, RecipeSource, load_profile
from ..verdicts.scope import SCOPES
from .options import DEFAULTS, OPTIONS

__all__ = ["Settings", "validate_device", "SCOPES", "INCONCLUSIVE", "LIVE"]


def validate_device(device: str) -> str:
    """``device`` if it names a device this torch can use, else :class:`~model_props.errors.ConfigError` in one line
    (torch is imported only for a device other than the CPU, so that a default session stays light)."""
    if not (device in ("cpu", "cuda", "mps") or (device.startswith("cuda:") and device[5:].isdigit())):
        raise ConfigError(
            f"device={device!r} (--claims-device or [tool.model_props] device); valid: 'cpu', 'cuda', 'cuda:N', 'mps'"
        )
    if device == "cpu":
        return device
    import torch

    where = f"device={device!r} (--claims-device or [tool.model_props] device)"
    if device == "mps" and not torch.backends.mps.is_available():
        raise ConfigError(f"{where}: this torch {torch.__version__} has no usable MPS device; use 'cpu'")
    if device.startswith("cuda"):
        index = int(device[5:]) if ":" in device else 0
        if not torch.cuda.is_available() or index >= torch.cuda.device_count():
            found = torch.cuda.device_count() if torch.cuda.is_available() else 0
            raise ConfigError(f"{where}: this torch {torch.__version__} sees {found} CUDA device(s) "
                              f"(CUDA build: {torch.version.cuda or 'none'}); use 'cpu', or a CUDA build of torch "
                              "on a machine with a GPU")  # fmt: skip
    return device


_PATHS = tuple(o.name for o in OPTIONS if o.path)
INCONCLUSIVE = ("fail", "report")
LIVE = ("references", "all")


def _paths(value: str | Sequence[str], base: Path, model: str) -> tuple[Path, ...]:
    """The checkpoint files of ``model``: a path, a glob pattern (``runs/seed*.safetensors``; its files in sorted
    order, one per training seed) or a list of either, relative to ``base``."""
    found: list[Path] = []
    for item in [value] if isinstance(value, str) else list(value):
        path = base / Path(str(item)).expanduser()
        if glob.has_magic(str(item)):
            matches = sorted(Path(m) for m in glob.glob(str(path)))
            if not matches:
                raise ConfigError(f"checkpoint pattern {str(path)!r} of {model} matches no file")
            found += matches
        else:
            found.append(path)
    if not found:
        raise ConfigError(f"checkpoints of {model}: give a path, a glob pattern or a list of paths")
    return tuple(found)


@dataclass(frozen=True)
class Settings:
    profile: str = DEFAULTS["profile"]
    recipes: RecipeSource = field(default_factory=RecipeSource)
    cache_dir: Path = field(default_factory=default_cache_dir)
    data_root: Path | None = None
    device: str = DEFAULTS["device"]
    seed: int = DEFAULTS["seed"]
    train_seed: int | None = None
    progress: bool = True
    models: tuple[str, ...] = ()
    checkpoints: Mapping[str, tuple[Path, ...]] = field(default_factory=dict)  # several: seeds of one model
    remeasure: bool = DEFAULTS["remeasure"]
    gate: Mapping[str, Any] = field(default_factory=dict)
    img_size: int | None = None
    scope: str = DEFAULTS["scope"]
    workers: int | None = None  # None: one per core where several models must be trained
    scheduler: str | None = None  # a running Dask cluster's address or scheduler file
    images: int = DEFAULTS["images"]  # the images of data_root a pretrained model is measured on
    versus: Mapping[str, str] = field(default_factory=dict)  # reference -> the user's comparator spec
    inconclusive: str = DEFAULTS["inconclusive"]  # what an inconclusive claim does to a model without expectation
    live: str = DEFAULTS["live"]  # "references": only the profile's references are trained live; "all": every recipe

    @cached_property
    def profile_data(self) -> Profile:
        return load_profile(self.profile, self.recipes)

    @classmethod
    def resolve(cls, table: Mapping[str, Any], base: Path, cli: Mapping[str, Any]) -> Settings:
        """Merge the pyproject ``table`` (its paths relative to ``base``) and the command line ``cli`` (values
        that are None or empty were not given; its paths are relative to the working directory)."""
        merged = dict(table)
        for key in _PATHS:
            if key in merged:
                merged[key] = base / Path(merged[key]).expanduser()
        merged["checkpoints"] = {m: _paths(c, base, m) for m, c in table.get("checkpoints", {}).items()}
        given = {k: v for k, v in cli.items() if v is not None and v != []}
        for key in _PATHS:
            if key in given:
                if not str(given[key]).strip():  # e.g. --claims-cache=$UNSET: not the working folder, silently
                    raise ConfigError(f"{key}='' is empty {_where(key)}; valid: a folder, or leave the option out")
                given[key] = Path(given[key]).expanduser()
        if "models" in given:  # models from the command line come with their own checkpoints, or none
            ckpts = given.pop("checkpoints", [])
            if ckpts and len(ckpts) != len(given["models"]):
                raise ConfigError(
                    f"got {len(ckpts)} --checkpoint for {len(given['models'])} --model; give one "
                    "--checkpoint per --model, in order"
                )
            merged["checkpoints"] = {m: _paths(c, Path.cwd(), m) for m, c in zip(given["models"], ckpts)}
        elif "checkpoints" in given:
            raise ConfigError("--checkpoint needs a --model at the same position")
        if "versus" in given:  # REF=SPEC pairs from the command line replace the table's
            given["versus"] = dict(_pair(v) for v in given["versus"])
        steps = given.pop("steps", None)
        merged.update(given)
        if steps is not None:  # --claims-steps: the budget of the custom recipe that trains a user's model
            custom = {**merged.get("recipes", {}).get("custom", {}), "steps": steps, "warmup_steps": steps // 8}
            merged["recipes"] = {**merged.get("recipes", {}), "custom": custom}
        models = tuple(merged.get("models", ()))
        stray = set(merged["checkpoints"]) - set(models)
        if stray:
            raise ConfigError(
                f"[tool.model_props] checkpoints name {sorted(stray)}, which are not among the models {list(models)}"
            )
        return cls(
            profile=merged.get("profile", DEFAULTS["profile"]),
            recipes=RecipeSource(merged.get("recipes_dir"), merged.get("recipes", {})),
            cache_dir=_cache(merged.get("cache") or default_cache_dir()),
            data_root=merged.get("data_root"),
            device=validate_device(merged.get("device", DEFAULTS["device"])),
            seed=_at_least("seed", merged.get("seed", DEFAULTS["seed"]), 0) or 0,
            train_seed=_at_least("train_seed", merged.get("train_seed"), 0),
            progress=bool(merged.get("progress", True)),
            models=models,
            checkpoints=merged["checkpoints"],
            remeasure=bool(merged.get("remeasure", DEFAULTS["remeasure"])),
            gate=merged.get("gate", {}),
            img_size=_at_least("img_size", merged.get("img_size"), 1),
            scope=_scope(merged.get("scope", DEFAULTS["scope"])),
            workers=_workers(merged.get("workers")),
            scheduler=merged.get("scheduler"),
            images=_images(merged.get("images", DEFAULTS["images"])),
            versus=dict(merged.get("versus", {})),
            inconclusive=_inconclusive(merged.get("inconclusive", DEFAULTS["inconclusive"])),
            live=_live(merged.get("live", DEFAULTS["live"])),
        )

    def trains_live(self, name: str, *, independent_run: bool = False) -> bool:
        """Whether this session trains (or loads) ``name`` with the live seed and judges it live: the profile's
        references always, its other recipes (variants) only with ``live = "all"`` or when named by ``--model``, and a
        model outside the profile (a user's) always. ``independent_run``: whether it trains the independent run of
        ``name``'s recipe (seed + 1000, that a pair part reads), which a recipe of the profile has only with
        ``live = "all"``."""
        profile = self.profile_data
        if self.live == "all" or name not in profile.recipes:
            return True
        return not independent_run and (name in profile.references or name in self.models)


def _where(name: str) -> str:
    """Where setting ``name`` comes from, for a message: its pytest option and its [tool.model_props] key."""
    option = next(o for o in OPTIONS if o.name == name)
    return f"({' or '.join(filter(None, (option.pytest, f'[tool.model_props] {name}' if option.table else None)))})"


def _at_least(name: str, value: int | None, least: int) -> int | None:
    if value is not None and value < least:
        raise ConfigError(f"{name}={value} {_where(name)}; valid: {least} or more")
    return value


def _cache(path: Path) -> Path:
    if path.exists() and not path.is_dir():
        raise ConfigError(f"cache={str(path)!r} {_where('cache')} is a file; valid: a folder (made if missing)")
    return path


def _workers(workers: int | None) -> int | None:
    if workers is not None and workers < 1:
        raise ConfigError(f"workers={workers} (--claims-workers or [tool.model_props] workers); valid: 1 or more")
    return workers


def _pair(value: str) -> tuple[str, str]:
    reference, eq, spec = value.partition("=")
    if not eq or not reference or not spec:
        raise ConfigError(f"--claims-versus {value!r}: give REF=SPEC, e.g. resnet=timm:resnet50.a1_in1k@pretrained")
    return reference, spec


def _images(images: int) -> int:
    if images < 2:
        raise ConfigError(f"images={images} (--claims-images or [tool.model_props] images); valid: 2 or more")
    return images


def _inconclusive(value: str) -> str:
    if value not in INCONCLUSIVE:
        raise ConfigError(
            f"inconclusive={value!r} (--claims-inconclusive or [tool.model_props] inconclusive); valid: "
            f"{', '.join(INCONCLUSIVE)}"
        )
    return value


def _live(value: str) -> str:
    if value not in LIVE:
        raise ConfigError(f"live={value!r} (--claims-live or [tool.model_props] live); valid: {', '.join(LIVE)}")
    return value


def _scope(scope: str) -> str:
    if scope not in SCOPES:
        raise ConfigError(f"scope={scope!r} (--claims-scope or [tool.model_props] scope); valid: {', '.join(SCOPES)}")
    return scope
