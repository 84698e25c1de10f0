"""The default audit on quiet and on busy cores, with and without the thread policy (issue 31).

"Busy" is a fixed background load: ``--load`` processes (default 2), each a single-thread
torch 512x512 matmul loop, started before the audit and stopped after it. Each audit runs
in a fresh process (the OpenMP wait policy is read once, when torch loads), on the
default analyses (``textrobust.audit.run("default", "rotten_tomatoes")``):

- ``policy``: ``threads="auto"`` (:mod:`textrobust.threads`: passive OpenMP waits, threads
  from affinity and cgroup quota);
- ``no policy``: ``threads=None`` and no ``OMP_WAIT_POLICY`` (torch's defaults: one thread
  per core, spinning waits), what audits did before issue 31.

It prints and writes the seconds of each analysis (``AnalysisResult.seconds``) and of the
whole audit, busy over quiet per setting (the target: the policy's busy audit within 2.5x
of its quiet one), and whether every analysis stored the same records (timing fields left
out) as the first run. Time it on a machine nobody else is using: other processes are load
this script does not control (``uptime`` is printed with every run).

    python benchmarks/busy_machine.py [--load 2] [--runs quiet:policy,quiet:none,busy:policy,busy:none] [--write]

``--write`` appends the tables to benchmarks/results/busy_machine.md.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

OUT = Path(__file__).parent / "results" / "busy_machine.md"
#: Fields that measure time, not results (as in benchmarks/layout/fingerprint.py).
TIMING = {"seconds", "elapsed", "time", "wall_seconds", "prover_seconds", "duration"}
#: A background process: one thread multiplying 512x512 matrices until it is stopped.
SPIN = ("import torch\ntorch.set_num_threads(1)\na = torch.randn(512, 512)\nb = torch.randn(512, 512)\n"
        "while True:\n    a = a @ b\n    a = a / a.norm()\n")


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in sorted(value.items())
                if not (k in TIMING or k.endswith("_seconds") or k.endswith("_time"))}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def child(out: Path, threads: str, analyses: str | None) -> None:
    """One audit in this (fresh) process; writes ``out/bench.json``."""
    from textrobust import audit
    from textrobust.records import encode

    chosen: Any = audit.DEFAULT_ANALYSES if analyses is None else json.loads(analyses)
    began = time.perf_counter()
    result = audit.run("default", "rotten_tomatoes", chosen, out / "audit", progress=False,
                       threads=None if threads == "none" else "auto")
    import torch

    payload = {
        "seconds": time.perf_counter() - began,
        "threads": torch.get_num_threads(),
        "plan": None if result.threads is None else result.threads.to_dict(),
        "wait_policy": os.environ.get("OMP_WAIT_POLICY"),
        "analyses": {name: {"seconds": r.seconds,
                            "records": [_strip(encode(rec)) for rec in r.records],
                            "failures": [_strip(encode(f)) for f in r.failures]}
                     for name, r in result.results.items()},
    }
    (out / "bench.json").write_text(json.dumps(payload, allow_nan=True))


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def _audit(tmp: Path, name: str, policy: bool, analyses: str | None) -> dict[str, Any]:
    out = tmp / name.replace(":", "-").replace(" #", "-")
    out.mkdir()
    env = dict(os.environ)
    env.pop("OMP_WAIT_POLICY", None)  # the policy sets it; without it, torch's default (spinning)
    env["TEXTROBUST_NO_PROGRESS"] = "1"
    command = [sys.executable, __file__, "--child", str(out), "--threads", "auto" if policy else "none"]
    if analyses is not None:
        command += ["--analyses", analyses]
    subprocess.run(command, env=env, check=True)
    return dict(json.loads((out / "bench.json").read_text()))


def _start_load(n: int) -> list[subprocess.Popen[bytes]]:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    procs = [subprocess.Popen([sys.executable, "-c", SPIN], env=env) for _ in range(n)]
    time.sleep(3.0)  # torch imported, loops running
    for p in procs:
        if p.poll() is not None:
            raise SystemExit(f"a background load process exited with {p.returncode}")
    return procs


def _stop_load(procs: list[subprocess.Popen[bytes]]) -> None:
    for p in procs:
        p.terminate()
    for p in procs:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--load", type=int, default=2, help="background matmul processes when busy")
    parser.add_argument("--runs", default="quiet:policy,quiet:none,busy:policy,busy:none",
                        help="comma-separated quiet|busy:policy|none, run in this order")
    parser.add_argument("--analyses", default=None, help="JSON mapping name -> settings (default: the default audit)")
    parser.add_argument("--no-warm-up", action="store_true", help="skip the untimed warm-up audit")
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--threads", default="auto", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        child(args.child, args.threads, args.analyses)
        return
    runs = [tuple(r.split(":")) for r in args.runs.split(",")]
    for busy, policy in runs:
        if busy not in ("quiet", "busy") or policy not in ("policy", "none"):
            parser.error(f"--runs: each run is quiet|busy:policy|none. Got {busy}:{policy}.")
    results: dict[str, dict[str, Any]] = {}
    notes: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        if not args.no_warm_up:  # the models into the page cache (and the default victim trained once)
            _audit(tmp, "warm-up", True, json.dumps({"evaluate": {"n": 20}, "second-order": {"n": 1}}))
        for busy, policy in runs:
            name = f"{busy}:{policy}"
            if name in results:  # a repeated setting: its own row
                name += f" #{sum(1 for r in results if r.split(' #')[0] == name) + 1}"
            procs = _start_load(args.load) if busy == "busy" else []
            try:
                notes[name] = _uptime()
                results[name] = _audit(tmp, name, policy == "policy", args.analyses)
            finally:
                _stop_load(procs)
            print(f"{name}: {results[name]['seconds']:.1f} s, {results[name]['threads']} thread(s), "
                  f"OMP_WAIT_POLICY={results[name]['wait_policy']}; before: {notes[name]}", flush=True)
    text = _tables(results, notes, args)
    print(text)
    if args.write:
        with OUT.open("a") as handle:
            handle.write(text)


def _tables(results: dict[str, dict[str, Any]], notes: dict[str, str], args: argparse.Namespace) -> str:
    names = list(results)
    reference = results[names[0]]
    analyses = list(reference["analyses"])
    lines = ["", f"## {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC: the default audit, "
             f"quiet and with {args.load} background matmul loops", "",
             f"Rerun: `python benchmarks/busy_machine.py --load {args.load} --runs {args.runs} --write`", "",
             "| run | threads | wait policy | " + " | ".join(analyses) + " | total s | same records as "
             f"{names[0]} |", "| --- | ---: | --- | " + " | ".join("---:" for _ in analyses) + " | ---: | --- |"]
    for name, r in results.items():
        same = [a for a in analyses
                if {k: v for k, v in r["analyses"][a].items() if k != "seconds"}
                != {k: v for k, v in reference["analyses"][a].items() if k != "seconds"}]
        cells = " | ".join(f"{r['analyses'][a]['seconds']:.1f}" for a in analyses)
        lines.append(f"| {name} | {r['threads']} | {r['wait_policy'] or 'default (spin)'} | {cells} | "
                     f"{r['seconds']:.1f} | {'yes' if not same else 'NO: ' + ', '.join(same)} |")
    lines += ["", "Busy over quiet (the target: the policy's total within 2.5x):", "",
              "| setting | " + " | ".join(analyses) + " | total |", "| --- | " + " | ".join("---:" for _ in analyses)
              + " | ---: |"]
    for policy in ("policy", "none"):
        quiet, busy = results.get(f"quiet:{policy}"), results.get(f"busy:{policy}")
        if quiet is None or busy is None:
            continue
        cells = " | ".join(f"{busy['analyses'][a]['seconds'] / max(quiet['analyses'][a]['seconds'], 1e-9):.2f}x"
                           for a in analyses)
        lines.append(f"| {policy} | {cells} | {busy['seconds'] / quiet['seconds']:.2f}x |")
    lines += ["", "`uptime` before each run (the background loops of a busy run already started):", ""]
    lines += [f"- {name}: {notes[name]}" for name in names]
    plans = {name: r["plan"]["reason"] for name, r in results.items() if r.get("plan")}
    lines += [f"- {name} thread plan: {reason}" for name, reason in plans.items()]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
