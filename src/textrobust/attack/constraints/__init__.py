"""Constraints: what an edit must satisfy.

Two kinds, one protocol each (:mod:`textrobust.attack.problem`):

- **position constraints** (``allowed(original, current, positions) -> frozenset``) say
  which positions may change at all: :class:`StopWords`, :class:`RepeatModification`,
  :class:`MaxModificationRate`, :class:`FrozenColumns`, :class:`FirstWords`;
- **candidate constraints** (``check(original, proposals) -> bool array``) accept or
  reject a batch of one-word edits: :class:`PartOfSpeech`, :class:`WordEmbeddingDistance`,
  :class:`LMLogProbDrop`, :class:`SentenceSimilarity`, :class:`BERTScoreConstraint`. Each
  compares a proposal with the original or its parent (``compare_to``), batches its model
  calls and caches what it computes. Put cheap ones first in a Problem.

``CONSTRAINTS`` maps names to the classes; every constructor takes its collaborator (a
spaCy pipeline, vectors, a language model, a scorer) as the optional first argument and
loads the project's default asset on first use when it is None.

>>> from textrobust.attack.constraints import CONSTRAINTS
>>> CONSTRAINTS.get("max_modification_rate")(rate=0.1)
MaxModificationRate(rate=0.1, min_words=1)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from textrobust.attack.constraints.bertscore import BERTScoreConstraint, BERTScoreConstraintConfig
from textrobust.attack.constraints.context import CompareTo
from textrobust.attack.constraints.embedding_distance import WordEmbeddingDistance, WordEmbeddingDistanceConfig
from textrobust.attack.constraints.first_words import FirstWords, FirstWordsConfig
from textrobust.attack.constraints.frozen_columns import FrozenColumns, FrozenColumnsConfig
from textrobust.attack.constraints.lm_log_prob import LMLogProbDrop, LMLogProbDropConfig
from textrobust.attack.constraints.modification_rate import MaxModificationRate, MaxModificationRateConfig
from textrobust.attack.constraints.part_of_speech import PartOfSpeech, PartOfSpeechConfig, Tagset
from textrobust.attack.constraints.repeat import RepeatModification, RepeatModificationConfig
from textrobust.attack.constraints.sentence_similarity import SentenceSimilarity, SentenceSimilarityConfig
from textrobust.attack.constraints.stop_words import StopWords, StopWordsConfig
from textrobust.attack.problem import Constraint, PositionConstraint
from textrobust.errors import ConfigError
from textrobust.registry import Registry

__all__ = [
    "CONSTRAINTS",
    "BERTScoreConstraint",
    "BERTScoreConstraintConfig",
    "CompareTo",
    "FirstWords",
    "FirstWordsConfig",
    "FrozenColumns",
    "FrozenColumnsConfig",
    "LMLogProbDrop",
    "LMLogProbDropConfig",
    "MaxModificationRate",
    "MaxModificationRateConfig",
    "PartOfSpeech",
    "PartOfSpeechConfig",
    "RepeatModification",
    "RepeatModificationConfig",
    "SentenceSimilarity",
    "SentenceSimilarityConfig",
    "StopWords",
    "StopWordsConfig",
    "Tagset",
    "WordEmbeddingDistance",
    "WordEmbeddingDistanceConfig",
    "split_constraints",
]

CONSTRAINTS: Registry[Any] = Registry("constraint")
CONSTRAINTS.add("stop_words", StopWords, "position: no edit of a stop word")
CONSTRAINTS.add("repeat_modification", RepeatModification, "position: no edit of a word already changed")
CONSTRAINTS.add("max_modification_rate", MaxModificationRate, "position: at most ceil(rate * words) words changed")
CONSTRAINTS.add("frozen_columns", FrozenColumns, "position: no edit of frozen positions or columns")
CONSTRAINTS.add("first_words", FirstWords, "position: no edit past the first limit words (MSR's max length)")
CONSTRAINTS.add("part_of_speech", PartOfSpeech, "candidate: same spaCy part of speech in context")
CONSTRAINTS.add("word_embedding_distance", WordEmbeddingDistance, "candidate: word vectors within min_cos / max_l2")
CONSTRAINTS.add("lm_log_prob_drop", LMLogProbDrop, "candidate: causal-LM log-probability drops by at most max_drop")
CONSTRAINTS.add("sentence_similarity", SentenceSimilarity, "candidate: sentence similarity (MiniLM or any scorer)")
CONSTRAINTS.add("bertscore", BERTScoreConstraint, "candidate: BERTScore F1 at least min_f1")


def split_constraints(
    components: Iterable[object],
) -> tuple[tuple[PositionConstraint, ...], tuple[Constraint, ...]]:
    """Sort built constraints into (position constraints, candidate constraints), keeping
    their order, as :class:`~textrobust.attack.problem.Problem` takes them."""
    positions: list[PositionConstraint] = []
    candidates: list[Constraint] = []
    for component in components:
        if isinstance(component, PositionConstraint):
            positions.append(component)
        elif isinstance(component, Constraint):
            candidates.append(component)
        else:
            raise ConfigError(
                f"Expected a constraint (with allowed(...) or check(...)). Got {type(component).__name__}."
            )
    return tuple(positions), tuple(candidates)
