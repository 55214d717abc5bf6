"""Claim figures are kept in the cache under a key of everything they are drawn from: a second request returns the
stored PNG without drawing, any change of a report, unit or label draws anew, and a damaged entry is redrawn."""

from __future__ import annotations

import dataclasses

import pytest

import model_props.reporting.figure_cache as figure_cache
from model_props.claims import get_claim
from model_props.reporting.figure_cache import cached_figure_png, figure_key
from model_props.session.judging import judge_claim
from model_props.session.live import needs_switch, not_live_claim


@pytest.fixture(scope="module")
def used(model_store):
    """The reports the ViT's msa-lowpass figure is drawn from (its unit report)."""
    claim = get_claim("park2022.msa-lowpass")
    return claim, judge_claim(model_store, claim, model_store.get("vit")).used


@pytest.mark.parametrize("claim_id, model", [("park2022.msa-lowpass", "vit"),  # a unit report
                                             ("park2022.lesion-stage-pattern", "resnet"),
                                             ("park2022.msa-adversarial-robust", "vit"),
                                             ("raghu2021.vit-lower-like-resnet-mid", "vit")])  # a pair report  # fmt: skip
def test_a_stored_figure_is_returned_without_drawing(tmp_path, model_store, monkeypatch, claim_id, model):
    claim = get_claim(claim_id)
    if missing := not_live_claim(model_store.settings, claim, model):  # a pair report's independent runs
        pytest.skip(needs_switch("the figure", missing))
    reports = judge_claim(model_store, claim, model_store.get(model)).used
    png = cached_figure_png(tmp_path, claim, model, reports)
    assert png.startswith(b"\x89PNG") and len(list((tmp_path / "figures").glob("*/figure.png"))) == 1
    monkeypatch.setattr(figure_cache, "figure_png", lambda *a: pytest.fail("drew a stored figure again"))
    assert cached_figure_png(tmp_path, claim, model, reports) == png


def test_the_key_covers_the_reports_units_and_labels(used):
    claim, reports = used
    (key, report), *_ = reports.items()
    base = figure_key(claim, "vit", reports)
    shifted = dataclasses.replace(report, high_freq=report.high_freq + 1e-6)
    units = list(report.units)
    units[1] = dataclasses.replace(units[1], kind="conv")  # one unit's kind, all else equal
    relabelled = dataclasses.replace(report, units=units)
    assert len({
        base,
        figure_key(claim, "vit", {key: shifted}),
        figure_key(claim, "vit", {key: relabelled}),
        figure_key(claim, "vit+mutant", reports),
        figure_key(get_claim("park2022.msa-reduces-variance"), "vit", reports),
    }) == 5  # fmt: skip
    assert figure_key(claim, "vit", dict(reports)) == base


def test_a_damaged_figure_is_drawn_again(tmp_path, used):
    claim, reports = used
    png = cached_figure_png(tmp_path, claim, "vit", reports)
    (stored,) = (tmp_path / "figures").glob("*/figure.png")
    stored.write_bytes(b"not a png")
    assert cached_figure_png(tmp_path, claim, "vit", reports) == png


def test_a_claim_judged_from_the_study_alone_draws_each_parts_per_seed_values(model_store):
    """Nothing measured in this run (every part of park2022.smoothing-helps reads resnet_smooth, which a default run
    does not train): the figure is one panel per part, with the study's per-seed values and the estimate drawn in
    it, not an empty panel."""
    import io

    import matplotlib.image as mpimg
    import numpy as np

    from model_props.reporting.study_figure import study_figure_png

    claim = get_claim("park2022.smoothing-helps")
    outcome = model_store.study.evaluate(claim, "resnet")
    seeds = [p.seeds for p in outcome.parts if p.estimate is not None]
    assert seeds and all(seeds), "a part with per-seed values to draw"
    image = mpimg.imread(io.BytesIO(study_figure_png(outcome)))
    assert image.shape[1] == 450 * len(outcome.parts)  # 4.5 in per part at 100 dpi
    grey = np.isclose(image[..., :3], 115 / 255, atol=0.02).all(axis=-1)  # the per-seed points (grey 0.45)
    red = (image[..., 0] > 0.75) & (image[..., 1] < 0.3) & (image[..., 2] < 0.3)  # the estimate (C3)
    assert grey.sum() > 50 and red.sum() > 20, (grey.sum(), red.sum())
