"""Fixtures of the CUDA layer (``pytest -m cuda``): the tiny profile (property_tests/library/tiny.toml) and TF32 off
while a test runs, so that CUDA's float32 matches the CPU's to rounding."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import torch
from tiny_models import LIBRARY  # this folder is on sys.path (pytest's default "prepend" import mode)

from model_props.training.profiles import Profile, RecipeSource, load_profile


@pytest.fixture(scope="session")
def tiny() -> Profile:
    """The tiny profile: a ViT and a ResNet of a few thousand parameters, and measurement settings to match."""
    return load_profile("tiny", RecipeSource(user_dir=LIBRARY))


@pytest.fixture(autouse=True)
def no_tf32() -> Iterator[None]:
    """TF32 off for matmuls and convolutions (Ampere and later round float32 products to 10 mantissa bits by
    default for convolutions), and cuDNN's autotuner off, restored afterwards."""
    saved = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32, torch.backends.cudnn.benchmark)
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = torch.backends.cudnn.benchmark = False
    yield
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32, torch.backends.cudnn.benchmark = saved
