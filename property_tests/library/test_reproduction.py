"""The reproduction of the seed study by a live run, judged with a hand-made study: a live estimate inside the
study's prediction intervals passes, one shifted far outside fails, one undefined where the study's is defined
fails, and each statistic is checked once however many claims read it. A known discrepancy of the weights checked
turns exactly that failure into the expected ``ReproductionDiscrepancy``; any other estimate outside, or the known
one back inside, is a plain failure that names it; the discrepancies file is read with the study's loader."""

from __future__ import annotations

import math

import pytest

from model_props.claims import get_claim
from model_props.training.profiles import load_profile
from model_props.verdicts.reproduction import (
    KnownDiscrepancy,
    ReproductionDiscrepancy,
    StudyStatistic,
    held_out,
    load_discrepancies,
    reproduce,
)
from model_props.verdicts.study import SeedStudy

PROFILE = load_profile("smoke")
APE = get_claim("park2022.msa-flattens-loss").parts[0]


def statistics() -> list[StudyStatistic]:
    return [
        StudyStatistic("test accuracy of vit (final)", "vit", "final", (0.80, 0.82, 0.78, 0.81, 0.79)),
        StudyStatistic("APE of vit", "vit", "warmup", (40.0, 52.0, 47.0, 44.0, 50.0), APE),
    ]


def test_live_estimates_inside_their_prediction_intervals_pass():
    found = reproduce("vit", statistics(), {"test accuracy of vit (final)": 0.80, "APE of vit": 46.0}, PROFILE)
    assert not found.failed and len(found.checks) == 2
    assert found.level == pytest.approx(0.05 / len(PROFILE.references))


def test_a_shifted_live_estimate_fails_and_names_itself():
    found = reproduce("vit", statistics(), {"test accuracy of vit (final)": 0.80, "APE of vit": 400.0}, PROFILE)
    (failed,) = found.failed
    assert failed.what == "APE of vit" and "OUTSIDE" in found.message()


def test_a_live_value_undefined_where_the_study_is_defined_fails():
    found = reproduce("vit", statistics(), {"test accuracy of vit (final)": 0.80, "APE of vit": math.nan}, PROFILE)
    (failed,) = found.failed
    assert failed.what == "APE of vit" and failed.p == 0.0 and "UNDEFINED" in found.message()
    partly = [StudyStatistic("APE of vit", "vit", "warmup", (40.0, None, 47.0, 44.0, 50.0), APE)]
    assert not reproduce("vit", partly, {"APE of vit": math.nan}, PROFILE).checks  # undefined on a study seed too


def _study(values: list[float | None]) -> SeedStudy:
    """A study of one ViT recipe whose APE series two claims read (claims 1 and 6)."""
    recipe = {"fingerprint": "x", "num_classes": 10,
              "checkpoints": {"final": {"test_accuracy": [0.8, 0.82, 0.78, 0.81, 0.79]}}}  # fmt: skip

    def entry(part: str) -> dict:
        return {"fingerprint": {}, "evaluated_on": ["vit"], "not_applicable": {},
                "parts": {part: {"values": {"vit": values}, "not_applicable": {}, "unreadable": {}}}}  # fmt: skip

    claims = {"park2022.msa-flattens-loss": entry(APE.name), "park2022.heads-convexify": entry("ape-heads")}
    return SeedStudy("smoke", (0, 1, 2, 3, 4), {"vit": recipe}, claims, {})


def test_held_out_seeds_are_judged_by_the_live_procedure(monkeypatch):
    from model_props.verdicts import reproduction

    study = _study([40.0, 52.0, 47.0, 44.0, 50.0])
    monkeypatch.setattr(SeedStudy, "check", lambda self, claim, profile: None)  # no fingerprints in a hand-made study
    family = reproduction.family(study, PROFILE, "vit")
    assert [s.label for s in family] == ["test accuracy of vit (final)",
                                         "park2022.msa-flattens-loss [ape-vs-resnet] " + APE.statistic_name + " of vit"]  # fmt: skip
    assert not held_out(study, PROFILE, "vit", 2).failed
    shifted = _study([40.0, 52.0, 470.0, 44.0, 50.0])  # seed 2 far off the others
    assert held_out(shifted, PROFILE, "vit", 2).failed


INSIDE = {"test accuracy of vit (final)": 0.80, "APE of vit": 46.0}
SHIFTED = {**INSIDE, "APE of vit": 400.0}
KNOWN_APE = KnownDiscrepancy("vit", "ab" * 32, "APE of vit", "seed 100's APE is an outlier")


def test_a_known_discrepancy_is_the_expected_failure_and_nothing_else_is():
    reproduce("vit", statistics(), INSIDE, PROFILE).assert_reproduced()
    with pytest.raises(ReproductionDiscrepancy, match="seed 100's APE is an outlier"):
        reproduce("vit", statistics(), SHIFTED, PROFILE, [KNOWN_APE]).assert_reproduced()
    with pytest.raises(AssertionError, match="NOT a known discrepancy: APE of vit") as unknown:
        reproduce("vit", statistics(), SHIFTED, PROFILE).assert_reproduced()
    assert not isinstance(unknown.value, ReproductionDiscrepancy)
    both = {**SHIFTED, "test accuracy of vit (final)": 0.20}
    with pytest.raises(AssertionError, match="NOT a known discrepancy: test accuracy") as more:
        reproduce("vit", statistics(), both, PROFILE, [KNOWN_APE]).assert_reproduced()
    assert not isinstance(more.value, ReproductionDiscrepancy)
    with pytest.raises(AssertionError, match="no longer outside.*: APE of vit") as back:
        reproduce("vit", statistics(), INSIDE, PROFILE, [KNOWN_APE]).assert_reproduced()
    assert not isinstance(back.value, ReproductionDiscrepancy)


def test_known_discrepancies_are_read_from_the_users_folder_first(tmp_path):
    import json

    from model_props.errors import StudyError

    record = {"model": "vit", "weights_sha256": "ab" * 32, "statistic": "APE of vit", "why": "an outlier"}
    (tmp_path / "smoke-discrepancies.json").write_text(json.dumps({"schema_version": 1, "known": [record]}))
    assert load_discrepancies("smoke", tmp_path) == (KnownDiscrepancy(**record),)
    assert load_discrepancies("no-such-profile", tmp_path) == ()
    (tmp_path / "smoke-discrepancies.json").write_text(json.dumps({"schema_version": 0, "known": []}))
    with pytest.raises(StudyError, match="schema version 0"):
        load_discrepancies("smoke", tmp_path)
