"""Each finding's probability of keeping the meaning, from its substitutions (issue 47, item 1).

A finding (an adversarial example, a falsifying example of the radius, a PR sample, ...)
changes a few words of a sentence. For each changed word the validated source's judge gives
a raw score in context (:meth:`~textrobust.attack.candidates.validated.ValidatedSynonyms.
evidence_many`); the source's :attr:`~textrobust.attack.candidates.validated.
ValidatedSynonyms.calibration` maps the raw score to the probability that the substitution
keeps the meaning, and gives the same map refitted on bootstrap resamples of its calibration
data (the calibration's own uncertainty, one row per refit).

This module is the one seam between the judge and every figure built on it:

- :func:`raw_score`: an evidence's raw score: the judge's output, or 0 when the substitution
  fails one of the source's hard checks (guards, part of speech, antonym, polarity, synonymy,
  frequency, part of speech in context). The calibration is fitted on the same raw scores of
  the labelled set's dev half (``benchmarks/validity/calibrate.py``), so a substitution the
  checks rule out gets the share of such substitutions people judged valid, not 0;
- :func:`swap_probabilities`: per ``(position, substitute)`` of a sentence, the point
  probability and the ``(B, n)`` draws;
- :func:`independent`: how a finding's swaps combine when nothing better is known: the
  product (each swap keeps the meaning independently of the others), per draw;
- :func:`combination_of`: the combination a source's findings use: the shipped people
  source carries one measured on readings of whole attack findings
  (:class:`~textrobust.validity.combination.MeasuredCombination`: a monotone map of the
  product, fitted on the third labelled set); other judges combine independently;
- :func:`finding_validity`: the stored form of one finding's probability (a JSON-ready
  :class:`FindingValidity`): the point, the per-draw values and each swap's figures.

Findings of a source without a judge (``--candidates paper``) are judged after the fact by
the validated source (:func:`validity_judge`), where it can load; where it cannot, findings
carry no probability and the figures built on them say n/a.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from textrobust.text import Text

__all__ = ["Combine", "FindingValidity", "Judged", "SwapProbabilities", "combination_name", "combination_of",
           "finding_validity", "independent",
           "judge_finding", "judge_threshold", "labelled_settings", "raw_score", "swap_probabilities", "validity_judge"]

#: Draws kept per finding in a record: the calibration's bootstrap refits, at most this many
#: (the first ones; every finding of a run keeps the same refits, so draw b is one refit).
MAX_DRAWS = 200

#: How swaps combine into a finding: ``(..., k)`` swap probabilities -> ``(...)``.
Combine = Callable[[np.ndarray], np.ndarray]


def independent(probabilities: np.ndarray) -> np.ndarray:
    """A finding is valid when each of its swaps is, each independently: the product over
    the last axis (1 for a finding with no swap)."""
    return np.prod(np.asarray(probabilities, dtype=float), axis=-1)


class Judged(Protocol):
    """What :func:`swap_probabilities` asks of a source: evidence in batch, and a calibration
    (``probability(raw)``, ``draws(raw)`` as :class:`~textrobust.validity.calibration.Calibration`)."""

    @property
    def calibration(self) -> Any: ...

    def evidence_many(self, text: Text, pairs: Sequence[tuple[int, str]]) -> list[Any]: ...


def raw_score(evidence: Any) -> float:
    """The judge's raw score of one evidence; 0 when a hard check failed (its ``reason`` is
    neither empty nor the judge's or the causal LM's own) or the judge did not run."""
    reason = str(getattr(evidence, "reason", "") or "")
    if reason and reason not in ("judge", "judge unchecked", "fluency", "fluency unchecked"):
        return 0.0
    judge = getattr(evidence, "judge", None)
    return 0.0 if judge is None else float(judge)


@dataclass(frozen=True)
class SwapProbabilities:
    """Per swap: ``raw`` judge score, calibrated ``point`` probability, ``draws`` (B, n)."""

    raw: np.ndarray
    point: np.ndarray
    draws: np.ndarray


def swap_probabilities(source: Judged, text: Text, pairs: Sequence[tuple[int, str]]) -> SwapProbabilities:
    """The calibrated probability that each ``(position, substitute)`` of ``text`` keeps the
    meaning (one batch of evidence), with the calibration's bootstrap draws."""
    calibration = source.calibration
    evidence = source.evidence_many(text, list(pairs)) if pairs else []
    raw = np.asarray([raw_score(e) for e in evidence], dtype=float)
    point = np.clip(np.asarray(calibration.probability(raw), dtype=float), 0.0, 1.0)
    draws = np.clip(np.asarray(calibration.draws(raw), dtype=float), 0.0, 1.0)
    return SwapProbabilities(raw, point, draws.reshape(-1, len(pairs)))


