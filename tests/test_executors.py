"""The executors keep one contract: every unit exactly once, the same values, errors as
records, early stop, lost workers reported after the finished outcomes.

The process and Ray executors are shared per module (spawning and Ray startup are slow);
the Ray instance is started once, with 2 CPUs, by the ``ray_owner`` fixture.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from textrobust.audit.executor_process import ProcessExecutor
from textrobust.audit.executors import (
    EXECUTORS,
    Executor,
    Outcome,
    Unit,
    WorkerBuildError,
    WorkerLost,
    make_executor,
)
from textrobust.audit.testing import BrokenSpec, DieSpec, LambdaValueSpec, SlowSpec, SquareSpec, cost
from textrobust.errors import ConfigError, MissingDependencyError, TextRobustError

ALL = ["local", "lockstep", "process", "ray"]
POOLS = ["process", "ray"]


def units(n: int) -> list[Unit]:
    return [Unit(f"u{i}", i, i) for i in range(n)]


def summary(outcomes: list[Outcome]) -> list[tuple[Any, ...]]:
    """What must not depend on the executor, in the original order."""
    return sorted((o.unit.position, o.value, o.error and o.error["error"], o.queries) for o in outcomes)


# ---- fixtures -----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def process2() -> Iterator[Executor]:
    with make_executor("process", workers=2) as executor:
        yield executor


@pytest.fixture(scope="module")
def ray_owner() -> Iterator[Executor]:
    """Starts the module's one local Ray instance (2 CPUs) and, closing it, shuts Ray down."""
    ray = pytest.importorskip("ray")
    owner = make_executor("ray", workers=2)
    assert ray.is_initialized()
    temp_dir = owner._temp_dir  # type: ignore[attr-defined]
    assert temp_dir is not None and temp_dir.startswith("/tmp/")
    yield owner
    owner.close()
    assert not ray.is_initialized(), "the executor that started Ray must shut it down"
    assert not os.path.exists(temp_dir)


@pytest.fixture(scope="module")
def ray2(ray_owner: Executor) -> Iterator[Executor]:
    """A second executor on the owner's instance: it must leave Ray running when closed."""
    executor = make_executor("ray", workers=2)
    yield executor
    executor.close()


@pytest.fixture
def executor(request: pytest.FixtureRequest) -> Iterator[Executor]:
    if request.param in ("local", "lockstep"):
        with make_executor(request.param) as local:
            yield local
    else:
        yield request.getfixturevalue({"process": "process2", "ray": "ray2"}[request.param])


# ---- the registry and make_executor -------------------------------------------------------------
def test_registry_lists_the_executors() -> None:
    assert EXECUTORS.names() == ["local", "lockstep", "process", "ray"]
    assert all(entry.summary for entry in EXECUTORS.entries())
    for name in ("local", "process"):
        with make_executor(name, workers=1) as executor:
            assert isinstance(executor, Executor) and executor.name == name and executor.workers == 1
            assert repr(executor) == f"{type(executor).__name__}(workers=1)"


@pytest.mark.parametrize("workers", [0, -1, 1.5, True, "2"])
def test_workers_must_be_a_positive_integer(workers: Any) -> None:
    with pytest.raises(ConfigError) as info:
        make_executor("process", workers=workers)
    assert str(info.value) == f"The '--workers' option must be an integer >= 1. Got {workers!r} instead."


def test_unknown_executor_names_the_option_and_the_choices() -> None:
    with pytest.raises(ConfigError, match=r"'--executor' option must be one of local, lockstep, process, ray\. Got 'dask'"):
        make_executor("dask")


@pytest.mark.parametrize("name", ["local", "process"])
def test_address_only_with_ray(name: str) -> None:
    with pytest.raises(ConfigError, match=rf"'--address' option is only valid with '--executor ray'.*'--executor {name}'"):
        make_executor(name, address="auto")


def test_ray_address_must_not_be_blank() -> None:
    with pytest.raises(ConfigError, match="'--address' option must be 'auto' or a Ray head address"):
        make_executor("ray", address="  ")


def test_local_runs_one_worker() -> None:
    assert make_executor("local", workers=1).workers == 1
    with pytest.raises(ConfigError, match="'--workers' option must be 1 with it. Got 4 instead; use '--executor process'"):
        make_executor("local", workers=4)


def test_process_defaults_to_one_worker_per_core() -> None:
    assert make_executor("process").workers == (os.cpu_count() or 1)  # lazily started: nothing to close


