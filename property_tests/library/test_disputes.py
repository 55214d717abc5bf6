"""Disagreements between papers: a claim that disputes another is set beside it on every model judged on both, in
summary.json, summary.md and one Allure result per disagreement, with the side the evidence favours."""

from __future__ import annotations

import json

import pytest

from model_props.reporting.disputes import EPIC, disagreements, write_allure_disputes
from model_props.reporting.summary import write_summary

BAI, PARK = "bai2021.same-recipe-adversarial", "park2022.msa-adversarial-robust"
TRAINING = {"dataset": "deadleaves", "steps": 750, "augment": ["crop", "flip"]}


def record(claim: str, model: str, verdict: str, value: float | None, **extra) -> dict:
    interval = None if value is None else [value - 0.02, value + 0.02]
    parts = [] if value is None else [{"part": "p", "rule": "r", "verdict": verdict, "value": value,
                                       "interval": interval, "level": 0.9}]  # fmt: skip
    return {"claim": claim, "model": model, "verdict": verdict, "scope": "architecture", "value": value,
            "interval": interval, "statistic": "s", "reason": "", "parts": parts, **extra}  # fmt: skip


MODELS = {m: {"training": {**TRAINING, "lr": lr}} for m, lr in (("vit", 1e-3), ("resnet", 2e-3), ("swin", 5e-4))}


@pytest.mark.parametrize(("bai", "park", "favours"), [
    ("contradicted", "contradicted", "neither"),
    ("supported", "contradicted", BAI),
    ("contradicted", "supported", PARK),
    ("inconclusive", "contradicted", "undecided"),
    ("supported", "supported", "both"),
])  # fmt: skip
def test_the_evidence_favours_the_side_whose_claim_alone_holds(bai, park, favours):
    (found,) = disagreements([record(BAI, "vit", bai, 0.1), record(PARK, "vit", park, 0.1)], MODELS)
    assert (found["claim"], found["disputes"], found["model"], found["favours"]) == (BAI, PARK, "vit", favours)


def test_a_disagreement_needs_both_claims_measured_on_the_model():
    results = [
        record(BAI, "vit", "contradicted", 0.14),
        record(PARK, "vit", "xfailed", 0.03, measured_verdict="inconclusive"),  # an expected failure keeps its verdict
        record(BAI, "swin", "contradicted", 0.2),
        record(PARK, "swin", "skipped", None),
        record(PARK, "resnet", "skipped", None),
    ]
    (found,) = disagreements(results, MODELS)
    bai, park = found["sides"]
    assert (bai["verdict"], park["verdict"], found["favours"]) == ("contradicted", "inconclusive", "undecided")
    assert (
        (bai["number"], park["number"]) == (29, 16)
        and bai["value"] == 0.14
        and park["interval"] == pytest.approx([0.01, 0.05])
    )
    assert set(found["training"]) == {"vit", "resnet"}, "the model and the reference both claims compare it with"


def test_summary_and_allure_show_each_disagreement_side_by_side(tmp_path):
    results = [record(BAI, "vit", "contradicted", 0.14), record(PARK, "vit", "contradicted", 0.1)]
    write_summary(tmp_path, profile="smoke", seed=0, models=MODELS, results=results)
    data = json.loads((tmp_path / "summary.json").read_text())
    assert [d["model"] for d in data["disagreements"]] == ["vit"] and data["disagreements"][0]["favours"] == "neither"
    md = (tmp_path / "summary.md").read_text()
    row = next(line for line in md.splitlines() if line.startswith("| vit | 29"))
    assert f"## {EPIC}" in md and "contradicted +0.14 [+0.12, +0.16] (architecture)" in row and "| neither |" in row
    assert "shared: dataset deadleaves, steps 750" in row and "vit lr 0.001; resnet lr 0.002" in row
    write_allure_disputes(tmp_path / "allure-results", data["disagreements"])
    (result,) = [json.loads(p.read_text()) for p in (tmp_path / "allure-results").glob("*-result.json")]
    assert result["name"] == f"{BAI} vs {PARK} [vit]: the evidence favours neither" and result["status"] == "passed"
    assert {"name": "epic", "value": EPIC} in result["labels"]
    assert result["description"].count("| contradicted |") == 2


def test_a_session_without_disagreements_writes_no_section(tmp_path):
    write_summary(tmp_path, profile="smoke", seed=0, models=MODELS, results=[record(PARK, "vit", "supported", -0.1)])
    assert json.loads((tmp_path / "summary.json").read_text())["disagreements"] == []
    assert EPIC not in (tmp_path / "summary.md").read_text()
