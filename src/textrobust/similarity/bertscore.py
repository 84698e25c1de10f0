"""BERTScore F1 (Zhang et al. 2020) from a local encoder folder (default: MiniLM)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from textrobust.devices import Placement
from textrobust.errors import ConfigError, MissingDependencyError
from textrobust.similarity.cache import LRUCache
from textrobust.similarity.protocol import check_pairs

__all__ = ["BERTScore"]


class BERTScore:
    """BERTScore F1 of each pair, with the ``bert-score`` package (0.3.13).

    ``model_path`` is a local Hugging Face encoder folder (None: the MiniLM folder from the
    asset catalogue); ``num_layers`` picks the hidden layer whose token embeddings are
    matched (it must be given for a local model; 4 for MiniLM-L6). No baseline rescaling:
    bert-score has baselines only for hub models, so scores are raw cosines, high for any
    English pair (MiniLM layer 4: near-paraphrase ~0.93, unrelated ~0.3). Scores are cached
    by pair; identical strings score 1.0 without running the model. ``placement``: the
    encoder's device and float type (the run's ``--device`` and ``--dtype``; None: the CPU
    in float32, never bert-score's own choice of any GPU it sees).
    """

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        num_layers: int = 4,
        batch_size: int = 64,
        idf: bool = False,
        cache_size: int | None = 100_000,
        placement: Placement | None = None,
    ) -> None:
        if num_layers < 1:
            raise ConfigError(f"The 'num_layers' parameter of BERTScore must be >= 1. Got {num_layers} instead.")
        if batch_size < 1:
            raise ConfigError(f"The 'batch_size' parameter of BERTScore must be >= 1. Got {batch_size} instead.")
        self.model_path = None if model_path is None else str(model_path)
        self.num_layers = num_layers
        self.batch_size = batch_size
        self.idf = idf
        self.placement = placement or Placement()
        self._scorer: Any = None
        self._cache: LRUCache[tuple[str, str], float] = LRUCache(cache_size)

    @property
    def scorer(self) -> Any:
        """The underlying ``bert_score.BERTScorer``, built on first use."""
        if self._scorer is None:
            from textrobust.assets import resolve
            from textrobust.assets.offline import hf_offline

            hf_offline()
            try:
                from bert_score import BERTScorer
            except ImportError:
                raise MissingDependencyError(
                    "bert-score", "The BERTScore similarity", "pip install bert-score==0.3.13"
                ) from None
            path = str(resolve("minilm", self.model_path))
            self._scorer = BERTScorer(
                model_type=path, num_layers=self.num_layers, batch_size=self.batch_size, idf=self.idf, lang="en",
                device=self.placement.device,
            )
            if self.placement.reduced:
                self._scorer._model.to(self.placement.torch_dtype())
        return self._scorer

    def similarity(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        """F1 of each pair (``a`` as references, ``b`` as candidates; F1 is symmetric)."""
        a, b = check_pairs("BERTScore", a, b)
        pairs = list(zip(a, b))
        todo = [p for p in self._cache.missing(pairs) if p[0] != p[1]]
        if todo:
            _, _, f1 = self.scorer.score([c for _, c in todo], [r for r, _ in todo], verbose=False)
            for pair, value in zip(todo, f1.tolist()):
                self._cache.put(pair, float(value))
        out = np.empty(len(pairs), dtype=np.float64)
        for i, pair in enumerate(pairs):
            value = 1.0 if pair[0] == pair[1] else self._cache.get(pair)
            if value is None:  # evicted by a cache smaller than this batch
                value = float(self.scorer.score([pair[1]], [pair[0]], verbose=False)[2][0])
            out[i] = value
        return out

    def __repr__(self) -> str:
        path = "<MiniLM>" if self.model_path is None else repr(self.model_path)
        return f"BERTScore(model_path={path}, num_layers={self.num_layers}, idf={self.idf})"
