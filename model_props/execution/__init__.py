"""Where tasks run: in this process, on a local Dask cluster, or on a Dask cluster that is already running.

Owns the one interface through which training and measuring tasks are submitted (:func:`executor`), built on
Dask's ``distributed`` (no scheduler, queue or RPC of our own), and the checks a cluster must pass before it
gets work: every worker reachable, able to write the shared cache, and running the same model-props source.

May import: :mod:`model_props.cache` and :mod:`model_props.errors` (the foundation layer).
"""

from .backends import Executor, ExecutorError, executor, task_module

__all__ = ["Executor", "ExecutorError", "executor", "task_module"]
