"""Repo-local glue only: the plugin itself is ``model_props.plugin`` (entry point ``pytest11``)."""

import os
import sys
import warnings

# OpenMP, torch's intra-op thread pool, keeps an idle thread spinning after each parallel region (libgomp: 300,000
# spins by default). This process runs thousands of tiny torch ops while the subprocess runs of the library tests
# (conftest.background, the Dask cluster's workers) need the other core, and the spinning took it: the warm run
# used 139 s of CPU for 107 s of wall time. Sleeping at once (OMP_WAIT_POLICY=PASSIVE) gave that core back but
# made the Hessian's many small back-to-back ops 1.8x slower (a smoke ViT's spectrum 58 s against 33 s), and a
# cold run measures dozens of spectra in this process. 1,000 spins bridge the gaps between back-to-back ops and
# free the core between tests: spectrum 33 s, test_hessian.py 10 s of CPU against 21 s (benchmarks/RESULTS.md).
# libgomp (torch's OpenMP on Linux) reads it once, when torch loads it, so it is set before anything imports
# torch; subprocesses inherit it.
if "torch" in sys.modules:
    warnings.warn(
        "torch was imported before conftest.py could set GOMP_SPINCOUNT: idle threads will spin", stacklevel=1
    )
os.environ.setdefault("GOMP_SPINCOUNT", "1000")

from hypothesis import settings  # noqa: E402

pytest_plugins = ["pytester"]

# Hypothesis: no deadline (torch ops have cold-start latency), a fixed seed path in CI.
settings.register_profile("default", deadline=None, max_examples=50)
settings.register_profile("ci", deadline=None, max_examples=50, derandomize=True)
settings.load_profile("ci" if os.environ.get("CI") else "default")
