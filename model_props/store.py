"""Models under test, built (trained, loaded from the cache, or loaded from a checkpoint) once a session."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .anatomy import Anatomy, anatomy
from .cache import default_cache_dir, sha256_file
from .data import ImageDataset, load_dataset
from .measures import UnitReport, measure_units
from .recipes import Recipe, custom_recipe, get_recipe, load_profile, measurement_settings
from .training import channel_stats, evaluate, get_trained
from .zoo import REFERENCE_MODELS, Classifier, build_model, check_model, load_checkpoint, parse_spec

__all__ = ["Settings", "ModelUnderTest", "ModelStore"]


@dataclass(frozen=True)
class Settings:
    profile: str = "smoke"
    cache_dir: Path = field(default_factory=default_cache_dir)
    data_root: Path | None = None
    device: str = "cpu"
    seed: int = 0
    progress: bool = True


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

    @property
    def parameters(self) -> int:
        return sum(p.numel() for p in self.model.parameters())


@dataclass
class ModelStore:
    settings: Settings
    checkpoints: dict[str, Path] = field(default_factory=dict)
    _models: dict[str, ModelUnderTest] = field(default_factory=dict)
    _reports: dict[str, UnitReport] = field(default_factory=dict)
    _data: dict[str, ImageDataset] = field(default_factory=dict)

    def dataset(self, name: str | None = None) -> ImageDataset:
        """A dataset by name, loaded once; by default the profile's (its ``custom`` recipe's) dataset."""
        name = name or get_recipe(self.settings.profile, "custom").dataset
        if name not in self._data:
            s = self.settings
            self._data[name] = load_dataset(name, cache_dir=s.cache_dir, data_root=s.data_root, seed=0)
        return self._data[name]

    def reference_names(self) -> list[str]:
        return [n for n in load_profile(self.settings.profile) if n in REFERENCE_MODELS]

    def get(self, name: str) -> ModelUnderTest:
        if name not in self._models:
            self._models[name] = self._build(name)
        return self._models[name]

    def built(self) -> dict[str, ModelUnderTest]:
        return dict(self._models)

    def unit_report(self, name: str) -> UnitReport:
        """Every unit-level measurement of a model, computed once a session (one pass per batch)."""
        if name not in self._reports:
            self._reports[name] = self.measure(self.get(name))
        return self._reports[name]

    def report_for(self, mut: ModelUnderTest) -> UnitReport:
        """The session's cached report if ``mut`` is a stored model, else a fresh measurement (mutants)."""
        return self.unit_report(mut.name) if self._models.get(mut.name) is mut else self.measure(mut)

    def measure(self, mut: ModelUnderTest) -> UnitReport:
        """Unit-level measurements of any model (e.g. a mutant) with the profile's settings."""
        m = measurement_settings(self.settings.profile)
        return measure_units(mut.model, mut.anatomy, self.dataset().test, n_images=m.n_images,
                             batch_size=m.batch_size, seed=self.settings.seed, device=self.settings.device)

    def _build(self, name: str) -> ModelUnderTest:
        parse_spec(name)
        s = self.settings
        ckpt = self.checkpoints.get(name)
        if ckpt is None:
            recipe = get_recipe(s.profile, name) if name in REFERENCE_MODELS else custom_recipe(s.profile, name)
            trained = get_trained(recipe, cache_dir=s.cache_dir, data_root=s.data_root, data=self.dataset(recipe.dataset),
                                  device=s.device, progress=s.progress)
            sha = sha256_file(trained.path) if trained.path else None
            return ModelUnderTest(name, trained.model, anatomy(trained.model), trained.metrics, recipe, trained.path,
                                  sha, trained.from_cache)
        data = self.dataset()
        mean, std = channel_stats(data.train)
        model = build_model(name, num_classes=data.num_classes, img_size=data.image_size, mean=mean, std=std)
        load_checkpoint(model, ckpt)
        check_model(model)
        model.to(s.device).eval()
        metrics = {f"test_{k}": v for k, v in evaluate(model, data.test, device=s.device).items()}
        return ModelUnderTest(name, model, anatomy(model), metrics, None, ckpt, sha256_file(ckpt))
