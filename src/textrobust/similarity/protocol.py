"""The interface every sentence-similarity scorer offers, and helpers they share."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from textrobust.errors import ConfigError

__all__ = ["SentenceScorer", "check_pairs", "describe", "unit_rows"]


@runtime_checkable
class SentenceScorer(Protocol):
    """Similarity of sentence pairs: ``similarity(a, b)[i]`` compares ``a[i]`` with ``b[i]``.

    Higher means more similar; an identical pair scores the scorer's maximum (1.0 for the
    scorers here). Implementations batch the work and cache by string.
    """

    def similarity(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray: ...


def check_pairs(owner: str, a: Sequence[str], b: Sequence[str]) -> tuple[list[str], list[str]]:
    """``a`` and ``b`` as lists of strings of the same length, or a ConfigError."""
    for name, value in (("a", a), ("b", b)):
        if isinstance(value, str):
            raise ConfigError(
                f"{owner}.similarity: the '{name}' parameter must be a sequence of strings, not one string."
            )
    a, b = [str(s) for s in a], [str(s) for s in b]
    if len(a) != len(b):
        raise ConfigError(
            f"{owner}.similarity compares pairs: 'a' and 'b' must have the same length. Got {len(a)} and {len(b)}."
        )
    return a, b


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm (zero rows stay zero), as float32."""
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)


def describe(obj: object, limit: int = 80) -> str:
    """A short description of a collaborator for a component's repr."""
    if obj is None:
        return "<default>"
    text = repr(obj)
    if len(text) <= limit and "\n" not in text and " object at 0x" not in text:
        return text
    return f"<{type(obj).__name__}>"
