"""Models under test, built (trained, loaded from the cache, or loaded from a checkpoint) once a session."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from .anatomy import Anatomy, anatomy
from .cache import sha256_file
from .config import Settings
from .data import ImageDataset, load_dataset
from .measures import UnitReport, measure_units
from .recipes import Profile, Recipe
from .study import SeedStudy, load_study
from .training import Checkpoint, channel_stats, evaluate, get_trained
from .zoo import Classifier, build_model, check_model, load_checkpoint, parse_spec

__all__ = ["Settings", "ModelUnderTest", "ModelStore"]


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

    @property
    def parameters(self) -> int:
        return sum(p.numel() for p in self.model.parameters())


@dataclass
class ModelStore:
    settings: Settings
    _models: dict[tuple[str, str], ModelUnderTest] = field(default_factory=dict)
    _reports: dict[str, UnitReport] = field(default_factory=dict)
    _data: dict[str, ImageDataset] = field(default_factory=dict)

    @property
    def profile(self) -> Profile:
        return self.settings.profile_data

    @cached_property
    def study(self) -> SeedStudy | None:
        """The profile's seed study (accuracy floors, known failures), if it has one."""
        return load_study(self.settings.profile, self.settings.recipes.user_dir)

    def dataset(self, name: str | None = None) -> ImageDataset:
        """A dataset by name, loaded once; by default the profile's (its ``custom`` recipe's) dataset."""
        name = name or self.profile.recipe("custom").dataset
        if name not in self._data:
            s = self.settings
            self._data[name] = load_dataset(name, cache_dir=s.cache_dir, data_root=s.data_root, seed=0)
        return self._data[name]

    def models_under_test(self) -> list[str]:
        """The ``--model`` specs, or else the profile's references."""
        return list(self.settings.models) or self.profile.references

    def recipe(self, name: str) -> Recipe:
        """The recipe that trains ``name`` (a recipe of the profile, or the ``custom`` template for a user spec),
        with the session's training seed if one was given."""
        recipe = self.profile.recipes.get(name) or self.profile.custom(name)
        if self.settings.train_seed is not None:
            recipe = dataclasses.replace(recipe, seed=self.settings.train_seed)
        return recipe

    def get(self, name: str, checkpoint: Checkpoint = "final") -> ModelUnderTest:
        """The model ``name`` at ``checkpoint`` (a user's --checkpoint is the one state there is of its model)."""
        key = (name, "final" if name in self.settings.checkpoints else checkpoint)
        if key not in self._models:
            self._models[key] = self._build(name, checkpoint)
        return self._models[key]

    def built(self) -> dict[str, ModelUnderTest]:
        return {n: m for (n, c), m in self._models.items() if c == "final"}

    def unit_report(self, name: str) -> UnitReport:
        """Every unit-level measurement of a model, computed once a session (one pass per batch)."""
        if name not in self._reports:
            self._reports[name] = self.measure(self.get(name))
        return self._reports[name]

    def report_for(self, mut: ModelUnderTest) -> UnitReport:
        """The session's cached report if ``mut`` is a stored model, else a fresh measurement (mutants)."""
        return self.unit_report(mut.name) if self._models.get((mut.name, "final")) is mut else self.measure(mut)

    def measure(self, mut: ModelUnderTest) -> UnitReport:
        """Unit-level measurements of any model (e.g. a mutant) with the profile's settings."""
        m = self.profile.measurement
        return measure_units(mut.model, mut.anatomy, self.dataset().test, n_images=m.n_images,
                             batch_size=m.batch_size, seed=self.settings.seed, device=self.settings.device)

    def _build(self, name: str, checkpoint: Checkpoint) -> ModelUnderTest:
        s = self.settings
        ckpt = s.checkpoints.get(name)
        if ckpt is None:
            if name not in self.profile.recipes:
                parse_spec(name)
            recipe = self.recipe(name)
            trained = get_trained(recipe, cache_dir=s.cache_dir, checkpoint=checkpoint, data_root=s.data_root,
                                  data=self.dataset(recipe.dataset), device=s.device, progress=s.progress)
            return ModelUnderTest(name, trained.model, anatomy(trained.model), trained.metrics, recipe, trained.path,
                                  trained.sha256, trained.from_cache, trained.provenance)
        parse_spec(name)
        data = self.dataset()
        mean, std = channel_stats(data.train)
        model = build_model(name, num_classes=data.num_classes, img_size=data.image_size, mean=mean, std=std)
        load_checkpoint(model, ckpt)
        check_model(model)
        model.to(s.device).eval()
        metrics = {f"test_{k}": v for k, v in evaluate(model, data.test, device=s.device).items()}
        return ModelUnderTest(name, model, anatomy(model), metrics, None, ckpt, sha256_file(ckpt))
