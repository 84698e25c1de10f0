"""The ``ray`` executor: one Ray actor per worker, on this machine or on a cluster.

With ``address=None`` the executor starts a private local Ray instance with
``num_cpus=workers``, its files in a fresh folder under ``/tmp``, without dashboard and with
usage statistics off (nothing leaves the machine), and shuts it down on
:meth:`RayExecutor.close`. Every server of that instance listens on 127.0.0.1 only
(:func:`_loopback_only`; checked by ``tests/test_ray_cluster.py``). With ``address="auto"``
or a head address it joins a running cluster and leaves it running; textrobust must be
installed on every node (docs/ray.md). If Ray is already initialised in this process, the
executor uses that instance and leaves it running. A victim folder given as a relative path
is sent as an absolute one (:func:`shipped_spec`): an actor on another node does not start in
the driver's working directory; the folder must exist at that absolute path on every node.

Each actor (``num_cpus=1``, and ``num_gpus=gpus_per_worker``) builds its worker lazily on
its first unit and keeps it for every later unit of the same spec: the victim is loaded once
per actor. Before any work, the executor checks that the instance has room for its actors
(CPUs, and GPUs node by node) and raises a ConfigError otherwise. At most two units per
actor are in flight; results are collected with ``ray.wait``. An actor that dies ends the
map with :class:`~textrobust.audit.executors.WorkerLost`; closing a map early, a
KeyboardInterrupt or a lost actor kills every actor (the next ``map`` starts new ones).
"""

from __future__ import annotations

import dataclasses
import logging
import math
import os
import pickle
import shutil
import signal
import socket
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from types import TracebackType
from typing import Any, cast

from textrobust.audit.executor_process import limit_threads
from textrobust.audit.executors import (
    Outcome,
    Unit,
    WorkerBuildError,
    WorkerLost,
    WorkerSpec,
    call_worker,
    check_gpus_per_worker,
    check_workers,
    count_remaining,
    error_payload,
    pickled_spec,
    single_map_guard,
)
from textrobust.audit.sources import VictimSource
from textrobust.errors import ConfigError, MissingDependencyError, TextRobustError

__all__ = ["RayExecutor", "actor_room", "shipped_spec"]

_PER_WORKER = 2
_WAIT_SECONDS = 1.0  # ray.wait in slices, so Ctrl-C is seen promptly
_CONNECT_SECONDS = 10.0  # the longest wait for a Ray head to accept a connection (--address)
_ANSWER_SECONDS = 5.0  # the longest wait for it to answer as a gRPC (HTTP/2) server does
#: HTTP/2's client connection preface and an empty SETTINGS frame (RFC 9113, section 3.4):
#: a Ray head (its GCS, or Ray Client's server) speaks gRPC, which answers with SETTINGS.
_HTTP2_HELLO = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
_HTTP2_SETTINGS = 0x4
_CLUSTER_SWITCH = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"  # Ray's own switch: "0" = this machine only


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise MissingDependencyError("ray", "The 'ray' executor", "pip install 'textrobust[ray]'") from None
    return ray


class _RayWorker:
    """The actor (made remote by :class:`RayExecutor`): holds one built worker; ``prepare``
    sets the spec, ``run`` runs one unit."""

    def __init__(self) -> None:
        import ray

        limit_threads()
        self.name = "ray-" + cast(str, ray.get_runtime_context().get_actor_id())[:8]  # set: this is an actor
        self._key: str | None = None
        self._spec: bytes = b""
        self._worker: Any = None

    def prepare(self, key: str, spec: bytes) -> str:
        if key != self._key:
            self._worker = None  # free the old worker before the new one is built
            self._key, self._spec = key, spec
        return self.name

    def run(self, payload: Any) -> tuple[Any, ...]:
        if self._worker is None:
            try:
                self._worker = pickle.loads(self._spec).build()
            except Exception as exc:
                return ("build_error", self.name, error_payload(exc))
        value, error, seconds, queries = call_worker(self._worker, payload)
        try:
            pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:
            wrapped = TypeError(f"The worker's return value cannot be pickled: {type(exc).__name__}: {exc}")
            value, error = None, error_payload(wrapped)
        return ("done", self.name, value, error, seconds, queries)


