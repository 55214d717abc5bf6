"""One exception family for user mistakes.

Every message names the bad value, what was expected and, where there is a closed set, the valid choices,
so that a user sees one line instead of a deep traceback.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = [
    "ModelPropsError",
    "UnknownModelError",
    "ModelBuildError",
    "CheckpointError",
    "ModelOutputError",
    "InputSizeError",
    "DatasetError",
    "AnatomyError",
    "RecipeError",
    "CacheError",
    "ExecutorError",
    "ConfigError",
    "MeasurementError",
    "NotApplicable",
    "StudyError",
]
__not_in_cache_keys__ = "exception classes and their messages; computes no cached value"


class ModelPropsError(Exception):
    """Base class: a problem with what the user asked for, explained in one message."""


class UnknownModelError(ModelPropsError, KeyError):
    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0])


class ModelBuildError(ModelPropsError):
    """A model factory raised, or returned something that is not a torch module."""


class CheckpointError(ModelPropsError):
    """A checkpoint is missing, unreadable, or made for another architecture."""


class ModelOutputError(ModelPropsError):
    """A model's output has the wrong shape or is not finite."""


class InputSizeError(ModelPropsError):
    """A model cannot take images of the requested size."""


class DatasetError(ModelPropsError):
    """A dataset is missing, unknown, or malformed."""


class AnatomyError(ModelPropsError):
    """A model cannot be decomposed into units."""


class RecipeError(ModelPropsError):
    """A training recipe is unknown or malformed."""


class CacheError(ModelPropsError):
    """A cache entry cannot be written or read."""


class ConfigError(ModelPropsError):
    """The [tool.model_props] table or the command-line options are invalid."""


class MeasurementError(ModelPropsError):
    """A measurement cannot be taken on this model or input (e.g. no second derivative, NaN loss, bad epsilon)."""


class StudyError(ModelPropsError):
    """A seed study is missing, stale, of another profile or schema, or cannot judge what was asked of it."""


class NotApplicable(MeasurementError):
    """A statistic finds nothing to read in a model's measurement (no such unit, band, eps): the part is skipped."""


class ExecutorError(ModelPropsError):
    """A cluster cannot run the tasks: its scheduler is unreachable, a worker cannot write the cache, a worker
    runs another model-props source, or a task killed every worker that ran it (:mod:`model_props.store.lost`)."""


def choices(values: Iterable[str]) -> str:
    """Format valid choices for an error message: ``'a', 'b', 'c'``."""
    return ", ".join(repr(v) for v in sorted(values))
