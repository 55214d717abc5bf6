"""A control of the architecture path (``ARCHITECTURE_CONTROLS`` in ``model_props.claims.controls``): judged over
training seeds, as a reference from its seed study or a user's model from its checkpoints is, the part comes out
contradicted on the mutants of those seeds while their unmutated models, judged the same way, do not.

The seeds are the tiny profile's (``tiny.toml``, as ``test_study.py`` trains them; about 20 s a seed on a cold cache,
none on a warm one). Each seed is measured on its own sample (the two-stage design of the study), its mutant on the
same sample as its base; the per-seed estimates give the architecture judge's t interval over seeds
(:func:`~model_props.verdicts.judge`). The tiny models are at chance after 16 steps: the session would skip the part
on them (a rule of the evidence it gathers, not of the judge), so this control is of the judge over seeds, on
estimates measured as the study measures them.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from model_props.claims import get_claim
from model_props.claims.controls import ARCHITECTURE_CONTROLS
from model_props.config.settings import Settings
from model_props.mutation.mutants import make_mutant
from model_props.store.model_store import ModelStore
from model_props.training.profiles import RecipeSource
from model_props.verdicts import Evidence, PerSeed, judge, point_value

TINY = (Path(__file__).parent / "tiny.toml").read_text()
SEEDS = (0, 1, 2)  # the fewest an architecture verdict takes (MIN_SEEDS), as the study's setting seeds


@pytest.fixture(scope="module")
def estimates(tmp_path_factory, model_store) -> dict[tuple[str, str], dict[str, tuple[float, ...]]]:
    """Per control, the per-seed estimates of its part on the unmutated seeds ("base") and on their mutants."""
    folder = tmp_path_factory.mktemp("recipes")
    (folder / "tiny.toml").write_text(TINY)
    settings = Settings(profile="tiny", recipes=RecipeSource(folder), cache_dir=model_store.settings.cache_dir,
                        progress=False)  # fmt: skip
    stores = [ModelStore(dataclasses.replace(settings, train_seed=seed)) for seed in SEEDS]
    assert len({store.sample_seed for store in stores}) == len(SEEDS)  # each seed its own sample
    found = {}
    for key, control in ARCHITECTURE_CONTROLS.items():
        part = {p.name: p for p in get_claim(key[0]).parts}[key[1]]
        assert control.replaced == control.model and part.versus is None and part.subject is None
        base, mutant = [], []
        for store in stores:
            model = store.get(control.model, "final" if control.checkpoint == "final" else "warmup")
            base.append(point_value(part, store.report_for(model, part.reads)))
            mutant.append(point_value(part, store.report_for(make_mutant(model, control.mutation), part.reads)))
        found[key] = {"base": tuple(base), "mutant": tuple(mutant)}
    return found


@pytest.mark.parametrize("key", sorted(ARCHITECTURE_CONTROLS), ids="-".join)
def test_part_is_contradicted_over_seeds_of_its_mutant_not_of_its_base(key, estimates):
    claim, control = get_claim(key[0]), ARCHITECTURE_CONTROLS[key]
    judged = {}
    for which, values in estimates[key].items():
        evidence = Evidence(claim, control.model, "architecture", {key[1]: PerSeed(control.model, values)}, SEEDS)
        judged[which] = {p.part.name: p for p in judge(evidence).parts}[key[1]]
    base, mutant = judged["base"], judged["mutant"]
    assert mutant.estimate is not None and (mutant.estimate.method, mutant.estimate.n) == ("t over seeds", len(SEEDS))
    assert base.verdict not in ("contradicted", "skipped"), (
        f"the unmutated {control.model}'s seeds, judged over seeds like the mutants, already decide the part, so the "
        f"control proves nothing: {base.describe()}"
    )
    assert mutant.verdict == "contradicted", mutant.describe()
    assert not mutant.degenerate, "a mutant whose estimate is the same on every seed does not exercise the interval"