class RayExecutor:
    """``workers`` Ray actors (default: one per CPU of the instance, or as many as its GPUs
    hold), each reserving ``gpus_per_worker`` GPUs; see the module docstring."""

    name = "ray"

    def __init__(self, workers: int | None = None, address: str | None = None,
                 gpus_per_worker: float | None = None) -> None:
        ray = _import_ray()
        workers = check_workers(workers)
        self.gpus_per_worker = check_gpus_per_worker(gpus_per_worker)
        self.address = address
        self._owns_ray = False
        self._temp_dir: str | None = None
        self._actors: list[Any] = []
        self._prepared: dict[int, str] = {}  # actor index -> spec key it holds
        self._names: dict[int, str] = {}  # actor index -> "ray-<actor id prefix>"
        self._mapping = False
        if not ray.is_initialized():
            self._init(workers, address)
        cpus = int(ray.cluster_resources().get("CPU", 0))
        if workers is not None and workers > cpus:
            self.close()
            raise ConfigError(
                f"The '--workers' option asks for {workers} Ray actors of one CPU each, but the Ray "
                f"instance has {cpus} CPU(s). Got {workers} instead; give at most {cpus}."
            )
        if self.gpus_per_worker:
            nodes = [node["Resources"] for node in ray.nodes() if node.get("Alive")]
            room = actor_room(nodes, self.gpus_per_worker)
            if room < (workers or 1):
                self.close()
                gpus = sum(float(node.get("GPU", 0)) for node in nodes)
                asked = f"{workers} Ray actor(s)" if workers is not None else "Ray actors"
                raise ConfigError(
                    f"The '--gpus-per-worker' option asks for {asked} with {self.gpus_per_worker:g} GPU "
                    f"each, but the Ray instance has {gpus:g} GPU(s) on {len(nodes)} node(s): room for {room} "
                    "such actor(s) (a fraction of a GPU must fit on one GPU, whole GPUs on one node). Give "
                    "fewer '--workers' or a smaller '--gpus-per-worker', leave it out to run on CPUs, or "
                    "add GPU nodes to the cluster (docs/ray.md)."
                )
            workers = workers if workers is not None else room
        self.workers = workers if workers is not None else max(cpus, 1)

    def _init(self, workers: int | None, address: str | None) -> None:
        ray = _import_ray()
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no usage report over the network
        _quiet_token_auth_notice()
        stop = signal.getsignal(signal.SIGTERM)  # ray.init makes SIGTERM sys.exit(15): the caller's is put back
        try:
            if address is None:
                self._temp_dir = tempfile.mkdtemp(prefix="trray-", dir="/tmp")
                with _loopback_only():
                    ray.init(num_cpus=workers or os.cpu_count() or 1, include_dashboard=False, log_to_driver=False,
                             ignore_reinit_error=True, logging_level=logging.WARNING, _temp_dir=self._temp_dir,
                             _node_ip_address="127.0.0.1")
            else:
                _check_reachable(address)  # Ray itself retries an unreachable head for minutes
                ray.init(address=address, log_to_driver=False, ignore_reinit_error=True,
                         logging_level=logging.WARNING)
        except ConfigError:
            raise
        except Exception as exc:
            self._remove_temp_dir()
            where = "a local Ray instance" if address is None else f"the Ray cluster at {address!r} (--address)"
            raise TextRobustError(f"Could not start or reach {where}: {type(exc).__name__}: {exc}") from exc
        finally:
            _keep_sigterm(stop)
        self._owns_ray = True

    # ---- actors ----------------------------------------------------------------------------------
    def _start(self) -> list[Any]:
        if not self._actors:
            actor = _import_ray().remote(num_cpus=1, num_gpus=self.gpus_per_worker, max_restarts=0)(_RayWorker)
            self._actors = [actor.remote() for _ in range(self.workers)]
            self._prepared, self._names = {}, {}
        return self._actors

    def _kill_actors(self) -> None:
        ray = _import_ray()
        actors, self._actors, self._prepared, self._names = self._actors, [], {}, {}
        for actor in actors:
            try:
                ray.kill(actor, no_restart=True)
            except Exception:  # already dead, or Ray is gone
                pass

    def close(self) -> None:
        """Kill the actors; shut Ray down if this executor started it."""
        ray = _import_ray()
        if ray.is_initialized():
            self._kill_actors()
        self._actors, self._prepared = [], {}
        if self._owns_ray:
            self._owns_ray = False
            ray.shutdown()
            self._remove_temp_dir()

    def _remove_temp_dir(self) -> None:
        if self._temp_dir is not None:
            shutil.rmtree(self._temp_dir, ignore_errors=True)
            self._temp_dir = None

    # ---- the map ---------------------------------------------------------------------------------
    def map(self, spec: WorkerSpec, units: Sequence[Unit]) -> Iterator[Outcome]:
        single_map_guard(self)
        spec = shipped_spec(spec)  # a relative victim folder, made absolute here, on the driver
        # cloudpickle (shipped with Ray) sends classes defined in __main__ or a notebook by value
        return self._map(spec, units, *pickled_spec(spec, self.name, _import_ray().cloudpickle.dumps))

    def _map(self, spec: WorkerSpec, units: Sequence[Unit], key: str, blob: bytes) -> Iterator[Outcome]:
        single_map_guard(self)
        ray = _import_ray()
        if not ray.is_initialized():
            raise TextRobustError("Ray was shut down under this executor; make a new one (make_executor('ray')).")
        self._mapping = True
        finished = False
        try:
            actors = self._start()
            spec_ref = None
            for index, actor in enumerate(actors):
                if self._prepared.get(index) != key:
                    spec_ref = spec_ref if spec_ref is not None else ray.put(blob)
                    actor.prepare.remote(key, spec_ref)  # actor calls run in submission order
                    self._prepared[index] = key
            holding: list[int] = [0] * len(actors)
            pending: dict[Any, tuple[Unit, int]] = {}  # ref -> (unit, actor index)
            todo = iter(units)
            exhausted = False
            submitted = 0
            while True:
                while not exhausted and len(pending) < _PER_WORKER * len(actors):
                    unit = next(todo, None)
                    if unit is None:
                        exhausted = True
                        break
                    index = min(range(len(actors)), key=holding.__getitem__)
                    pending[actors[index].run.remote(unit.payload)] = (unit, index)
                    holding[index] += 1
                    submitted += 1
                if not pending:
                    break
                ready, _ = ray.wait(list(pending), num_returns=1, timeout=_WAIT_SECONDS)
                if not ready:
                    continue
                ready, _ = ray.wait(list(pending), num_returns=len(pending), timeout=0)
                lost: tuple[str, str] | None = None
                failure: Exception | None = None
                for ref in ready:
                    unit, index = pending.pop(ref)
                    holding[index] -= 1
                    try:
                        message = ray.get(ref)
                    except ray.exceptions.RayError as exc:  # the actor died (or Ray lost it)
                        pending[ref] = (unit, index)  # still unfinished
                        lost = lost or (self._names.get(index, f"actor {index + 1} of {len(actors)}"), _brief(exc))
                        continue
                    if message[0] == "build_error":
                        failure = failure or WorkerBuildError(message[1], message[2])
                        continue
                    _, worker, value, error, seconds, queries = message
                    self._names[index] = worker
                    yield Outcome(unit, value, error, seconds, queries, worker)
                if failure is not None:
                    raise failure
                if lost is not None:
                    in_flight = [unit.id for unit, _ in pending.values()]
                    raise WorkerLost(lost[0], lost[1], in_flight, count_remaining(units, submitted))
            finished = True
        finally:
            self._mapping = False
            if not finished and ray.is_initialized():
                self._kill_actors()

    def __enter__(self) -> RayExecutor:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        gpus = f", gpus_per_worker={self.gpus_per_worker:g}" if self.gpus_per_worker else ""
        return f"RayExecutor(workers={self.workers}, address={self.address!r}{gpus})"


