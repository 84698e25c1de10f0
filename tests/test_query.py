"""The query layer: caching, batching, budgets, output checks and counters."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pytest

from textrobust.errors import ConfigError, QueryBudgetExceeded, VictimError
from textrobust.text import Text
from textrobust.victims import FunctionVictim, QueryLayer, QueryStats
from textrobust.victims.protocol import Capabilities


class Recorder:
    """A victim function that records every batch it receives; scores are a function of
    the text's length, so answers can be checked."""

    def __init__(self, output: Any = None) -> None:
        self.batches: list[list[str]] = []
        self.output = output

    def __call__(self, strings: list[str]) -> Any:
        self.batches.append(list(strings))
        if self.output is not None:
            return self.output(strings)
        return [[1 / (1 + len(s)), 1 - 1 / (1 + len(s))] for s in strings]

    @property
    def sent(self) -> list[str]:
        return [s for batch in self.batches for s in batch]


def layer_with(recorder: Recorder | None = None, **kwargs: Any) -> tuple[QueryLayer, Recorder]:
    recorder = recorder or Recorder()
    return QueryLayer(FunctionVictim(recorder, ("a", "b"), name="rec"), **kwargs), recorder


def texts(*strings: str) -> list[Text]:
    return [Text.from_string(s) for s in strings]


def expected(*strings: str) -> np.ndarray:
    return np.array([[1 / (1 + len(s)), 1 - 1 / (1 + len(s))] for s in strings])


# ---- caching -----------------------------------------------------------------------------
def test_an_identical_text_is_never_sent_twice() -> None:
    layer, rec = layer_with()
    first = layer.probabilities(texts("one", "three"))
    second = layer.probabilities(texts("three", "five", "one"))
    assert rec.sent == ["one", "three", "five"]
    np.testing.assert_allclose(first, expected("one", "three"))
    np.testing.assert_allclose(second, expected("three", "five", "one"))
    assert layer.queries == 3 and layer.stats().cache_hits == 2


def test_duplicates_inside_one_request_are_sent_once() -> None:
    layer, rec = layer_with()
    got = layer.probabilities(texts("x", "yy", "x", "x", "yy"))
    assert rec.batches == [["x", "yy"]]
    np.testing.assert_allclose(got, expected("x", "yy", "x", "x", "yy"))
    stats = layer.stats()
    assert (stats.requested, stats.queries, stats.cache_hits) == (5, 2, 3)


def test_the_cache_key_is_the_rendered_text_and_pairs_keep_their_columns() -> None:
    rec = Recorder(lambda ps: [[0.5, 0.5]] * len(ps))
    layer = QueryLayer(FunctionVictim(rec, ("a", "b"), pairs=True))
    layer.probabilities([Text.from_pair("a b", "c"), Text.from_pair("a", "b c")])
    layer.probabilities([Text.from_pair("a b", "c", frozen_columns=())])  # same words: cached
    assert rec.sent == [("a b", "c"), ("a", "b c")]


def test_cached_rows_survive_a_victim_that_reuses_its_output_buffer() -> None:
    class BufferVictim:
        label_names = ("odd", "even")
        capabilities = Capabilities()

        def __init__(self) -> None:
            self.buffer = np.zeros((8, 2))

        def probabilities(self, batch: list[Text]) -> np.ndarray:
            for i, t in enumerate(batch):
                self.buffer[i] = [len(str(t)) % 2, 1 - len(str(t)) % 2]
            return self.buffer[: len(batch)]

    layer = QueryLayer(BufferVictim())
    layer.probabilities(texts("odd"))
    layer.probabilities(texts("even"))
    np.testing.assert_array_equal(layer.probabilities(texts("odd")), [[1.0, 0.0]])


def test_the_cache_evicts_the_least_recently_used_text() -> None:
    layer, rec = layer_with(cache_size=2)
    layer.probabilities(texts("a", "b"))
    layer.probabilities(texts("a"))  # a is now the most recent
    layer.probabilities(texts("c"))  # evicts b
    layer.probabilities(texts("a", "b"))
    assert rec.sent == ["a", "b", "c", "b"]


