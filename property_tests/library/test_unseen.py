"""The claim suite on timm architectures that are not references, end to end, as a user runs it:
``pytest --pyargs model_props.suite --model timm:NAME``. The model is trained with the profile's custom recipe
(a shorter budget through ``--claims-steps``), every applicable claim is decided against the references, and
every other one is skipped with its reason. One small CNN runs by default; a hybrid and a ViT at its native
resolution are ``slow``.
"""

from __future__ import annotations

import json

import pytest

UNSEEN = [
    pytest.param("timm:test_resnet", ["--claims-steps=200"], id="cnn-test_resnet"),
    pytest.param("timm:mobilevit_xxs", ["--claims-steps=750"], id="hybrid-mobilevit_xxs", marks=pytest.mark.slow),
    pytest.param(
        "timm:deit_tiny_patch16_224",
        ["--claims-steps=500", "--claims-img-size=64"],
        id="vit-deit_tiny-64px",
        marks=pytest.mark.slow,
    ),
]


@pytest.mark.parametrize(("spec", "options"), UNSEEN)
def test_claim_suite_runs_on_an_unseen_architecture(inprocess: pytest.Pytester, model_store, spec, options):
    # in process (the installed-package tests run the suite on a user's model in a subprocess, from outside
    # the checkout)
    result = inprocess.runpytest_inprocess(
        "--pyargs",
        "model_props.suite",
        "--model",
        spec,
        *options,
        f"--claims-cache={model_store.settings.cache_dir}",
        "-p",
        "no:cacheprovider",
    )
    summary_path = inprocess.path / "reports" / "summary.json"
    assert summary_path.is_file(), result.stdout.str()[-3000:]
    summary = json.loads(summary_path.read_text())
    records = [r for r in summary["results"] if r["model"] == spec]
    assert len(records) == len({r["claim"] for r in summary["results"]}), "one record per claim"
    assert all(r["reason"] for r in records if r["verdict"] == "skipped"), "every skip says why"
    decided = [r for r in records if r["verdict"] in ("supported", "contradicted", "inconclusive")]
    assert decided, "at least one claim applies to it and is decided"
    assert "errors" not in result.parseoutcomes(), result.stdout.str()[-3000:]
    if "--claims-img-size=64" in options:
        assert summary["models"][spec]["provenance"] is not None
        compared = [r for r in records if r["verdict"] == "skipped" and "px models" in r["reason"]]
        assert compared, "claims that compare with the 32-px references are skipped with that reason"
