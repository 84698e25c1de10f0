#!/usr/bin/env bash
# Download the wheels of benchmarks/gpu/wheels.txt (for CPython 3.12 on x86_64 Linux) into
# benchmarks/gpu/wheels/, from the package index pip is configured with. Run it once on a
# machine with network access, before carrying the check to a GPU machine without one.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
python=${PYTHON:-python3}
mkdir -p "$here/wheels"
reqs=$(grep -v '^#' "$here/wheels.txt" | sed -n 's/^[a-z_]*: *//p')
# shellcheck disable=SC2086
"$python" -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 -d "$here/wheels" $reqs
du -sh "$here/wheels"
