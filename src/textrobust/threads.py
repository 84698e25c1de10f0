"""How many threads torch uses, chosen from the CPUs this process can actually get, and
how its idle OpenMP threads wait.

Why (issue 31): on 2 cores shared with other CPU-bound processes, the default audit ran
3.6x (two background matmul loops) to 14x (load 5-6) slower than on quiet cores, far
more than its fair share of the cores explains. torch's CPU kernels run in OpenMP
parallel regions (GNU libgomp in the pip wheels, also under MKL and oneDNN): every region
ends at a barrier where the finished threads *spin* (``OMP_WAIT_POLICY`` unset: some
300,000 spins) waiting for the others. When the cores are busy, one of torch's threads
is often descheduled; the region then waits a whole scheduler slice for it while its
partner burns the CPU it needs. Measured on the project's 2-core machine under load 7-15
(other processes), timed alternately in one process, medians of 3-5:

===================================  ==============  ==============
                                     1 thread        2 threads
===================================  ==============  ==============
victim forward, 64 texts, spinning   72-122 ms       520-1544 ms
victim forward, 64 texts, PASSIVE    43-99 ms        41-103 ms
fill-in, one sentence, spinning      6.3 s           31.9 s
fill-in, one sentence, PASSIVE       4.9 s           2.2 s
===================================  ==============  ==============

So the policy (:func:`apply_threads`, called by :func:`textrobust.audit.run`):

- **wait policy** (:func:`passive_waits`): ``OMP_WAIT_POLICY=PASSIVE`` unless the user
  set one, so an idle OpenMP thread sleeps instead of spinning. libgomp reads it once,
  when torch is imported: the command line sets it first thing in ``main``
  (:mod:`textrobust.cli.app`), before anything imports torch. A library call can only do
  so when torch is not imported yet; :func:`apply_threads` does it then. A program that
  imports torch before running an audit keeps the policy it started with: set
  ``OMP_WAIT_POLICY=PASSIVE`` in its environment (the :class:`ThreadPlan` says which
  policy was in effect).
- **threads** (:func:`choose_threads`): the CPUs this process may run on (its affinity,
  :func:`affinity_cpus`; in a container often fewer than the machine's), capped by the
  cgroup CPU quota (:func:`cgroup_cpu_quota`: ``cpu.max`` of cgroup v2, or
  ``cpu.cfs_quota_us / cpu.cfs_period_us`` of v1; ``docker --cpus 1.5`` gives 1). With
  spinning waits (torch already loaded without the passive policy) also lowered to the
  cores other processes leave idle (:func:`others_load`: the one-minute load average,
  scaled to our share of the machine's CPUs, less this process's own recent use), at
  least 1. With passive waits the load does not lower it: the scheduler shares busy
  cores per thread, so a second thread that sleeps while it waits gains time (table).
  ``TEXTROBUST_THREADS`` overrides the choice. A count given either way must be from 1
  to the CPUs of the affinity (:func:`check_threads`, :func:`environment_threads`); any
  other value is a ConfigError, never ignored (``audit`` and ``train`` exit 2 alike).

The choice is made once per audit, at its start: the load average is a one-minute mean,
too slow to follow a load that changes within an audit, and changing the thread count
within one would not change results (measured: the default victim's probabilities and
the default fill-in's scores are bitwise equal with 1 and 2 threads) but would make
timings hard to read. torch is imported only by
:func:`apply_threads`, never by importing this module.
"""

from __future__ import annotations

import importlib.util
import math
import os
import sys
import time
from collections.abc import Mapping, MutableMapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from textrobust.errors import ConfigError

__all__ = [
    "ThreadPlan",
    "Threads",
    "affinity_cpus",
    "apply_threads",
    "cgroup_cpu_quota",
    "check_threads",
    "choose_threads",
    "environment_threads",
    "others_load",
    "own_load",
    "passive_waits",
    "plan_threads",
]

#: What :func:`apply_threads` accepts: a thread count (an int, or its digits as given on
#: a command line), ``"auto"`` (the policy) or None (leave torch's setting alone).
Threads = int | str | None

#: Where the cgroup file systems are mounted (a parameter of the readers, for tests).
CGROUP_ROOT = Path("/sys/fs/cgroup")
#: The variable the user sets to choose the thread count.
THREADS_VARIABLE = "TEXTROBUST_THREADS"


