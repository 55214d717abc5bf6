"""Every claim statistic evaluates all bootstrap resamples in one call over an index matrix; row by row, one resample
at a time, it gives the same values (to 1e-12), on the live reports of every reference it applies to. A part whose
report is of a run this session does not train (a variant or an independent run, by default) or of a kind it does
not measure on the live weights (a Hessian spectrum or a PGD attack, by default) is checked with ``--claims-live=all``."""

import numpy as np
import pytest

from model_props.claims import list_claims
from model_props.errors import NotApplicable
from model_props.session.live import needs_switch, not_live_report, unmeasured_reports

PARTS = [(c, p) for c in list_claims() for p in c.parts]


@pytest.mark.parametrize(("claim", "part"), PARTS, ids=[f"{c.id}-{p.name}" for c, p in PARTS])
def test_the_vectorised_statistic_equals_the_per_resample_loop(claim, part, model_store):
    checked, missing = 0, []
    for model in model_store.profile.references:
        anat = model_store.architecture(model)
        if claim.skip_reason(anat, model, model_store.profile.recipes) or part.applies(anat):
            continue
        if unmeasured := unmeasured_reports(model_store.settings, [part]):
            missing += unmeasured
            continue
        if not_live := not_live_report(model_store.settings, part.subject or model, part.reads):
            missing += not_live
            continue
        report = model_store.report(part.subject or model, part.reads, part.checkpoint)
        n = report.size(part.sampling)
        idx = np.random.default_rng(0).integers(0, n, (40, n))
        try:
            matrix = np.asarray(part.statistic(report, idx), dtype=float)
        except NotApplicable:  # the statistic finds nothing to read in this model's report
            continue
        loop = np.array([float(np.asarray(part.statistic(report, row[None, :]))[0]) for row in idx])
        assert matrix.shape == (40,)
        np.testing.assert_allclose(matrix, loop, rtol=0, atol=1e-12, equal_nan=True)
        checked += 1
        if part.subject:  # a named model's report is the same whichever reference the claim runs on
            break
    if not checked and missing:
        pytest.skip(needs_switch(f"{claim.id} [{part.name}]", list(dict.fromkeys(missing))))
    if not checked:
        pytest.skip(f"{claim.id} [{part.name}] reads no report of a reference here")
