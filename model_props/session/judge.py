"""Judging a claim on a model under test, at the scope its models allow (design Sec. 3).

- A reference or variant of a profile that has a seed study is judged at **architecture** scope from the study's
  per-seed estimates (every seed), against the expectation its setting seeds give; this machine's own weights
  are judged at checkpoint scope beside it (``live``: the figures, and the reproduction test).
- A user's model given 3 or more checkpoints (its training seeds) is judged at architecture scope over them; a
  comparison with a reference reads the reference's seeds from the study.
- Anything else (one checkpoint, pretrained weights measured on the user's images, a model trained here by the
  ``custom`` recipe, a mutant, a profile without a study, ``--claims-scope checkpoint``) is judged at
  **checkpoint** scope: these weights.

A part is skipped, with the reason, where a model it reads is below twice chance accuracy (a mutant excepted:
it is broken on purpose), where it needs end-of-warm-up weights of a model that has none (a --checkpoint is one
state of its weights), where it compares models measured at different image sizes or on different images (a
pretrained model on the user's folder), or where it reads a training loss the user's folder cannot give.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..claims.base import Claim, Part, below_chance
from ..claims.evaluation import Measured, evaluate_architecture, evaluate_checkpoint, point_value
from ..claims.expectations import Expectation
from ..claims.outcome import ClaimOutcome
from ..claims.stats import MIN_SEEDS
from ..errors import ConfigError, NotApplicable
from .estimates import estimate_memo
from .pairs import pair_reports
from .pretrained import FolderData
from .store import ModelStore
from .tested import ModelUnderTest

__all__ = ["Judgement", "judge"]

SAMPLINGS = ("images", "batches", "train_images")


@dataclass
class Judgement:
    outcome: ClaimOutcome  # the verdict at its scope, with the expectation where the study sets one
    live: ClaimOutcome | None  # this machine's weights at checkpoint scope, when the verdict is about more
    expectation: Expectation | None
    used: dict[tuple[str, str, str], Any] = field(default_factory=dict)  # the live reports read, for the figures


def _reads(part: Part, model: str) -> list[str]:
    return list(dict.fromkeys(n for n in (part.subject or model, part.versus, part.partner) if n))


class _Live:
    """Reports and skip rules of one checkpoint-scope evaluation of ``tested``."""

    def __init__(self, store: ModelStore, tested: ModelUnderTest, substitutes: Mapping[str, ModelUnderTest]):
        self.store, self.tested, self.substitutes = store, tested, substitutes
        self.used: dict[tuple[str, str, str], Any] = {}

    def model(self, name: str, checkpoint: str) -> ModelUnderTest:
        tested = self.tested
        if name in self.substitutes:
            return self.substitutes[name]
        if name == tested.name:
            if tested.checkpoint_name == checkpoint or tested.mutation is not None:
                return tested  # a mutant stands for its base at the checkpoint it was made from
            if self.store.folder(tested.dataset) is not None:
                raise NotApplicable(f"it needs the end-of-warm-up weights of {name}, and pretrained weights are one "
                                    "state; the claim is about a recipe's training, which only a model trained here has")  # fmt: skip
            if not tested.has_training_states:
                raise NotApplicable(f"it needs the end-of-warm-up weights of {name}, and a --checkpoint is one state of "
                                    "its weights; train it with the profile's custom recipe (no --checkpoint) to have "
                                    "both")  # fmt: skip
        return self.store.get(name, "warmup" if checkpoint == "warmup" else "final")

    def reports(self, name: str | None, kind: str, checkpoint: str) -> Measured:
        name = name or self.tested.name
        model = self.model(name, checkpoint)
        base, _, partner = kind.partition("@")
        if partner in self.substitutes:  # a stand-in for the pair's other model: apart from the store's pair reports
            report = pair_reports(self.store, model, base, partner, stand_in=self.substitutes[partner])
        else:
            report = self.store.report_for(model, kind)
        self.used[(name, kind, checkpoint)] = report
        return Measured(report, {s: self.store.samples(model, kind, s) for s in SAMPLINGS})

    def _folder_skip(self, part: Part, folder: FolderData) -> str | None:
        """Why a part does not apply to a model measured on the user's images, if it does not: it compares with a
        model not measured on the same files of the folder, or reads a training loss the folder cannot give."""
        for name in _reads(part, self.tested.name):
            if name == self.tested.name:
                continue
            if name not in self.substitutes:
                return (f"it compares with the profile's reference {name}, trained and measured on its own images; "
                        f"give a comparator measured on yours: --claims-versus {name}=SPEC")  # fmt: skip
            other = self.store.folder(self.substitutes[name].dataset)
            if other is None or (other.root, other.files) != (folder.root, folder.files):
                return (f"its comparator {self.substitutes[name].name} (for {name}) is not measured on the same "
                        "images")  # fmt: skip
        if folder.train is None and (part.report == "spectrum" or part.sampling == "train_images"):
            return "it reads the training loss, and the image folder has no train/<class>/ images to measure it on"
        batch_size = self.store.profile.measurement.hessian_batch_size
        if part.report == "spectrum" and folder.train is not None and len(folder.train) < batch_size:
            return (f"its Hessian batches take {batch_size} training images, and the folder's train/ gave "
                    f"{len(folder.train)}")  # fmt: skip
        return None

    def skip(self, part: Part) -> str | None:
        if (folder := self.store.folder(self.tested.dataset)) is not None:
            if (reason := self._folder_skip(part, folder)) is not None:
                return f"{reason} ({self.tested.name} is measured on {folder.root})"
        elif part.versus or part.subject or part.partner:
            size = self.store.dataset(self.tested.dataset).image_size
            reference = self.store.dataset().image_size
            if size != reference:
                return (f"it compares with the profile's {reference}-px models; {self.tested.name} is measured at "
                        f"{size} px (--claims-img-size)")  # fmt: skip
        classes = self.store.dataset(self.tested.dataset).num_classes
        for name in _reads(part, self.tested.name):
            try:
                model = self.model(name, part.checkpoint)
            except NotApplicable as exc:
                return str(exc)
            if model.mutation is None:
                accuracy = {f"{model.checkpoint_name} weights": model.metrics["test_accuracy"]}
                if (reason := below_chance(name, part.checkpoint, accuracy, classes)) is not None:
                    if self.store.folder(model.dataset) is not None:
                        who = name if model.name == name else f"{model.name} (for {name})"
                        return (f"{who} has test accuracy {model.metrics['test_accuracy']:.3f} on your images, below "
                                f"twice chance ({2 / classes:.3f} for {classes} outputs): do the class folders name "
                                "the model's labels?")  # fmt: skip
                    return reason
        return None


def _checkpoint(store: ModelStore, claim: Claim, tested: ModelUnderTest, substitutes) -> tuple[ClaimOutcome, _Live]:
    live = _Live(store, tested, substitutes or {})
    s = store.settings
    memo = estimate_memo(s.cache_dir, claim, recompute=s.remeasure)
    outcome = evaluate_checkpoint(claim, tested.name, tested.anatomy, live.reports, seed=s.seed,
                                  n_boot=store.profile.measurement.n_boot, skip_part=live.skip, memo=memo)  # fmt: skip
    return outcome, live


def _replicas(store: ModelStore, claim: Claim, tested: ModelUnderTest) -> ClaimOutcome:
    """A user's model over its checkpoints (training seeds); a compared reference over the study's seeds."""
    replicas = store.replicas(tested.name)
    study = store.study

    def per_seed(part: Part, name: str | None) -> list[float | None]:
        if name is None or name == tested.name:
            return [point_value(part, store.report_for(r, part.reads)) for r in replicas]
        if study is None:
            raise NotApplicable(f"an architecture comparison needs {name}'s seeds, and profile {store.profile.name!r} "
                                "has no seed study")  # fmt: skip
        study.check(claim, store.profile)
        return study.values(claim, part, name)

    classes = store.dataset(tested.dataset).num_classes

    def skip(part: Part) -> str | None:
        if part.checkpoint == "warmup" and (part.subject or tested.name) == tested.name:
            return f"it needs the end-of-warm-up weights of {tested.name}; its --checkpoint files are one state each"
        accuracy = {f"checkpoint {r.checkpoint.name if r.checkpoint else i}": r.metrics["test_accuracy"]
                    for i, r in enumerate(replicas)}  # fmt: skip
        if (reason := below_chance(tested.name, part.checkpoint, accuracy, classes)) is not None:
            return reason
        others = [n for n in _reads(part, tested.name) if n != tested.name]
        return next((r for n in others if study and (r := study.recipe_below_chance(n, part.checkpoint))), None)

    return evaluate_architecture(claim, tested.name, tested.anatomy, per_seed, seeds=tuple(range(len(replicas))),
                                 skip_part=skip)  # fmt: skip


def judge(store: ModelStore, claim: Claim, tested: ModelUnderTest, *, substitutes=None) -> Judgement:
    """The claim's judgement on ``tested`` (module docstring); raises :class:`NotApplicable` when it does not
    apply, and :class:`~model_props.errors.StudyError` when the study it would read is stale."""
    s = store.settings
    reason = claim.skip_reason(tested.anatomy, tested.name, store.profile.recipes)
    if reason is not None:
        raise NotApplicable(reason)
    comparators = {ref: store.get(spec) for ref, spec in s.versus.items() if ref in claim.named_models}
    if comparators:  # the user's comparators stand in for the references they name (a mutant's substitute wins)
        substitutes = {**comparators, **(substitutes or {})}
    checkpoints = s.checkpoints.get(tested.name, ())
    study = store.study
    mutant = tested.mutation is not None or bool(substitutes)
    if s.scope != "checkpoint" and not mutant and len(checkpoints) >= MIN_SEEDS:
        return _judged(Judgement(_replicas(store, claim, tested), None, None))
    if s.scope == "architecture" and not (study and tested.name in store.profile.recipes and not checkpoints):
        raise ConfigError(f"--claims-scope architecture needs at least {MIN_SEEDS} checkpoints (training seeds) of "
                          f"{tested.name}, got {len(checkpoints) or 'none'}: give --checkpoint='runs/seed*.safetensors'")  # fmt: skip
    outcome, live = _checkpoint(store, claim, tested, substitutes)
    if s.scope == "checkpoint" or mutant or study is None or tested.name not in store.profile.recipes or checkpoints:
        return _judged(Judgement(outcome, None, None, live.used))
    study.check(claim, store.profile)
    expectation = study.expectation(claim, tested.name)
    architecture = replace(study.evaluate(claim, tested.name), expected=expectation.parts)
    return _judged(Judgement(architecture, outcome, expectation, live.used))


def _judged(judgement: Judgement) -> Judgement:
    """A judgement whose claim could not be measured at all, or not on a defining part, does not apply."""
    reason = judgement.outcome.skip_reason
    if reason is not None:
        raise NotApplicable(reason)
    return judgement
