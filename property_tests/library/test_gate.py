"""The release gate end to end through pytester: a passing gate, a failing gate, and gate tables that are wrong.

The candidate is a user's model (``usermodels:good``, a small CNN) with a checkpoint file, gated against a
baseline checkpoint of the same model on test-set statistics (cheap: one pass over the test images).
"""

from __future__ import annotations

import json
import textwrap

import pytest
import torch
from safetensors.torch import save_file


def _weights(user_module: str, *, logit_scale: float = 1.0) -> dict[str, torch.Tensor]:
    """The CNN's seeded initial weights; ``logit_scale`` multiplies the classifier (same argmax, sharper logits)."""
    import importlib

    torch.manual_seed(0)
    state = {k: v.clone() for k, v in importlib.import_module(user_module).good().state_dict().items()}
    state["3.weight"] *= logit_scale
    state["3.bias"] *= logit_scale
    return state


@pytest.fixture
def gate_project(inprocess: pytest.Pytester, user_module, tmp_path, monkeypatch, model_store):
    """A user's project: the baseline in ``runs/``, a ``run(candidate_state, table)`` that writes the gate table,
    saves the candidate and runs ``pytest --pyargs model_props.suite -m gate``."""
    pytester = inprocess
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))  # where usermodels lives
    runs = pytester.path / "runs"
    runs.mkdir()
    save_file(_weights(user_module), runs / "baseline.safetensors")

    def run(candidate: dict[str, torch.Tensor], table: str, *args: str):
        pytester.makepyprojecttoml(textwrap.dedent(table))
        save_file(candidate, runs / "candidate.safetensors")
        return pytester.runpytest_inprocess(
            "--pyargs",
            "model_props.suite",
            "-m",
            "gate",
            "--model",
            f"{user_module}:good",
            "--checkpoint",
            str(runs / "candidate.safetensors"),
            f"--claims-cache={model_store.settings.cache_dir}",
            "-p",
            "no:randomly",
            *args,
        )

    return run


TOLERANCES = """
    [tool.model_props.gate]
    baseline = "runs/baseline.safetensors"

    [tool.model_props.gate.tolerances]
    accuracy = 0.01
    nll = 0.05
"""


def test_unchanged_candidate_passes_the_gate(gate_project, user_module, pytester):
    """The baseline's own weights: every paired difference is exactly 0, inside any tolerance; the attack's tolerance
    is tested sequentially and passes at its first look of 64 images."""
    result = gate_project(_weights(user_module), TOLERANCES + "    pgd_drop_1 = 0.02\n")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.assert_outcomes(passed=3, deselected=None)
    result.stdout.fnmatch_lines(
        ["PASS gate pgd_drop_1 *95% CI [[]+0, +0[]] repeated interval at look 1 of 8, over 64 paired images of 512 *"]
    )
    result.stdout.fnmatch_lines(
        [
            "*model-props: release gate tolerances*",
            "PASS gate accuracy (test accuracy; lower is worse): candidate usermodels:good * "
            "baseline baseline.safetensors *difference (candidate - baseline) +0, 95% CI [[]+0, +0[]]*"
            "its lower bound +0 is within the tolerance (lower bound >= -0.01)",
            "PASS gate nll *",
        ]
    )
    summary = json.loads((pytester.path / "reports" / "summary.json").read_text())
    assert [(g["statistic"], g["passed"]) for g in summary["gate"]] == [
        ("accuracy", True), ("nll", True), ("pgd_drop_1", True)
    ]  # fmt: skip
    assert summary["gate_decision"] == {"passed": True, "decision": "passed"}


def test_the_gate_refuses_a_run_with_an_error_whatever_its_tolerances(tmp_path):
    """A run with one pass and one error: the summary counts the error, and the gate's decision is refused even though
    every tolerance held (issue 61)."""
    from model_props.reporting.summary import write_summary

    gate = [{"statistic": "accuracy", "passed": True, "message": "PASS gate accuracy ..."}]
    write_summary(tmp_path, profile="smoke", seed=0, models={}, results=[], gate=gate,
                  outcomes={"passed": 1, "failed": 0, "errors": 1}, run={"exit_status": 1})  # fmt: skip
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["outcomes"]["errors"] == 1 and summary["run"]["exit_status"] == 1
    assert summary["gate_decision"] == {"passed": False, "decision": "refused: 1 error; exit status 1"}
    assert "Release gate: refused: 1 error; exit status 1" in (tmp_path / "summary.md").read_text()
    exceeded = [*gate, {"statistic": "nll", "passed": False, "message": "FAIL gate nll ..."}]
    write_summary(tmp_path, profile="smoke", seed=0, models={}, results=[], gate=exceeded,
                  outcomes={"passed": 1, "failed": 1}, run={"exit_status": 1})  # fmt: skip
    decision = json.loads((tmp_path / "summary.json").read_text())["gate_decision"]["decision"]
    assert decision == "refused: 1 failed; the nll tolerance is exceeded; exit status 1"


