"""The two attacks of an ACCS analysis and their threshold sweeps, with shared caches.

Morris, "Second-Order NLP Adversarial Examples", BlackboxNLP 2020
(../shared/papers/second-order-adversarial-examples-accs.txt, section 4 and Figure 3):

- **first order** (against a victim, at threshold epsilon): WordNet synonym swaps, LM
  log-probability drop <= 2.0, similarity >= epsilon against the original, no repeated
  edit, no stop word, premise frozen; greedy search in unknown-token word-importance
  order. The same parts as :func:`textrobust.attack.recipes.morris_2020`, built once
  here and reused for every threshold;
- **second order** (against the similarity model, no victim): WordNet antonym swaps, the
  same LM, stop-word, repeat and frozen-column constraints, beam search of width 2, goal
  :class:`~textrobust.attack.goals_constraint.FoolConstraint` (similarity >= epsilon and
  at least gamma = 3 words swapped).

Departures (each also noted where it is made): GPT-2 -> Gemma 3 270M, scored as TextAttack's
GPT-2 constraint (left context, the word only; :mod:`textrobust.attack.constraints.left_context_lm`); USE ->
the constraint models of :mod:`textrobust.analyses.accs.scorers`; antonyms are POS-aware and
inflected back (the released code takes antonyms of every lemma of every synset, any POS,
uninflected), and by default also reach adjective satellites through their head synsets.

**Sweeps.** Everything that does not depend on epsilon is built once in
:class:`AccsComponents` and shared by all thresholds: the candidate sources (their
WordNet forms and POS tags are cached), the LM constraint (its scores are cached by
context and word), one :class:`~textrobust.analyses.accs.scorers.SimilarityMemo` per
constraint model (every pair scored once) and one query layer per victim (every text
classified once). Only the threshold object changes between thresholds, so the exact
sweep returns what independent runs would, at a fraction of the cost (tested).

The **monotone shortcut** (:func:`textrobust.analyses.accs.curve.monotone_search`) runs
only a few thresholds per example and infers the rest. It is exact only when success is
monotone in epsilon, which the searches do not guarantee: the first-order greedy path
changes with the set of candidates that pass the threshold, and the second-order beam
ranks texts by a score that is 0 below epsilon.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from textrobust.analyses.accs.curve import monotone_search
from textrobust.analyses.accs.settings import AccsAnalysisSettings, LMMode, SweepMode
from textrobust.attack.goals_constraint import FoolConstraint, compared_string
from textrobust.attack.problem import Problem, Proposal
from textrobust.attack.results import Status
from textrobust.data.examples import Example
from textrobust.devices import Placement
from textrobust.text import Text

__all__ = [
    "AccsComponents",
    "PointResult",
    "sweep_thresholds",
]


@dataclass(frozen=True)
class PointResult:
    """One attack at one threshold.

    ``ran`` is False for a point the monotone shortcut inferred (then only ``success`` is
    meaningful). ``status``: succeeded | failed | skipped (victim already wrong) |
    inferred. ``perturbed`` is the text found (successes only); ``similarity`` its score
    against the original; ``swapped`` its changed words; ``queries`` the victim queries
    (first order); ``prediction`` the victim's label for it (first order);
    ``budget_exhausted``: the first-order attack ran out of its query budget.
    """

    epsilon: float
    success: bool
    ran: bool = True
    status: str = "failed"
    seconds: float = 0.0
    perturbed: str | None = None
    similarity: float | None = None
    swapped: int = 0
    queries: int = 0
    prediction: int | None = None
    budget_exhausted: bool = False


def sweep_thresholds(
    epsilons: Sequence[float], run_at: Callable[[float], PointResult], mode: SweepMode | str
) -> list[PointResult]:
    """``run_at`` at every threshold (``exact``), or at the few the monotone shortcut
    needs, the others filled in as inferred points (``monotone``)."""
    mode = SweepMode(mode)
    epsilons = list(epsilons)
    if mode is SweepMode.EXACT:
        return [run_at(e) for e in epsilons]
    done: dict[int, PointResult] = {}

    def succeeds(i: int) -> bool:
        if i not in done:
            done[i] = run_at(epsilons[i])
        return done[i].success

    k, _ = monotone_search(len(epsilons), succeeds)
    return [
        done[i] if i in done else PointResult(e, success=i < k, ran=False, status="inferred")
        for i, e in enumerate(epsilons)
    ]


class AccsComponents:
    """The parts both attacks share across thresholds, victims and constraint models.

    Build once per analysis from its settings (``settings``, the analysis's own; default the
    paper's); every collaborator may be injected (tests use dictionaries, fakes and
    closed-form victims): ``tagger`` (default spaCy, shared by both WordNet sources),
    ``synonyms`` / ``antonyms`` (candidate sources), ``stop_words`` (default the project's
    list), ``lm_constraint`` (default from ``settings.lm_mode`` and ``settings.max_drop``,
    over ``lm``, a :class:`textrobust.lm.CausalLM`, default Gemma 3 270M loaded on first use
    on ``placement``, the run's device and float type; None: the CPU in float32).
    """

    def __init__(
        self,
        settings: AccsAnalysisSettings | None = None,
        *,
        tagger: Any | None = None,
        synonyms: Any | None = None,
        antonyms: Any | None = None,
        stop_words: Any | None = None,
        lm_constraint: Any | None = None,
        lm: Any | None = None,
        placement: Placement | None = None,
    ) -> None:
        from textrobust.attack.candidates import (
            SpacyTagger,
            WordNetAntonyms,
            WordNetSynonyms,
        )
        from textrobust.attack.constraints import (
            FrozenColumns,
            RepeatModification,
            StopWords,
        )

        self.settings = settings if settings is not None else AccsAnalysisSettings()
        if tagger is None and (synonyms is None or antonyms is None):
            tagger = SpacyTagger()
        self.synonyms = synonyms if synonyms is not None else WordNetSynonyms(tagger=tagger)
        self.antonyms = (
            antonyms if antonyms is not None
            else WordNetAntonyms(tagger=tagger, indirect=self.settings.indirect_antonyms)
        )
        self.position_constraints = (RepeatModification(), StopWords(stop_words), FrozenColumns())
        self.placement = placement
        self.lm_constraint = lm_constraint if lm_constraint is not None else self._lm_constraint(lm)
        self.warm_seconds = 0.0
        self._warmed: set[tuple[str, ...]] = set()

    def _lm_constraint(self, lm: Any | None) -> Any | None:
        mode = self.settings.lm_mode
        drop = self.settings.max_drop
        if mode is LMMode.NONE:
            return None
        if mode is LMMode.WINDOW:
            from textrobust.attack.constraints import LMLogProbDrop

            return LMLogProbDrop(lm, max_drop=drop, window=5, compare_to="original", placement=self.placement)
        from textrobust.attack.constraints.left_context_lm import LeftContextWordDrop, PrefixWordScorer

        return LeftContextWordDrop(PrefixWordScorer(lm, placement=self.placement), max_drop=drop,
                                   compare_to="original")

    def __repr__(self) -> str:
        parts = ", ".join(f"{k}={v!r}" for k, v in self.describe().items())
        return f"AccsComponents(settings={self.settings!r}, {parts})"

    @property
    def candidate_constraints(self) -> tuple[Any, ...]:
        return () if self.lm_constraint is None else (self.lm_constraint,)

    def describe(self) -> dict[str, Any]:
        """The exact parts, for the run configuration and reports (the settings they were
        built from are the analysis's, described with it)."""
        return {
            "synonyms": repr(self.synonyms),
            "antonyms": repr(self.antonyms),
            "position_constraints": [repr(c) for c in self.position_constraints],
            "lm_constraint": repr(self.lm_constraint),
            "first_order_search": "GreedySearch(ranking='unk')",
            "second_order_search": f"BeamSearch(beam_width={self.settings.beam_width})",
        }

    # ---- shared, threshold-free work --------------------------------------------------------
    def allowed_positions(self, text: Text) -> frozenset[int]:
        allowed = frozenset(text.modifiable)
        for constraint in self.position_constraints:
            allowed = constraint.allowed(text, text, allowed)
        return allowed

    def warm(self, text: Text) -> float:
        """Score, in one batch, the LM constraint of every synonym and antonym swap of the
        original text (the first step of every attack, at every threshold). Later steps
        that reach other (context, word) pairs are scored on demand. Returns the seconds."""
        if self.lm_constraint is None or text.key in self._warmed:
            return 0.0
        began = time.perf_counter()
        positions = sorted(self.allowed_positions(text))
        proposals: list[Proposal] = []
        seen: set[tuple[int, str]] = set()
        for source in (self.synonyms, self.antonyms):
            found = source.candidates(text, positions) if positions else {}
            for p in positions:
                for s in found.get(p, ()):
                    if s.word != text.words[p] and (p, s.word) not in seen:
                        seen.add((p, s.word))
                        proposals.append(Proposal(text.replace(p, s.word), text, p, s.word))
        if proposals:
            self.lm_constraint.check(text, proposals)
        self._warmed.add(text.key)
        seconds = time.perf_counter() - began
        self.warm_seconds += seconds
        return seconds

    # ---- the attacks at one threshold -------------------------------------------------------
    def first_order_attack(self, layer: Any, scorer: Any, epsilon: float) -> Any:
        """The first-order :class:`~textrobust.attack.attack.Attack` at ``epsilon`` against
        ``layer`` (a QueryLayer), the similarity constraint over ``scorer``."""
        from textrobust.attack.attack import Attack
        from textrobust.attack.constraints import SentenceSimilarity
        from textrobust.attack.searches import GreedySearch

        similarity = SentenceSimilarity(scorer, min_similarity=epsilon, window=None, compare_to="original")
        return Attack(
            layer,
            source=self.synonyms,
            search=GreedySearch(ranking="unk"),
            position_constraints=self.position_constraints,
            constraints=(similarity, *self.candidate_constraints),
            budget=self.settings.budget,
            name="first-order",
        )

    def first_order_point(self, layer: Any, scorer: Any, example: Example, epsilon: float) -> PointResult:
        """Attack ``example`` at ``epsilon``; a success is an adversarial text whose
        similarity to the original is >= epsilon."""
        began = time.perf_counter()
        result = self.first_order_attack(layer, scorer, epsilon).attack(example)
        succeeded = result.status is Status.SUCCEEDED
        similarity = None
        if succeeded:
            original = example.text
            similarity = float(
                scorer.similarity([compared_string(original, original)], [compared_string(result.perturbed, original)])[0]
            )
        return PointResult(
            epsilon=float(epsilon),
            success=succeeded,
            status=result.status.value,
            seconds=time.perf_counter() - began,
            perturbed=str(result.perturbed) if succeeded else None,
            similarity=similarity,
            swapped=result.l0,
            queries=result.queries,
            prediction=result.perturbed_prediction,
            budget_exhausted=bool(result.budget_exhausted),
        )

    def second_order_point(self, scorer: Any, example: Example, epsilon: float) -> PointResult:
        """Attack the similarity model on ``example`` at ``epsilon`` (no victim)."""
        from textrobust.attack.searches import BeamSearch

        began = time.perf_counter()
        original = example.text
        goal = FoolConstraint(original, scorer, epsilon=epsilon, gamma=self.settings.gamma)
        problem = Problem(
            original=original,
            goal=goal,
            source=self.antonyms,
            position_constraints=self.position_constraints,
            constraints=self.candidate_constraints,
        )
        outcome = BeamSearch(beam_width=self.settings.beam_width).search(original, problem)
        similarity = float(goal.similarities([outcome.best])[0])
        return PointResult(
            epsilon=float(epsilon),
            success=bool(outcome.success),
            status=Status.SUCCEEDED.value if outcome.success else Status.FAILED.value,
            seconds=time.perf_counter() - began,
            perturbed=str(outcome.best) if outcome.success else None,
            similarity=similarity,
            swapped=original.l0(outcome.best),
        )

    # ---- sweeps --------------------------------------------------------------------------
    def sweep_first_order(self, layer: Any, scorer: Any, example: Example) -> list[PointResult]:
        """First-order points at every threshold (or the monotone shortcut's)."""
        return sweep_thresholds(
            self.settings.epsilons, lambda e: self.first_order_point(layer, scorer, example, e), self.settings.sweep
        )

    def sweep_second_order(self, scorer: Any, example: Example) -> list[PointResult]:
        """Second-order points at every threshold (or the monotone shortcut's)."""
        return sweep_thresholds(
            self.settings.epsilons, lambda e: self.second_order_point(scorer, example, e), self.settings.sweep
        )


def success_matrix(points_by_example: Sequence[Sequence[PointResult]]) -> np.ndarray:
    """``[examples, thresholds]`` booleans from per-example sweeps."""
    return np.array([[p.success for p in points] for points in points_by_example], dtype=bool).reshape(
        len(points_by_example), -1
    )
