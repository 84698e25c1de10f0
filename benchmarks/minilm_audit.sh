#!/bin/bash
# Wall time per analysis of a full audit of a Hugging Face transformer victim (issue 31).
# Each analysis runs alone (`textrobust audit --analyses NAME`), so its time is its own,
# with the paper profile's settings capped at N examples; the load average before and
# after each one goes into TIMES (compare runs only at a similar load).
#
#   textrobust train minilm --out runs/minilm          # the victim (about 9 minutes on 2 cores)
#   bash benchmarks/minilm_audit.sh runs/minilm 20 runs/minilm_audit
#
# Usage: minilm_audit.sh VICTIM_FOLDER [N=20] [OUT=runs/minilm_audit] [extra audit options...]
# e.g. add `--device cuda` or `--dtype bfloat16` after OUT.
set -u
VICTIM=${1:?the victim folder (textrobust train minilm --out runs/minilm)}
N=${2:-20}
OUT=${3:-runs/minilm_audit}
shift $(( $# < 3 ? $# : 3 ))
TIMES=$OUT/times.txt
mkdir -p "$OUT"
: > "$TIMES"
for a in evaluate attack second-order radius pr accs attribution bias msr; do
  start=$(date +%s.%N)
  load_before=$(cut -d' ' -f1-3 /proc/loadavg)
  timeout 3600 textrobust audit --victim "$VICTIM" --profile paper --analyses "$a" --n "$N" \
      --out "$OUT/$a" "$@" > "$OUT/$a.log" 2>&1
  rc=$?
  end=$(date +%s.%N)
  echo "$a rc=$rc wall=$(python3 -c "print(round($end - $start, 1))") load_before=[$load_before]" \
       "load_after=[$(cut -d' ' -f1-3 /proc/loadavg)]" | tee -a "$TIMES"
done
