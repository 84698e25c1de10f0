"""Measuring a fill-in: mask one content word per held-out sentence, see if it comes back.

:func:`masked_word_probes` picks, with a fixed seed, one content word (alphabetic, at
least three letters, not a stop word) in each of ``n`` sentences; :func:`recall_at_k`
asks a fill-in for its top candidates at those positions and counts how often the
original word (case-insensitive) is among the first 1, 5, 20... This is the measurement
of issue 4 (recall@1 and recall@20 of the masked original word, and candidates per
second); ``benchmarks/fill_in.py`` runs it for every route.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from textrobust.errors import ConfigError
from textrobust.text import Text

__all__ = ["FillInScore", "content_positions", "masked_word_probes", "recall_at_k"]


def content_positions(text: Text, stop_words: Iterable[str]) -> list[int]:
    """Positions of content words: alphabetic, >= 3 letters, not a stop word."""
    stops = {w.lower() for w in stop_words}
    return [i for i, w in enumerate(text.words) if w.isalpha() and len(w) >= 3 and w.lower() not in stops]


def masked_word_probes(
    texts: Sequence[Text], n: int, *, seed: int = 0, stop_words: Iterable[str] | None = None
) -> list[tuple[Text, int]]:
    """``n`` (text, position) probes: texts drawn in a seeded order, one content word each.

    Texts without a content word are skipped. ``stop_words`` defaults to the project's
    list (:func:`textrobust.assets.stop_words`).
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ConfigError(f"The 'n' parameter of masked_word_probes must be an int >= 1. Got {n!r} instead.")
    if stop_words is None:
        from textrobust.assets import stop_words as load_stop_words

        stop_words = load_stop_words()
    stops = frozenset(w.lower() for w in stop_words)
    rng = random.Random(seed)
    order = list(range(len(texts)))
    rng.shuffle(order)
    probes: list[tuple[Text, int]] = []
    for i in order:
        positions = content_positions(texts[i], stops)
        if positions:
            probes.append((texts[i], rng.choice(positions)))
            if len(probes) == n:
                break
    return probes


@dataclass(frozen=True)
class FillInScore:
    """Recall of the masked original word at each cut-off, and the cost of getting it."""

    n: int
    recall: dict[int, float]
    seconds: float
    k: int
    candidates: int  # (word, score) pairs returned in all

    @property
    def candidates_per_second(self) -> float:
        return self.candidates / self.seconds if self.seconds > 0 else float("inf")

    @property
    def positions_per_second(self) -> float:
        return self.n / self.seconds if self.seconds > 0 else float("inf")


def recall_at_k(
    fill_in: object, probes: Sequence[tuple[Text, int]], ks: Sequence[int] = (1, 5, 20), *, batch: int = 50
) -> FillInScore:
    """Recall@k of the original word over ``probes``, asking ``fill_in.fill`` for
    ``max(ks)`` candidates, ``batch`` probes per call (timed end to end)."""
    fill = getattr(fill_in, "fill", None)
    if not callable(fill):
        raise ConfigError(f"recall_at_k needs a fill-in with a fill(requests, k) method. Got {type(fill_in).__name__}.")
    if not ks or any(isinstance(k, bool) or not isinstance(k, int) or k < 1 for k in ks):
        raise ConfigError(f"The 'ks' parameter of recall_at_k must be ints >= 1. Got {ks!r} instead.")
    top = max(ks)
    hits = dict.fromkeys(ks, 0)
    returned = 0
    start = time.perf_counter()
    answers: list[list[tuple[str, float]]] = []
    for b in range(0, len(probes), batch):
        answers.extend(fill(list(probes[b : b + batch]), top))
    seconds = time.perf_counter() - start
    for (text, position), answer in zip(probes, answers):
        returned += len(answer)
        words = [w.lower() for w, _ in answer]
        original = text.words[position].lower()
        for k in ks:
            hits[k] += original in words[:k]
    n = len(probes)
    return FillInScore(n, {k: hits[k] / n if n else 0.0 for k in ks}, seconds, top, returned)
