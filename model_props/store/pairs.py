"""The models a pair report reads beside the model under test (cross-model CKA, Raghu et al. 2021): the other
model, a second training seed of the model's own recipe (the seed control) and a randomly initialised copy of
the other model (the null).

Davari et al. (ICLR 2023) show that CKA falls with depth between any two independently trained networks and can
be high against a random one, so a similarity is read against the similarity of two seeds of one recipe, with
an untrained network's beside it. All three are *independent runs*: their recipe with seed +
:data:`CONTROL_SEED_OFFSET`, so none shares the model's initial weights or data order. A profile's variants
train with the reference's seed, and one of the same architecture (the ViT on a quarter of the data) starts
from the very weights the ViT started from: read against it, the similarity would measure the shared start as
much as the data, which the seed control does not share.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import torch

from ..errors import NotApplicable
from ..measurements.cross import PairReports
from ..measurements.registry import REPORT_KINDS, measure
from ..training.checkpoints import get_trained
from ..training.loop import Checkpoint
from ..training.recipes import Recipe
from ..zoo import REFERENCE_MODELS, build_model
from ..zoo.pretrained import weights_sha256
from .samples import sample_seed_of
from .tested import ModelUnderTest, anatomy_on_cpu

if TYPE_CHECKING:
    from ..anatomy import Anatomy
    from ..config.settings import Settings
    from ..data import ImageDataset
    from ..measurements.registry import MeasureInput
    from ..training.profiles import Profile
    from ..training.recipes import MeasurementSettings
    from .lost import LostTasks


class Store(Protocol):
    """What this module reads of :class:`~.model_store.ModelStore` (not imported: the store imports this module)."""

    settings: Settings
    lost: LostTasks

    @property
    def profile(self) -> Profile: ...
    @property
    def sample_seed(self) -> int: ...
    def get(self, name: str, checkpoint: Checkpoint = "final") -> ModelUnderTest: ...
    def kept(self, key: tuple[str, str], build: Callable[[], ModelUnderTest]) -> ModelUnderTest: ...
    def replicas(self, name: str) -> list[ModelUnderTest]: ...
    def recipe(self, name: str) -> Recipe: ...
    def architecture(self, name: str) -> Anatomy: ...
    def models_under_test(self) -> list[str]: ...
    def dataset(self, name: str | None = None) -> ImageDataset: ...
    def channel_stats(self, dataset: str) -> tuple[tuple[float, ...], tuple[float, ...]]: ...
    def measure_input(self, tested: ModelUnderTest) -> MeasureInput: ...
    def measurement_settings(self, tested: ModelUnderTest) -> MeasurementSettings: ...


__all__ = [
    "CONTROL_SEED_OFFSET",
    "measured",
    "report_of",
    "sample_size",
    "pair_reports",
    "independent_runs",
    "independent_run",
    "seed_control",
    "control_recipe",
    "untrained",
]

CONTROL_SEED_OFFSET = 1000  # a seed control trains the recipe with seed + this: a run apart from every study seed


def measured(
    store: Store,
    kind: str,
    tested: ModelUnderTest,
    other: ModelUnderTest | None = None,
    upto: int | None = None,
    *,
    cached_only: bool = False,
) -> Any:
    """The ``kind`` report of ``tested`` (of the pair ``tested``, ``other`` for a pair kind) with the store's
    settings, on ``tested``'s measurement sample (:func:`.samples.sample_seed_of`: the session's, or a
    user's replica's own), from the measurement cache or measured now (``cached_only``: from the cache only, else
    :class:`~model_props.measurements.registry.NotCached`); a chunked kind's on its first ``upto`` units."""
    s = store.settings
    return measure(
        kind,
        store.measure_input(tested),
        store.measurement_settings(tested),
        seed=sample_seed_of(store, tested),
        device=s.device,
        cache_dir=s.cache_dir,
        remeasure=s.remeasure,
        other=store.measure_input(other) if other is not None else None,
        upto=upto,
        cached_only=cached_only,
    )


def report_of(
    store: Store, tested: ModelUnderTest, kind: str, upto: int | None = None, *, cached_only: bool = False
) -> Any:
    """The ``kind`` report of ``tested``: of a pair kind ``base@partner`` (``cross@resnet``: against the recipe
    resnet), its :func:`pair_reports`; of any other, :func:`measured` (on its first ``upto`` units if chunked)."""
    base, _, partner = kind.partition("@")
    if partner:
        return pair_reports(store, tested, base, partner, cached_only=cached_only)
    return measured(store, kind, tested, upto=upto, cached_only=cached_only)


def sample_size(store: Store, kind: str, tested: ModelUnderTest) -> int | None:
    """The sampling units of ``tested``'s whole ``kind`` report where the kind is measured in chunks (a sequential
    verdict's largest sample), else None."""
    size = REPORT_KINDS[kind].size
    return None if size is None else size(store.measure_input(tested), store.measurement_settings(tested))


