"""Ray beyond one process (issue 31, part 4): the local instance listens on 127.0.0.1 only,
actors reserve ``--gpus-per-worker`` GPUs (a ConfigError before any work when the instance
has no room for them), and an audit runs on a two-node cluster started separately with
``ray start`` and joined with ``--address``, with the records of a local run.

The Ray tests are heavy (each starts Ray: 5 to 20 s). A cluster test starts its nodes in a
dedicated ``--temp-dir`` and stops exactly the processes that name it (never ``ray stop``,
which would stop every Ray instance of the user on the machine).
"""

from __future__ import annotations

import ipaddress
import json
import math
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import textrobust
from textrobust import audit
from textrobust.audit.executor_ray import actor_room
from textrobust.audit.executors import Unit, check_gpus_per_worker, make_executor
from textrobust.audit.testing import WhereSpec, keyword_victim
from textrobust.cli.app import app
from textrobust.cli.audit import load_config
from textrobust.errors import ConfigError
from textrobust.store import RunStore

from cli_helpers import reviews_csv, use_toy_victim  # noqa: E402

runner = CliRunner()
CHOSEN = {"evaluate": {"batch_size": 2}}  # the six reviews in three units


# ---- --gpus-per-worker: checked without Ray -----------------------------------------------------
@pytest.mark.parametrize("value, message", [
    (-1, "must be a number >= 0"), (math.nan, "must be a number >= 0"), (True, "must be a number >= 0"),
    ("1", "must be a number >= 0"), (1.5, "must be a fraction below 1 .* or a whole number of GPUs. Got 1.5 instead; "
                                          "give 1 or 2"),
    (0.00001, r"takes at most four decimals \(Ray's precision\). Got 1e-05 instead; give 0.0001"),
    (0.12345, "takes at most four decimals .* give 0.1235"),
])
def test_gpus_per_worker_follows_rays_rules(value: Any, message: str) -> None:
    with pytest.raises(ConfigError, match="The '--gpus-per-worker' option " + message):
        check_gpus_per_worker(value)


@pytest.mark.parametrize("value, expected", [(None, 0.0), (0, 0.0), (0.25, 0.25), (1, 1.0), (4, 4.0)])
def test_gpus_per_worker_accepted(value: Any, expected: float) -> None:
    assert check_gpus_per_worker(value) == expected


@pytest.mark.parametrize("name", ["local", "process", "lockstep"])
def test_gpus_per_worker_only_with_ray(name: str) -> None:
    with pytest.raises(ConfigError, match=rf"'--gpus-per-worker' option is only valid with '--executor ray'.*"
                                          rf"'--executor {name}'"):
        make_executor(name, gpus_per_worker=1)


def test_the_room_for_actors_follows_rays_placement() -> None:
    # a fraction stays on one GPU: 0.6 leaves 0.4 unused on each
    assert actor_room([{"CPU": 8, "GPU": 2}], 0.6) == 2
    assert actor_room([{"CPU": 8, "GPU": 2}], 0.5) == 4
    assert actor_room([{"CPU": 3, "GPU": 2}], 0.25) == 3  # one CPU per actor bounds it
    assert actor_room([{"CPU": 8, "GPU": 3}, {"CPU": 8, "GPU": 1}], 2) == 1  # whole GPUs on one node
    assert actor_room([{"CPU": 8}], 1) == 0 and actor_room([{"CPU": 8}], 0) == 8
    assert actor_room([], 1) == 0


def test_a_config_file_takes_gpus_per_worker_as_a_number(tmp_path: Path) -> None:
    path = tmp_path / "audit.toml"
    path.write_text('[run]\nexecutor = "ray"\ngpus_per_worker = 0.5\n')
    assert load_config(path)["run"]["gpus_per_worker"] == 0.5
    path.write_text('[run]\ngpus_per_worker = "one"\n')
    with pytest.raises(ConfigError, match=r"The key 'gpus_per_worker' in \[run\] .* must be a number \(as "
                                          r"--gpus-per-worker takes\). Got \"one\" instead"):
        load_config(path)


