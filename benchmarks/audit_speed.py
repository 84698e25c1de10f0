"""The default audit's time per analysis and per phase (issue 41, item 1).

    python benchmarks/audit_speed.py [--load 0] [--write] [--append] [--note TEXT]

Runs ``textrobust.audit.run()`` with its defaults (the ``quick`` profile: clean accuracy,
the attack on 20 examples, second-order, radius and PR on 5 each, validated substitutes
everywhere, the default victim on Rotten Tomatoes) in this process, with the command
line's thread policy (``OMP_WAIT_POLICY=PASSIVE`` is set here before torch loads;
``threads="auto"``), and splits the wall time of each analysis into phases:

- ``model loading``: every :func:`textrobust.loading.loading` block (Gemma, MiniLM, spaCy,
  sentence encoders, victims: whatever announces itself);
- ``candidate judging``: the validated source's judging (``PeopleSubstitutes.candidates`` /
  ``.evidence`` / ``.judge_pairs`` since issue 46; ``ValidatedSynonyms``'s before);
- ``fill-in``: every fill-in call (``ProductFillIn``, the masked-LM fill-ins,
  ``CausalRescoreFillIn``);
- ``victim queries``: the query layer and the victims' own ``probabilities``;
- ``other``: the rest of the analysis (search, bookkeeping, the store, reports).

Phases nest (the validated source calls a fill-in, a fill-in may load a model): each
second is charged to the innermost phase only, so the phases of an analysis add up to its
wall time. ``setup & report`` is the audit's time outside its analyses. Time before the
audit starts (imports) is not counted. With ``--load N``, N background processes (one
thread each, a 512x512 float32 matmul loop, as in ``benchmarks/busy_machine.py``) run
during the audit. The load average is printed before and after; other processes on the
machine are load this script does not control.

``--write`` writes benchmarks/results/audit_speed.md with this run; ``--append`` adds the
run to it (for the quiet and the loaded run side by side).
"""

from __future__ import annotations

import argparse
import datetime
import functools
import importlib
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

OUT = Path(__file__).parent / "results" / "audit_speed.md"
PHASES = ("model loading", "candidate judging", "fill-in", "victim queries", "other")
OUTSIDE = "setup & report"

#: (phase, "module:Class.method") wrapped with the phase's timer; a target that does not
#: exist (renamed, or an optional part missing) is listed as not timed
TARGETS = [
    ("candidate judging", "textrobust.attack.candidates.validated:ValidatedSynonyms.candidates"),
    ("candidate judging", "textrobust.attack.candidates.validated:ValidatedSynonyms.evidence"),
    ("candidate judging", "textrobust.attack.candidates.people:PeopleSubstitutes.candidates"),
    ("candidate judging", "textrobust.attack.candidates.people:PeopleSubstitutes.evidence"),
    ("candidate judging", "textrobust.attack.candidates.people:PeopleSubstitutes.judge_pairs"),
    ("fill-in", "textrobust.fill_in.product:ProductFillIn.fill"),
    ("fill-in", "textrobust.fill_in.masked:MaskedFillIn.fill"),
    ("fill-in", "textrobust.fill_in.masked:MaskedFillIn.whole_word_logits"),
    ("fill-in", "textrobust.fill_in.causal_rescore:CausalRescoreFillIn.fill"),
    ("victim queries", "textrobust.victims.query:QueryLayer.probabilities"),
    ("victim queries", "textrobust.victims.query:QueryLayer.probabilities_of_ids"),
    ("victim queries", "textrobust.victims.torch:TorchVictim.probabilities"),
    ("victim queries", "textrobust.victims.torch:TorchVictim.probabilities_of_ids"),
    ("victim queries", "textrobust.victims.huggingface:HuggingFaceVictim.probabilities"),
    ("victim queries", "textrobust.victims.sklearn:SklearnVictim.probabilities"),
]
#: one thread multiplying 512x512 matrices until stopped (benchmarks/busy_machine.py)
LOAD_LOOP = ("import torch; torch.set_num_threads(1); a = torch.randn(512, 512); b = torch.randn(512, 512)\n"
             "while True: a @ b")


class PhaseClock:
    """Exclusive time per (analysis, phase): a stack per thread; entering a phase pauses
    the one below it."""

    def __init__(self) -> None:
        self.seconds: dict[tuple[str, str], float] = defaultdict(float)
        self.analysis = OUTSIDE
        self.listener: Any = None
        self._local = threading.local()

    def _stack(self) -> list[list[Any]]:
        if not hasattr(self._local, "stack"):
            self._local.stack = [["other", time.perf_counter()]]
        return self._local.stack  # type: ignore[no-any-return]

    def enter(self, phase: str) -> None:
        stack, now = self._stack(), time.perf_counter()
        top = stack[-1]
        self.seconds[(self.analysis, top[0])] += now - top[1]
        stack.append([phase, now])

    def leave(self) -> None:
        stack, now = self._stack(), time.perf_counter()
        phase, started = stack.pop()
        self.seconds[(self.analysis, phase)] += now - started
        stack[-1][1] = now

    @contextmanager
    def phase(self, phase: str) -> Iterator[None]:
        self.enter(phase)
        try:
            yield
        finally:
            self.leave()

    def switch(self, analysis: str) -> None:
        """Charge the time so far to the current analysis, then count for ``analysis``."""
        stack, now = self._stack(), time.perf_counter()
        for frame in stack:
            self.seconds[(self.analysis, frame[0])] += now - frame[1]
            frame[1] = now
        self.analysis = analysis


