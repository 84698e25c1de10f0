"""Issue 37, item 14: ``--address`` naming an open port where no Ray head listens fails
within seconds with a clear message, instead of ``ray.init`` retrying for minutes. The
probe is a plain socket conversation (HTTP/2's preface; gRPC answers with SETTINGS), tested
here against local socket servers on 127.0.0.1 without Ray. Against a real head started
with ``ray start --head`` the probe accepted it in 0.006 s (checked by hand, 2026-11-28)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from textrobust.audit import executor_ray
from textrobust.errors import ConfigError


def _server(answer: Callable[[socket.socket], None]) -> Iterator[int]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    stop = threading.Event()

    def serve() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except OSError:
                continue
            with connection:
                answer(connection)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join(timeout=5)
        listener.close()


def _silent(connection: socket.socket) -> None:
    connection.settimeout(2)
    try:
        connection.recv(100)
        time.sleep(1.5)  # reads the preface, never answers
    except OSError:
        pass


def _http1(connection: socket.socket) -> None:
    connection.recv(100)
    connection.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")


def _grpc_like(connection: socket.socket) -> None:
    connection.recv(100)
    connection.sendall(b"\x00\x00\x06\x04\x00\x00\x00\x00\x00" + b"\x00\x03\x00\x00\x00\x64")  # SETTINGS


@pytest.fixture()
def silent() -> Iterator[int]:
    yield from _server(_silent)


@pytest.fixture()
def http1() -> Iterator[int]:
    yield from _server(_http1)


@pytest.fixture()
def grpc_like() -> Iterator[int]:
    yield from _server(_grpc_like)


def test_a_port_that_never_answers_fails_fast(silent: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(executor_ray, "_ANSWER_SECONDS", 0.5)
    began = time.perf_counter()
    with pytest.raises(ConfigError, match=r"names '127.0.0.1:\d+' .* where something listens that is not a Ray "
                                          r"head: it did not answer as a gRPC server does within 0 s"):
        executor_ray._check_reachable(f"127.0.0.1:{silent}")
    assert time.perf_counter() - began < 5


def test_a_web_server_is_not_a_ray_head(http1: int) -> None:
    with pytest.raises(ConfigError, match="it answered 'HTTP/1.1 400 Bad Request', not as a gRPC server does"):
        executor_ray._check_reachable(f"127.0.0.1:{http1}")


def test_a_server_that_answers_as_grpc_passes(grpc_like: int) -> None:
    executor_ray._check_reachable(f"127.0.0.1:{grpc_like}")  # no error
    executor_ray._check_reachable(f"ray://127.0.0.1:{grpc_like}")


def test_the_cli_refuses_an_address_that_is_not_a_ray_head(silent: int, tmp_path: object,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("ray")
    from typer.testing import CliRunner

    from cli_helpers import reviews_csv, use_toy_victim
    from textrobust.cli.app import app

    monkeypatch.setattr(executor_ray, "_ANSWER_SECONDS", 0.5)
    use_toy_victim(monkeypatch)
    began = time.perf_counter()
    result = CliRunner().invoke(app, ["evaluate", "--data", str(reviews_csv(tmp_path)), "--executor", "ray",
                                      "--address", f"127.0.0.1:{silent}", "--quiet", "--out",
                                      str(tmp_path / "run")])  # type: ignore[operator]
    assert result.exit_code == 2, result.output
    assert "not a Ray head" in " ".join(result.output.split())
    assert time.perf_counter() - began < 30
