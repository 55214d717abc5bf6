"""The pytest plugin (thin: hooks and fixtures that call the layers beneath): options, the models under test,
parametrization, the summary.

Registered through the ``pytest11`` entry point, so it loads in every pytest session of an environment
that has model-props installed. It stays inert there unless the session uses it: it registers its markers
and options and nothing else (no torch import, no output, no error). It is *in use* when the command line
gives one of its options, the project's pyproject has a ``[tool.model_props]`` table, or the session
collects the packaged claim suite (``pytest --pyargs model_props.suite``); then it validates its settings
up front and writes Allure results to ``reports/allure-results`` unless ``--alluredir`` says otherwise. Its
fixtures work in any session (settings then come from the defaults and the table).

Options live in one group, ``--claims-*``, plus ``--model`` (repeatable) and ``--checkpoint`` (repeatable,
paired with ``--model`` in order). Session state is kept in ``config.stash``; heavy imports (torch, timm)
happen inside hooks and fixtures, only once the plugin is used.

Modules: :mod:`.options` (generated from :mod:`model_props.config.options`), :mod:`.state` (the stash),
:mod:`.hooks`, :mod:`.fixtures`, :mod:`.recorder` (summary and verdict table). May import every layer beneath
it, but only inside hooks and fixtures where the import is heavy.
"""

from .fixtures import (
    assert_claim,
    check_claim,
    dataset,
    gate_check,
    model_store,
    model_under_test,
    reference_model,
    reproduction,
)
from .hooks import (
    MARKERS,
    pytest_collection_finish,
    pytest_configure,
    pytest_generate_tests,
    pytest_report_teststatus,
    pytest_runtest_makereport,
)
from .options import pytest_addoption
from .state import user_errors

__all__ = [
    "MARKERS",
    "user_errors",
    "pytest_addoption",
    "pytest_configure",
    "pytest_collection_finish",
    "pytest_generate_tests",
    "pytest_report_teststatus",
    "pytest_runtest_makereport",
    "model_store",
    "dataset",
    "model_under_test",
    "reference_model",
    "check_claim",
    "assert_claim",
    "gate_check",
    "reproduction",
]
