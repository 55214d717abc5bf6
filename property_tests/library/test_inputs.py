"""Every statistic's minimum sample, one test per kind of sampling unit: below it the part is skipped with the reason
and the option value that would run it (``session/inputs.py`` on a user's folder, the judge on any report)."""

from __future__ import annotations

import numpy as np
from test_evaluation import Scores, claim, mean  # this folder is on sys.path (pytest's "prepend" import mode)

from model_props.claims import get_claim
from model_props.claims.base import Part
from model_props.session.inputs import images_needed, too_few
from model_props.training.recipes import MeasurementSettings
from model_props.verdicts import Evidence, Measured, OnReports, judge

M = MeasurementSettings(batch_size=64)


def named(claim_id: str, part: str) -> Part:
    return next(p for p in get_claim(claim_id).parts if p.name == part)


def test_cka_needs_two_mini_batches_of_the_folders_images():
    cka = named("park2022.multistage-block-cka", "block-structure")
    assert images_needed(cka, M) == 128
    said = too_few(cka, M, 127)
    assert said is not None and "needs at least 2 CKA mini-batches of 64 images" in said
    assert "--claims-images 127 gives fewer; run with --claims-images 128 or more" in said
    assert too_few(cka, M, 128) is None


def test_the_location_probe_scores_half_of_its_images():
    probe = named("raghu2021.cls-preserves-location", "cls-over-gap")
    said = too_few(probe, M, 3)
    assert said is not None and "needs at least 2 images" in said and "--claims-images 4 or more" in said
    assert too_few(probe, M, 4) is None


def test_a_bootstrap_over_images_needs_two_images_whatever_the_class_balance():
    accuracy = named("park2022.alternet-beats-resnet", "accuracy")
    said = too_few(accuracy, M, 1)
    assert said is not None and "--claims-images 2 or more" in said
    assert too_few(accuracy, M, 2) is None


def test_hessian_batches_are_not_counted_in_folder_images_and_one_batch_is_skipped_by_the_judge():
    """The Hessian's batches come from the profile's ``hessian_batches`` whatever the folder holds, so no
    ``--claims-images`` value runs a spectrum part that has too few: the judge skips it, naming the minimum."""
    nep = named("park2022.vit-nonconvex", "nep-vs-resnet")
    assert images_needed(nep, M) is None and too_few(nep, M, 1) is None
    toy = Part("p", "mean NEP", mean, "greater", report="spectrum", sampling="batches")
    one_batch = judge(Evidence(claim(toy), "a", "checkpoint", {"p": OnReports(Measured("a", Scores(np.ones(1)), "t"))}))
    (part,) = one_batch.parts
    assert part.verdict == "skipped" and "needs at least 2 batches of a, and its report has 1" in part.reason
