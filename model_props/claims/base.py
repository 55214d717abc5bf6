"""The :class:`Claim` dataclass: a published finding as data (docs/design.md#decision-rules).

A claim has one or more :class:`Part` s. A part is a decision rule ``statistic <direction> threshold`` at a
confidence level, where the statistic is computed from one measurement report (``report``: unit maps,
Hessian spectrum, fit, ...; see :mod:`model_props.measurements.registry`) of a model at a named checkpoint, on
resamples of the report's sampling units (``sampling``: images, mini-batches, ...): a :data:`Statistic` takes a
``(rows, n)`` matrix of indices, one resample per row, and returns one value per row, so that every bootstrap
resample is evaluated in one vectorised call. The statistic is read on
the model under test, or on a named recipe of the profile (``subject``, e.g. the variant ``vit_gap``); a part
with ``versus`` compares with another named model (two-sample bootstrap): stat(subject) - stat(versus). A part
with ``partner`` reads a report of a *pair* instead (``report@partner``, e.g. cross-model CKA of the model against
ResNet, beside its seed control and an untrained null): one statistic over the pair's shared samples.
A claim whose parts all name their models (a comparison of variants) runs on the reference in ``models``
only, and is skipped with that reason for any other model. A claim of a later paper that disputes a claim of the
catalogue says so with a :class:`Dispute`: the disputed claim's hypothesis restated on one of its own parts'
statistic, so that both papers are judged on one interval (one report, one eps set, one level).

Applicability is a predicate on the anatomy that returns ``None`` or the reason the claim does not apply
(the missing trait), which becomes the skip reason. Whether a finding replicates at a profile's scale is not
written here but measured: the profile's seed study (:mod:`.expectations`) marks known failures and
seed-dependent verdicts, citing the claim's ``evidence`` (what the paper shows, and on what).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from ..anatomy import Anatomy, UnitKind
from ..measurements.registry import ReportKind

__all__ = [
    "Paper",
    "Part",
    "Claim",
    "Dispute",
    "Direction",
    "Applies",
    "Statistic",
    "needs_kinds",
    "needs_traits",
    "needs_cls",
    "Measurement",
    "CHANCE_FACTOR",
    "below_chance",
]

Measurement = Literal[
    "fourier", "variance", "cka", "skip", "attention", "spectrum", "fit", "noise", "corruption", "attack", "lesion",
    "position", "occlusion", "cross", "probe",
]  # what the claim's figure shows  # fmt: skip
Checkpoint = Literal["warmup", "final"]
Applies = Callable[[Anatomy], "str | None"]
Direction = Literal["greater", "less", "within"]  # within: equivalence, |statistic| < threshold
# (report, (rows, n) indices into its n sampling units, one resample per row) -> (rows,) values, NaN where undefined
Statistic = Callable[[Any, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class Paper:
    key: str
    title: str
    authors: str
    venue: str
    arxiv: str

    @property
    def url(self) -> str:
        return f"https://arxiv.org/abs/{self.arxiv}"

    @property
    def citation(self) -> str:
        """``Park & Kim 2022``, ``Raghu et al. 2021``: surnames and the venue's year."""
        surnames = [a.split()[-1] for a in self.authors.split(", ")]
        who = " & ".join(surnames) if len(surnames) <= 2 else f"{surnames[0]} et al."
        return f"{who} {self.venue.split()[-1]}"


@dataclass(frozen=True)
class Part:
    name: str
    statistic_name: str  # what the number is, e.g. "mean ΔlogA(hf) effect of MSA units, depth >= 0.5"
    statistic: Statistic
    direction: Direction
    threshold: float = 0.0
    applies: Applies = lambda anat: None
    versus: str | None = None  # another model (a recipe of the profile) for a two-sample comparison
    sampling: Literal["images", "batches", "train_images", "positions"] = "images"
    report: ReportKind = "units"
    checkpoint: Checkpoint = "final"  # of the subject and of versus
    subject: str | None = None  # a recipe of the profile; None: the model under test
    undefined: str = ""  # when the statistic is undefined (NaN), e.g. "no negative eigenvalue"; a NaN is else an error
    partner: str | None = None  # a pair report's other model (a recipe of the profile), e.g. cross-model CKA
    min_samples: int = 2  # the fewest sampling units the statistic reads (a bootstrap needs 2); below it: skipped
    # what it means when the statistic is the same on every resample (its measurement does not vary), e.g. "every MSA
    # unit leaves its input unchanged on every image"; a generic sentence where empty
    degenerate: str = ""

    @property
    def reads(self) -> str:
        """The report the part reads, as the store names it: ``kind``, or ``kind@partner`` for a pair report."""
        return self.report if self.partner is None else f"{self.report}@{self.partner}"

    @property
    def label(self) -> str:
        """The statistic's name, with the models it reads and their checkpoint."""
        who = self.subject or "model"
        at = " at end of warm-up" if self.checkpoint == "warmup" else ""
        if self.partner:
            return f"{self.statistic_name}{at} ({who} against {self.partner})"
        if self.versus:
            return f"{self.statistic_name}{at} ({who} - {self.versus})"
        return f"{self.statistic_name}{at}" + (f" of {self.subject}" if self.subject else "")

    @property
    def rule(self) -> str:
        if self.direction == "within":  # equivalence: two one-sided tests (stats.decide)
            return f"{self.label} within ±{abs(self.threshold):g}"
        op = ">" if self.direction == "greater" else "<"
        return f"{self.label} {op} {self.threshold:g}"


