"""model-props as a dependency of someone else's project: the wheel, an inert plugin, the suite from outside.

The wheel is installed (not editable) into a fresh virtualenv that reuses this environment's packages
through a ``.pth`` line (so nothing is downloaded), and every command runs from a folder outside this
checkout, as in a user's repository.
"""

from __future__ import annotations

import json
import textwrap
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def wheel(installed) -> Path:
    return installed[0]


@pytest.fixture
def venv(installed) -> Path:
    return installed[1]


def test_wheel_carries_the_recipes_the_study_data_and_the_suite(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in (
        "smoke.toml",
        "paper.toml",
        "smoke-seeds.json",
        "smoke-canaries.json",
        "smoke-expectations.json",
        "smoke-grid.json",
    ):
        assert f"model_props/fixtures/{name}" in names, name
    assert "model_props/suite/test_claims.py" in names
    packages = {p.parent.relative_to(ROOT).as_posix() for p in (ROOT / "model_props").rglob("__init__.py")}
    assert {p for p in packages if f"{p}/__init__.py" not in names} == set(), "subpackages missing from the wheel"


def test_installed_package_loads_profiles_and_runs_the_cli(venv, tmp_path, user_shell):
    probe = user_shell(
        venv,
        "python",
        "-c",
        "import model_props, model_props.training.profiles as r; "
        "print(model_props.__file__); print(r.load_profile('smoke').references, r.available_profiles())",
        cwd=tmp_path,
    )
    assert probe.returncode == 0, probe.stderr
    where, profiles = probe.stdout.splitlines()
    assert str(venv) in where and str(ROOT) not in where, "imported the checkout, not the installed wheel"
    assert profiles.startswith("['vit', 'pit', 'swin', 'resnet', 'alternet']")
    cli = user_shell(venv, "model-props", "recipes", cwd=tmp_path)
    assert cli.returncode == 0 and cli.stdout.split()[0] == "vit", cli.stderr


def test_unrelated_project_is_untouched(venv, tmp_path, user_shell):
    """An installed plugin changes nothing in a session that does not use it: no output, no torch."""
    (tmp_path / "test_arith.py").write_text(
        "import pytest\n\n@pytest.mark.claim\ndef test_sum():\n    assert 1 + 1 == 2\n"
    )
    (tmp_path / "conftest.py").write_text(
        textwrap.dedent("""
        import sys

        def pytest_unconfigure(config):
            print("TORCH LOADED:", "torch" in sys.modules)
    """)
    )
    result = user_shell(venv, "python", "-m", "pytest", "-p", "no:cacheprovider", "--strict-markers", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout and "TORCH LOADED: False" in result.stdout
    assert "model-props" not in result.stdout.replace("plugins:", "").split("collected")[1]
    assert not (tmp_path / "reports").exists()


def test_claim_suite_runs_on_a_user_model_from_the_users_repository(user_suite):
    """``pytest --pyargs model_props.suite --model pkg:factory --checkpoint=FILE`` from a user's project."""
    project, result = user_suite
    summary = project / "reports" / "summary.json"
    assert summary.is_file(), result.stdout[-3000:] + result.stderr[-3000:]
    data = json.loads(summary.read_text())
    assert set(data["models"]) == {"mypkg.models:build"}
    assert {r["model"] for r in data["results"]} == {"mypkg.models:build"}
    assert {r["claim"] for r in data["results"]} >= {"park2022.msa-lowpass", "raghu2021.skip-dominates"}
    lowpass = next(r for r in data["results"] if r["claim"] == "park2022.msa-lowpass")
    # an untrained model is at chance: the claims that read it say so instead of judging noise
    assert lowpass["verdict"] == "skipped" and "below twice chance" in lowpass["reason"], lowpass
    assert data["provenance"]["versions"]["model-props"]
    assert list((project / "reports" / "allure-results").glob("*-result.json")), (
        "Allure results go to reports/ by default"
    )
    assert "model-props: claim verdicts" in result.stdout