def shipped_spec(spec: WorkerSpec, cwd: str | os.PathLike[str] | None = None) -> WorkerSpec:
    """``spec`` as the driver sends it to Ray actors: every victim folder it holds (a
    :class:`~textrobust.audit.sources.VictimSource` field of a dataclass spec, such as the
    audit's) that is relative made absolute from the driver's working directory (``cwd``,
    default this process's; :meth:`~textrobust.audit.sources.VictimSource.absolute`). An
    actor's working directory is the one ``ray start`` ran in on its node, not the
    driver's, so a relative folder would be looked up there (docs/ray.md). Any other spec
    is returned as it is."""
    if not dataclasses.is_dataclass(spec) or isinstance(spec, type):
        return spec
    changes: dict[str, VictimSource] = {}
    for item in dataclasses.fields(spec):
        value = getattr(spec, item.name)
        moved = value.absolute(cwd) if isinstance(value, VictimSource) else value
        if moved is not value:
            changes[item.name] = moved
    return cast(WorkerSpec, dataclasses.replace(spec, **changes)) if changes else spec


def actor_room(nodes: Sequence[Mapping[str, float]], gpus_per_worker: float) -> int:
    """How many actors of one CPU and ``gpus_per_worker`` GPUs fit on ``nodes`` (each node's
    resources, as ``ray.nodes()[i]["Resources"]``), following Ray's placement: a fraction
    of a GPU must fit on one GPU, a whole number of GPUs on one node.

    >>> actor_room([{"CPU": 8, "GPU": 1}, {"CPU": 2, "GPU": 2}], 0.5)  # 2 + min(2 CPUs, 4)
    4
    >>> actor_room([{"CPU": 8, "GPU": 1}, {"CPU": 8, "GPU": 1}], 2)
    0
    """
    room = 0
    for node in nodes:
        cpus, gpus = math.floor(node.get("CPU", 0)), math.floor(node.get("GPU", 0) + 1e-9)
        if gpus_per_worker <= 0:
            fit = cpus
        elif gpus_per_worker <= 1:
            fit = gpus * math.floor(1 / gpus_per_worker + 1e-9)
        else:
            fit = math.floor(gpus / gpus_per_worker + 1e-9)
        room += min(cpus, fit)
    return room


