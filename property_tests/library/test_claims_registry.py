"""The claim catalogue: stable ids, applicability with reasons, and the summary contract."""

from __future__ import annotations

import json

import pytest
from tiny_resnet import tiny_resnet  # this folder is on sys.path (pytest's "prepend" import mode)

from model_props.anatomy import anatomy
from model_props.claims import CLAIMS, catalogue_markdown, get_claim, list_claims
from model_props.errors import ModelPropsError
from model_props.reporting.summary import write_summary
from model_props.training.profiles import get_recipe, list_recipes
from model_props.zoo import build_model

CATALOGUE = {
    1: "park2022.msa-flattens-loss",
    2: "park2022.vit-nonconvex",
    3: "park2022.less-data-nonconvex",
    4: "park2022.gap-convexifies",
    5: "park2022.multistage-local-flatten",
    6: "park2022.heads-convexify",
    8: "park2022.msa-lowpass",
    9: "park2022.conv-mlp-highpass",
    10: "park2022.msa-reduces-variance",
    12: "park2022.multistage-block-cka",
    15: "park2022.smoothing-helps",
    17: "raghu2021.skip-dominates",
    7: "park2022.underfit-not-overfit",
    11: "park2022.frequency-vulnerability",
    13: "park2022.lesion-stage-pattern",
    14: "park2022.alternet-beats-resnet",
    16: "park2022.msa-adversarial-robust",
    19: "park2022.vit-no-overfit-small-data",
    20: "park2022.data-specificity-local-msa",
    23: "park2022.alternet-buildup",
    18: "raghu2021.attention-distance-grows",
    21: "park2022.patch-size-tradeoff",
    22: "park2022.augmentation-hessian-calibration",
    24: "raghu2021.cls-preserves-location",
    25: "raghu2021.cls-vs-gap-late-layers",
    26: "raghu2021.data-scale-higher-layers",
    27: "raghu2021.vit-lower-like-resnet-mid",
    28: "dosovitskiy2021.position-embedding-2d",
    29: "bai2021.same-recipe-adversarial",
    30: "naseer2021.occlusion-robust",
}


def smoke_anatomy(name):
    return anatomy(build_model(name, num_classes=10, arch_kwargs=get_recipe("smoke", name).arch))


def test_ids_and_numbers_follow_the_design_catalogue():
    assert {c.number: c.id for c in CLAIMS.values()} == CATALOGUE
    assert [c.number for c in list_claims()] == sorted(CATALOGUE)
    assert [c.id for c in list_claims("raghu2021.*")] == [CATALOGUE[n] for n in (17, 18, 24, 25, 26, 27)]


def test_a_claim_that_disputes_another_names_one_of_the_catalogue_from_another_paper():
    disputes = {c.id: c.contradicts for c in CLAIMS.values() if c.contradicts}
    assert disputes == {"bai2021.same-recipe-adversarial": ("park2022.msa-adversarial-robust",)}
    for claim_id, disputed in disputes.items():
        assert all(CLAIMS[d].paper.key != CLAIMS[claim_id].paper.key for d in disputed)
    (part,) = CLAIMS["bai2021.same-recipe-adversarial"].parts
    assert (part.direction, part.threshold, CLAIMS["bai2021.same-recipe-adversarial"].level) == ("within", 0.05, 0.90)
    assert part.rule.endswith("within ±0.05") and "Disputes claim 16" in catalogue_markdown()
    (dispute,) = CLAIMS["bai2021.same-recipe-adversarial"].disputes  # Park & Kim's side, on Bai et al.'s statistic
    assert (dispute.part, dispute.direction, dispute.threshold) == ("pgd-drop-equivalent", "less", 0.0)


def test_every_claim_cites_its_paper_and_states_units_and_rules():
    for c in CLAIMS.values():
        assert c.paper.url.startswith("https://arxiv.org/abs/") and c.section and c.statement and c.units
        assert c.evidence.startswith(c.paper.citation.rsplit(" ", 1)[0]), c.id  # "Raghu et al. Fig. 9-10 (...)"
        assert any(ref in c.evidence for ref in ("Fig.", "App.", "Sec.")), c.id
        assert c.parts and all(p.rule for p in c.parts)


def test_every_part_reads_a_checkpoint_that_training_keeps():
    """The model store takes a part's checkpoint as it is, with no narrowing to "final": a value outside the
    training loop's checkpoints would ask for weights no training keeps."""
    from model_props.training.loop import CHECKPOINTS

    read = {p.checkpoint for c in CLAIMS.values() for p in c.parts}
    assert read <= set(CHECKPOINTS), sorted(read - set(CHECKPOINTS))
    assert "warmup" in read  # the catalogue reads the end of warm-up too: the Hessian spectra (park2022_landscape)


