"""The constraint models under test in an ACCS analysis, behind one interface.

Morris, "Second-Order NLP Adversarial Examples" (BlackboxNLP 2020,
../shared/papers/second-order-adversarial-examples-accs.txt) compares the Universal
Sentence Encoder and BERTScore. USE cannot be installed offline; every model here is a
:class:`textrobust.similarity.SentenceScorer` (``similarity(a, b) -> array``), so any
encoder a user has plugs in the same way. The names are those of the one registry of
similarity scorers, :data:`textrobust.similarity.SIMILARITY_SCORERS`:

- ``minilm``: cosine of all-MiniLM-L6-v2 sentence embeddings (the default, for USE);
- ``mpnet:<folder>`` / ``encoder:<folder>``: cosine of any sentence-transformers folder
  the user gives (all-mpnet-base-v2 is not prepared by the project: it must be given);
- ``bertscore``: BERTScore F1 over MiniLM's 4th layer (no baseline rescaling offline);
- ``word_mean``: cosine of mean GloVe vectors, a weak, order-blind baseline.

:class:`SimilarityMemo` wraps a scorer with a cache of pair scores and counters, so that
both attacks and every threshold of a sweep share one set of scores.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from textrobust.devices import Placement
from textrobust.errors import ConfigError
from textrobust.registry import Registry
from textrobust.similarity import SIMILARITY_SCORERS
from textrobust.similarity.cache import LRUCache
from textrobust.similarity.protocol import check_pairs, describe

__all__ = ["CONSTRAINT_MODELS", "SimilarityMemo", "build_constraint_model", "parse_constraint_model"]

#: The constraint models an ACCS analysis can name: the similarity scorers, one registry
#: (:data:`textrobust.similarity.SIMILARITY_SCORERS`); ``name:<folder>`` passes the folder.
CONSTRAINT_MODELS: Registry[Callable[..., Any]] = SIMILARITY_SCORERS


def parse_constraint_model(spec: str) -> tuple[str, str | None]:
    """``"minilm"`` -> ("minilm", None); ``"mpnet:/models/mpnet"`` -> ("mpnet", "/models/mpnet")."""
    if not isinstance(spec, str) or not spec.strip():
        raise ConfigError(f"A constraint model is a name such as 'minilm' or 'mpnet:<folder>'. Got {spec!r}.")
    name, _, path = spec.strip().partition(":")
    name = name.strip()
    if name not in SIMILARITY_SCORERS:
        raise ConfigError(
            f"Unknown constraint model '{name}'. Known: {', '.join(SIMILARITY_SCORERS.names())} "
            "(a folder goes after a colon, e.g. 'mpnet:/path/to/all-mpnet-base-v2')."
        )
    return name, (path.strip() or None)


#: The similarity scorers that load a torch model and take the run's ``placement``.
PLACED_SCORERS = frozenset({"minilm", "mpnet", "encoder", "bertscore"})


def build_constraint_model(spec: str, placement: Placement | None = None) -> Any:
    """The :class:`~textrobust.similarity.SentenceScorer` named by ``spec``, built by its
    factory in :data:`~textrobust.similarity.SIMILARITY_SCORERS` with the folder after the
    colon, if any (models load lazily where the scorer allows it). ``placement``: the run's
    device and float type, for the scorers that load a torch model (:data:`PLACED_SCORERS`;
    None: the CPU in float32)."""
    name, path = parse_constraint_model(spec)
    factory = SIMILARITY_SCORERS.get(name)
    if placement is not None and name in PLACED_SCORERS:
        return factory(path, placement=placement)
    return factory(path)


class SimilarityMemo:
    """A :class:`~textrobust.similarity.SentenceScorer` that remembers every pair it scored.

    The first- and second-order attacks of every threshold go through one memo per
    constraint model, so each (reference, text) pair is scored once per analysis. Counts
    pairs asked for, pairs sent to the scorer and the time spent there.

    >>> class Length:
    ...     def similarity(self, a, b): return np.array([min(len(x), len(y)) / max(len(x), len(y)) for x, y in zip(a, b)])
    >>> memo = SimilarityMemo(Length())
    >>> memo.similarity(["abcd", "abcd"], ["ab", "ab"]).tolist(), memo.stats()["scored"]
    ([0.5, 0.5], 1.0)
    """

    def __init__(self, scorer: Any, *, cache_size: int | None = None) -> None:
        if not hasattr(scorer, "similarity"):
            raise ConfigError(
                f"The 'scorer' parameter of SimilarityMemo must have similarity(a, b). Got {type(scorer).__name__}."
            )
        self.scorer = scorer
        self._cache: LRUCache[tuple[str, str], float] = LRUCache(cache_size)
        self.requested = 0
        self.scored = 0
        self.seconds = 0.0

    def similarity(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        import time

        a, b = check_pairs("SimilarityMemo", a, b)
        pairs = list(zip(a, b))
        self.requested += len(pairs)
        todo = self._cache.missing(pairs)
        if todo:
            began = time.perf_counter()
            values = np.asarray(
                self.scorer.similarity([x for x, _ in todo], [y for _, y in todo]), dtype=np.float64
            ).reshape(len(todo))
            self.seconds += time.perf_counter() - began
            self.scored += len(todo)
            for pair, score in zip(todo, values.tolist()):
                self._cache.put(pair, float(score))
        out = np.empty(len(pairs), dtype=np.float64)
        for i, pair in enumerate(pairs):
            value = self._cache.get(pair)
            if value is None:  # evicted by a cache smaller than this batch
                value = float(np.asarray(self.scorer.similarity([pair[0]], [pair[1]]))[0])
            out[i] = value
        return out

    def stats(self) -> dict[str, float]:
        return {"requested": float(self.requested), "scored": float(self.scored), "seconds": self.seconds}

    def __repr__(self) -> str:
        return f"SimilarityMemo(scorer={describe(self.scorer)})"
