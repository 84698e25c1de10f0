"""Settings of the attribution-robustness analysis."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from textrobust.analyses.protocol import Settings
from textrobust.attack.candidates.choice import CANDIDATES_HELP, MIN_VALIDITY_HELP, CandidateChoice
from textrobust.attribution import ATTRIBUTIONS, AttributionDistance
from textrobust.fill_in.registry import DEFAULT_FILL_IN

__all__ = ["AttributionSettings"]


class AttributionSettings(Settings):
    """Attribution robustness (Ivankay et al.): the first ``n`` examples; ``attribution``
    (``auto``: saliency when the victim has gradients, else occlusion; or one of
    saliency, integrated_gradients, attention, occlusion, kernel_shap); the attribution
    ``distance`` (pcc as in the paper, kendall, spearman, top_k with ``top_k``); the
    ``attacks`` (tea: masked-LM fill-in candidates; tef: synonyms);
    ``rhos`` (the rho_max sweep; the paper sweeps 0.01..0.4, but 0.01 changes no word of a
    20-word snippet, and TEA always changes at least one); ``per_word`` candidates per word (|C| = 15); ``candidates``: TEF's substitutes, the
    validated synonyms (default) or the paper's counter-fitted neighbours;
    ``content_candidates`` (drop stop-word candidates: a departure, see
    :class:`~textrobust.attack.candidates.content_words.ContentWords`); ``fill_in`` (a name
    in ``textrobust.fill_in.FILL_INS`` or a local masked-LM folder; default (and None)
    :data:`~textrobust.fill_in.DEFAULT_FILL_IN`, named in the stored settings so the report
    and a resumed run know which model proposed TEA's words); ``batch_masking`` (TEA); ``ig_steps`` (Integrated
    Gradients); which text distances to compute (``semantic``: MiniLM, ``perplexity``:
    Gemma, optional, ``grammar``: link-grammar); a query ``budget`` per attack run."""

    n: int | None = Field(default=20, ge=0, description="Only the first n examples (each runs every attack at "
                          "every rho).")
    attribution: str = Field(default="auto", description="auto (saliency with gradients, else occlusion), "
                             "saliency, integrated_gradients, attention, occlusion or kernel_shap.")
    distance: AttributionDistance = Field(default=AttributionDistance.PCC, description="Attribution distance: "
                                          "pcc (the paper), kendall, spearman, top_k.")
    top_k: int = Field(default=3, ge=1, description="k of the top_k distance.")
    attacks: tuple[Literal["tea", "tef"], ...] = Field(default=("tea", "tef"), description="Comma-separated "
                                                       "attacks of: tea (masked-LM fill-in candidates), tef "
                                                       "(counter-fitted neighbours).")
    rhos: tuple[float, ...] = Field(default=(0.05, 0.1, 0.2, 0.3, 0.4), description="The rho_max sweep, "
                                    "comma-separated (the paper: 0.01..0.4).")
    per_word: int = Field(default=15, ge=1, le=200, description="Candidates per word, |C| (the paper: 15).")
    candidates: CandidateChoice = Field(default="validated", description="TEF's substitutes: " + CANDIDATES_HELP
                                        + "; the paper's are the counter-fitted neighbours")
    min_validity: float | None = Field(default=None, ge=0.0, le=1.0, description="TEF: " + MIN_VALIDITY_HELP)
    content_candidates: bool = Field(default=True, description="Drop stop-word candidates (our fill-in "
                                     "over-proposes them; the paper keeps its MLM's top 15).")
    fill_in: str = Field(default=DEFAULT_FILL_IN, description="TEA's fill-in: minilm_gemma (default), "
                         "minilm_tuned (without Gemma), causal_rescore (slow) or a local masked-LM folder.")
    batch_masking: bool = Field(default=True, description="TEA: one fill-in call per batch of words.")
    ig_steps: int = Field(default=20, ge=1, le=1000, description="Integrated Gradients steps.")
    semantic: bool = Field(default=True, description="Semantic similarity of the attacked text (MiniLM).")
    perplexity: bool = Field(default=True, description="Relative perplexity (Gemma, the optional lm extra; "
                             "absent if not installed).")
    grammar: bool = Field(default=True, description="Grammar errors (link-grammar).")
    budget: int | None = Field(default=None, ge=1, description="Query budget per attack run.")

    @field_validator("attribution")
    @classmethod
    def _known_attribution(cls, value: str) -> str:
        if value != "auto" and value not in ATTRIBUTIONS:
            raise ValueError(f"must be 'auto' or one of {ATTRIBUTIONS.names()}")
        return value

    @field_validator("fill_in", mode="before")
    @classmethod
    def _default_fill_in(cls, value: object) -> object:
        return DEFAULT_FILL_IN if value is None else value

    @field_validator("attacks")
    @classmethod
    def _attacks(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value or len(set(value)) != len(value):
            raise ValueError("must name at least one attack, each once")
        return value

    @field_validator("rhos")
    @classmethod
    def _rhos(cls, value: tuple[float, ...]) -> tuple[float, ...]:
        if not value or any(not 0.0 < r <= 1.0 for r in value) or len(set(value)) != len(value):
            raise ValueError("must hold distinct ratios in (0, 1]")
        return tuple(sorted(value))