def test_claim_fingerprint_follows_the_decision_rules():
    import dataclasses

    claim = get_claim("park2022.msa-lowpass")
    assert claim.fingerprint() == get_claim("park2022.msa-lowpass").fingerprint()
    assert dataclasses.replace(claim, statement="reworded").fingerprint() == claim.fingerprint()
    moved = dataclasses.replace(claim, parts=(dataclasses.replace(claim.parts[0], threshold=0.1),))
    assert moved.fingerprint() != claim.fingerprint()


def test_unknown_claim_lists_valid_ids():
    with pytest.raises(ModelPropsError, match=r"unknown claim 'park2022.nope'; valid: .*'park2022.msa-lowpass'"):
        get_claim("park2022.nope")


@pytest.mark.parametrize(
    ("claim", "model", "reason"),
    [
        ("park2022.msa-lowpass", "resnet", "resnet has no msa units"),
        ("raghu2021.skip-dominates", "resnet", "resnet lacks global_msa (traits: conv, multi_stage)"),
        ("raghu2021.attention-distance-grows", "swin", "swin lacks global_msa"),
        ("raghu2021.attention-distance-grows", "alternet", "alternet lacks global_msa"),
    ],
)
def test_claim_skips_a_model_without_the_trait_and_names_it(claim, model, reason):
    assert reason in get_claim(claim).skip_reason(smoke_anatomy(model))


def test_a_claim_whose_defining_part_does_not_apply_is_not_applicable():
    """ "MSAs reduce variance" on a model without MSAs is not applicable, not supported on its conv parts."""
    claim = get_claim("park2022.msa-reduces-variance")
    assert claim.skip_reason(smoke_anatomy("resnet")) == "resnet has no msa units"
    assert (
        claim.undefined_by({"msa": "x has no msa units"})
        == "its defining part 'msa' does not apply: x has no msa units"
    )
    assert claim.undefined_by({"conv-mlp": "none"}) is None


@pytest.mark.parametrize(
    "claim",
    sorted(
        set(CATALOGUE.values())
        - {
            "park2022.smoothing-helps",
            "park2022.multistage-local-flatten",
            "park2022.lesion-stage-pattern",
            "park2022.alternet-beats-resnet",
            "park2022.alternet-buildup",
        }
    ),
)  # about ResNet, multi-stage models, local attention, hybrids, the build-up rule
def test_every_claim_about_vit_applies_to_vit(claim):
    assert get_claim(claim).skip_reason(smoke_anatomy("vit"), "vit", list_recipes("smoke")) is None


def test_a_comparison_of_variants_runs_on_its_reference_only():
    claim = get_claim("park2022.gap-convexifies")
    anat = smoke_anatomy("vit")
    assert claim.skip_reason(anat, "vit", list_recipes("smoke")) is None
    assert claim.skip_reason(anat, "timm:vit_tiny_patch16_224", list_recipes("smoke")) == (
        "it compares the profile's models vit_gap, vit and runs on the reference 'vit' only"
    )
    assert claim.skip_reason(anat, "vit", ["vit"]) == "the profile has no recipe 'vit_gap' to compare with"


def test_summary_json_contract(tmp_path):
    records = [
        {
            "claim": "park2022.msa-lowpass",
            "model": "vit",
            "verdict": "supported",
            "statistic": "s",
            "value": -0.1,
            "interval": [-0.2, -0.05],
            "reason": "r",
            "outcome": "passed",
        },
        {
            "claim": "park2022.msa-lowpass",
            "model": "resnet",
            "verdict": "skipped",
            "statistic": None,
            "value": None,
            "interval": None,
            "reason": "resnet has no msa units",
            "outcome": "skipped",
        },
    ]
    write_summary(
        tmp_path,
        profile="smoke",
        seed=0,
        models={"vit": {"accuracy": 0.8, "parameters": 1, "checkpoint_sha256": "ab"}},
        results=records,
        provenance={"versions": {"torch": "2"}},
    )
    data = json.loads((tmp_path / "summary.json").read_text())
    assert set(data) >= {"schema_version", "profile", "seed", "train_seed", "provenance", "models", "results"}
    assert data["schema_version"] == 4 and data["provenance"]["versions"]["torch"] == "2"
    assert data["claim_outcomes"] == {"passed": 1, "inconclusive": 0, "failed": 0, "xfailed": 0, "skipped": 1}
    assert data["outcomes"] == data["claim_outcomes"]  # without pytest's counts (no session), the records' own
    assert data["profile"] == "smoke" and data["seed"] == 0 and data["models"]["vit"]["accuracy"] == 0.8
    for r in data["results"]:
        assert set(r) >= {"claim", "model", "verdict", "statistic", "value", "interval", "reason"}
        assert r["verdict"] in {"supported", "contradicted", "inconclusive", "skipped", "xfailed"}
    md = (tmp_path / "summary.md").read_text()
    assert "park2022.msa-lowpass" in md and "ok -0.1" in md


