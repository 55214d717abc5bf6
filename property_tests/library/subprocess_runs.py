"""The subprocess runs that several library tests read, each one Python process or more started from here: the
shared Allure run, this checkout installed as a wheel into a fresh virtualenv with the claim suite run from a user's
project, and the packaged suite under ``pytest -n 2``. ``conftest.background`` starts them in threads early in the
session (they mostly wait on their processes); the fixtures of conftest.py hand them to the tests."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import textwrap
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path

# A claim test of an untrained ResNet through ``assert_claim``, run by :func:`allure_run` beside the packaged suite
# with ``--claims-inconclusive report``: its claim is inconclusive, which the run reports as its own outcome.
UNTRAINED_RESNET_TEST = textwrap.dedent("""
    from model_props.anatomy import anatomy
    from model_props.claims import get_claim
    from model_props.store.model_store import ModelUnderTest
    from model_props.zoo import build_model

    def test_resnet_claim(assert_claim):
        # timm initialises every block's last BN scale to zero: each conv unit is an identity, so its change
        # of the high-frequency amplitude is exactly 0 on every image and the rule "> 0" is inconclusive.
        # (The accuracy is recorded above twice chance so that the chance rule lets the part be measured.)
        model = build_model("resnet", num_classes=10).eval()
        tested = ModelUnderTest("untrained-resnet", model, anatomy(model), {"test_accuracy": 0.5}, None, None)
        outcome = assert_claim(get_claim("park2022.conv-mlp-highpass"), tested)
        (part,) = outcome.parts
        assert outcome.verdict == "inconclusive" and outcome.scope == "checkpoint"
        assert (part.estimate.value, part.estimate.low, part.estimate.high) == (0.0, 0.0, 0.0)
        assert "leaves the feature map exactly as it was on every image" in part.degenerate  # says why, not "more data"
        assert "DEGENERATE" in part.describe() and part.minimum_detectable_effect is None
