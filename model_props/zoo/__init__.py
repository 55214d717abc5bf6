"""The model zoo: reference builders, user specs, checkpoints, and the [0, 1]-input wrapper."""
from .registry import REFERENCE_MODELS, build_model, check_finite, check_model, load_checkpoint, spec_help
from .wrapper import Classifier, unwrap

__all__ = [
    "REFERENCE_MODELS", "build_model", "check_finite", "check_model", "load_checkpoint", "spec_help",
    "Classifier", "unwrap",
]
