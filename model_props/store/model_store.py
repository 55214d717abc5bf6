"""Models under test, built (trained, loaded from the cache, or loaded from a checkpoint) once a session."""

from __future__ import annotations

import dataclasses
import functools
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from ..anatomy import Anatomy, anatomy
from ..cache import sha256_file
from ..config.settings import Settings
from ..data import ImageDataset, Split, load_dataset
from ..data.datasets import DEADLEAVES, split_size
from ..measurements.registry import MeasureInput
from ..training.checkpoints import get_trained, is_cached
from ..training.loop import Checkpoint, channel_stats, estimate_training_seconds, training_split
from ..training.loss import TrainingLoss
from ..training.profiles import Profile
from ..training.recipes import MeasurementSettings, Recipe
from ..verdicts.snapshot import Snapshot, load_snapshot
from ..verdicts.study import SeedStudy, load_study
from ..zoo import build_model, check_model, parse_spec
from ..zoo.pretrained import parse_pretrained
from .lost import LostTasks
from .pairs import report_of
from .pretrained import FolderData, pretrained_under_test
from .samples import identity, sample_seed
from .tested import ModelUnderTest, anatomy_on_cpu
from .weights import load_user_checkpoint

__all__ = ["ModelUnderTest", "ModelStore", "sample_seed"]  # ModelUnderTest: see .tested

LONG_TRAINING_S = 600.0  # a custom-recipe training longer than this is announced first


def _stderr(message: str) -> None:
    print(f"model-props: {message}", file=sys.stderr, flush=True)


@functools.lru_cache(maxsize=4)
def _generated(name: str, cache_dir: Path) -> ImageDataset:
    """A dataset the project generates (dead leaves), loaded once a process: the stores of one process (one per
    seed of a study, one per measuring task) share it instead of reading its ~40 MB again each (~0.1 s)."""
    return load_dataset(name, cache_dir=cache_dir, seed=0)


