"""Fixtures shared by the library's tests."""

from __future__ import annotations

import sys
import textwrap

import pytest

# pytester's in-process runs restore sys.modules afterwards; torch's compiled extensions (triton, via timm and
# torch._dynamo) cannot be imported a second time, so load everything the plugin imports before any such run.
import model_props.claims.evaluation  # noqa: F401,E402
import model_props.reporting.summary  # noqa: F401,E402
import model_props.session.store  # noqa: F401,E402


@pytest.fixture
def inprocess(pytester: pytest.Pytester) -> pytest.Pytester:
    """A pytester for nested sessions run in this process (a subprocess costs ~5 s of imports per run):
    allure-pytest keeps process-global state that a nested session using it would clobber, so nested sessions
    run without it (the tests that check Allure output use a subprocess)."""
    pytester.makeini("[pytest]\naddopts = -p no:allure_pytest\n")
    return pytester


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    """An importable module ``usermodels`` with factories that misbehave in different ways."""
    (tmp_path / "usermodels.py").write_text(
        textwrap.dedent("""
        import torch
        from torch import nn

        def good(num_classes=10):
            return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, num_classes))

        def raises(num_classes=10):
            raise RuntimeError("out of coffee")

        def not_a_module(num_classes=10):
            return "a string"

        def fixed_64px(num_classes=10):
            return nn.Sequential(nn.Flatten(), nn.Linear(3 * 64 * 64, num_classes))

        def wrong_classes(num_classes=10):
            return nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 7))

        class NaNNet(nn.Module):
            def __init__(self, num_classes):
                super().__init__()
                self.fc = nn.Linear(3, num_classes)
            def forward(self, x):
                return self.fc(x.mean(dim=(2, 3))) * float("nan")

        def nan(num_classes=10):
            return NaNNet(num_classes)
    """)
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "usermodels"
    sys.modules.pop("usermodels", None)
