"""The session's options, declared once: the pytest options, the ``[tool.model_props]`` keys, their defaults
and the ``model-props`` CLI flags are all generated from :data:`OPTIONS` (a test checks that they agree).

Every key is in :data:`OPTIONS`; docs/your-model.md#settings-in-pyprojecttoml shows the table with an example of
each (paths relative to the pyproject's folder). An unknown key is an error that lists the valid ones. This module
imports nothing heavy: the plugin reads the table before it knows it is used.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import tomllib

from ..errors import ConfigError, choices

__all__ = ["Option", "OPTIONS", "TABLE", "DEFAULTS", "read_table", "PYTEST_GROUP"]

PYTEST_GROUP = "model-props"


@dataclass(frozen=True)
class Option:
    """One setting: its ``[tool.model_props]`` key (None: command line only), pytest option and CLI flag."""

    name: str  # the key of the merged settings (and of the table, where ``table``)
    kind: type  # the table's type (str for paths)
    what: str  # a short description, for error messages
    help: str
    default: Any = None  # None: not given (a derived default, e.g. the cache folder, applies)
    table: bool = True  # a key of [tool.model_props]
    pytest: str | None = None  # the pytest option, e.g. "--claims-profile"
    cli: Literal["common", "train"] | None = None  # a flag of every model-props subcommand, or of `train`
    cli_flag: str | None = None  # the CLI flag; default: the pytest option without its "claims-" prefix
    cli_help: str | None = None  # the CLI flag's help where it differs from the pytest option's
    metavar: str | None = None
    action: Literal["store", "store_true", "append"] = "store"
    path: bool = False  # a path: relative to the pyproject in the table, to the working directory on a command line

    @property
    def dest(self) -> str:
        """The pytest option's ``dest`` (one prefix for every option of the plugin)."""
        return f"claims_{self.name}"

    @property
    def flag(self) -> str | None:
        """The CLI flag, e.g. ``--profile``."""
        if self.cli is None:
            return None
        return self.cli_flag or (self.pytest or "").replace("--claims-", "--")

    @property
    def arg_type(self) -> type | None:
        """The command-line type argparse converts to (paths stay strings until the settings resolve them)."""
        return int if self.kind is int and self.action == "store" else None