def pair_reports(
    store: Store,
    tested: ModelUnderTest,
    kind: str,
    partner: str,
    *,
    stand_in: ModelUnderTest | None = None,
    cached_only: bool = False,
) -> PairReports:
    """``tested`` against the recipe ``partner`` (or a ``stand_in`` for it, e.g. a mutant of it), against its seed
    control and against an untrained ``partner``, all on the same images (a pair kind of
    :mod:`model_props.measurements.registry`); ``cached_only``: as :func:`measured`'s."""
    control = seed_control(store, tested)  # first: a model without one (a user's single checkpoint) trains nothing
    other = stand_in if stand_in is not None else independent_run(store, store.recipe(partner), tested.training_state)
    return PairReports(
        against=measured(store, kind, tested, other, cached_only=cached_only),
        control=measured(store, kind, tested, control, cached_only=cached_only),
        null=measured(store, kind, tested, untrained(store, partner), cached_only=cached_only),
    )


def control_recipe(recipe: Recipe) -> Recipe:
    """An independent run's recipe: ``recipe`` with seed + :data:`CONTROL_SEED_OFFSET`."""
    return dataclasses.replace(recipe, seed=recipe.seed + CONTROL_SEED_OFFSET)


def independent_run(store: Store, recipe: Recipe, checkpoint: Checkpoint) -> ModelUnderTest:
    """``recipe`` trained with seed + :data:`CONTROL_SEED_OFFSET` to ``checkpoint`` (module docstring), once a
    session."""
    run = control_recipe(recipe)

    def train() -> ModelUnderTest:
        s = store.settings
        store.lost.check_training(run)
        trained = get_trained(
            run, cache_dir=s.cache_dir, data_root=s.data_root, data=store.dataset(run.dataset),
            device=s.device, progress=s.progress, checkpoint=checkpoint,
        )  # fmt: skip
        return ModelUnderTest.of_trained(f"{run.name} seed {run.seed}", trained)

    return store.kept((f"{run.name}@seed{run.seed}", checkpoint), train)


def seed_control(store: Store, tested: ModelUnderTest) -> ModelUnderTest:
    """An independent training run of ``tested``'s recipe (seed + :data:`CONTROL_SEED_OFFSET`, at the same
    checkpoint; a mutant's is its base recipe's), or the next of a user's --checkpoint files."""
    if tested.recipe is None:
        if len(store.settings.checkpoints.get(tested.name, ())) < 2:
            raise NotApplicable(
                f"its seed control needs other, independently trained checkpoints of {tested.name}: give one "
                "--checkpoint per training seed, 3 or more (each is read against the next; a similarity to another "
                "model means something only against the similarity of two seeds)"
            )
        replicas = store.replicas(tested.name)  # replica i is read against replica i + 1 (of k, cyclically)
        i = next((j for j, r in enumerate(replicas) if r.checkpoint_sha256 == tested.checkpoint_sha256), 0)
        return replicas[(i + 1) % len(replicas)]
    return independent_run(store, tested.recipe, tested.training_state)


def independent_runs(store: Store, names: list[str]) -> list[tuple[Recipe, Checkpoint]]:
    """The independent runs (:func:`independent_run`) the catalogue's pair parts will read of the models under
    test among ``names`` (profile recipes a pair part applies to): each one's seed control and the parts'
    partners, with the checkpoint they read; trained ahead with the rest."""
    from ..claims import list_claims

    found: dict[tuple[str, Checkpoint], Recipe] = {}
    for claim in list_claims():
        parts = [p for p in claim.parts if p.partner and p.subject is None]
        for name in names if parts else ():
            if (
                name not in store.models_under_test()
                or name not in store.profile.recipes
                or name in store.settings.checkpoints
            ):
                continue  # (a user's --checkpoint has its second --checkpoint as its control)
            if claim.skip_reason(store.architecture(name), name, store.profile.recipes) is None:
                for part in parts:
                    for read in (name, part.partner or name):
                        found[(read, part.checkpoint)] = control_recipe(store.recipe(read))
    return [(recipe, checkpoint) for (_, checkpoint), recipe in found.items()]


def no_zero_init(spec: str) -> dict[str, bool]:
    """``zero_init_last=False`` for a reference builder that has it (timm's ResNet blocks), else nothing."""
    builder = REFERENCE_MODELS.get(spec)
    return {"zero_init_last": False} if builder and "zero_init_last" in inspect.signature(builder).parameters else {}


def untrained(store: Store, name: str) -> ModelUnderTest:
    """The recipe ``name``'s model as an independent run's seed (module docstring) initialises it, residual
    branches not zero-initialised (``zero_init_last=False`` where the builder has it: else every residual block
    starts as an identity and the null is degenerate)."""
    recipe = control_recipe(store.recipe(name))

    def build() -> ModelUnderTest:
        data = store.dataset(recipe.dataset)
        mean, std = store.channel_stats(data.name)
        with torch.random.fork_rng():
            torch.manual_seed(recipe.seed)
            model = build_model(
                recipe.model, num_classes=data.num_classes, img_size=data.image_size,
                arch_kwargs={**recipe.arch, **no_zero_init(recipe.model)}, mean=mean, std=std,
            )  # fmt: skip
        model.to(store.settings.device).eval()
        return ModelUnderTest(
            f"{name} untrained", model, anatomy_on_cpu(model), {}, None, None, weights_sha256(model), dataset=data.name
        )

    return store.kept((f"{name}@init{recipe.seed}", "final"), build)