def test_cache_size_zero_disables_the_cache_but_still_deduplicates() -> None:
    layer, rec = layer_with(cache_size=0)
    layer.probabilities(texts("a", "a"))
    layer.probabilities(texts("a"))
    assert rec.batches == [["a"], ["a"]]


def test_clear_cache_forgets_every_text() -> None:
    layer, rec = layer_with()
    layer.probabilities(texts("a"))
    layer.clear_cache()
    layer.probabilities(texts("a"))
    assert rec.sent == ["a", "a"] and layer.queries == 2


# ---- batching ----------------------------------------------------------------------------
def test_missing_texts_are_sent_in_batches_of_batch_size() -> None:
    layer, rec = layer_with(batch_size=3)
    layer.probabilities(texts(*"abcdefgh"))
    assert [len(b) for b in rec.batches] == [3, 3, 2]
    layer.probabilities(texts(*"abcdefghij"))  # only i and j are new
    assert [len(b) for b in rec.batches] == [3, 3, 2, 2]
    assert layer.stats().batches == 4


def test_parameters_are_validated() -> None:
    victim = FunctionVictim(lambda s: [[1.0]] * len(s), ("only",))
    with pytest.raises(ConfigError, match="'batch_size'.*Got 0"):
        QueryLayer(victim, batch_size=0)
    with pytest.raises(ConfigError, match="'cache_size'.*Got -1"):
        QueryLayer(victim, cache_size=-1)
    with pytest.raises(ConfigError, match="'budget'.*Got -2"):
        with QueryLayer(victim).budget(-2):
            pass


# ---- budgets -----------------------------------------------------------------------------
def test_a_budget_refuses_before_sending_and_cache_hits_are_free() -> None:
    layer, rec = layer_with()
    with layer.budget(4) as budget:
        layer.probabilities(texts("a", "b", "c"))
        layer.probabilities(texts("a", "b", "c"))  # cached: free
        assert budget.used == 3 and budget.remaining == 1
        with pytest.raises(QueryBudgetExceeded) as caught:
            layer.probabilities(texts("d", "e"))
        assert (caught.value.budget, caught.value.used, caught.value.requested) == (4, 3, 2)
        assert rec.sent == ["a", "b", "c"]  # nothing of the refused request was sent
        layer.probabilities(texts("d", "a"))
        assert budget.used == 4 and budget.remaining == 0
    layer.probabilities(texts("e"))  # no budget outside the block
    assert rec.sent[-1] == "e"


def test_budgets_nest_and_each_counts_what_happened_inside_it() -> None:
    layer, _ = layer_with()
    with layer.budget(5) as outer:
        layer.probabilities(texts("a"))
        with layer.budget(2) as inner:
            layer.probabilities(texts("b", "c"))
            with pytest.raises(QueryBudgetExceeded):
                layer.probabilities(texts("d"))  # the inner budget is spent
        assert (inner.used, outer.used) == (2, 3)
        with layer.budget(None) as unlimited:
            with pytest.raises(QueryBudgetExceeded):
                layer.probabilities(texts("d", "e", "f"))  # the outer one has 2 left
            layer.probabilities(texts("d", "e"))
        assert (unlimited.used, outer.used, unlimited.remaining) == (2, 5, None)
    assert layer.queries == 5


def test_a_zero_budget_refuses_everything_new() -> None:
    layer, rec = layer_with()
    layer.probabilities(texts("a"))
    with layer.budget(0):
        assert layer.probabilities(texts("a")).shape == (1, 2)
        with pytest.raises(QueryBudgetExceeded, match="0 of 0 queries used, 1 more requested"):
            layer.probabilities(texts("b"))
    assert rec.sent == ["a"]