OPTIONS: tuple[Option, ...] = (
    Option(
        "profile",
        str,
        "recipe profile",
        "recipe profile: smoke (CPU, minutes), paper (GPU), or one of --claims-recipes",
        "smoke",
        pytest="--claims-profile",
        cli="common",
        metavar="NAME",
    ),
    Option(
        "cache",
        str,
        "cache folder",
        "cache of datasets, trained models and measurements. Default: $MODEL_PROPS_CACHE or ~/.cache/model-props",
        pytest="--claims-cache",
        cli="common",
        metavar="DIR",
        path=True,
    ),
    Option(
        "data_root",
        str,
        "folder of CIFAR-10/100",
        "folder holding CIFAR-10/100 (torchvision layout) for profiles that use them, or the images a pretrained "
        "--model is measured on (DIR/val/<class>/*.jpg, optionally DIR/train/<class>/)",
        pytest="--claims-data-root",
        cli="common",
        metavar="DIR",
        path=True,
    ),
    Option(
        "device",
        str,
        "torch device",
        "torch device for training and measurements: cpu, cuda, cuda:N, mps",
        "cpu",
        pytest="--claims-device",
        cli="common",
        metavar="DEVICE",
    ),
    Option(
        "workers",
        int,
        "worker processes for training and measuring",
        "train and measure on a local Dask cluster of N worker processes, each with its share of the cores "
        "(default, when several models must be trained: one per core on the CPU, 4 sharing a CUDA device; 1 runs "
        "everything in this process)",
        pytest="--claims-workers",
        cli="common",
        metavar="N",
    ),
    Option(
        "scheduler",
        str,
        "Dask scheduler to run on",
        "train and measure on a running Dask cluster: its scheduler's address (tcp://HOST:8786) or scheduler "
        "file; every worker needs the same model-props and a cache folder shared with this process",
        pytest="--claims-scheduler",
        cli="common",
        metavar="ADDRESS",
    ),
    Option(
        "seed",
        int,
        "measurement sampling seed",
        "seed of every measurement's sampling",
        0,
        pytest="--claims-seed",
        metavar="N",
    ),
    Option(
        "train_seed",
        int,
        "training seed for every recipe",
        "train every recipe with seed N instead of its own (a different set of references)",
        pytest="--claims-train-seed",
        cli="train",
        metavar="N",
    ),
    Option(
        "recipes_dir",
        str,
        "folder of the user's profiles",
        "a folder of your own profiles (<profile>.toml); a file named like a built-in profile extends it",
        pytest="--claims-recipes",
        cli="common",
        metavar="DIR",
        path=True,
    ),
    Option(
        "recipes",
        dict,
        "per-recipe field overrides",
        "per-recipe field overrides ([tool.model_props.recipes.NAME] tables)",
    ),
    Option(
        "remeasure",
        bool,
        "ignore the measurement cache",
        "ignore the measurement cache and measure again",
        False,
        pytest="--claims-remeasure",
        action="store_true",
    ),
    Option(
        "models",
        list,
        "model specs under test",
        "a model to test instead of the references: a reference name, timm:NAME, package.module:factory, or "
        "pretrained weights: timm:NAME@pretrained[=FILE], torchvision:NAME@WEIGHTS[=FILE] (repeatable)",
        pytest="--model",
        cli="train",
        cli_flag="--model",
        metavar="SPEC",
        action="append",
        cli_help="also train a user model spec or a variant recipe (repeatable)",
    ),
    Option(
        "checkpoints",
        dict,
        "model spec -> weights file",
        "weights for the --model at the same position (safetensors or torch state dict); "
        "without it the model is trained with the profile's 'custom' recipe",
        pytest="--checkpoint",
        metavar="PATH",
        action="append",
    ),
    Option(
        "img_size",
        int,
        "image size for your models (their native resolution)",
        "train and measure your --model at N px (its native resolution); claims that compare "
        "with the references (at the profile's size) are then skipped",
        pytest="--claims-img-size",
        metavar="N",
    ),
    Option(
        "versus",
        dict,
        "reference -> your comparator model",
        "compare your --model with a model of your own instead of a reference: REF=SPEC (e.g. "
        "resnet=timm:resnet50.a1_in1k@pretrained); it stands in for the reference REF in every claim part that "
        "compares with REF, measured on the same images (repeatable)",
        pytest="--claims-versus",
        metavar="REF=SPEC",
        action="append",
    ),
    Option(
        "images",
        int,
        "evaluation images of a pretrained model",
        "measure a pretrained --model (timm:NAME@pretrained, torchvision:NAME@WEIGHTS) on N images of "
        "--claims-data-root, class-balanced and seeded, streamed from disk (and as many of its train/ folder)",
        1000,
        pytest="--claims-images",
        metavar="N",
    ),
    Option(
        "steps",
        int,
        "training steps of your models",
        "train your --model (given without --checkpoint) for N optimizer steps, warm-up N/8, "
        "instead of the profile's custom recipe budget",
        table=False,
        pytest="--claims-steps",
        metavar="N",
    ),
    Option(
        "html",
        bool,
        "generate the HTML report",
        "after the run, generate the Allure HTML report reports/allure-report/index.html (needs "
        "Node.js and Allure 3: npm ci --prefix reports)",
        False,
        table=False,
        pytest="--claims-html",
        action="store_true",
    ),
    Option(
        "scope",
        str,
        "verdict scope",
        "what a verdict is about: 'architecture' (a recipe over k >= 3 training seeds: the references from the "
        "profile's seed study, your model from 3+ --checkpoint files), 'checkpoint' (one set of weights), or "
        "'auto' (architecture where there are seeds, else checkpoint)",
        "auto",
        pytest="--claims-scope",
        metavar="SCOPE",
    ),
    Option(
        "live",
        str,
        "which models the run trains live",
        "which models the run trains with the profile's live seed and checks live: 'references' (the five "
        "references: their reproduction tests, mutant controls and live checks, but no Hessian spectrum or PGD attack "
        "of them; every variant is judged from the committed seed study) or 'all' (every variant and independent run "
        "too, and every report kind: the release and nightly check)",
        "references",
        pytest="--claims-live",
        metavar="references|all",
    ),
    Option(
        "inconclusive",
        str,
        "what an inconclusive claim does to a model without an expectation",
        "an inconclusive claim on your model (no expectation snapshot): 'fail' its test, or 'report' it as INCONCLUSIVE",
        "fail",
        pytest="--claims-inconclusive",
        metavar="fail|report",
    ),
    Option("gate", dict, "release gate", "release gate ([tool.model_props.gate]: claims, baseline, tolerances)"),
)
TABLE: dict[str, Option] = {o.name: o for o in OPTIONS if o.table}
DEFAULTS: dict[str, Any] = {o.name: o.default for o in OPTIONS if o.default is not None}


def read_table(pyproject: Path) -> dict[str, Any]:
    """The ``[tool.model_props]`` table of ``pyproject`` (empty if absent), checked against :data:`TABLE`."""
    if not pyproject.is_file():
        return {}
    try:
        data = tomllib.loads(pyproject.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{pyproject}: invalid TOML: {exc}") from exc
    table = data.get("tool", {}).get("model_props", {})
    unknown = set(table) - set(TABLE)
    if unknown:
        raise ConfigError(f"{pyproject} [tool.model_props]: unknown keys {sorted(unknown)}; valid: {choices(TABLE)}")
    for key, value in table.items():
        option = TABLE[key]
        if not isinstance(value, option.kind) or (option.kind is int and isinstance(value, bool)):
            raise ConfigError(
                f"{pyproject} [tool.model_props]: {key}={value!r} must be a {option.kind.__name__} ({option.what})"
            )
    return table
