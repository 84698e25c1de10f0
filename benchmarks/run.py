"""One entry point for the speed benchmarks: TextAttack comparison, prover throughput,
executor scaling; one summary table with the ratios and the date.

    python benchmarks/run.py --quick      # about 10 minutes on 2 quiet cores
    python benchmarks/run.py              # the full sizes (about an hour)

Steps (each a script of its own, rerunnable alone):

1. ``benchmarks/textattack/compare.py`` on the default victim (greedy WIR and the genetic
   attack, the same search space on both sides; builds TextAttack's venv on first use),
   which rewrites ``results/textattack.md``; then textrobust's greedy again with
   ``--lockstep 16`` (16 examples sharing each forward pass) on the same inputs;
2. ``benchmarks/prover_throughput.py`` for every zoo victim in the cache (text path and
   word-id path against the raw forward speed);
3. ``benchmarks/audit_executors.py``: a whole audit (TextFooler) on the local, lockstep
   and process executors.

Writes ``results/summary.md``: the date, the load average before and after, the command,
and the ratios (examples/s against TextAttack, CPU seconds, overhead share outside the
forward pass, prover and PR texts/s against the raw forward pass); hand-written blocks of
the old file between ``<!-- kept: NAME -->`` and ``<!-- /kept -->`` are carried over at the
end. Run it alone: a busy
machine makes every wall-clock ratio noise (the CPU-time columns suffer less).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
sys.path.insert(0, str(HERE / "textattack"))

import common  # noqa: E402  (benchmarks/textattack/common.py)


def _run(argv: list[str]) -> str:
    print("$", " ".join(argv), flush=True)
    env = {**os.environ, **common.OFFLINE_ENV, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1"}
    done = subprocess.run(argv, check=True, capture_output=True, text=True, env=env)
    print(done.stdout[-2000:], flush=True)
    return done.stdout


def _summary(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())["summary"] if path.exists() else {}


def textattack_rows(n: int) -> list[list[str]]:
    _run([sys.executable, str(HERE / "textattack" / "compare.py"), "--victims", f"default:{n}"])
    work = common.WORK / "default"
    _run([sys.executable, str(HERE / "textattack" / "run_ours.py"), "--search", "greedy", "--work", str(work),
          "--lockstep", "16", "--victim-batch", "256"])
    # the same greedy attack with the CNN's full convolution on both sides (the zoo CNN's
    # incremental forward over batches of edits switched off), to show both effects apart
    full = {"ours": work / "ours-greedy-fullforward.json", "textattack": work / "textattack-greedy-fullforward.json"}
    _run([str(common.VENV / "bin" / "python"), str(HERE / "textattack" / "run_textattack.py"), "--search", "greedy",
          "--work", str(work), "--full-forward", "--out", str(full["textattack"])])
    _run([sys.executable, str(HERE / "textattack" / "run_ours.py"), "--search", "greedy", "--work", str(work),
          "--full-forward", "--out", str(full["ours"])])
    rows = []
    for search, ours_file, theirs_file in (
            ("greedy", "ours-greedy.json", "textattack-greedy.json"),
            ("genetic", "ours-genetic.json", "textattack-genetic.json"),
            ("greedy, lockstep 16", "ours-greedy-lockstep16.json", "textattack-greedy.json"),
            ("greedy, full convolution both sides", full["ours"], full["textattack"])):
        theirs = _summary(work / theirs_file)
        ours = _summary(work / ours_file)
        if not theirs or not ours:
            continue
        rows.append([
            f"CNN (default), {search}", f"{ours['examples']}",
            f"{ours['examples_per_second'] / theirs['examples_per_second']:.2f}x",
            f"{theirs['cpu_seconds'] / ours['cpu_seconds']:.2f}x",
            f"{ours['success_rate']:.3f} / {theirs['success_rate']:.3f}",
            f"{ours['overhead_share']:.0%}", f"{ours['cpu_overhead_share']:.0%}"])
    return rows


def minilm_lockstep_rows(n: int) -> list[list[str]]:
    """textrobust's greedy attack on MiniLM, one example at a time and 8 in lockstep
    (TextAttack is left out here: it takes about 15 minutes per 60 MiniLM examples)."""
    folder = Path.home() / ".cache" / "textrobust" / "victims" / "minilm"
    if not folder.is_dir():
        return []
    work = common.WORK / "minilm-lockstep"
    _run([sys.executable, str(HERE / "textattack" / "prepare.py"), "--n", str(n), "--victim", str(folder),
          "--work", str(work)])
    rows = []
    for lanes in (0, 8):
        out = work / f"ours-greedy-lockstep{lanes}.json"
        _run([sys.executable, str(HERE / "textattack" / "run_ours.py"), "--search", "greedy", "--work", str(work),
              "--lockstep", str(lanes), "--victim-batch", "64", "--out", str(out)])
        m = _summary(out)
        rows.append([f"MiniLM, greedy, {'one at a time' if lanes == 0 else f'lockstep {lanes}'}", f"{m['examples']}",
                     f"{m['examples_per_second']:.2f}", f"{m['cpu_seconds']:.1f}",
                     f"{m.get('texts_per_victim_call', float('nan')):.0f}", f"{m['success_rate']:.3f}"])
    return rows


def prover_rows(texts: int) -> list[str]:
    victims = [v for v in ("default", "bow", "lstm", "transformer")
               if (Path.home() / ".cache" / "textrobust" / "victims" / v).is_dir()]
    out = _run([sys.executable, str(HERE / "prover_throughput.py"), "--victims", ",".join(victims),
                "--texts", str(texts), "--repeats", "2"])
    return [line for line in out.splitlines() if line.startswith("| ") and not line.startswith("| victim")]


def executor_rows(n: int) -> list[str]:
    out = _run([sys.executable, str(HERE / "audit_executors.py"), "--n", str(n),
                "--settings", "local:1,lockstep:8,process:2"])
    return [line for line in out.splitlines()
            if line.startswith("| ") and not line.startswith(("| executor", "| ---"))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (about 10 minutes)")
    args = parser.parse_args()
    n, texts, audit_n = (60, 8000, 12) if args.quick else (600, 30000, 40)
    before = os.getloadavg()[0]
    started = datetime.datetime.now()
    ta = textattack_rows(n)
    minilm = minilm_lockstep_rows(max(n // 3, 10))
    prover = prover_rows(texts)
    executors = executor_rows(audit_n)
    after = os.getloadavg()[0]
    lines = [
        "# Speed benchmarks: summary",
        "",
        f"Date: {started:%Y-%m-%d %H:%M}; load average {before:.2f} before, {after:.2f} after (2 cores; "
        "above about 1.5 something else was running and wall-clock ratios are noise). "
        f"Command: `python benchmarks/run.py{' --quick' if args.quick else ''}`.",
        "",
        "## textrobust against TextAttack 0.3.11 (same search space; details in textattack.md)",
        "",
        "| victim, search | examples | examples/s ratio (wall) | CPU-seconds ratio | success ours / theirs "
        "| our overhead (wall) | our overhead (CPU) |",
        "|---|---|---|---|---|---|---|",
        *["| " + " | ".join(r) + " |" for r in ta],
        "",
        "Ratios are textrobust over TextAttack (higher is better for textrobust). Overhead: the share of "
        "textrobust's time outside the victim's forward pass. Both sides call the same victim object; the zoo "
        "CNN evaluates a batch of edits of one text incrementally (`zoo/cnn_edits.py`), for both. The last row "
        "switches that off on both sides (`--full-forward`): the engines compared on the full convolution.",
        "",
        "## Cross-example batching on MiniLM (run_ours.py --lockstep)",
        "",
        "| victim, search | examples | examples/s | CPU s | texts per forward call | success |",
        "|---|---|---|---|---|---|",
        *["| " + " | ".join(r) + " |" for r in minilm],
        "",
        "## Prover against the raw forward pass (prover_throughput.py)",
        "",
        "| victim | texts | mean words | raw texts/s | text path texts/s | text / raw | id path texts/s | id / raw |",
        "|---|---|---|---|---|---|---|---|",
        *prover,
        "",
        "## A whole audit on each executor (audit_executors.py)",
        "",
        "| executor | workers | examples | wall s | examples/s | vs first | success rate | same records |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
        *executors,
        "",
    ]
    write_summary(RESULTS / "summary.md", lines)
    print(f"wrote {RESULTS / 'summary.md'}")


def write_summary(path: Path, lines: list[str]) -> None:
    """Write the generated ``lines`` to ``path``, followed by the hand-written blocks of the
    old file (``<!-- kept: NAME -->`` ... ``<!-- /kept -->``, in their order), so a rerun
    never deletes a reading."""
    old = path.read_text() if path.is_file() else ""
    kept = re.findall(r"<!-- kept: [\w-]+ -->.*?<!-- /kept -->", old, flags=re.S)
    path.write_text("\n".join(lines + [block + "\n" for block in kept]))


if __name__ == "__main__":
    main()
