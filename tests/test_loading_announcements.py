"""Model loading is announced and timed (issue 41, item 2): textrobust.loading tells its
listeners when a load starts and ends and keeps the time, and the audit's progress display
prints both lines while it runs."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from textrobust.audit.progress import load_line, make_progress
from textrobust.loading import LoadEvent, listening, load_records, load_seconds, loading


def test_a_load_is_announced_before_and_after_with_its_time() -> None:
    events: list[LoadEvent] = []
    with listening(events.append):
        with loading("model A"):
            assert [e.done for e in events] == [False]  # announced before the work
    assert [(e.what, e.done, e.failed) for e in events] == [("model A", False, False), ("model A", True, False)]
    assert events[1].seconds is not None and events[1].seconds >= 0
    assert load_records()[-1][0] == "model A"


def test_a_failed_load_says_so_and_still_raises() -> None:
    events: list[LoadEvent] = []
    with listening(events.append), pytest.raises(OSError), loading("broken model"):
        raise OSError("no weights")
    assert events[-1].failed and events[-1].done
    assert load_line(events[-1]).startswith("loading broken model failed after ")


def test_nothing_is_told_outside_listening_and_a_bad_listener_breaks_no_load() -> None:
    events: list[LoadEvent] = []
    with listening(events.append):
        pass
    with loading("unheard"):
        pass
    assert events == []

    def broken(event: LoadEvent) -> None:
        raise RuntimeError("display bug")

    with listening(broken), loading("still loads"):
        pass
    assert load_records()[-1][0] == "still loads"


def test_load_seconds_counts_a_nested_load_once() -> None:
    start = load_seconds()
    with loading("outer"), loading("inner"):
        pass
    outer = dict(load_records())["outer"]
    assert load_seconds() - start == pytest.approx(outer)


def test_the_progress_lines_announce_loads_only_while_running(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TEXTROBUST_NO_PROGRESS", raising=False)
    out = io.StringIO()
    progress = make_progress(console=Console(file=out, force_terminal=False, width=120))
    with progress:
        with loading("the causal LM gemma (cpu, float32)"):
            pass
    with loading("after the run"):
        pass
    lines = out.getvalue().splitlines()
    assert lines[0] == "loading the causal LM gemma (cpu, float32) ..."
    assert lines[1].startswith("loaded the causal LM gemma (cpu, float32) in ") and lines[1].endswith(" s")
    assert not any("after the run" in line for line in lines)


def test_the_bar_prints_the_loads_above_it_and_off_means_silent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TEXTROBUST_NO_PROGRESS", raising=False)
    out = io.StringIO()
    with make_progress(console=Console(file=out, force_terminal=True, width=120)):
        with loading("MiniLM"):
            pass
    assert "loading MiniLM ..." in out.getvalue() and "loaded MiniLM in" in out.getvalue()
    monkeypatch.setenv("TEXTROBUST_NO_PROGRESS", "1")
    quiet = io.StringIO()
    with make_progress(console=Console(file=quiet, force_terminal=True, width=120)), loading("MiniLM"):
        pass
    assert "MiniLM" not in quiet.getvalue()


def test_the_causal_lm_loader_announces_its_load(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """The Gemma loader runs inside ``loading`` (a stand-in transformers does the work)."""
    import sys
    import types

    from textrobust.assets import loaders
    from textrobust.devices import Placement

    class Model:
        def to(self, device: object) -> Model:
            return self

        def eval(self) -> Model:
            return self

    fake = types.ModuleType("transformers")
    fake.AutoModelForCausalLM = types.SimpleNamespace(from_pretrained=lambda *a, **k: Model())  # type: ignore[attr-defined]
    fake.AutoTokenizer = types.SimpleNamespace(from_pretrained=lambda *a, **k: "tokenizer")  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "transformers", fake)
    monkeypatch.setattr(loaders, "hf_offline", lambda: None)
    events: list[LoadEvent] = []
    with listening(events.append):
        loaders._causal_lm.__wrapped__(str(tmp_path / "gemma-folder"), Placement())
    assert [e.what for e in events] == ["the causal LM gemma-folder (cpu, float32)"] * 2
