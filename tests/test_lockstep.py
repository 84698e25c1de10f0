"""Cross-example batching: the batching gate and the ``lockstep`` executor.

Several examples' searches share each forward pass; the values stay those of a run one
example at a time, and a text that breaks the victim is charged to its own example only.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from gate_helpers import gate_members

from textrobust import audit
from textrobust.audit.testing import keyword_scores, keyword_victim
from textrobust.data.examples import Dataset, Example
from textrobust.errors import VictimError
from textrobust.text import Text
from textrobust.victims.function import FunctionVictim
from textrobust.victims.gate import BatchingGate
from textrobust.victims.query import QueryLayer


class CountingVictim:
    """The keyword model, counting its calls; raises on texts holding 'boom'."""

    label_names = ("negative", "positive")

    def __init__(self) -> None:
        self.calls: list[int] = []
        self.inner = FunctionVictim(keyword_scores, self.label_names)

    @property
    def capabilities(self) -> Any:
        return self.inner.capabilities

    def probabilities(self, texts: Any) -> np.ndarray:
        self.calls.append(len(texts))
        if any("boom" in str(t) for t in texts):
            raise RuntimeError("the model broke on a text")
        return self.inner.probabilities(texts)


def test_members_share_one_forward_pass_and_get_their_own_rows() -> None:
    victim = CountingVictim()
    requests = [["a good film", "a dull film"], ["great acting"], ["slow", "bad", "fine"], ["good"]]
    answers = gate_members(BatchingGate(victim), requests)
    assert victim.calls == [7]  # all four requests (7 texts) in one call
    for request, answer in zip(requests, answers):
        np.testing.assert_array_equal(answer, np.asarray(keyword_scores(request)))


def test_a_text_that_breaks_the_victim_fails_only_its_own_member() -> None:
    victim = CountingVictim()
    answers = gate_members(BatchingGate(victim), [["a good film"], ["boom goes the film"], ["dull"]])
    assert isinstance(answers[1], VictimError) or isinstance(answers[1], RuntimeError)
    np.testing.assert_array_equal(answers[0], np.asarray(keyword_scores(["a good film"])))
    np.testing.assert_array_equal(answers[2], np.asarray(keyword_scores(["dull"])))


def test_members_take_turns() -> None:
    """Member code never runs in two threads at once (shared components need no locks)."""
    gate = BatchingGate(FunctionVictim(keyword_scores, ("negative", "positive")))
    inside = {"now": 0, "most": 0}
    gate.open(4)

    def run(i: int) -> None:
        gate.enter()
        try:
            layer = QueryLayer(gate.member())
            for step in range(5):
                inside["now"] += 1
                inside["most"] = max(inside["most"], inside["now"])
                for _ in range(2000):  # Python work between queries: a thread switch is likely
                    pass
                inside["now"] -= 1
                layer.probabilities([f"text {i} {step}"])
        finally:
            gate.leave()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert inside["most"] == 1
    assert gate.stats()["calls"] == 5 and gate.stats()["requests"] == 20


def _data(n: int = 12) -> Dataset:
    words = ["good", "dull", "great", "slow", "fine", "bad"]
    examples = tuple(Example(f"e{i:02d}", Text.from_string(f"a {words[i % 6]} film number {i}"), int(i % 2 == 0))
                     for i in range(n))
    return Dataset("toy", examples, ("negative", "positive"), split="test")


def test_lockstep_audit_equals_the_local_one(tmp_path: Path) -> None:
    analyses = {"evaluate": {"batch_size": 1}}
    local = audit.run(keyword_victim(), _data(), analyses, tmp_path / "local", progress=False)
    lock = audit.run(keyword_victim(), _data(), analyses, tmp_path / "lockstep", executor="lockstep", workers=4,
                     progress=False)
    assert lock["evaluate"].summary == local["evaluate"].summary
    strip = lambda records: [{**r.__dict__, "seconds": 0} for r in records]  # noqa: E731
    assert strip(lock["evaluate"].records) == strip(local["evaluate"].records)


def test_lockstep_merges_the_forward_passes_of_an_audit(tmp_path: Path) -> None:
    victim = CountingVictim()
    result = audit.run(victim, _data(), {"evaluate": {"batch_size": 1}}, tmp_path, executor="lockstep", workers=4,
                       progress=False)
    assert result["evaluate"].summary.units == 12 and result["evaluate"].summary.errors == 0
    assert max(victim.calls) > 1 and len(victim.calls) < 12  # several examples per forward pass


def test_lockstep_keeps_victim_faults_per_example(tmp_path: Path) -> None:
    data = _data(8)
    examples = list(data.examples)
    examples[3] = Example("e03", Text.from_string("boom goes the film"), 1)
    data = Dataset("toy", tuple(examples), data.label_names, split="test")
    result = audit.run(CountingVictim(), data, {"evaluate": {"batch_size": 1}}, tmp_path, executor="lockstep",
                       workers=4, progress=False)
    assert result["evaluate"].summary.errors == 1
    assert [f.example_id for f in result["evaluate"].failures] == ["batch:e03:e03:1"]


@pytest.mark.heavy
def test_lockstep_attack_on_the_default_victim_matches_local(tmp_path: Path) -> None:
    analyses = {"attack": {"recipe": "textfooler", "n": 6, "quality": False}}
    local = audit.run("default", "rotten_tomatoes", analyses, tmp_path / "local", progress=False)
    lock = audit.run("default", "rotten_tomatoes", analyses, tmp_path / "lockstep", executor="lockstep", workers=3,
                     progress=False)

    def comparable(records: Any) -> list[Any]:
        return [(r.example_id, r.status, r.queries, r.result.perturbed, r.result.queries) for r in records]

    assert comparable(lock["attack"].records) == comparable(local["attack"].records)


def test_gate_members_unwrap_to_their_victim() -> None:
    from textrobust.victims.gate import unwrap

    victim = CountingVictim()
    member = BatchingGate(victim).member()
    assert unwrap(member) is victim and unwrap(victim) is victim
    assert member.label_names == victim.label_names and member.capabilities == victim.capabilities
    assert not hasattr(member, "inner")  # only declared capabilities pass; the rest via unwrap
