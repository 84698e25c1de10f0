"""The maximal safe radius (``msr``): an MCTS upper bound and a certified lower bound per
word and per set of words, on the analysis protocol.

La Malfa, Wu, Laurenti, Wang, Hartshorn and Kwiatkowska (2020), "Assessing Robustness of
Text Classification through Maximal Safe Radius Computation"
(../shared/papers/maximal-safe-radius-mcts-lirpa.txt). For each text, the class kept is
the victim's *prediction* (the MSR is about the decision boundary, not the label):

- **upper bound** (Section 2.2): :class:`~textrobust.attack.searches.mcts.MCTSSearch` over
  word-position sets up to ``max_set_size``, candidates the ``neighbours`` closest words in L2
  of the victim's normalised embedding (:mod:`textrobust.attack.candidates.neighbours`), filtered by
  part of speech in context (spaCy, offline); a set's bound is the distance of the closest
  success that changed only words of the set, over the set's diameter;
- **lower bound** (Section 2.3): :class:`~textrobust.bounds.certify.Verifier` (CROWN for
  the zoo's CNN and bag of words, a forward-mode linear relaxation in POPQORN's setting
  for its LSTM, or IBP when asked), by bisection to a relative
  ``tolerance``, for every word (``|I| = 1``) and for ``multi_sets`` random sets of each
  size ``2..max_set_size`` (the paper, too, estimates multi-word bounds on random sets);
- the gap between them, the lower bound by word position (Figure 6), and LIME's word
  ranking against the bounds' (Section 3.3), by Spearman's rank correlation.

Victims that are not zoo word models get the upper bound only; their lower bound is
recorded as ``not supported for this architecture`` (a status, never a number).

Normalisation: every bound is reported twice. ``sizes`` divides by Definition 1's ``d``,
the distance from the text to the farthest corner of the normalised cube over ``I``
(``1.0`` = no substitution of those words changes the class); ``sizes_embedding`` divides
by the diameter of the embedding, ``sqrt(D)`` in L2 (1 in L-infinity), as the paper's
Tables 2-6 do (Table 4: "an embedding of dimension d will have a diameter equal to
sqrt(d)"). For one word ``d`` lies between ``sqrt(D) / 2`` and ``sqrt(D)``, so the
second figures are smaller by the factor ``sqrt(D) / d``; compare with the paper only in
its own convention.
Departures: Table 3's convention of counting a word without a successful substitution at
the diameter (normalised 1.0) is followed for the mean upper bound and said in the report;
the simulations per vertex default to 32 (the paper: 1000) and the neighbours to 100 (the
paper: 1000 or 10000) so that an audit runs in minutes on two cores.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from enum import Enum
from typing import Any

import numpy as np
from pydantic import Field

from textrobust.analyses.msr.records import MsrRecord, MsrSummary, PositionRow, SetBound, SizeRow, WordBound
from textrobust.analyses.protocol import Analysis, Failure, Settings, WorkerContext, counts
from textrobust.attack.candidates.choice import CANDIDATES_HELP, MIN_VALIDITY_HELP, CandidateChoice
from textrobust.attack.goals import UntargetedClassification
from textrobust.attack.problem import Problem
from textrobust.attack.searches.mcts import MCTSResult, MCTSSearch
from textrobust.data.examples import Example
from textrobust.sections import Section
from textrobust.text import Text
from textrobust.victims.protocol import Victim, embedding_victim, unwrap

__all__ = ["MsrAnalysis", "MsrRecord", "MsrSettings", "MsrSummary", "SetBound", "SizeRow", "WordBound"]

_PAPER = ("La Malfa, Wu, Laurenti, Wang, Hartshorn and Kwiatkowska 2020, \"Assessing Robustness of Text "
          "Classification through Maximal Safe Radius Computation\"")
UNSUPPORTED = "not supported for this architecture"


class MsrNorm(str, Enum):
    L2 = "l2"
    LINF = "linf"


class MsrMethod(str, Enum):
    CROWN = "crown"
    IBP = "ibp"


class MsrSettings(Settings):
    """``n``: the first n texts; ``max_set_size``: the largest ``|I|``; ``positions``: words
    considered per text (the paper's "max length considered"); ``norm``; ``method`` of the
    lower bound; ``tolerance``: relative width of the bisection's last bracket; ``multi_sets``:
    random sets per size >= 2; ``candidates``: MCTS's substitutes, the validated synonyms the
    victim's embedding knows (default) or the paper's ``neighbours`` nearest words per word; ``pos_filter``: part of
    speech in context; ``pos_window``: words each side tagged; ``simulations``,
    ``iterations``, ``exploration``: MCTS; ``budget``: MCTS queries per text; ``lime``:
    the LIME comparison (zoo victims), with ``lime_samples``."""

    n: int | None = Field(default=10, ge=0, description="Only the first n texts.")
    max_set_size: int = Field(default=3, ge=1, le=8, description="Largest number of words perturbed together "
                              "(|I|); the text-length limit is --max-words.")
    positions: int = Field(default=25, ge=1, description="Words considered per text (the first ones).")
    norm: MsrNorm = Field(default=MsrNorm.L2, description="Norm of the ball: l2 or linf.")
    method: MsrMethod = Field(default=MsrMethod.CROWN, description="Lower bound: crown (linear relaxation: "
                              "CROWN for the CNN and bag of words, forward-mode linear for the LSTM) or ibp.")
    tolerance: float = Field(default=1e-3, gt=0.0, lt=1.0, description="Bisection stops when the bracket is "
                             "this share of its upper end.")
    multi_sets: int = Field(default=5, ge=0, description="Random word sets per size 2..max-set-size.")
    neighbours: int = Field(default=100, ge=1, description="MCTS candidates with --candidates paper: the n "
                            "closest words in L2 (the paper: 1000).")
    pos_filter: bool = Field(default=True, description="Keep candidates with the same part of speech in "
                             "context.")
    pos_window: int = Field(default=3, ge=1, description="Words tagged each side of a substitution "
                            "(--pos-filter).")
    simulations: int = Field(default=32, ge=1, description="MCTS simulations per vertex (the paper: 1000).")
    iterations: int = Field(default=30, ge=1, description="MCTS expansions per text.")
    exploration: float = Field(default=0.5, ge=0.0, description="MCTS: the UCT exploration constant.")
    budget: int | None = Field(default=20_000, ge=1, description="MCTS queries per text.")
    lime: bool = Field(default=True, description="Compare the bounds' word ranking with LIME's (zoo victims).")
    lime_samples: int = Field(default=200, ge=10, description="LIME samples per text.")
    glove_vocab: int = Field(default=50_000, ge=100, description="Victims without a word embedding: the most "
                             "frequent GloVe words that form the space.")
    candidates: CandidateChoice = Field(default="validated", description="MCTS's substitutes: " + CANDIDATES_HELP
                                        + "; the paper's are the n nearest words in the victim's embedding")
    min_validity: float | None = Field(default=None, ge=0.0, le=1.0, description="MCTS: " + MIN_VALIDITY_HELP)


def zoo_model(victim: Victim) -> tuple[Any, str]:
    """The word model behind ``victim`` and ``"ok"`` when the victim declares its embedding
    layer and word ids (:func:`~textrobust.victims.protocol.embedding_victim`) and bound
    propagation supports the model; else None and the reason."""
    found = embedding_victim(victim)
    if found is None:
        return None, f"{UNSUPPORTED} ({type(unwrap(victim)).__name__} is not a zoo word model)"
    from textrobust.bounds.support import supported

    if not supported(found.module):
        return None, f"{UNSUPPORTED} ({type(found.module).__name__})"
    return found.module, "ok"


class MsrAnalysis(Analysis[MsrSettings, MsrRecord, MsrSummary]):
    """Maximal safe radius: MCTS upper bound, bound-propagation lower bound, per word."""

    name = "msr"
    title = "Maximal safe radius (MCTS upper, linear-relaxation/IBP lower bounds)"
    help_note = ("Radii are shown divided by d (Definition 1: the distance to the farthest corner of the normalised "
                 "embedding cube) and by sqrt(D) (the embedding's diameter, the paper's tables).")
    paper = _PAPER + ": Definition 1, MCTS (Section 2.2, Algorithm 1), CNN-Cert-style lower bounds (POPQORN-style " \
                     "linear relaxation for LSTMs, McCormick product planes) (Section 2.3), Tables 2-3, Figure 6, the LIME comparison (Section 3.3)."
    settings_type = MsrSettings
    record_type = MsrRecord

    def __init__(self, settings: Any = None, *, space: Any = None) -> None:
        """``space``: the :class:`~textrobust.attack.candidates.neighbours.EmbeddingSpace` for victims
        without a word embedding of their own (default: GloVe 50d, loaded on first use)."""
        super().__init__(settings)
        self.space = space

    def _search(self, seed: int, distance: Callable[[Text, Text], float] | None = None) -> MCTSSearch:
        s = self.settings
        return MCTSSearch(max_words=s.max_set_size, simulations=s.simulations, max_iterations=s.iterations,
                          exploration=s.exploration, seed=seed, distance=distance)

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "search": repr(self._search(0))}

    def worker(self, context: WorkerContext) -> Callable[[Any], MsrRecord]:
        from textrobust.attack.candidates.neighbours import EmbeddingSpace, L2Neighbours, SpaceSynonyms
        from textrobust.attack.constraints.first_words import FirstWords

        s = self.settings
        layer = context.layer
        white_box = embedding_victim(layer.victim)
        module, status = zoo_model(layer.victim)
        verifier = None
        if module is not None:
            from textrobust.bounds.certify import Verifier

            verifier = Verifier(module)
        if white_box is not None:
            space = EmbeddingSpace.of_victim(white_box)
        elif self.space is not None:
            space = self.space
        else:
            from textrobust.embeddings.vectors import WordVectors

            space = EmbeddingSpace.of_vectors(WordVectors.from_glove(s.glove_vocab), name="GloVe 50d (no victim embedding)")
        source: Any = L2Neighbours(space, s.neighbours)
        if s.candidates == "validated":
            from textrobust.attack.candidates.choice import validated_source

            source = SpaceSynonyms(space, validated_source(placement=context.placement,
                                                           user_labels=context.user_labels,
                                                           min_validity=s.min_validity))
        constraints: tuple[Any, ...] = ()
        if s.pos_filter:
            from textrobust.attack.constraints.part_of_speech import PartOfSpeech

            constraints = (PartOfSpeech(window=s.pos_window),)
        norm = s.norm.value
        embedding_diameter = space.embedding_diameter(norm)
        search = self._search(context.seed, lambda a, b: space.distance(a, b, norm))

        def analyse(example: Example) -> MsrRecord:
            began = time.perf_counter()
            text = example.text
            before = layer.queries
            predicted = int(np.asarray(layer.probabilities([text]))[0].argmax())
            positions = tuple(p for p in space.positions(text) if p < s.positions)
            with layer.budget(s.budget) as budget:
                problem = Problem(original=text, goal=UntargetedClassification(layer, predicted), source=source,
                                  position_constraints=(FirstWords(s.positions),), constraints=constraints,
                                  budget=budget)
                result = search.explore(text, problem)
            upper_seconds = time.perf_counter() - began
            rng = np.random.default_rng([context.seed & 0xFFFFFFFF, len(text), len(positions)])
            sets = _sets(positions, s.max_set_size, s.multi_sets, rng)
            lower: dict[tuple[int, ...], float] = {}
            t0 = time.perf_counter()
            ids: list[int] = []
            if verifier is not None and white_box is not None and positions:
                ids_t, mask, _ = white_box.encode([text])
                ids = ids_t[0][mask[0]].tolist()
                for chosen in [(p,) for p in positions] + sets:
                    bound = verifier.lower_radius(ids, chosen, norm=norm, method=s.method.value,
                                                  tolerance=s.tolerance, label=predicted)
                    lower[chosen] = bound.normalised
            lower_seconds = time.perf_counter() - t0
            lime = None
            if s.lime and verifier is not None and len(ids) >= 3:
                from textrobust.analyses.msr.lime import lime_weights

                lime = lime_weights(module, ids, predicted, samples=s.lime_samples, seed=context.seed)
            words = []
            for p in positions:
                d = space.diameter(text, (p,), norm)
                best = result.closest((p,))
                words.append(WordBound(p, text.words[p], lower.get((p,)),
                                       None if best is None or d <= 0 else best.distance / d,
                                       None if best is None else best.text.words[p], d,
                                       None if lime is None or p >= len(lime) else float(lime[p])))
            set_bounds = tuple(SetBound(chosen, lower.get(chosen), _set_upper(result, space, text, chosen, norm),
                                        space.diameter(text, chosen, norm))
                               for chosen in sets)
            spearman = None
            if lime is not None:
                from textrobust.analyses.msr.lime import rank_agreement

                pairs = [(w.lime, w.lower) for w in words if w.lime is not None and w.lower is not None]
                value = rank_agreement([a for a, _ in pairs], [b for _, b in pairs])
                spearman = None if math.isnan(value) else value
            closest = result.closest()
            after = None
            if closest is not None:
                # the success was scored already: the layer's cache answers without a new query
                after = int(np.asarray(layer.probabilities([closest.text]))[0].argmax())
            return MsrRecord(
                example.id, "analysed", layer.queries - before, time.perf_counter() - began, text, example.label,
                predicted, status, "" if verifier is None else verifier.method_used(s.method.value),
                space.name, tuple(words), set_bounds, len(result.successes),
                None if closest is None else closest.text, result.vertices, lower_seconds, upper_seconds,
                len(lower), spearman, result.outcome.budget_exhausted, after, embedding_diameter)

        return analyse

    def summarise(self, records: Sequence[MsrRecord], failures: Sequence[Failure]) -> MsrSummary:
        s = self.settings
        rs = records
        sizes, sizes_embedding = [], []
        for size in range(1, s.max_set_size + 1):
            rows: list[_Bounds] = []
            for r in rs:
                if size == 1:
                    rows += [(r.example_id, w.lower, w.upper, w.diameter, r.embedding_diameter) for w in r.words]
                else:
                    rows += [(r.example_id, b.lower, b.upper, b.diameter, r.embedding_diameter)
                             for b in r.sets if len(b.positions) == size]
            if rows:
                sizes.append(_size_row(size, rows))
                if all(d is not None and e for _, _, _, d, e in rows):
                    sizes_embedding.append(_size_row(size, rows, by_embedding=True))
        diameters = {r.embedding_diameter for r in rs if r.embedding_diameter}
        by_position: dict[int, list[float]] = {}
        for r in rs:
            for w in r.words:
                if w.lower is not None:
                    by_position.setdefault(w.position, []).append(w.lower)
        spearmans = [r.spearman for r in rs if r.spearman is not None]
        bounds = sum(r.lower_bounds for r in rs)
        statuses = sorted({r.lower_status for r in rs})
        methods = sorted({r.lower_method for r in rs if r.lower_method})
        return MsrSummary(
            **counts(records, failures), texts=len(rs), with_lower=sum(r.lower_status == "ok" for r in rs),
            lower_status="; ".join(statuses) or "n/a", lower_method=", ".join(methods) or "none",
            norm=s.norm.value, sizes=tuple(sizes),
            by_position=tuple(PositionRow(p, float(np.mean(v)), len(v)) for p, v in sorted(by_position.items())),
            lime_spearman=float(np.mean(spearmans)) if spearmans else math.nan, lime_texts=len(spearmans),
            seconds_per_lower_bound=sum(r.lower_seconds for r in rs) / bounds if bounds else math.nan,
            seconds_per_text_upper=float(np.mean([r.upper_seconds for r in rs])) if rs else math.nan,
            queries=sum(r.queries for r in rs), contradictions=sum(_contradictions(r) for r in rs),
            sizes_embedding=tuple(sizes_embedding),
            embedding_diameter=diameters.pop() if len(diameters) == 1 else math.nan)

    def section(self, summary: MsrSummary, records: Sequence[MsrRecord], failures: Sequence[Failure],
                label_names: Sequence[str]) -> Section:
        from textrobust.analyses.msr.section import msr_section

        from textrobust.analyses.sections import with_substitutes

        return with_substitutes(msr_section(summary, records, label_names), self.settings.candidates, PAPER_SOURCE)


#: MCTS's substitutes in the paper (``--candidates paper``).
PAPER_SOURCE = "the n nearest words in the victim's embedding (L2)"


def _contradictions(record: MsrRecord) -> int:
    """Sets whose MCTS upper bound lies below the certified lower bound (a soundness bug)."""
    pairs = [(w.lower, w.upper) for w in record.words] + [(b.lower, b.upper) for b in record.sets]
    return sum(1 for lo, up in pairs if lo is not None and up is not None and up < lo - 1e-9)


def _sets(positions: Sequence[int], max_words: int, per_size: int, rng: np.random.Generator) -> list[tuple[int, ...]]:
    """``per_size`` distinct random sets of each size ``2..max_set_size`` (all when fewer)."""
    out: list[tuple[int, ...]] = []
    for size in range(2, min(max_words, len(positions)) + 1):
        total = math.comb(len(positions), size)
        chosen: set[tuple[int, ...]] = set()
        while len(chosen) < min(per_size, total):
            chosen.add(tuple(sorted(int(p) for p in rng.choice(positions, size=size, replace=False))))
        out += sorted(chosen)
    return out


def _set_upper(result: MCTSResult, space: Any, text: Text, chosen: tuple[int, ...], norm: str) -> float | None:
    """The closest success that changed only words of ``chosen``, over its diameter."""
    inside = [x.distance for x in result.successes if set(x.positions) <= set(chosen)]
    d = space.diameter(text, chosen, norm)
    return min(inside) / d if inside and d > 0 else None


#: One bounded set: text id, lower and upper bound over Definition 1's ``d``, ``d``, and
#: the embedding's diameter (``sqrt(D)``).
_Bounds = tuple[str, float | None, float | None, float | None, float | None]


def _size_row(size: int, rows: Sequence[_Bounds], *, by_embedding: bool = False) -> SizeRow:
    """One row over ``rows``: divided by Definition 1's ``d`` (as stored), or with
    ``by_embedding`` by the embedding's diameter (the bound times ``d / sqrt(D)``). Either
    way a set without success counts 1.0 (the diameter, the paper's Table 3), no upper
    bound counts above it, and "certified for any substitution" means a lower bound that
    reached ``d``. With ``by_embedding`` every row must carry both diameters."""
    def factor(d: float | None, e: float | None) -> float:
        return float(d) / float(e) if by_embedding and d is not None and e else 1.0

    lowers = [lo * factor(d, e) for _, lo, _, d, e in rows if lo is not None]
    certified = [lo >= 1.0 - 1e-12 for _, lo, _, _, _ in rows if lo is not None]
    found = [up * factor(d, e) for _, _, up, d, e in rows if up is not None]
    uppers = [1.0 if up is None else min(up * factor(d, e), 1.0) for _, _, up, d, e in rows]
    texts = {t for t, *_ in rows}
    texts_found = {t for t, _, up, _, _ in rows if up is not None}
    gaps = [(up - lo) * factor(d, e) for _, lo, up, d, e in rows if lo is not None and up is not None]
    nan = math.nan
    return SizeRow(size, len(rows), float(np.mean(lowers)) if lowers else nan,
                   float(np.std(lowers)) if lowers else nan, float(np.mean(uppers)) if uppers else nan,
                   float(np.mean(found)) if found else nan, len(texts_found) / len(texts) if texts else nan,
                   len(found) / len(rows) if rows else nan,
                   sum(certified) / len(certified) if certified else nan,
                   float(np.mean(gaps)) if gaps else nan)
