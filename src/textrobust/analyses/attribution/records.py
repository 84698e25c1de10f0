"""Typed records and summary of the attribution-robustness analysis."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textrobust.analyses.protocol import Record, Summary
from textrobust.text import Text

__all__ = ["AttackRun", "AttributionRecord", "AttributionSummary", "AucRow", "CurvePoint"]


@dataclass(frozen=True)
class AttackRun:
    """One attack (tea/tef) at one rho_max on one example.

    ``rho`` is the true share of words changed; ``pcc`` the raw Pearson correlation of the
    two maps (NaN when undefined); ``attribution_distance`` the chosen distance; text
    scores are None when their scorer is absent; ``k_*`` are Eq. 2's ratios (None when
    undefined, never computed when the prediction changed)."""

    attack: str
    rho_max: float
    perturbed: Text
    changed: int
    rho: float
    prediction_kept: bool
    pcc: float
    attribution_distance: float
    attribution: tuple[float, ...]
    similarity: float | None
    semantic_distance: float | None
    perplexity: float | None
    relative_perplexity: float | None
    grammar_errors: float | None
    grammar_increase: float | None
    k_semantic: float | None
    k_perplexity: float | None
    queries: int
    seconds: float
    attribution_seconds: float
    budget_exhausted: bool


@dataclass(frozen=True)
class AttributionRecord(Record):
    """One example: its predicted label (the attributed class, Algorithm 1's ``l``), the
    original attribution map, and every attack run."""

    label: int
    prediction: int
    method: str  # the attribution method used (``auto`` resolved)
    original: Text
    original_attribution: tuple[float, ...]
    original_perplexity: float | None
    original_grammar_errors: float | None
    runs: tuple[AttackRun, ...]
    budget_exhausted: bool = False
    #: the probability that TEF's text at the largest rho_max keeps the meaning (issue 47;
    #: None: no TEF run, no word changed, or no judge)
    tef_validity: dict[str, Any] | None = None


@dataclass(frozen=True)
class CurvePoint:
    """Figure 2 of the paper at one (attack, rho_max): means and standard deviations over
    the examples (``k_*_n``: how many examples have k defined; ``k_perplexity_undefined``:
    how many kept, changed texts have no k_PP because their perplexity did not rise,
    relative perplexity <= 0: see :mod:`~textrobust.analyses.attribution.robustness`)."""

    attack: str
    rho_max: float
    runs: int
    rho: float
    pcc_mean: float
    pcc_std: float
    similarity_mean: float
    similarity_std: float
    relative_perplexity_mean: float
    relative_perplexity_std: float
    grammar_increase_mean: float
    grammar_increase_std: float
    k_semantic_mean: float
    k_semantic_std: float
    k_semantic_n: int
    k_perplexity_mean: float
    k_perplexity_std: float
    k_perplexity_n: int
    seconds_mean: float
    attribution_share: float
    k_perplexity_undefined: int = 0


@dataclass(frozen=True)
class AucRow:
    """AUC_k over the rho sweep, per attack and text distance."""

    attack: str
    auc_k_semantic: float
    auc_k_perplexity: float


@dataclass(frozen=True)
class AttributionSummary(Summary):
    """Curves (Figure 2), AUC_k and TEA's relative increase over TEF (Figure 3)."""

    attribution: str
    distance: str
    points: tuple[CurvePoint, ...]
    aucs: tuple[AucRow, ...]
    relative_increase_semantic: float
    relative_increase_perplexity: float
    prediction_changed: int
    seconds_per_example: float
    moved_share: float  # examples whose explanation the first attack moved to PCC < 0.5 (largest rho)
    #: TEF's explanations moved (largest rho_max, prediction kept, PCC < 0.5), each weighted by
    #: the probability that its substitutions keep the meaning, over the examples TEF ran on
    expected_valid_success_rate: float = float("nan")
    expected_valid_success_rate_low: float = float("nan")
    expected_valid_success_rate_high: float = float("nan")
