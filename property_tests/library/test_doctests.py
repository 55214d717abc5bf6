"""The examples in the package's docstrings run and print what they say (``doctest``), one test per module."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WITH_EXAMPLES = sorted(
    ".".join(p.relative_to(ROOT).with_suffix("").parts)
    for p in (ROOT / "model_props").rglob("*.py")
    if ">>> " in p.read_text()
)


def test_the_package_has_examples():
    assert len(WITH_EXAMPLES) >= 6, WITH_EXAMPLES


@pytest.mark.parametrize("module", WITH_EXAMPLES)
def test_docstring_examples(module):
    result = doctest.testmod(
        importlib.import_module(module), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    )
    assert result.attempted > 0 and result.failed == 0, (
        f"{module}: {result.failed} of {result.attempted} examples failed"
    )