@dataclass
class ModelStore:
    settings: Settings
    notify: Callable[[str], None] = _stderr  # where announcements go (the plugin routes them to the terminal)
    _models: dict[tuple[str, str], ModelUnderTest] = field(default_factory=dict)
    _reports: dict[tuple[str | None, str, int | None], Any] = field(default_factory=dict)  # (identity, kind, upto)
    _data: dict[str, ImageDataset] = field(default_factory=dict)
    _stats: dict[str, tuple[tuple[float, ...], tuple[float, ...]]] = field(default_factory=dict)
    _folders: dict[str, FolderData] = field(default_factory=dict)  # the image folders of pretrained models
    _architectures: dict[str, Anatomy] = field(default_factory=dict)  # untrained builds' anatomies, by recipe
    lost: LostTasks = field(default_factory=LostTasks)  # what killed every worker that ran it ahead of the tests

    @property
    def profile(self) -> Profile:
        return self.settings.profile_data

    @cached_property
    def study(self) -> SeedStudy | None:
        """The profile's seed study (the references' per-seed estimates), if it has one."""
        return load_study(self.settings.profile, self.settings.recipes.user_dir)

    @cached_property
    def snapshot(self) -> Snapshot | None:
        """The profile's reviewed expectation snapshot (what the references' claim tests assert), if it has one."""
        return load_snapshot(self.settings.profile, self.settings.recipes.user_dir)

    @property
    def train_seed(self) -> int:
        """The seed the profile's recipes train with in this session: --claims-train-seed, else the live seed."""
        s = self.settings
        return s.train_seed if s.train_seed is not None else self.profile.live_seed

    @cached_property
    def sample_seed(self) -> int:
        """The seed every measurement of this session draws its sample with: the training seed's own
        (:func:`.samples.sample_seed`) where the models under test are the profile's recipes trained here, else (a
        user's model, and the references compared with it) --claims-seed's; each of a user's replicas (3 or more
        checkpoints) draws one of its own (:func:`.samples.sample_seed_of`)."""
        s = self.settings
        ours = all(n in self.profile.recipes and n not in s.checkpoints for n in self.models_under_test())
        return sample_seed(s.seed, self.train_seed) if ours else s.seed

    def dataset(self, name: str | None = None) -> ImageDataset:
        """A dataset by name, loaded once; by default the profile's (its ``custom`` recipe's) dataset."""
        name = name or self.profile.recipe("custom").dataset
        if name not in self._data:
            s = self.settings
            if split_size(name)[0] in DEADLEAVES:
                self._data[name] = _generated(name, s.cache_dir)
            else:
                self._data[name] = load_dataset(name, cache_dir=s.cache_dir, data_root=s.data_root, seed=0)
        return self._data[name]

    def models_under_test(self) -> list[str]:
        """The ``--model`` specs, or else the profile's references."""
        return list(self.settings.models) or self.profile.references

    def folder(self, dataset: str | None) -> FolderData | None:
        """The image folder a pretrained model is measured on, when ``dataset`` is one."""
        return self._folders.get(dataset or "")

    def user_dataset(self) -> str:
        """The dataset of a user's model: the profile's, at ``--claims-img-size`` when one was given (the
        references and variants stay at the profile's size)."""
        base = self.profile.recipe("custom").dataset
        return f"{base}@{self.settings.img_size}" if self.settings.img_size else base

    def recipe(self, name: str) -> Recipe:
        """The recipe that trains ``name`` (a recipe of the profile, or the ``custom`` template for a user spec),
        with the session's training seed if one was given."""
        recipe = self.profile.recipes.get(name)
        if recipe is None:
            recipe = dataclasses.replace(self.profile.custom(name), dataset=self.user_dataset())
        if self.settings.train_seed is not None:
            recipe = dataclasses.replace(recipe, seed=self.settings.train_seed)
        return recipe

    def architecture(self, name: str) -> Anatomy:
        """The anatomy of ``name``'s architecture, from an untrained build of its recipe (nothing is trained)."""
        if name not in self._architectures:
            recipe = self.recipe(name)
            data = self.dataset(recipe.dataset)
            net = build_model(recipe.model, num_classes=data.num_classes, img_size=data.image_size, arch_kwargs=recipe.arch)  # fmt: skip
            self._architectures[name] = anatomy(net)
        return self._architectures[name]

    @cached_property
    def checkpoints_needed(self) -> dict[str, set[Checkpoint]]:
        """Per model, the checkpoints the claim catalogue reads of it (the models under test: 'final' and what
        the parts read of the model under test), so that each is trained once, as far as it is needed."""
        from ..claims import list_claims

        needed: dict[str, set[Checkpoint]] = {n: {"final"} for n in self.models_under_test()}
        for claim in list_claims():
            for part in claim.parts:
                models = [part.subject] if part.subject else self.models_under_test()
                for name in [*models, part.versus, part.partner]:
                    if name:
                        needed.setdefault(name, set()).add(part.checkpoint)
        return needed

    def last_checkpoint_needed(self, name: str) -> Checkpoint:
        """How far ``name`` must be trained: ``final`` unless the catalogue reads only its ``warmup`` checkpoint."""
        return "final" if "final" in self.checkpoints_needed.get(name, {"final"}) else "warmup"

    def get(self, name: str, checkpoint: Checkpoint = "final") -> ModelUnderTest:
        """The model ``name`` at ``checkpoint`` (a user's --checkpoint is its one state; of several, the first)."""
        key = (name, "final" if name in self.settings.checkpoints else checkpoint)
        if key not in self._models:
            self._models[key] = self._build(name, checkpoint)
        return self._models[key]

    def kept(self, key: tuple[str, str], build: Callable[[], ModelUnderTest]) -> ModelUnderTest:
        """The model kept under ``key`` (label, checkpoint), built once a session (e.g. a seed control)."""
        if key not in self._models:
            self._models[key] = build()
        return self._models[key]

    def replicas(self, name: str) -> list[ModelUnderTest]:
        """Every --checkpoint of a user's model: its training seeds, for an architecture verdict (each on a sample of
        its own: :func:`.samples.sample_seed_of`)."""
        paths = self.settings.checkpoints.get(name, ())
        found = [self.get(name)]
        for i, path in enumerate(paths[1:], start=1):
            key = (name, f"replica {i}")
            if key not in self._models:
                self._models[key] = self._load(name, path, name)
            found.append(self._models[key])
        return found

    def samples(self, tested: ModelUnderTest, kind: str, sampling: str) -> str:
        """The identity of the samples a ``kind`` report of ``tested`` is measured on (:func:`.samples.identity`)."""
        return identity(self, tested, kind, sampling)

    def report(self, name: str, kind: str, checkpoint: Checkpoint = "final", *, cached_only: bool = False) -> Any:
        """The ``kind`` report of a stored model, measured once (:meth:`report_for`)."""
        return self.report_for(self.get(name, checkpoint), kind, cached_only=cached_only)

    def report_for(self, tested: ModelUnderTest, kind: str, upto: int | None = None, cached_only: bool = False) -> Any:
        """The ``kind`` report of any model (a stored one, or a mutant), of a chunked kind on its first ``upto``
        units: once a session, and from the measurement cache when its inputs did not change (``cached_only``: from
        there only, else :class:`~model_props.measurements.registry.NotCached`, measuring nothing)."""
        key = (tested.identity, kind, upto)  # a model without an identity (None) is measured each time
        if tested.identity is None or key not in self._reports:
            self.lost.check_report(tested, kind)
            report = report_of(self, tested, kind, upto, cached_only=cached_only)
            if tested.identity is None:
                return report
            self._reports[key] = report
        return self._reports[key]

    def measurement_settings(self, tested: ModelUnderTest) -> MeasurementSettings:
        """The profile's measurement settings; on a user's image folder the unit measurements take all its N
        images where the profile asks for more (the other kinds take at most theirs; no statistic's unit changes)."""
        m = self.profile.measurement
        if self.folder(tested.dataset) is None:
            return m
        return dataclasses.replace(m, n_images=min(m.n_images, len(self.dataset(tested.dataset).test)))

    def measure_input(self, tested: ModelUnderTest) -> MeasureInput:
        """What a measurement reads of ``tested``: its test data, its own training split and training loss."""
        recipe = tested.recipe or self.profile.custom(tested.name)
        data = self.dataset(tested.dataset)
        train = training_split(recipe, data) if tested.recipe else data.train
        loss = dataclasses.replace(TrainingLoss.of(recipe), shift=tested.loss_shift)
        if (folder := self.folder(data.name)) is not None:
            loss = dataclasses.replace(folder.loss, shift=tested.loss_shift)
        return MeasureInput(
            tested.name, tested.model, tested.anatomy, tested.identity, data.test, train, loss, data.name
        )

    def _build(self, name: str, checkpoint: Checkpoint) -> ModelUnderTest:
        s = self.settings
        ckpt = s.checkpoints.get(name)
        if name not in self.profile.recipes and parse_pretrained(name) is not None:
            return pretrained_under_test(self, name)
        if ckpt is None:
            if name not in self.profile.recipes:
                parse_spec(name)
            recipe = self.recipe(name)
            self.lost.check_training(recipe)
            train = functools.partial(
                get_trained,
                recipe,
                cache_dir=s.cache_dir,
                data_root=s.data_root,
                data=self.dataset(recipe.dataset),
                device=s.device,
                progress=s.progress,
            )
            if name not in self.profile.recipes and not is_cached(recipe, s.cache_dir, checkpoint):
                self._announce(name, recipe)
            if checkpoint != "final" and "final" in self.checkpoints_needed.get(name, ()):
                train(checkpoint="final")  # one run keeps both checkpoints; the next line reads from the cache
            return ModelUnderTest.of_trained(name, train(checkpoint=checkpoint))
        return self._load(name, ckpt[0], name)

    def _announce(self, name: str, recipe: Recipe) -> None:
        """Before a long training of a user's model: say how long, measured on this machine."""
        data = self.dataset(recipe.dataset)
        seconds, steps = estimate_training_seconds(recipe, data, device=self.settings.device)
        if seconds > LONG_TRAINING_S:
            self.notify(
                f"training {name} with profile {self.profile.name!r}'s custom recipe ({steps} steps) will take about "
                f"{seconds / 60:.0f} min on this machine ({seconds / steps:.2f} s per step); give --claims-steps N "
                f"or a --checkpoint to shorten it"
            )

    def baseline(self, name: str, path: Path) -> ModelUnderTest:
        """The model spec ``name`` with the baseline weights ``path`` (the release gate's comparison)."""
        key = (f"{name}@baseline", "final")
        if key not in self._models:
            self._models[key] = self._load(name, path, key[0])
        return self._models[key]

    def _load(self, spec: str, path: Path, label: str) -> ModelUnderTest:
        """The model ``spec`` built for the profile's data and loaded with the weights at ``path``."""
        if spec not in self.profile.recipes:
            parse_spec(spec)
        recipe = self.profile.recipes.get(spec)
        data = self.dataset(recipe.dataset if recipe else self.user_dataset())
        mean, std = self.channel_stats(data.name)
        model = build_model(recipe.model if recipe else spec, num_classes=data.num_classes, img_size=data.image_size,
                            arch_kwargs=recipe.arch if recipe else None, mean=mean, std=std)  # fmt: skip
        load_user_checkpoint(model, path)
        check_model(model)
        model.to(self.settings.device).eval()
        sha256 = sha256_file(path)
        tested = ModelUnderTest(label, model, anatomy_on_cpu(model), {}, None, path, sha256, dataset=data.name)
        fit = self.report_for(tested, "fit")  # the test images the claims read; cached by the weights' sha256
        tested.metrics.update(test_accuracy=fit.accuracy(), test_nll=fit.nll())
        return tested

    def add_folder(self, folder: FolderData, classes: tuple[str, ...]) -> ImageDataset:
        """A user's image folder as a dataset of the store (its name keys every measurement on it)."""
        if folder.name not in self._data:
            # the fit report reads a training split; without train/ it reads the test images in its place, and
            # every part that reads training images is skipped (session.judging), so those numbers are never read
            train = folder.train if folder.train is not None else folder.test
            empty = Split(folder.test.images[:0], folder.test.labels[:0])
            self._data[folder.name] = ImageDataset(folder.name, classes, train, empty, folder.test)
            self._folders[folder.name] = folder
        return self._data[folder.name]

    def channel_stats(self, dataset: str) -> tuple[tuple[float, ...], tuple[float, ...]]:
        """Per-channel mean and std of a dataset's training images (a loaded model's normalisation), once."""
        if dataset not in self._stats:
            self._stats[dataset] = channel_stats(self.dataset(dataset).train)
        return self._stats[dataset]
