"""Benchmark: how fast a run resumes after ``kill -9``, and how fast results are recorded.

(a) For stores holding N finished results (default 1,000 and 50,000), a child process
records N results through :func:`record_missing` (the audit's resume loop) and is killed with
SIGKILL while it holds the store open. Each repeat copies the killed store (database, WAL
and shared-memory files, as the kill left them) and, in a fresh process, measures the time
from opening the store to the first new result being committed, as a command does it:
``RunStore(path)``, ``resume_or_start(..., resume=True)``, :func:`record_missing` (which loads the
done ids, skips them, computes one new example and records it).

(b) Record throughput with one commit per record: ``Run.record`` into an empty store and
into the N-result store, and the whole :func:`record_missing` loop with trivial work.

Usage (from anywhere; paths are taken from this file's location)::

    python benchmarks/resume_after_kill.py [--sizes 1000 50000] [--repeats 7]

The table and the exact command are written to ``benchmarks/results/resume.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
KIND = "attack"
SEED = 13
CONFIG: dict[str, Any] = {"victim": "bow", "recipe": "greedy", "n": 0}


RESUME_HEADER = (
    "| finished results | db + WAL (MiB) | open | resume check | record_missing "
    "| first result | done ids alone | import |\n"
    "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
)


def payload(i: int) -> dict[str, Any]:
    """A result shaped like one attack result (~0.8 KB of JSON)."""
    return {
        "original": "the film is a gripping, well-made thriller with a few dull stretches " * 2,
        "perturbed": "the movie is a riveting, well-crafted thriller with a few boring bits " * 2,
        "label": i % 2,
        "original_scores": [0.12, 0.88],
        "perturbed_scores": [0.61, 0.39],
        "success": True,
        "changes": {"1": ["film", "movie"], "4": ["gripping", "riveting"], "12": ["dull", "bad"]},
        "words_changed": 3,
        "queries": 412,
    }


def ids(n: int, prefix: str = "ex") -> list[tuple[str, int]]:
    return [(f"{prefix}-{i:06d}", i) for i in range(n)]


def record_missing(run: Any, items: list[tuple[str, int]]) -> tuple[int, int]:
    """What the audit does on resume, with trivial work: load the done ids, skip them, and
    record every other item's payload, one commit each. ``(done before, computed)``."""
    done = run.done_ids()
    todo = [(position, eid, i) for position, (eid, i) in enumerate(items) if eid not in done]
    for position, eid, i in todo:
        began = time.perf_counter()
        value = payload(i)
        run.record(eid, value, position=position, seconds=time.perf_counter() - began)
    return len(items) - len(todo), len(todo)


# ---- child processes (this file run with --child MODE) ----------------------------------


def child_build(path: str, n: int) -> None:
    """Record n results, say "ready", then wait to be killed."""
    from textrobust.store import RunStore

    store = RunStore(path)
    run = store.start_run(KIND, {**CONFIG, "n": n}, seed=SEED)
    record_missing(run, ids(n))
    print("ready", flush=True)
    time.sleep(3600)


def child_resume(path: str, n: int) -> None:
    """Resume the killed store as a command would; print the timings as JSON."""
    started = time.perf_counter()
    from textrobust.store import RunStore

    imported = time.perf_counter()
    items = ids(n + 1)
    t0 = time.perf_counter()
    store = RunStore(path)
    t1 = time.perf_counter()
    run = store.resume_or_start(KIND, {**CONFIG, "n": n + 1}, seed=SEED, resume=True)
    t2 = time.perf_counter()
    stats = record_missing(run, items)
    t3 = time.perf_counter()
    done = run.done_ids()
    t4 = time.perf_counter()
    if not run.resumed or (*stats, len(done)) != (n, 1, n + 1):
        raise SystemExit(f"unexpected state after resume: {stats}, {len(done)} done")
    timings = {
        "import": imported - started,
        "open": t1 - t0,
        "resume": t2 - t1,
        "runner": t3 - t2,
        "first_result": t3 - t0,
        "done_ids": t4 - t3,
    }
    print(json.dumps(timings))


def child_throughput(path: str, n: int, mode: str) -> None:
    """Record n results one commit each; print the seconds as JSON."""
    from textrobust.store import RunStore

    store = RunStore(path)
    run = store.start_run("throughput", {"mode": mode}, seed=0)
    items = ids(n, "tp")
    t0 = time.perf_counter()
    if mode == "record":
        for pos, (eid, i) in enumerate(items):
            run.record(eid, payload(i), position=pos, seconds=0.0, queries=412)
    else:
        record_missing(run, items)
    seconds = time.perf_counter() - t0
    if len(run) != n:
        raise SystemExit("records were lost")
    print(json.dumps({"seconds": seconds}))


# ---- the parent ----------------------------------------------------------------------------


def _child(*args: str) -> list[str]:
    return [sys.executable, str(Path(__file__).resolve()), "--child", *args]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SRC), env.get("PYTHONPATH")) if p)
    return env


