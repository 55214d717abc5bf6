"""The recipe a checkpoint judgement reads from the committed seed study in place of a run this session does not
train (issue: a new checkpoint never trains in the test process).

A part that compares the weights under test with one variant, each measured on its own (a report per model, not a
pair report of two models on the same inputs, such as cross-model CKA), needs no trained copy of the variant: the
seed study holds the variant's per-seed estimates of that part, and the weights are compared with their mean
(:mod:`model_props.verdicts.against_seeds`). A part that pairs models on the same inputs, or reads no model under
test, still needs ``--claims-live=all``; so does any part where the profile's study is stale for the claim.
"""

from __future__ import annotations

from ..claims.base import Claim, Part
from ..store.model_store import ModelStore
from ..study.canaries import judged_study
from ..verdicts.scope import Route
from .live import not_live

__all__ = ["study_side"]


def study_side(store: ModelStore, claim: Claim, part: Part, tested: str, route: Route) -> str | None:
    """The recipe whose committed per-seed estimates ``part`` reads for the weights ``tested`` judged on ``route``,
    or None where it reads none (module docstring); the study's canaries run only once a part could read it."""
    if route == "study" or part.partner or "@" in part.reads or part.versus is None:
        return None  # a reference judged from the study; a pair; a part about one model
    sides = (part.subject or tested, part.versus)
    if tested not in sides or sides[0] == sides[1]:
        return None
    recipe = sides[1] if sides[0] == tested else sides[0]
    if not_live(store.settings, part, tested) != [recipe]:
        return None  # trained live (--claims-live=all), or not a recipe of the profile
    study = judged_study(store)
    if study is None or study.profile != store.profile.name or study.stale(claim, store.profile):
        return None
    return recipe
