"""The thread policy (issue 31): CPUs from affinity and cgroup quota, the load of others,
the passive OpenMP wait policy, and that an audit applies and records it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from textrobust import threads
from textrobust.errors import ConfigError
from textrobust.threads import ThreadPlan, cgroup_cpu_quota, choose_threads, passive_waits, plan_threads


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


# ---- the cgroup quota ------------------------------------------------------------------------
def test_a_cgroup_v2_quota_is_read_in_cpus(tmp_path: Path) -> None:
    _write(tmp_path / "proc", "0::/\n")
    _write(tmp_path / "cg" / "cpu.max", "150000 100000\n")
    assert cgroup_cpu_quota(tmp_path / "cg", tmp_path / "proc") == 1.5


def test_no_cgroup_v2_limit_is_none(tmp_path: Path) -> None:
    _write(tmp_path / "proc", "0::/user.slice/me\n")
    _write(tmp_path / "cg" / "user.slice" / "me" / "cpu.max", "max 100000\n")
    assert cgroup_cpu_quota(tmp_path / "cg", tmp_path / "proc") is None


def test_the_smallest_limit_of_the_cgroup_and_its_parents_applies(tmp_path: Path) -> None:
    _write(tmp_path / "proc", "0::/outer/inner\n")
    _write(tmp_path / "cg" / "outer" / "cpu.max", "100000 100000\n")
    _write(tmp_path / "cg" / "outer" / "inner" / "cpu.max", "400000 100000\n")
    assert cgroup_cpu_quota(tmp_path / "cg", tmp_path / "proc") == 1.0


def test_a_cgroup_v1_quota_is_read_under_the_cpu_controller(tmp_path: Path) -> None:
    _write(tmp_path / "proc", "4:memory:/x\n3:cpu,cpuacct:/docker/abc\n0::/\n")
    folder = tmp_path / "cg" / "cpu,cpuacct" / "docker" / "abc"
    _write(folder / "cpu.cfs_quota_us", "200000\n")
    _write(folder / "cpu.cfs_period_us", "100000\n")
    assert cgroup_cpu_quota(tmp_path / "cg", tmp_path / "proc") == 2.0


def test_an_unlimited_or_unreadable_v1_quota_is_none(tmp_path: Path) -> None:
    _write(tmp_path / "proc", "1:cpu:/\n")
    _write(tmp_path / "cg" / "cpu" / "cpu.cfs_quota_us", "-1\n")
    _write(tmp_path / "cg" / "cpu" / "cpu.cfs_period_us", "100000\n")
    assert cgroup_cpu_quota(tmp_path / "cg", tmp_path / "proc") is None
    assert cgroup_cpu_quota(tmp_path / "nothing", tmp_path / "no-such-file") is None
    _write(tmp_path / "garbled", "0::/\n")
    _write(tmp_path / "cg2" / "cpu.max", "lots\n")
    assert cgroup_cpu_quota(tmp_path / "cg2", tmp_path / "garbled") is None


# ---- the choice --------------------------------------------------------------------------
@pytest.mark.parametrize(("affinity", "quota", "load", "passive", "expected"), [
    (2, None, 0.1, True, 2),     # quiet
    (2, None, 2.0, True, 2),     # busy, but passive waits: a second thread gains time
    (2, None, 2.0, False, 1),    # busy with spinning waits: only the idle cores
    (2, None, 0.6, False, 1),
    (2, None, 0.4, False, 2),
    (4, None, 9.0, False, 1),    # never below 1
    (16, 2.0, 0.0, True, 2),     # the cgroup quota caps the affinity
    (16, 1.5, 0.0, True, 1),     # a fractional quota rounds down
    (2, 0.2, None, True, 1),     # a tiny quota still gives one thread
    (4, None, None, False, 4),   # no load average known
])
def test_the_thread_count_follows_cpus_quota_and_load(affinity: int, quota: float | None, load: float | None,
                                                     passive: bool, expected: int) -> None:
    assert choose_threads(affinity, quota, load, passive=passive) == expected


def test_others_load_is_scaled_to_our_cpus_and_leaves_out_our_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(threads.os, "getloadavg", lambda: (40.0, 0.0, 0.0))
    monkeypatch.setattr(threads.os, "cpu_count", lambda: 64)
    monkeypatch.setattr(threads, "own_load", lambda: 0.25)
    assert threads.others_load(2) == pytest.approx(40.0 * 2 / 64 - 0.25)
    monkeypatch.setattr(threads, "own_load", lambda: 5.0)
    assert threads.others_load(2) == 0.0


def test_own_load_follows_this_process_cpu_use() -> None:
    first = threads.own_load()
    assert first >= 0.0
    end = threads.time.process_time() + 0.05
    while threads.time.process_time() < end:  # a little CPU work
        pass
    assert threads.own_load() > 0.0


def _fixed(monkeypatch: pytest.MonkeyPatch, affinity: int = 2, quota: float | None = None,
           load: float | None = 2.0) -> None:
    monkeypatch.setattr(threads, "affinity_cpus", lambda: affinity)
    monkeypatch.setattr(threads, "cgroup_cpu_quota", lambda: quota)
    monkeypatch.setattr(threads, "others_load", lambda cpus: load)


def test_the_plan_says_how_it_chose(monkeypatch: pytest.MonkeyPatch) -> None:
    _fixed(monkeypatch, quota=1.0)
    plan = plan_threads("auto", {"OMP_WAIT_POLICY": "PASSIVE"})
    assert (plan.threads, plan.source, plan.affinity, plan.quota, plan.load) == (1, "auto", 2, 1.0, 2.0)
    assert "quota of 1 CPU" in plan.reason and "passive waits" in plan.reason
    spinning = plan_threads("auto", {})
    assert spinning.wait_policy is None and "spinning waits" in spinning.reason


def test_a_given_count_and_the_environment_override_the_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    _fixed(monkeypatch, affinity=4)
    assert plan_threads(3, {}).threads == 3 and plan_threads(3, {}).source == "given"
    assert plan_threads("3", {}).threads == 3  # as a command line gives it
    assert plan_threads(4, {}).threads == 4  # every CPU of the affinity
    plan = plan_threads("auto", {"TEXTROBUST_THREADS": " 4 "})
    assert (plan.threads, plan.source) == (4, "TEXTROBUST_THREADS")
    assert plan_threads(None, {}).threads is None
    assert plan_threads("auto", {"TEXTROBUST_THREADS": ""}).source == "auto"  # empty: as if unset


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "two", "-3", "", "²", "1_0", 5, "10000"])
def test_a_bad_thread_count_is_a_config_error(bad: object, monkeypatch: pytest.MonkeyPatch) -> None:
    _fixed(monkeypatch, affinity=4)
    with pytest.raises(ConfigError, match="'auto' or a thread count from 1 to 4"):
        plan_threads(bad, {})  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", ["many", "0", "²", "5", "auto"])
def test_a_bad_environment_value_names_the_variable(bad: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _fixed(monkeypatch, affinity=4)
    with pytest.raises(ConfigError, match="environment variable TEXTROBUST_THREADS must be a thread count from 1 "
                                          "to 4.*or unset"):
        plan_threads("auto", {"TEXTROBUST_THREADS": bad})


def test_passive_waits_keeps_a_policy_the_user_chose() -> None:
    env: dict[str, str] = {}
    passive_waits(env)
    assert env == {"OMP_WAIT_POLICY": "PASSIVE"}
    chosen = {"OMP_WAIT_POLICY": "ACTIVE"}
    passive_waits(chosen)
    assert chosen == {"OMP_WAIT_POLICY": "ACTIVE"}


def test_apply_sets_torch_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    try:
        plan = threads.apply_threads(1)
        assert plan.threads == 1 and torch.get_num_threads() == 1
        assert threads.apply_threads(None).source == "unchanged" and torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


# ---- the audit applies it --------------------------------------------------------------------
def test_an_audit_applies_the_policy_and_records_it(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    from textrobust import audit
    from textrobust.analyses import ANALYSES
    from textrobust.data.examples import Dataset, Example
    from textrobust.text import Text
    from textrobust.victims.function import FunctionVictim

    victim = FunctionVictim(lambda texts: np.tile([0.3, 0.7], (len(texts), 1)), ("negative", "positive"))
    data = Dataset("toy", tuple(Example(f"e{i}", Text.from_string(f"a film {i}"), i % 2) for i in range(4)),
                   ("negative", "positive"), split="test")
    before = torch.get_num_threads()
    try:
        result = audit.run(victim, data, [ANALYSES.get("evaluate")()], tmp_path, progress=False, report=False,
                           threads=1)
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)
    assert isinstance(result.threads, ThreadPlan) and result.threads.threads == 1
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["threads"]["threads"] == 1 and summary["threads"]["source"] == "given"
    with pytest.raises(ConfigError, match="thread count"):
        audit.run(victim, data, [ANALYSES.get("evaluate")()], tmp_path / "bad", progress=False, threads=0)


def test_the_command_line_makes_waits_passive_before_torch_loads() -> None:
    """libgomp reads OMP_WAIT_POLICY once, when torch is imported: ``main`` sets it first."""
    import os
    import subprocess
    import sys

    code = ("import os, sys\nfrom textrobust.cli import app\nsys.argv = ['textrobust', '--help']\n"
            "try:\n    app.main()\nexcept SystemExit:\n    pass\n"
            "print(os.environ.get('OMP_WAIT_POLICY'), 'torch' in sys.modules)")
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    said = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert said.stdout.split()[-2:] == ["PASSIVE", "False"]
    chosen = subprocess.run([sys.executable, "-c", code], env={**env, "OMP_WAIT_POLICY": "ACTIVE"},
                            capture_output=True, text=True, check=True)
    assert chosen.stdout.split()[-2:] == ["ACTIVE", "False"]


def test_the_threads_option_reaches_the_audit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from textrobust import audit
    from textrobust.cli.app import app

    seen: dict[str, object] = {}

    def fake_run(*args: object, **kwargs: object) -> None:
        seen.update(kwargs)
        raise ConfigError("stop here")

    monkeypatch.setattr(audit, "run", fake_run)
    result = CliRunner().invoke(app, ["evaluate", "--threads", "3", "--quiet", "--out", str(tmp_path / "a")])
    assert result.exit_code == 2 and seen["threads"] == "3"
    CliRunner().invoke(app, ["evaluate", "--quiet", "--out", str(tmp_path / "b")])
    assert seen["threads"] == "auto"
    monkeypatch.undo()
    bad = CliRunner().invoke(app, ["evaluate", "--threads", "none", "--quiet", "--out", str(tmp_path / "c")])
    assert bad.exit_code == 2 and "thread count" in " ".join(bad.output.split())
