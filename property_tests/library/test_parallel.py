"""``pytest -n 2`` gives the verdicts and numbers of a serial run, both measuring afresh over one model cache."""

from __future__ import annotations

import json
import math

import pytest

# unit-map claims on a transformer and a CNN, one per worker under --dist loadgroup: six records, four of them with
# a measured value (ResNet has no MSA and no ViT-style skip to compare)
SUBSET = "(msa-lowpass or skip-dominates or multistage-block-cka) and (vit or resnet)"
# Both runs measure afresh (--claims-remeasure) and judge these weights (checkpoint scope), so every value compared
# is one each run measured itself; on 256 images (4 CKA mini-batches) that takes a second per model.
SMALL = "[measurement]\nn_images = 256\n"


def summary(pytester: pytest.Pytester, model_store, *workers: str) -> tuple[dict, dict]:
    """Run the subset in this process (``-n 2`` starts its workers as processes): its test outcomes, and the records
    of its summary.json by (claim, model)."""
    recipes = pytester.path / "recipes"
    recipes.mkdir(exist_ok=True)
    (recipes / "smoke.toml").write_text(SMALL)  # extends the built-in smoke profile: fewer images to measure
    result = pytester.runpytest_inprocess(
        "--pyargs",
        "model_props.suite",
        "-k",
        SUBSET,
        "--claims-remeasure",
        "--claims-scope=checkpoint",
        f"--claims-recipes={recipes}",
        "-p",
        "no:cacheprovider",
        f"--claims-cache={model_store.settings.cache_dir}",
        *workers,
    )
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), result.stdout.str()[-3000:]
    path = pytester.path / "reports" / "summary.json"
    data = json.loads(path.read_text())
    path.unlink()
    return result.parseoutcomes(), {(r["claim"], r["model"]): r for r in data["results"]}


def test_two_workers_give_the_serial_verdicts_and_numbers(inprocess: pytest.Pytester, model_store):
    outcomes, serial = summary(inprocess, model_store, "-n", "0")
    outcomes_n2, parallel = summary(inprocess, model_store, "-n", "2", "--dist", "loadgroup")
    kept = ("passed", "failed", "skipped", "xfailed", "xpassed", "errors")  # xdist reports no deselected count
    assert {k: outcomes.get(k, 0) for k in kept} == {k: outcomes_n2.get(k, 0) for k in kept}
    assert serial.keys() == parallel.keys() and len(serial) == 6
    assert all(s["scope"] == "checkpoint" for s in serial.values() if s["verdict"] != "skipped")
    assert sum(s["value"] is not None for s in serial.values()) >= 4
    for key, s in serial.items():
        p = parallel[key]
        assert (s["verdict"], s.get("measured_verdict")) == (p["verdict"], p.get("measured_verdict")), key
        for a, b in zip([s["value"], *(s["interval"] or [])], [p["value"], *(p["interval"] or [])]):
            assert (a is None and b is None) or math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9), (key, a, b)
