"""How a model is judged in this session: from the seed study, over its checkpoints (replicas) or about one set of
weights (:func:`~model_props.verdicts.scope.route`), with the rule's arguments read in one place."""

from __future__ import annotations

from ..store.model_store import ModelStore
from ..store.tested import ModelUnderTest
from ..verdicts.scope import Route, route

__all__ = ["route_for", "route_of"]


def route_for(store: ModelStore, name: str, *, stand_in: bool = False, scope: str | None = None) -> Route:
    """How the model ``name`` is judged in this session (:func:`~model_props.verdicts.scope.route`): the one place
    that reads the rule's arguments (the session's scope, the model's checkpoints, the profile and its study)."""
    s = store.settings
    return route(scope or s.scope, name, checkpoints=len(s.checkpoints.get(name, ())),
                 reference=name in store.profile.recipes, has_study=store.study is not None,
                 stand_in=stand_in)  # fmt: skip


def route_of(store: ModelStore, tested: ModelUnderTest, *, stand_in: bool = False, scope: str | None = None) -> Route:
    """How ``tested`` is judged in this session (:func:`route_for`; a mutant stands in for its base)."""
    return route_for(store, tested.name, stand_in=stand_in or tested.mutation is not None, scope=scope)
