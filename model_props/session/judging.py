"""Gathering the evidence a claim is judged on, for a model under test, at the scope its models allow.

Which scope applies is :func:`~model_props.verdicts.scope.route`'s to say; this module collects what that scope
reads and hands it to the pure judge (:func:`~model_props.verdicts.judge`):

- ``study`` (a reference of a profile with a seed study): the study's per-seed estimates over every seed, with
  the reviewed expectation snapshot's entry for the claim and the live checks of its parts (whether this session's
  live seed would move a committed verdict: :func:`~.reproduction.live_checks`); this machine's live weights are
  judged at checkpoint scope beside it (``live``: the figures, the numbers beside each verdict, the mutants'
  same-scope base).
- ``replicas`` (a user's model given 3 or more checkpoints): one estimate per checkpoint, each on its own sample
  (:func:`model_props.store.samples.sample_seed_of`); a compared reference's seeds from the study (two groups that share
  nothing: Welch).
- ``checkpoint``: the reports of these weights and of the models a part compares them with; a variant this
  session does not train, compared with these weights, is read from the committed study's per-seed estimates
  (:mod:`.study_side`, :mod:`~model_props.verdicts.against_seeds`).

A part is skipped, with the reason, where a model it reads is below twice chance accuracy (a mutant excepted:
it is broken on purpose), where it needs end-of-warm-up weights of a model that has none (a --checkpoint is one
state of its weights), where it compares models measured at different image sizes or on different images (a
pretrained model on the user's folder), or where it reads a training loss the user's folder cannot give.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..claims.base import Claim, Part, below_chance
from ..errors import NotApplicable, StudyError
from ..measurements.registry import REPORT_KINDS
from ..store.model_store import ModelStore
from ..store.pairs import pair_reports, sample_size
from ..store.pretrained import folder_skip
from ..store.tested import ModelUnderTest
from ..study.canaries import judged_study
from ..training.loop import Checkpoint
from ..verdicts import Evidence, TestVerdict, gather_looks, judge, point_value
from ..verdicts.evidence import AgainstSeeds, Measured, OnLooks, OnReports, PartEvidence, PerSeed, Skipped
from ..verdicts.outcome import Expected
from ..verdicts.scope import Route
from ..verdicts.snapshot import snapshot_name, update_command
from ..verdicts.study import SeedStudy
from .inputs import too_few
from .live import SWITCH, listed, measured_live, not_live
from .reproduction import live_checks
from .routes import route_of
from .study_side import study_side

__all__ = ["Judgement", "judge_claim", "sequential"]


@dataclass
class Judgement:
    verdict: TestVerdict  # the judge's whole verdict of the test
    used: dict[tuple[str, str, str], Any] = field(default_factory=dict)  # the live reports read, for the figures


def sequential(part: Part) -> bool:
    """Whether a checkpoint-scope part is judged look by look (docs/design.md#sequential-checkpoint-verdicts): a rule
    on a chunked report of one model (or a comparison of two)."""
    return part.partner is None and REPORT_KINDS[part.report].size is not None


def _reads(part: Part, model: str) -> list[str]:
    return list(dict.fromkeys(n for n in (part.subject or model, part.versus, part.partner) if n))


class _Live:
    """Reports and skip rules of one checkpoint-scope evaluation of ``tested``."""

    def __init__(self, store: ModelStore, tested: ModelUnderTest, substitutes: Mapping[str, ModelUnderTest],
                 route: Route) -> None:  # fmt: skip
        self.store, self.tested, self.substitutes, self.route = store, tested, substitutes, route
        self.used: dict[tuple[str, str, str], Any] = {}

    def model(self, name: str, checkpoint: Checkpoint) -> ModelUnderTest:
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
        return self.store.get(name, checkpoint)

    def measured(self, name: str | None, part: Part, upto: int | None = None) -> Measured:
        """The report a part reads of model ``name`` (a chunked kind's on its first ``upto`` sampling units)."""
        name = name or self.tested.name
        model = self.model(name, part.checkpoint)
        base, _, partner = part.reads.partition("@")
        if partner in self.substitutes:  # a stand-in for the pair's other model: apart from the store's pair reports
            report = pair_reports(self.store, model, base, partner, stand_in=self.substitutes[partner])
        else:
            report = self.store.report_for(model, part.reads, upto=upto)
        self.used[(name, part.reads, part.checkpoint)] = report
        return Measured(name, report, self.store.samples(model, part.reads, part.sampling))

    def looks(self, claim: Claim, part: Part) -> OnLooks:
        """A sequential part's reports, measured look by look on the prefixes the judge's rule asks for
        (:func:`~model_props.verdicts.gather_looks`): those of the first look that decides it, else of the last."""
        names = [part.subject or self.tested.name, *([part.versus] if part.versus else [])]
        sizes = [sample_size(self.store, part.report, self.model(n, part.checkpoint)) for n in names]
        known = [s for s in sizes if s is not None]
        assert len(known) == len(sizes), f"{part.report} is chunked: its sample size is known before measuring"

        def reports_at(n: int) -> OnReports:
            first, *other = (self.measured(name, part, upto=n) for name in names)
            return OnReports(first, other[0] if other else None)

        return gather_looks(claim, part, min(known), reports_at,
                            seed=self.store.settings.seed, n_boot=self.store.profile.measurement.n_boot)  # fmt: skip

    def study(self) -> SeedStudy:
        """The seed study a part reads a recipe from (:func:`.study_side.study_side` found it)."""
        study = judged_study(self.store)
        assert study is not None
        return study

    def not_trained_here(self, part: Part) -> str | None:
        """Why a part that reads a model this session does not train (:func:`.live.not_live`: a variant, an
        independent run) is skipped: no test trains a model. For a reference judged from the seed study (also where
        the run does not measure the report live, :func:`.live.measured_live`), this live judgement stands beside the
        study's verdict; for other weights the part needs the switch that trains what it reads ahead, on the workers."""
        missing = not_live(self.store.settings, part, self.tested.name)
        if self.route == "study" and (missing or not measured_live(self.store.settings, part.reads)):
            what = (f"{listed(missing)}, which this run does not train" if missing else
                    f"its {part.reads} report, which only the full live run measures on the live weights")  # fmt: skip
            return f"it reads {what}: the part is judged from the committed seed study; its live run needs {SWITCH}"
        return None if not missing else (f"it reads {listed(missing)}, which this run does not train (no test trains a "
                                         f"model); {SWITCH} trains {'it' if len(missing) == 1 else 'them'} ahead of "
                                         "the tests, on the workers")  # fmt: skip

    def skip(self, part: Part, recipe: str | None = None) -> str | None:
        """Why ``part`` is skipped (module docstring), if it is; ``recipe``: the model it reads from the seed study."""
        if recipe is None and (reason := self.not_trained_here(part)) is not None:
            return reason
        if (folder := self.store.folder(self.tested.dataset)) is not None:
            others = {n: (m.name, self.store.folder(m.dataset)) if (m := self.substitutes.get(n)) else None
                      for n in _reads(part, self.tested.name) if n != self.tested.name}  # fmt: skip
            if reason := folder_skip(part, folder, others, self.store.profile.measurement.hessian_batch_size):
                return f"{reason} ({self.tested.name} is measured on {folder.root})"
        elif part.versus or part.subject or part.partner:
            size = self.store.dataset(self.tested.dataset).image_size
            reference = self.store.dataset().image_size
            if size != reference:
                return (f"it compares with the profile's {reference}-px models; {self.tested.name} is measured at "
                        f"{size} px (--claims-img-size)")  # fmt: skip
        classes = self.store.dataset(self.tested.dataset).num_classes
        for name in sorted(_reads(part, self.tested.name), key=lambda n: n == recipe):  # the weights' reasons first
            if name == recipe:
                if (reason := self.study().recipe_below_chance(name, part.checkpoint)) is not None:
                    return reason
                continue
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

    def part_evidence(self, claim: Claim, part: Part) -> PartEvidence:
        recipe = study_side(self.store, claim, part, self.tested.name, self.route)
        reason = part.applies(self.tested.anatomy) or self.skip(part, recipe)
        if reason is None and self.store.folder(self.tested.dataset) is not None:  # the user's --claims-images
            images = len(self.store.dataset(self.tested.dataset).test)
            reason = too_few(part, self.store.measurement_settings(self.tested), images)
        if reason is not None:
            return Skipped(reason)
        try:
            if recipe is not None:  # the weights against the recipe's committed seeds
                seeds = self.study().values(claim, part, recipe, model=self.tested.name)
                weights_first = (part.subject or self.tested.name) == self.tested.name
                return AgainstSeeds(self.measured(self.tested.name, part), recipe, tuple(seeds), weights_first)
            if sequential(part):
                return self.looks(claim, part)
            subject = self.measured(part.subject, part)
            return OnReports(subject, self.measured(part.versus, part) if part.versus else None)
        except NotApplicable as exc:
            return Skipped(str(exc))

    def evidence(self, claim: Claim) -> Evidence:
        return Evidence(
            claim, self.tested.name, "checkpoint", {p.name: self.part_evidence(claim, p) for p in claim.parts}
        )


def _replicas(store: ModelStore, claim: Claim, tested: ModelUnderTest) -> Evidence:
    """A user's model over its checkpoints (training seeds); a compared reference over the study's seeds.

    Replica i is the draw (its training seed, its own sample keyed by its file's sha256) of the two-stage design, as
    study seed j is (training seed j, the sample of seed j). Nothing pairs a replica with a study seed: replica i
    shares neither its training seed nor its sample with seed i (the index is only the order of the files), so a
    comparison with a reference is Welch's interval between the k replicas and the study's seeds. Within a replica,
    a pair report (cross-model CKA) reads replica i, the partner's run, the seed control replica i + 1 and the null
    on replica i's sample."""
    replicas = store.replicas(tested.name)
    study = judged_study(store)
    classes = store.dataset(tested.dataset).num_classes

    def per_seed(part: Part, name: str) -> tuple[tuple[float | None, ...], bool]:
        """The per-seed values of ``name`` and whether they come from the study."""
        if name == tested.name:
            return tuple(point_value(part, store.report_for(r, part.reads)) for r in replicas), False
        if study is None:
            raise NotApplicable(f"an architecture comparison needs {name}'s seeds, and profile {store.profile.name!r} "
                                "has no seed study")  # fmt: skip
        study.check(claim, store.profile)
        return tuple(study.values(claim, part, name)), True

    def skip(part: Part) -> str | None:
        if part.checkpoint == "warmup" and (part.subject or tested.name) == tested.name:
            return f"it needs the end-of-warm-up weights of {tested.name}; its --checkpoint files are one state each"
        accuracy = {f"checkpoint {r.checkpoint.name if r.checkpoint else i}": r.metrics["test_accuracy"]
                    for i, r in enumerate(replicas)}  # fmt: skip
        if (reason := below_chance(tested.name, part.checkpoint, accuracy, classes)) is not None:
            return reason
        others = [n for n in _reads(part, tested.name) if n != tested.name]
        return next((r for n in others if study and (r := study.recipe_below_chance(n, part.checkpoint))), None)

    def part_evidence(part: Part) -> PartEvidence:
        reason = part.applies(tested.anatomy) or skip(part)
        if reason is not None:
            return Skipped(reason)
        try:
            subject_name = part.subject or tested.name
            subject, from_study = per_seed(part, subject_name)
            if part.versus is None:
                return PerSeed(subject_name, subject)
            versus, versus_from_study = per_seed(part, part.versus)
        except NotApplicable as exc:
            return Skipped(str(exc))
        return PerSeed(subject_name, subject, part.versus, versus, paired=from_study and versus_from_study)

    seeds = tuple(range(len(replicas)))
    return Evidence(claim, tested.name, "architecture", {p.name: part_evidence(p) for p in claim.parts}, seeds)


def _expected(store: ModelStore, claim: Claim, model: str) -> Expected:
    """The snapshot's expectation of ``claim`` on reference ``model`` (an empty one where the snapshot has no entry:
    every part then differs from it, and the test says how to write it)."""
    snapshot = store.snapshot
    if snapshot is None:
        raise StudyError(f"profile {store.profile.name!r} has a seed study and no expectation snapshot "
                         f"({snapshot_name(store.profile.name)}); write it and review it: "
                         f"{update_command(store.profile.name)}")  # fmt: skip
    return snapshot.expected(claim, model) or Expected({}, snapshot.source, update_command(store.profile.name))


def judge_claim(store: ModelStore, claim: Claim, tested: ModelUnderTest, *, substitutes=None,
                scope: str | None = None) -> Judgement:  # fmt: skip
    """The claim's judgement on ``tested`` (module docstring); raises :class:`NotApplicable` when it does not
    apply, and :class:`~model_props.errors.StudyError` when the study it would read is stale. ``scope`` overrides
    the session's requested scope (e.g. ``"checkpoint"`` for a mutant's base, judged like its mutant)."""
    s = store.settings
    reason = claim.skip_reason(tested.anatomy, tested.name, store.profile.recipes)
    if reason is not None:
        raise NotApplicable(reason)
    comparators = {ref: store.get(spec) for ref, spec in s.versus.items() if ref in claim.named_models}
    if comparators:  # the user's comparators stand in for the references they name (a mutant's substitute wins)
        substitutes = {**comparators, **(substitutes or {})}
    how = route_of(store, tested, stand_in=bool(substitutes), scope=scope)
    if how == "replicas":
        return _judged(Judgement(TestVerdict.of(judge(_replicas(store, claim, tested)))))
    live = _Live(store, tested, substitutes or {}, how)
    outcome = judge(live.evidence(claim), seed=s.seed, n_boot=store.profile.measurement.n_boot)
    if how == "checkpoint":
        return _judged(Judgement(TestVerdict.of(outcome), live.used))
    study = judged_study(store)  # its canaries run with this code
    assert study is not None  # the study route is taken only where there is one
    study.check(claim, store.profile)
    architecture = study.evaluate(claim, tested.name, expected=_expected(store, claim, tested.name))
    # would this session's live seed move a committed verdict? (asked only of a claim that applies)
    checks = live_checks(store, claim, tested.name) if architecture.skip_reason is None else ()
    return _judged(Judgement(TestVerdict.of(architecture, live=outcome, checks=checks), live.used))


def _judged(judgement: Judgement) -> Judgement:
    """A judgement whose claim could not be measured at all, or not on a defining part, does not apply."""
    reason = judgement.verdict.skip_reason
    if reason is not None:
        raise NotApplicable(reason)
    return judgement
