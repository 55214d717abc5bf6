"""Repo-local glue only: the plugin itself is ``model_props.plugin`` (entry point ``pytest11``)."""

import os
import sys
import warnings

# OpenMP, torch's intra-op thread pool, keeps its idle threads spinning for a while after each parallel region.
# This process runs thousands of tiny torch ops while the subprocess runs of the library tests (conftest.background,
# the Dask cluster's workers) need the other core: the spinning took it (the warm run used 139 s of CPU for 107 s
# of wall time; 117 s for 96 s with idle threads sleeping; benchmarks/RESULTS.md). libgomp reads the policy once,
# when torch loads it, so it is set before anything imports torch; subprocesses inherit it.
if "torch" in sys.modules:
    warnings.warn(
        "torch was imported before conftest.py could set OMP_WAIT_POLICY: idle threads will spin", stacklevel=1
    )
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from hypothesis import settings  # noqa: E402

pytest_plugins = ["pytester"]

# Hypothesis: no deadline (torch ops have cold-start latency), a fixed seed path in CI.
settings.register_profile("default", deadline=None, max_examples=50)
settings.register_profile("ci", deadline=None, max_examples=50, derandomize=True)
settings.load_profile("ci" if os.environ.get("CI") else "default")
