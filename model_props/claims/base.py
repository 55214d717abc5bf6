"""The :class:`Claim` dataclass: a published finding as data (design Sec. 7).

A claim has one or more :class:`Part` s. A part is a decision rule ``statistic <direction> threshold`` at a
confidence level, where the statistic is computed from a model's :class:`~model_props.measures.UnitReport`
on a resample of its sampling units (images, or mini-batches for CKA). A part with ``versus`` compares the
model with a reference model (two-sample bootstrap): the statistic is stat(model) - stat(reference).

Applicability is a predicate on the anatomy that returns ``None`` or the reason the claim does not apply
(the missing trait), which becomes the skip reason. Whether a finding replicates at a profile's scale is not
written here but measured: the profile's seed study (:mod:`model_props.study`) marks known failures and
seed-dependent verdicts, citing the claim's ``evidence`` (what the paper shows, and on what).
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np

from ..anatomy import Anatomy, Unit, UnitKind
from ..measures import UnitReport
from ..stats import Direction

__all__ = ["Paper", "Part", "Claim", "Applies", "Statistic", "needs_kinds", "needs_traits", "needs_cls",
           "mean_effect", "Measurement"]

Measurement = Literal["fourier", "variance", "cka", "skip", "attention"]
Applies = Callable[[Anatomy], "str | None"]
Statistic = Callable[[UnitReport, np.ndarray], float]


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


@dataclass(frozen=True)
class Part:
    name: str
    statistic_name: str  # what the number is, e.g. "mean ΔlogA(hf) effect of MSA units, depth >= 0.5"
    statistic: Statistic
    direction: Direction
    threshold: float = 0.0
    applies: Applies = lambda anat: None
    versus: str | None = None  # a reference model name for a two-sample comparison
    sampling: Literal["images", "batches"] = "images"

    @property
    def label(self) -> str:
        """The statistic's name, with the comparison for a two-sample part."""
        return f"{self.statistic_name} (model - {self.versus})" if self.versus else self.statistic_name

    @property
    def rule(self) -> str:
        op = ">" if self.direction == "greater" else "<"
        return f"{self.label} {op} {self.threshold:g}"


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

    def fingerprint(self) -> str:
        """A hash of the decision rules: a seed study taken under other rules no longer speaks for this claim."""
        rules = [(p.name, p.statistic_name, p.direction, p.threshold, p.versus, p.sampling) for p in self.parts]
        return hashlib.sha256(json.dumps([self.id, self.level, rules]).encode()).hexdigest()[:12]

    def skip_reason(self, anat: Anatomy) -> str | None:
        """Why the claim does not apply to this anatomy, or None if it does."""
        reason = self.applies(anat)
        if reason is None and all(p.applies(anat) is not None for p in self.parts):
            reason = "; ".join(p.applies(anat) or "" for p in self.parts)
        return reason


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


def unit_columns(report: UnitReport, select: Callable[[Unit], bool]) -> list[int]:
    return [i for i, u in enumerate(report.units) if i > 0 and select(u)]


def mean_effect(field_name: Literal["high_freq", "variance"], select: Callable[[Unit], bool]) -> Statistic:
    """Mean over the selected units and the resampled images of value(after unit) - value(before unit)."""
    def stat(report: UnitReport, idx: np.ndarray) -> float:
        values = getattr(report, field_name)[idx]
        cols = unit_columns(report, select)
        return float(np.mean(values[:, cols] - values[:, [c - 1 for c in cols]]))
    return stat
