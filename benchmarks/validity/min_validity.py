"""Which ``min_validity`` finds the most expected valid flips (issue 47, item 2).

The default attack (``textrobust attack``: recipe textfooler, the validated source, no query
budget, quality off) on TUNING sentences only: the dev split of the bundled Rotten Tomatoes
and tweets sets (``attack_runs.py`` says which sentences: ``--n`` of each, drawn with a fixed
seed; never the test split), for each ``min_validity`` in ``--settings``. Per victim, corpus
and setting: attacked examples, flips, the **expected number of valid flips** (the sum of the
flips' probabilities of keeping the meaning, re-judged by the judge current when this runs),
queries per example and seconds per example (the run's own, ``TEXTROBUST_THREADS=1``). The
setting with the most expected valid flips (summed over the victim's corpora) is the default
it suggests.

Rerun (one process at a time; about 20 minutes for the CNN on a quiet core)::

    PYTHONPATH=src nice -n 10 .venv/bin/python benchmarks/validity/min_validity.py \\
        --victim cnn=default --victim minilm=/work/labelwork/so48/minilm --n 40 \\
        --work /work/labelwork/findings47/tune --table benchmarks/results/min_validity.md

Runs already in ``--work`` are resumed, not redone (``--fresh`` redoes them).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from attack_runs import CORPORA, SHORT, attack, draw, flips  # noqa: E402

SETTINGS = (0.2, 0.3, 0.4, 0.5)


def measure(name: str, victim: str, corpus: str, setting: float, data: Path, work: Path,
            fresh: bool) -> dict[str, object]:
    out = work / f"{name}_{SHORT[corpus]}_{setting:.1f}"
    if fresh and out.exists():
        shutil.rmtree(out)
    started = time.perf_counter()
    summary = attack(victim, data, setting, out, log=work / "runs.log", resume=True)
    wall = time.perf_counter() - started
    attacked, found = flips(out)
    block = summary["analyses"]["attack"]["summary"]
    row = {"victim": name, "corpus": corpus, "min_validity": setting, "examples": block["examples"],
           "attacked": attacked, "flips": len(found),
           "expected_valid_flips": round(sum(f["probability"] for f in found), 3),
           "queries_per_example": block["queries_per_example"],
           "seconds_per_example": block["seconds_per_example"], "wall_seconds": round(wall, 1),
           "substitutes_per_word": block.get("substitutes_per_word")}
    (out / "flips.json").write_text(json.dumps({"row": row, "flips": found}, indent=1))
    print(json.dumps(row), flush=True)
    return row


def judge_sha() -> str:
    """The first 12 hex digits of the shipped judge file's sha1 (which judge measured)."""
    import hashlib

    path = Path(__file__).resolve().parents[2] / "src" / "textrobust" / "resources" / "substitutions" / "people_judge.json"
    return hashlib.sha1(path.read_bytes()).hexdigest()[:12]


def table(rows: list[dict[str, object]], n: int) -> str:
    lines = ["# min_validity on the tuning sentences (issue 47, item 2)", "",
             f"The default attack (textfooler, validated source, no query budget, quality off, the CLI's default "
             f"accept_validity; judge people_judge.json sha1 {judge_sha()}) on {n} dev-split "
             "sentences per corpus (benchmarks/validity/attack_runs.py draws them), one process at a time, "
             "TEXTROBUST_THREADS=1. Expected valid flips: the sum of the flips' probabilities of keeping the "
             "meaning, re-judged with the judge current when measured. Rerun: benchmarks/validity/min_validity.py.",
             "", "| victim | corpus | min_validity | attacked | flips | expected valid flips | queries / example "
             "| seconds / example | substitutes / content word |", "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['victim']} | {r['corpus']} | {r['min_validity']:.1f} | {r['attacked']} | {r['flips']} | "
                     f"{r['expected_valid_flips']:.2f} | {r['queries_per_example']:.1f} | "
                     f"{r['seconds_per_example']:.2f} | {r['substitutes_per_word'] or float('nan'):.2f} |")
    lines += ["", "Per victim, summed over its corpora:", "",
              "| victim | min_validity | flips | expected valid flips | queries / example | seconds / example |",
              "|---|---:|---:|---:|---:|---:|"]
    best = {}
    for victim in dict.fromkeys(r["victim"] for r in rows):
        for setting in dict.fromkeys(r["min_validity"] for r in rows):
            mine = [r for r in rows if r["victim"] == victim and r["min_validity"] == setting]
            if not mine:
                continue
            attacked = sum(r["attacked"] for r in mine) or 1
            expected = sum(r["expected_valid_flips"] for r in mine)
            queries = sum(r["queries_per_example"] * r["examples"] for r in mine) / sum(r["examples"] for r in mine)
            seconds = sum(r["seconds_per_example"] * r["examples"] for r in mine) / sum(r["examples"] for r in mine)
            lines.append(f"| {victim} | {setting:.1f} | {sum(r['flips'] for r in mine)} | {expected:.2f} | "
                         f"{queries:.1f} | {seconds:.2f} |")
            if victim not in best or expected > best[victim][1]:
                best[victim] = (setting, expected)
            del attacked
    lines.append("")
    for victim, (setting, expected) in best.items():
        lines.append(f"most expected valid flips, {victim}: min_validity {setting:.1f} ({expected:.2f})")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--victim", action="append", required=True, help="NAME=VICTIM ('default' or a folder)")
    parser.add_argument("--n", type=int, default=40, help="dev sentences per corpus")
    parser.add_argument("--settings", type=float, nargs="+", default=list(SETTINGS))
    parser.add_argument("--corpus", nargs="+", default=list(CORPORA))
    parser.add_argument("--work", type=Path, required=True, help="run folders (outside the repository)")
    parser.add_argument("--table", type=Path, help="write the result table here (Markdown) and a .json beside it")
    parser.add_argument("--fresh", action="store_true")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    rows = []
    for spec in args.victim:
        name, _, victim = spec.partition("=")
        for corpus in args.corpus:
            data = args.work / f"{SHORT[corpus]}_dev_{args.n}.jsonl"
            draw(corpus, "dev", args.n, data)
            for setting in args.settings:
                rows.append(measure(name, victim, corpus, setting, data, args.work, args.fresh))
                if args.table:
                    args.table.write_text(table(rows, args.n))
                    args.table.with_suffix(".json").write_text(json.dumps(rows, indent=1) + "\n")
    print(table(rows, args.n))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
