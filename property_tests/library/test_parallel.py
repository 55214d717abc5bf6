"""``pytest -n 2`` gives the verdicts and numbers of a serial run, both measuring afresh over one model cache."""

from __future__ import annotations

import json
import math

import pytest

# unit-map claims (cheap to measure again) on a transformer and a CNN, one per worker under --dist loadgroup:
# six records, four of them with a measured value (ResNet has no MSA and no ViT-style skip to compare)
SUBSET = "(msa-lowpass or skip-dominates or multistage-block-cka) and (vit or resnet)"


def summary(pytester: pytest.Pytester, how: str, model_store, *workers: str) -> dict:
    """Run the subset ``how`` = "inprocess" or "subprocess"; the records of its summary.json by (claim, model)."""
    getattr(pytester, f"runpytest_{how}")(
        "--pyargs",
        "model_props.suite",
        "-k",
        SUBSET,
        "--claims-remeasure",
        "-p",
        "no:cacheprovider",
        f"--claims-cache={model_store.settings.cache_dir}",
        *workers,
    )
    path = pytester.path / "reports" / "summary.json"
    data = json.loads(path.read_text())
    path.unlink()
    return {(r["claim"], r["model"]): r for r in data["results"]}


def test_two_workers_give_the_serial_verdicts_and_numbers(inprocess: pytest.Pytester, model_store):
    """The serial run in process, the -n 2 run (its workers are processes anyway) in a subprocess."""
    serial = summary(inprocess, "inprocess", model_store, "-n", "0")
    parallel = summary(inprocess, "subprocess", model_store, "-n", "2", "--dist", "loadgroup")
    assert serial.keys() == parallel.keys() and len(serial) == 6
    assert sum(s["value"] is not None for s in serial.values()) >= 4
    for key, s in serial.items():
        p = parallel[key]
        assert (s["verdict"], s.get("measured_verdict")) == (p["verdict"], p.get("measured_verdict")), key
        for a, b in zip([s["value"], *(s["interval"] or [])], [p["value"], *(p["interval"] or [])]):
            assert (a is None and b is None) or math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9), (key, a, b)