@dataclass(frozen=True)
class Dispute:
    """A claim of the catalogue that a later paper's claim disputes, restated as a hypothesis on the statistic of one
    of the disputing claim's parts (``part``): ``statistic <direction> threshold``. Both papers are then judged on
    the same interval, so that they answer one question (e.g. Park & Kim's "MSA models lose less accuracy under
    PGD", drop(model) - drop(ResNet) < 0, on Bai et al.'s PGD drop at the smallest eps, at Bai et al.'s level)."""

    claim: str  # the disputed claim's id
    part: str  # the disputing claim's part whose statistic both sides read
    direction: Direction
    threshold: float
    hypothesis: str  # the disputed claim's side, in words, on that statistic


@dataclass(frozen=True)
class Claim:
    id: str
    number: int
    paper: Paper
    section: str
    statement: str
    units: str  # which units the claim reads, in the paper's words
    evidence: str  # what the paper shows and on what models/data, cited when a finding does not replicate
    measurement: Measurement
    parts: tuple[Part, ...]
    applies: Applies
    level: float = 0.95
    severity: Literal["blocker", "critical", "normal", "minor", "trivial"] = "normal"
    gate: bool = False
    models: tuple[str, ...] | None = None  # a comparison of named recipes runs on these references only
    defining: tuple[str, ...] = ()  # parts without which the claim does not apply (default: any applicable part)
    disputes: tuple[Dispute, ...] = ()  # claims of the catalogue this one disputes (a later paper against a finding)

    @property
    def contradicts(self) -> tuple[str, ...]:
        """The ids of the claims this one disputes."""
        return tuple(d.claim for d in self.disputes)

    def fingerprint(self) -> str:
        """A hash of the decision rules: a seed study taken under other rules no longer speaks for this claim."""
        rules = [
            (
                p.name,
                p.statistic_name,
                p.direction,
                p.threshold,
                p.versus,
                p.sampling,
                p.report,
                p.checkpoint,
                p.subject,
                *([p.partner] if p.partner is not None else []),  # (parts without one hash as they always did)
            )
            for p in self.parts
        ]
        return hashlib.sha256(json.dumps([self.id, self.level, rules]).encode()).hexdigest()[:12]

    @property
    def named_models(self) -> list[str]:
        """The recipes the parts name (subjects and comparisons), in order."""
        names = [n for p in self.parts for n in (p.subject, p.versus, p.partner) if n]
        return list(dict.fromkeys(names))

    def skip_reason(self, anat: Anatomy, model: str | None = None, recipes: Any = None) -> str | None:
        """Why the claim does not apply to ``model`` with this anatomy, or None if it does. ``recipes`` (the
        profile's recipe names) checks that the models the parts name exist."""
        if self.models is not None and model is not None and model not in self.models:
            return (
                f"it compares the profile's models {', '.join(self.named_models)} and runs on the reference "
                f"{' or '.join(repr(m) for m in self.models)} only"
            )
        if recipes is not None:
            missing = [n for n in self.named_models if n not in recipes]
            if missing:
                return f"the profile has no recipe {', '.join(repr(n) for n in missing)} to compare with"
        reason = self.applies(anat)
        if reason is None and all(p.applies(anat) is not None for p in self.parts):
            reason = "; ".join(p.applies(anat) or "" for p in self.parts)
        if reason is None:
            reason = self.undefined_by({p.name: r for p in self.parts if (r := p.applies(anat)) is not None})
        return reason

    def undefined_by(self, skipped: Mapping[str, str]) -> str | None:
        """Why the claim does not apply when the parts in ``skipped`` (name -> reason) do not: a defining part is
        among them (e.g. the MSA part of "MSAs reduce variance" on a model without MSAs), or None."""
        missing = {name: why for name, why in skipped.items() if name in self.defining}
        return "; ".join(f"its defining part {n!r} does not apply: {why}" for n, why in missing.items()) or None


CHANCE_FACTOR = 2.0  # a model a part reads must reach this multiple of chance accuracy


def below_chance(name: str, checkpoint: str, accuracies: Mapping[str, float], num_classes: int) -> str | None:
    """Why a part cannot read ``name`` at ``checkpoint``: its test accuracy (per seed or checkpoint, keyed by a
    label) is below :data:`CHANCE_FACTOR` times chance, so it has learned too little to say anything; or None."""
    floor = CHANCE_FACTOR / num_classes
    low = {label: a for label, a in accuracies.items() if a < floor}
    if not low:
        return None
    at = "the end of warm-up" if checkpoint == "warmup" else f"its {checkpoint} checkpoint"
    where = ", ".join(f"{a:.3f} ({label})" for label, a in low.items())
    return (
        f"it reads {name} at {at}, whose test accuracy {where} is below twice chance ({floor:.2f}); give weights "
        "trained further (--checkpoint), or a longer custom recipe ([tool.model_props.recipes.custom] steps)"
    )


def needs_kinds(*kinds: UnitKind) -> Applies:
    def check(anat: Anatomy) -> str | None:
        if anat.of_kind(*kinds):
            return None
        return f"{anat.family} has no {' or '.join(kinds)} units"

    return check


def needs_traits(*, any_of: tuple[str, ...] = (), none_of: tuple[str, ...] = ()) -> Applies:
    def check(anat: Anatomy) -> str | None:
        if any_of and not anat.traits & set(any_of):
            return f"{anat.family} lacks {' or '.join(any_of)} (traits: {', '.join(sorted(anat.traits)) or 'none'})"
        if anat.traits & set(none_of):
            return f"{anat.family} has {' and '.join(sorted(anat.traits & set(none_of)))}"
        return None

    return check


def needs_cls(anat: Anatomy) -> str | None:
    if any(u.output.prefix_tokens for u in anat.units):
        return None
    return f"{anat.family} has no CLS token"