@dataclass(frozen=True)
class ThreadPlan:
    """The threads an audit uses and why: ``threads`` (torch's intra-op threads; None:
    left as they were), ``source`` (``auto``, ``given``, ``TEXTROBUST_THREADS`` or
    ``unchanged``), the inputs of the choice (``affinity`` CPUs, the cgroup ``quota`` in
    CPUs or None, the ``load`` of other processes or None), ``wait_policy`` (the
    environment's ``OMP_WAIT_POLICY``, which torch follows if it loaded after it was set,
    as under the command line; None: libgomp's default, spinning) and
    ``reason``, one sentence for the run's summary."""

    threads: int | None
    source: str
    affinity: int
    quota: float | None
    load: float | None
    wait_policy: str | None
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """The plan as a JSON-ready dict (``summary.json``'s ``threads``)."""
        return asdict(self)


# ---- the CPUs this process can get ------------------------------------------------------
def affinity_cpus() -> int:
    """The CPUs this process may run on (``os.sched_getaffinity``; ``os.cpu_count`` where
    that does not exist), at least 1."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except (AttributeError, OSError):  # not on Linux
        return max(os.cpu_count() or 1, 1)


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except (OSError, UnicodeDecodeError):
        return None


def _v2_quota(text: str | None) -> float | None:
    """``cpu.max``: ``"<quota> <period>"`` or ``"max <period>"`` (no limit)."""
    parts = (text or "").split()
    if len(parts) != 2 or parts[0] == "max":
        return None
    try:
        quota, period = int(parts[0]), int(parts[1])
    except ValueError:
        return None
    return quota / period if quota > 0 and period > 0 else None


def _v1_quota(quota_text: str | None, period_text: str | None) -> float | None:
    """``cpu.cfs_quota_us`` (-1: no limit) over ``cpu.cfs_period_us``."""
    try:
        quota, period = int(quota_text or ""), int(period_text or "")
    except ValueError:
        return None
    return quota / period if quota > 0 and period > 0 else None


def _ancestors(relative: str) -> list[str]:
    """``"/a/b"`` -> ``["a/b", "a", ""]``: the cgroup and its parents (a limit on any of
    them applies)."""
    parts = [p for p in relative.strip("/").split("/") if p]
    return ["/".join(parts[:i]) for i in range(len(parts), -1, -1)]


def cgroup_cpu_quota(root: Path = CGROUP_ROOT, self_cgroup: Path = Path("/proc/self/cgroup")) -> float | None:
    """The CPU quota of this process's cgroup in CPUs (``2.0``: two CPUs' worth of time per
    period), the smallest over the cgroup and its parents, cgroup v2 (``cpu.max``) or v1
    (``cpu.cfs_quota_us`` / ``cpu.cfs_period_us``, under ``cpu`` or ``cpu,cpuacct``);
    None when there is none or it cannot be read. In a container the process's cgroup
    path may not exist under ``root`` (its own cgroup is mounted as the root): the root's
    own files are read too."""
    quotas: list[float] = []
    for line in (_read(self_cgroup) or "").splitlines():
        fields = line.split(":", 2)
        if len(fields) != 3:
            continue
        _, controllers, relative = fields
        if controllers == "":  # cgroup v2: "0::/path"
            for base in (root, root / "unified"):
                for part in _ancestors(relative):
                    quota = _v2_quota(_read(base / part / "cpu.max"))
                    if quota is not None:
                        quotas.append(quota)
        elif "cpu" in controllers.split(","):
            for name in (controllers, "cpu", "cpu,cpuacct", "cpuacct,cpu"):
                for part in _ancestors(relative):
                    folder = root / name / part
                    quota = _v1_quota(_read(folder / "cpu.cfs_quota_us"), _read(folder / "cpu.cfs_period_us"))
                    if quota is not None:
                        quotas.append(quota)
    return min(quotas) if quotas else None


# ---- the load of other processes ------------------------------------------------------
_last_sample: tuple[float, float, float] | None = None  # (monotonic time, CPU seconds, own load then)


def _process_age(stat: Path = Path("/proc/self/stat"), uptime: Path = Path("/proc/uptime")) -> float | None:
    """Seconds since this process started (Linux), None where unknown."""
    text, up = _read(stat), _read(uptime)
    if not text or not up:
        return None
    try:
        start_ticks = int(text.rsplit(")", 1)[1].split()[19])  # field 22, counted after "(comm)"
        return max(float(up.split()[0]) - start_ticks / os.sysconf("SC_CLK_TCK"), 0.0)
    except (IndexError, ValueError, OSError):
        return None


def own_load() -> float:
    """This process's part of the one-minute load average: its CPU use (all threads) as
    the kernel averages it, exponentially with a one-minute time constant. Followed from
    the previous call of this function, or, the first time, from the process's start."""
    global _last_sample
    now, cpu = time.monotonic(), time.process_time()
    if _last_sample is None:
        age = _process_age()
        if not age:
            own = 0.0
        else:
            own = cpu / max(age, 1.0) * (1.0 - math.exp(-age / 60.0))
    else:
        then, cpu_then, own_then = _last_sample
        elapsed = max(now - then, 1e-6)
        decay = math.exp(-elapsed / 60.0)
        own = (cpu - cpu_then) / elapsed * (1.0 - decay) + own_then * decay
    _last_sample = (now, cpu, own)
    return own


