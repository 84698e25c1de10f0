#!/usr/bin/env bash
# The GPU check in one command (issue 41, item 3): the gpu-marked tests and a throughput
# table, written as one JSON, in under 6 minutes, on a machine without network.
#
#   benchmarks/gpu/run.sh [OUT_DIR]          # default OUT_DIR: $OUT, else runs/gpu_check
#   TEXTROBUST_FAKE_CUDA=1 benchmarks/gpu/run.sh /tmp/x   # the CPU stand-in CI runs
#
# Needs Python with torch (CUDA), transformers and tokenizers; the wheels of what the GPU
# machine lacks (pytest, hypothesis, pydantic, rich, typer; benchmarks/gpu/wheels.txt)
# come from benchmarks/gpu/wheels/ (fetch_wheels.sh) and are unpacked only where missing.
# Output: OUT_DIR/gpu_check.json (everything), plus the pytest log and JUnit file.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-${OUT:-$root/runs/gpu_check}}
python=${PYTHON:-python3}
tests_s=${GPU_TESTS_S:-120}
budget_s=${GPU_BUDGET_S:-150}
mkdir -p "$out"
out=$(cd "$out" && pwd)
site=$(mktemp -d "${TMPDIR:-/tmp}/textrobust-gpu-site.XXXXXX")
trap 'rm -rf "$site"' EXIT
cd "$root" || exit 2

"$python" "$here/wheels.py" "$here/wheels" "$site" "$out/wheels.json" || exit 2
export PYTHONPATH="$root/src:$site${PYTHONPATH:+:$PYTHONPATH}"
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE} TEXTROBUST_NO_PROGRESS=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1

# 1. the gpu-marked tests (every test file that has one), bounded in time
files=$(grep -l "mark.gpu" "$root"/tests/test_*.py | tr '\n' ' ')
rc=0
# shellcheck disable=SC2086
timeout "$tests_s" "$python" -m pytest -m gpu -q -p no:cacheprovider -o addopts="" -rs \
    --junitxml "$out/gpu_tests.xml" $files > "$out/gpu_tests.log" 2>&1 || rc=$?
echo "gpu tests: exit $rc (log: $out/gpu_tests.log)"

# 2. the throughput table and the checks, into one JSON with the tests' outcome
"$python" "$here/throughput.py" --out "$out/gpu_check.json" --budget-s "$budget_s" \
    --tests-junit "$out/gpu_tests.xml" --tests-rc "$rc" --setup "$out/wheels.json"
