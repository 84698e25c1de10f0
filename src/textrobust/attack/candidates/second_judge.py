"""A second judge for the uncertain candidates only: the causal LM's fluency, where it pays.

The validated source's judge (:mod:`textrobust.attack.candidates.judge`) decides most
candidates clearly; near its threshold it is unsure, and there Gemma's change of the
sentence's log-probability (substituted minus original, :mod:`textrobust.lm.causal`, the
fluency check of issue 28 and of Alzantot et al. 2018's language-model filter) is the
strongest evidence measured (``benchmarks/results/validity.md``, the table of routes).
Scoring every candidate with Gemma costs 1.6 s per sentence; scoring only the uncertain
ones keeps most of the gain at a fraction of the cost. This is a cascade in the sense of
Viola and Jones (2001): a cheap first stage decides what it can, a costly second stage
only the rest.

:class:`SecondJudge` is gradient-boosted trees over the first judge's :data:`FEATURES`
plus ``lm_delta`` (:data:`SECOND_FEATURES`), trained offline on the labelled set's dev half
(``benchmarks/validity/tune_judge.py --two-stage --second-out``) and applied with numpy only.
Its ``band`` ``[lo, hi)`` and ``threshold`` are chosen on dev: a first-judge probability at
or above ``hi`` keeps the candidate, below ``lo`` rejects it, inside the band the second
judge's probability must reach ``threshold``. :func:`staged_keep` applies it: the LM is
asked for (and, through ``lm_factory``, loaded) only when some candidate falls in the band,
with one batch per call (each original sentence scored once).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from textrobust.attack.candidates.judge import (
    FEATURES,
    NODE_COLUMNS,
    Tree,
    check_trees,
    read_model_file,
    sklearn_trees,
    tree_probability,
)
from textrobust.errors import ConfigError

__all__ = ["SECOND_FEATURES", "SecondJudge", "SentenceScorer", "StagedResult", "default_second_judge_path",
           "staged_keep"]

#: The second judge's inputs, in order: the first judge's, then Gemma's log-probability change.
SECOND_FEATURES = (*FEATURES, "lm_delta")


def default_second_judge_path() -> Path:
    return Path(str(resources.files("textrobust").joinpath("resources", "substitutions", "second_judge.json")))


class SentenceScorer(Protocol):
    """What the second stage asks of a causal LM (:class:`textrobust.lm.causal.CausalLM`)."""

    def sentence_log_prob(self, texts: Sequence[str]) -> Sequence[float]: ...


@dataclass(frozen=True)
class SecondJudge:
    """Boosted trees over :data:`SECOND_FEATURES` with the band and threshold they were
    chosen for; ``record`` says how it was trained and measured."""

    trees: tuple[Tree, ...]
    baseline: float
    band: tuple[float, float]
    threshold: float
    record: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_trees(self.trees, self.baseline, len(SECOND_FEATURES), "second judge")
        lo, hi = self.band
        if not (0.0 <= lo < hi <= 1.0 and 0.0 <= self.threshold <= 1.0):
            raise ConfigError(f"The second judge's band [{lo}, {hi}) must lie in [0, 1] with lo < hi, and its "
                              f"threshold ({self.threshold}) in [0, 1]; retrain it with tune_judge.py --two-stage.")

    def probability(self, rows: Sequence[Sequence[float]] | np.ndarray) -> np.ndarray:
        """P(valid) for each row of :data:`SECOND_FEATURES`."""
        return tree_probability(self.trees, self.baseline,
                                np.asarray(rows, dtype=float).reshape(-1, len(SECOND_FEATURES)))

    @property
    def version(self) -> str:
        """A hash of the trees, band and threshold (part of the verdict cache's key)."""
        blob = json.dumps([self.trees, self.baseline, self.band, self.threshold], default=float)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]

    def to_dict(self) -> dict[str, Any]:
        return {"format": "textrobust-second-judge", "model": "boosted", "features": list(SECOND_FEATURES),
                "node_columns": list(NODE_COLUMNS), "baseline": self.baseline, "band": list(self.band),
                "threshold": self.threshold, "trees": [[list(node) for node in tree] for tree in self.trees],
                "record": dict(self.record)}

    @classmethod
    def from_sklearn(cls, model: Any, band: tuple[float, float], threshold: float,
                     record: Mapping[str, Any]) -> SecondJudge:
        """From a fitted binary ``HistGradientBoostingClassifier`` over :data:`SECOND_FEATURES`."""
        trees, baseline = sklearn_trees(model)
        return cls(trees, baseline, (float(band[0]), float(band[1])), float(threshold), dict(record))

    @classmethod
    def load(cls, path: str | Path) -> SecondJudge:
        path = Path(path)
        data = read_model_file(path, "textrobust-second-judge", SECOND_FEATURES, "second judge",
                               "Train one with benchmarks/validity/tune_judge.py --two-stage --second-out.")
        try:
            trees = tuple(tuple((int(f), float(t), int(a), int(b), float(v)) for f, t, a, b, v in tree)
                          for tree in data["trees"])
            lo, hi = (float(v) for v in data["band"])
            baseline, threshold = float(data["baseline"]), float(data["threshold"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"{path} holds a malformed second judge ({exc}).") from None
        if not all(math.isfinite(v) for v in (lo, hi, baseline, threshold)):
            raise ConfigError(f"{path} holds a number that is not finite.")
        return cls(trees, baseline, (lo, hi), threshold, dict(data.get("record", {})))


@dataclass(frozen=True)
class StagedResult:
    """What :func:`staged_keep` decided: per candidate, kept or not, and the probability
    that decided it (the second judge's inside the band, else the first's); how many
    candidates the LM scored and how many sentences it was given."""

    keep: tuple[bool, ...]
    probability: tuple[float, ...]
    asked: int
    lm_sentences: int


def staged_keep(
    judge: SecondJudge,
    first: Sequence[float],
    rows: Sequence[Sequence[float]],
    texts: Sequence[tuple[str, str]],
    lm_factory: Callable[[], SentenceScorer],
) -> StagedResult:
    """Decide each candidate: ``first`` (the first judge's probabilities), ``rows`` (their
    :data:`FEATURES`) and ``texts`` (per candidate, the original and the substituted
    sentence) align. Only candidates whose first probability lies in ``judge.band`` are
    scored by the LM, all in one batch; ``lm_factory`` is called only then."""
    if not len(first) == len(rows) == len(texts):
        raise ConfigError(f"staged_keep needs one row and one sentence pair per probability; got {len(first)} "
                          f"probabilities, {len(rows)} rows, {len(texts)} pairs.")
    lo, hi = judge.band
    p = [float(v) for v in first]
    keep = [v >= hi for v in p]
    inside = [k for k, v in enumerate(p) if lo <= v < hi]
    if not inside:
        return StagedResult(tuple(keep), tuple(p), 0, 0)
    originals = list(dict.fromkeys(texts[k][0] for k in inside))
    batch = [*originals, *(texts[k][1] for k in inside)]
    scored = [float(v) for v in lm_factory().sentence_log_prob(batch)]
    if len(scored) != len(batch):
        raise ConfigError(f"The LM scored {len(scored)} of {len(batch)} sentences.")
    before = dict(zip(originals, scored))
    second_rows = [[*rows[k], after - before[texts[k][0]]] for k, after in zip(inside, scored[len(originals):])]
    second = judge.probability(second_rows)
    for k, q in zip(inside, second):
        p[k] = float(q)
        keep[k] = bool(q >= judge.threshold)
    return StagedResult(tuple(keep), tuple(p), len(inside), len(batch))
