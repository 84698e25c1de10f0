"""Word-importance ranking: the order in which a greedy search visits positions.

- ``delete``: leave-one-out, each word deleted (``text.without(i)``) and the text scored
  by the goal (TextFooler's deletion importance; TextAttack's ``wir_method="delete"``);
- ``unk``: each word replaced by an unknown-token word (TextAttack's ``"unk"``);
- ``gradient``: the norm of the word's row of ``problem.word_gradients(text)``
  (TextAttack's ``"gradient"``); the problem raises
  :class:`~textrobust.errors.CapabilityError` when the victim has no gradients;
- ``random``: a seeded random order.

A higher goal score after removing a word means the word was holding the prediction up,
so it comes first. ``delete`` and ``unk`` cost one query per ranked position (texts
already scored are free: the query layer caches), counted against the budget like any
other query; ``gradient`` and ``random`` cost none. The leave-one-out texts are built and
scored :data:`PROBE_CHUNK` at a time, so ranking a text of n words holds O(n) texts at
once, never all n (a 50,000-word row would otherwise build n^2 words in memory).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from textrobust.attack.problem import Evaluation, Problem
from textrobust.errors import ConfigError
from textrobust.text import WORD_PATTERN, Text

__all__ = ["PROBE_CHUNK", "QUERY_FREE", "Ranking", "WordImportance", "rank_positions"]

#: Leave-one-out texts built and scored per call (memory: this many texts at a time).
PROBE_CHUNK = 256


class Ranking(StrEnum):
    """How a greedy search orders positions."""

    DELETE = "delete"
    UNK = "unk"
    GRADIENT = "gradient"
    RANDOM = "random"


#: Rankings that spend no queries (so they can run before the start text is scored).
QUERY_FREE = frozenset({Ranking.GRADIENT, Ranking.RANDOM})


@dataclass(frozen=True)
class WordImportance:
    """Positions, most important first, with the importance each got (same order).

    Importance is the goal score of the text without the word (``delete``/``unk``), the
    gradient norm (``gradient``) or a uniform draw (``random``).
    """

    method: Ranking
    positions: tuple[int, ...]
    importance: tuple[float, ...]


def rank_positions(
    text: Text,
    problem: Problem,
    positions: Sequence[int],
    method: Ranking | str = Ranking.DELETE,
    *,
    unk_token: str = "unk",
    rng: np.random.Generator | None = None,
    evaluate: Callable[[Sequence[Text]], Evaluation] | None = None,
) -> WordImportance:
    """Order ``positions`` of ``text`` by importance, most important first.

    ``evaluate`` scores texts (default ``problem.evaluate``; a search passes its own to
    keep batching and budget handling in one place); all ``delete``/``unk`` texts go in
    calls of :data:`PROBE_CHUNK` texts. Ties keep position order. ``rng`` is needed for
    ``random``.
    """
    try:
        method = Ranking(method)
    except ValueError:
        raise ConfigError(
            f"The 'method' parameter of rank_positions must be one of "
            f"{[m.value for m in Ranking]}. Got {method!r} instead."
        ) from None
    positions = tuple(positions)
    if not positions:
        return WordImportance(method, (), ())
    if method is Ranking.RANDOM:
        if rng is None:
            raise ConfigError("The 'rng' parameter of rank_positions is needed for the 'random' ranking.")
        values = rng.random(len(positions))
    elif method is Ranking.GRADIENT:
        grads = np.asarray(problem.word_gradients(text), dtype=np.float64)
        if grads.ndim != 2 or grads.shape[0] != len(text):
            raise ConfigError(
                f"problem.word_gradients returned shape {grads.shape} for a text of {len(text)} "
                f"words; expected ({len(text)}, dim)."
            )
        # L1 norm of the word's gradient row, as TextAttack's GreedyWordSwapWIR("gradient").
        values = np.abs(grads[list(positions)]).sum(axis=1)
    else:
        if method is Ranking.UNK and WORD_PATTERN.fullmatch(unk_token) is None:
            raise ConfigError(
                f"The 'unk_token' parameter must be one word (letters/digits, inner ' or -). "
                f"Got {unk_token!r} instead."
            )
        scorer = evaluate if evaluate is not None else problem.evaluate
        chunks = []
        for start in range(0, len(positions), PROBE_CHUNK):
            part = positions[start : start + PROBE_CHUNK]
            if method is Ranking.DELETE:
                probes = [text.without(p) for p in part]
            else:
                probes = [text.replace(p, unk_token) for p in part]
            chunks.append(np.asarray(scorer(probes).scores, dtype=np.float64))
        values = np.concatenate(chunks)
    order = np.argsort(-values, kind="stable")
    return WordImportance(
        method,
        tuple(positions[i] for i in order),
        tuple(float(values[i]) for i in order),
    )