def test_regressed_candidate_fails_the_gate_and_names_the_numbers(gate_project, user_module):
    """A classifier scaled x30 keeps every argmax (accuracy passes) but is overconfident: the NLL difference's
    upper bound exceeds 0.05 and the run exits non-zero with both models' numbers and the tolerance."""
    result = gate_project(_weights(user_module, logit_scale=30.0), TOLERANCES)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "FAIL gate nll (test NLL; higher is worse): candidate usermodels:good * [[]*, *[]], "
            "baseline baseline.safetensors * [[]*, *[]]; difference (candidate - baseline) +*, "
            "95% CI [[]+*, +*[]] over * paired images: its upper bound +* EXCEEDS the tolerance "
            "(upper bound <= +0.05)"
        ]
    )
    assert "PASS gate accuracy" in out and "Traceback" not in out


def test_the_gate_decides_a_run_of_gating_claims_alone(tmp_path):
    """A gate with claims and no tolerance has no tolerance record, but it is a gate: its decision is written (passed
    when every test passed), and a run without a gate has none."""
    from model_props.reporting.summary import gate_decision

    assert gate_decision([], {"passed": 2}, {"exit_status": 0}, gated=True) == {"passed": True, "decision": "passed"}
    assert gate_decision([], {"passed": 1, "failed": 1}, {"exit_status": 1}, gated=True) == {
        "passed": False, "decision": "refused: 1 failed; exit status 1"
    }  # fmt: skip
    assert gate_decision([], {"passed": 2}, {"exit_status": 0}) is None


def test_a_gating_claim_that_cannot_be_judged_refuses_the_gate(gate_project, user_module, pytester):
    """The candidate, a small CNN, has no MSA unit, so park2022.msa-lowpass does not apply to it. Run as a claim
    test, it skips; where it gates the release, its test fails, and the gate's decision is refused: a gate passes
    only on claims it judged supported."""
    alone = gate_project(_weights(user_module), "", "-m", "claim", "-k", "msa-lowpass")
    alone.assert_outcomes(skipped=1, deselected=None)
    result = gate_project(_weights(user_module), '[tool.model_props.gate]\nclaims = ["park2022.msa-lowpass"]\n')
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(failed=1, deselected=None)
    result.stdout.fnmatch_lines(["*park2022.msa-lowpass gates the release but cannot be judged on usermodels:good: *"])
    assert "Traceback" not in result.stdout.str()
    summary = json.loads((pytester.path / "reports" / "summary.json").read_text())
    assert summary["gate_decision"] == {"passed": False, "decision": "refused: 1 failed; exit status 1"}


STUB = """
import pytest


class Inconclusive:
    \"\"\"What check_claim gives for a claim found inconclusive, as assert_claim reads it.\"\"\"

    parts = ()

    def assert_expected(self, inconclusive):
        assert inconclusive == "report", f"told to {inconclusive} on an inconclusive claim"
        return "inconclusive"


@pytest.fixture
def check_claim():
    return lambda claim, tested: Inconclusive()
"""


GATING_CONV_MLP = '[tool.model_props.gate]\nclaims = ["park2022.conv-mlp-highpass"]\n'


@pytest.fixture
def stubbed_suite(inprocess, user_module, tmp_path, monkeypatch, model_store):
    """The claim suite pulled into a project's own test module, on the user's CNN with a checkpoint:
    ``run(stub, table, *args)`` writes the conftest ``stub`` (a check_claim of its own) and the pyproject ``table``,
    and runs the suite's conv-mlp-highpass test."""
    pytester = inprocess
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    save_file(_weights(user_module), pytester.path / "candidate.safetensors")
    pytester.makepyfile(test_mine="from model_props.suite.test_claims import *  # noqa: F403")

    def run(stub: str, table: str, *args: str):
        pytester.makeconftest(stub)
        pytester.makepyprojecttoml(table)
        return pytester.runpytest_inprocess(
            "--model", f"{user_module}:good", "--checkpoint", str(pytester.path / "candidate.safetensors"),
            f"--claims-cache={model_store.settings.cache_dir}", "-p", "no:randomly", "-k", "conv-mlp-highpass", *args,
        )  # fmt: skip

    return run


