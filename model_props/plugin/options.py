"""The plugin's pytest options, generated from the session's option declaration (:mod:`model_props.config.options`)."""

from __future__ import annotations

from typing import Any

import pytest

from ..config.options import OPTIONS, PYTEST_GROUP

__all__ = ["pytest_addoption"]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup(PYTEST_GROUP, "model-props: published findings about vision models as tests")
    for o in OPTIONS:
        if o.pytest is None:
            continue
        default = f" Default: {o.default}" if o.default not in (None, False) else ""
        kwargs: dict[str, Any] = {"action": o.action, "help": o.help + default}
        if o.action != "store_true":
            kwargs["metavar"] = o.metavar
        if o.arg_type is not None:
            kwargs["type"] = o.arg_type
        group.addoption(o.pytest, dest=o.dest, default=[] if o.action == "append" else None, **kwargs)
