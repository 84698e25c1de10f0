"""Executors: units per second with 1 and 2 workers, for the process and Ray executors.

The toy workload is CPU-bound pure Python (``textrobust.audit.testing.BusySpec``: one unit
is ``--rounds`` steps of a linear congruential generator). With ``--victim default`` (or a
victim folder) a real workload is measured too: each unit scores one batch of the Rotten
Tomatoes test split through ``QueryLayer(victim).probabilities``. The in-process ``local``
executor is the baseline. Each executor first runs one warm-up unit (starting the worker
processes or actors and building the workers: the "startup" column), then the timed map.

    python benchmarks/executors.py [--units 200] [--rounds 100000] [--workers 1,2]
                                   [--executors process,ray] [--victim default] [--batch 32] [--write]

Prints a markdown table; ``--write`` also saves it to benchmarks/results/executors.md.
"""

from __future__ import annotations

import argparse
import datetime
import platform
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textrobust.audit.executors import Executor, Unit, make_executor
from textrobust.audit.testing import BusySpec

OUT = Path(__file__).parent / "results" / "executors.md"
RAY_START: list[float] = []  # seconds to start each local Ray instance


class _ScoreWorker:
    def __init__(self, folder: str, batch_size: int) -> None:
        from textrobust.victims.query import QueryLayer
        from textrobust.zoo import load_victim

        self.layer = QueryLayer(load_victim(folder), batch_size=batch_size)

    def __call__(self, texts: Any) -> list[int]:
        return [int(i) for i in self.layer.probabilities(texts).argmax(axis=1)]

    def queries(self) -> int:
        return int(self.layer.queries)


@dataclass(frozen=True)
class ScoreSpec:
    """Loads the victim in ``folder``; a unit is a batch of texts, its value the predicted labels."""

    folder: str
    batch_size: int

    def build(self) -> _ScoreWorker:
        return _ScoreWorker(self.folder, self.batch_size)


@dataclass(frozen=True)
class Row:
    workload: str
    executor: str
    workers: int
    units: int
    startup: float
    seconds: float
    queries: int

    @property
    def rate(self) -> float:
        return self.units / self.seconds if self.seconds > 0 else float("inf")


def measure(executor: Executor, spec: Any, warmup: Any, payloads: list[Any], workload: str) -> Row:
    started = time.perf_counter()
    list(executor.map(spec, [Unit(f"w{i}", i, warmup) for i in range(executor.workers)]))
    startup = time.perf_counter() - started
    units = [Unit(f"u{i}", i, p) for i, p in enumerate(payloads)]
    started = time.perf_counter()
    outcomes = list(executor.map(spec, units))
    seconds = time.perf_counter() - started
    failed = [o for o in outcomes if o.error is not None]
    if failed:
        raise SystemExit(f"{len(failed)} unit(s) failed, e.g. {failed[0].error}")
    return Row(workload, executor.name, executor.workers, len(units), startup, seconds,
               sum(o.queries for o in outcomes))


def run_workload(name: str, spec: Any, warmup: Any, payloads: list[Any], executors: list[str],
                 workers: list[int]) -> list[Row]:
    rows = []
    with make_executor("local") as local:
        rows.append(measure(local, spec, warmup, payloads, name))
    print(f"  {name}: local done", file=sys.stderr)
    for executor_name in executors:
        if executor_name == "ray":
            try:
                import ray  # noqa: F401
            except ImportError:
                print("  ray is not installed: skipped (pip install 'textrobust[ray]')", file=sys.stderr)
                continue
            started = time.perf_counter()
            owner = make_executor("ray", workers=max(workers))  # one local Ray instance for every size
            RAY_START.append(time.perf_counter() - started)
        else:
            owner = None
        try:
            for n in workers:
                with make_executor(executor_name, workers=n) as executor:
                    rows.append(measure(executor, spec, warmup, payloads, name))
                print(f"  {name}: {executor_name} x{n} done", file=sys.stderr)
        finally:
            if owner is not None:
                owner.close()
    return rows


def table(rows: list[Row]) -> list[str]:
    lines = ["| workload | executor | workers | units | startup s | seconds | units/s | vs local | queries |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    base = {r.workload: r.rate for r in rows if r.executor == "local"}
    for r in rows:
        lines.append(f"| {r.workload} | {r.executor} | {r.workers} | {r.units:,} | {r.startup:.2f} | "
                     f"{r.seconds:.2f} | {r.rate:,.1f} | {r.rate / base[r.workload]:.2f}x | {r.queries:,} |")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=200, help="toy units per run")
    parser.add_argument("--rounds", type=int, default=100_000, help="work per toy unit")
    parser.add_argument("--workers", default="1,2", help="comma-separated worker counts")
    parser.add_argument("--executors", default="process,ray", help="comma-separated: process, ray")
    parser.add_argument("--victim", default=None, help="'default' or a victim folder: also time a real workload")
    parser.add_argument("--batch", type=int, default=32, help="texts per unit of the victim workload")
    parser.add_argument("--limit", type=int, default=None, help="score only the first N test texts")
    parser.add_argument("--write", action="store_true", help="also save the table to benchmarks/results/executors.md")
    args = parser.parse_args()
    workers = [int(w) for w in args.workers.split(",")]
    executors = [e.strip() for e in args.executors.split(",") if e.strip()]

    rows = run_workload(f"toy ({args.rounds:,} rounds)", BusySpec(args.rounds), 0, list(range(args.units)),
                        executors, workers)
    notes = []
    if args.victim is not None:
        from textrobust.data import load_dataset
        from textrobust.text import Text
        from textrobust.zoo.default import ensure_default_victim

        folder = ensure_default_victim() if args.victim == "default" else Path(args.victim)
        texts = load_dataset("rotten_tomatoes", split="test").texts[: args.limit]
        batches = [texts[i : i + args.batch] for i in range(0, len(texts), args.batch)]
        spec = ScoreSpec(str(folder), batch_size=args.batch)
        rows += run_workload(f"victim {args.victim} ({len(texts):,} texts, {args.batch}/unit)", spec,
                             [Text.from_string("a warm-up sentence")], batches, executors, workers)
        notes.append("Victim workload: worker processes and actors run torch with one thread each; "
                     "`local` uses the driver's torch threads.")
    if RAY_START:
        notes.append("Starting the local Ray instance took " + ", ".join(f"{s:.1f} s" for s in RAY_START)
                     + " (not in the table).")

    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    command = "python benchmarks/executors.py " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    lines = [
        "# Executors: units per second",
        "",
        f"Date: {datetime.date.today().isoformat()}  ",
        f"Machine: {platform.machine()}, Python {sys.version.split()[0]}; `uptime`: {load}  ",
        f"Rerun: `{command.strip()}`",
        "",
        *table(rows),
        "",
        "`startup` is executor creation plus one warm-up unit per worker (spawning processes or "
        "actors and building the workers); `seconds` and `units/s` time the map alone.",
        *notes,
        "",
    ]
    print("\n".join(lines))
    if args.write:
        OUT.parent.mkdir(parents=True, exist_ok=True)
        OUT.write_text("\n".join(lines))
        print(f"Wrote {OUT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