def _run_json(*args: str) -> dict[str, float]:
    out = subprocess.run(_child(*args), env=_env(), capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"benchmark child {args} failed:\n{out.stderr}")
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def build_killed_store(folder: Path, n: int) -> tuple[Path, float]:
    """A store with ``n`` results whose writer was killed with SIGKILL; build seconds."""
    folder.mkdir(parents=True)
    path = folder / "runs.sqlite"
    started = time.perf_counter()
    child = subprocess.Popen(
        _child("build", str(path), str(n)),
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = child.stdout.readline() if child.stdout else ""
        if line.strip() != "ready":
            raise SystemExit(f"store builder failed: {child.stderr.read() if child.stderr else ''}")
        seconds = time.perf_counter() - started
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.kill()
        child.wait()
    if child.returncode != -signal.SIGKILL:
        raise SystemExit(f"store builder was not killed by SIGKILL: {child.returncode}")
    return path, seconds


def copy_store(path: Path, folder: Path) -> Path:
    """Copy the database with its -wal and -shm files, as the kill left them."""
    folder.mkdir(parents=True)
    for suffix in ("", "-wal", "-shm"):
        source = Path(f"{path}{suffix}")
        if source.exists():
            shutil.copy2(source, folder / source.name)
    return folder / path.name


def _mib(path: Path) -> float:
    return path.stat().st_size / 2**20 if path.exists() else 0.0


def _ms(runs: list[dict[str, float]], key: str) -> str:
    values = [r[key] * 1000 for r in runs]
    return f"{statistics.median(values):.1f} ({min(values):.1f}-{max(values):.1f})"


def _cpu() -> str:
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown CPU"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 50000])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--throughput-records", type=int, default=5000)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "resume.md")
    args = parser.parse_args()
    command = " ".join(["python benchmarks/resume_after_kill.py", *sys.argv[1:]])
    records = args.throughput_records

    load_before = os.getloadavg()[0]
    resume_rows: list[str] = []
    throughput_rows: list[str] = []
    build_notes: list[str] = []

    def throughput(label: str, store_path: Path, mode: str) -> None:
        seconds = _run_json("throughput", str(store_path), str(records), mode)["seconds"]
        rate = records / seconds
        throughput_rows.append(
            f"| {label} | {records:,} | {seconds:.2f} | **{rate:,.0f}** | {1e6 / rate:.0f} |"
        )
        print(throughput_rows[-1], flush=True)

    with tempfile.TemporaryDirectory(prefix="textrobust-bench-") as tmp:
        root = Path(tmp)
        throughput("`Run.record`, empty store", root / "tp-empty" / "runs.sqlite", "record")
        throughput(
            "`record_missing` (trivial work), empty store",
            root / "tp-runner" / "runs.sqlite",
            "runner",
        )
        for n in args.sizes:
            killed, build_seconds = build_killed_store(root / f"build-{n}", n)
            db_mib, wal_mib = _mib(killed), _mib(Path(f"{killed}-wal"))
            build_notes.append(
                f"{n:,} results recorded by `record_missing` in {build_seconds:.1f} s "
                f"(process start included) before the kill"
            )
            runs = [
                _run_json("resume", str(copy_store(killed, root / f"resume-{n}-{r}")), str(n))
                for r in range(args.repeats)
            ]
            resume_rows.append(
                f"| {n:,} | {db_mib:.1f} + {wal_mib:.1f} | {_ms(runs, 'open')} | "
                f"{_ms(runs, 'resume')} | {_ms(runs, 'runner')} | "
                f"**{_ms(runs, 'first_result')}** | {_ms(runs, 'done_ids')} | "
                f"{_ms(runs, 'import')} |"
            )
            print(resume_rows[-1], flush=True)
            throughput(
                f"`Run.record`, store with {n:,} results",
                copy_store(killed, root / f"tp-full-{n}"),
                "record",
            )

    sys.path.insert(0, str(SRC))
    from textrobust.versions import package_versions

    python = package_versions()["python"]
    report = f"""# Resume after `kill -9` and record throughput

Command (from the repository root):

```
{command}
```

Machine: {os.cpu_count()} cores ({_cpu()}), Python {python}, SQLite {sqlite3.sqlite_version},
journal WAL with `synchronous=NORMAL`, one commit per record. Payload: one attack-shaped
result of ~0.8 KB JSON. Date: {time.strftime('%Y-%m-%d')}. Load average (1 min) before
and after: {load_before:.2f} / {os.getloadavg()[0]:.2f} (other work on the same 2 cores
makes the max columns noisy; the medians and minima are the better guide).

## (a) Time from starting a resume to the first new result

A child process recorded N results with `record_missing` and was killed with SIGKILL while
holding the store open ({'; '.join(build_notes)}).
Each of {args.repeats} repeats resumes a
fresh copy of that killed store (db + WAL + shm files as the kill left them) in a new
process. Times in ms, median (min-max):

- open: `RunStore(path)` (includes WAL recovery after the kill);
- resume check: `resume_or_start(..., resume=True)` (find the run, compare configurations,
  read package versions, log the resume);
- record_missing: load the done ids, skip them, compute one trivial example, commit it;
- **first result**: the three together, from before `RunStore(path)` to the first new
  result committed;
- done ids alone: one more `run.done_ids()` afterwards;
- import: `import textrobust.store` in a fresh interpreter (comes on
  top, as does Python's own start-up).

{RESUME_HEADER}
{chr(10).join(resume_rows)}

## (b) Record throughput, one commit per record

| what | records | seconds | records/s | µs/record |
| --- | ---: | ---: | ---: | ---: |
{chr(10).join(throughput_rows)}
"""
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(report, encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        mode, rest = sys.argv[2], sys.argv[3:]
        if mode == "build":
            child_build(rest[0], int(rest[1]))
        elif mode == "resume":
            child_resume(rest[0], int(rest[1]))
        else:
            child_throughput(rest[0], int(rest[1]), rest[2])
    else:
        main()