def test_a_part_whose_selection_is_empty_is_skipped_with_the_reason():
    """MobileViT's only conv units subsample: the conv/MLP variance part selects nothing and is skipped (not a
    failure), while the MSA part is still decided."""
    import numpy as np

    from model_props.anatomy import Anatomy, Tap, Unit
    from model_props.measurements.functional import MinibatchCKA
    from model_props.measurements.units import UnitReport
    from model_props.verdicts import Evidence, Measured, OnReports, Skipped, judge

    tap = Tap("net.x")
    units = (
        Unit(0, "embed", "embed", 0, 0.0, tap),
        Unit(1, "down", "conv", 1, 0.5, tap, subsamples=True),
        Unit(2, "attn", "msa", 1, 1.0, tap, tap, tap),
    )
    anat = Anatomy(
        "mobilevit-like",
        (*units, Unit(3, "head", "head", 1, 1.0, Tap("net", "output", "logits"))),
        frozenset({"conv", "global_msa", "multi_stage"}),
    )
    rng = np.random.default_rng(0)
    variance = np.cumsum(rng.random((64, 3)), axis=1)[:, [0, 2, 1]]  # the MSA unit lowers the variance
    report = UnitReport(
        units, 64, 32, rng.random((64, 3)), variance, np.full((64, 3), np.nan), np.full((64, 3), np.nan), MinibatchCKA()
    )
    claim = get_claim("park2022.msa-reduces-variance")
    assert claim.skip_reason(anat) is None
    measured = OnReports(Measured("mobilevit-like", report, "test"))
    parts = {p.name: measured if p.applies(anat) is None else Skipped(str(p.applies(anat))) for p in claim.parts}
    outcome = judge(Evidence(claim, "mobilevit-like", "checkpoint", parts), n_boot=200)
    verdicts = {p.part.name: (p.verdict, p.reason) for p in outcome.parts}
    assert verdicts["conv-mlp"] == ("skipped", "the model has no non-subsampling conv or MLP units")
    assert verdicts["msa"][0] == "supported" and outcome.verdict == "supported"


def test_a_resnet_whose_branches_output_zero_has_no_skip_ratio_and_claim_17_says_why(dataset):
    """An untrained ResNet's blocks end in a zeroed BatchNorm (timm's ``zero_init_last``): each residual unit's
    ratio is undefined, so the vs-resnet part is skipped with that reason, where the clamp of ||f(x)|| used to give
    ratios of 1e12 and more (a GPU run's verdict read -7.1e13); the same blocks with that BatchNorm set to one have
    a finite ratio on every image."""
    import numpy as np
    import torch

    from model_props.data import class_balanced_subset
    from model_props.errors import NotApplicable
    from model_props.measurements.units import measure_units

    torch.manual_seed(0)
    model = tiny_resnet()
    last = [m.bn2 for m in model.modules() if type(m).__name__ == "BasicBlock"]
    assert last and all(bn.weight.abs().max() == 0 for bn in last)
    split = class_balanced_subset(dataset.test, 0.05, seed=0)
    fresh = measure_units(model.eval(), anatomy(model), split, n_images=16, batch_size=8)
    assert np.isnan(fresh.skip_ratio).all()
    statistic = get_claim("raghu2021.skip-dominates").parts[0].statistic
    with pytest.raises(NotApplicable, match="a branch that outputs zero"):
        statistic(fresh, np.arange(16)[None])
    with torch.no_grad():
        for bn in last:
            bn.weight.fill_(1.0)
    moved = measure_units(model.eval(), anatomy(model), split, n_images=16, batch_size=8)
    residual = ~np.isnan(moved.skip_ratio).all(axis=0)
    assert residual.sum() == len(last) and np.isfinite(moved.skip_ratio[:, residual]).all()
    assert np.isfinite(statistic(moved, np.arange(16)[None])).all()
