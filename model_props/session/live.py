"""What a session trains live, applied to what a claim part reads (:meth:`~model_props.config.settings.Settings.trains_live`): by
default the five references only; every variant and independent run too with ``--claims-live=all``. A reference's
part that reads a model this session does not train is judged from the committed seed study alone, and so is one that
reads a report the default run does not measure on the references' live weights (:func:`measured_live`)."""

from __future__ import annotations

from collections.abc import Iterable

from ..claims.base import Claim, Part
from ..config.settings import Settings
from ..verdicts.family import default_kind

__all__ = ["SWITCH", "measured_live", "unmeasured_reports", "not_live", "not_live_claim", "not_live_report", "listed",
           "needs_switch"]  # fmt: skip

SWITCH = "--claims-live=all"  # trains every variant and independent run live, measures every report kind


def measured_live(settings: Settings, kind: str) -> bool:
    """Whether this session measures the ``kind`` report on the live weights of the profile's references (their live
    checks, their claim tests' own evidence and their mutant controls): every kind with ``--claims-live=all``, by
    default every kind but :data:`~model_props.verdicts.family.RELEASE_KINDS`."""
    return settings.live == "all" or default_kind(kind)


def unmeasured_reports(settings: Settings, parts: Iterable[Part]) -> list[str]:
    """The reports ``parts`` read that this session does not measure on the references' live weights."""
    return [
        f"its {kind} reports" for kind in dict.fromkeys(p.reads for p in parts) if not measured_live(settings, kind)
    ]


def not_live_report(settings: Settings, name: str, kind: str) -> list[str]:
    """What the ``kind`` report of ``name`` reads that this session does not train: ``name`` itself and, for a pair
    kind (``cross@partner``), the independent runs of ``name`` and of the partner (:func:`~model_props.store.pairs.pair_reports`)."""
    _, _, partner = kind.partition("@")
    missing = [] if settings.trains_live(name) else [name]
    runs = (name, partner) if partner else ()
    return missing + [f"the independent run of {n}" for n in runs if not settings.trains_live(n, independent_run=True)]


def not_live(settings: Settings, part: Part, model: str) -> list[str]:
    """What ``part``, evaluated on ``model``, reads that this session does not train: the reports of the models it
    measures (its subject, else ``model``, and its ``versus``) and the partner whose accuracy it checks."""
    found: dict[str, None] = {}
    for name in (part.subject or model, part.versus):
        if name:
            found.update(dict.fromkeys(not_live_report(settings, name, part.reads)))
    if part.partner and not settings.trains_live(part.partner):
        found[part.partner] = None
    return list(found)


def not_live_claim(settings: Settings, claim: Claim, model: str) -> list[str]:
    """What any part of ``claim``, evaluated on ``model``, reads that this session does not train."""
    return list(dict.fromkeys(name for part in claim.parts for name in not_live(settings, part, model)))


def needs_switch(what: str, missing: list[str]) -> str:
    """Why ``what`` (a test that reads the runs ``missing``) is skipped in this session."""
    return f"{what} reads {listed(missing)}, which this run does not train or measure; it needs {SWITCH}"


def listed(names: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)
