"""The live values of a reproduction: this session's own weights of every statistic the seed study holds of a
reference's family (:func:`~model_props.verdicts.reproduction.family`), measured here and judged by
:func:`~model_props.verdicts.reproduction.reproduce`."""

from __future__ import annotations

import math

from ..errors import NotApplicable, StudyError
from ..verdicts.evidence import point_value
from ..verdicts.reproduction import Reproduction, family, load_discrepancies, reproduce
from ..verdicts.study import regenerate
from .store import ModelStore

__all__ = ["reproduction"]


def reproduction(store: ModelStore, reference: str) -> Reproduction:
    """Every statistic of ``reference``'s family, measured on this session's live weights (the profile's live seed,
    which the study does not hold), against the study's prediction intervals."""
    study = store.study
    if study is None:
        raise StudyError(
            f"profile {store.profile.name!r} has no seed study to reproduce; run {regenerate(store.profile.name)}"
        )
    if store.train_seed in study.seeds:
        raise StudyError(f"this session trains with seed {store.train_seed}, one of the seed study's own seeds "
                         f"{list(study.seeds)}: a reproduction needs a draw the study does not hold (the profile's "
                         f"live seed is {store.profile.live_seed})")  # fmt: skip
    statistics = family(study, store.profile, reference)
    live: dict[str, float] = {}
    weights: set[tuple[str, str | None]] = set()
    for s in statistics:
        model = store.get(s.name, "warmup" if s.checkpoint == "warmup" else "final")
        weights.add((s.name, model.checkpoint_sha256))
        if s.part is None:
            live[s.label] = model.metrics["test_accuracy"]
            continue
        try:
            live[s.label] = point_value(s.part, store.report_for(model, s.part.reads))
        except NotApplicable:  # the live model has nothing to read where the study's seeds had
            live[s.label] = math.nan
    known = [k for k in load_discrepancies(store.profile.name, store.settings.recipes.user_dir)
             if (k.model, k.weights_sha256) in weights]  # fmt: skip
    return reproduce(reference, statistics, live, store.profile, known)
