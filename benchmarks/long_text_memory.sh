#!/usr/bin/env bash
# Peak memory of an attack on one 50,000-word row (issue 10): uncapped (--max-words 60000)
# and with the default length limit. Needs GNU time (/usr/bin/time). Writes nothing but
# the run folders under ${TMPDIR:-/tmp}.
set -euo pipefail
BIN="$(dirname "$0")/../.venv/bin"
DIR="${TMPDIR:-/tmp}/textrobust-long-text"
mkdir -p "$DIR"
python3 - "$DIR/long50k.csv" <<'PY'
import sys
row = " ".join(["the film was good and the cast was fine"] * 5000)  # 50,000 words
open(sys.argv[1], "w").write(f'text,label\n"{row}",positive\n"a dull film",negative\n')
PY
uptime
for limit in "--max-words 60000" ""; do
    echo "== attack textfooler --budget 2000 ${limit:-(default length limit)}"
    /usr/bin/time -f "peak RSS %M kB, wall %e s" "$BIN/textrobust" attack --data "$DIR/long50k.csv" --budget 2000 \
        --recipe textfooler --no-quality --quiet --out "$DIR/run${limit// /}" $limit > /dev/null
done
