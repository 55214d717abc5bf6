#!/usr/bin/env bash
# Wheels of what a bare GPU machine (no network; torch, timm, pytest, numpy, scipy, safetensors, matplotlib and
# hypothesis there) may lack for `python benchmarks/gpu.py`, and timm at the version constraints.txt pins (timm 1.0.29
# reads a ViT's pretrained=FILE as a JAX .npz only): downloaded here, into the git-ignored .whl/ at the repository's root, for the
# GPU's Python 3.12 on x86-64 (docs/gpu.md), at the versions constraints.txt pins. They include the dependencies of
# Dask, allure-pytest and torchattacks that a machine with torch and timm may or may not have; `gpu_install` installs
# only the wheels of distributions the machine lacks, and timm always. grimp has a compiled (Rust) part, so its cp312
# manylinux wheel is fetched; import-linter is pure Python (its console script also wants rich, which only
# `lint-imports` needs: not brought, the suite imports grimp alone).
#
#   bash benchmarks/gpu_wheels.sh            # here, with the registry
#   gpu_install                              # there: `source benchmarks/gpu_wheels.sh && gpu_install`
gpu_install() {  # on the GPU machine, in the repository's root
    local wanted
    wanted=$(python3 - <<'PY'
import importlib.metadata as md
import pathlib
import re

ALWAYS = {"timm"}  # the pinned version replaces the machine's
for wheel in sorted(pathlib.Path(".whl").glob("*.whl")):
    name = re.sub(r"[-_.]+", "-", wheel.name.split("-")[0]).lower()
    try:
        md.distribution(name)
    except md.PackageNotFoundError:
        print(wheel)
        continue
    if name in ALWAYS:
        print(wheel)
PY
)
    echo "gpu_install: bringing" $(basename -a $wanted | cut -d- -f1-2)
    python3 -m pip install -q --no-index --no-deps --target /tmp/site $wanted && export PYTHONPATH=/tmp/site
    python3 -m pip install -q --no-deps --no-build-isolation --no-index -e .
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then  # run, not sourced
    set -euo pipefail
    cd "$(dirname "${BASH_SOURCE[0]}")/.."
    pins=()
    for name in allure-pytest allure-python-commons torchattacks dask distributed tornado zict tblib locket partd \
        grimp import-linter timm click cloudpickle msgpack psutil sortedcontainers toolz attrs markupsafe jinja2 \
        pyyaml fsspec packaging urllib3 tqdm filelock typing-extensions pluggy; do
        pin=$(grep -i -E "^${name//-/[-_.]}==" constraints.txt || true)
        pins+=("${pin:-$name}")
    done
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl \
        "${pins[@]}"
    ls -l .whl
fi
