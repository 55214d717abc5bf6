"""Training runs go to the executor longest first, by an expected cost checked against a hand count of FLOPs."""

from __future__ import annotations

import dataclasses
import math

import pytest
import torch

from model_props.training.recipes import Recipe
from model_props.training.schedule import expected_cost, longest_first

FACTORIES = """
from torch import nn

def linear(num_classes=10):
    return nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, num_classes))

def wide(num_classes=10):
    return nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 64), nn.Dropout(0.5), nn.Linear(64, num_classes))

def broken(num_classes=10):
    raise RuntimeError("out of coffee")
"""


@pytest.fixture
def factories(tmp_path, monkeypatch) -> str:
    (tmp_path / "schedmodels.py").write_text(FACTORIES)
    monkeypatch.syspath_prepend(str(tmp_path))
    return "schedmodels"


def _recipe(name: str, model: str, steps: int = 100) -> Recipe:
    return Recipe(name=name, profile="test", model=model, steps=steps, warmup_steps=10, batch_size=16)


def test_the_cost_is_steps_times_batch_times_a_hand_count_of_flops(factories, dataset):
    # one image through Linear(3072, 10): 2 * 3072 * 10 FLOPs forward, as many for the weight's gradient (the
    # image needs none); the wrapper's normalisation is elementwise, which torch's counter leaves out
    per_image = 4 * 3 * 32 * 32 * dataset.num_classes
    lin = _recipe("lin", f"{factories}:linear")
    assert expected_cost(lin, "final", dataset) == 100 * 16 * per_image
    assert expected_cost(lin, "warmup", dataset) == 10 * 16 * per_image


def test_estimating_a_cost_leaves_the_global_rng_as_it_was(factories, dataset):
    state = torch.get_rng_state()
    expected_cost(_recipe("wide", f"{factories}:wide"), "final", dataset)  # initialises weights, draws a dropout mask
    assert torch.equal(torch.get_rng_state(), state)


def test_runs_are_handed_out_longest_first_and_ties_keep_their_order(factories, dataset):
    small, big = _recipe("small", f"{factories}:linear"), _recipe("big", f"{factories}:wide")
    longer = _recipe("longer", f"{factories}:linear", steps=1000)
    runs = [small, dataclasses.replace(small, seed=1), big, longer, dataclasses.replace(big, seed=1)]
    until = {"small": "final", "big": "final", "longer": "final"}
    ordered = longest_first(runs, until, lambda name: dataset)
    assert [(r.name, r.seed) for r in ordered] == [("longer", 0), ("big", 0), ("big", 1), ("small", 0), ("small", 1)]
    # the same recipe to its warm-up only costs less than to its end
    assert longest_first([small, big], {"small": "final", "big": "warmup"}, lambda name: dataset)[0] is small


def test_a_model_that_cannot_be_built_goes_first_so_that_its_error_comes_early(factories, dataset):
    broken = _recipe("broken", f"{factories}:broken")
    assert math.isinf(expected_cost(broken, "final", dataset))
    runs = [_recipe("lin", f"{factories}:linear"), broken]
    assert longest_first(runs, {"lin": "final", "broken": "final"}, lambda name: dataset)[0] is broken