def test_an_inconclusive_gating_claim_refuses_the_gate_whatever_claims_inconclusive_says(stubbed_suite):
    """With a check_claim that finds every claim inconclusive: under --claims-inconclusive report, a claim test is
    reported INCONCLUSIVE, but the same claim gating the release fails its test."""
    reported = stubbed_suite(STUB, "[tool.model_props]\n", "--claims-inconclusive", "report")
    assert reported.parseoutcomes().get("inconclusive") == 1, reported.stdout.str()
    gated = stubbed_suite(STUB, GATING_CONV_MLP, "--claims-inconclusive", "report", "-m", "gate")
    gated.assert_outcomes(failed=1, deselected=None)
    gated.stdout.fnmatch_lines(["*told to fail on an inconclusive claim*"])


EXPECTED_INCONCLUSIVE = """
import pytest
from types import SimpleNamespace


class ExpectedInconclusive:
    \"\"\"What check_claim gives for a reference whose snapshot expects the claim inconclusive: assert_expected
    returns the expected verdict whatever it is told.\"\"\"

    parts = (SimpleNamespace(verdict="inconclusive", describe=lambda: "[conv-mlp] INCONCLUSIVE as expected"),)

    def assert_expected(self, inconclusive):
        return "inconclusive"


@pytest.fixture
def check_claim():
    return lambda claim, tested: ExpectedInconclusive()
"""


def test_a_gating_claim_found_inconclusive_as_its_snapshot_expects_fails(stubbed_suite):
    """A claim test judged against an expectation snapshot returns the inconclusive verdict the snapshot expects;
    where the claim gates the release, its test fails and names the inconclusive part."""
    gated = stubbed_suite(EXPECTED_INCONCLUSIVE, GATING_CONV_MLP, "-m", "gate")
    gated.assert_outcomes(failed=1, deselected=None)
    gated.stdout.fnmatch_lines(["*park2022.conv-mlp-highpass gates the release but is inconclusive on usermodels*",
                                "*INCONCLUSIVE as expected*"])  # fmt: skip
    assert "Traceback" not in gated.stdout.str()


def test_gating_claims_are_marked_gate(gate_project, user_module):
    table = '[tool.model_props.gate]\nclaims = ["park2022.msa-lowpass", "park2022.multistage-block-cka"]\n'
    result = gate_project(_weights(user_module), table, "--collect-only", "-q")
    assert result.ret == pytest.ExitCode.OK  # and fnmatch_lines fails unless each line matches, in order
    result.stdout.fnmatch_lines(
        [
            "*test_claims.py::test_claim[[]park2022.msa-lowpass-usermodels:good[]]",
            "*test_claims.py::test_claim[[]park2022.multistage-block-cka-usermodels:good[]]",
            "2/* tests collected (* deselected)*",
        ]
    )


