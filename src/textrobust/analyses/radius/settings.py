"""The settings of the ``radius`` and ``pr`` analyses: one class each, whose fields are the
options of ``textrobust radius`` and ``textrobust pr`` (and the keys stored with a run),
taken as they are by the method code of :mod:`textrobust.analyses.radius.method`.

Yang, Huang, Ma, Cao, Zhang, Zhang and Li, "Quantifying Robustness to Adversarial Word
Substitutions" (../shared/papers/robustness-radius-pdp-prover-pr.txt).
"""

from __future__ import annotations

from pydantic import Field, ValidationInfo, field_validator

from textrobust.analyses.protocol import Settings
from textrobust.analyses.radius.pr import PRConfig
from textrobust.attack.candidates.choice import CANDIDATES_HELP, MIN_VALIDITY_HELP, CandidateChoice
from textrobust.attack.searches.exhaustive import Sensitivity

__all__ = ["METHODS", "PRMetricSettings", "RadiusBoundsSettings"]

#: The attack methods of Table 2, by name.
METHODS: tuple[str, ...] = ("pdp", "greedy", "pso")

_CANDIDATES = "S(X,p): " + CANDIDATES_HELP + "."
_SKIP_STOP_WORDS = "Stop words get no synonyms (as the engine's recipes)."


class RadiusBoundsSettings(Settings):
    """The radius analysis: ``S(X, p)`` (``eta``, ``min_cos``, ``skip_stop_words``,
    ``candidates``), the attacks (``tau``, ``methods``, PDP's ``top_k``/``lookahead``,
    PSO's ``pso_pop``/``pso_iters``), the prover (``prover``, ``max_radius``,
    ``time_limit``, ``order``) and the query-layer batches. The searches' seed is the
    run's (:class:`~textrobust.analyses.radius.method.RadiusAnalysis` takes it)."""

    n: int | None = Field(default=50, ge=0, description="Only the first n examples (each takes seconds; the "
                                                          "prover up to --time-limit).")
    eta: int = Field(default=5, ge=1, description="Synonyms kept per position (S(X,p) has eta + 1 words).")
    min_cos: float | None = Field(default=0.5, ge=-1.0, le=1.0,
                                  description="Cosine floor of a synonym (counter-fitted GloVe; --candidates paper "
                                              "only).")
    skip_stop_words: bool = Field(default=True, description=_SKIP_STOP_WORDS)
    candidates: CandidateChoice = Field(default="validated", description=_CANDIDATES)
    min_validity: float | None = Field(default=None, ge=0.0, le=1.0, description=MIN_VALIDITY_HELP)
    tau: float = Field(default=0.25, gt=0.0, le=1.0,
                       description="Maximum share of substituted words of an adversarial example.")
    methods: tuple[str, ...] = Field(default=METHODS,
                                     description="Comma-separated methods of: pdp, greedy, pso (PSO is the slowest; "
                                                 "the prover needs pdp).")
    top_k: int = Field(default=10, ge=1, description="PDP: texts kept per step (K).")
    lookahead: int = Field(default=4, ge=1, description="PDP: texts drawn for the look-ahead.")
    pso_pop: int = Field(default=60, ge=1, description="PSO particles.")
    pso_iters: int = Field(default=20, ge=1, description="PSO iterations.")
    prover: bool = Field(default=True, description="Certify radii with the exhaustive prover (lower bounds).")
    max_radius: int = Field(default=4, ge=1, le=64,
                            description="Largest radius r of Table 3 (each step costs about m * eta times more "
                                        "texts).")
    time_limit: float | None = Field(default=30.0, gt=0.0,
                                     description="Prover seconds per example, then 'unknown' (more: fewer unknowns, "
                                                 "up to n times as many seconds).")
    batch_size: int = Field(default=256, ge=1, le=1_000_000, description="Texts per query-layer call of the attacks.")
    prover_batch: int = Field(default=512, ge=1, le=1_000_000,
                              description="Texts per query-layer call of the prover.")
    order: Sensitivity = Field(default=Sensitivity.AUTO,
                               description="How the prover orders positions, most sensitive first: auto (gradient "
                                           "when the victim has one, else delete), gradient, delete or text (text "
                                           "order).")

    @field_validator("methods")
    @classmethod
    def _known_methods(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [m for m in value if m not in METHODS]
        if unknown or not value or len(set(value)) != len(value):
            raise ValueError(f"must name distinct methods among {', '.join(METHODS)}")
        return value

    @field_validator("prover")
    @classmethod
    def _prover_needs_pdp(cls, value: bool, info: ValidationInfo) -> bool:
        if value and "pdp" not in info.data.get("methods", METHODS):
            raise ValueError("starts from PDP's bound: keep pdp in --methods, or pass --no-prover")
        return value


class PRMetricSettings(Settings):
    """The PR metric: ``S(X, p)`` as for the radius, Hoeffding's guarantee (``epsilon``,
    ``delta``, ``samples``), the radius as a share of the length (``fraction``), what the
    summary reports (``threshold``), how the space is checked (``exact_limit``,
    ``batch_size``) and how many misclassified texts each example keeps for review
    (``keep``). The sampler's seed is the run's
    (:class:`~textrobust.analyses.radius.method.PRAnalysis` takes it)."""

    n: int | None = Field(default=50, ge=0, description="Only the first n examples.")
    eta: int = Field(default=5, ge=1, description="Synonyms kept per position.")
    min_cos: float | None = Field(default=0.5, ge=-1.0, le=1.0,
                                  description="Cosine floor of a synonym (--candidates paper only).")
    skip_stop_words: bool = Field(default=True, description=_SKIP_STOP_WORDS)
    candidates: CandidateChoice = Field(default="validated", description=_CANDIDATES)
    min_validity: float | None = Field(default=None, ge=0.0, le=1.0, description=MIN_VALIDITY_HELP)
    epsilon: float = Field(default=0.025, gt=0.0, lt=1.0,
                           description="Hoeffding: the error bound eps (smaller: N grows as 1/eps^2).")
    delta: float = Field(default=0.005, gt=0.0, lt=1.0, description="Hoeffding: the failure probability delta.")
    samples: int | None = Field(default=None, ge=1, le=100_000_000,
                                description="N per example (default: the smallest N that guarantees --epsilon, "
                                            "4,794 by default; fewer is faster and guarantees a larger eps, which "
                                            "is reported).")
    fraction: float = Field(default=0.25, gt=0.0, le=1.0, description="r as a share of the text length.")
    threshold: float = Field(default=0.9, ge=0.0, le=1.0,
                             description="Report the share of examples with PR above this.")
    exact_limit: int | None = Field(default=None, ge=0,
                                    description="Enumerate Omega_r exactly when it holds at most this many texts "
                                                "(default: N, the sample size).")
    batch_size: int = Field(default=1024, ge=1, le=1_000_000, description="Texts per query-layer call.")
    keep: int = Field(default=3, ge=0, le=100,
                      description="Misclassified texts kept per example, the first drawn, with their swaps and "
                                  "probabilities: the findings `textrobust review` shows (0: none).")

    def pr_config(self) -> PRConfig:
        """The configuration of PR's sampler (:func:`~textrobust.analyses.radius.pr.estimate_pr`):
        the fields of these settings it reads, under the same names."""
        return PRConfig(epsilon=self.epsilon, delta=self.delta, samples=self.samples, fraction=self.fraction,
                        exact_limit=self.exact_limit, batch_size=self.batch_size, keep=self.keep)
