"""Disagreements between papers: a claim that disputes another is set beside it on every model judged on both, in
summary.json, summary.md and one Allure result per disagreement, with the side the evidence favours."""

from __future__ import annotations

import json

import pytest

from model_props.reporting.disputes import EPIC, disagreements, write_allure_disputes
from model_props.reporting.summary import write_summary

BAI, PARK = "bai2021.same-recipe-adversarial", "park2022.msa-adversarial-robust"
TRAINING = {"dataset": "deadleaves", "steps": 750, "augment": ["crop", "flip"]}


def record(claim: str, model: str, verdict: str, value: float | None, *, half: float = 0.02, **extra) -> dict:
    """A claim's summary record; Bai et al.'s one part is the PGD drop difference both sides are judged on."""
    interval = None if value is None else [value - half, value + half]
    part = "pgd-drop-equivalent" if claim == BAI else "p"
    parts = [] if value is None else [{"part": part, "rule": "r", "verdict": verdict, "value": value,
                                       "interval": interval, "level": 0.9, "n": 5}]  # fmt: skip
    return {"claim": claim, "model": model, "verdict": verdict, "scope": "architecture", "value": value,
            "interval": interval, "statistic": "s", "reason": "", "parts": parts, **extra}  # fmt: skip


MODELS = {m: {"training": {**TRAINING, "lr": lr}} for m, lr in (("vit", 1e-3), ("resnet", 2e-3), ("swin", 5e-4))}


# Bai et al.: |d| < 0.05 (equivalence); Park & Kim on the same interval: d < 0. The regions of one line.
@pytest.mark.parametrize(("bai", "value", "half", "park", "favours"), [
    ("contradicted", 0.12, 0.02, "contradicted", "neither"),  # d > 0.05
    ("supported", 0.02, 0.01, "contradicted", BAI),  # 0 < d < 0.05
    ("contradicted", -0.12, 0.02, "supported", PARK),  # d < -0.05
    ("supported", -0.02, 0.01, "supported", "both"),  # -0.05 < d < 0
    ("supported", 0.005, 0.015, "inconclusive", "undecided"),  # inside the margin, straddling 0
])  # fmt: skip
def test_both_sides_are_judged_on_one_interval_and_a_side_is_favoured_only_against_a_contradiction(
    bai, value, half, park, favours
):
    (found,) = disagreements([record(BAI, "vit", bai, value, half=half)], MODELS)
    assert (found["claim"], found["disputes"], found["model"], found["favours"]) == (BAI, PARK, "vit", favours)
    mine, theirs = found["sides"]
    assert (mine["verdict"], theirs["verdict"]) == (bai, park)
    assert found["interval"] == pytest.approx([value - half, value + half])


def test_a_disagreement_needs_the_disputing_part_measured_on_the_model():
    results = [
        record(BAI, "vit", "contradicted", 0.14),
        record(BAI, "swin", "skipped", None),
        record(PARK, "resnet", "skipped", None),
    ]
    (found,) = disagreements(results, MODELS)
    bai, park = found["sides"]
    assert (bai["number"], park["number"]) == (29, 16) and found["value"] == 0.14
    assert set(found["training"]) == {"vit", "resnet"}, "the model and the reference both claims compare it with"


def test_summary_and_allure_show_each_disagreement_side_by_side(tmp_path):
    results = [record(BAI, "vit", "contradicted", 0.14), record(PARK, "vit", "contradicted", 0.1)]
    write_summary(tmp_path, profile="smoke", seed=0, models=MODELS, results=results)
    data = json.loads((tmp_path / "summary.json").read_text())
    assert [d["model"] for d in data["disagreements"]] == ["vit"] and data["disagreements"][0]["favours"] == "neither"
    md = (tmp_path / "summary.md").read_text()
    row = next(line for line in md.splitlines() if line.startswith("| vit | accuracy drop"))
    assert f"## {EPIC}" in md and "+0.14 [+0.12, +0.16] (90%, architecture)" in row and "| neither |" in row
    assert "shared: dataset deadleaves, steps 750" in row and "vit lr 0.001; resnet lr 0.002" in row
    write_allure_disputes(tmp_path / "allure-results", data["disagreements"])
    (result,) = [json.loads(p.read_text()) for p in (tmp_path / "allure-results").glob("*-result.json")]
    assert result["name"] == f"{BAI} vs {PARK} [vit]: both sides are contradicted" and result["status"] == "passed"
    assert {"name": "epic", "value": EPIC} in result["labels"]
    assert result["description"].count("contradicted") >= 2


def test_a_session_without_disagreements_writes_no_section(tmp_path):
    write_summary(tmp_path, profile="smoke", seed=0, models=MODELS, results=[record(PARK, "vit", "supported", -0.1)])
    assert json.loads((tmp_path / "summary.json").read_text())["disagreements"] == []
    assert EPIC not in (tmp_path / "summary.md").read_text()