@dataclass(frozen=True)
class FindingValidity:
    """One finding's probability of keeping the meaning: ``probability`` (the point), one
    value per calibration draw, and per swap its position, words, raw score and probability."""

    probability: float
    draws: tuple[float, ...]
    swaps: tuple[Mapping[str, Any], ...] = field(default=())
    combined: str = "independent"  # how the swaps were combined (records before: independent)

    def to_dict(self) -> dict[str, Any]:
        return {"probability": self.probability, "draws": list(self.draws), "swaps": [dict(s) for s in self.swaps],
                "combined": self.combined}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FindingValidity:
        return cls(float(data["probability"]), tuple(float(v) for v in data.get("draws") or ()),
                   tuple(dict(s) for s in data.get("swaps") or ()), str(data.get("combined") or "independent"))


def combination_of(source: Any) -> Combine:
    """How ``source``'s findings combine their swaps: the combination measured for its judge
    (its ``combination``, a :class:`~textrobust.validity.combination.MeasuredCombination`)
    where it has one, else :func:`independent`."""
    measured = getattr(source, "combination", None)
    return measured if callable(measured) else independent


def combination_name(combine: Combine) -> str:
    """``independent`` or the measured combination's name, as records and pages say it."""
    return str(getattr(combine, "name", "independent" if combine is independent else "custom"))


def finding_validity(source: Judged, original: Text, changed: Text, *,
                     combine: Combine | None = None) -> FindingValidity:
    """The probability that ``changed`` keeps the meaning of ``original`` (same number of
    words; the swaps are the words that differ), combining its swaps with ``combine``
    (default: :func:`combination_of` the source). A combination with a ``per_draw`` method
    maps each calibration draw with its own refit."""
    combine = combination_of(source) if combine is None else combine
    positions = original.diff(changed)
    pairs = [(p, changed.words[p]) for p in positions]
    found = swap_probabilities(source, original, pairs)
    draws = found.draws[:MAX_DRAWS]
    point = float(np.asarray(combine(found.point)))
    per_draw_of = getattr(combine, "per_draw", None)
    if not draws.shape[0]:
        per_draw = np.asarray([point])
    elif callable(per_draw_of):
        per_draw = np.asarray(per_draw_of(draws), dtype=float).reshape(-1)
    else:
        per_draw = np.asarray(combine(draws), dtype=float).reshape(-1)
    swaps = tuple({"position": p, "word": original.words[p], "substitute": s, "raw": round(float(r), 4),
                   "probability": round(float(q), 4)} for (p, s), r, q in zip(pairs, found.raw, found.point))
    return FindingValidity(round(point, 4), tuple(round(float(v), 4) for v in per_draw), swaps,
                           combined=combination_name(combine))


def validity_judge(source: Any = None, placement: Any = None) -> Judged | None:
    """The source that judges a run's findings: ``source`` itself when it has evidence and a
    calibration (the validated synonyms), else the process's shared validated source on
    ``placement`` (findings of the paper's sources are judged after the fact); None when
    that cannot load (a missing model package: the findings then carry no probability)."""
    if source is not None and hasattr(source, "evidence_many") and hasattr(source, "calibration"):
        return source
    from textrobust.attack.candidates.choice import shared_validated
    from textrobust.errors import TextRobustError

    try:
        judged = shared_validated(placement=placement)
        judged.calibration  # noqa: B018 - load it now: a missing calibration means no judge
    except (TextRobustError, ImportError, OSError):
        return None
    return judged


def judge_finding(judge: Judged | None, original: Text, changed: Text | None) -> dict[str, Any] | None:
    """:func:`finding_validity` as stored in a record, or None (no judge, no change, or a
    judge that failed to load its models: a finding without a probability)."""
    if judge is None or changed is None or len(original) != len(changed) or not original.diff(changed):
        return None
    from textrobust.errors import TextRobustError

    try:
        return finding_validity(judge, original, changed).to_dict()
    except (TextRobustError, ImportError, OSError):
        return None


def judge_threshold(calibration: Any, min_validity: float) -> float:
    """The smallest raw judge score whose calibrated probability is at least
    ``min_validity`` (the calibration is monotone): the validated source's ``min_judge`` that
    tries substitutions down to that probability."""
    from textrobust.errors import ConfigError

    grid = np.linspace(0.0, 1.0, 2001)
    ok = np.nonzero(np.asarray(calibration.probability(grid)) >= min_validity)[0]
    if not ok.size:
        top = float(np.max(calibration.probability(grid)))
        raise ConfigError(f"The 'min_validity' setting must be at most {top:.3f}, the judge's highest calibrated "
                          f"probability. Got {min_validity} instead.")
    return float(round(grid[ok[0]], 4))


def labelled_settings(min_validity: float | None) -> dict[str, Any]:
    """Issue 39's source's settings for ``min_validity`` (:class:`~textrobust.attack.candidates.
    validated.ValidatedSynonyms`, ``validated_labelled``): none for None, else the judge
    threshold (``min_judge``) whose calibrated probability is ``min_validity``."""
    if min_validity is None:
        return {}
    from textrobust.attack.candidates.validated import load_calibration

    return {"min_judge": judge_threshold(load_calibration(), min_validity)}
