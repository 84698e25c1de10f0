#!/usr/bin/env bash
# Back-to-back timing of the speed work (issues 39 item 3, 38 item 5): the commit before it
# (OLD, a git worktree) and the working tree, alternated on the same load (ABBA), each with a
# cold verdict cache. Usage, from the repository root:
#   git worktree add --detach /tmp/old 5aedafd
#   benchmarks/speed_check/before_after.sh /tmp/old /tmp/ab 8
# Writes source_{old,new}.json (outputs.py source) and so_{old,new}.jsonl (generate.py run,
# the first N test sentences, 1 thread), and prints the load average around each run.
set -euo pipefail
OLD=$1; OUT=$2; N=${3:-8}
NEW=$(pwd)
PY=$NEW/.venv/bin/python
mkdir -p "$OUT/cache"
for d in causal_lm data nltk_data vectors victims; do ln -sfn "${TEXTROBUST_CACHE:-$HOME/.cache/textrobust}/$d" "$OUT/cache/$d"; done
export TEXTROBUST_CACHE=$OUT/cache
source_run() {  # $1 tree, $2 name
  echo "$(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg) source $2"
  (cd "$1" && PYTHONPATH=$1/src $PY "$NEW/benchmarks/speed_check/outputs.py" source --out "$OUT/source_$2.json")
}
so_run() {
  echo "$(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg) so-beam $2"
  rm -rf "$OUT/cache/verdicts" "$OUT/so_$2.jsonl"
  (cd "$1" && PYTHONPATH=$1/src $PY benchmarks/second_order_labels/generate.py run --victim "$TEXTROBUST_CACHE/victims/default" \
     --victim-name cnn --half test --phase 0 --settings default --limit "$N" --threads 1 --out "$OUT/so_$2.jsonl" | tail -n "$N")
}
source_run "$OLD" old; source_run "$NEW" new
so_run "$NEW" new; so_run "$OLD" old
echo "$(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg) done"
$PY "$NEW/benchmarks/speed_check/outputs.py" compare-source "$OUT/source_old.json" "$OUT/source_new.json" | tail -n 2 || true
$PY "$NEW/benchmarks/speed_check/outputs.py" compare-so "$OUT/so_old.jsonl" "$OUT/so_new.jsonl" || true