def others_load(cpus: int) -> float | None:
    """The load of other processes on the ``cpus`` this process may use: the one-minute
    load average, times ``cpus`` over the machine's CPUs (the load is machine-wide, and in
    a container it is the host's), less :func:`own_load`; None where there is no load
    average (not on Unix)."""
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        return None
    machine = max(os.cpu_count() or cpus, cpus)
    return max(load * cpus / machine - own_load(), 0.0)


def choose_threads(affinity: int, quota: float | None, load: float | None, *, passive: bool = True) -> int:
    """Intra-op threads for ``affinity`` usable CPUs, a cgroup ``quota`` in CPUs (None:
    none) and ``load``, the other processes' load on those CPUs (None: unknown): the CPUs,
    at most the quota rounded down, at least 1. With spinning waits (``passive=False``:
    torch was loaded without ``OMP_WAIT_POLICY=PASSIVE``) also at most the CPUs the load
    leaves idle (rounded to the nearest): a spinning thread on a busy core slows its
    partners (measured: 2 threads 5x slower than 1 under load 10). With passive waits the
    load does not lower the count: the scheduler shares the cores per thread, and 2
    threads ran 2.2x faster than 1 under the same load.

    >>> choose_threads(2, None, 2.0), choose_threads(8, 1.5, 0.0), choose_threads(2, None, 2.0, passive=False)
    (2, 1, 1)
    """
    cpus = max(int(affinity), 1)
    if quota is not None:
        cpus = max(min(cpus, int(math.floor(quota + 1e-9))), 1)
    if load and not passive:
        cpus = max(min(cpus, int(math.floor(cpus - load + 0.5))), 1)
    return cpus


#: Who gives a thread count, for messages: the parameter (the CLI words it as ``--threads``).
THREADS_SUBJECT = "The 'threads' parameter"


def _count(value: object, cpus: int) -> int | None:
    """``value`` as a thread count from 1 to ``cpus`` (an int, or ASCII digits as a command
    line or the environment gives them), else None."""
    if isinstance(value, str):
        text = value.strip()
        value = int(text) if text.isascii() and text.isdigit() else None  # not int(): it reads "²" and "1_0"
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= cpus:
        return None
    return value


def check_threads(threads: object, subject: str = THREADS_SUBJECT, *, cpus: int | None = None) -> Threads:
    """``threads`` as :func:`apply_threads` takes it: ``"auto"``, None, or a thread count
    from 1 to ``cpus`` (default :func:`affinity_cpus`, the CPUs this process may run on:
    more threads than CPUs only wait for each other), returned as an int; anything else is
    a ConfigError naming ``subject`` and what it accepts.

    >>> check_threads("2", cpus=4), check_threads("auto", cpus=4)
    (2, 'auto')
    """
    if threads is None:
        return None
    if threads == "auto":
        return "auto"
    return _given(threads, subject, affinity_cpus() if cpus is None else cpus)


def _given(threads: object, subject: str, cpus: int) -> int:
    """``threads`` as a count from 1 to ``cpus``, else the ConfigError of :func:`check_threads`."""
    count = _count(threads, cpus)
    if count is None:
        python = " (Python: or None, to leave torch's setting)" if subject == THREADS_SUBJECT else ""
        raise ConfigError(f"{subject} must be 'auto' or a thread count from 1 to {cpus}, the CPUs this process "
                          f"may run on{python}. Got {threads!r} instead.")
    return count