""")
# the packaged suite's tests of one claim (supported on vit in every seed of the smoke study, does not apply to
# resnet), and of a disagreement between papers on vit: Bai et al. against Park & Kim's claim 16
ALLURE_RUN_SUITE = "(msa-lowpass and (vit or resnet)) or ((same-recipe or msa-adversarial) and vit)"


@dataclass(frozen=True)
class AllureRun:
    folder: Path  # where it ran: reports/ (summary, allure-report/) and allure-results/ are under it
    stdout: str
    returncode: int
    html: bool  # whether it generated the HTML report (Allure 3 and Node.js are installed)

    @property
    def results(self) -> Path:
        return self.folder / "allure-results"


def run_allure(folder: Path, cache_dir: Path) -> AllureRun:
    from model_props.errors import ModelPropsError
    from model_props.reporting.html import find_allure

    (folder / "test_untrained.py").write_text(UNTRAINED_RESNET_TEST)
    try:
        find_allure(folder / "reports")
        html = True
    except ModelPropsError:
        html = False
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "test_untrained.py", "--pyargs",
         "model_props.suite", "-k", f"({ALLURE_RUN_SUITE}) or test_resnet_claim", "--alluredir=allure-results",
         f"--claims-cache={cache_dir}", "--claims-inconclusive=report", "--junitxml=junit.xml",
         *(["--claims-html"] if html else [])],
        cwd=folder, capture_output=True, text=True,
    )  # fmt: skip
    return AllureRun(folder, proc.stdout + proc.stderr, proc.returncode, html)


ROOT = Path(__file__).resolve().parents[2]


def run_installed(venv: Path, *args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    """``args`` run with the virtualenv's ``bin/args[0]`` from ``cwd``, as in a user's shell (no PYTHONPATH of ours)."""
    environ = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTEST_ADDOPTS")}
    return subprocess.run([str(venv / "bin" / args[0]), *args[1:]], cwd=cwd, capture_output=True, text=True,
                          env={**environ, **env}, timeout=1800)  # fmt: skip


def install_wheel(folder: Path) -> tuple[Path, Path]:
    """This checkout built as a wheel and installed (not editable) into a fresh virtualenv that sees this
    environment's dependencies after its own (so nothing is downloaded): (the wheel, the virtualenv)."""
    out, env = folder / "wheel", folder / "venv"
    pip = [sys.executable, "-m", "pip"]
    subprocess.run([*pip, "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(ROOT)], check=True,
                   capture_output=True)  # fmt: skip
    (wheel,) = out.glob("model_props-*.whl")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    site = subprocess.run([str(env / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()  # fmt: skip
    (Path(site) / "_model_props_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([*pip, "--python", str(env / "bin" / "python"), "install", "--no-deps", "--no-index", "-q",
                    str(wheel)], check=True, capture_output=True)  # fmt: skip
    return wheel, env


USER_MODELS = textwrap.dedent("""
    from timm.models.vision_transformer import VisionTransformer

    def build(num_classes=10):
        return VisionTransformer(img_size=32, patch_size=8, embed_dim=32, depth=2, num_heads=2, num_classes=num_classes)
""")


def user_project(project: Path) -> Path:
    """A user's project whose package builds an (untrained) ViT of its own, with its weights in runs/: the folder."""
    import torch
    from safetensors.torch import save_file

    (project / "mypkg").mkdir(parents=True)
    (project / "mypkg" / "__init__.py").write_text("")
    (project / "mypkg" / "models.py").write_text(USER_MODELS)
    namespace: dict = {}
    exec(USER_MODELS, namespace)  # the user's factory, without importing their package into this process
    with torch.random.fork_rng(devices=[]):  # this session's global RNG state is left as it was
        torch.manual_seed(0)
        weights = {k: v.contiguous() for k, v in namespace["build"]().state_dict().items()}
    (project / "runs").mkdir()
    save_file(weights, str(project / "runs" / "best.safetensors"))
    return project


def run_user_suite(installed: Future, project: Path, cache_dir: Path) -> tuple[Path, subprocess.CompletedProcess]:
    """``pytest --pyargs model_props.suite --model mypkg.models:build --checkpoint=runs/best.safetensors`` run
    with the installed wheel from the user's project (:func:`user_project`)."""
    _, venv = installed.result()
    return project, run_installed(venv, "python", "-m", "pytest", "--pyargs", "model_props.suite", "-p",
                                  "no:cacheprovider", "-q", "--model", "mypkg.models:build",
                                  "--checkpoint=runs/best.safetensors", f"--claims-cache={cache_dir}", cwd=project,
                                  PYTHONPATH=str(project))  # fmt: skip


# test_parallel.py: unit-map claims on a transformer and a CNN, one per worker under --dist loadgroup (six records,
# four of them with a measured value: ResNet has no MSA and no ViT-style skip to compare). Both runs measure afresh
# (--claims-remeasure) and judge these weights (checkpoint scope), so every value compared is one each run measured
# itself; on 256 images (4 CKA mini-batches) that takes a second per model.
PARALLEL_SUITE = "(msa-lowpass or skip-dominates or multistage-block-cka) and (vit or resnet)"
PARALLEL_RECIPES = "[measurement]\nn_images = 256\n"  # extends the built-in smoke profile: fewer images to measure


def parallel_args(folder: Path, cache_dir: Path) -> list[str]:
    """The options of test_parallel.py's runs of the packaged suite (its recipes written to ``folder``)."""
    recipes = folder / "recipes"
    recipes.mkdir(exist_ok=True)
    (recipes / "smoke.toml").write_text(PARALLEL_RECIPES)
    return ["--pyargs", "model_props.suite", "-k", PARALLEL_SUITE, "--claims-remeasure", "--claims-scope=checkpoint",
            f"--claims-recipes={recipes}", "-p", "no:cacheprovider", "-p", "no:allure_pytest",
            f"--claims-cache={cache_dir}"]  # fmt: skip


def run_xdist(folder: Path, cache_dir: Path) -> tuple[subprocess.CompletedProcess, Path]:
    """test_parallel.py's run with ``-n 2 --dist loadgroup`` (its workers are processes whatever starts it):
    the run and its folder, where it writes reports/summary.json."""
    args = [sys.executable, "-m", "pytest", *parallel_args(folder, cache_dir), "-n", "2", "--dist", "loadgroup"]
    return subprocess.run(args, cwd=folder, capture_output=True, text=True), folder
