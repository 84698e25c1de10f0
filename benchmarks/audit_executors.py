"""A whole audit under each executor: attacked examples per second with 1 and 2 workers.

Runs ``textrobust.audit.run`` with the TextFooler attack (quality scoring off) on the first
``--n`` Rotten Tomatoes test examples of the default victim, once per executor setting,
each into a fresh folder (victim loading, worker start-up and store writes included: the
wall time a user waits). Checks that every setting stored the same records.

    python benchmarks/audit_executors.py [--n 40] [--settings local:1,process:1,process:2,ray:1,ray:2] [--write]

``--write`` appends the table to benchmarks/results/executors.md.
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import tempfile
import time
from pathlib import Path

OUT = Path(__file__).parent / "results" / "executors.md"


def main() -> None:
    from textrobust import audit
    from textrobust.store import RunStore

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=40)
    parser.add_argument("--settings", default="local:1,process:1,process:2,ray:1,ray:2")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    rows, reference = [], None
    with tempfile.TemporaryDirectory() as tmp:
        # warm-up, not timed: the first audit in a process loads the vectors, encoders and
        # tagger into process-wide caches, which would flatter every later setting
        audit.run("default", "rotten_tomatoes", {"attack": {"n": 2, "quality": False}}, Path(tmp) / "warm-up",
                  progress=False, report=False)
        for setting in args.settings.split(","):
            name, workers = setting.split(":")
            out = Path(tmp) / setting.replace(":", "-")
            began = time.perf_counter()
            result = audit.run("default", "rotten_tomatoes", {"attack": {"n": args.n, "quality": False}}, out,
                               executor=name, workers=int(workers), progress=False, report=False)
            seconds = time.perf_counter() - began
            with RunStore(out / "store.sqlite") as store:
                records = sorted(json.dumps({k: v for k, v in r.payload.items() if k != "seconds"}, sort_keys=True)
                                 .replace(str(r.payload.get("seconds")), "") for r in store.latest_run("attack").results())
            same = reference is None or records == reference
            reference = reference or records
            summary = result["attack"].summary
            rows.append((name, workers, args.n, seconds, args.n / seconds, summary.success_rate, same))
            print(f"{setting}: {seconds:.1f} s", flush=True)
    base = rows[0][4]
    lines = ["", f"## A whole audit: TextFooler on {args.n} examples (default victim, no quality scoring)", "",
             f"Date: {datetime.date.today()}; `uptime`: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}",
             f"Rerun: `python benchmarks/audit_executors.py --n {args.n} --write`", "",
             "| executor | workers | examples | wall s | examples/s | vs first | success rate | same records |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    lines += [f"| {n} | {w} | {k} | {s:.1f} | {r:.2f} | {r / base:.2f}x | {sr:.1%} | {'yes' if same else 'NO'} |"
              for n, w, k, s, r, sr, same in rows]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        with OUT.open("a") as handle:
            handle.write(text)


if __name__ == "__main__":
    main()