@contextmanager
def _loopback_only() -> Iterator[None]:
    """While a local instance starts, make Ray keep its node address 127.0.0.1.

    On Linux, Ray replaces a node address of 127.0.0.1 by the address of the outward
    interface (``ray._private.services.resolve_ip_for_localhost``), and its servers then
    listen on every interface. Only on a single-machine node (Ray's switch
    ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``, the default on macOS and Windows) does it keep
    127.0.0.1, and (measured with Ray 2.60) every server it starts (GCS, raylet, object
    manager, core workers, runtime-env agent) then listens there only. The switch is set in
    the environment the Ray processes inherit, and in this process for the start only.
    """
    try:
        from ray._private import ray_constants

        saved = ray_constants.ENABLE_RAY_CLUSTER
    except (ImportError, AttributeError):  # another layout of Ray's internals: start it as it is
        yield
        return
    saved_env = os.environ.get(_CLUSTER_SWITCH)
    os.environ[_CLUSTER_SWITCH], ray_constants.ENABLE_RAY_CLUSTER = "0", False
    try:
        yield
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = saved
        if saved_env is None:
            os.environ.pop(_CLUSTER_SWITCH, None)
        else:
            os.environ[_CLUSTER_SWITCH] = saved_env


def _head(address: str) -> tuple[str, int] | None:
    """The host and port that ``address`` (``host:port``, ``ray://host:port`` or ``auto``)
    connects to, or None when it names none (Ray then decides, quickly)."""
    if address == "auto":
        try:  # where `ray start` on this machine (or RAY_ADDRESS) says the head is
            from ray._private.services import canonicalize_bootstrap_address

            address = canonicalize_bootstrap_address(address) or ""
        except Exception:  # no cluster recorded: ray.init says so at once
            return None
    host, _, port = address.removeprefix("ray://").rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit():
        return None
    return host, int(port)


