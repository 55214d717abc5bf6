"""The model zoo: the reference builders (ViT, PiT, Swin and ResNet from timm; AlterNet of our own), model specs
(a reference, ``timm:NAME``, ``package.module:factory``), checkpoints, and the [0, 1]-input wrapper that
normalises inside (:mod:`.registry`, :mod:`.wrapper`, one module per family).

May import: the foundation (:mod:`model_props.errors`) only.
"""

from .registry import (
    REFERENCE_MODELS,
    SpecKind,
    build_model,
    check_finite,
    check_model,
    load_checkpoint,
    parse_spec,
    spec_help,
)
from .wrapper import Classifier, unwrap

__all__ = [
    "REFERENCE_MODELS",
    "SpecKind",
    "parse_spec",
    "build_model",
    "check_finite",
    "check_model",
    "load_checkpoint",
    "spec_help",
    "Classifier",
    "unwrap",
]
