"""The records and the summary of the maximal-safe-radius analysis (:mod:`.analysis`),
apart from it so that the report section (:mod:`.section`) reads them without importing
the analysis."""

from __future__ import annotations

import math
from dataclasses import dataclass

from textrobust.analyses.protocol import Record, Summary
from textrobust.text import Text

__all__ = ["NORMALISATION", "MsrRecord", "MsrSummary", "PositionRow", "SetBound", "SizeRow", "WordBound"]

#: What ``sizes`` and ``sizes_embedding`` of a summary are divided by (stored in summary.json).
NORMALISATION = ("sizes: bounds / d, Definition 1's diameter (the distance from the text to the farthest corner "
                 "of the normalised cube over I; 1.0 = safe against any substitution); sizes_embedding: bounds / "
                 "embedding_diameter (sqrt(D) in L2, 1 in L-infinity), the paper's Tables 2-6 (Table 4)")


@dataclass(frozen=True)
class WordBound:
    """One word: normalised bounds (``upper`` None: no successful substitution found;
    ``lower`` None: no lower bound for this victim), the closest substitute found."""

    position: int
    word: str
    lower: float | None
    upper: float | None
    substitute: str | None
    diameter: float
    lime: float | None = None


@dataclass(frozen=True)
class SetBound:
    """A set of positions: bounds normalised by Definition 1's ``diameter`` of the set
    (None for records stored before it was kept)."""

    positions: tuple[int, ...]
    lower: float | None
    upper: float | None
    diameter: float | None = None


@dataclass(frozen=True)
class MsrRecord(Record):
    """One text: status ``analysed``; ``lower_status`` is ``ok`` or why there is no lower
    bound; ``budget_exhausted``: MCTS ran out of queries."""

    text: Text
    label: int
    predicted: int
    lower_status: str
    lower_method: str
    space: str
    words: tuple[WordBound, ...]
    sets: tuple[SetBound, ...]
    successes: int
    closest: Text | None
    vertices: int
    lower_seconds: float
    upper_seconds: float
    lower_bounds: int
    spearman: float | None = None
    budget_exhausted: bool = False
    closest_prediction: int | None = None
    embedding_diameter: float | None = None  # sqrt(D) (L2) or 1 (L-inf): the paper's tables divide by it


@dataclass(frozen=True)
class SizeRow:
    """Tables 2-3 style, for one ``|I|``: mean normalised lower bound (and its std), mean
    upper bound (a set without success counts 1.0, as the paper's Table 3: the diameter),
    share of texts and of sets with a success, share of sets certified for any
    substitution, mean gap; normalised as the summary field holding the row says."""

    size: int
    sets: int
    mean_lower: float
    std_lower: float
    mean_upper: float
    mean_upper_found: float
    found_per_text: float
    found_per_set: float
    certified_any: float
    mean_gap: float


@dataclass(frozen=True)
class PositionRow:
    position: int
    mean_lower: float
    words: int


@dataclass(frozen=True)
class MsrSummary(Summary):
    texts: int
    with_lower: int
    lower_status: str
    lower_method: str
    norm: str
    sizes: tuple[SizeRow, ...]
    by_position: tuple[PositionRow, ...]
    lime_spearman: float
    lime_texts: int
    seconds_per_lower_bound: float
    seconds_per_text_upper: float
    queries: int
    contradictions: int  # an MCTS success closer than a certified radius: must be 0
    # the same rows divided by the embedding's diameter sqrt(D) (L2; 1 in L-inf), the
    # paper's convention (Table 4); ``sizes`` divides by Definition 1's farthest-corner d
    sizes_embedding: tuple[SizeRow, ...] = ()
    embedding_diameter: float = math.nan
    normalisation: str = NORMALISATION