@pytest.mark.bad_input
@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            'claims = ["park2022.msa-lowpas"]',
            "*[[]tool.model_props.gate[]]: unknown claims [[]'park2022.msa-lowpas'[]]; valid: *'park2022.msa-lowpass'*",
        ),
        (
            'baseline = "runs/baseline.safetensors"\n[tool.model_props.gate.tolerances]\nhigh_freq_drop = 0.02',
            "*[[]tool.model_props.gate[]].tolerances: unknown statistics [[]'high_freq_drop'[]]; valid: 'accuracy', *"
            "'high_frequency_noise_drop'*",
        ),
        ("[tool.model_props.gate.tolerances]\nnll = 0.05", "*tolerances compare with a baseline; give baseline = *"),
        (
            'baseline = "runs/baseline.safetensors"\n[tool.model_props.gate.tolerances]\nnll = -1',
            "*tolerances: nll=-1 must be a number >= 0*",
        ),
        (
            'baseline = "runs/nowhere.safetensors"',
            "*[[]tool.model_props.gate[]] baseline '*nowhere.safetensors' does not exist*",
        ),
        (
            'baseline = "runs/baseline.safetensors"\n[tool.model_props.gate.tolerances]\npgd_drop_8 = 0.02',
            "*[[]tool.model_props.gate[]].tolerances: pgd_drop_8: profile 'smoke' attacks at eps 1/255, 2/255, 4/255 "
            "only (its [[]measurement[]] attack_epsilons_255)*",
        ),
        (
            'claim = ["park2022.msa-lowpass"]',
            "*[[]tool.model_props.gate[]]: unknown keys [[]'claim'[]]; valid: 'baseline', 'claims', 'tolerances'*",
        ),
    ],
    ids=[
        "unknown-claim",
        "unknown-statistic",
        "no-baseline",
        "negative-tolerance",
        "missing-baseline",
        "unmeasured-radius",
        "unknown-key",
    ],
)
def test_bad_gate_table_is_a_one_line_usage_error(gate_project, user_module, table, message):
    result = gate_project(_weights(user_module), "[tool.model_props.gate]\n" + table + "\n", "--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert "Traceback" not in result.stderr.str()


def _known_failure() -> str:
    """A claim the committed expectation snapshot holds contradicted on every reference it is evaluated on."""
    from model_props.claims import list_claims
    from model_props.training.profiles import load_profile
    from model_props.verdicts.snapshot import load_snapshot

    snapshot, references = load_snapshot("smoke"), load_profile("smoke").references
    assert snapshot is not None
    for claim in list_claims():
        on = [e for m in references if (e := snapshot.expected(claim, m)) is not None]
        if on and all("contradicted" in e.parts.values() for e in on):
            return claim.id
    raise AssertionError("the smoke snapshot holds no claim contradicted on every reference: pick another case")


@pytest.mark.bad_input
def test_gating_on_a_known_failure_is_a_one_line_usage_error(gate_project, user_module):
    claim_id = _known_failure()
    result = gate_project(
        _weights(user_module), f'[tool.model_props.gate]\nclaims = ["{claim_id}"]\n', "--collect-only"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            f"*[[]tool.model_props.gate[]] claims: {claim_id} is a known failure (its expectation snapshot holds it "
            f"contradicted on *) at profile 'smoke', so gating on it would always fail*"
        ]  # fmt: skip
    )
    assert "Traceback" not in result.stderr.str()


@pytest.mark.bad_input
@pytest.mark.parametrize(
    ("claim_id", "held"),
    [("park2022.conv-mlp-highpass", "inconclusive"), ("park2022.msa-reduces-variance", "contradicted and supported")],
)
def test_gating_a_reference_on_a_claim_it_is_not_expected_to_support_is_a_one_line_usage_error(
    inprocess, model_store, claim_id, held
):
    """A candidate that is one of the profile's references is judged against its expectation snapshot, which would
    pass it on a claim it expects inconclusive (or contradicted in one part only): the table is refused. A claim it
    expects supported is accepted."""
    from model_props.claims import get_claim
    from model_props.verdicts.snapshot import load_snapshot

    snapshot = load_snapshot("smoke")
    assert snapshot is not None
    expected = snapshot.expected(get_claim(claim_id), "vit")
    assert expected is not None and " and ".join(sorted(set(expected.parts.values()))) == held
    args = ["--pyargs", "model_props.suite", "-m", "gate", "--model", "vit", "--collect-only",
            f"--claims-cache={model_store.settings.cache_dir}", "-p", "no:randomly"]  # fmt: skip
    inprocess.makepyprojecttoml(f'[tool.model_props.gate]\nclaims = ["{claim_id}"]\n')
    result = inprocess.runpytest_inprocess(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*[[]tool.model_props.gate[]] claims: {claim_id} is not expected supported on vit "
                                 f"(its snapshot holds parts {held}) at profile 'smoke', so gating on it would always "
                                 "fail*"])  # fmt: skip
    assert "Traceback" not in result.stderr.str()
    inprocess.makepyprojecttoml('[tool.model_props.gate]\nclaims = ["park2022.msa-lowpass"]\n')
    accepted = inprocess.runpytest_inprocess(*args)
    assert accepted.ret == pytest.ExitCode.OK, accepted.stdout.str() + accepted.stderr.str()


def test_baseline_from_other_versions_is_warned_about(gate_project, user_module, pytester):
    meta = {"model_props": json.dumps({"versions": {"torch": "1.13.0", "timm": "0.6.12"}}, sort_keys=True)}
    save_file(_weights(user_module), pytester.path / "runs" / "old.safetensors", metadata=meta)
    table = '[tool.model_props.gate]\nbaseline = "runs/old.safetensors"\n[tool.model_props.gate.tolerances]\naccuracy = 0.01\n'
    result = gate_project(_weights(user_module), table, "--collect-only", "-q")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        [
            "*UserWarning: model-props gate: the baseline old.safetensors was produced with "
            "torch 1.13.0 (now *), timm 0.6.12 (now *); its numbers are measured again now*"
        ]
    )
