#!/usr/bin/env bash
# Wheels of what a bare GPU machine (no network; torch, timm, pytest, numpy, scipy, safetensors there) lacks for
# `python benchmarks/gpu.py`, and timm at the version constraints.txt pins (timm 1.0.29 there reads a ViT's
# pretrained=FILE as a JAX .npz only): downloaded here, into the git-ignored .whl/ at the repository's root, for the
# GPU's Python 3.12 on x86-64 (docs/gpu.md). grimp has a compiled (Rust) part, so its cp312 manylinux wheel is fetched;
# import-linter is pure Python (its console script also wants click and rich, which only `lint-imports` needs:
# not brought, the suite imports grimp alone).
#
#   bash benchmarks/gpu_wheels.sh            # here, with the registry
#   gpu_install                              # there: paste the function below, or `source benchmarks/gpu_wheels.sh`
gpu_install() {  # on the GPU machine, in the repository's root
    python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
    python3 -m pip install -q --no-deps --no-build-isolation --no-index -e .
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then  # run, not sourced
    set -euo pipefail
    cd "$(dirname "${BASH_SOURCE[0]}")/.."
    python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl \
        allure-pytest==2.16.2 allure-python-commons==2.16.2 torchattacks==3.5.1 dask==2026.8.0 \
        distributed==2026.8.0 tornado==6.6.1 zict==3.0.0 tblib==3.2.2 locket==1.0.0 partd==1.4.2 \
        grimp==3.19 import-linter==2.16 timm==1.0.31
    ls -l .whl
fi