def test_ray_missing_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(__import__("sys").modules, "ray", None)  # `import ray` now fails
    with pytest.raises(MissingDependencyError, match=re.escape("pip install 'textrobust[ray]'")):
        make_executor("ray", workers=1)


def test_ray_workers_beyond_the_instance_cpus(ray_owner: Executor) -> None:
    with pytest.raises(ConfigError, match="asks for 3 Ray actors of one CPU each, but the Ray instance has 2 CPU"):
        make_executor("ray", workers=3)


# ---- the contract, under every executor ---------------------------------------------------------
@pytest.mark.parametrize("executor", ALL, indirect=True)
def test_every_unit_once_with_the_same_outcomes(executor: Executor) -> None:
    given = units(30)
    spec = SquareSpec(fail_on=(4, 17))
    outcomes = list(executor.map(spec, given))
    expected = list(make_executor("local").map(spec, given))
    assert sorted(o.unit.id for o in outcomes) == sorted(u.id for u in given)
    assert summary(outcomes) == summary(expected)
    for o in outcomes:
        assert o.unit is given[o.unit.position]  # the unit as given, payload included
        x = o.unit.payload
        assert o.queries == cost(x)
        assert o.seconds >= 0
        if x in (4, 17):
            assert o.failed and o.value is None
            assert o.error is not None and o.error["error"] == "ValueError"
            assert o.error["message"] == f"SquareWorker refuses {x}"
            assert "Traceback" in o.error["traceback"]
        else:
            assert not o.failed and o.value == x * x
    names = {o.worker for o in outcomes}
    pattern = {"local": r"local", "lockstep": r"lockstep-[0-7]", "process": r"process-[12]", "ray": r"ray-[0-9a-f]{8}"}[executor.name]
    assert all(re.fullmatch(pattern, n) for n in names), names
    assert len(names) <= executor.workers


@pytest.mark.parametrize("executor", ALL, indirect=True)
def test_an_empty_map_yields_nothing(executor: Executor) -> None:
    assert list(executor.map(SquareSpec(), [])) == []


