"""Embedding neighbours as candidates: the k nearest words by cosine, or an L2 ball.

Words are looked up lower-cased (GloVe is lower-case); candidates come back in the
original word's case style ("Good" -> "Great", "GOOD" -> "GREAT"). Words outside the
vocabulary get no candidates; neighbours that are not one word for :meth:`Text.replace`
(punctuation tokens such as "," or "'s") are skipped. Scores are cosines.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum

from textrobust.attack.candidates.inflection import is_word, match_case
from textrobust.attack.problem import Substitution
from textrobust.embeddings.vectors import DEFAULT_VOCAB_SIZE, WordVectors
from textrobust.errors import ConfigError
from textrobust.text import Text

__all__ = ["EmbeddingNeighbours", "VectorSpace", "embedding_neighbours"]


class VectorSpace(str, Enum):
    """Which built-in vectors ``embedding_neighbours`` loads."""

    COUNTERFITTED = "counterfitted"
    GLOVE = "glove"


class EmbeddingNeighbours:
    """The ``k`` nearest neighbours of each word in ``vectors``.

    ``max_cos_distance`` keeps only neighbours with ``1 - cos <= max_cos_distance``;
    ``l2_radius`` instead takes every word in the L2 ball of that radius around the word
    (on the unit vectors), nearest first, at most ``k``. At most one of the two.
    """

    def __init__(
        self,
        vectors: WordVectors,
        k: int = 50,
        *,
        max_cos_distance: float | None = None,
        l2_radius: float | None = None,
    ) -> None:
        if not isinstance(k, int) or k < 1:
            raise ConfigError(f"The 'k' parameter of EmbeddingNeighbours must be an int >= 1. Got {k!r} instead.")
        if max_cos_distance is not None and l2_radius is not None:
            raise ConfigError(
                "EmbeddingNeighbours takes 'max_cos_distance' or 'l2_radius', not both. "
                f"Got max_cos_distance={max_cos_distance} and l2_radius={l2_radius}."
            )
        if max_cos_distance is not None and not 0.0 <= max_cos_distance <= 2.0:
            raise ConfigError(
                f"The 'max_cos_distance' parameter of EmbeddingNeighbours must be in [0, 2]. "
                f"Got {max_cos_distance} instead."
            )
        if l2_radius is not None and not l2_radius >= 0.0:
            raise ConfigError(f"The 'l2_radius' parameter of EmbeddingNeighbours must be >= 0. Got {l2_radius} instead.")
        self.vectors = vectors
        self.k = k
        self.max_cos_distance = max_cos_distance
        self.l2_radius = l2_radius
        # word as written -> its filtered, re-cased neighbours (the vectors' own cache holds
        # the raw neighbour lists; this saves re-filtering them on every call)
        self._cased: dict[str, tuple[tuple[str, float], ...]] = {}

    def candidates(self, text: Text, positions: Sequence[int]) -> dict[int, list[Substitution]]:
        return {
            position: [Substitution(position, cased, cos) for cased, cos in found]
            for position, found in self.word_candidates(text, positions).items()
        }

    def word_candidates(self, text: Text, positions: Sequence[int]) -> dict[int, tuple[tuple[str, float], ...]]:
        """What :meth:`candidates` returns, as cached ``(word, score)`` tuples per position:
        the attack's hot path (:meth:`Problem.neighbours`) reads these without building a
        :class:`Substitution` per candidate."""
        positions = list(positions)
        words = text.words
        cased_cache = self._cased
        # only words not re-cased before need their raw neighbour lists
        keys = list(dict.fromkeys(words[p].lower() for p in positions if words[p] not in cased_cache))
        neighbours = dict(zip(keys, self._raw(keys))) if keys else {}
        out: dict[int, tuple[tuple[str, float], ...]] = {}
        for position in positions:
            word = words[position]
            cased_list = cased_cache.get(word)
            if cased_list is None:
                cased_list = self._cased_neighbours(word, neighbours[word.lower()])
                if len(cased_cache) < 200_000:
                    cased_cache[word] = cased_list
            out[position] = cased_list
        return out

    def _raw(self, keys: list[str]) -> list[Sequence[tuple[str, float]]]:
        if self.l2_radius is not None:
            return list(self.vectors.within(keys, self.l2_radius, limit=self.k))
        return list(self.vectors.nearest(keys, self.k, max_distance=self.max_cos_distance))

    @staticmethod
    def _cased_neighbours(word: str, neighbours: Sequence[tuple[str, float]]) -> tuple[tuple[str, float], ...]:
        """The neighbours of ``word`` that are words, in its case style, deduplicated."""
        kept: list[tuple[str, float]] = []
        seen = {word}
        for candidate, cos in neighbours:
            if not is_word(candidate):
                continue
            cased = match_case(word, candidate)
            if cased.lower() == word.lower() or cased in seen:
                continue
            seen.add(cased)
            kept.append((cased, cos))
        return tuple(kept)

    def __repr__(self) -> str:
        limit = (
            f", l2_radius={self.l2_radius}" if self.l2_radius is not None
            else f", max_cos_distance={self.max_cos_distance}" if self.max_cos_distance is not None
            else ""
        )
        return f"EmbeddingNeighbours({self.vectors!r}, k={self.k}{limit})"


def embedding_neighbours(
    vectors: WordVectors | None = None,
    *,
    space: VectorSpace | str = VectorSpace.COUNTERFITTED,
    k: int = 50,
    max_cos_distance: float | None = None,
    l2_radius: float | None = None,
    vocab_size: int = DEFAULT_VOCAB_SIZE,
) -> EmbeddingNeighbours:
    """Embedding neighbours over ``vectors``, or over the built-in ``space``: counter-fitted
    GloVe (built and cached on first use, about a minute) or plain GloVe, restricted to
    the ``vocab_size`` most frequent words."""
    if vectors is None:
        try:
            space = VectorSpace(space)
        except ValueError:
            raise ConfigError(
                f"The 'space' parameter of embedding_neighbours must be one of "
                f"{[s.value for s in VectorSpace]}. Got {space!r} instead."
            ) from None
        if space is VectorSpace.GLOVE:
            vectors = WordVectors.from_glove(vocab_size)
        else:
            from textrobust.embeddings.counterfit import (
                CounterFitSettings,
                counterfitted_vectors,
            )

            vectors = counterfitted_vectors(CounterFitSettings(vocab_size=vocab_size))
    return EmbeddingNeighbours(vectors, k, max_cos_distance=max_cos_distance, l2_radius=l2_radius)
