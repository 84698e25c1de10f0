"""benchmarks/audit_speed.py's phase clock (issue 41, item 1): nested phases charge each
second to the innermost one, per analysis, so the phases add up to the wall time; model
loads announced by textrobust.loading become the "model loading" phase."""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path
from typing import Any

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "audit_speed.py"


@pytest.fixture()
def speed(monkeypatch: pytest.MonkeyPatch) -> Any:
    spec = importlib.util.spec_from_file_location("audit_speed_under_test", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    now = [0.0]
    monkeypatch.setattr(module.time, "perf_counter", lambda: now[0])
    module.tick = lambda seconds: now.__setitem__(0, now[0] + seconds)
    return module


def test_nested_phases_charge_the_innermost_and_add_up(speed: Any) -> None:
    clock = speed.PhaseClock()
    clock.switch("attack")
    speed.tick(1)  # other
    with clock.phase("candidate judging"):
        speed.tick(2)
        with clock.phase("fill-in"):
            speed.tick(3)
            with clock.phase("model loading"):
                speed.tick(4)
        speed.tick(5)
    with clock.phase("victim queries"):
        speed.tick(6)
    clock.switch(speed.OUTSIDE)
    speed.tick(7)
    clock.switch(speed.OUTSIDE)
    got = {k: v for k, v in clock.seconds.items() if v}
    assert got == {("attack", "other"): 1, ("attack", "candidate judging"): 7, ("attack", "fill-in"): 3,
                   ("attack", "model loading"): 4, ("attack", "victim queries"): 6, (speed.OUTSIDE, "other"): 7}
    text = speed.table(clock, ["attack"], 28.0)
    assert "| attack | 4.0 | 7.0 | 3.0 | 6.0 | 1.0 | 21.0 | 75% |" in text
    assert "| **all** | **4.0** | **7.0** | **3.0** | **6.0** | **8.0** | **28.0** | 100% |" in text


def test_wrapped_methods_and_announced_loads_are_timed(speed: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from textrobust.loading import listening, loading

    clock = speed.PhaseClock()

    class Fill:
        def fill(self, seconds: float) -> str:
            speed.tick(seconds)
            with loading("a model"):
                speed.tick(10)
            return "filled"

    Fill.fill = speed._wrap(clock, "fill-in", Fill.fill)  # type: ignore[method-assign]
    clock.switch("second_order")

    def on_load(event: Any) -> None:
        clock.leave() if event.done else clock.enter("model loading")

    with listening(on_load):
        assert Fill().fill(2) == "filled"
    assert clock.seconds[("second_order", "fill-in")] == 2
    assert clock.seconds[("second_order", "model loading")] == 10


def test_instrument_keeps_listening_to_loads(speed: Any) -> None:
    """The load listener set up by instrument() stays registered after it returns (a bare
    ``listening(...).__enter__()`` was closed as soon as it was collected)."""
    import gc

    from textrobust.audit import orchestrator
    from textrobust.loading import loading

    saved = orchestrator._run_one
    wrapped = {}
    for _, target in speed.TARGETS:
        module_name, attribute = target.split(":")
        class_name, method = attribute.split(".")
        try:
            owner = getattr(importlib.import_module(module_name), class_name)
            wrapped[(owner, method)] = owner.__dict__[method]
        except (ImportError, AttributeError, KeyError):
            pass
    try:
        clock = speed.PhaseClock()
        assert speed.instrument(clock) == []
        gc.collect()
        clock.switch("attack")
        with loading("a model"):
            speed.tick(5)
        assert clock.seconds[("attack", "model loading")] == 5
    finally:
        if clock.listener is not None:
            clock.listener.__exit__(None, None, None)
        orchestrator._run_one = saved
        for (owner, method), function in wrapped.items():
            setattr(owner, method, function)