# ---- output checks -----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("output", "message"),
    [
        (lambda s: [[0.5, 0.25, 0.25]] * len(s), r"shape \(2, 3\) for 2 texts; expected \(2, 2\)"),
        (lambda s: [[0.5, 0.5]] * (len(s) - 1), r"shape \(1, 2\) for 2 texts"),
        (lambda s: [[2.0, -1.0]] * len(s), "not probability distributions.*outputs='logits'"),
        (lambda s: [[3.0, 1.0]] * len(s), "not probability distributions.*outputs='logits'"),
        (lambda s: [[np.nan, 1.0]] * len(s), "non-finite"),
    ],
)
def test_bad_outputs_raise_victim_error_with_a_hint(output: Any, message: str) -> None:
    layer, _ = layer_with(Recorder(output))
    with pytest.raises(VictimError, match=message):
        layer.probabilities(texts("a", "b"))
    assert layer._cache == {}  # nothing bad was cached


def test_output_checks_can_be_switched_off() -> None:
    layer, _ = layer_with(Recorder(lambda s: [[3.0, 1.0]] * len(s)), check_outputs=False)
    np.testing.assert_array_equal(layer.probabilities(texts("a")), [[3.0, 1.0]])


# ---- counters ----------------------------------------------------------------------------
def test_stats_hit_rate_and_differences() -> None:
    layer, _ = layer_with(batch_size=2)
    assert layer.stats().hit_rate == 0.0
    layer.probabilities(texts("a", "b", "c"))
    before = layer.stats()
    layer.probabilities(texts("a", "b", "c", "d"))
    stats = layer.stats()
    assert (stats.requested, stats.queries, stats.cache_hits, stats.batches) == (7, 4, 3, 3)
    assert stats.hit_rate == pytest.approx(3 / 7)
    assert stats.forward_seconds > 0
    delta = stats.minus(before)
    assert (delta.requested, delta.queries, delta.cache_hits, delta.batches) == (4, 1, 3, 1)
    assert delta.hit_rate == pytest.approx(0.75)
    assert isinstance(stats, QueryStats)


def test_the_layer_shows_the_victim_and_predicts() -> None:
    layer, _ = layer_with(batch_size=7, cache_size=10)
    assert layer.predict(texts("a", "abcdef")).tolist() == [0, 1]
    assert layer.label_names == ("a", "b") and layer.num_labels == 2
    assert repr(layer).startswith("QueryLayer(FunctionVictim(name='rec'") and "batch_size=7" in repr(layer)
    assert layer.capabilities == Capabilities()


def test_a_repeated_batch_of_1000_texts_is_served_from_the_cache() -> None:
    layer, rec = layer_with(batch_size=64)
    sample = texts(*(f"text number {i} is here" for i in range(1000)))
    start = time.perf_counter()
    first = layer.probabilities(sample)
    middle = time.perf_counter()
    second = layer.probabilities(sample)
    end = time.perf_counter()
    np.testing.assert_array_equal(first, second)
    stats = layer.stats()
    assert (stats.queries, stats.cache_hits, stats.batches) == (1000, 1000, 16)
    assert stats.hit_rate == 0.5
    assert len(rec.sent) == 1000
    # the cached pass does no victim work; generous bound for a loaded machine
    assert end - middle < 1.0 and middle - start < 5.0


def test_duplicates_and_cache_hits_across_batches_land_in_their_rows() -> None:
    # texts scattered over three forward batches, repeated inside the request and partly
    # cached from before (answers depend on the length: every text has its own)
    strings = [f"a {'x' * n} film" for n in range(1, 8)]
    layer, recorder = layer_with(batch_size=2, cache_size=4)
    layer.probabilities(texts(strings[1], strings[5]))
    request = [strings[i] for i in (0, 1, 2, 0, 3, 5, 4, 2, 6, 6)]
    assert np.array_equal(layer.probabilities(texts(*request)), expected(*request))
    assert recorder.batches[1:] == [[strings[0], strings[2]], [strings[3], strings[4]], [strings[6]]]
    stats = layer.stats()
    assert (stats.queries, stats.cache_hits) == (2 + 5, 2 + 3)  # two cached, three repeats
    assert len(layer._cache) == 4  # trimmed to cache_size, the most recent kept
    assert list(layer._cache) == [tuple([s]) for s in (strings[2], strings[3], strings[4], strings[6])]
