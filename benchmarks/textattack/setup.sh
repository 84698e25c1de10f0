#!/usr/bin/env bash
# Build TextAttack 0.3.11 in its own venv (benchmarks/.venv-textattack), next to textrobust.
#
# TextAttack needs transformers<5 and flair, so it cannot share the project's environment
# (transformers 5). torch is pinned to the local CPU wheel and installed first: an open
# range would pull a multi-GB CUDA build. textrobust itself goes in with --no-deps plus the
# few light packages the victim path needs. Idempotent: a finished build leaves a stamp
# file and a second run returns at once (FORCE=1 rebuilds).
#
#   bash benchmarks/textattack/setup.sh            # build (a few minutes), then smoke-test
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
VENV="${TA_VENV:-$REPO/benchmarks/.venv-textattack}"
PYTHON="${PYTHON:-python3.11}"
STAMP="$VENV/.textattack-ready"
PIP=("$VENV/bin/python" -m pip install --quiet --disable-pip-version-check)

export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
export PIP_DISABLE_PIP_VERSION_CHECK=1

if [[ -f "$STAMP" && "${FORCE:-0}" != 1 ]]; then
    echo "TextAttack venv ready: $VENV"
    exit 0
fi

start=$(date +%s)
[[ -x "$VENV/bin/python" ]] || "$PYTHON" -m venv "$VENV"

# 1. torch first, pinned (the local CPU wheel)
"${PIP[@]}" "torch==2.13.0"
# 2. TextAttack and its dependency tree, with transformers held below 5
"${PIP[@]}" "torch==2.13.0" "textattack==0.3.11" "transformers<5"
# 3. textrobust without its dependencies, plus the light ones the victim path needs
"${PIP[@]}" --no-deps -e "$REPO"
"${PIP[@]}" "torch==2.13.0" numpy safetensors "pydantic>=2,<3" rich typer

# 4. what TextAttack's import wants, from local files only: NLTK's stopwords corpus
#    (written from the project's own list into the benchmark's data dir) and the
#    "post-install done" marker that stops it calling nltk.download.
"$VENV/bin/python" - "$HERE" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import common
from textrobust.assets import stop_words
print("stop words for NLTK:", common.write_nltk_stopwords(sorted(stop_words())))
PY

# 5. smoke test: TextAttack imports offline, with no download attempt
"$VENV/bin/python" - "$HERE" <<'PY'
import os, sys
sys.path.insert(0, sys.argv[1])
import common
os.environ.update(common.OFFLINE_ENV)
import textattack, transformers
from textattack.search_methods import AlzantotGeneticAlgorithm, GreedyWordSwapWIR
print("textattack imports offline; transformers", transformers.__version__)
PY

touch "$STAMP"
echo "TextAttack venv built in $(( $(date +%s) - start )) s: $VENV"