def _wrap(clock: PhaseClock, phase: str, function: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(function)
    def timed(*args: Any, **kwargs: Any) -> Any:
        with clock.phase(phase):
            return function(*args, **kwargs)

    return timed


def instrument(clock: PhaseClock) -> list[str]:
    """Wraps the targets and the orchestrator's per-analysis step; returns the targets not found."""
    from textrobust.audit import orchestrator
    from textrobust.loading import LoadEvent, listening

    missing = []
    for phase, target in TARGETS:
        module_name, attribute = target.split(":")
        class_name, method = attribute.split(".")
        try:
            owner = getattr(importlib.import_module(module_name), class_name)
            setattr(owner, method, _wrap(clock, phase, owner.__dict__[method]))
        except (ImportError, AttributeError, KeyError):
            missing.append(target)
    run_one = orchestrator._run_one

    @functools.wraps(run_one)
    def per_analysis(analysis: Any, *args: Any, **kwargs: Any) -> Any:
        clock.switch(analysis.name)
        try:
            return run_one(analysis, *args, **kwargs)
        finally:
            clock.switch(OUTSIDE)

    orchestrator._run_one = per_analysis  # type: ignore[assignment]

    def on_load(event: LoadEvent) -> None:
        if event.done:
            clock.leave()
        else:
            clock.enter("model loading")

    # kept on the clock for the rest of the process: a context manager nobody holds is
    # closed when it is collected, which would stop the listening at once
    clock.listener = listening(on_load)
    clock.listener.__enter__()
    return missing


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def table(clock: PhaseClock, order: list[str], wall: float) -> str:
    lines = ["| analysis | " + " | ".join(PHASES) + " | total s | share of the audit |",
             "| --- |" + " ---: |" * (len(PHASES) + 2)]
    totals: dict[str, float] = defaultdict(float)
    for analysis in [*order, OUTSIDE]:
        values = [clock.seconds.get((analysis, p), 0.0) for p in PHASES]
        total = sum(values)
        for p, v in zip(PHASES, values):
            totals[p] += v
        lines.append(f"| {analysis} | " + " | ".join(f"{v:.1f}" for v in values)
                     + f" | {total:.1f} | {total / wall:.0%} |")
    whole = sum(totals.values())
    lines.append("| **all** | " + " | ".join(f"**{totals[p]:.1f}**" for p in PHASES) + f" | **{whole:.1f}** | 100% |")
    lines.append("| share of the audit | " + " | ".join(f"{totals[p] / whole:.0%}" for p in PHASES) + " | | |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--load", type=int, default=0, help="background single-thread matmul loops during the audit")
    parser.add_argument("--write", action="store_true", help="write benchmarks/results/audit_speed.md with this run")
    parser.add_argument("--append", action="store_true", help="add this run to benchmarks/results/audit_speed.md")
    parser.add_argument("--note", default="", help="a line about the conditions, written with the run")
    parser.add_argument("--out", default=None, help="the audit's run folder (default: a temporary one)")
    args = parser.parse_args()
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # the command line's policy, before torch loads
    os.environ.setdefault("TEXTROBUST_NO_PROGRESS", "1")

    import textrobust.audit as audit

    clock = PhaseClock()
    missing = instrument(clock)
    before = _uptime()
    loops = [subprocess.Popen([sys.executable, "-c", LOAD_LOOP]) for _ in range(args.load)]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(args.out) if args.out else Path(tmp) / "audit"
            clock.switch(OUTSIDE)
            started = time.perf_counter()
            result = audit.run(out=out, progress=False)
            wall = time.perf_counter() - started
            clock.switch(OUTSIDE)
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()
    after = _uptime()
    order = list(result.results)
    from textrobust.loading import load_records

    loads = "; ".join(f"{what}: {seconds:.1f} s" for what, seconds in load_records())
    plan = getattr(result, "threads", None)
    threads = f"{plan.reason}; OpenMP waits {plan.wait_policy}" if plan is not None else "not recorded"
    section = "\n".join([
        f"## Run of {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC"
        f" ({'no background loops of its own' if not args.load else f'{args.load} background matmul loops'})",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {sys.version.split()[0]}; threads: {threads}  ",
        f"`uptime` before: {before}  ",
        f"`uptime` after: {after}  ",
        f"Audit wall time: **{wall:.1f} s** (`textrobust.audit.run()` defaults; target: 60 s quiet, 120 s "
        f"under two background loops)" + (f"  \nNote: {args.note}" if args.note else ""),
        "",
        table(clock, order, wall),
        "",
        f"- Models loaded (in order, each once per process): {loads or 'none announced'}.",
        f"- Not timed (targets absent): {', '.join(missing) if missing else 'none'}.",
        "",
    ])
    print(section)
    if args.write or args.append:
        header = "# The default audit per analysis and per phase (issue 41)\n\n" + \
            "Written by `python benchmarks/audit_speed.py --write` (see its docstring for the phases).\n\n"
        kept = OUT.read_text(encoding="utf-8") if args.append and OUT.exists() else header
        OUT.write_text(kept.rstrip("\n") + "\n\n" + section, encoding="utf-8")
        print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
