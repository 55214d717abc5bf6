"""Repo-local glue only: the plugin itself is ``model_props.plugin`` (entry point ``pytest11``)."""

import os

from hypothesis import settings

pytest_plugins = ["pytester"]

# Hypothesis: no deadline (torch ops have cold-start latency), a fixed seed path in CI.
settings.register_profile("default", deadline=None, max_examples=50)
settings.register_profile("ci", deadline=None, max_examples=50, derandomize=True)
settings.load_profile("ci" if os.environ.get("CI") else "default")
