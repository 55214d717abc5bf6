"""The pytest plugin: options, session fixtures for the models under test, parametrization, summary.

Registered through the ``pytest11`` entry point. Options live in one group, ``--claims-*``, plus
``--model`` (repeatable) and ``--checkpoint`` (repeatable, paired with ``--model`` in order). Session state
is kept in ``config.stash``; heavy imports (torch, timm) happen inside hooks and fixtures.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from .errors import ModelPropsError

__all__ = ["user_errors"]

MODEL_FIXTURES = ("model_name", "model_under_test")
_store_key = pytest.StashKey["ModelStore"]()
_models_key = pytest.StashKey[list]()


def pytest_addoption(parser: pytest.Parser) -> None:
    from .recipes import PROFILES

    group = parser.getgroup("model-props", "model-props: published findings about vision models as tests")
    group.addoption("--claims-profile", dest="claims_profile", default="smoke", choices=PROFILES,
                    help="recipe profile of the reference models: smoke (CPU, minutes) or paper (GPU). Default: smoke")
    group.addoption("--claims-cache", dest="claims_cache", default=None, metavar="DIR",
                    help="cache of datasets and trained models. Default: $MODEL_PROPS_CACHE or ~/.cache/model-props")
    group.addoption("--claims-data-root", dest="claims_data_root", default=None, metavar="DIR",
                    help="folder holding CIFAR-10/100 (torchvision layout) for profiles that use them")
    group.addoption("--claims-device", dest="claims_device", default="cpu", metavar="DEVICE",
                    help="torch device for training and measurements: cpu, cuda, cuda:N. Default: cpu")
    group.addoption("--claims-seed", dest="claims_seed", type=int, default=0, metavar="N",
                    help="seed of every measurement's sampling. Default: 0")
    group.addoption("--model", dest="claims_models", action="append", default=[], metavar="SPEC",
                    help="a model to test besides the references: a reference name, timm:NAME or package.module:factory (repeatable)")
    group.addoption("--checkpoint", dest="claims_checkpoints", action="append", default=[], metavar="PATH",
                    help="weights for the --model at the same position (safetensors or torch state dict); without it the model is trained with the profile's 'custom' recipe")


def _settings(config: pytest.Config):
    from .cache import default_cache_dir
    from .store import Settings

    opt = config.option
    device = opt.claims_device
    if not (device == "cpu" or device == "cuda" or (device.startswith("cuda:") and device[5:].isdigit()) or device == "mps"):
        raise pytest.UsageError(f"--claims-device={device!r}; valid: 'cpu', 'cuda', 'cuda:N', 'mps'")
    return Settings(
        profile=opt.claims_profile,
        cache_dir=Path(opt.claims_cache).expanduser() if opt.claims_cache else default_cache_dir(),
        data_root=Path(opt.claims_data_root).expanduser() if opt.claims_data_root else None,
        device=device,
        seed=opt.claims_seed,
        progress=opt.capture == "no",  # a progress bar only where the user sees it (-s)
    )


def pytest_configure(config: pytest.Config) -> None:
    from .store import ModelStore, validate_spec

    models: list[str] = config.option.claims_models
    checkpoints: list[str] = config.option.claims_checkpoints
    try:
        for spec in models:
            validate_spec(spec)
    except ModelPropsError as exc:
        raise pytest.UsageError(str(exc)) from None
    if checkpoints and len(checkpoints) != len(models):
        raise pytest.UsageError(
            f"got {len(checkpoints)} --checkpoint for {len(models)} --model; give one --checkpoint per --model, in order"
        )
    store = ModelStore(_settings(config), {m: Path(c).expanduser() for m, c in zip(models, checkpoints)})
    config.stash[_store_key] = store
    try:
        names = store.reference_names()
    except ModelPropsError as exc:
        raise pytest.UsageError(str(exc)) from None
    config.stash[_models_key] = names + [m for m in models if m not in names]


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn a :class:`ModelPropsError` into a one-line test failure instead of a traceback."""
    try:
        yield
    except ModelPropsError as exc:
        pytest.fail(f"{type(exc).__name__}: {exc}", pytrace=False)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "model_name" in metafunc.fixturenames:
        names = metafunc.config.stash[_models_key]
        marks = {n: pytest.mark.xdist_group(n.replace(":", "_")) for n in names}
        metafunc.parametrize("model_name", [pytest.param(n, id=n, marks=marks[n]) for n in names], scope="session")


@pytest.fixture(scope="session")
def model_store(request: pytest.FixtureRequest):
    """The session's :class:`~model_props.store.ModelStore`: ``model_store.get(name)`` builds once."""
    return request.config.stash[_store_key]


@pytest.fixture(scope="session")
def dataset(model_store):
    """The profile's dataset (dead leaves for ``smoke``)."""
    with user_errors():
        return model_store.dataset()


@pytest.fixture(scope="session")
def model_under_test(model_store, model_name: str):
    """The trained model named by ``model_name``: a :class:`~model_props.store.ModelUnderTest`."""
    with user_errors():
        return model_store.get(model_name)


@pytest.fixture(scope="session")
def reference_model(model_store):
    """A function ``name -> ModelUnderTest`` for tests that compare against a specific reference."""
    def get(name: str):
        with user_errors():
            return model_store.get(name)

    return get


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    store = config.stash.get(_store_key, None)
    if store is None or not store.built():
        return
    tr = terminalreporter
    tr.section("model-props: models under test")
    tr.write_line(f"profile={store.settings.profile} cache={store.settings.cache_dir}")
    tr.write_line(f"{'model':24s} {'params':>9s} {'test acc':>9s} {'test NLL':>9s}  source")
    for name, m in store.built().items():
        source = f"checkpoint {m.checkpoint}" if m.recipe is None else ("cache" if m.from_cache else "trained now")
        tr.write_line(f"{name:24s} {m.parameters:9d} {m.metrics['test_accuracy']:9.3f} {m.metrics['test_nll']:9.3f}  {source}")
