"""Neighbour spaces: words and their vectors normalised to [0, 1] per dimension, the
distances between texts in them, and the candidate sources they give.

La Malfa et al. (2020), "Assessing Robustness of Text Classification through Maximal Safe
Radius Computation" (../shared/papers/maximal-safe-radius-mcts-lirpa.txt), Section 2:
distances between texts are taken in the embedding space normalised to [0, 1] per
dimension, over the positions ``I`` that change. For a white-box word victim
(:class:`~textrobust.victims.protocol.EmbeddingVictim`) this is the victim's *own*
embedding table (the one bound propagation works on, normalised exactly as
:class:`textrobust.bounds.region.EmbeddingScale` does: :meth:`EmbeddingSpace.of_victim`);
for any other victim the maximal-safe-radius analysis uses word vectors the project ships
(:meth:`EmbeddingSpace.of_vectors`).

Two candidate sources live in such a space:

- :class:`L2Neighbours` (registered as ``l2_neighbours``), the paper's Section 2.2: the
  ``n`` closest words in L2 (the paper: 1000 or 10000), nearest first;
- :class:`SpaceSynonyms`, a filter of another source (the validated synonyms in the
  analysis): its substitutes that the space knows, closest first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from textrobust.attack.candidates.inflection import is_word, match_case
from textrobust.attack.problem import Substitution
from textrobust.errors import ConfigError
from textrobust.text import Text
from textrobust.victims.protocol import require_embedding_victim

__all__ = ["EmbeddingSpace", "L2Neighbours", "SpaceSynonyms", "l2_neighbours"]


class EmbeddingSpace:
    """Words and their vectors normalised to [0, 1] per dimension.

    ``lookup(word)`` gives a word's row (or None when the space has no vector for it);
    ``skip`` rows (padding) are left out of the normalisation and of the neighbours;
    ``limit``: positions at or past it are not seen by the victim (truncation)."""

    def __init__(self, words: Sequence[str], matrix: np.ndarray, lookup: Callable[[str], int | None], *,
                 skip: Sequence[int] = (), limit: int | None = None, name: str = "embedding") -> None:
        matrix = np.asarray(matrix, dtype=np.float64)
        if matrix.ndim != 2 or matrix.shape[0] != len(words):
            raise ConfigError(f"EmbeddingSpace needs one row per word. Got {matrix.shape} for {len(words)} words.")
        keep = np.ones(len(words), dtype=bool)
        keep[list(skip)] = False
        rows = matrix[keep] if keep.any() else matrix
        low = rows.min(axis=0)
        span = rows.max(axis=0) - low
        self.z = np.where(span > 0, (matrix - low) / np.where(span > 0, span, 1.0), 0.0).clip(0.0, 1.0)
        self.live = span > 0
        self.words = tuple(words)
        self.lookup = lookup
        self.limit = limit
        self.name = name
        self._candidates = np.flatnonzero(keep & np.fromiter((is_word(w) for w in words), bool, len(words)))
        self._nearest: dict[str, tuple[tuple[str, float], ...]] = {}

    def __repr__(self) -> str:
        return f"EmbeddingSpace({self.name}, {len(self.words)} words, dim={self.z.shape[1]})"

    @classmethod
    def of_victim(cls, victim: Any) -> EmbeddingSpace:
        """The embedding table of ``victim``, which must declare its embedding layer and
        give each word one id (:class:`~textrobust.victims.protocol.EmbeddingVictim`, a
        TorchVictim over a zoo word model; a lockstep gate member stands for its victim)."""
        found = require_embedding_victim(victim, "EmbeddingSpace.of_victim")
        vocab = found.tokenizer
        weight = found.embedding_layer().weight.detach().cpu().numpy()

        def lookup(word: str) -> int:
            return int(vocab.id_of(word))

        return cls(vocab.words, weight, lookup, skip=(0,), limit=vocab.max_length, name="victim embedding")

    @classmethod
    def of_vectors(cls, vectors: Any, name: str = "GloVe") -> EmbeddingSpace:
        """Any :class:`~textrobust.embeddings.vectors.WordVectors`."""
        index = vectors.index
        words = [""] * len(index)
        for word, row in index.items():
            words[row] = word

        def lookup(word: str) -> int | None:
            return index.get(word.lower())

        return cls(words, vectors.matrix, lookup, name=name)

    # ---- geometry ----------------------------------------------------------------------------
    def vector(self, word: str) -> np.ndarray | None:
        row = self.lookup(word)
        return None if row is None else self.z[row]

    def positions(self, text: Text) -> tuple[int, ...]:
        """The positions whose word the victim sees and the space has a vector for."""
        end = len(text) if self.limit is None else min(len(text), self.limit)
        return tuple(p for p in range(end) if self.lookup(text.words[p]) is not None)

    def distance(self, a: Text, b: Text, norm: str = "l2") -> float:
        """The distance of ``b`` from ``a`` over the positions where they differ."""
        diffs = []
        for p in a.diff(b):
            va, vb = self.vector(a.words[p]), self.vector(b.words[p])
            if va is None or vb is None:
                return float("inf")
            diffs.append(vb - va)
        if not diffs:
            return 0.0
        d = np.concatenate(diffs)
        return float(np.abs(d).max()) if norm == "linf" else float(np.linalg.norm(d))

    def embedding_diameter(self, norm: str = "l2") -> float:
        """The diameter of the normalised embedding itself, the paper's Table 4: ``sqrt(D)``
        in L2 (``D`` the dimensions that vary; "an embedding of dimension d will have a
        diameter equal to sqrt(d)"), 1 in L-infinity. The paper's Tables 2-6 divide the
        bounds by it; :meth:`diameter` is Definition 1's per-text ``d``."""
        live = int(np.count_nonzero(self.live))
        if not live:
            return 0.0
        return 1.0 if norm == "linf" else float(np.sqrt(live))

    def diameter(self, text: Text, positions: Sequence[int], norm: str = "l2") -> float:
        """Definition 1's ``d`` over ``positions``: the distance from the text to the
        farthest point of the cube (between ``sqrt(D |I|) / 2`` and ``sqrt(D |I|)`` in L2;
        compare :meth:`embedding_diameter`)."""
        far = []
        for p in positions:
            z = self.vector(text.words[p])
            if z is None:
                continue
            far.append(np.maximum(z, 1.0 - z) * self.live)
        if not far:
            return 0.0
        f = np.concatenate(far)
        return float(f.max()) if norm == "linf" else float(np.linalg.norm(f))

    def nearest(self, word: str, n: int) -> tuple[tuple[str, float], ...]:
        """The ``n`` closest words (L2) to ``word``, nearest first, itself left out."""
        key = word.lower()
        if key not in self._nearest:
            row = self.lookup(word)
            if row is None:
                found: tuple[tuple[str, float], ...] = ()
            else:
                rows = self._candidates[self._candidates != row]
                dist = np.linalg.norm(self.z[rows] - self.z[row], axis=1)
                k = min(n, len(rows))
                top = np.argpartition(dist, k - 1)[:k] if k else np.zeros(0, dtype=int)
                top = top[np.lexsort((rows[top], dist[top]))]
                found = tuple((self.words[rows[i]], float(dist[i])) for i in top
                              if self.words[rows[i]].lower() != key)
            if len(self._nearest) < 100_000:
                self._nearest[key] = found
            return found
        return self._nearest[key]


class L2Neighbours:
    """Candidate source: the ``n`` closest words in L2 of an :class:`EmbeddingSpace`
    (La Malfa et al. 2020, Section 2.2), in the original word's case; score ``-distance``."""

    def __init__(self, space: EmbeddingSpace, n: int = 100) -> None:
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ConfigError(f"The 'n' parameter of L2Neighbours must be an int >= 1. Got {n!r} instead.")
        self.space = space
        self.n = n

    def candidates(self, text: Text, positions: Sequence[int]) -> dict[int, list[Substitution]]:
        seen = set(self.space.positions(text))
        out: dict[int, list[Substitution]] = {}
        for p in positions:
            if p not in seen:
                continue
            word = text.words[p]
            subs = [Substitution(p, match_case(word, w), -d) for w, d in self.space.nearest(word, self.n)]
            if subs:
                out[p] = subs
        return out

    def __repr__(self) -> str:
        return f"L2Neighbours({self.space!r}, n={self.n})"


def l2_neighbours(space: EmbeddingSpace | None = None, n: int = 100) -> L2Neighbours:
    """:class:`L2Neighbours` in ``space``, or when None in the project's GloVe 50d vectors
    (the space the maximal safe radius uses for victims without a word embedding; loaded
    and normalised here, on the call)."""
    if space is None:
        from textrobust.embeddings.vectors import WordVectors

        space = EmbeddingSpace.of_vectors(WordVectors.from_glove(), name="GloVe 50d")
    return L2Neighbours(space, n)


class SpaceSynonyms:
    """Candidate source for MCTS: ``source``'s synonyms (the validated ones by default in
    the analysis) that the victim's embedding ``space`` knows, closest in L2 first, score
    ``-distance``. A departure from La Malfa et al. (2020), whose MCTS draws the ``n``
    nearest words in the embedding, most of which change the meaning ("good" -> "bad"):
    the upper bound is then the distance of the nearest *synonym* substitution that flips
    the prediction (still an upper bound on the maximal safe radius)."""

    def __init__(self, space: EmbeddingSpace, source: Any) -> None:
        self.space = space
        self.source = source

    def candidates(self, text: Text, positions: Sequence[int]) -> dict[int, list[Substitution]]:
        known = set(self.space.positions(text))
        wanted = [p for p in positions if p in known]
        found = self.source.candidates(text, wanted) if wanted else {}
        out: dict[int, list[Substitution]] = {}
        for p in wanted:
            origin = self.space.vector(text.words[p])
            scored = []
            for sub in found.get(p, ()):
                z = self.space.vector(sub.word)
                if z is None or origin is None or sub.word.lower() == text.words[p].lower():
                    continue
                scored.append(Substitution(p, match_case(text.words[p], sub.word),
                                           -float(np.linalg.norm(z - origin))))
            scored.sort(key=lambda sub: -sub.score)
            if scored:
                out[p] = scored
        return out

    def __repr__(self) -> str:
        return f"SpaceSynonyms({self.space!r}, {self.source!r})"