def test_the_cli_refuses_gpus_per_worker_without_ray(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_toy_victim(monkeypatch)
    out = tmp_path / "run"
    result = runner.invoke(app, ["evaluate", "--data", str(reviews_csv(tmp_path)), "--gpus-per-worker", "1",
                                 "--quiet", "--out", str(out)], terminal_width=300)
    assert result.exit_code == 2, result.output
    assert "'--gpus-per-worker' option is only valid with '--executor ray'" in " ".join(result.output.split())
    assert not out.exists()


# ---- helpers for the Ray tests ------------------------------------------------------------------
def _ray() -> Any:
    ray = pytest.importorskip("ray")
    if ray.is_initialized():
        pytest.skip("Ray is already initialised in this process")
    return ray


def _listening(pid: int) -> set[tuple[str, int]]:
    """The TCP and UDP addresses process ``pid`` listens on (UDP: every bound socket)."""
    import psutil

    try:
        connections = psutil.Process(pid).net_connections(kind="inet")
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return set()
    return {(c.laddr.ip, c.laddr.port) for c in connections
            if c.laddr and (c.status == psutil.CONN_LISTEN or c.type == socket.SOCK_DGRAM)}


def _is_loopback(ip: str) -> bool:
    address = ipaddress.ip_address(ip.split("%")[0])
    mapped = getattr(address, "ipv4_mapped", None)  # ::ffff:127.0.0.1
    return (mapped or address).is_loopback


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _env(**extra: str) -> dict[str, str]:
    """This environment, textrobust's sources first on the path, usage statistics off."""
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0", **extra)
    src = str(Path(textrobust.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
    return env


def _stop_processes_naming(marker: str, grace: float = 3.0) -> list[int]:
    """Terminate every process whose command line holds ``marker``, with its descendants,
    and kill those still running after ``grace`` seconds; the pids still running after
    that (zombies count as gone)."""
    import psutil

    roots = []
    for process in psutil.process_iter(["cmdline"]):
        if process.pid != os.getpid() and marker in " ".join(process.info["cmdline"] or []):
            roots.append(process)
    found = {p.pid: p for p in roots}
    for process in roots:
        try:
            found.update((child.pid, child) for child in process.children(recursive=True))
        except psutil.NoSuchProcess:
            pass

    def running() -> list[Any]:
        alive = []
        for process in found.values():
            try:
                if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                    alive.append(process)
            except psutil.NoSuchProcess:
                pass
        return alive

    for signal_name in ("terminate", "kill"):
        for process in running():
            try:
                getattr(process, signal_name)()
            except psutil.NoSuchProcess:
                pass
        deadline = time.monotonic() + grace
        while running() and time.monotonic() < deadline:
            time.sleep(0.1)
    return [p.pid for p in running()]


# ---- the local instance: 127.0.0.1 only ---------------------------------------------------------
@pytest.mark.heavy
def test_a_local_instance_listens_on_loopback_only() -> None:
    """Every socket a local Ray instance (and its actor) listens on is a loopback address:
    the GCS, the raylet (node and object manager), the runtime-env agent, the core workers
    of the actors and of this process."""
    pytest.importorskip("psutil")
    import psutil

    _ray()
    me = psutil.Process()
    before = _listening(me.pid)
    with make_executor("ray", workers=1) as executor:
        assert [o.value for o in executor.map(WhereSpec(), [Unit("u0", 0, 0)])][0][1] == 0.0  # an actor runs
        sockets = {(me.pid, "driver", address) for address in _listening(me.pid) - before}
        for child in me.children(recursive=True):
            try:
                name = child.name()
            except psutil.NoSuchProcess:
                continue
            sockets |= {(child.pid, name, address) for address in _listening(child.pid)}
    names = {name for _, name, _ in sockets}
    assert {"driver", "gcs_server", "raylet"} <= names, sockets
    assert any("RayWorker" in name or name.startswith("ray::") for name in names), sockets
    public = sorted((name, ip, port) for _, name, (ip, port) in sockets if not _is_loopback(ip))
    assert public == [], f"Ray listens beyond 127.0.0.1: {public}"


# ---- --gpus-per-worker with Ray ------------------------------------------------------------------
@pytest.mark.heavy
def test_gpus_per_worker_on_a_cpu_only_instance_exits_2_before_any_work(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    ray = _ray()
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")  # the local instance has 0 GPUs, whatever the machine has
    use_toy_victim(monkeypatch)
    out = tmp_path / "run"
    result = runner.invoke(app, ["evaluate", "--data", str(reviews_csv(tmp_path)), "--executor", "ray",
                                 "--workers", "1", "--gpus-per-worker", "1", "--quiet", "--out", str(out)],
                           terminal_width=300)
    message = " ".join(result.output.split())
    assert result.exit_code == 2, result.output
    assert ("The '--gpus-per-worker' option asks for 1 Ray actor(s) with 1 GPU each, but the Ray instance has "
            "0 GPU(s) on 1 node(s): room for 0 such actor(s)") in message, message
    assert "Traceback" not in result.output and not out.exists()
    assert not ray.is_initialized(), "the executor that started Ray must shut it down"


@pytest.fixture
def ray_with_a_gpu() -> Iterator[Any]:
    """A local Ray instance declaring 2 CPUs and 1 GPU (logical: Ray schedules by the count,
    so a CPU-only machine can check what each actor reserves), on 127.0.0.1."""
    from textrobust.audit.executor_ray import _loopback_only

    ray = _ray()
    temp_dir = tempfile.mkdtemp(prefix="trgpu-", dir="/tmp")
    try:
        with _loopback_only():
            ray.init(num_cpus=2, num_gpus=1, include_dashboard=False, log_to_driver=False, _temp_dir=temp_dir,
                     _node_ip_address="127.0.0.1")
        yield ray
    finally:
        ray.shutdown()
        shutil.rmtree(temp_dir, ignore_errors=True)


@pytest.mark.heavy
def test_actors_reserve_their_gpus_and_the_room_is_checked(ray_with_a_gpu: Any, tmp_path: Path) -> None:
    with make_executor("ray", workers=2, gpus_per_worker=0.5) as executor:
        where = [o.value for o in executor.map(WhereSpec(), [Unit(f"u{i}", i, i) for i in range(4)])]
        assert repr(executor) == "RayExecutor(workers=2, address=None, gpus_per_worker=0.5)"
    assert {gpus for _, gpus in where} == {0.5}  # what Ray assigned to each actor
    with make_executor("ray", gpus_per_worker=1) as executor:  # default: as many as the GPUs hold
        assert executor.workers == 1
    with pytest.raises(ConfigError, match=r"asks for 2 Ray actor\(s\) with 0.6 GPU each, but the Ray instance has "
                                          r"1 GPU\(s\) on 1 node\(s\): room for 1 such actor"):
        make_executor("ray", workers=2, gpus_per_worker=0.6)
    with pytest.raises(ConfigError, match="asks for 3 Ray actors of one CPU each, but the Ray instance has 2 CPU"):
        make_executor("ray", workers=3, gpus_per_worker=0.25)
    assert ray_with_a_gpu.is_initialized()  # an instance the executor did not start stays up
    # the run records the reservation; the report shows it
    result = audit.run(keyword_victim(), reviews_csv(tmp_path), CHOSEN, tmp_path / "run", executor="ray",
                       workers=2, gpus_per_worker=0.5, progress=False)
    assert result.report["run"]["gpus_per_worker"] == 0.5 and result.report["run"]["workers"] == 2
    assert result.report_html is not None and "ray (2 workers, 0.5 GPU each)" in result.report_html.read_text()


# ---- a two-node cluster started separately -------------------------------------------------------
_DRIVER = """
import json, sys
import ray
from textrobust import audit
from textrobust.audit.executors import Unit, make_executor
from textrobust.audit.testing import WhereSpec, keyword_victim

address, data, out = sys.argv[1:4]
chosen = json.loads(sys.argv[4])
result = audit.run(keyword_victim(), data, chosen, out, executor="ray", address=address, workers=2, progress=False)
with make_executor("ray", workers=2, address=address) as executor:
    outcomes = list(executor.map(WhereSpec(), [Unit(f"u{i}", i, i) for i in range(6)]))
    where, workers = [o.value for o in outcomes], sorted({o.worker for o in outcomes})
    nodes = sorted(n["NodeID"] for n in ray.nodes() if n["Alive"])
    addresses = sorted(n["NodeManagerAddress"] for n in ray.nodes() if n["Alive"])
print(json.dumps({"run": result.report["run"], "where": where, "nodes": nodes, "workers": workers,
                  "addresses": addresses}))
"""


def _stored(out: Path) -> list[tuple[Any, ...]]:
    with RunStore(out / "store.sqlite") as store:
        run = store.latest_run("evaluate")
        assert run is not None
        return sorted((r.example_id, r.position, {k: v for k, v in r.payload.items() if k != "seconds"}, r.queries,
                       r.failed) for r in run.results())


@pytest.fixture
def two_nodes() -> Iterator[tuple[str, dict[str, str], dict[str, Any]]]:
    """A head and a second node, one CPU each, started with ``ray start`` in a dedicated
    temp dir, with token authentication on a token of their own: ``(address, env for a
    driver, facts measured)``. Stops exactly those processes afterwards."""
    pytest.importorskip("psutil")
    ray_cli = Path(sys.executable).parent / "ray"
    if not ray_cli.is_file():
        pytest.skip(f"the `ray` command is not installed next to {sys.executable}")
    temp_dir = tempfile.mkdtemp(prefix="trc-", dir="/tmp")  # short: Ray's socket paths must stay < 108 bytes
    port = _free_port()
    env = _env(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=secrets.token_hex(32))
    common = ["--num-cpus=1", "--num-gpus=0", f"--temp-dir={temp_dir}", "--object-store-memory=100000000",
              "--disable-usage-stats"]
    facts: dict[str, Any] = {"temp_dir": temp_dir}
    try:
        started = time.perf_counter()
        for args in (["--head", f"--port={port}", "--node-ip-address=127.0.0.1", "--include-dashboard=false"],
                     [f"--address=127.0.0.1:{port}"]):
            done = subprocess.run([str(ray_cli), "start", *args, *common], env=env, capture_output=True, text=True,
                                  timeout=90)
            assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        facts["start_seconds"] = time.perf_counter() - started
        facts["listening"] = _cluster_sockets(temp_dir)
        yield f"127.0.0.1:{port}", env, facts
    finally:
        left = _stop_processes_naming(temp_dir)
        shutil.rmtree(temp_dir, ignore_errors=True)
        assert left == [], f"Ray processes of the test cluster still running: {left}"


def _cluster_sockets(marker: str) -> list[tuple[str, str, int]]:
    """``(process name, ip, port)`` of every socket the cluster's processes listen on."""
    import psutil

    found = []
    for process in psutil.process_iter(["cmdline", "name"]):
        if process.pid == os.getpid() or marker not in " ".join(process.info["cmdline"] or []):
            continue
        try:
            family = [process, *process.children(recursive=True)]
        except psutil.NoSuchProcess:
            continue
        for member in family:
            try:
                name = member.name()
            except psutil.NoSuchProcess:
                continue
            found += [(name, ip, port) for ip, port in _listening(member.pid)]
    return sorted(set(found))


@pytest.mark.heavy
def test_an_audit_on_a_two_node_cluster_started_separately(two_nodes: tuple[str, dict[str, str], dict[str, Any]],
                                                           tmp_path: Path) -> None:
    """``ray start --head`` and ``ray start --address`` (two nodes of one CPU on this
    machine), then an audit with ``--address`` and 2 workers: one actor on each node, the
    records of a local run, written once by the driver."""
    address, env, facts = two_nodes
    data = reviews_csv(tmp_path)
    local = audit.run(keyword_victim(), data, CHOSEN, tmp_path / "local", progress=False)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _DRIVER, address, str(data), str(tmp_path / "cluster"),
                           json.dumps(CHOSEN)], env=env, capture_output=True, text=True, timeout=120)
    facts["driver_seconds"] = time.perf_counter() - started
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert answer["run"]["executor"] == "ray" and answer["run"]["workers"] == 2
    assert _stored(tmp_path / "cluster") == _stored(tmp_path / "local") and len(_stored(tmp_path / "local")) == 3
    assert local["evaluate"].summary.units == 3
    # one actor per node: each node has one CPU and each actor takes one
    assert len(answer["nodes"]) == 2 and len(answer["workers"]) == 2
    assert {node for node, _ in answer["where"]} == set(answer["nodes"]), answer
    print(f"two-node cluster: started in {facts['start_seconds']:.1f} s, driver (import, audit, map) "
          f"{facts['driver_seconds']:.1f} s, node addresses {answer['addresses']}, listening {facts['listening']}")
