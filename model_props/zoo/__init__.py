"""The model zoo: reference builders, user specs, checkpoints, and the [0, 1]-input wrapper."""
from .registry import (
    REFERENCE_MODELS, SpecKind, build_model, check_finite, check_model, load_checkpoint, parse_spec, spec_help,
)
from .wrapper import Classifier, unwrap

__all__ = [
    "REFERENCE_MODELS", "SpecKind", "parse_spec", "build_model", "check_finite", "check_model", "load_checkpoint", "spec_help",
    "Classifier", "unwrap",
]
