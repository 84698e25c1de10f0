"""The beam search's prefetch hook and the neighbourhood's one fill-in call per beam step
(issue 31)."""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np

from textrobust.attack.problem import Evaluation, Problem, Substitution
from textrobust.attack.searches.beam import BeamSearch
from textrobust.attack.searches.search_testing import DictSource
from textrobust.fill_in.neighbourhood import Neighbourhood, NeighbourSource
from textrobust.fill_in.requests import masked_columns
from textrobust.text import Text

WORDS = ("good", "fine", "dull", "bold", "warm", "odd")


class FakeFillIn:
    """Scores that depend on the masked context only (never on the word it replaces);
    records the number of requests of every call and the step it came in."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, int]] = []
        self.step = 0

    def fill(self, requests: Sequence[tuple[Text, int]], k: int) -> list[list[tuple[str, float]]]:
        self.calls.append((self.step, len(requests)))
        out = []
        for text, position in requests:
            context = "|".join(masked_columns(text, position, "_").columns)
            scored = [(w, (zlib.crc32(f"{context}#{w}".encode()) % 600) / 100) for w in WORDS]
            out.append(sorted(scored, key=lambda ws: -ws[1])[:k])
        return out


class CountingGoal:
    """Never succeeds; scores by a checksum of the text; tells the fill-in a step ended
    (the beam search evaluates once per step) and records every text evaluated."""

    def __init__(self, fill_in: FakeFillIn) -> None:
        self.fill_in = fill_in
        self.seen: list[str] = []

    def evaluate(self, texts: Sequence[Text]) -> Evaluation:
        self.fill_in.step += 1
        self.seen.extend(str(t) for t in texts)
        scores = np.array([(zlib.crc32(str(t).encode()) % 1000) / 1000 for t in texts])
        return Evaluation(scores, np.zeros(len(texts), dtype=bool))


class PerTextSource:
    """A neighbourhood's source without the prefetch hook (today's one call per text)."""

    def __init__(self, inner: NeighbourSource) -> None:
        self.inner = inner

    def candidates(self, text: Text, positions: Sequence[int]) -> dict[int, list[Substitution]]:
        return self.inner.candidates(text, positions)


def _run(prefetch: bool, *, cache_size: int | None = None) -> tuple[FakeFillIn, CountingGoal, Neighbourhood, object]:
    fill_in = FakeFillIn()
    hood = Neighbourhood(fill_in, cache_size=cache_size, delta=2.0)
    start = Text.from_string("a bad film with a thin plot").freeze([1])
    source = hood.source(blacklist=("odd",))
    goal = CountingGoal(fill_in)
    problem = Problem(original=start, goal=goal, source=source if prefetch else PerTextSource(source))
    outcome = BeamSearch(beam_width=4, max_depth=3).search(start, problem)
    return fill_in, goal, hood, outcome


def test_one_fill_in_call_per_beam_step_with_the_same_candidates() -> None:
    batched, batched_goal, batched_hood, batched_outcome = _run(True)
    per_text, per_text_goal, per_text_hood, per_text_outcome = _run(False)
    steps_batched = [step for step, _ in batched.calls]
    steps_per_text = [step for step, _ in per_text.calls]
    # the start is evaluated first (step 0 -> 1); then one call per beam step
    assert steps_batched == sorted(set(steps_batched)) and len(steps_batched) == 3
    assert len(steps_per_text) > len(steps_batched)
    assert max(steps_per_text.count(s) for s in set(steps_per_text)) == 4  # a beam of 4 texts: 4 calls
    # the same texts proposed and evaluated, in the same order, and the same outcome
    assert batched_goal.seen == per_text_goal.seen and len(batched_goal.seen) > 20
    assert batched_outcome == per_text_outcome
    # the same rows sent to the fill-in (a row counts once, however many calls carry it)
    assert sum(n for _, n in batched.calls) == sum(n for _, n in per_text.calls) == batched_hood.requests
    assert batched_hood.requests == per_text_hood.requests
    assert batched_hood.stats()["fill_calls"] == 3


def test_prefetched_answers_do_not_need_the_cache() -> None:
    batched, batched_goal, _, _ = _run(True, cache_size=0)
    _, per_text_goal, _, _ = _run(False, cache_size=0)
    assert len(batched.calls) == 3
    assert batched_goal.seen == per_text_goal.seen


def test_prefetch_holds_answers_without_counting_them_again() -> None:
    fill_in = FakeFillIn()
    hood = Neighbourhood(fill_in, cache_size=0)
    texts = [Text.from_string("a bad film"), Text.from_string("a dull film")]
    hood.prefetch([(t, p) for t in texts for p in range(3)])
    assert (hood.requests, hood.calls, fill_in.calls) == (5, 1, [(0, 5)])  # "a _ film" is asked once
    first = hood.neighbours_many(texts)
    assert (hood.requests, hood.calls, hood.cache_hits) == (5, 1, 0)
    hood.prefetch([(texts[0], 0)])  # a new prefetch replaces the held answers
    assert hood.neighbours_many(texts) == first
    assert hood.calls == 3


def test_source_prefetch_is_called_with_every_beam_text_and_its_positions() -> None:
    class Recording(DictSource):
        def __init__(self) -> None:
            super().__init__({"bad": ["poor", "awful"], "film": ["movie", "picture"], "plot": ["story"]})
            self.prefetched: list[list[tuple[Text, tuple[int, ...]]]] = []

        def prefetch(self, items: Sequence[tuple[Text, Sequence[int]]]) -> None:
            self.prefetched.append([(t, tuple(p)) for t, p in items])

    source = Recording()
    goal = CountingGoal(FakeFillIn())
    start = Text.from_string("a bad film , thin plot").freeze([0])
    problem = Problem(original=start, goal=goal, source=source)
    BeamSearch(beam_width=2, max_depth=2).search(start, problem)
    assert source.prefetched[0] == [(start, problem.positions(start))]
    assert len(source.prefetched) == 2 and len(source.prefetched[1]) == 2  # the beam of the second step
    assert all(positions == problem.positions(t) and 0 not in positions
               for step in source.prefetched for t, positions in step)


def test_beam_search_works_with_a_source_without_the_hook() -> None:
    source = DictSource({"bad": ["poor", "awful"], "film": ["movie"]})
    assert not hasattr(source, "prefetch")
    goal = CountingGoal(FakeFillIn())
    start = Text.from_string("a bad film")
    outcome = BeamSearch(beam_width=2, max_depth=2).search(start, Problem(original=start, goal=goal, source=source))
    assert outcome.iterations == 2 and not outcome.success
    assert {"a poor film", "a awful film", "a bad movie", "a poor movie"} <= set(goal.seen)
