"""The plugin's session state, kept in ``config.stash``: whether the session uses the plugin, its settings, model
store and release gate; and the two ways a user mistake is reported (a usage error, a one-line failure)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..config.options import OPTIONS, read_table
from ..errors import ModelPropsError

if TYPE_CHECKING:
    from ..config.settings import Settings
    from ..gate import Gate
    from ..store.model_store import ModelStore

__all__ = [
    "SUITE_PACKAGE",
    "in_use",
    "settings",
    "store",
    "gate",
    "pyproject",
    "user_errors",
    "usage_errors",
    "command_line",
]

SUITE_PACKAGE = "model_props.suite"
_settings_key = pytest.StashKey["Settings"]()
_store_key = pytest.StashKey["ModelStore"]()
_gate_key = pytest.StashKey["Gate"]()


def pyproject(config: pytest.Config) -> Path:
    ini = config.inipath
    return ini if ini is not None and ini.name == "pyproject.toml" else config.rootpath / "pyproject.toml"


def command_line(config: pytest.Config) -> dict[str, Any]:
    """The session options given on the command line, by setting name (None or [] where not given)."""
    return {o.name: getattr(config.option, o.dest) for o in OPTIONS if o.pytest}


def _collects_suite(config: pytest.Config) -> bool:
    import importlib.util

    spec = importlib.util.find_spec(SUITE_PACKAGE)
    suite_dir = Path(spec.origin).parent if spec and spec.origin else None
    for arg in config.args:
        target = arg.split("::")[0]
        if target == SUITE_PACKAGE or target.startswith(SUITE_PACKAGE + "."):
            return True
        if suite_dir is not None:
            path = (config.invocation_params.dir / target).resolve()
            if path == suite_dir or suite_dir in path.parents:
                return True
    return False


def in_use(config: pytest.Config) -> bool:
    """A session uses the plugin when it gives one of its options, the project has a ``[tool.model_props]`` table,
    or it collects the packaged claim suite."""
    given = any(v is not None and v is not False and v != [] for v in command_line(config).values())  # 0 is given
    try:
        table = read_table(pyproject(config))
    except ModelPropsError:
        return True  # a broken table is reported by the settings
    return given or bool(table) or _collects_suite(config)


def settings(config: pytest.Config) -> Settings:
    """The session's :class:`~model_props.config.settings.Settings` (validated once, then kept in the stash)."""
    if _settings_key not in config.stash:
        from ..config.settings import Settings

        toml = pyproject(config)
        cli = {
            **command_line(config),
            "progress": config.option.capture == "no",
        }  # a progress bar only where it shows (-s)
        config.stash[_settings_key] = Settings.resolve(read_table(toml), toml.parent, cli)
    return config.stash[_settings_key]


def store(config: pytest.Config) -> ModelStore:
    """The session's model store, built once."""
    if _store_key not in config.stash:
        from ..store.model_store import ModelStore

        models = ModelStore(settings(config))
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:  # announcements (a long training ahead) go to the terminal, past output capture
            models.notify = lambda message: reporter.write_line(f"model-props: {message}", yellow=True)
        config.stash[_store_key] = models
    return config.stash[_store_key]


def gate(config: pytest.Config) -> Gate:
    """The session's release gate (empty without a ``[tool.model_props.gate]`` table)."""
    if _gate_key not in config.stash:
        from ..gate import read_gate

        config.stash[_gate_key] = read_gate(settings(config).gate, pyproject(config).parent)
    return config.stash[_gate_key]


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn a :class:`ModelPropsError` into a one-line test failure instead of a traceback; a claim that does not
    apply (:class:`NotApplicable`) passes through, for the caller to skip with its reason."""
    from ..errors import NotApplicable

    try:
        yield
    except NotApplicable:
        raise
    except ModelPropsError as exc:
        # from None: pytest shows a chained cause in full even with pytrace=False (the message three times per test)
        raise pytest.fail.Exception(f"{type(exc).__name__}: {exc}", pytrace=False) from None


@contextmanager
def usage_errors() -> Iterator[None]:
    try:
        yield
    except ModelPropsError as exc:
        raise pytest.UsageError(str(exc)) from None