def environment_threads(environ: Mapping[str, str] | None = None, *, cpus: int | None = None) -> int | None:
    """The thread count that ``TEXTROBUST_THREADS`` sets (None when unset or empty); a value
    that is not a count from 1 to ``cpus`` (default :func:`affinity_cpus`) is a ConfigError
    naming the variable: ``textrobust audit`` and ``textrobust train`` refuse it alike."""
    env = os.environ if environ is None else environ
    given = env.get(THREADS_VARIABLE, "").strip()
    if not given:
        return None
    limit = affinity_cpus() if cpus is None else cpus
    count = _count(given, limit)
    if count is None:
        raise ConfigError(f"The environment variable {THREADS_VARIABLE} must be a thread count from 1 to {limit}, "
                          f"the CPUs this process may run on, or unset (textrobust then chooses). Got {given!r} "
                          "instead.")
    return count


def plan_threads(threads: Threads = "auto", environ: Mapping[str, str] | None = None) -> ThreadPlan:
    """What :func:`apply_threads` would do (nothing is changed): ``threads`` an int (that
    many, at most the CPUs of the affinity: :func:`check_threads`), ``"auto"``
    (``TEXTROBUST_THREADS`` when set, :func:`environment_threads`, else
    :func:`choose_threads` from the affinity, the cgroup quota and the load) or None
    (torch's setting left alone). A bad count or variable is a ConfigError."""
    env = os.environ if environ is None else environ
    wait = env.get("OMP_WAIT_POLICY") or None
    affinity = affinity_cpus()
    if threads is None:
        return ThreadPlan(None, "unchanged", affinity, None, None, wait, "torch's thread setting left as it was")
    if threads != "auto":
        count = _given(threads, THREADS_SUBJECT, affinity)
        return ThreadPlan(count, "given", affinity, None, None, wait, f"{count} thread(s), as given")
    chosen = environment_threads(env, cpus=affinity)
    if chosen is not None:
        return ThreadPlan(chosen, THREADS_VARIABLE, affinity, None, None, wait,
                          f"{chosen} thread(s), from {THREADS_VARIABLE}")
    quota = cgroup_cpu_quota()
    load = others_load(affinity)
    passive = (wait or "").upper() == "PASSIVE"
    count = choose_threads(affinity, quota, load, passive=passive)
    why = f"{count} thread(s): {affinity} CPU(s) in this process's affinity"
    if quota is not None:
        why += f", a cgroup quota of {quota:g} CPU(s)"
    if load is not None:
        why += f", other processes' load {load:.1f}"
        why += " (passive waits: not lowered by it)" if passive else " (spinning waits: only idle cores)"
    return ThreadPlan(count, "auto", affinity, quota, None if load is None else round(load, 2), wait, why)


def passive_waits(environ: MutableMapping[str, str] | None = None) -> None:
    """Make idle OpenMP threads sleep instead of spin (``OMP_WAIT_POLICY=PASSIVE``) unless
    the environment already chooses a wait policy. Has effect only when done before torch
    (libgomp) is loaded: the command line calls it first thing."""
    env = os.environ if environ is None else environ
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")


_interop_set = False


def apply_threads(threads: Threads = "auto") -> ThreadPlan:
    """Choose the threads (:func:`plan_threads`) and set them: torch's intra-op threads
    (``torch.set_num_threads``) and, once per process and only before any inter-op work,
    its inter-op threads. When torch is not imported yet, the OpenMP wait policy is made
    passive first (:func:`passive_waits`), since libgomp reads it only when it loads.
    ``threads=None`` changes nothing; without torch installed only the plan is returned."""
    global _interop_set
    if threads is None:
        return plan_threads(None)
    if "torch" not in sys.modules:
        passive_waits()
    plan = plan_threads(threads)
    if "torch" not in sys.modules and importlib.util.find_spec("torch") is None:
        return plan  # a victim without torch: nothing to set
    import torch

    torch.set_num_threads(plan.threads or 1)
    if not _interop_set:
        _interop_set = True
        try:
            torch.set_num_interop_threads(plan.threads or 1)
        except RuntimeError:  # inter-op work already ran (or it was set before): keep it
            pass
    return plan