class CountingUnits(Sequence[Unit]):
    """Units handed out lazily; ``pulled`` tells how many the executor has taken."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.pulled = 0

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, index: Any) -> Any:
        raise AssertionError("executors iterate the units; they never index them")

    def __iter__(self) -> Iterator[Unit]:
        for i in range(self.n):
            self.pulled += 1
            yield Unit(f"u{i}", i, i)


@pytest.mark.parametrize("executor", ALL, indirect=True)
def test_units_in_flight_are_bounded(executor: Executor) -> None:
    given = CountingUnits(60)
    seen = 0
    for _ in executor.map(SquareSpec(), given):
        seen += 1
        assert given.pulled - seen <= 2 * executor.workers
    assert seen == given.pulled == 60


@pytest.mark.parametrize("executor", ALL, indirect=True)
def test_workers_are_built_once_and_kept_for_the_same_spec(executor: Executor, tmp_path: Path) -> None:
    log = tmp_path / "builds.log"
    spec = SquareSpec(build_log=str(log))
    list(executor.map(spec, units(20)))
    first = log.read_text().splitlines()
    assert 1 <= len(first) <= executor.workers
    assert len(set(first)) == len(first)  # one build per worker process
    list(executor.map(spec, units(20)))
    assert log.read_text().splitlines() == first  # the same spec again: no rebuild
    list(executor.map(SquareSpec(fail_on=(1,), build_log=str(log)), units(20)))
    assert len(log.read_text().splitlines()) > len(first)  # another spec: built anew


def test_local_caches_the_worker_by_spec_identity(tmp_path: Path) -> None:
    log = tmp_path / "builds.log"
    spec = SquareSpec(build_log=str(log))
    with make_executor("local") as local:
        list(local.map(spec, units(3)))
        list(local.map(spec, units(3)))
        assert len(log.read_text().splitlines()) == 1
        list(local.map(SquareSpec(build_log=str(log)), units(3)))  # equal, but another object
        assert len(log.read_text().splitlines()) == 2


@pytest.mark.parametrize("executor", ALL, indirect=True)
def test_one_map_at_a_time(executor: Executor) -> None:
    first = executor.map(SquareSpec(), units(10))
    next(first)
    with pytest.raises(TextRobustError, match="already running a map"):
        next(executor.map(SquareSpec(), units(3)))
    assert len(list(first)) == 9
    assert len(list(executor.map(SquareSpec(), units(3)))) == 3


# ---- stopping -----------------------------------------------------------------------------------
def _lines(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


@pytest.mark.parametrize("how", ["close", "interrupt"])
@pytest.mark.parametrize("executor", ALL, indirect=True)
def test_stopping_early_cancels_the_pending_units(executor: Executor, how: str, tmp_path: Path) -> None:
    log = tmp_path / "work.log"
    n = 30
    outcomes = executor.map(SlowSpec(seconds=0.3, slow_on=tuple(range(n)), log=str(log)), units(n))
    got = [next(outcomes), next(outcomes)]
    started = time.perf_counter()
    if how == "close":
        outcomes.close()
    else:
        with pytest.raises(KeyboardInterrupt):
            outcomes.throw(KeyboardInterrupt)
    assert time.perf_counter() - started < 5, "stopping must not wait for the pending units"
    time.sleep(1.0 if executor.name == "ray" else 0)  # ray.kill is asynchronous
    after_stop = _lines(log)
    time.sleep(0.6)  # longer than one unit: a worker still running would log its end
    assert _lines(log) == after_stop
    assert sum(line.startswith("end") for line in after_stop) < n
    assert {o.unit.position for o in got} <= {int(line.split()[2]) for line in after_stop if line.startswith("end")}
    if executor.name == "process":  # the worker processes are gone (reaped)
        for pid in {int(line.split()[1]) for line in after_stop}:
            with pytest.raises(ProcessLookupError):
                os.kill(pid, 0)
    assert len(list(executor.map(SquareSpec(), units(5)))) == 5  # and the executor works again


# ---- failures -----------------------------------------------------------------------------------
def test_a_dying_process_is_reported_after_the_finished_outcomes() -> None:
    with ProcessExecutor(workers=1) as executor:
        yielded: list[int] = []
        with pytest.raises(WorkerLost) as info:
            for outcome in executor.map(DieSpec(die_on=(3,)), units(6)):
                yielded.append(outcome.unit.position)
        assert yielded == [0, 1, 2]  # one worker runs the units in order: all of 0-2 finished
        lost = info.value
        assert lost.worker == "process-1" and "exit code 1" in lost.cause
        assert "u3" in lost.in_flight and set(lost.in_flight) <= {"u3", "u4"}
        assert len(yielded) + len(lost.in_flight) + lost.not_started == 6
        assert f"with {len(lost.in_flight)} unit(s) in flight" in str(lost)
        assert "`--resume`" in str(lost)
        assert isinstance(lost, TextRobustError)
        assert len(list(executor.map(SquareSpec(), units(4)))) == 4  # a new pool after the loss


@pytest.mark.parametrize("executor", POOLS, indirect=True)
def test_a_dying_worker_raises_worker_lost(executor: Executor) -> None:
    yielded: list[Outcome] = []
    with pytest.raises(WorkerLost, match=r"unit\(s\) in flight.*`--resume`") as info:
        for outcome in executor.map(DieSpec(die_on=(5,)), units(12)):
            yielded.append(outcome)
    positions = [o.unit.position for o in yielded]
    assert len(positions) == len(set(positions)) and 5 not in positions
    assert all(o.value == o.unit.payload and o.error is None for o in yielded)
    assert "u5" in info.value.in_flight
    assert len(yielded) + len(info.value.in_flight) + info.value.not_started == 12
    assert len(list(executor.map(SquareSpec(), units(4)))) == 4


def test_the_die_double_never_ends_the_driver() -> None:
    (outcome,) = make_executor("local").map(DieSpec(die_on=(0,)), units(1))
    assert outcome.error is not None and outcome.error["error"] == "RuntimeError"


def test_a_failing_build_raises_locally_as_is() -> None:
    with pytest.raises(ValueError, match="no victim here"):
        list(make_executor("local").map(BrokenSpec("no victim here"), units(3)))


@pytest.mark.parametrize("executor", POOLS, indirect=True)
def test_a_failing_build_in_a_worker_raises_worker_build_error(executor: Executor) -> None:
    with pytest.raises(WorkerBuildError, match="Building the worker in .* failed: ValueError: no victim here") as info:
        list(executor.map(BrokenSpec("no victim here"), units(6)))
    assert info.value.error["error"] == "ValueError" and "Traceback" in info.value.error["traceback"]
    assert len(list(executor.map(SquareSpec(), units(4)))) == 4


@dataclass(frozen=True)
class LambdaSpec:
    """Holds a live function: fine in this process, not picklable."""

    fn: Any

    def build(self) -> Any:
        fn = self.fn

        class Worker:
            def __call__(self, payload: Any) -> Any:
                return fn(payload)

            def queries(self) -> int:
                return 0

        return Worker()


def test_an_unpicklable_spec_is_refused_by_the_pools_and_fine_locally(process2: Executor) -> None:
    spec = LambdaSpec(lambda x: x + 1)
    with pytest.raises(ConfigError, match="LambdaSpec cannot be pickled for the 'process' executor.*'--executor local'"):
        process2.map(spec, units(2))
    assert [o.value for o in make_executor("local").map(spec, units(2))] == [1, 2]


@pytest.mark.parametrize("executor", POOLS, indirect=True)
def test_an_unpicklable_return_value_is_an_error_record(executor: Executor) -> None:
    outcomes = list(executor.map(LambdaValueSpec(), units(3)))
    assert len(outcomes) == 3
    for o in outcomes:
        assert o.value is None and o.error is not None and o.error["error"] == "TypeError"
        assert "return value cannot be pickled" in o.error["message"]


def test_an_unpicklable_payload_is_refused_in_the_driver(process2: Executor) -> None:
    given = [Unit("ok", 0, 1), Unit("gen", 1, (i for i in range(3)))]
    with pytest.raises(ConfigError, match="payload of unit 'gen' cannot be pickled for the 'process' executor"):
        list(process2.map(SquareSpec(), given))
    assert len(list(process2.map(SquareSpec(), units(3)))) == 3


def test_closing_a_ray_executor_it_did_not_start_leaves_ray_running(ray2: Executor) -> None:
    import ray

    list(ray2.map(SquareSpec(), units(4)))
    ray2.close()
    assert ray.is_initialized()
    assert len(list(ray2.map(SquareSpec(), units(4)))) == 4  # new actors on the same instance


# ---- what the Ray executor ships: absolute victim folders (no Ray started) ----------------------
def test_ray_ships_a_relative_victim_folder_as_an_absolute_path(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """An actor on another node starts in the directory `ray start` ran in there, not the
    driver's: the folder leaves the driver as an absolute path (docs/ray.md)."""
    import pickle

    from textrobust.analyses import ANALYSES
    from textrobust.audit import executor_ray
    from textrobust.audit.executor_ray import RayExecutor, shipped_spec
    from textrobust.audit.orchestrator import AnalysisWorkerSpec
    from textrobust.audit.sources import VictimSource
    from textrobust.victims.function import FunctionVictim

    def spec(victim: VictimSource) -> AnalysisWorkerSpec:
        return AnalysisWorkerSpec(victim, ANALYSES.get("evaluate")(), ("negative", "positive"), seed=0)

    relative = spec(VictimSource(path="victims/../victims/cnn"))
    shipped = shipped_spec(relative, cwd="/data/driver")
    assert shipped.victim.path == "/data/driver/victims/cnn"  # type: ignore[attr-defined]
    assert relative.victim.path == "victims/../victims/cnn"  # the driver's own spec is unchanged
    assert (shipped.analysis, shipped.seed) == (relative.analysis, relative.seed)  # type: ignore[attr-defined]
    absolute = spec(VictimSource(path=str(tmp_path / "cnn")))
    assert shipped_spec(absolute) is absolute
    toy = spec(VictimSource(obj=FunctionVictim(lambda texts: [[0.5, 0.5]] * len(texts), ("a", "b"))))
    assert shipped_spec(toy) is toy  # an object travels pickled, not as a path
    assert shipped_spec(SquareSpec()) == SquareSpec()  # a spec without a victim
    # the executor's map ships it so, the driver's working directory the base
    monkeypatch.chdir(tmp_path)
    sent: list[Any] = []
    executor = object.__new__(RayExecutor)
    executor._mapping = False  # type: ignore[attr-defined]

    class FakeRay:
        cloudpickle = pickle

    def record(self: Any, spec: Any, units: Any, key: str, blob: bytes) -> Iterator[Outcome]:
        sent.append(pickle.loads(blob))  # what leaves the driver
        return iter(())

    monkeypatch.setattr(executor_ray, "_import_ray", lambda: FakeRay)
    monkeypatch.setattr(RayExecutor, "_map", record)
    list(executor.map(relative, []))
    assert sent[0].victim.path == str(tmp_path / "victims" / "cnn")