_FIX = ("Give the address of a running head (`ray start --head` prints it, e.g. 127.0.0.1:6379, or "
        "ray://host:10001 for Ray Client), 'auto' for the cluster started on this machine, or leave --address out "
        "to start a local Ray instance.")


def _keep_sigterm(handler: Any) -> None:
    """Put back the SIGTERM handler ``ray.init`` replaced with ``sys.exit(15)`` (the command
    line's: a stop that says what is saved and exits 143, issue 37), from the main thread."""
    if handler is not None and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, handler)


def _check_reachable(address: str) -> None:
    """A ConfigError unless the Ray head of ``address`` accepts a TCP connection within
    :data:`_CONNECT_SECONDS` and answers HTTP/2's connection preface as a gRPC server
    does within :data:`_ANSWER_SECONDS` (:func:`_speaks_grpc`): ``ray.init`` retries an
    unreachable head, or a port where something else listens, for minutes."""
    head = _head(address)
    if head is None:
        return
    try:
        connection = socket.create_connection(head, timeout=_CONNECT_SECONDS)
    except OSError as exc:
        reason = (f"no answer within {_CONNECT_SECONDS:.0f} s" if isinstance(exc, TimeoutError)
                  else (exc.strerror or type(exc).__name__).lower())
        raise ConfigError(f"The '--address' option names a Ray cluster that cannot be reached: {address!r} "
                          f"({head[0]}:{head[1]}: {reason}). {_FIX}") from None
    with connection:
        if os.environ.get("RAY_USE_TLS", "0").strip().lower() in ("1", "true", "yes"):
            return  # a TLS head answers only after a TLS handshake: the connection is all that is checked
        why = _speaks_grpc(connection)
    if why is not None:
        raise ConfigError(f"The '--address' option names {address!r} ({head[0]}:{head[1]}), where something "
                          f"listens that is not a Ray head: {why}. {_FIX}")


def _speaks_grpc(connection: socket.socket) -> str | None:
    """None when the server on ``connection`` answers HTTP/2's client preface with a
    SETTINGS frame, as every gRPC server (a Ray head) does; else why it is not one."""
    try:
        connection.settimeout(_ANSWER_SECONDS)
        connection.sendall(_HTTP2_HELLO)
        answer = b""
        while len(answer) < 9:  # a frame header: length (3 bytes), type, flags, stream (4 bytes)
            chunk = connection.recv(9 - len(answer))
            if not chunk:
                return "it closed the connection without answering as a gRPC server does"
            answer += chunk
    except TimeoutError:
        return f"it did not answer as a gRPC server does within {_ANSWER_SECONDS:.0f} s"
    except OSError as exc:
        return f"the connection failed ({(exc.strerror or type(exc).__name__).lower()})"
    if answer[3] != _HTTP2_SETTINGS:
        try:  # the rest of its first line, to show what it is
            connection.settimeout(0.5)
            answer += connection.recv(200)
        except OSError:
            pass
        shown = answer.decode("ascii", "replace").splitlines()[0].strip()[:80]
        return f"it answered {shown!r}, not as a gRPC server does"
    return None


def _brief(exc: BaseException) -> str:
    first = (str(exc).strip().splitlines() or [""])[0][:300]
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


class _DropTokenAuthNotice(logging.Filter):
    """Drops Ray's notice that it turned token authentication on (for the local instance
    started here, on 127.0.0.1 only, nothing for the user to do); its warning that
    authentication is *off* is kept."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Token authentication is enabled for this Ray cluster")


def _quiet_token_auth_notice() -> None:
    """Install :class:`_DropTokenAuthNotice` on Ray's authentication logger (once)."""
    logger = logging.getLogger("ray._private.authentication.authentication_token_setup")
    if not any(isinstance(f, _DropTokenAuthNotice) for f in logger.filters):
        logger.addFilter(_DropTokenAuthNotice())
