"""The settings of the ``accs`` analysis: one class, whose fields are the options of
``textrobust accs`` (and the keys stored with a run), taken as they are by the attacks and
sweeps of :mod:`textrobust.analyses.accs.sweep`; and the two closed choices among them.

Morris, "Second-Order NLP Adversarial Examples", BlackboxNLP 2020
(../shared/papers/second-order-adversarial-examples-accs.txt).
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from textrobust.analyses.accs.curve import epsilon_grid
from textrobust.analyses.accs.scorers import parse_constraint_model
from textrobust.analyses.protocol import Settings
from textrobust.errors import ConfigError

__all__ = ["MAX_THRESHOLDS", "AccsAnalysisSettings", "LMMode", "SweepMode"]

#: The most thresholds a grid may have (each one is a full sweep of both attacks).
MAX_THRESHOLDS = 1000


class SweepMode(StrEnum):
    """``exact``: every threshold is run; ``monotone``: the shortcut (a few thresholds run,
    the rest inferred)."""

    EXACT = "exact"
    MONOTONE = "monotone"


class LMMode(StrEnum):
    """The LM constraint: ``left_word`` (TextAttack's GPT-2 style, the default),
    ``window`` (the project's 5-words-each-side window) or ``none`` (no LM constraint)."""

    LEFT_WORD = "left_word"
    WINDOW = "window"
    NONE = "none"


class AccsAnalysisSettings(Settings):
    """Settings of the ``accs`` analysis: the sentences (``n``), the constraint models, the
    threshold grid (``eps_start`` to ``eps_stop`` by ``eps_step``, :attr:`epsilons`; the
    paper's 0.75..1.00 by 0.01), the second-order attack (``gamma``, ``beam_width``), the
    LM constraint both attacks share (``max_drop``, ``lm_mode``), the antonyms, the sweep
    and the first-order attack's query ``budget``."""

    n: int | None = Field(default=20, ge=0, description=(
        "Only the first n sentences (the paper: 100 per data set; more gives tighter intervals). Measured "
        "with minilm on 2 cores shared with other jobs: n=2 in 2.5 min, n=20 in 11 min, model loading "
        "included (long sentences cost up to a minute each, mostly the LM constraint)."))
    constraint: tuple[str, ...] = Field(default=("minilm",), description=(
        "Constraint model: minilm (default), bertscore, word_mean, mpnet:<folder>, encoder:<folder>. Repeat "
        "for several (each adds the cost of its own sweeps: bertscore about as much as minilm)."))
    eps_start: float = Field(default=0.75, ge=0.0, le=1.0, description="Lowest threshold.")
    eps_stop: float = Field(default=1.0, ge=0.0, le=1.0, description="Highest threshold.")
    eps_step: float = Field(default=0.01, gt=0.0, le=1.0, description=(
        "Threshold step (paper: 0.01; 0.02 from 0.5 for short texts). Time grows with the number of "
        "thresholds; ACCS depends on how finely the grid resolves each model's scale: word_mean needs "
        "0.95..1.0 by 0.002."))
    gamma: int = Field(default=3, ge=1, description="Antonyms the second-order attack must swap (paper: 3).")
    beam_width: int = Field(default=2, ge=1,
                            description="Beam width of the second-order attack (paper: 2; wider finds more, slower).")
    max_drop: float = Field(default=2.0, ge=0.0,
                            description="Largest LM log-probability drop of a swap, in nats (paper: 2.0).")
    lm_mode: LMMode = Field(default=LMMode.LEFT_WORD, description=(
        "LM constraint: left_word (GPT-2 style, default), window (5 words each side, ~5x slower) or none."))
    indirect_antonyms: bool = Field(default=True,
                                    description="Also antonyms of adjective satellites through their head synsets.")
    sweep: SweepMode = Field(default=SweepMode.EXACT, description=(
        "exact (every threshold) or monotone (a few thresholds per sentence, the rest inferred: faster, not "
        "exact; the exact sweep reports how far it is)."))
    budget: int | None = Field(default=None, ge=1, description=(
        "Victim queries per first-order attack (default: unlimited, as the paper)."))

    @field_validator("constraint")
    @classmethod
    def _known(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value:
            raise PydanticCustomError("constraint_model", "must name at least one constraint model")
        for spec in value:
            try:
                parse_constraint_model(spec)
            except ConfigError as exc:
                raise PydanticCustomError("constraint_model", "names an unknown constraint model ({detail})",
                                          {"detail": str(exc)}) from None
        return tuple(dict.fromkeys(s.strip() for s in value))  # repeats run once (as before)

    @field_validator("eps_stop")
    @classmethod
    def _after_start(cls, value: float, info: ValidationInfo) -> float:
        start = info.data.get("eps_start")
        if start is not None and value < start:
            raise PydanticCustomError("threshold_order", "must be >= eps_start ({start})", {"start": start})
        return value

    @field_validator("eps_step")
    @classmethod
    def _few_enough(cls, value: float, info: ValidationInfo) -> float:
        start, stop = info.data.get("eps_start"), info.data.get("eps_stop")
        if start is not None and stop is not None and (stop - start) / value + 1 > MAX_THRESHOLDS:
            raise PydanticCustomError("threshold_count", "gives more than {most} thresholds from eps_start to "
                                      "eps_stop (each is a full sweep of both attacks)", {"most": MAX_THRESHOLDS})
        return value

    @property
    def epsilons(self) -> tuple[float, ...]:
        """The thresholds, ascending: ``eps_start, eps_start + eps_step, ..., eps_stop``
        (:func:`~textrobust.analyses.accs.curve.epsilon_grid`)."""
        return epsilon_grid(self.eps_start, self.eps_stop, self.eps_step)
